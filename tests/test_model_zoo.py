"""gluon.model_zoo: every MXNet 1.9.1 vision network, the model store, pretrained loading.

Expected values come from real MXNet 1.9.1 (``gluon.model_zoo.vision.get_model(name,
classes=10)``, initialize, one forward on the input size listed below):

* the parameter count ``sum(p.data().size for p in net.collect_params().values())``;
* a digest of the parameter names: sha1 (first 16 hex digits) of the sorted lines
  ``"<structural name> <Parameter.name> <shape>"`` for the network built inside a fresh
  ``mx.name.NameManager()`` (so prefixes start at ``resnetv10_``, ``vgg0_``, ...).

The counts of VGG and AlexNet depend on the input size (their first Dense layer infers
its input width); all others do not.

Each family runs real forward passes, imperative and hybridized, with equal outputs. To
keep the file fast on 2 CPU cores, the deeper members of a family whose code is already
run by a smaller member (ResNet 101/152, DenseNet 161/169/201, VGG 13/16 and the other
VGG-BN depths) are checked after shape inference only (``infer_shape``): parameter count
and names, without a forward.
"""
import gzip
import hashlib
import json
import os
import shutil
import warnings

import numpy as np
import pytest

import mxtorch as mx
from helpers import FIXTURES
from mxtorch.base import MXNetError
from mxtorch.gluon.model_zoo import model_store, vision

FIXTURE = os.path.join(FIXTURES, 'models/resnet18_v1_gluon')

# name -> (input side, parameter count, name digest), from MXNet 1.9.1 with classes=10.
ORACLE = {
    'resnet18_v1': (32, 11191242, '6ae0b1a77e2351dc'),
    'resnet34_v1': (32, 21306826, '4f82b26119ac660d'),
    'resnet50_v1': (32, 23600522, 'a7e830484b8c38e6'),
    'resnet101_v1': (32, 42666634, '2681e5c2f0650c07'),
    'resnet152_v1': (32, 58375562, '84bb26c1e6688a7c'),
    'resnet18_v2': (32, 11187926, 'e22ef679f845cc02'),
    'resnet34_v2': (32, 21303510, '78443ce960a953af'),
    'resnet50_v2': (32, 23566550, '8697ffbee9aea831'),
    'resnet101_v2': (32, 42610902, '0d216f2aa152667a'),
    'resnet152_v2': (32, 58300630, 'ba49b742cb4c9504'),
    'vgg11': (32, 28144010, '799bc228258f0cdf'),
    'vgg13': (32, 28328522, 'f336473d32a1c21f'),
    'vgg16': (32, 33638218, 'f4d1b97122ae2b7d'),
    'vgg19': (32, 38947914, '08b9cd91a5b65b43'),
    'vgg11_bn': (32, 28155018, 'cd56730364cf91a9'),
    'vgg13_bn': (32, 28340298, '1b8a583c95e8003e'),
    'vgg16_bn': (32, 33655114, '02c88bc95c11f2aa'),
    'vgg19_bn': (32, 38969930, 'e9c9571013239e2d'),
    'alexnet': (63, 20344650, '3791b7de9ba8ccfa'),
    'densenet121': (224, 7047754, '78b2ea3079db5605'),
    'densenet161': (224, 26714026, 'd4f52e54b47bc094'),
    'densenet169': (224, 12659530, 'f2fff40c77891d30'),
    'densenet201': (224, 18341194, '42f1a7aafc9223f6'),
    'squeezenet1.0': (224, 740554, 'a46e7a735f2bdb6a'),
    'squeezenet1.1': (224, 727626, 'ebb9b1ba8e6c4856'),
    'inceptionv3': (299, 21840490, '7a481ac14e65caf7'),
    'mobilenet1.0': (32, 3239114, '38257826aae28acd'),
    'mobilenet0.75': (32, 1840666, '4f9cccbfb64355f9'),
    'mobilenet0.5': (32, 834666, 'd93fdaa584df5cc4'),
    'mobilenet0.25': (32, 221114, '07d9bfa073960350'),
    'mobilenetv2_1.0': (32, 2271936, '44cbde55169cb66b'),
    'mobilenetv2_0.75': (32, 1386664, 'af9032c22d22fb74'),
    'mobilenetv2_0.5': (32, 715904, 'b40dbacf88475cfe'),
    'mobilenetv2_0.25': (32, 259656, '815caf420313a232'),
}


SHAPE_ONLY = {'resnet101_v1', 'resnet152_v1', 'resnet101_v2', 'resnet152_v2',
              'densenet161', 'densenet169', 'densenet201',
              'vgg13', 'vgg16', 'vgg11_bn', 'vgg13_bn', 'vgg16_bn'}


def _name_digest(net):
    """Digest of (structural name, Parameter name, shape) lines, as computed on MXNet."""
    lines = sorted('%s %s %s' % (key, p.name, tuple(p.shape))
                   for key, p in net._collect_params_with_prefix().items())
    return hashlib.sha1('\n'.join(lines).encode()).hexdigest()[:16]


@pytest.mark.parametrize('name', sorted(SHAPE_ONLY))
def test_deep_network_shapes_match_mxnet(name):
    side, count, digest = ORACLE[name]
    with mx.name.NameManager():
        net = vision.get_model(name, classes=10)
    net.initialize()
    net.infer_shape(mx.nd.zeros((1, 3, side, side)))
    assert sum(int(np.prod(p.shape)) for p in net.collect_params().values()) == count
    assert _name_digest(net) == digest


@pytest.mark.parametrize('name', sorted(set(ORACLE) - SHAPE_ONLY))
def test_network_builds_runs_and_matches_mxnet(name):
    side, count, digest = ORACLE[name]
    mx.random.seed(0)
    with mx.name.NameManager():
        net = vision.get_model(name, classes=10)
    assert isinstance(net, mx.gluon.HybridBlock)
    net.initialize()
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (1, 3, side, side)))
    eager = net(x).asnumpy()
    assert eager.shape == (1, 10) and np.isfinite(eager).all()
    assert sum(p.data().size for p in net.collect_params().values()) == count
    assert _name_digest(net) == digest
    net.hybridize()
    hybrid = net(x).asnumpy()
    np.testing.assert_allclose(hybrid, eager, rtol=1e-5, atol=1e-6)


def test_public_names_and_get_model():
    for fn in ['resnet18_v1', 'resnet152_v2', 'vgg19_bn', 'alexnet', 'densenet201',
               'squeezenet1_0', 'squeezenet1_1', 'inception_v3', 'mobilenet0_25',
               'mobilenet_v2_0_75', 'get_resnet', 'get_vgg', 'get_mobilenet',
               'get_mobilenet_v2', 'get_densenet', 'get_squeezenet', 'ResNetV1', 'ResNetV2',
               'BasicBlockV1', 'BasicBlockV2', 'BottleneckV1', 'BottleneckV2', 'VGG',
               'DenseNet', 'Inception3', 'MobileNet', 'MobileNetV2', 'SqueezeNet', 'AlexNet']:
        assert hasattr(vision, fn), fn
    with mx.name.NameManager():
        net = vision.get_model('ResNet18_V1')    # MXNet lower-cases the name
    assert isinstance(net, vision.ResNetV1) and net.output._units == 1000
    assert net.prefix == 'resnetv10_'
    with pytest.raises(ValueError, match='Model resnet19_v1 is not supported'):
        vision.get_model('resnet19_v1')
    with pytest.raises(AssertionError, match='Invalid number of layers'):
        vision.get_resnet(1, 19)
    with pytest.raises(AssertionError, match='Invalid resnet version'):
        vision.get_resnet(3, 18)
    with pytest.raises(AssertionError, match='Unsupported SqueezeNet version'):
        vision.SqueezeNet('1.2')


def test_resnet_thumbnail_and_explicit_blocks():
    # MXNet 1.9.1: ResNetV1(BasicBlockV1, ..., thumbnail=True) with classes=10 has
    # 11183306 parameter values; the V2 one 11179990.
    spec = ([2, 2, 2, 2], [64, 64, 128, 256, 512])
    for cls, block, expected in [(vision.ResNetV1, vision.BasicBlockV1, 11183306),
                                 (vision.ResNetV2, vision.BasicBlockV2, 11179990)]:
        net = cls(block, *spec, classes=10, thumbnail=True)
        net.initialize()
        out = net(mx.nd.ones((1, 3, 8, 8)))
        assert out.shape == (1, 10)
        assert sum(p.data().size for p in net.collect_params().values()) == expected


# ---------------------------------------------------------------- the MXNet fixture


@pytest.fixture(scope='module')
def fixture_files(tmp_path_factory):
    """The fixture's symbol, gunzipped params, input, outputs and manifest."""
    folder = tmp_path_factory.mktemp('resnet18_v1')
    params = str(folder / 'resnet18_v1-0000.params')
    with gzip.open(os.path.join(FIXTURE, 'resnet18_v1-0000.params.gz'), 'rb') as src, \
            open(params, 'wb') as dst:
        shutil.copyfileobj(src, dst)
    with open(os.path.join(FIXTURE, 'manifest.json')) as f:
        manifest = json.load(f)
    return {
        'symbol': os.path.join(FIXTURE, 'resnet18_v1-symbol.json'),
        'params': params,
        'manifest': manifest,
        'data': np.load(os.path.join(FIXTURE, 'input_data.npy')),
        'infer': np.load(os.path.join(FIXTURE, 'output_infer_0.npy')),
        'train': np.load(os.path.join(FIXTURE, 'output_train_0.npy')),
        'folder': folder,
    }


def _check_outputs(net, files, train=True):
    """Inference (and training-mode) outputs equal the ones MXNet recorded."""
    tol = files['manifest']['tolerance']
    x = mx.nd.array(files['data'])
    np.testing.assert_allclose(net(x).asnumpy(), files['infer'], **tol)
    if train:
        with mx.autograd.train_mode():
            out = net(x).asnumpy()
        np.testing.assert_allclose(out, files['train'], **tol)


def _structural_params_file(files, path):
    """Rewrite the exported arg:/aux: file under the structural names (the name map)."""
    loaded = mx.nd.load(files['params'])
    exported = {k.split(':', 1)[1]: v for k, v in loaded.items()}
    mapping = files['manifest']['param_names']
    mx.nd.save(path, {struct: exported[m['export_name']] for struct, m in mapping.items()})
    return path


def test_resnet18_v1_parameter_names_equal_mxnet(fixture_files):
    mapping = fixture_files['manifest']['param_names']
    with mx.name.NameManager():
        net = vision.resnet18_v1(classes=10)
    params = net._collect_params_with_prefix()
    assert sorted(params) == sorted(mapping)
    for struct, p in params.items():
        assert p.name == mapping[struct]['export_name']
    names = list(net.collect_params().keys())
    assert names[:2] == ['resnetv10_conv0_weight', 'resnetv10_batchnorm0_gamma']
    assert 'resnetv10_stage1_conv0_weight' in names
    assert 'resnetv10_stage2_conv2_weight' in names      # the downsample projection
    assert names[-2:] == ['resnetv10_dense0_weight', 'resnetv10_dense0_bias']


def test_fixture_symbolblock_imports(fixture_files):
    net = mx.gluon.SymbolBlock.imports(fixture_files['symbol'], ['data'],
                                       fixture_files['params'])
    _check_outputs(net, fixture_files)


@pytest.mark.parametrize('hybridize', [False, True])
def test_fixture_loads_into_model_zoo_resnet(fixture_files, tmp_path, hybridize):
    path = _structural_params_file(fixture_files, str(tmp_path / 'r18.params'))
    net = vision.resnet18_v1(classes=10)
    net.load_parameters(path)
    if hybridize:
        net.hybridize()
    _check_outputs(net, fixture_files)


# ---------------------------------------------------------------- model store


def test_pretrained_missing_file_gives_clear_error(tmp_path):
    root = str(tmp_path / 'models')
    with pytest.raises(MXNetError) as err:
        vision.resnet18_v1(pretrained=True, root=root)
    msg = str(err.value)
    assert os.path.join(root, 'resnet18_v1-a0666292.params') in msg
    assert 'gluon/models/resnet18_v1-a0666292.zip' in msg and 'download' in msg
    # the model-store names of the other families
    for fn, kwargs, file_name in [
            (vision.mobilenet0_5, {}, 'mobilenet0.5-8e9d539c.params'),
            (vision.mobilenet_v2_0_25, {}, 'mobilenetv2_0.25-ae8f9392.params'),
            (vision.vgg11_bn, {}, 'vgg11_bn-ee79a809.params'),
            (vision.get_model, {'name': 'squeezenet1.1'}, 'squeezenet1.1-33ba0f93.params'),
            (vision.get_model, {'name': 'inceptionv3'}, 'inceptionv3-ed47ec45.params'),
            (vision.get_model, {'name': 'densenet121'}, 'densenet121-f27dbf2d.params'),
            (vision.get_model, {'name': 'alexnet'}, 'alexnet-44335d1f.params')]:
        with pytest.raises(MXNetError, match=file_name.replace('.', r'\.')):
            fn(pretrained=True, root=root, **kwargs)


def test_pretrained_file_present_is_loaded(fixture_files, tmp_path):
    src = vision.resnet18_v1(classes=10)
    src.load_parameters(_structural_params_file(fixture_files, str(tmp_path / 'a.params')))
    root = tmp_path / 'models'
    root.mkdir()
    src.save_parameters(str(root / 'resnet18_v1-a0666292.params'))
    # Not MXNet's published file (sha1 differs): used as it is, with a warning.
    with pytest.warns(UserWarning, match='Mismatch in the content of model file'):
        net = vision.get_model('resnet18_v1', pretrained=True, root=str(root), classes=10)
    _check_outputs(net, fixture_files, train=False)


def test_get_model_file_sha1_match_short_hash_and_purge(tmp_path, monkeypatch):
    blob = tmp_path / 'blob'
    blob.write_bytes(b'mxtorch model store')
    sha1 = hashlib.sha1(b'mxtorch model store').hexdigest()
    monkeypatch.setitem(model_store._model_sha1, 'tiny', sha1)
    assert model_store.short_hash('tiny') == sha1[:8]
    target = tmp_path / ('tiny-%s.params' % sha1[:8])
    shutil.copy(str(blob), str(target))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert model_store.get_model_file('tiny', root=str(tmp_path)) == str(target)
    with pytest.raises(ValueError, match='Pretrained model for nonet is not available'):
        model_store.get_model_file('nonet', root=str(tmp_path))
    (tmp_path / 'keep.txt').write_text('x')
    model_store.purge(root=str(tmp_path))
    assert sorted(os.listdir(str(tmp_path))) == ['blob', 'keep.txt']
    assert model_store.get_model_file.__defaults__[0] == os.path.join(
        model_store.data_dir(), 'models')

"""gluon.Block / HybridBlock / SymbolBlock against MXNet 1.9.1 behaviour."""
import io
import json
import os
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest

import mxtorch as mx
from helpers import FIXTURES
from mxtorch import gluon, initializer
from mxtorch.gluon.block import _flatten, _regroup

LENET = os.path.join(FIXTURES, 'models/lenet_gluon')
if not os.path.isdir(LENET):
    LENET = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "fixtures",
                         "mxnet-1.9.1", "models", "lenet_gluon")


# ------------------------------------------------------------------ small layers for the tests
class Dense(gluon.HybridBlock):
    """FullyConnected layer written against the MXNet Block API."""

    def __init__(self, units, in_units=0, act=None, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get('weight', shape=(units, in_units),
                                          allow_deferred_init=True)
            self.bias = self.params.get('bias', shape=(units,), init='zeros',
                                        allow_deferred_init=True)
        self._units = units
        self._act = act

    def hybrid_forward(self, F, x, weight, bias):
        y = F.FullyConnected(x, weight, bias, num_hidden=self._units, name='fwd')
        return F.Activation(y, act_type=self._act) if self._act else y


class Conv(gluon.HybridBlock):
    """2-D convolution layer."""

    def __init__(self, channels, kernel, pad=0, act=None, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get('weight', shape=(channels, 0, kernel, kernel),
                                          allow_deferred_init=True)
            self.bias = self.params.get('bias', shape=(channels,), init='zeros',
                                        allow_deferred_init=True)
        self._kw = dict(kernel=(kernel, kernel), pad=(pad, pad), num_filter=channels)
        self._act = act

    def _alias(self):
        return 'conv'

    def hybrid_forward(self, F, x, weight, bias):
        y = F.Convolution(x, weight, bias, name='fwd', **self._kw)
        return F.Activation(y, act_type=self._act) if self._act else y


class Pool(gluon.HybridBlock):
    def __init__(self, pool_type, **kwargs):
        super().__init__(**kwargs)
        self._type = pool_type

    def hybrid_forward(self, F, x):
        return F.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type=self._type, name='fwd')


class Flatten(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.Flatten(x)


class Dropout(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.Dropout(x, p=0.5, name='fwd')


class Seq(gluon.HybridBlock):
    """HybridSequential-like container (children keyed '0', '1', ...)."""

    def add(self, *blocks):
        for b in blocks:
            self.register_child(b)

    def hybrid_forward(self, F, x):
        for b in self._children.values():
            x = b(x)
        return x


class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.d0 = Dense(4, act='relu')
            self.d1 = Dense(2)

    def hybrid_forward(self, F, x):
        return self.d1(self.d0(x))


def lenet():
    net = Seq(prefix='lenet_')
    with net.name_scope():
        net.add(Conv(6, 5, pad=2, act='relu'), Pool('max'), Conv(16, 5, act='relu'),
                Pool('avg'), Flatten(), Dense(120, act='relu'), Dense(84, act='sigmoid'),
                Dropout(), Dense(10))
    return net


def _x():
    return mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3) * 0.1)


# ------------------------------------------------------------------ naming
def test_parameter_names_match_mxnet():
    net = Net()
    idx = int(net.prefix[3:-1])
    assert net.prefix == 'net%d_' % idx and net.name == 'net%d' % idx
    assert list(net.collect_params().keys()) == [
        'net%d_dense0_weight' % idx, 'net%d_dense0_bias' % idx,
        'net%d_dense1_weight' % idx, 'net%d_dense1_bias' % idx]
    assert list(Net(prefix='foo_').collect_params().keys()) == [
        'foo_dense0_weight', 'foo_dense0_bias', 'foo_dense1_weight', 'foo_dense1_bias']
    net = lenet()
    assert list(net.collect_params().keys())[:4] == [
        'lenet_conv0_weight', 'lenet_conv0_bias', 'lenet_conv1_weight', 'lenet_conv1_bias']
    assert sorted(net._collect_params_with_prefix()) == sorted(
        ['0.weight', '0.bias', '2.weight', '2.bias', '5.weight', '5.bias', '6.weight',
         '6.bias', '8.weight', '8.bias'])
    assert net.collect_params('.*conv0.*').keys() == {'lenet_conv0_weight',
                                                       'lenet_conv0_bias'}
    assert net._children['1'].prefix == 'lenet_pool0_'


def test_graph_json_equals_mxnet():
    """The hybridized graph of Net is node for node what MXNet 1.9.1 builds."""
    net = Net(prefix='net0_')
    net.initialize()
    net.hybridize()
    net(_x())
    g = json.loads(net._cached_graph[1].tojson())
    names = [n['name'] for n in g['nodes']]
    assert names == ['data', 'net0_dense0_weight', 'net0_dense0_bias', 'net0_dense0_fwd',
                     'net0_dense0_activation0', 'net0_dense1_weight', 'net0_dense1_bias',
                     'net0_dense1_fwd']
    assert g['nodes'][1]['attrs'] == {'__dtype__': '0', '__lr_mult__': '1.0',
                                      '__shape__': '(4, 0)', '__storage_type__': '0',
                                      '__wd_mult__': '1.0'}
    assert g['nodes'][2]['attrs']['__init__'] == 'zeros'


def test_repr():
    net = Net(prefix='net0_')
    assert repr(net) == 'Net(\n  (d0): Dense(\n  \n  )\n  (d1): Dense(\n  \n  )\n)'


# ------------------------------------------------------------------ registration
def test_setattr_type_change_and_override():
    net = Net()
    with pytest.raises(TypeError, match='Changing attribute type for d0'):
        net.d0 = 3
    blk = gluon.Block()
    blk.p = gluon.Parameter('p', shape=(1,))
    with pytest.raises(AssertionError, match='Overriding Parameter attribute %s is not allowed'):
        blk.p = gluon.Parameter('q', shape=(1,))
    assert blk._reg_params['p'].name == 'p'


def test_unregistered_container_warning():
    class Holder(gluon.Block):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(2)]

    with pytest.warns(UserWarning, match='"Holder.layers" is an unregistered container'):
        Holder().collect_params()


def test_register_child_and_hybrid_child_check():
    blk = gluon.Block()
    d = Dense(2)
    blk.register_child(d)
    assert blk._children['0'] is d
    with pytest.raises(ValueError, match='Children of HybridBlock must also be HybridBlock'):
        Seq().register_child(gluon.Block())


def test_hooks_and_handles():
    net = Net()
    net.initialize()
    calls = []
    h1 = net.register_forward_pre_hook(lambda b, a: calls.append(('pre', len(a))))
    h2 = net.register_forward_hook(lambda b, a, o: calls.append(('post', o.shape)))
    net(_x())
    assert calls == [('pre', 1), ('post', (2, 2))]
    h1.detach()
    with h2:
        pass
    net(_x())
    assert len(calls) == 2
    with pytest.raises(AssertionError, match='attached twice'):
        h1.attach({}, print)


def test_hybridize_warns_with_hooks():
    net = Net()
    net.register_forward_hook(lambda b, a, o: None)
    with pytest.warns(UserWarning, match='is being hybridized while still having forward hook'):
        net.hybridize()


def test_apply_and_cast():
    net = Net()
    seen = []
    assert net.apply(lambda b: seen.append(b.name)) is net
    assert seen[-1] == net.name and len(seen) == 3
    net.initialize()
    net.cast('float16')
    assert net.d0.weight.dtype == 'float16'
    net.cast('float32')
    assert net(_x()).dtype == np.float32


# ------------------------------------------------------------------ flatten / regroup
def test_flatten_regroup():
    a, b = mx.nd.ones((1,)), mx.nd.zeros((2,))
    flat, fmt = _flatten([a, [b, None]], 'input')
    assert fmt == [0, [0, -1]] and flat[2] is None
    out = _regroup(flat, fmt)
    assert out[0] is a and out[1][0] is b and out[1][1] is None
    with pytest.raises(ValueError, match='When hybridized, the input of HybridBlock input'):
        _flatten([a, 3], 'input')
    with pytest.raises(ValueError, match='Unsupported encoded format -2'):
        _regroup([a], -2)
    with pytest.raises(ValueError, match='We do not support passing types that are not None'):
        _regroup([a], -1)
    with pytest.raises(ValueError, match='the output of HybridBlock must be'):
        _regroup(a, [0])


def test_forward_type_errors():
    net = Net()
    net.initialize()
    with pytest.raises(ValueError, match='mixed NDArrays and Symbols'):
        net(_x(), mx.sym.var('y'))
    with pytest.raises(ValueError, match='there must be one NDArray or one Symbol'):
        net.forward(3)


def test_symbol_forward():
    net = Net(prefix='sf_')
    out = net(mx.sym.var('data'))
    assert out.list_arguments() == ['data', 'sf_dense0_weight', 'sf_dense0_bias',
                                    'sf_dense1_weight', 'sf_dense1_bias']


# ------------------------------------------------------------------ deferred init, inference
def test_deferred_init_and_infer():
    net = Net()
    net.initialize()
    with pytest.raises(gluon.DeferredInitializationError):
        net.d0.weight.data()
    net.infer_shape(_x())
    assert net.d0.weight.shape == (4, 3) and net.d1.weight.shape == (2, 4)
    net.infer_type(_x())
    assert net.d0.weight.dtype == np.float32
    y = net(_x())
    assert y.shape == (2, 2) and net.d0.weight.data().shape == (4, 3)


def test_deferred_init_failure_message():
    net = Dense(2)
    net.initialize()
    with pytest.raises(ValueError, match='Deferred initialization failed because shape'):
        net._deferred_infer_shape(mx.sym.var('x'))


# ------------------------------------------------------------------ imperative == hybridized
def test_hybridized_matches_imperative_with_grads():
    net = lenet()
    net.initialize(initializer.Xavier())
    x = mx.nd.array(np.random.RandomState(0).rand(2, 1, 28, 28))
    with mx.autograd.record(train_mode=False):
        y1 = net(x)
    y1.backward()
    g1 = net._children['0'].weight.grad().asnumpy().copy()
    net.hybridize()
    with mx.autograd.record(train_mode=False):
        y2 = net(x)
    y2.backward()
    np.testing.assert_allclose(y1.asnumpy(), y2.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g1, net._children['0'].weight.grad().asnumpy(), rtol=1e-4,
                               atol=1e-6)
    assert net._cached_op is not None


def test_hybridized_wrong_structure():
    net = Net()
    net.initialize()
    net.hybridize()
    net(_x())
    with pytest.raises(ValueError, match='argument structure of HybridBlock does not match'):
        net._call_cached_op([_x(), _x()])


def test_unused_input_warning():
    class Two(gluon.HybridBlock):
        def hybrid_forward(self, F, x, y):
            return x * 2

    blk = Two()
    blk.hybridize()
    with pytest.warns(UserWarning, match='The 1-th input to HybridBlock is not used'):
        blk(_x(), _x())


def test_register_op_hook():
    net = Net(prefix='hk_')
    net.initialize()
    net.hybridize()
    seen = []
    net.register_op_hook(lambda name, op, arr: seen.append((name, op, arr.shape)))
    net(_x())
    assert ('hk_dense0_fwd_output', 'FullyConnected', (2, 4)) in seen
    assert seen[-1] == ('hk_dense1_fwd_output', 'FullyConnected', (2, 2))


# ------------------------------------------------------------------ save / load
def test_save_load_parameters(tmp_path):
    net = Net()
    net.initialize()
    y = net(_x())
    f = str(tmp_path / 'n.params')
    net.save_parameters(f)
    assert sorted(mx.nd.load(f)) == ['d0.bias', 'd0.weight', 'd1.bias', 'd1.weight']
    net2 = Net()
    net2.load_parameters(f)
    np.testing.assert_allclose(net2(_x()).asnumpy(), y.asnumpy())
    net3 = Net()
    net3.d2 = Dense(1)
    with pytest.raises(AssertionError, match="Parameter 'd2.weight' is missing in file"):
        net3.load_parameters(f)
    net3.load_parameters(f, allow_missing=True)
    mx.nd.save(f, {'d0.weight': mx.nd.ones((4, 3)), 'zz.bias': mx.nd.ones((1,))})
    with pytest.raises(ValueError, match="Parameter 'zz.bias' loaded from file"):
        Net().load_parameters(f, allow_missing=True)
    Net().load_parameters(f, allow_missing=True, ignore_extra=True)


def test_load_parameters_dtype(tmp_path):
    f = str(tmp_path / 'h.params')
    mx.nd.save(f, {'weight': mx.nd.ones((2, 3), dtype='float16'),
                   'bias': mx.nd.ones((2,), dtype='float16')})
    with pytest.raises(AssertionError, match='dtype incompatible expected'):
        Dense(2, prefix='dd_').load_parameters(f)
    d = Dense(2, prefix='dd_')
    d.load_parameters(f, cast_dtype=True)
    assert d.weight.data().dtype == np.float32
    d = Dense(2, prefix='dd_')
    d.load_parameters(f, cast_dtype=True, dtype_source='saved')
    assert d.weight.data().dtype == np.float16


def test_deprecated_save_load_params(tmp_path):
    net = Net(prefix='legacy_')
    net.initialize()
    net(_x())
    f = str(tmp_path / 'l.params')
    with pytest.warns(UserWarning, match='save_params is deprecated'):
        net.save_params(f)
    assert sorted(mx.nd.load(f)) == ['dense0_bias', 'dense0_weight', 'dense1_bias',
                                     'dense1_weight']
    net2 = Net(prefix='legacy_')
    with pytest.warns(UserWarning, match='load_params is deprecated'):
        net2.load_params(f)
    np.testing.assert_allclose(net2.d1.bias.data().asnumpy(), net.d1.bias.data().asnumpy())
    net3 = Net(prefix='other_')
    net3.load_parameters(f)  # legacy file: no '.' in any key
    assert net3.d0.weight.shape == (4, 3)


def test_save_deduplicate(tmp_path):
    shared = Dense(2, in_units=3, prefix='s_')
    blk = Seq()
    blk.add(shared, Dense(2, in_units=3, prefix='s_', params=shared.params))
    blk.initialize()
    f = str(tmp_path / 'd.params')
    blk.save_parameters(f)
    assert len(mx.nd.load(f)) == 4
    blk.save_parameters(f, deduplicate=True)
    assert sorted(mx.nd.load(f)) == ['1.bias', '1.weight']


def test_block_save_load_model(tmp_path):
    net = Net(prefix='m_')
    net.initialize()
    net.hybridize()
    y = net(_x())
    net.save(str(tmp_path / 'm'))
    net2 = Net(prefix='m2_')
    net2.load(str(tmp_path / 'm'))
    np.testing.assert_allclose(net2(_x()).asnumpy(), y.asnumpy(), rtol=1e-6)


# ------------------------------------------------------------------ export / SymbolBlock
def test_export_requires_forward(tmp_path):
    net = Net()
    net.initialize()
    net.hybridize()
    with pytest.raises(RuntimeError, match='Please first call block.hybridize'):
        net.export(str(tmp_path / 'x'))


def test_export_imports_round_trip(tmp_path):
    net = Net(prefix='ex_')
    net.initialize(initializer.Xavier())
    net.hybridize()
    y = net(_x())
    path = str(tmp_path / 'ex')
    net.export(path, epoch=3)
    keys = sorted(mx.nd.load(path + '-0003.params'))
    assert keys == ['arg:ex_dense0_bias', 'arg:ex_dense0_weight', 'arg:ex_dense1_bias',
                    'arg:ex_dense1_weight']
    sb = gluon.SymbolBlock.imports(path + '-symbol.json', ['data'], path + '-0003.params')
    np.testing.assert_allclose(sb(_x()).asnumpy(), y.asnumpy(), rtol=1e-6)
    assert repr(sb) == 'SymbolBlock(\n<Symbol ex_dense1_fwd> : 1 -> 1\n)'
    # MXNet: the common prefix of all names ('ex_dense') is stripped
    assert sorted(sb._reg_params) == ['0_bias', '0_weight', '1_bias', '1_weight']
    out = sb(mx.sym.var('data'))
    assert out.list_outputs() == ['ex_dense1_fwd_output']


def test_symbol_block_shares_params():
    net = Net(prefix='sh_')
    net.initialize()
    x = mx.sym.var('data')
    internals = net(x).get_internals()
    feat = gluon.SymbolBlock(internals['sh_dense0_fwd_output'], x,
                             params=net.collect_params())
    y = feat(_x())
    assert y.shape == (2, 4)
    assert feat.params['sh_dense0_weight'] is net.d0.weight


def test_lenet_fixture_symbolblock():
    man = json.load(open(os.path.join(LENET, 'manifest.json')))
    x = mx.nd.array(np.load(os.path.join(LENET, 'input_data.npy')))
    sb = gluon.SymbolBlock.imports(os.path.join(LENET, 'lenet-symbol.json'), ['data'],
                                   os.path.join(LENET, 'lenet-0000.params'))
    expected = np.load(os.path.join(LENET, man['outputs'][0]['file']))
    np.testing.assert_allclose(sb(x).asnumpy(), expected, rtol=1e-4, atol=1e-5)


def test_lenet_fixture_load_parameters():
    man = json.load(open(os.path.join(LENET, 'manifest.json')))
    x = mx.nd.array(np.load(os.path.join(LENET, 'input_data.npy')))
    net = lenet()
    net.load_parameters(os.path.join(LENET, 'lenet.params'))
    for key, info in man['param_names'].items():
        assert net._collect_params_with_prefix()[key].name == info['export_name']
    expected = np.load(os.path.join(LENET, 'output_infer_0.npy'))
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-4, atol=1e-5)
    net.hybridize()
    with mx.autograd.record(train_mode=False):
        y = net(x)
    y.backward()
    tol = man['train_backward']['tolerance']
    params = net._collect_params_with_prefix()
    for key, fname in man['train_backward']['grads'].items():
        np.testing.assert_allclose(params[key].grad().asnumpy(),
                                   np.load(os.path.join(LENET, fname)), **tol)


def test_summary():
    net = Net(prefix='sum_')
    net.initialize()
    buf = io.StringIO()
    with redirect_stdout(buf):
        net.summary(_x())
    lines = buf.getvalue().splitlines()
    assert lines[1] == '        Layer (type)                                Output Shape' \
                       '         Param #'
    assert lines[3] == '               Input' + ' ' * 38 + '(2, 3)' + ' ' * 15 + '0'
    assert lines[4].split() == ['Dense-1', '(2,', '4)', '16']
    assert '   Total params: 26' in lines and 'Unique parameters in model: 26' in lines
    net.hybridize()
    with pytest.raises(AssertionError, match='must not be hybridized to print summary'):
        net.summary(_x())
    assert not net._forward_hooks


def test_optimize_for_needs_backend():
    net = Net()
    with pytest.raises(ValueError, match='Must specify "backend" to optimize_for'):
        net.optimize_for(_x())
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        Net().hybridize(active=False)

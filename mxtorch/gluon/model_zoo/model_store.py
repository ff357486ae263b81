"""Local store of pretrained model-zoo parameter files, as MXNet 1.9.1's ``model_store``.

mxtorch never reaches the network: a pretrained file must already be in ``root`` under
MXNet's file name ``<name>-<first 8 hex digits of its sha1>.params``.
"""
from __future__ import annotations

import logging
import os
import warnings

from ...base import MXNetError
from ..utils import check_sha1

_LOG = logging.getLogger(__name__)

__all__ = ['get_model_file', 'purge']

_model_sha1 = {name: checksum for checksum, name in [
    ('44335d1f0046b328243b32a26a4fbd62d9057b45', 'alexnet'),
    ('f27dbf2dbd5ce9a80b102d89c7483342cd33cb31', 'densenet121'),
    ('b6c8a95717e3e761bd88d145f4d0a214aaa515dc', 'densenet161'),
    ('2603f878403c6aa5a71a124c4a3307143d6820e9', 'densenet169'),
    ('1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb', 'densenet201'),
    ('ed47ec45a937b656fcc94dabde85495bbef5ba1f', 'inceptionv3'),
    ('9f83e440996887baf91a6aff1cccc1c903a64274', 'mobilenet0.25'),
    ('8e9d539cc66aa5efa71c4b6af983b936ab8701c3', 'mobilenet0.5'),
    ('529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2', 'mobilenet0.75'),
    ('6b8c5106c730e8750bcd82ceb75220a3351157cd', 'mobilenet1.0'),
    ('36da4ff1867abccd32b29592d79fc753bca5a215', 'mobilenetv2_1.0'),
    ('e2be7b72a79fe4a750d1dd415afedf01c3ea818d', 'mobilenetv2_0.75'),
    ('aabd26cd335379fcb72ae6c8fac45a70eab11785', 'mobilenetv2_0.5'),
    ('ae8f9392789b04822cbb1d98c27283fc5f8aa0a7', 'mobilenetv2_0.25'),
    ('a0666292f0a30ff61f857b0b66efc0228eb6a54b', 'resnet18_v1'),
    ('48216ba99a8b1005d75c0f3a0c422301a0473233', 'resnet34_v1'),
    ('0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce', 'resnet50_v1'),
    ('d988c13d6159779e907140a638c56f229634cb02', 'resnet101_v1'),
    ('671c637a14387ab9e2654eafd0d493d86b1c8579', 'resnet152_v1'),
    ('a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657', 'resnet18_v2'),
    ('9d6b80bbc35169de6b6edecffdd6047c56fdd322', 'resnet34_v2'),
    ('ecdde35339c1aadbec4f547857078e734a76fb49', 'resnet50_v2'),
    ('18e93e4f48947e002547f50eabbcc9c83e516aa6', 'resnet101_v2'),
    ('f2695542de38cf7e71ed58f02893d82bb409415e', 'resnet152_v2'),
    ('264ba4970a0cc87a4f15c96e25246a1307caf523', 'squeezenet1.0'),
    ('33ba0f93753c83d86e1eb397f38a667eaf2e9376', 'squeezenet1.1'),
    ('dd221b160977f36a53f464cb54648d227c707a05', 'vgg11'),
    ('ee79a8098a91fbe05b7a973fed2017a6117723a8', 'vgg11_bn'),
    ('6bc5de58a05a5e2e7f493e2d75a580d83efde38c', 'vgg13'),
    ('7d97a06c3c7a1aecc88b6e7385c2b373a249e95e', 'vgg13_bn'),
    ('e660d4569ccb679ec68f1fd3cce07a387252a90a', 'vgg16'),
    ('7f01cf050d357127a73826045c245041b0df7363', 'vgg16_bn'),
    ('ad2f660d101905472b83590b59708b71ea22b2e5', 'vgg19'),
    ('f360b758e856f1074a85abd5fd873ed1d98297c3', 'vgg19_bn')]}

apache_repo_url = 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/'
_url_format = '{repo_url}gluon/models/{file_name}.zip'


def data_dir() -> str:
    """MXNet's data directory: ``$MXNET_HOME``, else ``~/.mxnet``."""
    return os.getenv('MXNET_HOME', os.path.join(os.path.expanduser('~'), '.mxnet'))


def short_hash(name):
    """Return the first 8 hex digits of the sha1 of pretrained model `name`.

    Parameters
    ----------
    name : str
        Name of the model (e.g. ``'resnet18_v1'``).

    Returns
    -------
    str
        The short hash used in the parameter file name.
    """
    if name not in _model_sha1:
        raise ValueError('Pretrained model for {name} is not available.'.format(name=name))
    return _model_sha1[name][:8]


def _missing_file_error(name: str, file_path: str, root: str) -> MXNetError:
    """The error for a pretrained file that is not in the local store."""
    repo_url = os.environ.get('MXNET_GLUON_REPO', apache_repo_url)
    if not repo_url.endswith('/'):
        repo_url += '/'
    file_name = os.path.basename(file_path)
    url = _url_format.format(repo_url=repo_url, file_name=file_name[:-len('.params')])
    return MXNetError(
        "Pretrained model file for '{name}' not found: expected {path}. mxtorch does not "
        "download model files; get {url} (MXNet's model zoo archive), unzip it and put "
        "{file} (sha1 {sha1}) in {root}, or pass root= pointing at the folder that holds "
        "it.".format(name=name, path=file_path, url=url, file=file_name,
                     sha1=_model_sha1[name], root=root))


def get_model_file(name, root=os.path.join(data_dir(), 'models')):
    r"""Return location for the pretrained on local file system.

    MXNet downloads the file when it is missing; mxtorch never reaches the network, so
    a missing file raises `MXNetError` naming the expected path and where to get it.

    Parameters
    ----------
    name : str
        Name of the model.
    root : str, default $MXNET_HOME/models
        Location for keeping the model parameters.

    Returns
    -------
    file_path
        Path to the requested pretrained model file.
    """
    file_name = '{name}-{short_hash}'.format(name=name, short_hash=short_hash(name))
    root = os.path.expanduser(root)
    file_path = os.path.join(root, file_name + '.params')
    if not os.path.exists(file_path):
        _LOG.info('Model file not found at %s.', file_path)
        raise _missing_file_error(name, file_path, root)
    if not check_sha1(file_path, _model_sha1[name]):
        # MXNet downloads the file again on a mismatch; with no download, the file the
        # user placed is used as it is (fine-tuned or converted weights), with a warning.
        warnings.warn('Mismatch in the content of model file detected: {} does not have '
                      'sha1 {}; using it as it is.'.format(file_path, _model_sha1[name]))
    return file_path


def purge(root=os.path.join(data_dir(), 'models')):
    r"""Purge all pretrained model files in local file store.

    Parameters
    ----------
    root : str, default '$MXNET_HOME/models'
        Location for keeping the model parameters.
    """
    root = os.path.expanduser(root)
    for f in os.listdir(root):
        if f.endswith('.params'):
            os.remove(os.path.join(root, f))


def _load_pretrained(net, name: str, root: str, ctx) -> None:
    """Load the stored pretrained parameters of model `name` into `net`."""
    net.load_parameters(get_model_file(name, root=root), ctx=ctx)

"""Inception V3, as MXNet 1.9.1's ``gluon.model_zoo.vision.inception``."""
from __future__ import annotations

import os

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ...contrib.nn import HybridConcurrent
from ..model_store import _load_pretrained, data_dir

__all__ = ['Inception3', 'inception_v3']

_SETTING_NAMES = ('channels', 'kernel_size', 'strides', 'padding')


def _make_basic_conv(**kwargs) -> nn.HybridSequential:
    """Convolution (no bias), BatchNorm (epsilon 1e-3), ReLU."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(use_bias=False, **kwargs))
    out.add(nn.BatchNorm(epsilon=0.001))
    out.add(nn.Activation('relu'))
    return out


def _make_branch(use_pool, *conv_settings) -> nn.HybridSequential:
    """Optional pooling ('avg' 3x3/1 pad 1, 'max' 3x3/2) then basic convolutions.

    Each setting is (channels, kernel_size, strides, padding); None keeps the default.
    """
    out = nn.HybridSequential(prefix='')
    if use_pool == 'avg':
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif use_pool == 'max':
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for setting in conv_settings:
        kwargs = {key: value for key, value in zip(_SETTING_NAMES, setting)
                  if value is not None}
        out.add(_make_basic_conv(**kwargs))
    return out


def _concurrent(prefix: str, branches) -> HybridConcurrent:
    """A channel-concatenating module named `prefix` over (pool, *settings) branches."""
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for branch in branches:
            out.add(_make_branch(*branch))
    return out


def _make_A(pool_features, prefix):
    """Inception-A module (35x35)."""
    return _concurrent(prefix, [
        (None, (64, 1, None, None)),
        (None, (48, 1, None, None), (64, 5, None, 2)),
        (None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
        ('avg', (pool_features, 1, None, None))])


def _make_B(prefix):
    """Inception-B grid reduction (35x35 -> 17x17)."""
    return _concurrent(prefix, [
        (None, (384, 3, 2, None)),
        (None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
        ('max',)])


def _make_C(channels_7x7, prefix):
    """Inception-C module (17x17, factorised 7x7)."""
    c = channels_7x7
    return _concurrent(prefix, [
        (None, (192, 1, None, None)),
        (None, (c, 1, None, None), (c, (1, 7), None, (0, 3)), (192, (7, 1), None, (3, 0))),
        (None, (c, 1, None, None), (c, (7, 1), None, (3, 0)), (c, (1, 7), None, (0, 3)),
         (c, (7, 1), None, (3, 0)), (192, (1, 7), None, (0, 3))),
        ('avg', (192, 1, None, None))])


def _make_D(prefix):
    """Inception-D grid reduction (17x17 -> 8x8)."""
    return _concurrent(prefix, [
        (None, (192, 1, None, None), (320, 3, 2, None)),
        (None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
         (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
        ('max',)])


def _split_3x1_1x3() -> HybridConcurrent:
    """Parallel 1x3 and 3x1 convolutions of 384 channels, concatenated."""
    split = HybridConcurrent(axis=1, prefix='')
    split.add(_make_branch(None, (384, (1, 3), None, (0, 1))))
    split.add(_make_branch(None, (384, (3, 1), None, (1, 0))))
    return split


def _make_E(prefix):
    """Inception-E module (8x8, expanded filter bank)."""
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        out.add(_make_branch(None, (320, 1, None, None)))

        branch_3x3 = nn.HybridSequential(prefix='')
        out.add(branch_3x3)
        branch_3x3.add(_make_branch(None, (384, 1, None, None)))
        branch_3x3.add(_split_3x1_1x3())

        branch_3x3dbl = nn.HybridSequential(prefix='')
        out.add(branch_3x3dbl)
        branch_3x3dbl.add(_make_branch(None, (448, 1, None, None), (384, 3, None, 1)))
        branch_3x3dbl.add(_split_3x1_1x3())

        out.add(_make_branch('avg', (192, 1, None, None)))
    return out


def make_aux(classes):
    """Auxiliary classifier head (unused by `Inception3`, kept as in MXNet)."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.AvgPool2D(pool_size=5, strides=3))
    out.add(_make_basic_conv(channels=128, kernel_size=1))
    out.add(_make_basic_conv(channels=768, kernel_size=5))
    out.add(nn.Flatten())
    out.add(nn.Dense(classes))
    return out


class Inception3(HybridBlock):
    r"""Inception v3 model from `"Rethinking the Inception Architecture for Computer Vision"
    <http://arxiv.org/abs/1512.00567>`_ paper.

    Parameters
    ----------
    classes : int, default 1000
        Number of classification classes.
    """

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            add = self.features.add
            add(_make_basic_conv(channels=32, kernel_size=3, strides=2))
            add(_make_basic_conv(channels=32, kernel_size=3))
            add(_make_basic_conv(channels=64, kernel_size=3, padding=1))
            add(nn.MaxPool2D(pool_size=3, strides=2))
            add(_make_basic_conv(channels=80, kernel_size=1))
            add(_make_basic_conv(channels=192, kernel_size=3))
            add(nn.MaxPool2D(pool_size=3, strides=2))
            add(_make_A(32, 'A1_'))
            add(_make_A(64, 'A2_'))
            add(_make_A(64, 'A3_'))
            add(_make_B('B_'))
            add(_make_C(128, 'C1_'))
            add(_make_C(160, 'C2_'))
            add(_make_C(160, 'C3_'))
            add(_make_C(192, 'C4_'))
            add(_make_D('D_'))
            add(_make_E('E1_'))
            add(_make_E('E2_'))
            add(nn.AvgPool2D(pool_size=8))
            add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=cpu(),
                 root=os.path.join(data_dir(), 'models'), **kwargs):
    r"""Inception v3 model from `"Rethinking the Inception Architecture for Computer Vision"
    <http://arxiv.org/abs/1512.00567>`_ paper.

    Parameters
    ----------
    pretrained : bool, default False
        Whether to load the pretrained weights for model.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location for keeping the model parameters.
    """
    net = Inception3(**kwargs)
    if pretrained:
        _load_pretrained(net, 'inceptionv3', root, ctx)
    return net

"""SqueezeNet 1.0 and 1.1, as MXNet 1.9.1's ``gluon.model_zoo.vision.squeezenet``."""
from __future__ import annotations

import os

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ...contrib.nn import HybridConcurrent
from ..model_store import _load_pretrained, data_dir

__all__ = ['SqueezeNet', 'squeezenet1_0', 'squeezenet1_1']

# Feature layers after the stem: 'P' = 3x3/2 ceil-mode max-pool, (s, e) = fire module.
_FEATURES = {
    '1.0': ((96, 7), [(16, 64), (16, 64), (32, 128), 'P', (32, 128), (48, 192), (48, 192),
                      (64, 256), 'P', (64, 256)]),
    '1.1': ((64, 3), [(16, 64), (16, 64), 'P', (32, 128), (32, 128), 'P', (48, 192),
                      (48, 192), (64, 256), (64, 256)]),
}


def _make_fire_conv(channels: int, kernel_size: int, padding: int = 0) -> nn.HybridSequential:
    """Convolution (with bias) followed by ReLU."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation('relu'))
    return out


def _make_fire(squeeze_channels: int, expand1x1_channels: int,
               expand3x3_channels: int) -> nn.HybridSequential:
    """Fire module: 1x1 squeeze, then 1x1 and 3x3 expands concatenated on channels."""
    out = nn.HybridSequential(prefix='')
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = HybridConcurrent(axis=1, prefix='')
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


class SqueezeNet(HybridBlock):
    r"""SqueezeNet model from the `"SqueezeNet: AlexNet-level accuracy with 50x fewer
    parameters and <0.5MB model size" <https://arxiv.org/abs/1602.07360>`_ paper.
    SqueezeNet 1.1 model from the `official SqueezeNet repo
    <https://github.com/DeepScale/SqueezeNet/tree/master/SqueezeNet_v1.1>`_.

    Parameters
    ----------
    version : str
        Version of squeezenet. Options are '1.0', '1.1'.
    classes : int, default 1000
        Number of classification classes.
    """

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        assert version in ['1.0', '1.1'], ("Unsupported SqueezeNet version {version}:"
                                           "1.0 or 1.1 expected".format(version=version))
        (stem_channels, stem_kernel), layers = _FEATURES[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.Conv2D(stem_channels, kernel_size=stem_kernel, strides=2))
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
            for layer in layers:
                if layer == 'P':
                    self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                else:
                    squeeze, expand = layer
                    self.features.add(_make_fire(squeeze, expand, expand))
            self.features.add(nn.Dropout(0.5))

            self.output = nn.HybridSequential(prefix='')
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation('relu'))
            self.output.add(nn.AvgPool2D(13))
            self.output.add(nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(),
                   root=os.path.join(data_dir(), 'models'), **kwargs):
    r"""SqueezeNet model of `version` ('1.0' or '1.1').

    Parameters
    ----------
    version : str
        Version of squeezenet. Options are '1.0', '1.1'.
    pretrained : bool, default False
        Whether to load the pretrained weights for model.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location for keeping the model parameters.
    """
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        _load_pretrained(net, 'squeezenet%s' % version, root, ctx)
    return net


def squeezenet1_0(**kwargs):
    r"""SqueezeNet 1.0 model (see `get_squeezenet` for the keyword arguments)."""
    return get_squeezenet('1.0', **kwargs)


def squeezenet1_1(**kwargs):
    r"""SqueezeNet 1.1 model (see `get_squeezenet` for the keyword arguments)."""
    return get_squeezenet('1.1', **kwargs)

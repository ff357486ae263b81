"""VGG, as MXNet 1.9.1's ``gluon.model_zoo.vision.vgg``."""
from __future__ import annotations

import os

from ....context import cpu
from ....initializer import Xavier
from ...block import HybridBlock
from ... import nn
from ..model_store import _load_pretrained, data_dir

__all__ = ['VGG',
           'vgg11', 'vgg13', 'vgg16', 'vgg19',
           'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
           'get_vgg']


def _dense(units: int, activation=None) -> nn.Dense:
    """A classifier layer with VGG's normal/zeros initializers."""
    return nn.Dense(units, activation=activation, weight_initializer='normal',
                    bias_initializer='zeros')


class VGG(HybridBlock):
    r"""VGG model from the `"Very Deep Convolutional Networks for Large-Scale Image
    Recognition" <https://arxiv.org/abs/1409.1556>`_ paper.

    Parameters
    ----------
    layers : list of int
        Numbers of layers in each feature block.
    filters : list of int
        Numbers of filters in each feature block. List length should match the layers.
    classes : int, default 1000
        Number of classification classes.
    batch_norm : bool, default False
        Use batch normalization.
    """

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(filters)
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            self.features.add(_dense(4096, 'relu'))
            self.features.add(nn.Dropout(rate=0.5))
            self.features.add(_dense(4096, 'relu'))
            self.features.add(nn.Dropout(rate=0.5))
            self.output = _dense(classes)

    def _make_features(self, layers, filters, batch_norm):
        """The convolutional blocks, each closed by a 2x2/2 max-pool."""
        featurizer = nn.HybridSequential(prefix='')
        for i, num in enumerate(layers):
            for _ in range(num):
                featurizer.add(nn.Conv2D(
                    filters[i], kernel_size=3, padding=1,
                    weight_initializer=Xavier(rnd_type='gaussian', factor_type='out',
                                              magnitude=2),
                    bias_initializer='zeros'))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation('relu'))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, ctx=cpu(),
            root=os.path.join(data_dir(), 'models'), **kwargs):
    r"""VGG model from the `"Very Deep Convolutional Networks for Large-Scale Image
    Recognition" <https://arxiv.org/abs/1409.1556>`_ paper.

    Parameters
    ----------
    num_layers : int
        Number of layers for the variant of VGG. Options are 11, 13, 16, 19.
    pretrained : bool, default False
        Whether to load the pretrained weights for model.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location for keeping the model parameters.
    """
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        suffix = '_bn' if kwargs.get('batch_norm') else ''
        _load_pretrained(net, 'vgg%d%s' % (num_layers, suffix), root, ctx)
    return net


def _vgg_fn(num_layers: int, batch_norm: bool):
    """Build the public constructor ``vgg<num_layers>[_bn]``."""
    def fn(**kwargs):
        if batch_norm:
            kwargs['batch_norm'] = True
        return get_vgg(num_layers, **kwargs)
    fn.__name__ = fn.__qualname__ = 'vgg%d%s' % (num_layers, '_bn' if batch_norm else '')
    fn.__doc__ = (
        'VGG-%d model%s from the `"Very Deep Convolutional Networks for Large-Scale Image '
        'Recognition" <https://arxiv.org/abs/1409.1556>`_ paper.\n\n'
        '    Parameters\n    ----------\n'
        '    pretrained : bool, default False\n'
        '        Whether to load the pretrained weights for model.\n'
        '    ctx : Context, default CPU\n'
        '        The context in which to load the pretrained weights.\n'
        "    root : str, default '$MXNET_HOME/models'\n"
        '        Location for keeping the model parameters.\n'
        % (num_layers, ' with batch normalization' if batch_norm else ''))
    return fn


vgg11 = _vgg_fn(11, False)
vgg13 = _vgg_fn(13, False)
vgg16 = _vgg_fn(16, False)
vgg19 = _vgg_fn(19, False)
vgg11_bn = _vgg_fn(11, True)
vgg13_bn = _vgg_fn(13, True)
vgg16_bn = _vgg_fn(16, True)
vgg19_bn = _vgg_fn(19, True)

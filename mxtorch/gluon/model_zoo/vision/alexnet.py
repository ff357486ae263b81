"""AlexNet, as MXNet 1.9.1's ``gluon.model_zoo.vision.alexnet``."""
from __future__ import annotations

import os

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import _load_pretrained, data_dir

__all__ = ['AlexNet', 'alexnet']


class AlexNet(HybridBlock):
    r"""AlexNet model from the `"One weird trick..." <https://arxiv.org/abs/1404.5997>`_ paper.

    Parameters
    ----------
    classes : int, default 1000
        Number of classes for the output layer.
    """

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                add = self.features.add
                add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation='relu'))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Conv2D(192, kernel_size=5, padding=2, activation='relu'))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Conv2D(384, kernel_size=3, padding=1, activation='relu'))
                add(nn.Conv2D(256, kernel_size=3, padding=1, activation='relu'))
                add(nn.Conv2D(256, kernel_size=3, padding=1, activation='relu'))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Flatten())
                add(nn.Dense(4096, activation='relu'))
                add(nn.Dropout(0.5))
                add(nn.Dense(4096, activation='relu'))
                add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=os.path.join(data_dir(), 'models'), **kwargs):
    r"""AlexNet model from the `"One weird trick..." <https://arxiv.org/abs/1404.5997>`_ paper.

    Parameters
    ----------
    pretrained : bool, default False
        Whether to load the pretrained weights for model.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location for keeping the model parameters.
    """
    net = AlexNet(**kwargs)
    if pretrained:
        _load_pretrained(net, 'alexnet', root, ctx)
    return net

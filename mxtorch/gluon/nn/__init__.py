"""Gluon neural network layers (``mx.gluon.nn``)."""
from ..block import *  # noqa: F403  (MXNet re-exports Block, HybridBlock, SymbolBlock)
from . import activations, basic_layers, conv_layers
from .activations import *  # noqa: F403
from .basic_layers import *  # noqa: F403
from .conv_layers import *  # noqa: F403

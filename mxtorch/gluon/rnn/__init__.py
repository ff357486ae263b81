"""Recurrent neural network module (``mx.gluon.rnn``): fused layers and cells."""
from .rnn_cell import *  # noqa: F403
from .rnn_layer import *  # noqa: F403
from . import rnn_cell, rnn_layer

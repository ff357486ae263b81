"""Recurrent neural network module (``mx.gluon.rnn``): fused layers and cells."""
from .rnn_cell import *
from .rnn_layer import *
from . import rnn_cell, rnn_layer

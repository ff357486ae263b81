"""Gluon: MXNet's imperative/hybrid neural network API (``mx.gluon``)."""
from .parameter import Parameter, Constant, ParameterDict, DeferredInitializationError
from .block import Block, HybridBlock, SymbolBlock
from .trainer import Trainer
from . import utils
from . import nn
from . import loss
from . import contrib
from . import data
from . import rnn
from . import model_zoo

__all__ = ["Parameter", "Constant", "ParameterDict", "DeferredInitializationError", "Block",
           "HybridBlock", "SymbolBlock", "Trainer", "utils", "nn", "loss", "contrib", "data", "rnn",
           "model_zoo"]

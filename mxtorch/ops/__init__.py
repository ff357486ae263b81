"""The operator registry and its families. Importing this package registers every operator."""
from . import registry
from . import (elemwise, creation, reduce, shape, index, linalg, nn, norm, nn_misc, rnn,
               loss, random, random_pdf, optim, custom, control_flow, image, np_ops,
               spatial, contrib_tensor, contrib_vision, attention, contrib_detection,
               contrib_multibox)
from .registry import OpDef, get, find, all_ops, register

__all__ = ["registry", "OpDef", "get", "find", "all_ops", "register"]

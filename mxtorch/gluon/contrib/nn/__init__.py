"""Contributed neural network layers (``mx.gluon.contrib.nn``)."""
from . import basic_layers
from .basic_layers import *  # noqa: F403

__all__ = basic_layers.__all__

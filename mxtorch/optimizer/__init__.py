"""Optimizer API of MXNet (``mx.optimizer``)."""
from . import optimizer, contrib
from .optimizer import *  # noqa: F403

__all__ = optimizer.__all__ + ['contrib']

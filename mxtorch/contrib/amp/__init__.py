"""Automatic mixed precision module."""
from . import amp, lists, loss_scaler
from .amp import *  # noqa: F403

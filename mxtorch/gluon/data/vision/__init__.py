"""Vision utilities (``gluon.data.vision``)."""
from .datasets import *  # noqa: F403
from . import transforms

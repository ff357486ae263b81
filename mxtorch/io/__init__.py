"""Data iterators for common data formats and utility functions (``mx.io``)."""
from . import io
from .io import *  # noqa: F403
from . import utils
from .utils import _init_data, _getdata_by_idx, _has_instance

__all__ = io.__all__

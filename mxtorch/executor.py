"""``mx.executor``: the Executor class (see ``mxtorch.graph.executor``).

Like MXNet's module it also exposes the helpers its source imports (``ndarray``,
``NDArray``, ``py_str``, the C-array converters of :mod:`mxtorch.base`).
"""
from . import ndarray  # noqa: F401 - MXNet's module exposes these names
from .base import (c_array_buf, c_handle_array, c_str_array, check_call,  # noqa: F401
                   py_str)
from .graph.executor import Executor
from .ndarray import NDArray  # noqa: F401

__all__ = ["Executor"]

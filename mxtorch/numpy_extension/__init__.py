"""``mx.npx``: MXNet's operators outside official NumPy, for code written in NumPy mode.

``from mxtorch import np, npx; npx.set_np()`` turns on NumPy shape and array semantics;
``npx.fully_connected``, ``npx.convolution``, ``npx.batch_norm``, ... run the same
registered operators as ``mx.nd`` and return ``mx.np.ndarray``; ``npx.save`` and
``npx.load`` read and write the V3 (numpy-shape) NDArray file.
"""
from ..context import (Context, cpu, cpu_pinned, current_context, gpu,
                       gpu_memory_info, num_gpus)
from ..ndarray.ndarray import waitall
from ..util import is_np_array, is_np_shape, reset_np, set_np
from . import _op
from ._op import *  # noqa: F403
from ._op import nonzero, reshape
from .utils import load, save
from . import random
from ._wiring import install as _install

__all__ = []

_install()

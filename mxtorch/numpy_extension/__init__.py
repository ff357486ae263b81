"""``mx.npx``: MXNet's operators outside official NumPy, for code written in NumPy mode.

``from mxtorch import np, npx; npx.set_np()`` turns on NumPy shape and array semantics;
``npx.fully_connected``, ``npx.convolution``, ``npx.batch_norm``, ... run the same
registered operators as ``mx.nd`` and return ``mx.np.ndarray``; ``npx.save`` and
``npx.load`` read and write the V3 (numpy-shape) NDArray file.
"""
from ..context import (Context, cpu, cpu_pinned, current_context, gpu,  # noqa: F401
                       gpu_memory_info, num_gpus)
from ..ndarray.ndarray import waitall  # noqa: F401
from ..util import is_np_array, is_np_shape, reset_np, set_np  # noqa: F401
from . import _op  # noqa: F401
from ._op import *  # noqa: F401,F403
from ._op import nonzero, reshape  # noqa: F401
from .utils import load, save  # noqa: F401
from . import random  # noqa: F401
from ._wiring import install as _install

__all__ = []

_install()

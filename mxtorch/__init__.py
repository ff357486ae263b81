"""mxtorch: Apache MXNet 1.x's Python API on PyTorch.

``import mxtorch as mx`` and MXNet code runs unchanged.
"""
__version__ = "0.1.0"

from . import base
from .base import MXNetError
from . import context
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus, gpu_memory_info
from . import ops
from . import autograd
from . import ndarray
from . import ndarray as nd
from . import random
from . import test_utils

__all__ = ["base", "MXNetError", "context", "Context", "cpu", "gpu", "cpu_pinned",
           "current_context", "num_gpus", "gpu_memory_info", "ops", "autograd", "ndarray", "nd",
           "random", "test_utils"]

"""mxtorch: Apache MXNet 1.x's Python API on PyTorch.

``import mxtorch as mx`` and MXNet code runs unchanged.
"""
from .libinfo import __version__, __mxtorch_version__

from . import base
from . import libinfo
from .base import MXNetError
from . import engine, error, log, runtime
from . import context
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus, gpu_memory_info
from .util import is_np_shape, set_np_shape, np_shape, use_np_shape
from .util import is_np_array, np_array, use_np_array, use_np
from . import ops
from . import autograd
from . import ndarray
from . import ndarray as nd
from . import random
from . import random as rnd
from . import name
from .attribute import AttrScope
from . import attribute
from . import symbol
from . import symbol as sym
from . import symbol_doc, ndarray_doc
from . import graph
from . import executor
from . import operator
from . import visualization
from . import visualization as viz
from . import registry
from . import lr_scheduler
from . import optimizer
from .optimizer import Optimizer
from . import initializer
from . import initializer as init
from . import metric
from . import io
from . import callback
from . import notebook
from . import kvstore
from . import kvstore as kv
from . import model
from . import monitor
from . import monitor as mon
from . import executor_manager
from . import module
from . import module as mod
from . import gluon
from . import rnn
from . import recordio
from . import image
from . import image as img
from . import util
from . import numpy
from . import numpy as np
from . import numpy_extension
from . import numpy_extension as npx
from .symbol.numpy import _symbol as np_symbol
from . import test_utils
from . import contrib
from . import profiler
from . import rtc
# not in __all__: ``from mxtorch import *`` must not shadow the real torch module
from . import torch
from . import torch as th


__all__ = ["base", "MXNetError", "context", "Context", "cpu", "gpu", "cpu_pinned",
           "current_context", "num_gpus", "gpu_memory_info", "ops", "autograd", "ndarray", "nd",
           "random", "name", "AttrScope", "attribute", "symbol", "sym", "graph", "executor",
           "operator", "visualization", "viz", "registry", "initializer", "init", "metric", "io",
           "callback", "executor_manager", "module", "mod", "gluon", "rnn", "recordio", "image",
           "util", "numpy", "np", "numpy_extension", "npx", "lr_scheduler", "optimizer",
           "Optimizer", "kvstore", "kv", "model", "monitor", "mon", "test_utils", "contrib",
           "profiler", "engine", "error", "log", "runtime", "libinfo", "symbol_doc", "ndarray_doc",
           "notebook", "rtc", "th", "is_np_shape", "set_np_shape", "np_shape", "use_np_shape",
           "is_np_array", "np_array", "use_np_array", "use_np", "rnd", "img", "np_symbol"]

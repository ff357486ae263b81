"""Experimental contributions: ``mx.contrib.ndarray``/``symbol`` (the contrib operators),
the 1.x-era ``autograd`` API, ``io.DataLoaderIter``; ``mx.contrib.amp`` is imported on
first use (``from mxnet.contrib import amp``), as in MXNet."""
from . import symbol
from . import ndarray

from . import symbol as sym
from . import ndarray as nd

from . import autograd
from . import io

__all__ = ["symbol", "ndarray", "sym", "nd", "autograd", "io"]

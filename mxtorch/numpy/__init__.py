"""``mx.np``: MXNet 1.9.1's NumPy-compatible array API on torch.

``from mxtorch import np`` (``mx.np``) gives ``ndarray`` and NumPy-style functions with
NumPy shape semantics (0-d and zero-size arrays) and MXNet's dtype rules (float32
default, see ``_math``).
"""
from __future__ import annotations

import sys

import numpy as _onp

from . import linalg, random
from ._manip import *  # noqa: F403
from ._manip import (append, argwhere, array_split, atleast_1d, atleast_2d, atleast_3d,
                     broadcast_arrays, broadcast_to, clip, column_stack, concat, concatenate,
                     delete, diag, diagflat, diagonal, diff, dsplit, dstack, ediff1d,
                     expand_dims, flatnonzero, flip, fliplr, flipud, hsplit, hstack, insert,
                     moveaxis, nonzero, pad, ravel, repeat, reshape, resize, roll, rot90,
                     row_stack, split, squeeze, stack, swapaxes, take, tile, transpose,
                     unique, vsplit, vstack, where)
from ._math import *  # noqa: F403
from ._math import (_BINARY, _UNARY, around, cross, dot, einsum, inner, interp, kron,
                    matmul, nan_to_num, outer, round, round_, tensordot, trace, vdot)
from ._reduce import (all, amax, amin, any, argmax, argmin, argsort, average, bincount,
                      count_nonzero, cumprod, cumsum, histogram, max, mean, median, min,
                      percentile, prod, quantile, sort, std, sum, var)
from .multiarray import (arange, array, as_np_ndarray, copy, empty, empty_like, eye, full,
                         full_like, identity, indices, linspace, logspace, meshgrid, ndarray,
                         ones, ones_like, real, shape, tri, tril, triu, zeros,
                         zeros_like)
from . import multiarray as _mu
from ..ndarray.methods import OPERATOR_METHODS as _LEGACY_METHODS
from . import _math

for _name, _fn, _kind in _BINARY + _UNARY:
    globals()[_name] = getattr(_math, _name)

# NumPy's scalar types and constants, as mx.np re-exports them.
pi, e, inf, nan, newaxis = _onp.pi, _onp.e, _onp.inf, _onp.nan, None
PZERO, NZERO, NINF, PINF, NAN = 0.0, -0.0, -_onp.inf, _onp.inf, _onp.nan
float16, float32, float64 = _onp.float16, _onp.float32, _onp.float64
int8, uint8, int32, int64 = _onp.int8, _onp.uint8, _onp.int32, _onp.int64
int16, uint16, uint32, uint64 = _onp.int16, _onp.uint16, _onp.uint32, _onp.uint64
bool_ = _onp.bool_
bool = _onp.bool_  # noqa: A001
dtype = _onp.dtype
finfo, iinfo = _onp.finfo, _onp.iinfo


def _module_namespace():
    """This module (used by ``ndarray`` methods)."""
    return sys.modules[__name__]


def may_share_memory(a, b, max_work=None):
    """Whether two arrays may share memory (same storage)."""
    return a._t.untyped_storage().data_ptr() == b._t.untyped_storage().data_ptr()


shares_memory = may_share_memory


def _method_table() -> dict:
    """Functions available as ``ndarray`` methods (``x.sum()``, ``x.argmax()``...)."""
    names = ["sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin",
             "cumsum", "cumprod", "sort", "argsort", "all", "any", "clip", "round",
             "transpose", "swapaxes", "squeeze", "flatten", "ravel", "repeat", "tile",
             "take", "diagonal", "trace", "dot", "nonzero", "flip", "broadcast_to",
             "expand_dims", "split", "tolist", "abs", "sqrt", "exp", "log", "sign",
             "square", "floor", "ceil", "trunc", "sin", "cos", "tan", "tanh", "sigmoid",
             "relu", "moveaxis", "around", "nan_to_num"]
    mod = _module_namespace()
    table = {n: getattr(mod, n) for n in names if hasattr(mod, n)}
    table["flatten"] = lambda a, order="C": ravel(a).copy()
    table["broadcast_like"] = lambda a, other: broadcast_to(a, other.shape)
    table["reshape_like"] = lambda a, other: reshape(a, other.shape)
    return table


_mu.install_methods(_method_table(), _LEGACY_METHODS)
_mu._install_operators(_module_namespace())

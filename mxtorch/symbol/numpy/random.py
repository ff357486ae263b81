"""``mx.sym.np.random``: symbolic samplers in NumPy mode (``_npi_uniform``, ...).

Scalar parameters become attributes; symbol parameters become inputs (the attribute is
then ``None``), as in MXNet 1.9.1.
"""
from __future__ import annotations

import numpy as _onp

from ..symbol import Symbol
from ._symbol import make_np

__all__ = ["uniform", "normal", "exponential", "randint", "rand"]


def _size(size):
    return size if size is None or isinstance(size, int) else tuple(size)


def _sample(op: str, keys: tuple, values: tuple, size, ctx, dtype=None):
    attrs = {"size": _size(size), "ctx": str(ctx or "cpu(0)")}
    if dtype is not False:
        attrs["dtype"] = _onp.dtype(dtype or "float32").name
    inputs = []
    for k, v in zip(keys, values):
        if isinstance(v, Symbol):
            inputs.append(v)
            attrs[k] = None
        else:
            attrs[k] = float(v)
    return make_np(op, inputs, attrs)


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, out=None):
    """Uniform samples on ``[low, high)`` (``_npi_uniform``)."""
    return _sample("_npi_uniform", ("low", "high"), (low, high), size, ctx, dtype)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    """Normal samples (``_npi_normal``)."""
    return _sample("_npi_normal", ("loc", "scale"), (loc, scale), size, ctx, dtype)


def exponential(scale=1.0, size=None, ctx=None, out=None):
    """Exponential samples (``_npi_exponential``)."""
    return _sample("_npi_exponential", ("scale",), (scale,), size, ctx, False)


def randint(low, high=None, size=None, dtype=None, ctx=None, out=None):
    """Integers in ``[low, high)`` (MXNet emits ``_random_randint``)."""
    if high is None:
        low, high = 0, low
    return make_np("_random_randint", [], {"low": low, "high": high,
                                           "shape": () if size is None else _size(size),
                                           "ctx": str(ctx or "cpu(0)"),
                                           "dtype": _onp.dtype(dtype or "int64").name})


def rand(*size, **kwargs):
    """Uniform samples on ``[0, 1)`` of shape ``size`` (``_npi_uniform``)."""
    return make_np("_npi_uniform", [], {"low": 0, "high": 1, "size": tuple(size),
                                        "ctx": str(kwargs.get("ctx") or "cpu(0)"),
                                        "dtype": "float32"})

"""``mx.sym`` Python-level helpers: scalar-aware binary functions and creation wrappers."""
from __future__ import annotations

import numbers

import numpy as np

from .symbol import Symbol, _make

__all__ = ["maximum", "minimum", "pow", "power", "hypot", "zeros", "ones", "full", "arange",
           "linspace", "eye"]


def _binary(lhs, rhs, array_op, lscalar, rscalar, py):
    if isinstance(lhs, Symbol) and isinstance(rhs, Symbol):
        return _make(array_op, [lhs, rhs], {})
    if isinstance(lhs, Symbol):
        return _make(lscalar, [lhs], {"scalar": rhs})
    if isinstance(rhs, Symbol):
        return _make(rscalar, [rhs], {"scalar": lhs})
    return py(lhs, rhs)


def maximum(left, right):
    return _binary(left, right, "_Maximum", "_MaximumScalar", "_MaximumScalar", max)


def minimum(left, right):
    return _binary(left, right, "_Minimum", "_MinimumScalar", "_MinimumScalar", min)


def pow(base, exp):  # noqa: A001 - MXNet's name
    return _binary(base, exp, "_Power", "_PowerScalar", "_RPowerScalar", lambda a, b: a ** b)


power = pow


def hypot(left, right):
    return _binary(left, right, "_Hypot", "_HypotScalar", "_HypotScalar",
                   lambda a, b: float(np.hypot(a, b)))


def _shape(shape):
    return (int(shape),) if isinstance(shape, numbers.Integral) else tuple(shape)


def zeros(shape, dtype=None, name=None, attr=None, **kwargs):
    return _make("_zeros", [], dict(shape=_shape(shape), dtype=dtype or "float32", **kwargs),
                 name=name, attr=attr)


def ones(shape, dtype=None, name=None, attr=None, **kwargs):
    return _make("_ones", [], dict(shape=_shape(shape), dtype=dtype or "float32", **kwargs),
                 name=name, attr=attr)


def full(shape, val, dtype=None, name=None, attr=None, **kwargs):
    return _make("_full", [], dict(shape=_shape(shape), value=val, dtype=dtype or "float32",
                                   **kwargs), name=name, attr=attr)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    return _make("_arange", [], dict(start=start, stop=stop, step=step, repeat=repeat,
                                     dtype=dtype or "float32"), name=name)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    return _make("_linspace", [], dict(start=start, stop=stop, num=num, endpoint=endpoint,
                                       dtype=dtype or "float32"), name=name)


def eye(N, M=0, k=0, dtype=None, name=None, **kwargs):
    return _make("_eye", [], dict(N=N, M=M, k=k, dtype=dtype or "float32", **kwargs),
                 name=name)

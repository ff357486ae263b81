"""``mx.sym`` Python-level helpers: scalar-aware binary functions and creation wrappers."""
from __future__ import annotations

import numbers

import numpy as np

from .symbol import Symbol, _make

__all__ = ["maximum", "minimum", "pow", "power", "hypot", "zeros", "ones", "full", "arange",
           "linspace", "eye", "histogram", "split_v2"]


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
                                     infer_range=infer_range, dtype=dtype or "float32"),
                 name=name)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    return _make("_linspace", [], dict(start=start, stop=stop, num=num, endpoint=endpoint,
                                       dtype=dtype or "float32"), name=name)


def eye(N, M=0, k=0, dtype=None, name=None, **kwargs):
    return _make("_eye", [], dict(N=N, M=M, k=k, dtype=dtype or "float32", **kwargs),
                 name=name)


def histogram(a, bins=10, range=None, **kwargs):  # noqa: A002 - MXNet's name
    """Histogram of the flattened input: ``bins`` equal bins over ``range`` (both required
    for an int), or the edges in the Symbol ``bins``; outputs (counts, bin edges)."""
    if isinstance(bins, Symbol):
        return _make("_histogram", [a, bins], {}, **kwargs)
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        if range is None:
            raise ValueError("null range is not supported in symbol mode")
        return _make("_histogram", [a], {"bin_cnt": bins, "range": range}, **kwargs)
    raise ValueError("bins argument should be either an integer or an NDArray")


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split into ``indices_or_sections`` parts along ``axis``: an int (equal parts, the
    first ones one longer when it does not divide the axis) or a tuple of split points."""
    if isinstance(indices_or_sections, int):
        indices, sections = [], indices_or_sections
    elif isinstance(indices_or_sections, tuple):
        indices, sections = [0] + list(indices_or_sections), 0
    else:
        raise ValueError("indices_or_sections must either int or tuple of ints")
    return _make("_split_v2", [ary], {"indices": indices, "axis": axis,
                                      "squeeze_axis": squeeze_axis, "sections": sections})

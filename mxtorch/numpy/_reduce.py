"""Reductions, statistics and sorting of ``mx.np`` (MXNet 1.9.1 dtype rules).

MXNet: ``sum``/``prod``/``cumsum`` keep integer dtypes (bool -> int64); ``mean`` of an
integer array is float32; ``std``/``var``/``average`` of an integer array keep its dtype
(truncated); index results (argmax, argsort, nonzero) are int64.
"""
from __future__ import annotations

import builtins

import numpy as onp
import torch

from ..ndarray.ndarray import NDArray
from ..ops.tensor_util import torch_dtype
from .multiarray import _grad_scope, np_op, wrap

_builtin_max = builtins.max


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return (int(axis),) if isinstance(axis, (int, onp.integer)) else tuple(axis)


def _finish(res, a, out, dtype=None):
    if dtype is not None:
        res = res.to(torch_dtype(dtype))
    if out is None:
        return wrap(res, a._ctx)
    with _grad_scope():
        out._t.copy_(res)
    return out


def _sum_dtype(t):
    return torch.int64 if t.dtype == torch.bool else t.dtype


@np_op
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):  # noqa: A001
    """Sum of elements over the given axes."""
    t = a._t
    res = torch.sum(t, _axes(axis, t.dim()), keepdim=keepdims, dtype=_sum_dtype(t))
    if initial is not None:
        res = res + initial
    return _finish(res, a, out, dtype)


@np_op
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """Product of elements over the given axes."""
    t = a._t.to(_sum_dtype(a._t))
    res = t
    for ax in sorted((ax % _builtin_max(t.dim(), 1) for ax in _axes(axis, t.dim())), reverse=True):
        res = torch.prod(res, ax, keepdim=keepdims)
    if initial is not None:
        res = res * initial
    return _finish(res, a, out, dtype)


@np_op
def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean (float32 for integer input, as MXNet)."""
    t = a._t
    if not t.is_floating_point():
        t = t.to(torch.float32)
    res = torch.mean(t, _axes(axis, t.dim()), keepdim=keepdims)
    return _finish(res, a, out, dtype)


def _moment(name, fn):
    def stat(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        t = a._t
        src = t if t.is_floating_point() else t.to(torch.float32)
        res = fn(src, _axes(axis, t.dim()), correction=ddof, keepdim=keepdims)
        if not t.is_floating_point():
            res = res.to(t.dtype)  # MXNet: integer input keeps its dtype
        return _finish(res, a, out, dtype)
    stat.__name__ = name
    stat.__doc__ = f"``{name}`` over the given axes (``ddof`` delta degrees of freedom)."
    return np_op(stat)


std = _moment("std", torch.std)
var = _moment("var", torch.var)


def _extreme(name, fn):
    def red(a, axis=None, out=None, keepdims=False):
        t = a._t
        if t.numel() == 0 and axis is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has "
                             "no identity")
        res = fn(t, dim=_axes(axis, t.dim()), keepdim=keepdims)
        return _finish(res, a, out)
    red.__name__ = name
    red.__doc__ = f"``{name}`` of an array or along an axis."
    return np_op(red)


max = amax = _extreme("max", torch.amax)  # noqa: A001
min = amin = _extreme("min", torch.amin)  # noqa: A001


@np_op
def average(a, axis=None, weights=None, returned=False, out=None):
    """Weighted average (integer input keeps its dtype, as MXNet)."""
    t = a._t
    src = t if t.is_floating_point() else t.to(torch.float32)
    axes = _axes(axis, t.dim())
    if weights is None:
        avg = torch.mean(src, axes)
        scl = torch.tensor(float(src.numel() // _builtin_max(avg.numel(), 1)), device=t.device)
    else:
        w = weights._t.to(src.dtype)
        if w.shape != src.shape:
            shape = [1] * src.dim()
            shape[axes[0]] = w.numel()
            w = w.reshape(shape)
        w = torch.broadcast_to(w, src.shape)
        scl = w.sum(axes)
        avg = (src * w).sum(axes) / scl
    if not t.is_floating_point():
        avg = avg.to(t.dtype)
    res = _finish(avg, a, out)
    return (res, wrap(scl.to(avg.dtype), a._ctx)) if returned else res


def _cumulative(name, fn):
    def cum(a, axis=None, dtype=None, out=None):
        t = a._t
        if axis is None:
            t, axis = t.reshape(-1), 0
        res = fn(t, axis, dtype=torch_dtype(dtype) if dtype else _sum_dtype(t))
        return _finish(res, a, out)
    cum.__name__ = name
    cum.__doc__ = f"``{name}`` along an axis (flattened when ``axis`` is None)."
    return np_op(cum)


cumsum = _cumulative("cumsum", torch.cumsum)
cumprod = _cumulative("cumprod", torch.cumprod)


def _arg(name, fn):
    def arg(a, axis=None, out=None):
        t = a._t
        res = fn(t.reshape(-1), 0) if axis is None else fn(t, axis)
        return _finish(res, a, out)
    arg.__name__ = name
    arg.__doc__ = f"Indices (int64) of the {name[3:]}imum values."
    return np_op(arg)


argmax = _arg("argmax", torch.argmax)
argmin = _arg("argmin", torch.argmin)


@np_op
def sort(a, axis=-1, kind=None, order=None):
    """Sorted copy of an array (``axis=None`` flattens)."""
    t = a._t
    if axis is None:
        t, axis = t.reshape(-1), 0
    return wrap(torch.sort(t, dim=axis, stable=True).values, a._ctx)


@np_op
def argsort(a, axis=-1, kind=None, order=None):
    """Indices (int64) that sort an array."""
    t = a._t
    if axis is None:
        t, axis = t.reshape(-1), 0
    return wrap(torch.argsort(t, dim=axis, stable=True), a._ctx)


@np_op
def all(a, axis=None, out=None, keepdims=False):  # noqa: A001
    """Whether all elements are true (bool result)."""
    t = a._t.to(torch.bool)
    res = t
    for ax in sorted((x % _builtin_max(t.dim(), 1) for x in _axes(axis, t.dim())), reverse=True):
        res = torch.all(res, ax, keepdim=keepdims)
    return _finish(torch.all(res) if axis is None and not keepdims else res, a, out)


@np_op
def any(a, axis=None, out=None, keepdims=False):  # noqa: A001
    """Whether any element is true (bool result)."""
    t = a._t.to(torch.bool)
    res = t
    for ax in sorted((x % _builtin_max(t.dim(), 1) for x in _axes(axis, t.dim())), reverse=True):
        res = torch.any(res, ax, keepdim=keepdims)
    return _finish(torch.any(res) if axis is None and not keepdims else res, a, out)


def count_nonzero(a, axis=None):
    """Number of non-zero values (a Python int when ``axis`` is None, as MXNet)."""
    t = a._t
    if axis is None:
        return int(torch.count_nonzero(t))
    return wrap(torch.count_nonzero(t, _axes(axis, t.dim())), a._ctx)


def _quantile_impl(a, q, axis, interpolation, keepdims, out):
    t = a._t
    src = t if t.is_floating_point() else t.to(torch.float32)
    qt = q._t.to(src.dtype) if isinstance(q, NDArray) else torch.tensor(q, dtype=src.dtype,
                                                                          device=t.device)
    if axis is None:
        res = torch.quantile(src.reshape(-1), qt, interpolation=interpolation)
        if keepdims:
            res = res.reshape(tuple(qt.shape) + (1,) * t.dim())
    elif isinstance(axis, int):
        res = torch.quantile(src, qt, dim=axis, keepdim=keepdims, interpolation=interpolation)
    else:
        axes = [x % t.dim() for x in axis]
        rest = [d for d in range(t.dim()) if d not in axes]
        flat = src.permute(rest + axes).reshape([src.shape[d] for d in rest] + [-1])
        res = torch.quantile(flat, qt, dim=-1, interpolation=interpolation)
    return _finish(res, a, out)


@np_op
def quantile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
             keepdims=False):
    """q-th quantile (q in [0, 1])."""
    return _quantile_impl(a, q, axis, interpolation, keepdims, out)


@np_op
def percentile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
               keepdims=False):
    """q-th percentile (q in [0, 100])."""
    q = q / 100.0 if not isinstance(q, NDArray) else q * 0.01
    if not isinstance(q, NDArray) and not onp.isscalar(q):
        q = list(onp.asarray(q))
    return _quantile_impl(a, q, axis, interpolation, keepdims, out)


def median(a, axis=None, out=None, overwrite_input=None, keepdims=False):
    """Median along the given axes."""
    return quantile(a, 0.5, axis=axis, out=out, keepdims=keepdims)


@np_op
def bincount(x, weights=None, minlength=0):
    """Count occurrences of each non-negative integer (int64; weights' dtype if given)."""
    w = weights._t if weights is not None else None
    return wrap(torch.bincount(x._t.reshape(-1).long(), w, minlength), x._ctx)


def histogram(a, bins=10, range=None, normed=None, weights=None, density=None):  # noqa: A002
    """Histogram of the data; returns ``(hist, bin_edges)``."""
    b = bins.asnumpy() if isinstance(bins, NDArray) else bins
    w = weights.asnumpy() if weights is not None else None
    h, edges = onp.histogram(a.asnumpy(), b, range, weights=w, density=density)
    dev = a._t.device
    return (wrap(torch.from_numpy(h).to(dev), a._ctx),
            wrap(torch.from_numpy(edges.astype(a.dtype)).to(dev), a._ctx))

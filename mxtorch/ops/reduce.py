"""Reduction and sorting operators: sum, mean, max, argmax, topk, sort, pick, norm, ...

Reductions are a table of rows ``(name, reduce_fn, aliases)`` expanded by one loop; they
share MXNet's ``axis``/``keepdims``/``exclude`` handling and the legacy rule that a
reduction over every axis returns shape ``(1,)``, never a 0-d array.
"""
from __future__ import annotations

from typing import Any, Callable

import torch

from ..base import MXNetError
from .params import (Bool, Dtype, Enum, Int, IntOrShape, OptDtype, OptFloatTuple, OptInt,
                     OptShape)
from .registry import OpDef, register
from .tensor_util import torch_dtype

__all__ = ["reduce_axes"]

_INDEX_DTYPES = ("float16", "float32", "float64", "int32", "int64", "uint8")


# ---------------------------------------------------------------------- axis handling
def reduce_axes(op: str, shape: tuple, axis, exclude: bool = False) -> tuple[int, ...]:
    """The sorted, non-negative axes MXNet reduces for ``axis``/``exclude``.

    ``axis`` None or ``()`` means every axis. Out-of-range or duplicated axes raise
    :class:`MXNetError` naming the operator.
    """
    ndim = len(shape)
    if axis is None or axis == ():
        return tuple(range(ndim))
    given = (axis,) if isinstance(axis, int) else tuple(axis)
    norm = []
    for a in given:
        b = a + ndim if a < 0 else a
        if not 0 <= b < ndim:
            raise MXNetError(f"Operator {op}: reduction axis {a} exceeds input dimensions "
                             f"{tuple(shape)}")
        norm.append(b)
    if len(set(norm)) != len(norm):
        raise MXNetError(f"Operator {op}: reduction axes have duplicates {given}")
    if exclude:
        return tuple(i for i in range(ndim) if i not in norm)
    return tuple(sorted(norm))


def _legacy_shape(out: torch.Tensor) -> torch.Tensor:
    # MXNet: legacy arrays are never 0-d; a full reduction gives shape (1,).
    return out.reshape(1) if out.dim() == 0 else out


class _TieMaskGrad(torch.autograd.Function):
    """Pass ``ref`` forward; send the gradient to EVERY element equal to it (max/min)."""

    @staticmethod
    def forward(ctx, x, ref):  # type: ignore[override]
        ctx.save_for_backward(x, ref)
        return ref.clone()

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        x, ref = ctx.saved_tensors
        return grad * (x == ref).to(grad.dtype), None


def _extreme(fn: Callable) -> Callable:
    """max/min whose gradient goes in full to each tied extreme element, as in MXNet."""
    def run(x: torch.Tensor, dims: tuple, keepdim: bool) -> torch.Tensor:
        if not (x.requires_grad and torch.is_grad_enabled()):
            return fn(x, dim=dims, keepdim=keepdim)
        # MXNet: backward is head * (x == out) broadcast; ties each get the full gradient.
        with torch.no_grad():
            ref = fn(x, dim=dims, keepdim=True)
        out = _TieMaskGrad.apply(x, ref)
        if not keepdim:
            out = out.squeeze(dims) if dims else out
        return out
    return run


def _sum(x: torch.Tensor, dims: tuple, keepdim: bool) -> torch.Tensor:
    return torch.sum(x, dim=dims, keepdim=keepdim, dtype=x.dtype)


def _mean(x: torch.Tensor, dims: tuple, keepdim: bool) -> torch.Tensor:
    if x.is_floating_point():
        return torch.mean(x, dim=dims, keepdim=keepdim)
    # MXNet: integer mean truncates (sum then integer division in the input dtype).
    count = 1
    for d in dims:
        count *= x.shape[d]
    total = torch.sum(x, dim=dims, keepdim=keepdim, dtype=torch.int64)
    return torch.div(total, max(count, 1), rounding_mode="trunc").to(x.dtype)


def _prod(x: torch.Tensor, dims: tuple, keepdim: bool) -> torch.Tensor:
    out = x
    for d in sorted(dims, reverse=True):
        out = torch.prod(out, dim=d, keepdim=keepdim, dtype=x.dtype)
    return out


def _nansum(x: torch.Tensor, dims: tuple, keepdim: bool) -> torch.Tensor:
    if not x.is_floating_point():
        return _sum(x, dims, keepdim)
    return torch.sum(torch.where(torch.isnan(x), torch.zeros_like(x), x), dim=dims,
                     keepdim=keepdim)


def _nanprod(x: torch.Tensor, dims: tuple, keepdim: bool) -> torch.Tensor:
    if not x.is_floating_point():
        return _prod(x, dims, keepdim)
    return _prod(torch.where(torch.isnan(x), torch.ones_like(x), x), dims, keepdim)


def _reduce_compute(name: str, fn: Callable) -> Callable:
    def compute(attrs, x):
        dims = reduce_axes(name, tuple(x.shape), attrs.axis, attrs.exclude)
        if not dims:
            return x.clone()
        return _legacy_shape(fn(x, dims, attrs.keepdims))
    return compute


# (name, reduce function(x, dims, keepdim), aliases)
_REDUCE = [
    ("sum", _sum, ("sum_axis",)),
    ("mean", _mean, ()),
    ("prod", _prod, ()),
    ("max", _extreme(torch.amax), ("max_axis",)),
    ("min", _extreme(torch.amin), ("min_axis",)),
    ("nansum", _nansum, ()),
    ("nanprod", _nanprod, ()),
]

for _name, _fn, _aliases in _REDUCE:
    register(OpDef(
        _name, _reduce_compute(_name, _fn), aliases=_aliases, fluent=True,
        params=[IntOrShape("axis", None), Bool("keepdims", False), Bool("exclude", False)],
        doc=f"Compute the {_name} of array elements over the given axes.\n\n"
            "Parameters\n----------\ndata : NDArray\n    The input.\n"
            "axis : int or tuple of int, optional\n    Axes to reduce (default: all; the "
            "result then has shape (1,)).\nkeepdims : bool, optional\n    Keep reduced "
            "axes as size-one dimensions.\nexclude : bool, optional\n    Reduce over the "
            "axes NOT in ``axis``."))


def _square_sum(attrs, x):
    dims = reduce_axes("_square_sum", tuple(x.shape), attrs.axis, attrs.exclude)
    return _legacy_shape(torch.sum(x * x, dim=dims, keepdim=attrs.keepdims))


register(OpDef(
    "_square_sum", _square_sum,
    params=[IntOrShape("axis", None), Bool("keepdims", False), Bool("exclude", False)],
    # MXNet implements it for row_sparse input only; mxtorch stores row_sparse arrays
    # densely, so it reduces the dense array
    doc="Sum of squares of the elements over the given axes (the factorization machine's\n"
        "``sum(v * v, axis)``)."))


# ---------------------------------------------------------------------- norm
def _norm_compute(attrs, x):
    if attrs.ord not in (1, 2):
        raise MXNetError(f"Operator norm: only ord=1 and ord=2 are supported, got "
                         f"ord={attrs.ord}")
    dims = reduce_axes("norm", tuple(x.shape), attrs.axis)
    src = x if x.is_floating_point() else x.to(torch.float64)
    out = torch.linalg.vector_norm(src, ord=attrs.ord, dim=dims, keepdim=attrs.keepdims)
    target = torch_dtype(attrs.out_dtype) if attrs.out_dtype else x.dtype
    return _legacy_shape(out.to(target))


def _norm_infer_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    """The reduced shape ((1,) for a full reduction). Declared, not run on meta tensors:
    torch's meta ``vector_norm`` imports torch._dynamo on its first call (about 1 s)."""
    data = shapes[0]
    if data is None:
        return shapes, None
    if attrs.ord not in (1, 2):
        raise MXNetError(f"Operator norm: only ord=1 and ord=2 are supported, got "
                         f"ord={attrs.ord}")
    dims = reduce_axes("norm", tuple(data), attrs.axis)
    if attrs.keepdims:
        out = tuple(1 if i in dims else d for i, d in enumerate(data))
    else:
        out = tuple(d for i, d in enumerate(data) if i not in dims)
    return [data], [out or (1,)]


def _norm_infer_type(attrs: Any, types: list) -> tuple[list, list]:
    """``out_dtype``, else the input's dtype."""
    return types, [attrs.out_dtype or types[0]]


register(OpDef(
    "norm", _norm_compute, fluent=True,
    infer_shape=_norm_infer_shape, infer_type=_norm_infer_type,
    params=[Int("ord", 2), IntOrShape("axis", None),
            OptDtype("out_dtype", None,
                     choices=("float16", "float32", "float64", "int32", "int64", "int8")),
            Bool("keepdims", False)],
    doc="Compute the L1 or L2 norm of the input over the given axes (all by default).\n\n"
        "Parameters\n----------\ndata : NDArray\n    The input.\nord : int, optional\n"
        "    1 or 2.\naxis : int or tuple of int, optional\n    Axes to reduce.\n"
        "out_dtype : str, optional\n    Output dtype.\nkeepdims : bool, optional\n"
        "    Keep reduced axes."))


# ---------------------------------------------------------------------- argmax / argmin
def _arg_compute(name: str, fn: Callable) -> Callable:
    def compute(attrs, x):
        if attrs.axis is None:
            out = fn(x.reshape(-1), dim=0)
            out = out.reshape((1,) * x.dim()) if attrs.keepdims else out.reshape(1)
        else:
            reduce_axes(name, tuple(x.shape), attrs.axis)
            out = _legacy_shape(fn(x, dim=attrs.axis, keepdim=attrs.keepdims))
        # MXNet: indices come back in the input's dtype (float32 for float32 data).
        return out.to(x.dtype)
    return compute


for _name, _fn in (("argmax", torch.argmax), ("argmin", torch.argmin)):
    register(OpDef(
        _name, _arg_compute(_name, _fn), fluent=True,
        params=[OptInt("axis", None), Bool("keepdims", False)],
        doc=f"Indices of the {_name[3:]}imum values along an axis (flattened when axis is "
            "None), in the input's dtype.\n\nParameters\n----------\ndata : NDArray\n"
            "axis : int or None\nkeepdims : bool"))


def _argmax_channel(attrs, x):
    # MXNet: reduces axis 1 (the channel axis), result in the input's dtype.
    return _legacy_shape(torch.argmax(x, dim=1 if x.dim() > 1 else 0)).to(x.dtype)


register(OpDef("argmax_channel", _argmax_channel, fluent=True,
               doc="Indices of the maximum values along axis 1 (the channel axis)."))


# ---------------------------------------------------------------------- sort / topk
def _sort_axis(op: str, x: torch.Tensor, axis) -> tuple[torch.Tensor, int]:
    """Flatten for axis None; check and normalize an int axis."""
    if axis is None:
        return x.reshape(-1), 0
    ndim = x.dim()
    if not -ndim <= axis < ndim:
        raise MXNetError(f"Operator {op}: axis {axis} is out of range for input shape "
                         f"{tuple(x.shape)}")
    return x, axis % ndim


def _stable_sort(x: torch.Tensor, dim: int, ascend: bool):
    # MXNet: ties keep their original order in both directions.
    return torch.sort(x, dim=dim, descending=not ascend, stable=True)


def _sort_compute(attrs, x):
    src, dim = _sort_axis("sort", x, attrs.axis)
    return _stable_sort(src, dim, attrs.is_ascend)[0]


def _argsort_compute(attrs, x):
    src, dim = _sort_axis("argsort", x, attrs.axis)
    return _stable_sort(src, dim, attrs.is_ascend)[1].to(torch_dtype(attrs.dtype))


# MXNet: sort (and topk 'value') keep a hidden indices output, hence "output0" names.
register(OpDef("sort", _sort_compute, fluent=True,
               params=[OptInt("axis", -1), Bool("is_ascend", True)],
               output_names=["output0", "output1"], total_outputs=2,
               doc="Sort along an axis (the flattened array when axis is None)."))
register(OpDef("argsort", _argsort_compute, fluent=True,
               params=[OptInt("axis", -1), Bool("is_ascend", True),
                       Dtype("dtype", "float32", choices=_INDEX_DTYPES)],
               doc="Indices that would sort the input along an axis, as ``dtype``."))


def _topk_compute(attrs, x):
    src, dim = _sort_axis("topk", x, attrs.axis)
    n = src.shape[dim]
    k = attrs.k if attrs.k >= 1 else n  # MXNet: k < 1 means a full sort
    if k > n:
        raise MXNetError(f"Operator topk: k must be smaller than or equal to {n} (the size "
                         f"of axis {attrs.axis} of {tuple(x.shape)}), got k = {attrs.k}")
    if k * 8 <= n:
        # MXNet: a partial sort when k is small (the order of ties is unspecified there too)
        values, indices = torch.topk(src, k, dim, largest=not attrs.is_ascend)
    else:
        values, indices = _stable_sort(src, dim, attrs.is_ascend)
        values, indices = values.narrow(dim, 0, k), indices.narrow(dim, 0, k)
    if attrs.ret_typ == "value":
        return values
    if attrs.ret_typ == "mask":
        mask = torch.zeros_like(src).scatter(dim, indices, 1)
        return mask.reshape(x.shape)
    idx = indices.to(torch_dtype(attrs.dtype))
    if attrs.ret_typ == "both":
        return values, idx
    return idx


register(OpDef(
    "topk", _topk_compute, fluent=True,
    params=[OptInt("axis", -1), Int("k", 1),
            Enum("ret_typ", ("both", "indices", "mask", "value"), "indices"),
            Bool("is_ascend", False), Dtype("dtype", "float32", choices=_INDEX_DTYPES)],
    num_outputs=lambda a: 2 if a.ret_typ == "both" else 1,
    total_outputs=lambda a: 2 if a.ret_typ in ("both", "value") else 1,
    output_names=lambda a: (["output0", "output1"] if a.ret_typ in ("both", "value")
                            else ["output"]),
    doc="The top k elements along an axis: values, indices, a 0/1 mask, or both "
        "([values, indices]).\n\nParameters\n----------\ndata : NDArray\naxis : int or None"
        "\nk : int\nret_typ : {'both', 'indices', 'mask', 'value'}\nis_ascend : bool\n"
        "dtype : str"))


# ---------------------------------------------------------------------- pick
def _pick_compute(attrs, x, index):
    if attrs.axis is None:
        raise MXNetError("Operator pick: axis=None is not supported by pick yet. "
                         "Must specify an axis.")
    _, dim = _sort_axis("pick", x, attrs.axis)
    n = x.shape[dim]
    idx = index.to(torch.int64)
    # MXNet: 'clip' clamps into range, 'wrap' wraps around (so -1 is the last element).
    idx = idx.clamp(0, n - 1) if attrs.mode == "clip" else torch.remainder(idx, n)
    keep_shape = list(x.shape)
    keep_shape[dim] = 1
    out = torch.gather(x, dim, idx.reshape(keep_shape))
    return out if attrs.keepdims else _legacy_shape(out.squeeze(dim))


register(OpDef(
    "pick", _pick_compute, inputs=("data", "index"), fluent=True,
    aliases=("choose_element_0index",),
    params=[OptInt("axis", -1), Bool("keepdims", False), Enum("mode", ("clip", "wrap"), "clip")],
    doc="Pick one element per position along ``axis`` using ``index``.\n\nParameters\n"
        "----------\ndata : NDArray\nindex : NDArray\naxis : int\nkeepdims : bool\n"
        "mode : {'clip', 'wrap'}"))


# ---------------------------------------------------------------------- moments
def _moments_compute(attrs, x):
    """Mean and (population) variance over ``axes``."""
    if not attrs.axes:
        raise MXNetError("Operator moments: Empty axes is not supported, if you would like "
                         "to do global moments, please pass all axes to axes argument")
    dims = reduce_axes("moments", tuple(x.shape), attrs.axes)
    if x.is_floating_point():
        var, mean = torch.var_mean(x, dim=dims, correction=0, keepdim=True)
    else:
        # MXNet: integer moments truncate, the variance around the truncated mean
        mean = _mean(x, dims, True)
        var = _mean((x - mean) * (x - mean), dims, True)
    if not attrs.keepdims:
        mean, var = _legacy_shape(mean.squeeze(dims)), _legacy_shape(var.squeeze(dims))
    return mean, var


register(OpDef(
    "moments", _moments_compute, params=[OptShape("axes", None), Bool("keepdims", False)],
    num_outputs=2,
    doc="Mean and variance of ``data`` over ``axes``.\n\nParameters\n----------\n"
        "data : NDArray\naxes : tuple of int\n    Axes to aggregate over (required, "
        "non-empty).\nkeepdims : bool, optional\n    Keep the reduced axes as size-one "
        "dimensions.\n\nReturns\n-------\n(mean, var) : NDArray"))


# ---------------------------------------------------------------------- histogram
def _histogram_inputs(attrs) -> list[str]:
    return ["data"] if attrs.bin_cnt is not None else ["data", "bins"]


def _uniform_bins(attrs, data: torch.Tensor) -> tuple[torch.Tensor, float, float]:
    """The bin edges of ``bin_cnt`` equal bins over ``range`` (MXNet's formula)."""
    if attrs.range is None or len(attrs.range) != 2:
        raise MXNetError("Operator _histogram: bin_cnt and range should both or neither be "
                         f"specified, and range must have 2 elements (got {attrs.range})")
    lo, hi = attrs.range
    if lo > hi:
        raise MXNetError(f"Operator _histogram: left hand side of range({lo}) should be less "
                         f"than or equal to right hand side({hi})")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    cnt = attrs.bin_cnt
    steps = torch.arange(cnt + 1, dtype=torch.float64, device=data.device)
    edges = ((hi * steps + (cnt - steps) * lo) / cnt).to(data.dtype)
    return edges, lo, hi


def _histogram_compute(attrs, data, bins=None):
    """Counts (int64) of the flattened data per bin, and the bin edges."""
    flat = data.detach().reshape(-1)
    if attrs.bin_cnt is not None:
        edges, lo, hi = _uniform_bins(attrs, data)
        cnt = attrs.bin_cnt
        inside = (flat >= lo) & (flat <= hi)
        # MXNet: the bin from the bin width, corrected by one against the stored edges
        target = ((flat.double() - lo) * cnt / (hi - lo)).floor().clamp(0, cnt - 1).long()
        target = target - (flat < edges[target]).long()
        target = target + ((flat >= edges[(target + 1).clamp(max=cnt)]) &
                           (target != cnt - 1)).long()
    else:
        if bins.dim() != 1 or bins.shape[0] < 2:
            raise MXNetError("Operator _histogram: bins argument should be a 1-D vector of "
                             f"at least 2 bounds, got shape {tuple(bins.shape)}")
        edges = bins.detach().to(data.dtype)
        cnt = edges.shape[0] - 1
        inside = (flat >= edges[0]) & (flat <= edges[-1])
        target = (torch.searchsorted(edges, flat, right=True) - 1).clamp(max=cnt - 1)
    counts = torch.bincount(target[inside], minlength=cnt) if flat.numel() else \
        torch.zeros(cnt, dtype=torch.int64, device=data.device)
    return counts.to(torch.int64), edges.clone()


def _histogram_infer_shape(attrs, shapes):
    if attrs.bin_cnt is not None:
        return shapes, [(attrs.bin_cnt,), (attrs.bin_cnt + 1,)]
    bins = shapes[1] if len(shapes) > 1 else None
    if bins is None or len(bins) != 1 or not bins[0]:
        return shapes, None
    return shapes, [(bins[0] - 1,), tuple(bins)]


register(OpDef(
    "_histogram", _histogram_compute, aliases=("_npi_histogram",), inputs=_histogram_inputs,
    params=[OptInt("bin_cnt", None), OptFloatTuple("range", None)], num_outputs=2,
    infer_shape=_histogram_infer_shape,
    infer_type=lambda attrs, types: (types, ["int64", types[0]]),
    doc="Histogram of the flattened ``data``: ``bin_cnt`` equal bins over ``range``, or "
        "the edges in ``bins``.\n\nParameters\n----------\ndata : NDArray\nbins : NDArray, "
        "optional\n    Bin edges (when bin_cnt is not given).\nbin_cnt : int, optional\n"
        "range : (float, float), optional\n\nReturns\n-------\n(counts, bin_edges) : "
        "NDArray (int64 counts)"))

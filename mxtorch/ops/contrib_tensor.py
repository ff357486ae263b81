"""Contrib tensor operators: index_array, index_copy, boolean_mask, allclose, quadratic,
div_sqrt_dim (``mx.nd.contrib.*`` / ``mx.sym.contrib.*``)."""
from __future__ import annotations

import math
from typing import Any

import torch

from ..base import MXNetError
from .params import Bool, Float, Int, OptShape
from .registry import OpDef, ShapeInfer, Shapes, register

__all__: list[str] = []


# ---------------------------------------------------------------------- index_array
def _index_axes(attrs: Any, ndim: int) -> list[int]:
    if attrs.axes is None:
        return list(range(ndim))
    axes = []
    for a in attrs.axes:
        if not -ndim <= a < ndim:
            raise MXNetError(f"Operator _contrib_index_array: axis {a} is out of range for "
                             f"an input with {ndim} dimensions")
        axes.append(a % ndim)
    return axes


def _index_array(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """out[i0, ..., in-1, j] = i_axes[j]: every element's index along the chosen axes."""
    axes = _index_axes(attrs, data.dim())
    shape = tuple(data.shape)
    cols = []
    for a in axes:
        view = [1] * len(shape)
        view[a] = shape[a]
        idx = torch.arange(shape[a], dtype=torch.int64, device=data.device).reshape(view)
        cols.append(idx.expand(shape))
    if not cols:
        return torch.zeros(shape + (0,), dtype=torch.int64, device=data.device)
    return torch.stack(cols, dim=-1)


def _index_array_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    data = shapes[0]
    if data is None:
        return shapes, None
    n = len(attrs.axes) if attrs.axes is not None else len(data)
    return shapes, [tuple(data) + (n,)]


register(OpDef(
    "_contrib_index_array", _index_array, params=[OptShape("axes", None)],
    infer_shape=_index_array_shape, infer_type=lambda attrs, t: (t, ["int64"]),
    zero_grad=True,
    doc="""Each element's index (int64): the output has the input's shape plus a last axis
holding the element's position along ``axes`` (all axes by default).

Parameters
----------
data : NDArray
axes : tuple of int, optional
    The axes whose indices are returned, in that order.
"""))


# ---------------------------------------------------------------------- index_copy
def _index_copy(attrs: Any, old: torch.Tensor, index: torch.Tensor,
                new: torch.Tensor) -> torch.Tensor:
    """A copy of ``old`` whose rows ``index[i]`` are ``new[i]``."""
    ok = (index.dim() == 1 and old.dim() == new.dim() and new.dim() >= 1
          and index.shape[0] == new.shape[0] and old.shape[0] >= new.shape[0]
          and old.shape[1:] == new.shape[1:])
    if not ok:
        raise MXNetError(f"Operator _contrib_index_copy: index_vector {tuple(index.shape)} "
                         f"must be 1-D with one entry per row of new_tensor "
                         f"{tuple(new.shape)}, whose rows must match old_tensor "
                         f"{tuple(old.shape)} (and be no more than its)")
    return old.index_copy(0, index.detach().to(torch.int64), new)


register(OpDef(
    "_contrib_index_copy", _index_copy, inputs=("old_tensor", "index_vector", "new_tensor"),
    infer_shape=lambda attrs, shapes: (shapes, [shapes[0]] if shapes[0] else None),
    infer_type=lambda attrs, t: (t, [t[0]]),
    doc="""Copy the rows of ``new_tensor`` into a copy of ``old_tensor`` at the rows
``index_vector`` gives (row i of new_tensor goes to row index_vector[i]).

Parameters
----------
old_tensor : NDArray
index_vector : NDArray
    1-D, one row index per row of new_tensor.
new_tensor : NDArray
"""))


# ---------------------------------------------------------------------- boolean_mask
def _boolean_mask(attrs: Any, data: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """The rows of ``data`` where ``index`` is non-zero (gradient 0 for the others)."""
    if attrs.axis != 0:
        raise MXNetError(f"Operator _contrib_boolean_mask: axis={attrs.axis} is not "
                         "supported (only 0)")
    if index.dim() != 1 or index.shape[0] != data.shape[0]:
        raise MXNetError(f"Operator _contrib_boolean_mask: index of shape "
                         f"{tuple(index.shape)} must be 1-D with data's first dimension "
                         f"{data.shape[0]}")
    if data.device.type == "meta":
        raise MXNetError("Operator _contrib_boolean_mask: the output shape depends on the "
                         "values of index")
    return data[index.detach() != 0]


register(OpDef(
    "_contrib_boolean_mask", _boolean_mask, inputs=("data", "index"),
    aliases=("_npi_boolean_mask",), params=[Int("axis", 0)],
    # MXNet: the output shape is only known when the operator runs (dynamic shape)
    infer_shape=lambda attrs, shapes: (shapes, [None]),
    infer_type=lambda attrs, t: (t, [t[0]]),
    doc="""Select the rows (axis 0) of ``data`` where ``index`` is non-zero.

Parameters
----------
data : NDArray
index : NDArray
    1-D mask with one entry per row of data.
axis : int, default 0
    Only 0 is supported.
"""))


# ---------------------------------------------------------------------- allclose
def _allclose(attrs: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """1 (uint8, 0-d) when every |a - b| <= atol + rtol * |b|, else 0."""
    if a.shape != b.shape:
        raise MXNetError(f"Operator _contrib_allclose: the inputs must have the same shape, "
                         f"got {tuple(a.shape)} and {tuple(b.shape)}")
    a, b = a.detach(), b.detach()
    if a.dtype == torch.float16 or not a.is_floating_point():
        a, b = a.to(torch.float32), b.to(torch.float32)   # MXNet: float tolerances
    close = (a == b) | ((a - b).abs() <= attrs.atol + attrs.rtol * b.abs())
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    either = nan_a | nan_b
    close = torch.where(either, (nan_a == nan_b) & attrs.equal_nan, close)
    return close.all().to(torch.uint8)


register(OpDef(
    "_contrib_allclose", _allclose, inputs=("a", "b"),
    params=[Float("rtol", 1e-05), Float("atol", 1e-08), Bool("equal_nan", True)],
    infer_shape=lambda attrs, shapes: (shapes, [()]),
    infer_type=lambda attrs, t: (t, ["uint8"]), zero_grad=True,
    doc="""Whether all elements of ``a`` and ``b`` are close: |a - b| <= atol + rtol * |b|
(a 0-d uint8 array, 1 or 0).

Parameters
----------
a, b : NDArray
    Arrays of the same shape and dtype.
rtol : float, default 1e-5
atol : float, default 1e-8
equal_nan : bool, default True
    NaNs at the same position compare equal.
"""))


# ---------------------------------------------------------------------- quadratic, div_sqrt_dim
def _quadratic(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    out: torch.Tensor = data * (attrs.a * data + attrs.b) + attrs.c
    return out


register(OpDef(
    "_contrib_quadratic", _quadratic,
    params=[Float("a", 0.0), Float("b", 0.0), Float("c", 0.0)],
    doc="""``a * x^2 + b * x + c``, elementwise.

Parameters
----------
data : NDArray
a, b, c : float, default 0
"""))


def _div_sqrt_dim(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    return data / math.sqrt(data.shape[-1])


register(OpDef(
    "_contrib_div_sqrt_dim", _div_sqrt_dim,
    doc="Rescale the input by the square root of its last dimension: "
        "``data / sqrt(data.shape[-1])``."))

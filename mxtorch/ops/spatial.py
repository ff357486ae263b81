"""Legacy spatial operators: Correlation (FlowNet), SpatialTransformer and Crop.

Each is written with torch tensor operations so that autograd gives the gradient; where
MXNet's backward is not the mathematical one (Correlation's ``|a - b|`` at ``a == b``) the
compute is arranged so that autograd reproduces it.
"""
from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from ..base import MXNetError
from .params import Bool, Enum, Int, OptBool, Shape
from .registry import OpDef, ShapeInfer, Shapes, TShape, register

__all__: list[str] = []


# ---------------------------------------------------------------------------- Correlation
def _corr_geometry(attrs: Any, shape: TShape) -> tuple[int, int, int]:
    """(top_height, top_width, neighbourhood radius) of a Correlation, checked as MXNet."""
    if len(shape) != 4:
        raise MXNetError(f"Operator Correlation: data should be a 4D tensor, got shape "
                         f"{tuple(shape)}")
    if attrs.kernel_size % 2 == 0:
        raise MXNetError(f"Operator Correlation: kernel size should be odd number, got "
                         f"kernel_size={attrs.kernel_size}")
    if attrs.stride1 < 1 or attrs.stride2 < 1:
        raise MXNetError(f"Operator Correlation: stride1 {attrs.stride1} and stride2 "
                         f"{attrs.stride2} must be positive")
    border = attrs.max_displacement + (attrs.kernel_size - 1) // 2
    tops = [math.ceil((size + 2 * attrs.pad_size - 2 * border) / attrs.stride1)
            for size in shape[2:]]
    if min(tops) < 1:
        raise MXNetError("Operator Correlation: correlation cannot be done with current "
                         "settings. Neighborhood and kernel don't fit in blob: data "
                         f"{tuple(shape)}, kernel_size={attrs.kernel_size}, max_displacement="
                         f"{attrs.max_displacement}, pad_size={attrs.pad_size}")
    return tops[0], tops[1], attrs.max_displacement // attrs.stride2


def _abs_diff(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a - b| whose gradient takes sign +1 at a == b for ``a`` (MXNet's backward)."""
    diff = a - b
    sign = torch.where(diff >= 0, 1.0, -1.0).to(diff.dtype).detach()
    return diff * sign


def _correlation(attrs: Any, data1: torch.Tensor, data2: torch.Tensor) -> torch.Tensor:
    """Mean over channels and a kernel window of data1 * data2 (or |data1 - data2|) for each
    displacement of data2 in the neighbourhood; displacements are output channels."""
    if data1.shape != data2.shape:
        raise MXNetError(f"Operator Correlation: data1 {tuple(data1.shape)} and data2 "
                         f"{tuple(data2.shape)} must have the same shape")
    top_h, top_w, radius = _corr_geometry(attrs, tuple(data1.shape))
    k, md, s1, s2 = attrs.kernel_size, attrs.max_displacement, attrs.stride1, attrs.stride2
    pad = (attrs.pad_size,) * 4
    p1, p2 = F.pad(data1, pad), F.pad(data2, pad)
    # MXNet: the window of output (i, j) starts at (i * stride1 + max_displacement, ...)
    span_h, span_w = (top_h - 1) * s1 + k, (top_w - 1) * s1 + k
    a = p1[:, :, md:md + span_h, md:md + span_w]
    planes = []
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            y0, x0 = md + dy * s2, md + dx * s2
            b = p2[:, :, y0:y0 + span_h, x0:x0 + span_w]
            prod = a * b if attrs.is_multiply else _abs_diff(a, b)
            planes.append(prod.mean(1, keepdim=True))
    out = torch.cat(planes, 1)
    if k > 1 or s1 > 1:
        out = F.avg_pool2d(out, k, s1)
    return out


def _correlation_infer_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    """(N, neighbourhood, top_h, top_w) from data1's shape; data2 takes data1's."""
    data = shapes[0] if shapes[0] is not None else shapes[1]
    if data is None or 0 in data:
        return shapes, None
    top_h, top_w, radius = _corr_geometry(attrs, tuple(data))
    return [tuple(data), tuple(data)], [(data[0], (2 * radius + 1) ** 2, top_h, top_w)]


register(OpDef(
    "Correlation", _correlation, infer_shape=_correlation_infer_shape,
    params=[Int("kernel_size", 1, "kernel size for Correlation must be an odd number"),
            Int("max_displacement", 1, "Max displacement of Correlation"),
            Int("stride1", 1, "stride1 quantize data1 globally"),
            Int("stride2", 1, "stride2 quantize data2 within the neighborhood centered "
                "around data1"),
            Int("pad_size", 0, "pad for Correlation"),
            Bool("is_multiply", True, "operation type is either multiplication or "
                 "subduction")],
    inputs=("data1", "data2"), output_names=["output", "tmp1", "tmp2"], total_outputs=3,
    doc="""Correlation of two feature maps (FlowNet).

For each output position and each displacement ``(dy, dx)`` of the
``(2 * (max_displacement // stride2) + 1) ** 2`` neighbourhood, the mean over channels and
a ``kernel_size`` window of ``data1 * shifted(data2)`` (``is_multiply=True``) or of
``|data1 - shifted(data2)|``. Output: ``(N, neighbourhood size, top_h, top_w)`` with
``top = ceil((size + 2 * pad_size - 2 * (max_displacement + kernel_size // 2)) / stride1)``.

Parameters
----------
data1 : NDArray
    ``(N, C, H, W)``.
data2 : NDArray
    Same shape as ``data1``.
kernel_size : int, default 1
    Odd.
max_displacement : int, default 1
stride1 : int, default 1
stride2 : int, default 1
pad_size : int, default 0
is_multiply : bool, default True
"""))


# ---------------------------------------------------------------------------- SpatialTransformer
def _spatial_transformer(attrs: Any, data: torch.Tensor, loc: torch.Tensor) -> torch.Tensor:
    """Affine grid from ``loc`` (N, 6), bilinear sampling of ``data`` with zeros outside."""
    h, w = (tuple(attrs.target_shape) + (0, 0))[:2]
    if data.dim() != 4:
        raise MXNetError(f"Operator SpatialTransformer: input data should be 4D in "
                         f"batch-num_filter-y-x, got {tuple(data.shape)}")
    if loc.dim() != 2 or loc.shape[1] != 6 or loc.shape[0] != data.shape[0]:
        raise MXNetError(f"Operator SpatialTransformer: loc should be (batch, 6) for data "
                         f"{tuple(data.shape)}, got {tuple(loc.shape)}")
    if h <= 0 or w <= 0:
        raise MXNetError(f"Operator SpatialTransformer: incorrect target_shape "
                         f"{attrs.target_shape}")
    theta = loc.reshape(-1, 2, 3)
    # MXNet: target and source coordinates run from -1 to 1 between the corner pixel
    # centres (align_corners=True); samples outside the input read zeros.
    grid = F.affine_grid(theta, [data.shape[0], 1, h, w], align_corners=True)
    return F.grid_sample(data, grid, mode="bilinear", padding_mode="zeros",
                         align_corners=True)


def _stn_infer_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    """(N, C, *target_shape) from data; loc is (N, 6)."""
    data, loc = shapes
    if data is None or 0 in data:
        return shapes, None
    if len(data) != 4:
        raise MXNetError(f"Operator SpatialTransformer: input data should be 4D in "
                         f"batch-num_filter-y-x, got {tuple(data)}")
    if loc is not None and (len(loc) != 2 or loc[1] not in (0, 6)):
        raise MXNetError(f"Operator SpatialTransformer: incorrect localisation network "
                         f"shape {tuple(loc)}, should be (batch, 6)")
    h, w = (tuple(attrs.target_shape) + (0, 0))[:2]
    if h <= 0 or w <= 0:
        raise MXNetError(f"Operator SpatialTransformer: incorrect target_shape "
                         f"{attrs.target_shape}")
    return [tuple(data), (data[0], 6)], [(data[0], data[1], h, w)]


register(OpDef(
    "SpatialTransformer", _spatial_transformer, infer_shape=_stn_infer_shape,
    params=[Shape("target_shape", (0, 0), "output shape(h, w) of spatial transformer: (y, x)"),
            Enum("transform_type", ("affine",), doc="transformation type"),
            Enum("sampler_type", ("bilinear",), doc="sampling type"),
            OptBool("cudnn_off", None, "whether to turn cudnn off")],
    inputs=("data", "loc"), output_names=["output", "grid_dst", "grid_src"], total_outputs=3,
    doc="""Applies a spatial transformer: an affine sampling grid from ``loc`` and bilinear
sampling of ``data`` on it.

Parameters
----------
data : NDArray
    ``(N, C, H, W)``.
loc : NDArray
    ``(N, 6)``: the 2x3 affine matrix mapping target (x, y, 1) to source (x, y), both
    normalized to [-1, 1].
target_shape : tuple of int
    Output ``(h, w)``.
transform_type : {'affine'}
sampler_type : {'bilinear'}
cudnn_off : bool or None
"""))


# ---------------------------------------------------------------------------- Crop
def _crop_inputs(attrs: Any) -> list[str]:
    return [f"arg{i}" for i in range(attrs.num_args)]


def _crop_size(attrs: Any, data: TShape, like: TShape | None) -> tuple[int, int]:
    """The (h, w) of the crop: ``h_w`` with one input, crop_like's last two axes with two."""
    if len(data) != 4:
        raise MXNetError(f"Operator Crop: input data should be 4D in batch-num_filter-y-x, "
                         f"got {tuple(data)}")
    if like is None:
        h, w = (tuple(attrs.h_w) + (0, 0))[:2]
        if not (1 <= h <= data[2] and 1 <= w <= data[3]):
            raise MXNetError(f"Operator Crop: h_w {tuple(attrs.h_w)} must be at least 1 and "
                             f"at most the input's height and width {tuple(data[2:])}")
        return h, w
    if len(like) != 4:
        raise MXNetError(f"Operator Crop: crop_like should be 4D, got {tuple(like)}")
    return like[2], like[3]


def _crop_offset(attrs: Any, data: TShape, size: tuple[int, int]) -> tuple[int, int]:
    room = (data[2] - size[0], data[3] - size[1])
    if min(room) < 0:
        raise MXNetError(f"Operator Crop: the crop {size} is larger than the input "
                         f"{tuple(data[2:])}")
    if attrs.center_crop:
        return room[0] // 2, room[1] // 2
    oy, ox = (tuple(attrs.offset) + (0, 0))[:2]
    if not (0 <= oy <= room[0] and 0 <= ox <= room[1]):
        raise MXNetError(f"Operator Crop: offset {tuple(attrs.offset)} must lie in [0, "
                         f"{room[0]}] x [0, {room[1]}] for a crop {size} of {tuple(data[2:])}")
    return oy, ox


def _crop(attrs: Any, data: torch.Tensor, like: torch.Tensor | None = None) -> torch.Tensor:
    """Crop the last two axes of NCHW ``data`` to ``h_w`` (or crop_like's size)."""
    if attrs.num_args > 2:
        raise MXNetError(f"Operator Crop: num_args must be 1 or 2, got {attrs.num_args}")
    shape = tuple(data.shape)
    size = _crop_size(attrs, shape, None if like is None else tuple(like.shape))
    oy, ox = _crop_offset(attrs, shape, size)
    # MXNet: a new array; crop_like is read for its shape only (its gradient is zero).
    return data[:, :, oy:oy + size[0], ox:ox + size[1]].clone()


def _crop_infer_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    data = shapes[0]
    like = shapes[1] if attrs.num_args > 1 else None
    if data is None or (attrs.num_args > 1 and like is None):
        return shapes, None
    h, w = _crop_size(attrs, tuple(data), None if like is None else tuple(like))
    return shapes, [(data[0], data[1], h, w)]


register(OpDef(
    "Crop", _crop, infer_shape=_crop_infer_shape,
    params=[Int("num_args", doc="Number of inputs for crop: 1 uses h_w, 2 the second "
                "input's height and width", lower=1, upper=3),
            Shape("offset", (0, 0), "crop offset coordinate: (y, x)"),
            Shape("h_w", (0, 0), "crop height and width: (h, w)"),
            Bool("center_crop", False, "crop at the centre instead of at offset")],
    inputs=_crop_inputs, key_var_num_args="num_args",
    doc="""Crop the 2nd and 3rd axes (height, width) of NCHW data (deprecated; use slice).

Parameters
----------
data : NDArray
    ``(N, C, H, W)``.
crop_like : NDArray, optional
    Its height and width give the crop size (``num_args=2``).
num_args : int
offset : tuple of int, default (0, 0)
h_w : tuple of int, default (0, 0)
center_crop : bool, default False
"""))

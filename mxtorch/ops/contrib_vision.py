"""Contrib vision operators: ``_contrib_BilinearResize2D`` and ``_contrib_PSROIPooling``.

BilinearResize2D is torch's bilinear upsampling (MXNet's kernel computes the same source
positions); its output size comes from one of MXNet's seven ``mode`` rules.
PSROIPooling (R-FCN) averages each bin of a region from its own group of channels; the
bin sums are read from an integral image, so memory stays that of the input.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..base import MXNetError
from .params import Bool, Enum, Float, Int, OptFloat
from .registry import OpDef, register

__all__: list[str] = []

_RESIZE_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
                 "to_odd_up")


# ---------------------------------------------------------------------------- BilinearResize2D
def _int16(x: float) -> int:
    """C's (int16_t) conversion of a float (truncation, then wrap to 16 bits)."""
    v = int(x) & 0xFFFF
    return v - 0x10000 if v >= 0x8000 else v


def _resize_hw(attrs: Any, shape: tuple, like: tuple | None) -> tuple[int, int]:
    """The output (height, width) of BilinearResize2D, MXNet's shape rules."""
    h, w = shape[2], shape[3]
    mode = attrs.mode
    if mode == "size":
        # MXNet 1.9.1: both scales are used when scale_height is given
        if attrs.scale_height is not None:
            if attrs.scale_width is None:
                raise MXNetError("Operator _contrib_BilinearResize2D: scale_width is required "
                                 "with scale_height")
            return (int(_f32(attrs.scale_height) * np.float32(h)),
                    int(_f32(attrs.scale_width) * np.float32(w)))
        return attrs.height, attrs.width
    if mode == "odd_scale":
        if attrs.scale_height is None or attrs.scale_width is None:
            raise MXNetError("Operator _contrib_BilinearResize2D: mode 'odd_scale' needs "
                             "scale_height and scale_width")
        sh, sw = _f32(attrs.scale_height), _f32(attrs.scale_width)
        return (_int16(np.float32(h) * sh) if h % 2 == 0 else _int16(np.float32(h - 1) * sh) + 1,
                _int16(np.float32(w) * sw) if w % 2 == 0 else _int16(np.float32(w - 1) * sw) + 1)
    if mode == "like":
        return like[2], like[3]
    even = mode.startswith("to_even")
    step = -1 if mode.endswith("down") else 1
    return tuple(d if (d % 2 == 0) == even else d + step for d in (h, w))


def _f32(x: float) -> np.float32:
    """A float parameter as MXNet holds it: float32 (so products round to float32)."""
    return np.float32(x)


def _bilinear_resize(attrs: Any, data: torch.Tensor, like: torch.Tensor | None = None):
    if data.dim() != 4:
        raise MXNetError(f"Operator _contrib_BilinearResize2D: data must be 4D (N, C, H, W), "
                         f"got shape {tuple(data.shape)}")
    if attrs.mode == "like" and (like is None or like.dim() != 4):
        raise MXNetError("Operator _contrib_BilinearResize2D: mode 'like' needs a 4D 'like' "
                         "input")
    out_h, out_w = _resize_hw(attrs, tuple(data.shape), None if like is None else
                              tuple(like.shape))
    if out_h <= 0 or out_w <= 0:
        raise MXNetError(f"Operator _contrib_BilinearResize2D: output size ({out_h}, {out_w}) "
                         f"must be positive")
    if (out_h, out_w) == tuple(data.shape[2:]):
        return data.clone()
    return F.interpolate(data, size=(out_h, out_w), mode="bilinear",
                         align_corners=attrs.align_corners)


def _resize_infer_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    data = shapes[0]
    like = shapes[1] if attrs.mode == "like" else None
    if data is None or (attrs.mode == "like" and like is None):
        return shapes, None
    out_h, out_w = _resize_hw(attrs, tuple(data), like)
    return shapes, [(data[0], data[1], out_h, out_w)]


register(OpDef(
    "_contrib_BilinearResize2D", _bilinear_resize, infer_shape=_resize_infer_shape,
    inputs=lambda attrs: ["data", "like"] if attrs.mode == "like" else ["data"],
    params=[Int("height", 1, "output height (mode 'size', without scales)"),
            Int("width", 1, "output width (mode 'size', without scales)"),
            OptFloat("scale_height", None, "sampling scale of the height"),
            OptFloat("scale_width", None, "sampling scale of the width"),
            Enum("mode", _RESIZE_MODES, "size", "how the output size is chosen"),
            Bool("align_corners", True, "corner pixels of input and output coincide")],
    doc="""Bilinear resize of NCHW data.

``mode``: 'size' (``height``/``width``, or the input size times ``scale_height``/
``scale_width``), 'odd_scale' (odd sizes scaled as ``(size - 1) * scale + 1``), 'like'
(the size of the second input), 'to_even_down', 'to_even_up', 'to_odd_down', 'to_odd_up'
(the nearest even or odd size).

Parameters
----------
data : NDArray
like : NDArray, optional
height, width : int, default 1
scale_height, scale_width : float, optional
mode : str, default 'size'
align_corners : bool, default True
"""))


# ---------------------------------------------------------------------------- PSROIPooling
@lru_cache(maxsize=64)
def _psroi_channels(out_dim: int, pooled: int, group: int) -> torch.Tensor:
    """Channel read by bin (ph, pw) of output map o: (O, P, P).

    # MXNet: bin (ph, pw) takes channel group (gh, gw) = floor((ph, pw) * group / pooled)
    """
    g = np.clip(np.floor(np.arange(pooled) * group / pooled), 0, group - 1).astype(np.int64)
    chan = (np.arange(out_dim)[:, None, None] * group + g[None, :, None]) * group \
        + g[None, None, :]
    return torch.from_numpy(chan)


def _psroi_bounds(box: np.ndarray, scale: float, pooled: int, size_hw: tuple):
    """[lo, hi) of every ROI's bins, rows then columns: two (R, 2, P) index arrays.

    Computed with NumPy: the ROIs are few and carry no gradient.
    """
    corners = np.sign(box[:, 1:]) * np.floor(np.abs(box[:, 1:]) + 0.5) * scale  # C round
    start = corners[:, [1, 0]]                                  # (R, 2): y, x
    end = corners[:, [3, 2]] + scale                            # MXNet: (round(x2) + 1) * s
    bin_size = np.maximum(end - start, 0.1) / pooled            # too small ROIs are 0.1 wide
    edges = np.arange(pooled + 1) * bin_size[..., None] + start[..., None]   # (R, 2, P + 1)
    limit = np.array(size_hw)[None, :, None]
    lo = np.minimum(np.maximum(np.floor(edges[..., :-1]), 0), limit).astype(np.int64)
    hi = np.minimum(np.maximum(np.ceil(edges[..., 1:]), 0), limit).astype(np.int64)
    return lo, hi


def _psroi_pooling(attrs: Any, data: torch.Tensor, rois: torch.Tensor) -> torch.Tensor:
    """Average of each ROI bin over its position-sensitive channel group."""
    group = attrs.group_size or attrs.pooled_size
    pooled, out_dim = attrs.pooled_size, attrs.output_dim
    if data.dim() != 4 or rois.dim() != 2 or rois.shape[1] != 5:
        raise MXNetError(f"Operator _contrib_PSROIPooling: expected data (N, C, H, W) and rois "
                         f"(R, 5), got {tuple(data.shape)} and {tuple(rois.shape)}")
    n, c, height, width = data.shape
    if c != out_dim * group * group:
        raise MXNetError(f"Operator _contrib_PSROIPooling: data has {c} channels, "
                         f"output_dim * group_size^2 = {out_dim * group * group} expected")
    box = rois.detach().to(torch.float64).cpu().numpy()
    batch_np = box[:, 0].astype(np.int64)
    if len(batch_np) and (batch_np.min() < 0 or batch_np.max() >= n):
        raise MXNetError(f"Operator _contrib_PSROIPooling: ROI batch indices must lie in "
                         f"[0, {n}), got {batch_np.tolist()}")
    lo_np, hi_np = _psroi_bounds(box, attrs.spatial_scale, pooled, (height, width))
    batch = torch.from_numpy(batch_np).to(data.device)
    lo, hi = torch.from_numpy(lo_np).to(data.device), torch.from_numpy(hi_np).to(data.device)
    # bin sums come from an integral image, exact enough only in float64
    integral = F.pad(data.to(torch.float64).cumsum(2).cumsum(3), (1, 0, 1, 0))
    flat = integral.reshape(n * c, (height + 1) * (width + 1))
    chan = _psroi_channels(out_dim, pooled, group).to(data.device)
    row = (batch[:, None, None, None] * c + chan[None]).unsqueeze(0)        # (1, R, O, P, P)
    # the four corners (hi, hi), (lo, hi), (hi, lo), (lo, lo) of every bin at once
    ys = torch.stack([hi[:, 0], lo[:, 0], hi[:, 0], lo[:, 0]])              # (4, R, P)
    xs = torch.stack([hi[:, 1], hi[:, 1], lo[:, 1], lo[:, 1]])
    pos = (ys[:, :, None, :, None] * (width + 1) + xs[:, :, None, None, :])  # (4, R, 1, P, P)
    vals = flat[row, pos]                                                   # (4, R, O, P, P)
    total = vals[0] - vals[1] - vals[2] + vals[3]
    area = ((hi[:, 0] - lo[:, 0])[:, :, None] * (hi[:, 1] - lo[:, 1])[:, None, :])[:, None]
    out = torch.where(area > 0, total / area.clamp(min=1), torch.zeros((), dtype=total.dtype,
                                                                      device=total.device))
    return out.to(data.dtype)


def _psroi_infer_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    data, rois = shapes
    if data is not None and len(data) != 4:
        raise MXNetError(f"Operator _contrib_PSROIPooling: data should be a 4D tensor, got "
                         f"{tuple(data)}")
    if rois is None:
        return shapes, None
    if len(rois) != 2 or rois[1] != 5:
        raise MXNetError(f"Operator _contrib_PSROIPooling: bbox should be a 2D tensor of shape "
                         f"[batch, 5], got {tuple(rois)}")
    return shapes, [(rois[0], attrs.output_dim, attrs.pooled_size, attrs.pooled_size)]


register(OpDef(
    "_contrib_PSROIPooling", _psroi_pooling, infer_shape=_psroi_infer_shape,
    inputs=("data", "rois"),
    params=[Float("spatial_scale", doc="Ratio of input feature map height (or w) to raw "
                  "image height (or w)"),
            Int("output_dim", doc="fix output dim"),
            Int("pooled_size", doc="fix pooled size"),
            Int("group_size", 0, "fix group size (0: pooled_size)")],
    doc="""Position-sensitive ROI average pooling (R-FCN).

Output ``(R, output_dim, pooled_size, pooled_size)``: bin ``(ph, pw)`` of ROI ``r`` is the
mean of its area in channel ``(o * group + gh) * group + gw`` of ``data``, with
``(gh, gw) = (ph, pw) * group_size // pooled_size``; empty bins are 0.

Parameters
----------
data : NDArray
    ``(N, output_dim * group_size**2, H, W)``.
rois : NDArray
    ``(R, 5)`` rows ``[batch_index, x1, y1, x2, y2]`` in image coordinates.
spatial_scale : float
output_dim : int
pooled_size : int
group_size : int, default 0
"""))

"""Contrib vision operators: ``_contrib_BilinearResize2D``, ``_contrib_AdaptiveAvgPooling2D``,
``_contrib_PSROIPooling``, ``_contrib_ROIAlign``, ``_contrib_RROIAlign`` and
``_contrib_DeformableConvolution``.

BilinearResize2D is torch's bilinear upsampling (MXNet's kernel computes the same source
positions); its output size comes from one of MXNet's seven ``mode`` rules.
PSROIPooling (R-FCN) averages each bin of a region from its own group of channels; the
bin sums are read from an integral image, so memory stays that of the input.
ROIAlign and RROIAlign average bilinear samples of a grid in each bin (Detectron's rules
for samples near the border); the samples of every ROI are gathered at once.
DeformableConvolution samples the input bilinearly at offset kernel positions (MXNet's
``deformable_im2col``) and multiplies the columns with the weights per group.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..base import MXNetError
from .params import Bool, Enum, Float, Int, OptFloat, Shape
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
    params=[Int("height", 1, "output height (mode 'size', without scales)", lower=1),
            Int("width", 1, "output width (mode 'size', without scales)", lower=1),
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


# ---------------------------------------------------------------------------- AdaptiveAvgPooling2D
def _adaptive_size(attrs: Any) -> tuple[int, int]:
    size = tuple(attrs.output_size)
    if len(size) == 1:
        return size[0], size[0]
    if len(size) == 2:
        return size
    return 1, 1  # MXNet: no (or any other) size pools to 1 x 1


def _adaptive_avg_pool(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """Average over bins [floor(i * in / out), ceil((i + 1) * in / out)) of each axis."""
    if data.dim() != 4:
        raise MXNetError(f"Operator _contrib_AdaptiveAvgPooling2D: data must be 4D (N, C, H, "
                         f"W), got shape {tuple(data.shape)}")
    return F.adaptive_avg_pool2d(data, _adaptive_size(attrs))


def _adaptive_infer_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    data = shapes[0]
    if data is None or len(data) != 4:
        return shapes, None
    return shapes, [(data[0], data[1], *_adaptive_size(attrs))]


register(OpDef(
    "_contrib_AdaptiveAvgPooling2D", _adaptive_avg_pool, infer_shape=_adaptive_infer_shape,
    params=[Shape("output_size", (), "int (output size) or a tuple of int for output "
                  "(height, width)")],
    doc="""Adaptive average pooling of NCHW data to ``output_size`` (default 1 x 1).

Parameters
----------
data : NDArray
output_size : int or tuple of int
"""))


# ---------------------------------------------------------------------------- ROIAlign
def _bilinear_corners(ys: torch.Tensor, xs: torch.Tensor, valid: torch.Tensor,
                      height: int, width: int):
    """(flat positions, weights) of the four neighbours of each sample, Detectron's rules.

    # MXNet: a sample beyond one pixel outside the map weighs 0; one just outside reads
    # the border; at the last row or column the lower neighbour alone is read.
    """
    valid = valid & (ys >= -1) & (ys <= height) & (xs >= -1) & (xs <= width)
    ys, xs = ys.clamp(min=0), xs.clamp(min=0)
    y0, x0 = torch.floor(ys), torch.floor(xs)
    ys = torch.where(y0 >= height - 1, torch.full_like(ys, height - 1), ys)
    xs = torch.where(x0 >= width - 1, torch.full_like(xs, width - 1), xs)
    y0, x0 = y0.clamp(max=height - 1), x0.clamp(max=width - 1)
    y1, x1 = (y0 + 1).clamp(max=height - 1), (x0 + 1).clamp(max=width - 1)
    ly, lx = ys - y0, xs - x0
    keep = valid.to(ys.dtype)
    weights = [(1 - ly) * (1 - lx) * keep, (1 - ly) * lx * keep, ly * (1 - lx) * keep,
               ly * lx * keep]
    pos = [(y0 * width + x0).long(), (y0 * width + x1).long(), (y1 * width + x0).long(),
           (y1 * width + x1).long()]
    return pos, weights


def _grid_sizes(sample_ratio: int, roi_h: np.ndarray, roi_w: np.ndarray, pooled: tuple):
    """Samples per bin along each axis, per ROI: sample_ratio, or ceil(size / pooled)."""
    if sample_ratio > 0:
        n = np.full(len(roi_h), sample_ratio)
        return n, n
    return (np.ceil(roi_h / pooled[0]).astype(np.int64),
            np.ceil(roi_w / pooled[1]).astype(np.int64))


def _bin_offsets(grid: np.ndarray, bins: int, bin_size: np.ndarray, dtype) -> tuple:
    """Sample offsets from the ROI start, (R, bins, G), and which of the G samples exist."""
    g = max(int(grid.max()) if len(grid) else 1, 1)
    i = np.arange(g)
    off = (np.arange(bins)[None, :, None] * bin_size[:, None, None]
           + (i[None, None, :] + 0.5) * (bin_size / np.maximum(grid, 1))[:, None, None])
    return torch.from_numpy(off.astype(dtype)), torch.from_numpy(i[None, :] < grid[:, None])


def _pool_samples(data: torch.Tensor, rows_chan: torch.Tensor,
                  ys: torch.Tensor, xs: torch.Tensor, valid: torch.Tensor,
                  count: torch.Tensor) -> torch.Tensor:
    """Mean over each bin's samples: ys/xs/valid (R, Ph, Pw, S); rows_chan (R, C, Ph, Pw)."""
    n, c, height, width = data.shape
    flat = data.reshape(n * c, height * width)
    pos, weights = _bilinear_corners(ys, xs, valid, height, width)
    rows = rows_chan.unsqueeze(-1)                                   # (R, C, Ph, Pw, 1)
    total = None
    for p, w in zip(pos, weights):
        term = flat[rows, p.unsqueeze(1)] * w.unsqueeze(1).to(data.dtype)
        total = term if total is None else total + term
    return total.sum(-1) / count.to(data.dtype).reshape(-1, 1, 1, 1)


def _roi_align(attrs: Any, data: torch.Tensor, rois: torch.Tensor) -> torch.Tensor:
    """Average of bilinear samples on a grid in each ROI bin (Mask R-CNN's RoIAlign)."""
    ph, pw = tuple(attrs.pooled_size)
    if data.dim() != 4 or rois.dim() != 2 or rois.shape[1] not in (4, 5):
        raise MXNetError(f"Operator _contrib_ROIAlign: expected data (N, C, H, W) and rois "
                         f"(R, 5), got {tuple(data.shape)} and {tuple(rois.shape)}")
    n, c, height, width = data.shape
    box = rois.detach().to(torch.float64).cpu().numpy()
    if box.shape[1] == 4:
        box = np.concatenate([np.zeros((len(box), 1)), box], 1)
    batch = box[:, 0].astype(np.int64)
    shift = 0.5 if attrs.aligned else 0.0  # MXNet: 'aligned' is Detectron2's half pixel
    start = box[:, 1:3] * attrs.spatial_scale - shift
    size = box[:, 3:5] * attrs.spatial_scale - shift - start
    if attrs.aligned and (size <= 0).any():
        raise MXNetError("Operator _contrib_ROIAlign: with aligned=True every ROI must have a "
                         "positive width and height")
    size = size if attrs.aligned else np.maximum(size, 1.0)
    gh, gw = _grid_sizes(attrs.sample_ratio, size[:, 1], size[:, 0], (ph, pw))
    dtype = np.float64 if data.dtype == torch.float64 else np.float32
    oy, my = _bin_offsets(gh, ph, size[:, 1] / ph, dtype)            # (R, Ph, Gh)
    ox, mx_ = _bin_offsets(gw, pw, size[:, 0] / pw, dtype)
    r = len(box)
    ys = torch.from_numpy(start[:, 1].astype(dtype))[:, None, None, None, None] \
        + oy[:, :, None, :, None]                                     # (R, Ph, 1, Gh, 1)
    xs = torch.from_numpy(start[:, 0].astype(dtype))[:, None, None, None, None] \
        + ox[:, None, :, None, :]                                     # (R, 1, Pw, 1, Gw)
    shape = (r, ph, pw, ys.shape[3], xs.shape[4])
    valid = (my[:, None, None, :, None] & mx_[:, None, None, None, :]
             & torch.from_numpy(batch >= 0)[:, None, None, None, None]).expand(shape)
    ys, xs = ys.expand(shape).reshape(r, ph, pw, -1), xs.expand(shape).reshape(r, ph, pw, -1)
    if attrs.position_sensitive:
        if c % (ph * pw):
            raise MXNetError("Operator _contrib_ROIAlign: input channels should be divided "
                             "by pooled_size[0]*pooled_size[1] when position_sensitive is "
                             "true")
        cout = c // (ph * pw)
        chan = (torch.arange(cout)[:, None, None] * ph * pw + torch.arange(ph)[:, None] * pw
                + torch.arange(pw))
    else:
        cout = c
        chan = torch.arange(c)[:, None, None].expand(c, ph, pw)
    rows = torch.from_numpy(np.maximum(batch, 0))[:, None, None, None] * c + chan[None]
    count = torch.from_numpy((gh * gw).astype(dtype))
    dev = data.device
    return _pool_samples(data, rows.to(dev), ys.to(dev), xs.to(dev),
                         valid.reshape(r, ph, pw, -1).to(dev), count.to(dev))


def _roi_align_infer_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    data, rois = shapes
    if data is None or rois is None:
        return shapes, None
    if len(data) != 4 or len(rois) != 2 or rois[1] != 5:
        raise MXNetError(f"Operator _contrib_ROIAlign: data should be a 4D tensor and bbox a "
                         f"2D tensor of shape [batch, 5], got {tuple(data)} and {tuple(rois)}")
    ph, pw = tuple(attrs.pooled_size)
    c = data[1] // (ph * pw) if attrs.position_sensitive else data[1]
    return shapes, [(rois[0], c, ph, pw)]


register(OpDef(
    "_contrib_ROIAlign", _roi_align, infer_shape=_roi_align_infer_shape,
    inputs=("data", "rois"),
    params=[Shape("pooled_size", doc="ROI Align output roi feature map height and width: "
                  "(h, w)"),
            Float("spatial_scale", doc="Ratio of input feature map height (or w) to raw image "
                  "height (or w)"),
            Int("sample_ratio", -1, "Optional sampling ratio of ROI align, using adaptive size "
                "by default"),
            Bool("position_sensitive", False, "Position-sensitive RoI pooling (R-FCN)"),
            Bool("aligned", False, "Center-aligned ROIAlign introduced in Detectron2")],
    doc="""Region-of-interest align (Mask R-CNN).

Each of the ``pooled_size`` bins of an ROI averages bilinear samples on a grid of
``sample_ratio`` (default: ceil(bin size)) points per axis. The gradient flows to ``data``
only.

Parameters
----------
data : NDArray
    ``(N, C, H, W)``.
rois : NDArray
    ``(R, 5)`` rows ``[batch_index, x1, y1, x2, y2]``.
pooled_size : tuple of int
spatial_scale : float
sample_ratio : int, default -1
position_sensitive : bool, default False
aligned : bool, default False
"""))


def _rroi_align(attrs: Any, data: torch.Tensor, rois: torch.Tensor) -> torch.Tensor:
    """ROIAlign over rotated boxes [batch, cx, cy, w, h, theta (degrees)]."""
    ph, pw = tuple(attrs.pooled_size)
    if data.dim() != 4 or rois.dim() != 2 or rois.shape[1] != 6:
        raise MXNetError(f"Operator _contrib_RROIAlign: expected data (N, C, H, W) and rois "
                         f"(R, 6), got {tuple(data.shape)} and {tuple(rois.shape)}")
    n, c, height, width = data.shape
    box = rois.detach().to(torch.float64).cpu().numpy()
    batch = box[:, 0].astype(np.int64)
    centre = box[:, 1:3] * attrs.spatial_scale
    size = np.maximum(box[:, 3:5] * attrs.spatial_scale, 1.0)  # MXNet: at least 1 x 1
    theta = box[:, 5] * np.pi / 180.0
    gh, gw = _grid_sizes(attrs.sampling_ratio, size[:, 1], size[:, 0], (ph, pw))
    dtype = np.float64 if data.dtype == torch.float64 else np.float32
    oy, my = _bin_offsets(gh, ph, size[:, 1] / ph, dtype)
    ox, mx_ = _bin_offsets(gw, pw, size[:, 0] / pw, dtype)
    r = len(box)
    yy = (torch.from_numpy((-size[:, 1] / 2).astype(dtype))[:, None, None, None, None]
          + oy[:, :, None, :, None])
    xx = (torch.from_numpy((-size[:, 0] / 2).astype(dtype))[:, None, None, None, None]
          + ox[:, None, :, None, :])
    cos = torch.from_numpy(np.cos(theta).astype(dtype))[:, None, None, None, None]
    sin = torch.from_numpy(np.sin(theta).astype(dtype))[:, None, None, None, None]
    cy = torch.from_numpy(centre[:, 1].astype(dtype))[:, None, None, None, None]
    cx = torch.from_numpy(centre[:, 0].astype(dtype))[:, None, None, None, None]
    xs = (xx * cos + yy * sin + cx).reshape(r, ph, pw, -1)
    ys = (yy * cos - xx * sin + cy).reshape(r, ph, pw, -1)
    valid = (my[:, None, None, :, None] & mx_[:, None, None, None, :]).expand(
        r, ph, pw, my.shape[1], mx_.shape[1]).reshape(r, ph, pw, -1)
    rows = torch.from_numpy(batch)[:, None, None, None] * c \
        + torch.arange(c)[None, :, None, None].expand(r, c, ph, pw)
    count = torch.from_numpy((gh * gw).astype(dtype))
    dev = data.device
    return _pool_samples(data, rows.to(dev), ys.to(dev), xs.to(dev), valid.to(dev),
                         count.to(dev))


def _rroi_infer_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    data, rois = shapes
    if data is None or rois is None:
        return shapes, None
    if len(data) != 4 or len(rois) != 2 or rois[1] != 6:
        raise MXNetError(f"Operator _contrib_RROIAlign: data should be a 4D tensor and bbox a "
                         f"2D tensor of shape [batch, 6], got {tuple(data)} and {tuple(rois)}")
    return shapes, [(rois[0], data[1], *tuple(attrs.pooled_size))]


register(OpDef(
    "_contrib_RROIAlign", _rroi_align, infer_shape=_rroi_infer_shape,
    inputs=("data", "rois"), differentiable=False,
    params=[Shape("pooled_size", doc="RROI align output shape (h, w)"),
            Float("spatial_scale", doc="Ratio of input feature map height (or width) to raw "
                  "image height (or width)"),
            Int("sampling_ratio", -1, "Optional sampling ratio of RROI align, using adaptive "
                "size by default")],
    doc="""Rotated region-of-interest align.

``rois`` rows are ``[batch_index, center_x, center_y, width, height, theta]`` with theta in
degrees; each bin averages bilinear samples on a grid rotated with the box. MXNet defines
no gradient for this operator.

Parameters
----------
data : NDArray
rois : NDArray
pooled_size : tuple of int
spatial_scale : float
sampling_ratio : int, default -1
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


# ---------------------------------------------------------------------------- DeformableConvolution
def _deform_geometry(attrs: Any, data: tuple) -> tuple:
    """(kernel, stride, dilate, pad, out_h, out_w) of a 2-D deformable convolution."""
    kernel = tuple(attrs.kernel)
    if len(kernel) != 2:
        raise MXNetError(f"Operator _contrib_DeformableConvolution: only 2D kernels are "
                         f"supported, got kernel {kernel}")
    stride = tuple(attrs.stride) or (1, 1)
    dilate = tuple(attrs.dilate) or (1, 1)
    pad = tuple(attrs.pad) or (0, 0)
    if len(data) != 4:
        raise MXNetError(f"Operator _contrib_DeformableConvolution: input data should be 4D "
                         f"in batch-num_filter-y-x, got {tuple(data)}")
    for what, n in (("num_group", attrs.num_group),
                    ("num_deformable_group", attrs.num_deformable_group)):
        if data[1] % n:
            raise MXNetError(f"Operator _contrib_DeformableConvolution: input channels "
                             f"{data[1]} must divide by {what} {n}")
    if attrs.num_filter % attrs.num_group:
        raise MXNetError("Operator _contrib_DeformableConvolution: output num_filter must "
                         "divide group size")
    out = [(size + 2 * p - (d * (k - 1) + 1)) // s + 1
           for size, k, s, d, p in zip(data[2:], kernel, stride, dilate, pad)]
    if min(out) <= 0:
        raise MXNetError(f"Operator _contrib_DeformableConvolution: kernel size {kernel} "
                         f"exceeds input {tuple(data[2:])} + 2 * pad {pad}")
    return kernel, stride, dilate, pad, out[0], out[1]


def _check_offset(attrs: Any, offset: tuple, kernel: tuple, out_hw: tuple) -> None:
    if len(offset) != 4:
        raise MXNetError(f"Operator _contrib_DeformableConvolution: input offset should be 4D "
                         f"in batch-num_filter-y-x, got {tuple(offset)}")
    if tuple(offset[2:]) != tuple(out_hw):
        raise MXNetError(f"Operator _contrib_DeformableConvolution: the offset map "
                         f"{tuple(offset[2:])} must have the output's height and width "
                         f"{tuple(out_hw)}")
    if offset[1] != 2 * kernel[0] * kernel[1] * attrs.num_deformable_group:
        raise MXNetError(f"Operator _contrib_DeformableConvolution: offset has {offset[1]} "
                         f"channels, 2 * kernel size * num_deformable_group = "
                         f"{2 * kernel[0] * kernel[1] * attrs.num_deformable_group} expected")


def _deform_sample(data: torch.Tensor, ys: torch.Tensor, xs: torch.Tensor) -> torch.Tensor:
    """Bilinear samples of (N, G, Cg, H, W) maps at (N, G, P) positions: (N, G, Cg, P).

    # MXNet: positions outside [0, H) x [0, W) read 0; at the last row or column the
    # lower neighbour alone is read.
    """
    height, width = data.shape[-2:]
    inside = (ys >= 0) & (xs >= 0) & (ys < height) & (xs < width)
    y0, x0 = torch.floor(ys).clamp(0, height - 1), torch.floor(xs).clamp(0, width - 1)
    ly = torch.where(y0 >= height - 1, torch.zeros_like(ys), ys - y0)
    lx = torch.where(x0 >= width - 1, torch.zeros_like(xs), xs - x0)
    y1, x1 = (y0 + 1).clamp(max=height - 1), (x0 + 1).clamp(max=width - 1)
    flat = data.flatten(-2)
    cg = data.shape[2]

    def at(yy: torch.Tensor, xx: torch.Tensor) -> torch.Tensor:
        idx = (yy * width + xx).long().unsqueeze(2).expand(-1, -1, cg, -1)
        return flat.gather(3, idx)

    val = ((1 - ly) * (1 - lx)).unsqueeze(2) * at(y0, x0) \
        + ((1 - ly) * lx).unsqueeze(2) * at(y0, x1) \
        + (ly * (1 - lx)).unsqueeze(2) * at(y1, x0) + (ly * lx).unsqueeze(2) * at(y1, x1)
    return torch.where(inside.unsqueeze(2), val, torch.zeros((), dtype=val.dtype,
                                                             device=val.device))


def _deformable_conv(attrs: Any, data: torch.Tensor, offset: torch.Tensor,
                     weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """Convolution over the input sampled at kernel positions moved by ``offset``."""
    kernel, stride, dilate, pad, out_h, out_w = _deform_geometry(attrs, tuple(data.shape))
    _check_offset(attrs, tuple(offset.shape), kernel, (out_h, out_w))
    n, c, _, _ = data.shape
    dg, k = attrs.num_deformable_group, kernel[0] * kernel[1]
    ky, kx = torch.meshgrid(torch.arange(kernel[0]), torch.arange(kernel[1]), indexing="ij")
    oy = torch.arange(out_h) * stride[0] - pad[0]
    ox = torch.arange(out_w) * stride[1] - pad[1]
    base_y = (ky.reshape(k, 1, 1) * dilate[0] + oy.reshape(1, -1, 1)).to(data)   # (K, Ho, 1)
    base_x = (kx.reshape(k, 1, 1) * dilate[1] + ox.reshape(1, 1, -1)).to(data)   # (K, 1, Wo)
    # offset channels: per deformable group, per kernel position, (dy, dx)
    off = offset.reshape(n, dg, k, 2, out_h, out_w)
    ys = (base_y + off[:, :, :, 0]).reshape(n, dg, -1)
    xs = (base_x + off[:, :, :, 1]).reshape(n, dg, -1)
    cols = _deform_sample(data.reshape(n, dg, c // dg, *data.shape[2:]), ys, xs)
    g = attrs.num_group
    cols = cols.reshape(n, g, (c // g) * k, out_h * out_w)          # (channel, kernel) rows
    w = weight.reshape(g, attrs.num_filter // g, (c // g) * k)
    out = torch.einsum("gfr,ngrl->ngfl", w, cols).reshape(n, attrs.num_filter, out_h, out_w)
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)


def _deformable_infer_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    """weight (F, C / num_group, kh, kw) and bias (F,) from data; the offset map checked."""
    data, offset = shapes[0], shapes[1]
    if data is None or 0 in data:
        return shapes, None
    kernel, _, _, _, out_h, out_w = _deform_geometry(attrs, tuple(data))
    if offset is not None:
        _check_offset(attrs, tuple(offset), kernel, (out_h, out_w))
    new = [tuple(data), offset, (attrs.num_filter, data[1] // attrs.num_group, *kernel)]
    if not attrs.no_bias:
        new.append((attrs.num_filter,))
    return new, [(data[0], attrs.num_filter, out_h, out_w)]


register(OpDef(
    "_contrib_DeformableConvolution", _deformable_conv, infer_shape=_deformable_infer_shape,
    inputs=lambda a: ["data", "offset", "weight"] + ([] if a.no_bias else ["bias"]),
    params=[Shape("kernel", doc="Convolution kernel size: (h, w)"),
            Shape("stride", (), "Convolution stride (default 1)"),
            Shape("dilate", (), "Convolution dilate (default 1)"),
            Shape("pad", (), "Zero pad (default 0)"),
            Int("num_filter", doc="Convolution filter (channel) number"),
            Int("num_group", 1, "Number of group partitions"),
            Int("num_deformable_group", 1, "Number of deformable group partitions"),
            Int("workspace", 1024, "Maximum temporary workspace (MB, ignored)"),
            Bool("no_bias", False, "Whether to disable the bias parameter"),
            Enum("layout", ("NCW", "NCHW", "NCDHW"), None, "Layout of data", optional=True)],
    doc="""Deformable convolution (Dai et al., 2017), 2-D.

The kernel position ``(i, j)`` of output ``(y, x)`` reads the input at
``(y * stride - pad + i * dilate + dy, x * stride - pad + j * dilate + dx)``, bilinearly,
with ``(dy, dx)`` from ``offset`` (channels ordered by deformable group, kernel position,
then dy, dx); positions outside the input read 0.

Parameters
----------
data : NDArray
    ``(N, C, H, W)``.
offset : NDArray
    ``(N, num_deformable_group * 2 * kh * kw, out_h, out_w)``.
weight : NDArray
    ``(num_filter, C / num_group, kh, kw)``.
bias : NDArray, optional
kernel, stride, dilate, pad : tuple of int
num_filter : int
num_group, num_deformable_group : int, default 1
no_bias : bool, default False
"""))

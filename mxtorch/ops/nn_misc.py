"""Dropout, softmax family, UpSampling, BilinearSampler, GridGenerator, ROIPooling."""
from __future__ import annotations

import math
from typing import Any, Callable

import torch
import torch.nn.functional as F

from ..base import MXNetError
from . import tuning
from .params import Enum, Float, Int, OptBool, OptDtype, OptFloat, Shape
from .elemwise import same_shape_infer
from .registry import (DTypes, OpDef, ShapeInfer, Shapes, TShape, TypeInfer, register,
                       same_type_infer)
from .tensor_util import torch_dtype

__all__: list[str] = []


def _norm_axis(op: str, axis: int, ndim: int) -> int:
    """Normalize a possibly negative axis, raising MXNetError when out of range."""
    if not -ndim <= axis < ndim:
        raise MXNetError(f"Operator {op}: axis {axis} is out of range for an input with "
                         f"{ndim} dimensions")
    return axis % ndim


# ---------------------------------------------------------------------------- Dropout
def _dropout(attrs: Any, data: torch.Tensor, *, is_train: bool) -> torch.Tensor:
    """Inverted dropout: keep with probability 1-p and scale by 1/(1-p)."""
    p = attrs.p
    if not 0.0 <= p <= 1.0:
        raise MXNetError(f"Operator Dropout: p must be in [0, 1], got {p}")
    if not (is_train or attrs.mode == "always") or p == 0.0:
        return data.clone()
    if p == 1.0:
        # MXNet: the all-zero mask times the scale 1/(1-p) = inf makes every output NaN
        return data * math.nan
    if not attrs.axes:
        return F.dropout(data, p, training=True)
    # MXNet: variational dropout shares one mask value along every axis in ``axes``.
    shape = list(data.shape)
    for ax in attrs.axes:
        shape[_norm_axis("Dropout", ax, data.dim())] = 1
    keep = 1.0 - p
    mask = torch.empty(shape, dtype=data.dtype, device=data.device).bernoulli_(keep)
    return data * (mask / keep) if keep > 0 else data * mask


register(OpDef(
    "Dropout", _dropout,
    params=[Float("p", 0.5, "Fraction of the input that gets dropped out", 0.0, 1.0),
            Enum("mode", ("always", "training"), "training",
                 "Drop only in training, or always"),
            Shape("axes", (), "Axes along which the mask is shared (variational dropout)"),
            OptBool("cudnn_off", False, "Ignored")],
    train_aware=True, output_names=["output", "mask"], total_outputs=2, deterministic=False,
    infer_shape=same_shape_infer,
    infer_shape_takes_outputs=True, infer_type=same_type_infer,
    doc="""Apply dropout to the input during training.

Kept elements are scaled by ``1/(1-p)``; outside training (unless ``mode='always'``)
the operator is the identity.

Parameters
----------
data : NDArray
p : float, default 0.5
mode : {'training', 'always'}, default 'training'
axes : tuple of int, default ()
    Axes along which one mask value is shared.
cudnn_off : bool, default False
"""))


# ---------------------------------------------------------------------------- softmax family
_SOFTMAX_PARAMS = [
    Int("axis", -1, "The axis along which to compute softmax"),
    OptFloat("temperature", None, "Temperature parameter in softmax"),
    OptDtype("dtype", None, "DType of the output (default: the input's)",
             choices=("float16", "float32", "float64")),
    OptBool("use_length", False, "Whether to use the length input as a mask"),
]


def _length_mask(data: torch.Tensor, length: torch.Tensor, axis: int) -> torch.Tensor:
    """Boolean mask, True where the position along ``axis`` is below ``length``."""
    if length.is_floating_point() or length.dtype == torch.bool:
        raise MXNetError(f"Operator softmax: length must be an integer array, got "
                         f"{length.dtype}")
    expected = tuple(d for i, d in enumerate(data.shape) if i != axis)
    if tuple(length.shape) != expected:
        raise MXNetError(f"Operator softmax: length has shape {tuple(length.shape)}, "
                         f"expected {expected} for data {tuple(data.shape)} and axis {axis}")
    pos = torch.arange(data.shape[axis], device=data.device)
    pos = pos.view([-1 if i == axis else 1 for i in range(data.dim())])
    return pos < length.unsqueeze(axis)


def _softmax_kind(name: str, log: bool, negate: bool) -> Callable[..., torch.Tensor]:
    """Build the compute of softmax / log_softmax / softmin."""
    def compute(attrs: Any, data: torch.Tensor,
                length: torch.Tensor | None = None) -> torch.Tensor:
        if attrs.use_length and length is None:
            raise MXNetError(f"Operator {name}: use_length=True needs a length input, "
                             "which only softmax takes")
        axis = _norm_axis(name, attrs.axis, data.dim())
        dtype = torch_dtype(attrs.dtype) if attrs.dtype is not None else None
        x = data if dtype is None else data.to(dtype)
        if attrs.temperature is not None and attrs.temperature != 1.0:
            x = x / attrs.temperature
        if negate:
            x = -x
        mask = None
        if length is not None:
            mask = _length_mask(data, length, axis)
            x = x.masked_fill(~mask, torch.finfo(x.dtype).min)
        out = torch.log_softmax(x, axis) if log else torch.softmax(x, axis)
        if mask is not None:
            # MXNet: positions at or beyond length are 0 in the output.
            out = out.masked_fill(~mask, 0.0)
        return out
    return compute


def _softmax_infer_shape(attrs: Any, in_shapes: Shapes) -> ShapeInfer:
    """Output shape is the data's; ``length`` is the data shape without ``axis``."""
    data = in_shapes[0]
    if data is None:
        return in_shapes, None
    shapes = list(in_shapes)
    if len(shapes) > 1:
        axis = _norm_axis("softmax", attrs.axis, len(data))
        shapes[1] = tuple(d for i, d in enumerate(data) if i != axis) or (1,)
    return shapes, [tuple(data)]


def _softmax_infer_type(attrs: Any, in_types: DTypes) -> TypeInfer:
    """Output dtype: ``dtype`` when given, else the data's."""
    return in_types, [attrs.dtype or in_types[0]]


register(OpDef(
    "softmax", _softmax_kind("softmax", False, False), params=_SOFTMAX_PARAMS, work=tuning.elements,
    inputs=lambda a: ["data", "length"] if a.use_length else ["data"], fluent=True,
    infer_shape=_softmax_infer_shape, infer_type=_softmax_infer_type,
    doc="""Softmax along ``axis``: ``exp(x/T) / sum(exp(x/T))``.

Parameters
----------
data : NDArray
length : NDArray, optional
    Integer lengths along ``axis`` (only with ``use_length=True``); later positions are 0.
axis : int, default -1
temperature : float or None
dtype : {None, 'float16', 'float32', 'float64'}
use_length : bool, default False
"""))

register(OpDef(
    "log_softmax", _softmax_kind("log_softmax", True, False), params=_SOFTMAX_PARAMS,
    work=tuning.elements, fluent=True,
    infer_shape=_softmax_infer_shape, infer_type=_softmax_infer_type,
    doc="""Log of the softmax along ``axis``.

Parameters
----------
data : NDArray
axis : int, default -1
temperature : float or None
dtype : {None, 'float16', 'float32', 'float64'}
"""))

register(OpDef(
    "softmin", _softmax_kind("softmin", False, True), params=_SOFTMAX_PARAMS, fluent=True,
    infer_shape=_softmax_infer_shape, infer_type=_softmax_infer_type,
    doc="""Softmin along ``axis``: the softmax of ``-x/T``.

Parameters
----------
data : NDArray
axis : int, default -1
temperature : float or None
dtype : {None, 'float16', 'float32', 'float64'}
"""))


def _softmax_activation(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis ('instance') or across channels (axis 1)."""
    if attrs.mode == "channel":
        if data.dim() < 2:
            raise MXNetError("Operator SoftmaxActivation: mode 'channel' needs at least 2-D "
                             "data")
        return torch.softmax(data, 1)
    # MXNet: 'instance' flattens to 2-D keeping the LAST axis, i.e. softmax over axis -1.
    return torch.softmax(data, -1)


register(OpDef(
    "SoftmaxActivation", _softmax_activation, work=tuning.elements,
    params=[Enum("mode", ("channel", "instance"), "instance",
                 "Softmax per instance or across channels")], listed_inputs=False,
    doc="""Softmax activation (deprecated in MXNet in favour of ``softmax``).

Parameters
----------
data : NDArray
mode : {'instance', 'channel'}, default 'instance'
"""))


# ---------------------------------------------------------------------------- UpSampling
def _bilinear_geometry(scale: int) -> tuple[int, int]:
    """Kernel size and padding of the deconvolution behind bilinear UpSampling."""
    return 2 * scale - scale % 2, int(math.ceil((scale - 1) / 2.0))


def _upsampling_inputs(attrs: Any) -> list[str]:
    """Bilinear takes data and weight; nearest takes ``num_args`` arrays."""
    if attrs.sample_type == "bilinear":
        return ["data", "weight"]
    return [f"arg{i}" for i in range(attrs.num_args)]


def _upsample_nearest(attrs: Any, arrays: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Nearest-neighbour upsampling of every input to ``scale`` times the first one."""
    for x in arrays:
        if x.dim() != 4:
            raise MXNetError(f"Operator UpSampling: inputs must be 4-D, got shape "
                             f"{tuple(x.shape)}")
    out_h, out_w = arrays[0].shape[2] * attrs.scale, arrays[0].shape[3] * attrs.scale
    ups = []
    for x in arrays:
        if out_h % x.shape[2] or out_w % x.shape[3] \
                or out_h // x.shape[2] != out_w // x.shape[3]:
            raise MXNetError(f"Operator UpSampling: input of shape {tuple(x.shape)} cannot "
                             f"be upsampled by an integer factor to {(out_h, out_w)}")
        s = out_h // x.shape[2]
        ups.append(x if s == 1 else F.interpolate(x, scale_factor=s, mode="nearest"))
    if len(ups) == 1:
        return ups[0]
    if attrs.multi_input_mode == "sum":
        out = ups[0]
        for u in ups[1:]:
            out = out + u
        return out
    return torch.cat(ups, dim=1)


def _upsampling(attrs: Any, *arrays: torch.Tensor) -> torch.Tensor:
    """UpSampling: nearest repeats pixels; bilinear is a grouped deconvolution."""
    if attrs.scale < 1:
        raise MXNetError(f"Operator UpSampling: scale must be >= 1, got {attrs.scale}")
    if attrs.sample_type == "nearest":
        return _upsample_nearest(attrs, arrays)
    data, weight = arrays
    kernel, pad = _bilinear_geometry(attrs.scale)
    chans = data.shape[1]
    if tuple(weight.shape) != (chans, 1, kernel, kernel):
        raise MXNetError(f"Operator UpSampling: bilinear weight must have shape "
                         f"{(chans, 1, kernel, kernel)}, got {tuple(weight.shape)}")
    # MXNet: bilinear UpSampling is Deconvolution(kernel=2s-s%2, stride=s,
    # pad=ceil((s-1)/2), num_group=channels, no_bias) with a learnable weight.
    return F.conv_transpose2d(data, weight, stride=attrs.scale, padding=pad, groups=chans)


def _upsampling_infer(attrs: Any, in_shapes: Shapes) -> ShapeInfer:
    """Infer the bilinear weight shape (C, 1, k, k) from the data."""
    if attrs.sample_type != "bilinear" or not in_shapes or in_shapes[0] is None:
        return in_shapes, None
    data = in_shapes[0]
    kernel, _ = _bilinear_geometry(attrs.scale)
    shapes = list(in_shapes)
    if len(shapes) > 1 and len(data) == 4 and data[1]:
        shapes[1] = (data[1], 1, kernel, kernel)
    return shapes, None


register(OpDef(
    "UpSampling", _upsampling,
    params=[Int("scale", doc="Up sampling scale", lower=1),
            Int("num_filter", 0, "Number of channels (bilinear only)"),
            Enum("sample_type", ("bilinear", "nearest"), doc="Upsampling method"),
            Enum("multi_input_mode", ("concat", "sum"), "concat",
                 "How to combine several inputs"),
            Int("num_args", 1, "Number of inputs", lower=1),
            Int("workspace", 512, "Ignored", lower=0, wide=True)],
    inputs=_upsampling_inputs, key_var_num_args="num_args", infer_shape=_upsampling_infer,
    input_inits={"weight": '["bilinear", {}]'},
    doc="""Upsample 4-D inputs by an integer ``scale``.

``nearest`` repeats pixels (several inputs are upsampled to the first's output size and
concatenated along channels or summed); ``bilinear`` is a grouped deconvolution with a
``weight`` input of shape ``(C, 1, 2*scale - scale%2, 2*scale - scale%2)``.

Parameters
----------
data : NDArray or list of NDArray
scale : int
num_filter : int, default 0
sample_type : {'nearest', 'bilinear'}
multi_input_mode : {'concat', 'sum'}, default 'concat'
num_args : int
workspace : int, default 512
"""))


# ---------------------------------------------------------------------------- spatial transformer
def _bilinear_sampler(attrs: Any, data: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
    """Sample ``data`` at normalized grid positions (x, y in [-1, 1]), zeros outside."""
    if data.dim() != 4 or grid.dim() != 4 or grid.shape[1] != 2 \
            or grid.shape[0] != data.shape[0]:
        raise MXNetError(f"Operator BilinearSampler: expected data (N, C, H, W) and grid "
                         f"(N, 2, h, w), got {tuple(data.shape)} and {tuple(grid.shape)}")
    # MXNet: -1 and 1 are the centres of the corner pixels (align_corners=True).
    return F.grid_sample(data, grid.permute(0, 2, 3, 1), mode="bilinear",
                         padding_mode="zeros", align_corners=True)


register(OpDef(
    "BilinearSampler", _bilinear_sampler,
    params=[OptBool("cudnn_off", None, "Ignored")], inputs=("data", "grid"),
    output_names=["output", "tmp"], total_outputs=2,
    doc="""Bilinear sampling of ``data`` at the positions in ``grid``.

Parameters
----------
data : NDArray
    ``(N, C, H, W)``.
grid : NDArray
    ``(N, 2, h, w)``: x then y source coordinates normalized to [-1, 1].
cudnn_off : bool or None
"""))


def _grid_generator(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """Sampling grid from affine matrices (N, 6) or from optical flow (N, 2, H, W)."""
    if attrs.transform_type == "affine":
        h, w = (tuple(attrs.target_shape) + (0, 0))[:2]
        if data.dim() != 2 or data.shape[1] != 6 or h <= 0 or w <= 0:
            raise MXNetError(f"Operator GridGenerator: affine needs data (N, 6) and a "
                             f"positive target_shape, got {tuple(data.shape)} and "
                             f"{attrs.target_shape}")
        theta = data.reshape(-1, 2, 3)
        grid = F.affine_grid(theta, [data.shape[0], 1, h, w], align_corners=True)
        return grid.permute(0, 3, 1, 2)
    if data.dim() != 4 or data.shape[1] != 2:
        raise MXNetError(f"Operator GridGenerator: warp needs data (N, 2, H, W), got "
                         f"{tuple(data.shape)}")
    h, w = data.shape[2], data.shape[3]
    xs = torch.arange(w, dtype=data.dtype, device=data.device).view(1, w)
    ys = torch.arange(h, dtype=data.dtype, device=data.device).view(h, 1)
    gx = (data[:, 0] + xs) * (2.0 / max(w - 1, 1)) - 1.0
    gy = (data[:, 1] + ys) * (2.0 / max(h - 1, 1)) - 1.0
    return torch.stack((gx, gy), dim=1)


register(OpDef(
    "GridGenerator", _grid_generator,
    params=[Enum("transform_type", ("affine", "warp"), doc="The type of transformation"),
            Shape("target_shape", (0, 0), "Output (H, W) for affine")],
    output_names=["output", "grid_dst"], total_outputs=2,
    doc="""Generate a sampling grid for :func:`BilinearSampler`.

Parameters
----------
data : NDArray
    ``(N, 6)`` affine matrices, or ``(N, 2, H, W)`` optical flow for ``warp``.
transform_type : {'affine', 'warp'}
target_shape : tuple of int, default (0, 0)
    Output ``(H, W)`` (affine only).
"""))


# ---------------------------------------------------------------------------- ROIPooling
def _c_round(x: torch.Tensor) -> torch.Tensor:
    """C ``round``: halves away from zero."""
    return torch.sign(x) * torch.floor(x.abs() + 0.5)


def _roi_bins(start: torch.Tensor, end: torch.Tensor, pooled: int,
              size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-ROI bin [start, end) along one axis, MXNet/Caffe ROIPooling rules."""
    length = torch.clamp(end - start + 1, min=1)
    bin_size = length / pooled
    p = torch.arange(pooled, device=start.device, dtype=start.dtype)
    lo = torch.floor(p * bin_size[:, None]) + start[:, None]
    hi = torch.ceil((p + 1) * bin_size[:, None]) + start[:, None]
    lo, hi = lo.clamp(0, size), hi.clamp(0, size)
    pos = torch.arange(size, device=start.device, dtype=start.dtype)
    mask = (lo[:, :, None] <= pos) & (pos < hi[:, :, None])
    return mask, hi <= lo


def _roi_pooling(attrs: Any, data: torch.Tensor, rois: torch.Tensor) -> torch.Tensor:
    """Max pooling of each ROI into a ``pooled_size`` grid of bins (empty bins are 0)."""
    if data.dim() != 4 or rois.dim() != 2 or rois.shape[1] != 5:
        raise MXNetError(f"Operator ROIPooling: expected data (N, C, H, W) and rois (R, 5), "
                         f"got {tuple(data.shape)} and {tuple(rois.shape)}")
    if len(attrs.pooled_size) != 2:
        raise MXNetError(f"Operator ROIPooling: pooled_size must be (h, w), got "
                         f"{attrs.pooled_size}")
    ph, pw = attrs.pooled_size
    height, width = data.shape[2], data.shape[3]
    box = _c_round(rois[:, 1:].detach().to(torch.float32) * attrs.spatial_scale)
    mask_h, empty_h = _roi_bins(box[:, 1], box[:, 3], ph, height)
    mask_w, empty_w = _roi_bins(box[:, 0], box[:, 2], pw, width)
    feat = data[rois[:, 0].detach().long()]
    neg = torch.tensor(float("-inf"), dtype=data.dtype, device=data.device)
    cols = [torch.where(mask_w[:, None, None, j, :], feat, neg).amax(dim=3)
            for j in range(pw)]
    cols_t = torch.stack(cols, dim=3)
    bins = [torch.where(mask_h[:, None, i, :, None], cols_t, neg).amax(dim=2)
            for i in range(ph)]
    out = torch.stack(bins, dim=2)
    empty = empty_h[:, :, None] | empty_w[:, None, :]
    return torch.where(empty[:, None], torch.zeros((), dtype=out.dtype, device=out.device),
                       out)


register(OpDef(
    "ROIPooling", _roi_pooling,
    params=[Shape("pooled_size", doc="ROI pooling output shape (h, w)"),
            Float("spatial_scale", doc="Feature map size / image size", lower=0.0, upper=1.0)],
    inputs=("data", "rois"), output_names=["output", "maxidx"], total_outputs=2,
    doc="""Region-of-interest max pooling (Fast R-CNN).

Parameters
----------
data : NDArray
    ``(N, C, H, W)`` feature maps.
rois : NDArray
    ``(R, 5)`` rows ``[batch_index, x1, y1, x2, y2]`` in image coordinates.
pooled_size : tuple of int
    ``(h, w)`` of the output.
spatial_scale : float
    Multiplies the ROI coordinates to reach feature-map coordinates.
"""))



# ---------------------------------------------------------------------------- im2col / col2im
def _sliding_geometry(op: str, attrs: Any, spatial: TShape) -> tuple[TShape, ...]:
    """(kernel, stride, dilate, pad, output positions per axis) with MXNet's defaults/checks."""
    k = tuple(attrs.kernel)
    if len(k) not in (1, 2):
        # MXNet: documented for 1-D to 3-D, but 1.9.1's kernels only run on 4-D arrays
        # (3-D and 1-D kernels fail there); 1-D runs here as 2-D of height 1
        raise MXNetError(f"Operator {op}: {len(k)}D kernel is not supported (kernel={k}); "
                         "1-D and 2-D kernels are")
    stride = tuple(attrs.stride) or (1,) * len(k)
    dilate = tuple(attrs.dilate) or (1,) * len(k)
    pad = tuple(attrs.pad) or (0,) * len(k)
    for what, val in (("stride", stride), ("dilate", dilate), ("pad", pad),
                      ("spatial shape", spatial)):
        if len(val) != len(k):
            raise MXNetError(f"Operator {op}: {what} {val} must have the same number of "
                             f"dimensions as kernel {k}")
    if min(k) <= 0 or min(stride) <= 0 or min(dilate) <= 0:
        raise MXNetError(f"Operator {op}: incorrect kernel {k}, stride {stride} or dilate "
                         f"{dilate}")
    outs = []
    for size, kk, s, d, p in zip(spatial, k, stride, dilate, pad):
        span = d * (kk - 1) + 1
        if span > size + 2 * p:
            raise MXNetError(f"Operator {op}: kernel size {k} (dilate {dilate}) exceeds the "
                             f"padded input {spatial} (pad {pad})")
        outs.append((size + 2 * p - span) // s + 1)
    return k, stride, dilate, pad, tuple(outs)


def _im2col(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """Extract sliding blocks: (N, C, *spatial) -> (N, C * prod(kernel), positions)."""
    k, stride, dilate, pad, _ = _sliding_geometry("im2col", attrs, tuple(data.shape[2:]))
    if len(k) == 1:  # a 1-D input is a 2-D one of height 1
        return F.unfold(data.unsqueeze(2), (1,) + k, (1,) + dilate, (0,) + pad, (1,) + stride)
    return F.unfold(data, k, dilate, pad, stride)


def _col2im(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """Accumulate (sum) column blocks into an image of ``output_size`` (im2col's adjoint)."""
    size = tuple(attrs.output_size)
    k, stride, dilate, pad, outs = _sliding_geometry("col2im", attrs, size)
    if data.dim() != 3 or data.shape[2] != math.prod(outs) or data.shape[1] % math.prod(k):
        raise MXNetError(f"Operator col2im: input of shape {tuple(data.shape)} does not match "
                         f"(N, C * {math.prod(k)}, {math.prod(outs)}) for output_size {size}, "
                         f"kernel {k}, stride {stride}, dilate {dilate}, pad {pad}")
    if len(k) == 1:
        out = F.fold(data, (1,) + size, (1,) + k, (1,) + dilate, (0,) + pad, (1,) + stride)
        return out.squeeze(2)
    return F.fold(data, size, k, dilate, pad, stride)


_SLIDING = [Shape("kernel"), Shape("stride", ()), Shape("dilate", ()), Shape("pad", ())]
_SLIDING_DOC = ("kernel : tuple of int\n    (w,) or (h, w).\nstride : tuple of int, "
                "optional\n    Default 1 per axis.\ndilate : tuple of int, optional\n    "
                "Default 1 per axis.\npad : tuple of int, optional\n    Zero padding per axis "
                "(default 0).")

register(OpDef(
    "im2col", _im2col, params=_SLIDING,
    doc="Extract the sliding blocks of ``data`` (N, C, *spatial) into columns of shape "
        "(N, C * prod(kernel), positions), the blocks a convolution with the same kernel, "
        "stride, dilate and pad would see.\n\nParameters\n----------\ndata : NDArray\n"
        + _SLIDING_DOC))
register(OpDef(
    "col2im", _col2im, params=[Shape("output_size")] + _SLIDING,
    doc="Sum column blocks (N, C * prod(kernel), positions) back into an image of spatial "
        "size ``output_size``; overlapping blocks add up (the gradient of im2col).\n\n"
        "Parameters\n----------\ndata : NDArray\noutput_size : tuple of int\n" + _SLIDING_DOC))

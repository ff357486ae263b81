"""Image operators: ``_cvimresize`` and the ``_image_*`` family (``mx.nd.image``).

Images are HWC (or NHWC) arrays, uint8 or float, as in MXNet; ``to_tensor`` turns them
into CHW float32 in [0, 1]. Resizing follows OpenCV (``cv_resize``). The augmenters
(flips, brightness, contrast, saturation, hue, color jitter, lighting) take one HWC image
with 1 or 3 channels, compute in float32 and store with MXNet's ``saturate_cast`` (uint8:
clamped to [0, 255], then truncated); their gradient passes the head gradient through
unchanged, as MXNet's (``_copy``) does. Random operators draw from torch's default
generator (seeded by ``mx.random.seed``).
"""
from __future__ import annotations

from typing import Any, Callable

import torch

from ..base import MXNetError
from . import cv_resize
from .params import Bool, Float, FloatOrShape, Int, Shape
from .registry import OpDef, ShapeInfer, Shapes, register

__all__: list[str] = []

_GRAY = (0.299, 0.587, 0.114)
_EIGVAL = (55.46, 4.794, 1.148)
_EIGVEC = ((-0.5675, 0.7192, 0.4009), (-0.5808, -0.0045, -0.8140),
           (-0.5836, -0.6948, 0.4203))
_FLT_EPSILON = float(torch.finfo(torch.float32).eps)
# HLS -> RGB: which of (p2, p1, falling, rising) each of b, g, r takes, per 60-degree sector
_HLS_SECTORS = ((1, 3, 0), (1, 0, 2), (3, 0, 1), (0, 2, 1), (0, 1, 3), (2, 1, 0))


# ---------------------------------------------------------------------------- helpers
def _saturate(out: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """MXNet's saturate_cast of a float32 result to the input dtype.

    # MXNet: uint8 is clamped to [0, 255] and then truncated (not rounded).
    """
    if like.dtype == torch.uint8:
        return out.clamp(0, 255).to(torch.uint8)
    return out.to(like.dtype)


class _CopyGrad(torch.autograd.Function):
    """``result`` forward, the head gradient unchanged to ``data`` backward."""

    @staticmethod
    def forward(ctx: Any, data: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
        return result

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad, None


def _copy_grad(data: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    """# MXNet: the augmenters' gradient is ``_copy`` of the head gradient."""
    if torch.is_grad_enabled() and data.requires_grad:
        copied: torch.Tensor = _CopyGrad.apply(data, result.detach())
        return copied
    return result


def _check_image(op: str, data: torch.Tensor) -> int:
    """One HWC image with 1 or 3 channels (MXNet's ImageShape); returns the channels."""
    if data.dim() != 3:
        raise MXNetError(f"Operator {op}: input image must have shape (height, width, "
                         f"channels), but got {tuple(data.shape)}")
    if data.shape[2] not in (1, 3):
        raise MXNetError(f"Operator {op}: the last dimension of input image must be the "
                         f"channel dimension with either 1 or 3 elements, but got input "
                         f"with shape {tuple(data.shape)}")
    return data.shape[2]


def _image_shape(op: str) -> Callable[[Any, Shapes], ShapeInfer]:
    """Shape inference of the augmenters: the image's own shape, checked as MXNet."""
    def infer(attrs: Any, shapes: Shapes) -> ShapeInfer:
        data = shapes[0]
        if data is None:
            return shapes, None
        _check_image(op, torch.empty(data, device="meta"))
        return shapes, [tuple(data)]
    return infer


def _uniform(lo: float, hi: float) -> float:
    return lo + (hi - lo) * float(torch.rand(()))


# An augmenter's adjustment: (attrs, image) -> adjusted image.
_Adjust = Callable[[Any, torch.Tensor], torch.Tensor]


def _augmenter(name: str, adjust: _Adjust) -> Callable[[Any, torch.Tensor], torch.Tensor]:
    """Register-ready compute: check the image, adjust, keep the gradient a copy."""
    op = f"_image_{name}"

    def compute(attrs: Any, data: torch.Tensor) -> torch.Tensor:
        _check_image(op, data)
        return _copy_grad(data, adjust(attrs, data.detach()))
    return compute


# ---------------------------------------------------------------------------- resize, crop
def _cvimresize(attrs: Any, src: torch.Tensor) -> torch.Tensor:
    return cv_resize.resize_hwc(src, attrs.w, attrs.h, attrs.interp, "_cvimresize")


register(OpDef("_cvimresize", _cvimresize, inputs=("src",),
               params=[Int("w"), Int("h"), Int("interp", 1)],
               doc="Resize an HWC image as OpenCV's cv::resize does (interp: 0 nearest, "
                   "1 bilinear, 2 bicubic, 3 area, 4 lanczos4)."))


# OpenCV's border types: CONSTANT, REPLICATE, REFLECT, WRAP, REFLECT_101; ISOLATED is a
# flag (16) that only matters for a view into a larger image
_BORDER_ISOLATED = 16
_BORDER_DTYPES = (torch.float32, torch.float64, torch.uint8, torch.int32)


def _border_index(n: int, before: int, after: int, kind: int) -> torch.Tensor:
    """Source index of each output position along an axis of length ``n``, OpenCV's
    borderInterpolate (positions outside a constant border are clamped; masked later)."""
    p = torch.arange(-before, n + after)
    if kind in (0, 1):  # constant (filled afterwards), replicate
        return p.clamp(0, n - 1)
    if kind == 3:  # wrap: cdefgh|abcdefgh|abcdefg
        return p.remainder(n)
    if n == 1:
        return torch.zeros_like(p)
    period = 2 * n if kind == 2 else 2 * n - 2  # reflect: fedcba|abcdefgh|hgfedcb
    q = p.remainder(period)                      # reflect_101: gfedcb|abcdefgh|gfedcba
    return torch.where(q < n, q, period - (1 if kind == 2 else 0) - q)


def _border_fill(attrs: Any, src: torch.Tensor) -> torch.Tensor:
    """The constant border's value per channel, saturated to the image dtype as cv::Scalar
    is (integers rounded and clamped)."""
    values = list(attrs.values) if attrs.values else [attrs.value] * 3
    # MXNet: reads 4 values whatever ``values`` holds (past its end); missing ones are 0 here
    values = (values + [0.0] * 4)[:4]
    channels = src.shape[2]
    fill = torch.tensor([values[c] if c < 4 else 0.0 for c in range(channels)],
                        dtype=torch.float64)
    if not src.dtype.is_floating_point:
        info = torch.iinfo(src.dtype)
        fill = fill.round().clamp(info.min, info.max)
    return fill.to(src.dtype)


def _cvcopyMakeBorder(attrs: Any, src: torch.Tensor) -> torch.Tensor:
    op = "_cvcopyMakeBorder"
    if src.dim() != 3:
        raise MXNetError(f"Operator {op}: expects an HWC image, got shape {tuple(src.shape)}")
    if src.dtype not in _BORDER_DTYPES:
        raise MXNetError(f"Operator {op}: unsupported dtype {src.dtype} (float32, float64, "
                         "uint8 or int32; MXNet says 'imresize doesn't support fp16')")
    margins = (attrs.top, attrs.bot, attrs.left, attrs.right)
    if min(margins) < 0:
        raise MXNetError(f"Operator {op}: margins must be >= 0, got top={attrs.top}, "
                         f"bot={attrs.bot}, left={attrs.left}, right={attrs.right}")
    kind = attrs.type & ~_BORDER_ISOLATED
    if kind not in (0, 1, 2, 3, 4):
        raise MXNetError(f"Operator {op}: Unknown/unsupported border type {attrs.type}")
    h, w = src.shape[0], src.shape[1]
    rows = _border_index(h, attrs.top, attrs.bot, kind).to(src.device)
    cols = _border_index(w, attrs.left, attrs.right, kind).to(src.device)
    out = src.detach()[rows][:, cols]
    if kind == 0:
        fill = _border_fill(attrs, src).to(src.device)
        out[:attrs.top] = fill
        out[h + attrs.top:] = fill
        out[:, :attrs.left] = fill
        out[:, w + attrs.left:] = fill
    return out


def _cvcopyMakeBorder_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    src = shapes[0]
    if src is None or len(src) != 3:
        return shapes, None
    return shapes, [(src[0] + attrs.top + attrs.bot, src[1] + attrs.left + attrs.right,
                     src[2])]


register(OpDef("_cvcopyMakeBorder", _cvcopyMakeBorder, inputs=("src",),
               infer_shape=_cvcopyMakeBorder_shape, differentiable=False,
               params=[Int("top"), Int("bot"), Int("left"), Int("right"), Int("type", 0),
                       Float("value", 0.0), FloatOrShape("values", ())],
               doc="Pad an HWC image's borders as OpenCV's cv::copyMakeBorder does (type: "
                   "0 constant, 1 replicate, 2 reflect, 3 wrap, 4 reflect_101; 16, "
                   "BORDER_ISOLATED, is ignored). The constant border is ``values`` (one "
                   "per channel, up to 4) or ``value`` on the first three channels."))


def _resize_size(size: tuple[int, ...], keep_ratio: bool, data_h: int,
                 data_w: int) -> tuple[int, int]:
    """(width, height) of _image_resize, MXNet's GetHeightAndWidth."""
    if len(size) not in (1, 2):
        raise MXNetError(f"Operator _image_resize: input size dimension must be 1 or 2, but "
                         f"got {len(size)}")
    if min(size) <= 0:
        raise MXNetError(f"Operator _image_resize: input size should be greater than 0, "
                         f"but got {size}")
    if len(size) == 2:
        return size[0], size[1]
    if not keep_ratio:
        return size[0], size[0]
    if data_h > data_w:  # MXNet: the shorter edge becomes size, integer division
        return size[0], data_h * size[0] // data_w
    return data_w * size[0] // data_h, size[0]


def _image_resize(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    if data.dim() not in (3, 4):
        raise MXNetError(f"Operator _image_resize: input image dimension should be 3 or 4 "
                         f"but got {data.dim()}")
    w, h = _resize_size(tuple(attrs.size), attrs.keep_ratio, data.shape[-3], data.shape[-2])
    return cv_resize.resize_hwc(data, w, h, attrs.interp, "_image_resize")


def _image_resize_infer_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    data = shapes[0]
    if data is None or 0 in data:
        return shapes, None
    if len(data) not in (3, 4):
        raise MXNetError(f"Operator _image_resize: input image dimension should be 3 or 4 "
                         f"but got {len(data)}")
    w, h = _resize_size(tuple(attrs.size), attrs.keep_ratio, data[-3], data[-2])
    return shapes, [tuple(data[:-3]) + (h, w, data[-1])]


register(OpDef("_image_resize", _image_resize, infer_shape=_image_resize_infer_shape,
               params=[Shape("size", ()), Bool("keep_ratio", False), Int("interp", 1)],
               doc="Resize an HWC image or NHWC batch to ``size`` ((width, height), or one "
                   "edge; with ``keep_ratio`` the shorter edge) with OpenCV's methods."))


def _image_crop(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    if data.dim() not in (3, 4):
        raise MXNetError(f"Operator _image_crop: image crop expects inputs of 3D (h, w, c) or "
                         f"4D (n, h, w, c), but got {data.dim()}D")
    if data.shape[-1] not in (1, 3):
        raise MXNetError(f"Operator _image_crop: expect channel of the input image is 1 or 3, "
                         f"but got {data.shape[-1]}")
    h, w = data.shape[-3], data.shape[-2]
    if attrs.width <= 0 or attrs.height <= 0:
        raise MXNetError("Operator _image_crop: input height and width must be greater than 0")
    if attrs.x + attrs.width > w or attrs.y + attrs.height > h or min(attrs.x, attrs.y) < 0:
        raise MXNetError(f"Operator _image_crop: crop (x={attrs.x}, y={attrs.y}, width="
                         f"{attrs.width}, height={attrs.height}) out of bounds: x + width "
                         f"should not be greater than input width {w}, y + height not "
                         f"greater than input height {h}")
    return data[..., attrs.y:attrs.y + attrs.height, attrs.x:attrs.x + attrs.width, :].clone()


register(OpDef("_image_crop", _image_crop,
               params=[Int("x"), Int("y"), Int("width"), Int("height")],
               doc="Crop an HWC image or NHWC batch to the box (x, y, width, height)."))


# ---------------------------------------------------------------------------- to_tensor, normalize
def _to_tensor(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    if data.dim() not in (3, 4):
        raise MXNetError("Operator _image_to_tensor: input image must have shape (height, "
                         f"width, channels), or (N, height, width, channels) but got "
                         f"{tuple(data.shape)}")
    return data.movedim(-1, -3).to(torch.float32) / 255.0


register(OpDef("_image_to_tensor", _to_tensor, params=[],
               infer_type=lambda attrs, types: (types, ["float32"]),
               doc="HWC (NHWC) image(s) with values in [0, 255] to CHW (NCHW) float32 in "
                   "[0, 1]."))


def _normalize(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    if data.dim() not in (3, 4):
        raise MXNetError("Operator _image_normalize: input tensor must have shape (channels, "
                         f"height, width), or (N, channels, height, width), but got "
                         f"{tuple(data.shape)}")
    c = data.shape[-3]
    if c not in (1, 3):
        raise MXNetError(f"Operator _image_normalize: the channel dimension of input tensor "
                         f"must have either 1 or 3 elements, but got input with shape "
                         f"{tuple(data.shape)}")
    mean, std = tuple(attrs.mean), tuple(attrs.std)
    for name, vals in (("mean", mean), ("std", std)):
        if len(vals) not in (1, c):
            raise MXNetError(f"Operator _image_normalize: invalid {name} for input with shape "
                             f"{tuple(data.shape)}. {name} must have either 1 or {c} "
                             f"elements, but got {vals}")
    calc = data.dtype if data.is_floating_point() else torch.float32
    m = torch.tensor(mean * c if len(mean) == 1 else mean, dtype=calc, device=data.device)
    s = torch.tensor(std * c if len(std) == 1 else std, dtype=calc, device=data.device)
    out = (data.to(calc) - m.view(c, 1, 1)) / s.view(c, 1, 1)
    # MXNet: the output keeps the input dtype (an integer image is truncated)
    return out if out.dtype == data.dtype else out.to(data.dtype)


register(OpDef("_image_normalize", _normalize,
               params=[FloatOrShape("mean", (0.0, 0.0, 0.0, 0.0)),
                       FloatOrShape("std", (1.0, 1.0, 1.0, 1.0))],
               doc="(x - mean) / std per channel of a CHW tensor or NCHW batch."))


# ---------------------------------------------------------------------------- flips
def _flip(axis: int, random: bool) -> _Adjust:
    """Flip W (axis 1) or H (axis 0) of an HWC image, maybe with probability 0.5."""
    def adjust(attrs: Any, data: torch.Tensor) -> torch.Tensor:
        if random and float(torch.rand(())) < 0.5:
            return data.clone()
        return torch.flip(data, dims=(axis,))
    return adjust


for _name, _axis, _rand in (("flip_left_right", 1, False), ("flip_top_bottom", 0, False),
                            ("random_flip_left_right", 1, True),
                            ("random_flip_top_bottom", 0, True)):
    register(OpDef(f"_image_{_name}", _augmenter(_name, _flip(_axis, _rand)), params=[],
                   deterministic=not _rand, infer_shape=_image_shape(f"_image_{_name}"),
                   doc=f"{_name.replace('_', ' ').capitalize()} of an HWC image "
                       f"({'with probability 0.5' if _rand else 'always'})."))


# ---------------------------------------------------------------------------- color
def _brightness(x: torch.Tensor, alpha: float) -> torch.Tensor:
    return _saturate(x.to(torch.float32) * alpha, x)


def _contrast(x: torch.Tensor, alpha: float) -> torch.Tensor:
    xf = x.to(torch.float32)
    if x.shape[-1] == 3:
        coef = torch.tensor(_GRAY, device=x.device)
        gray_mean = (xf * coef).sum() / (x.shape[0] * x.shape[1])
    else:
        gray_mean = xf.mean()
    return _saturate(xf * alpha + (1 - alpha) * gray_mean, x)


def _saturation(x: torch.Tensor, alpha: float) -> torch.Tensor:
    if x.shape[-1] == 1:
        return x.clone()
    xf = x.to(torch.float32)
    # MXNet 1.9.1: its gray value keeps only the last term, 0.114 * blue
    gray = xf[..., 2:3] * _GRAY[2] * (1 - alpha)
    return _saturate(gray + xf * alpha, x)


def _rgb_to_hls(rgb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r, g, b = (rgb[..., i] / 255.0 for i in range(3))
    vmax = torch.maximum(torch.maximum(r, g), b)
    vmin = torch.minimum(torch.minimum(r, g), b)
    diff = vmax - vmin
    light = (vmax + vmin) * 0.5
    chroma = diff > _FLT_EPSILON
    sat = torch.where(light < 0.5, diff / (vmax + vmin), diff / (2.0 - vmax - vmin))
    step = 60.0 / diff
    hue = torch.where(vmax == r, (g - b) * step,
                      torch.where(vmax == g, (b - r) * step + 120.0, (r - g) * step + 240.0))
    hue = torch.where(hue < 0, hue + 360.0, hue)
    zero = torch.zeros((), dtype=rgb.dtype, device=rgb.device)
    return torch.where(chroma, hue, zero), light, torch.where(chroma, sat, zero)


def _hls_to_rgb(hue: torch.Tensor, light: torch.Tensor, sat: torch.Tensor) -> torch.Tensor:
    p2 = torch.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    p1 = 2 * light - p2
    h = torch.remainder(hue * (1.0 / 60.0), 6.0)
    sector = h.to(torch.int64).clamp(0, 5)
    h = h - sector.to(h.dtype)
    tab = torch.stack([p2, p1, p1 + (p2 - p1) * (1 - h), p1 + (p2 - p1) * h], -1)
    pick = torch.tensor(_HLS_SECTORS, device=hue.device)[sector]  # (..., 3): b, g, r
    bgr = torch.gather(tab, -1, pick)
    rgb = torch.where((sat != 0).unsqueeze(-1), bgr.flip(-1), light.unsqueeze(-1).expand_as(bgr))
    return rgb * 255.0


def _hue(x: torch.Tensor, alpha: float) -> torch.Tensor:
    """Rotate the hue by ``alpha`` turns in HLS space (MXNet's per-pixel conversion)."""
    if x.shape[-1] == 1:
        return x.clone()
    hue, light, sat = _rgb_to_hls(x.to(torch.float32))
    return _saturate(_hls_to_rgb(hue + alpha * 360.0, light, sat), x)


def _random_enhance(name: str, fn: Callable[[torch.Tensor, float], torch.Tensor]) -> _Adjust:
    def adjust(attrs: Any, data: torch.Tensor) -> torch.Tensor:
        if attrs.min_factor < 0 or attrs.max_factor < 0:
            raise MXNetError(f"Operator _image_random_{name}: min_factor {attrs.min_factor} "
                             f"and max_factor {attrs.max_factor} must be >= 0")
        return fn(data, _uniform(attrs.min_factor, attrs.max_factor))
    return adjust


_FACTORS = [Float("min_factor", doc="Minimum factor."), Float("max_factor", doc="Maximum factor.")]

for _name, _fn in (("brightness", _brightness), ("contrast", _contrast),
                   ("saturation", _saturation), ("hue", _hue)):
    register(OpDef(f"_image_random_{_name}", _augmenter(f"random_{_name}",
                                                              _random_enhance(_name, _fn)),
                   params=_FACTORS, deterministic=False,
                   infer_shape=_image_shape(f"_image_random_{_name}"),
                   doc=f"Adjust the {_name} of an HWC image by a factor drawn uniformly from "
                       "[min_factor, max_factor]."))


def _color_jitter(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """Brightness, contrast, saturation and hue jitters in a random order, each saturated."""
    steps = ((_brightness, attrs.brightness, 1.0), (_contrast, attrs.contrast, 1.0),
             (_saturation, attrs.saturation, 1.0), (_hue, attrs.hue, 0.0))
    x = data
    for idx in torch.randperm(4).tolist():
        fn, amount, centre = steps[idx]
        if amount > 0:
            x = fn(x, centre + _uniform(-amount, amount))
    return x if x is not data else data.clone()


register(OpDef("_image_random_color_jitter", _augmenter("random_color_jitter", _color_jitter),
               params=[Float("brightness", doc="How much to jitter brightness."),
                       Float("contrast", doc="How much to jitter contrast."),
                       Float("saturation", doc="How much to jitter saturation."),
                       Float("hue", doc="How much to jitter hue.")],
               deterministic=False, infer_shape=_image_shape("_image_random_color_jitter"),
               doc="Jitter brightness, contrast, saturation and hue in a random order."))


def _lighting(data: torch.Tensor, alpha: tuple[float, ...]) -> torch.Tensor:
    """Add the PCA-based RGB offset of AlexNet's lighting noise to an HWC image."""
    if data.shape[-1] == 1:
        return data.clone()
    f32 = torch.float32
    eig = torch.tensor([[v * e for v, e in zip(_EIGVAL, row)] for row in _EIGVEC], dtype=f32)
    rgb = (eig * torch.tensor(alpha, dtype=f32)).sum(-1)
    return _saturate(data.to(f32) + rgb.to(data.device), data)


def _adjust_lighting(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    alpha = tuple(attrs.alpha)
    if len(alpha) != 3:
        raise MXNetError(f"Operator _image_adjust_lighting: alpha must have 3 values, got "
                         f"{alpha}")
    return _lighting(data, alpha)


def _random_lighting(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    return _lighting(data, tuple((torch.randn(3) * attrs.alpha_std).tolist()))


register(OpDef("_image_adjust_lighting", _augmenter("adjust_lighting", _adjust_lighting),
               params=[FloatOrShape("alpha", doc="The lighting alphas for R, G, B.")],
               infer_shape=_image_shape("_image_adjust_lighting"),
               doc="AlexNet-style PCA lighting with the given alphas."))
register(OpDef("_image_random_lighting", _augmenter("random_lighting", _random_lighting),
               params=[Float("alpha_std", 0.05, "Level of the lighting noise.")],
               deterministic=False, infer_shape=_image_shape("_image_random_lighting"),
               doc="AlexNet-style PCA lighting with alphas drawn from N(0, alpha_std)."))

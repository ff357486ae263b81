"""Image operators: ``_cvimresize`` and the ``_image_*`` family (``mx.nd.image``).

Images are HWC (or NHWC) arrays, uint8 or float, as in MXNet; ``to_tensor`` turns them
into CHW float32 in [0, 1]. Random operators draw from torch's default generator (seeded
by ``mx.random.seed``).
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ..base import MXNetError
from .params import Bool, Float, FloatOrShape, Int, Shape
from .registry import OpDef, register

_INTERP = {0: "nearest", 1: "bilinear", 2: "area", 3: "bicubic", 4: "bicubic"}
_GRAY = (0.299, 0.587, 0.114)
_EIGVAL = (55.46, 4.794, 1.148)
_EIGVEC = ((-0.5675, 0.7192, 0.4009), (-0.5808, -0.0045, -0.8140),
           (-0.5836, -0.6948, 0.4203))


def _saturate(out: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """Cast back to the input dtype, rounding and clamping for uint8 (saturate_cast)."""
    if like.dtype == torch.uint8:
        return out.round().clamp(0, 255).to(torch.uint8)
    return out.to(like.dtype)


def _resize_hwc(data: torch.Tensor, w: int, h: int, interp: int, op: str) -> torch.Tensor:
    """Resize an HWC or NHWC image to (h, w) the way cv2.resize does."""
    if data.dim() not in (3, 4):
        raise MXNetError(f"Operator {op}: input must be 3D (HWC) or 4D (NHWC), "
                         f"got shape {tuple(data.shape)}")
    if w <= 0 or h <= 0:
        raise MXNetError(f"Operator {op}: target size must be positive, got w={w}, h={h}")
    if interp not in _INTERP:
        raise MXNetError(f"Operator {op}: unknown interp method {interp}")
    x = data if data.dim() == 4 else data.unsqueeze(0)
    x = x.permute(0, 3, 1, 2).to(torch.float32)
    mode = _INTERP[interp]
    # MXNet: cv2's INTER_AREA enlarging is bilinear.
    if mode == "area" and (h > x.shape[2] or w > x.shape[3]):
        mode = "bilinear"
    kw = {"align_corners": False} if mode in ("bilinear", "bicubic") else {}
    out = F.interpolate(x, size=(h, w), mode=mode, **kw).permute(0, 2, 3, 1)
    out = _saturate(out, data)
    return out if data.dim() == 4 else out[0]


def _cvimresize(attrs: Any, src: torch.Tensor) -> torch.Tensor:
    return _resize_hwc(src, attrs.w, attrs.h, attrs.interp, "_cvimresize")


register(OpDef("_cvimresize", _cvimresize, inputs=("src",),
               params=[Int("w"), Int("h"), Int("interp", 1)],
               doc="Resize an HWC image with OpenCV's interpolation methods."))


def _image_resize(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    size = tuple(attrs.size)
    if len(size) == 1:
        w = h = size[0]
        if attrs.keep_ratio:
            ih, iw = data.shape[-3], data.shape[-2]
            if ih > iw:
                w, h = size[0], size[0] * ih // iw
            else:
                w, h = size[0] * iw // ih, size[0]
    elif len(size) == 2:
        w, h = size
    else:
        raise MXNetError(f"Operator _image_resize: size must be (w,) or (w, h), got {size}")
    return _resize_hwc(data, w, h, attrs.interp, "_image_resize")


register(OpDef("_image_resize", _image_resize,
               params=[Shape("size", ()), Bool("keep_ratio", False), Int("interp", 1)]))


def _image_crop(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    h, w = data.shape[-3], data.shape[-2]
    if attrs.x < 0 or attrs.y < 0 or attrs.x + attrs.width > w or attrs.y + attrs.height > h:
        raise MXNetError(f"Operator _image_crop: crop ({attrs.x}, {attrs.y}, {attrs.width}, "
                         f"{attrs.height}) out of bounds for image of size {w}x{h}")
    return data[..., attrs.y:attrs.y + attrs.height, attrs.x:attrs.x + attrs.width, :].clone()


register(OpDef("_image_crop", _image_crop,
               params=[Int("x"), Int("y"), Int("width"), Int("height")]))


def _to_tensor(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    if data.dim() not in (3, 4):
        raise MXNetError("Operator _image_to_tensor: input must be 3D (HWC) or 4D (NHWC), "
                         f"got shape {tuple(data.shape)}")
    return data.movedim(-1, -3).to(torch.float32) / 255.0


register(OpDef("_image_to_tensor", _to_tensor, params=[]))


def _normalize(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    if data.dim() not in (3, 4):
        raise MXNetError("Operator _image_normalize: input must be 3D (CHW) or 4D (NCHW), "
                         f"got shape {tuple(data.shape)}")
    c = data.shape[-3]
    mean, std = tuple(attrs.mean), tuple(attrs.std)
    if (len(mean) != 1 and len(mean) < c) or (len(std) != 1 and len(std) < c):
        raise MXNetError(f"Operator _image_normalize: mean/std must have 1 or {c} values")
    mean = (mean * c)[:c] if len(mean) == 1 else mean[:c]
    std = (std * c)[:c] if len(std) == 1 else std[:c]
    m = torch.tensor(mean, dtype=data.dtype, device=data.device).view(c, 1, 1)
    s = torch.tensor(std, dtype=data.dtype, device=data.device).view(c, 1, 1)
    return (data - m) / s


register(OpDef("_image_normalize", _normalize,
               params=[FloatOrShape("mean", (0.0, 0.0, 0.0, 0.0)),
                       FloatOrShape("std", (1.0, 1.0, 1.0, 1.0))]))


def _flip(axis_from_end: int, random: bool):
    """Compute flipping W (-2) or H (-3) of an HWC/NHWC image, maybe with probability 0.5."""
    def compute(attrs: Any, data: torch.Tensor) -> torch.Tensor:
        if random and float(torch.rand(())) >= 0.5:
            return data.clone()
        return torch.flip(data, dims=(axis_from_end,))
    return compute


for _name, _axis, _rand in (("_image_flip_left_right", -2, False),
                            ("_image_flip_top_bottom", -3, False),
                            ("_image_random_flip_left_right", -2, True),
                            ("_image_random_flip_top_bottom", -3, True)):
    register(OpDef(_name, _flip(_axis, _rand), params=[], deterministic=not _rand))


def _gray(x: torch.Tensor) -> torch.Tensor:
    """Per-pixel luma of a channel-last RGB image, keeping the channel axis."""
    coef = torch.tensor(_GRAY, dtype=torch.float32, device=x.device)
    return (x * coef).sum(dim=-1, keepdim=True)


def _uniform(lo: float, hi: float) -> float:
    return lo + (hi - lo) * float(torch.rand(()))


def _brightness(x: torch.Tensor, alpha: float) -> torch.Tensor:
    return x * alpha


def _contrast(x: torch.Tensor, alpha: float) -> torch.Tensor:
    return x * alpha + (1.0 - alpha) * _gray(x).mean()


def _saturation(x: torch.Tensor, alpha: float) -> torch.Tensor:
    return x * alpha + (1.0 - alpha) * _gray(x)


def _hue(x: torch.Tensor, alpha: float) -> torch.Tensor:
    """Rotate hue by ``alpha`` * pi in YIQ space."""
    u, w = torch.cos(torch.tensor(alpha * torch.pi)), torch.sin(torch.tensor(alpha * torch.pi))
    bt = torch.tensor([[1.0, 0.0, 0.0], [0.0, float(u), -float(w)], [0.0, float(w), float(u)]])
    tyiq = torch.tensor([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321],
                         [0.211, -0.523, 0.311]])
    ityiq = torch.tensor([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])
    t = (ityiq @ bt @ tyiq).t().to(x.device)
    return x @ t


def _check_rgb(op: str, data: torch.Tensor) -> None:
    if data.dim() not in (3, 4) or data.shape[-1] != 3:
        raise MXNetError(f"Operator {op}: input must be an HWC/NHWC image with 3 channels, "
                         f"got shape {tuple(data.shape)}")


def _random_adjust(name: str, fn):
    """A random_<name> compute drawing its factor from [1-max, 1+max] style bounds."""
    def compute(attrs: Any, data: torch.Tensor) -> torch.Tensor:
        if name != "brightness":
            _check_rgb(f"_image_random_{name}", data)
        alpha = _uniform(attrs.min_factor, attrs.max_factor)
        return _saturate(fn(data.to(torch.float32), alpha), data)
    return compute


def _hue_factor(x: torch.Tensor, factor: float) -> torch.Tensor:
    """random_hue's factor is centred on 1 (no change)."""
    return _hue(x, factor - 1.0)


for _name, _fn in (("brightness", _brightness), ("contrast", _contrast),
                   ("saturation", _saturation), ("hue", _hue_factor)):
    register(OpDef(f"_image_random_{_name}", _random_adjust(_name, _fn),
                   params=[Float("min_factor"), Float("max_factor")], deterministic=False))


def _color_jitter(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    _check_rgb("_image_random_color_jitter", data)
    x = data.to(torch.float32)
    steps = [(_brightness, attrs.brightness), (_contrast, attrs.contrast),
             (_saturation, attrs.saturation)]
    for idx in torch.randperm(3).tolist():
        fn, amount = steps[idx]
        if amount > 0:
            x = fn(x, _uniform(1.0 - amount, 1.0 + amount))
    if attrs.hue > 0:
        x = _hue(x, _uniform(-attrs.hue, attrs.hue))
    return _saturate(x, data)


register(OpDef("_image_random_color_jitter", _color_jitter,
               params=[Float("brightness"), Float("contrast"), Float("saturation"),
                       Float("hue")], deterministic=False))


def _lighting(data: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """Add the PCA-based RGB offset ``eigvec @ (alpha * eigval)`` to a channel-last image."""
    eigval = torch.tensor(_EIGVAL, dtype=torch.float32)
    eigvec = torch.tensor(_EIGVEC, dtype=torch.float32)
    rgb = (eigvec @ (alpha.to(torch.float32) * eigval)).to(data.device)
    return _saturate(data.to(torch.float32) + rgb, data)


def _adjust_lighting(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    _check_rgb("_image_adjust_lighting", data)
    alpha = tuple(attrs.alpha)
    if len(alpha) != 3:
        raise MXNetError(f"Operator _image_adjust_lighting: alpha must have 3 values, got {alpha}")
    return _lighting(data, torch.tensor(alpha))


def _random_lighting(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    _check_rgb("_image_random_lighting", data)
    return _lighting(data, torch.randn(3) * attrs.alpha_std)


register(OpDef("_image_adjust_lighting", _adjust_lighting, params=[FloatOrShape("alpha")]))
register(OpDef("_image_random_lighting", _random_lighting, params=[Float("alpha_std", 0.05)],
               deterministic=False))

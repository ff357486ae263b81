"""Image resizing with OpenCV 3.4's ``cv::resize`` semantics (what MXNet 1.9.1 calls).

MXNet resizes images (``_cvimresize``, ``_image_resize``) with OpenCV, so its results are
OpenCV's: sample positions ``(d + 0.5) * scale - 0.5`` with edge pixels replicated,
bicubic with ``A = -0.75``, Lanczos over 8 taps, pixel-area averaging when shrinking,
and for uint8 images fixed-point weights (11 bits per axis) with the rounding of the
integer pipeline. Float images match OpenCV to float rounding; for uint8, bilinear
enlargement can still differ by 1 in about 2% of the pixels (OpenCV's vector code paths
are emulated only in part). Each axis is a table of source taps and weights.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

from ..base import MXNetError

__all__ = ["resize_hwc", "INTERP_NAMES"]

NEAREST, LINEAR, CUBIC, AREA, LANCZOS4 = 0, 1, 2, 3, 4
INTERP_NAMES = {NEAREST: "nearest", LINEAR: "bilinear", CUBIC: "bicubic", AREA: "area",
                LANCZOS4: "lanczos4"}
_KSIZE = {LINEAR: 2, CUBIC: 4, AREA: 2, LANCZOS4: 8}
_COEF_SCALE = 2048          # OpenCV's INTER_RESIZE_COEF_SCALE (11 bits)
_DBL_EPSILON = np.finfo(np.float64).eps
_FLT_EPSILON = np.finfo(np.float32).eps


def _cubic(x: np.ndarray) -> np.ndarray:
    """OpenCV's bicubic weights (A = -0.75) of fractions ``x``, float32, (n, 4)."""
    a, one = np.float32(-0.75), np.float32(1)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + one
    c2 = ((a + 2) * (one - x) - (a + 3)) * (one - x) * (one - x) + one
    return np.stack([c0, c1, c2, one - c0 - c1 - c2], -1)


def _lanczos4(x: np.ndarray) -> np.ndarray:
    """OpenCV's Lanczos weights over 8 taps of fractions ``x``, float32, (n, 8)."""
    s45 = math.sqrt(0.5)
    cs = [(1, 0), (-s45, -s45), (0, 1), (s45, -s45), (-1, 0), (s45, s45), (0, -1), (-s45, s45)]
    xd = x.astype(np.float64)
    y0 = -(xd + 3) * math.pi * 0.25
    s0, c0 = np.sin(y0), np.cos(y0)
    with np.errstate(divide="ignore", invalid="ignore"):
        cols = [((cs[i][0] * s0 + cs[i][1] * c0) / (-(xd + 3 - i) * math.pi * 0.25) ** 2)
                .astype(np.float32) for i in range(8)]
    total = np.zeros_like(x)
    for col in cols:           # float32, summed in order as OpenCV does
        total = total + col
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.stack(cols, -1) * (np.float32(1) / total)[:, None]
    exact = x < _FLT_EPSILON   # an integer position takes the pixel itself
    out[exact] = np.eye(8, dtype=np.float32)[3]
    return out


def _taps(interp: int, dst: int, src: int) -> tuple[np.ndarray, np.ndarray]:
    """(first source index, float32 weights (dst, ksize)) of each destination index."""
    inv = dst / src
    scale = 1.0 / inv
    d = np.arange(dst, dtype=np.float64)
    if interp == AREA:  # AREA while enlarging: linear-like weights of its own
        s = np.floor(d * scale)
        f = ((d + 1) - (s + 1) * inv).astype(np.float32)
        f = np.where(f <= 0, np.float32(0), f - np.floor(f)).astype(np.float32)
    else:
        f = ((d + 0.5) * scale - 0.5).astype(np.float32)
        s = np.floor(f)
        f = (f - s.astype(np.float32)).astype(np.float32)
    s = s.astype(np.int64)
    if interp not in (CUBIC, LANCZOS4):  # MXNet (OpenCV): the edges clamp the position
        low, high = s < 0, s >= src - 1
        f = np.where(low | high, np.float32(0), f)
        s = np.where(low, 0, np.where(high, src - 1, s))
    if interp == CUBIC:
        w = _cubic(f)
    elif interp == LANCZOS4:
        w = _lanczos4(f)
    else:
        w = np.stack([np.float32(1) - f, f], -1)
    return s - _KSIZE[interp] // 2 + 1, w.astype(np.float32)


def _area_table(dst: int, src: int) -> np.ndarray:
    """Pixel-area weights of a shrink by ``src / dst`` (each row sums to 1)."""
    scale = src / dst
    table = np.zeros((dst, src), np.float32)
    for d in range(dst):
        f1 = d * scale
        f2 = f1 + scale
        cell = min(scale, src - f1)
        s1, s2 = math.ceil(f1), min(math.floor(f2), src - 1)
        s1 = min(s1, s2)
        if s1 - f1 > 1e-3:
            table[d, s1 - 1] += np.float32((s1 - f1) / cell)
        for s in range(s1, s2):
            table[d, s] += np.float32(1.0 / cell)
        if f2 - s2 > 1e-3:
            table[d, s2] += np.float32(min(min(f2 - s2, 1.0), cell) / cell)
    return table


@lru_cache(maxsize=256)
def _weights(interp: int, dst: int, src: int) -> torch.Tensor:
    """The (dst, src) float64 weight matrix of one axis."""
    start, w = _taps(interp, dst, src)
    mat = np.zeros((dst, src), np.float64)
    # MXNet (OpenCV): taps beyond the edge read the edge pixel
    idx = np.clip(start[:, None] + np.arange(w.shape[1]), 0, src - 1)
    np.add.at(mat, (np.arange(dst)[:, None].repeat(w.shape[1], 1), idx), w.astype(np.float64))
    return torch.from_numpy(mat)


def _scales(src_hw: tuple[int, int], dst_hw: tuple[int, int]) -> tuple[int | None, ...]:
    """(integer shrink factors or None) of OpenCV's fast pixel-area path."""
    factors: list[int | None] = []
    for s, d in zip(src_hw, dst_hw):
        scale = 1.0 / (d / s)
        k = int(np.rint(scale))
        factors.append(k if abs(scale - k) < _DBL_EPSILON else None)
    return tuple(factors)


def _nearest(x: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """OpenCV's nearest neighbour: source index floor(d * src / dst), clamped."""
    def index(dst: int, src: int) -> torch.Tensor:
        pos = np.floor(np.arange(dst) * (1.0 / (dst / src))).astype(np.int64)
        return torch.from_numpy(np.minimum(pos, src - 1)).to(x.device)
    return x.index_select(0, index(h, x.shape[0])).index_select(1, index(w, x.shape[1]))


def _area_shrink(x: torch.Tensor, h: int, w: int,
                 fast: tuple[int | None, ...]) -> torch.Tensor:
    """Average over source areas: whole blocks for integer factors, fractions otherwise."""
    is_u8 = x.dtype == torch.uint8
    fy, fx = fast
    if fy is not None and fx is not None:
        blocks = x[:h * fy, :w * fx].reshape(h, fy, w, fx, -1)
        if is_u8:
            total = blocks.to(torch.int64).sum(dim=(1, 3))
            if (fy, fx) == (2, 2):  # OpenCV's 2x2 path rounds half up
                return ((total + 2) >> 2).to(torch.uint8)
            mean = total.to(torch.float32) * np.float32(1.0 / (fy * fx))
            return torch.round(mean).clamp(0, 255).to(torch.uint8)
        return blocks.sum(dim=(1, 3)) * (1.0 / (fy * fx))
    wy = torch.from_numpy(_area_table(h, x.shape[0])).to(x.device)
    wx = torch.from_numpy(_area_table(w, x.shape[1])).to(x.device)
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32
    out = torch.einsum("yh,hwc,xw->yxc", wy.to(acc), x.to(acc), wx.to(acc))
    if is_u8:
        return torch.round(out).clamp(0, 255).to(torch.uint8)
    return out.to(x.dtype)


@lru_cache(maxsize=256)
def _fixed_taps(interp: int, dst: int, src: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(source rows, 11-bit integer weights) of each destination row, both (dst, ksize)."""
    start, w = _taps(interp, dst, src)
    idx = np.clip(start[:, None] + np.arange(w.shape[1]), 0, src - 1)
    wts = np.rint(w * np.float32(_COEF_SCALE)).astype(np.int64)
    return torch.from_numpy(idx), torch.from_numpy(wts)


def _vector_span(width: int, step: int, tail_step: int | None) -> int:
    """How many leading row elements OpenCV's SSE2 loops handle (the rest is scalar)."""
    x = 0
    while x <= width - step:
        x += step
    while tail_step is not None and x < width - tail_step:
        x += tail_step
    return x


def _tap_sum(x: torch.Tensor, idx: torch.Tensor, wts: torch.Tensor, axis: int) -> torch.Tensor:
    """sum_j x[idx[:, j]] * wts[:, j] along ``axis`` (0 rows, 1 columns)."""
    shape = (-1, 1, 1) if axis == 0 else (1, -1, 1)
    total = None
    for j in range(idx.shape[1]):
        term = x.index_select(axis, idx[:, j]) * wts[:, j].reshape(shape)
        total = term if total is None else total + term
    assert total is not None  # every kernel has at least one tap
    return total


def _tap_sum_2d(rows: torch.Tensor, idx: torch.Tensor, wts: torch.Tensor,
                shift: int = 0) -> torch.Tensor:
    """sum_j (rows[idx[:, j]] * wts[:, j]) >> shift for (rows, elements), in order of j."""
    total = None
    for j in range(idx.shape[1]):
        term = rows.index_select(0, idx[:, j]) * wts[:, j, None]
        term = term >> shift if shift else term
        total = term if total is None else total + term
    assert total is not None  # every kernel has at least one tap
    return total


def _vertical_u8(rows: torch.Tensor, interp: int, h: int) -> torch.Tensor:
    """The vertical pass over fixed-point rows, rounded as OpenCV 3.4 does on x86.

    # MXNet (OpenCV): the scalar code rounds (sum + 2^21) >> 22; the SSE2 loops, which take
    # the leading elements of each row, round differently: the 2-tap kernel drops 4 bits
    # first and keeps the high 16 bits of each product, the 4-tap one sums in float32.
    """
    idx, wts = (t.to(rows.device) for t in _fixed_taps(interp, h, rows.shape[0]))
    width = rows.shape[1] * rows.shape[2]
    if interp in (LINEAR, AREA):
        span = _vector_span(width, 16, 4)
    elif interp == CUBIC:
        span = _vector_span(width, 8, None)
    else:
        span = 0
    flat = rows.reshape(rows.shape[0], width)
    out = torch.empty((h, width), dtype=torch.uint8, device=rows.device)
    if span:
        head = flat[:, :span]
        if interp == CUBIC:
            bf = wts.to(torch.float32) * np.float32(1.0 / (1 << 22))
            vec = torch.round(_tap_sum_2d(head.to(torch.float32), idx, bf))
        else:  # the shift by 4 is taken on the (fewer) source rows
            vec = (_tap_sum_2d(head >> 4, idx, wts.to(head.dtype), shift=16) + 2) >> 2
        out[:, :span] = vec.clamp_(0, 255)
    if span < width:
        tail = _tap_sum_2d(flat[:, span:], idx, wts.to(rows.dtype))
        out[:, span:] = ((tail + (1 << 21)) >> 22).clamp_(0, 255)
    return out.reshape(h, rows.shape[1], rows.shape[2])


def _separable(x: torch.Tensor, h: int, w: int, interp: int) -> torch.Tensor:
    """Horizontal then vertical weighted sums (fixed point for uint8)."""
    if x.dtype == torch.uint8:
        idx, wts = (t.to(x.device) for t in _fixed_taps(interp, w, x.shape[1]))
        # 2-tap sums stay below 2^31 (weights add up to 2^11 in each pass, 2^22 in both);
        # wider kernels with negative lobes may not
        acc = torch.int32 if interp in (LINEAR, AREA) else torch.int64
        rows = _tap_sum(x.to(acc), idx, wts.to(acc), 1)
        return _vertical_u8(rows, interp, h)
    acc = torch.float64 if x.dtype in (torch.float64, torch.int32) else torch.float32
    wy = _weights(interp, h, x.shape[0]).to(x.device, acc)
    wx = _weights(interp, w, x.shape[1]).to(x.device, acc)
    out = torch.einsum("yh,hwc,xw->yxc", wy, x.to(acc), wx)
    if x.dtype == torch.int32:
        return torch.round(out).to(torch.int32)
    return out.to(x.dtype)


def _resize_one(x: torch.Tensor, h: int, w: int, interp: int) -> torch.Tensor:
    """Resize one HWC image to (h, w)."""
    src_hw = (x.shape[0], x.shape[1])
    if src_hw == (h, w):
        return x.clone()
    if interp == NEAREST:
        return _nearest(x, h, w)
    fast = _scales(src_hw, (h, w))
    if interp == LINEAR and fast == (2, 2):
        interp = AREA  # OpenCV: halving both axes linearly is pixel-area averaging
    if interp == AREA and h <= src_hw[0] and w <= src_hw[1]:
        return _area_shrink(x, h, w, fast)
    return _separable(x, h, w, interp)


def resize_hwc(data: torch.Tensor, w: int, h: int, interp: int, op: str) -> torch.Tensor:
    """Resize an HWC image or an NHWC batch to (h, w) as cv::resize does."""
    if data.dim() not in (3, 4):
        raise MXNetError(f"Operator {op}: input image dimension should be 3 (HWC) or 4 "
                         f"(NHWC), got shape {tuple(data.shape)}")
    if w <= 0 or h <= 0:
        raise MXNetError(f"Operator {op}: target size must be positive, got w={w}, h={h}")
    if interp not in INTERP_NAMES:
        raise MXNetError(f"Operator {op}: unknown interp method {interp} (0 nearest, "
                         "1 bilinear, 2 bicubic, 3 area, 4 lanczos4)")
    if data.dtype not in (torch.uint8, torch.float32, torch.float64, torch.int32):
        raise MXNetError(f"Operator {op}: OpenCV resize does not support "
                         f"{str(data.dtype).replace('torch.', '')} images")
    if data.dim() == 3:
        return _resize_one(data, h, w, interp)
    return torch.stack([_resize_one(img, h, w, interp) for img in data])

"""Winograd F(4x4, 3x3) convolution for the oneDNN inference fusion on CPU.

A 3x3 stride-1 convolution computed tile by tile with Winograd's minimal filtering
algorithm (Lavin & Gray, 2015) needs 36 multiplies per 4x4 output tile and channel pair
instead of 144. oneDNN has a Winograd kernel only for AVX-512; on other CPUs this one
does the transforms as small dense products and the 36 channel mixes as one batched
GEMM, all in torch. It pays where channels are many and images small (resnet18's
128- to 512-channel stages run 1.3-1.6x faster than oneDNN's direct convolution on an
AVX2 machine) and loses where transforms dominate, so :mod:`.fusion` times both on the
real shape when the program is compiled and keeps the faster one
(``MXTORCH_WINOGRAD``: ``auto``, the default; ``0`` never; ``1`` always, where
applicable). Results equal direct convolution within float32 rounding (relative error
about 1e-5 of the output's range).

Intermediate buffers come from a :class:`Workspace` shared by the kernels of one
compiled program (they run one after another), as MXNet's ``static_alloc`` keeps one
memory plan per graph; each thread has its own.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Callable

import torch

__all__ = ["Workspace", "applicable", "mode", "winograd_conv", "faster"]

_M, _A = 4, 6  # output tile, input tile
_CL = torch.channels_last

# Lavin & Gray's F(4, 3) matrices with interpolation points 0, +-1, +-2 (float64).
_BT = torch.tensor([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
                    [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]],
                   dtype=torch.float64)
_G = torch.tensor([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                   [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]],
                  dtype=torch.float64)
_AT = torch.tensor([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
                    [0, 1, -1, 8, -8, 1]], dtype=torch.float64)
_MIN_CHANNELS = 32  # below this the transforms cost more than the multiplies saved
_MODES = {"": "auto", "auto": "auto", "0": "off", "off": "off", "false": "off",
          "1": "on", "on": "on", "true": "on"}


def mode() -> str:
    """``auto``, ``off`` or ``on``, from ``MXTORCH_WINOGRAD``."""
    raw = os.environ.get("MXTORCH_WINOGRAD", "auto")
    try:
        return _MODES[raw.strip().lower()]
    except KeyError:
        raise ValueError(f"MXTORCH_WINOGRAD={raw!r}: expected auto, 0 or 1") from None


def applicable(weight: torch.Tensor, pad, stride, dilate, groups: int) -> bool:
    """Whether a 2-D convolution is one this kernel computes (3x3, stride 1, pad 1,
    no dilation or groups, float32, at least 32 input and output channels)."""
    return (weight.dim() == 4 and tuple(weight.shape[2:]) == (3, 3)
            and weight.dtype == torch.float32 and groups == 1
            and tuple(pad) == (1, 1) and tuple(stride) == (1, 1)
            and tuple(dilate) == (1, 1)
            and min(weight.shape[0], weight.shape[1]) >= _MIN_CHANNELS)


class Workspace(threading.local):
    """Flat float32 buffers reused between calls, one set per thread."""

    def __init__(self):
        self.bufs: dict[str, torch.Tensor] = {}

    def get(self, slot: str, shape: tuple) -> torch.Tensor:
        n = 1
        for s in shape:
            n *= s
        buf = self.bufs.get(slot)
        if buf is None or buf.numel() < n:
            buf = self.bufs[slot] = torch.empty(n)
        return buf[:n].view(shape)


def winograd_conv(weight: torch.Tensor, bias: torch.Tensor | None, data_shape,
                  relu: bool, workspace: Workspace) -> Callable:
    """``fn(x[, other])``: ``relu?(conv3x3(x, weight, pad=1) + bias [+ other])`` for
    NCHW inputs of ``data_shape``; the result is a fresh channels-last NCHW tensor."""
    k, c = weight.shape[:2]
    n, _, h, w = data_shape
    th, tw = -(-h // _M), -(-w // _M)
    nt = n * th * tw
    g = _G.to(weight.device)
    u = torch.einsum("ai,kcij,bj->abck", g, weight.double(), g)
    u = u.reshape(_A * _A, c, k).float().contiguous()
    bt = torch.kron(_BT, _BT).float().to(weight.device)   # (36, 36) on row-major tiles
    at = torch.kron(_AT, _AT).float().to(weight.device)   # (16, 36)
    b = torch.zeros(k, device=weight.device) if bias is None else bias.float()
    cropped = bool(h % _M or w % _M)
    ws = workspace

    def fn(x: torch.Tensor, other: torch.Tensor | None = None) -> torch.Tensor:
        xp = ws.get("pad", (n, th * _M + 2, tw * _M + 2, c))
        xp[:, 0].zero_()
        xp[:, h + 1:].zero_()
        xp[:, 1:h + 1, 0].zero_()
        xp[:, 1:h + 1, w + 1:].zero_()
        xp[:, 1:h + 1, 1:w + 1].copy_(x.permute(0, 2, 3, 1))
        s = xp.stride()
        tiles = xp.as_strided((_A, _A, n, th, tw, c),
                              (s[1], s[2], s[0], _M * s[1], _M * s[2], s[3]))
        d = ws.get("tiles", (_A, _A, n, th, tw, c))
        d.copy_(tiles)
        v = torch.mm(bt, d.view(_A * _A, -1), out=ws.get("v", (_A * _A, nt * c)))
        m = torch.bmm(v.view(_A * _A, nt, c), u, out=ws.get("m", (_A * _A, nt, k)))
        y = torch.mm(at, m.view(_A * _A, -1), out=ws.get("y", (_M * _M, nt * k)))
        y = y.view(_M, _M, n, th, tw, k).permute(2, 3, 0, 4, 1, 5)
        if cropped:
            full = ws.get("full", (n, th, _M, tw, _M, k))
            torch.add(y, b, out=full)
            out = full.view(n, th * _M, tw * _M, k)[:, :h, :w].contiguous()
        else:
            out = torch.empty(n, h, w, k, device=x.device)
            torch.add(y, b, out=out.view(n, th, _M, tw, _M, k))
        if other is not None:
            out.add_(other.permute(0, 2, 3, 1))
        if relu:
            out.relu_()
        return out.permute(0, 3, 1, 2)
    return fn


def faster(first: Callable, second: Callable, args: tuple, rounds: int = 3) -> tuple:
    """Time two kernels on ``args``, interleaved, after one warm-up call each: the best
    seconds of each, ``(t_first, t_second)``."""
    best = [float("inf"), float("inf")]
    for f in (first, second):
        f(*args)
    for _ in range(rounds):
        for i, f in enumerate((first, second)):
            t0 = time.perf_counter()
            f(*args)
            best[i] = min(best[i], time.perf_counter() - t0)
    return best[0], best[1]

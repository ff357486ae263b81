"""Winograd F(4x4, 3x3) and F(2x2, 3x3) convolutions for the oneDNN inference fusion on CPU.

A 3x3 stride-1 convolution computed tile by tile with Winograd's minimal filtering
algorithm (Lavin & Gray, 2015) needs 36 multiplies per 4x4 output tile and channel pair
instead of 144 (F(4x4, 3x3), :data:`F4`), or 16 per 2x2 tile instead of 36 (:data:`F2`).
oneDNN has a Winograd kernel only for AVX-512. Here the tile transforms are two small C
loops (:mod:`.native`): one reads the image and writes the transformed tiles, the other
turns the products back into the output with bias, residual sum and ReLU applied in the
same pass. Where input and output channels are at most 256 together (the transformed
weights then stay in cache) and torch has MKL, one C loop does it all block by block:
transform a block of tiles, mix its channels with MKL's single-threaded ``sgemm``
(:func:`.gemm.mkl_entry_points`), transform back, so the transformed tiles
never leave the cache (resnet18 b16: 30% faster on the 64-channel stage, 20% on 128).
Otherwise the channel mixes are one batched GEMM (``torch.bmm``) between the two loops. Without a C
compiler the transforms run as dense torch products (kron-product matrices), which take
several passes over memory and win only on the larger stages. It pays where channels
are many and loses where the transforms or the larger transformed weights (4x for F4,
16/9 for F2) dominate, so :mod:`.fusion` times the direct convolution and both
algorithms on the real shape when the program is compiled and keeps the fastest
(``MXTORCH_WINOGRAD``: ``auto``, the default; ``0`` never; ``1`` always F4, where
applicable). Results equal direct convolution within float32 rounding (relative error
about 1e-5 of the output's range for F4, less for F2).

Intermediate buffers come from a :class:`Workspace` shared by the kernels of one
compiled program (they run one after another), as MXNet's ``static_alloc`` keeps one
memory plan per graph; each thread has its own. Large transforms are split between the
calling thread and helper threads (:class:`_Splitter`); the C loops release the GIL.
"""
from __future__ import annotations

import ctypes
import os
import queue
import threading
import time
from functools import partial
from typing import Callable, NamedTuple

import torch

from . import gemm, native

__all__ = ["Workspace", "Tiles", "F4", "F2", "applicable", "mode", "winograd_conv",
           "few_tiles", "timings", "native_transforms"]

_CL = torch.channels_last


class Tiles(NamedTuple):
    """One Winograd F(m x m, 3x3) algorithm: ``m`` output and ``a = m + 2`` input pixels
    per tile side, its matrices (float64) and its C entry points."""
    m: int
    a: int
    bt: torch.Tensor   # (a, a): input transform
    g: torch.Tensor    # (a, 3): weight transform
    at: torch.Tensor   # (m, a): output transform
    c_input: str
    c_output: str
    c_fused: str


_t = partial(torch.tensor, dtype=torch.float64)
#: Lavin & Gray's F(4, 3) with interpolation points 0, +-1, +-2: 36 multiplies per 16
#: outputs; the transformed weights are 4x the size of the weights.
F4 = Tiles(4, 6,
           _t([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
               [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]),
           _t([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
               [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]]),
           _t([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
               [0, 1, -1, 8, -8, 1]]),
           "wg_input", "wg_output", "wg_fused")
#: F(2, 3) with points 0, +-1: 16 multiplies per 4 outputs, weights 16/9 the size. It
#: wins where F(4, 3) is bound by reading its weights (few tiles: batch 1, 14x14 maps).
F2 = Tiles(2, 4,
           _t([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]),
           _t([[1, 0, 0], [1 / 2, 1 / 2, 1 / 2], [1 / 2, -1 / 2, 1 / 2], [0, 0, 1]]),
           _t([[1, 1, 1, 0], [0, 1, -1, -1]]),
           "wg2_input", "wg2_output", "wg2_fused")
del _t
_MIN_CHANNELS = 32  # below this the transforms cost more than the multiplies saved
_FEW_TILES = 64
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


def few_tiles(data_shape) -> bool:
    """Whether F4 has so few tiles on ``data_shape`` (under 64, the rows of its GEMMs)
    that reading its 4x larger weights bounds it, and F2 may be faster."""
    n, _, h, w = data_shape
    return n * -(-h // F4.m) * -(-w // F4.m) < _FEW_TILES


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


_C_SOURCE = r"""
/* Winograd F(4x4, 3x3) and F(2x2, 3x3) tile transforms (graph/backends/cpu_tuned/winograd.py).
   Channels innermost: images are NHWC, transformed tiles are (A*A, tiles, channels) for
   input tiles of A = M + 2 pixels and output tiles of M. A row transform maps A lanes of
   n channels to A (input) or M (output) lanes; its pointers are restrict parameters so
   that the compiler vectorizes the lane loop. The tile loops are written
   once and inlined into each size's entry points, where the size is a constant. */
#define CB 64
#define R restrict
#define AMAX 6
#define MMAX 4

#define INLINE static inline __attribute__((always_inline))

/* F(4, 3), points 0, +-1, +-2: o_i = sum_a BT[i][a] d_a */
static inline void bt6(const float *R d0, const float *R d1, const float *R d2,
                       const float *R d3, const float *R d4, const float *R d5,
                       float *R o0, float *R o1, float *R o2, float *R o3, float *R o4,
                       float *R o5, int n) {
    for (int q = 0; q < n; q++) {
        float a0 = d0[q], a1 = d1[q], a2 = d2[q], a3 = d3[q], a4 = d4[q], a5 = d5[q];
        o0[q] = 4.f * a0 - 5.f * a2 + a4;
        o1[q] = -4.f * (a1 + a2) + a3 + a4;
        o2[q] = 4.f * (a1 - a2) - a3 + a4;
        o3[q] = 2.f * (a3 - a1) - a2 + a4;
        o4[q] = 2.f * (a1 - a3) - a2 + a4;
        o5[q] = 4.f * a1 - 5.f * a3 + a5;
    }
}

/* F(4, 3): o_s = sum_j AT[s][j] m_j */
static inline void at6(const float *R m0, const float *R m1, const float *R m2,
                       const float *R m3, const float *R m4, const float *R m5,
                       float *R o0, float *R o1, float *R o2, float *R o3, int n) {
    for (int q = 0; q < n; q++) {
        float p12 = m1[q] + m2[q], d12 = m1[q] - m2[q];
        float p34 = m3[q] + m4[q], d34 = m3[q] - m4[q];
        o0[q] = m0[q] + p12 + p34;
        o1[q] = d12 + 2.f * d34;
        o2[q] = p12 + 4.f * p34;
        o3[q] = d12 + 8.f * d34 + m5[q];
    }
}

/* F(2, 3), points 0, +-1 */
static inline void bt4(const float *R d0, const float *R d1, const float *R d2,
                       const float *R d3, float *R o0, float *R o1, float *R o2,
                       float *R o3, int n) {
    for (int q = 0; q < n; q++) {
        float a0 = d0[q], a1 = d1[q], a2 = d2[q], a3 = d3[q];
        o0[q] = a0 - a2;
        o1[q] = a1 + a2;
        o2[q] = a2 - a1;
        o3[q] = a1 - a3;
    }
}

static inline void at4(const float *R m0, const float *R m1, const float *R m2,
                       const float *R m3, float *R o0, float *R o1, int n) {
    for (int q = 0; q < n; q++) {
        o0[q] = m0[q] + m1[q] + m2[q];
        o1[q] = m1[q] - m2[q] - m3[q];
    }
}

/* the input (B^T) and output (A^T) row transforms of tile size a (constant where the
   tile loops are instantiated, so the branch folds away) */
INLINE void bt_rows(int a, const float **s, float **o, int n) {
    if (a == 6)
        bt6(s[0], s[1], s[2], s[3], s[4], s[5], o[0], o[1], o[2], o[3], o[4], o[5], n);
    else
        bt4(s[0], s[1], s[2], s[3], o[0], o[1], o[2], o[3], n);
}

INLINE void at_rows(int a, const float **s, float **o, int n) {
    if (a == 6)
        at6(s[0], s[1], s[2], s[3], s[4], s[5], o[0], o[1], o[2], o[3], n);
    else
        at4(s[0], s[1], s[2], s[3], o[0], o[1], n);
}

/* dst = relu?(y + bias [+ other]) over n lanes */
static inline void finish(const float *R y, const float *R bias, const float *R other,
                          float *R dst, int relu, int n) {
    if (other) {
        if (relu)
            for (int q = 0; q < n; q++) {
                float s = y[q] + bias[q] + other[q];
                dst[q] = s > 0.f ? s : 0.f;
            }
        else
            for (int q = 0; q < n; q++) dst[q] = y[q] + bias[q] + other[q];
    } else if (relu) {
        for (int q = 0; q < n; q++) {
            float s = y[q] + bias[q];
            dst[q] = s > 0.f ? s : 0.f;
        }
    } else {
        for (int q = 0; q < n; q++) dst[q] = y[q] + bias[q];
    }
}

/* x (n,h,w,c) -> v (A*A, nt, c) for tiles [t0, t1), tile t at row t - base of v;
   padding 1 reads as zeros */
INLINE void input_tiles(const float *x, float *v, int n, int h, int w, int c, int th,
                        int tw, long long t0, long long t1, long long nt, long long base,
                        const int A, const int M) {
    static const float zeros[CB];
    float t[AMAX][AMAX][CB];
    for (long long tile = t0; tile < t1; tile++) {
        long long b = tile / ((long long)th * tw);
        int r = (int)(tile % ((long long)th * tw)), ty = r / tw, tx = r % tw;
        for (int c0 = 0; c0 < c; c0 += CB) {
            int cn = c - c0 < CB ? c - c0 : CB;
            const float *src[AMAX];
            float *dst[AMAX];
            for (int e = 0; e < A; e++) {   /* columns of the tile: transform the rows */
                int xx = tx * M + e - 1;
                for (int a = 0; a < A; a++) {
                    int yy = ty * M + a - 1;
                    src[a] = (yy < 0 || yy >= h || xx < 0 || xx >= w) ? zeros
                        : x + ((b * h + yy) * w + xx) * c + c0;
                    dst[a] = t[a][e];
                }
                bt_rows(A, src, dst, cn);
            }
            for (int i = 0; i < A; i++) {   /* rows: transform the columns */
                for (int j = 0; j < A; j++) {
                    src[j] = t[i][j];
                    dst[j] = v + ((long long)(i * A + j) * nt + tile - base) * c + c0;
                }
                bt_rows(A, src, dst, cn);
            }
        }
    }
}

/* m (A*A, nt, k) -> out (n,h,w,k) = relu?(A^T m A + bias [+ other]) for tiles
   [t0, t1), tile t at row t - base of m */
INLINE void output_tiles(const float *m, const float *bias, const float *other,
                         float *out, int n, int h, int w, int k, int th, int tw, int relu,
                         long long t0, long long t1, long long nt, long long base,
                         const int A, const int M) {
    float t[AMAX][MMAX][CB], y[MMAX][MMAX][CB];
    long long step = nt * k;
    for (long long tile = t0; tile < t1; tile++) {
        long long b = tile / ((long long)th * tw);
        int r = (int)(tile % ((long long)th * tw)), ty = r / tw, tx = r % tw;
        for (int k0 = 0; k0 < k; k0 += CB) {
            int kn = k - k0 < CB ? k - k0 : CB;
            const float *src[AMAX];
            float *dst[AMAX];
            for (int i = 0; i < A; i++) {
                const float *s = m + ((long long)(i * A) * nt + tile - base) * k + k0;
                for (int j = 0; j < A; j++) src[j] = s + j * step;
                for (int e = 0; e < M; e++) dst[e] = t[i][e];
                at_rows(A, src, dst, kn);
            }
            for (int e = 0; e < M; e++) {
                for (int i = 0; i < A; i++) src[i] = t[i][e];
                for (int rr = 0; rr < M; rr++) dst[rr] = y[rr][e];
                at_rows(A, src, dst, kn);
            }
            for (int rr = 0; rr < M && ty * M + rr < h; rr++)
                for (int ss = 0; ss < M && tx * M + ss < w; ss++) {
                    long long off = ((b * h + ty * M + rr) * w + tx * M + ss) * k + k0;
                    finish(y[rr][ss], bias + k0, other ? other + off : 0, out + off, relu, kn);
                }
        }
    }
}

typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *,
                         const int *, const float *, const float *, const int *,
                         const float *, const int *, const float *, float *, const int *);
typedef int (*local_threads_fn)(int);

/* transform, channel mixes and inverse for tiles [t0, t1), in blocks of tb tiles whose
   transformed tiles stay in cache: work holds A*A*tb*(c + k) floats. The mixes are
   MKL's sgemm on this thread alone (column-major: m_i^T = u_i^T v_i^T). */
INLINE void fused_tiles(const float *x, const float *u, const float *bias,
                        const float *other, float *out, int n, int h, int w, int c, int k,
                        int th, int tw, int relu, void *gemm, void *local, float *work,
                        int tb, long long t0, long long t1, const int A, const int M) {
    const float one = 1.f, zero = 0.f;
    const char no = 'N';
    int before = ((local_threads_fn)local)(1);
    float *v = work, *m = work + (long long)A * A * tb * c;
    for (long long b0 = t0; b0 < t1; b0 += tb) {
        long long b1 = b0 + tb < t1 ? b0 + tb : t1;
        int nb = (int)(b1 - b0);
        input_tiles(x, v, n, h, w, c, th, tw, b0, b1, nb, b0, A, M);
        for (int i = 0; i < A * A; i++)
            ((sgemm_fn)gemm)(&no, &no, &k, &nb, &c, &one, u + (long long)i * c * k, &k,
                             v + (long long)i * nb * c, &c, &zero,
                             m + (long long)i * nb * k, &k);
        output_tiles(m, bias, other, out, n, h, w, k, th, tw, relu, b0, b1, nb, b0, A, M);
    }
    ((local_threads_fn)local)(before);
}

/* the C entry points of one tile size: PREFIX_input, PREFIX_output, PREFIX_fused */
#define ENTRY_POINTS(PREFIX, A, M)                                                        \
    void PREFIX##_input(const float *x, float *v, int n, int h, int w, int c, int th,     \
                        int tw, long long t0, long long t1) {                             \
        input_tiles(x, v, n, h, w, c, th, tw, t0, t1, (long long)n * th * tw, 0, A, M);   \
    }                                                                                     \
    void PREFIX##_output(const float *m, const float *bias, const float *other,           \
                         float *out, int n, int h, int w, int k, int th, int tw,          \
                         int relu, long long t0, long long t1) {                          \
        output_tiles(m, bias, other, out, n, h, w, k, th, tw, relu, t0, t1,               \
                     (long long)n * th * tw, 0, A, M);                                    \
    }                                                                                     \
    void PREFIX##_fused(const float *x, const float *u, const float *bias,                \
                        const float *other, float *out, int n, int h, int w, int c,       \
                        int k, int th, int tw, int relu, void *gemm, void *local,         \
                        float *work, int tb, long long t0, long long t1) {                \
        fused_tiles(x, u, bias, other, out, n, h, w, c, k, th, tw, relu, gemm, local,     \
                    work, tb, t0, t1, A, M);                                              \
    }

ENTRY_POINTS(wg, 6, 4)
ENTRY_POINTS(wg2, 4, 2)
"""
_P, _I, _L = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong
_SIGNATURES = {name: sig for prefix in ("wg", "wg2") for name, sig in (
    (prefix + "_input", (None, [_P, _P] + [_I] * 6 + [_L, _L])),
    (prefix + "_output", (None, [_P] * 4 + [_I] * 7 + [_L, _L])),
    (prefix + "_fused", (None, [_P] * 5 + [_I] * 8 + [_P] * 3 + [_I, _L, _L])))}
_SPLIT_FLOATS = 1 << 20  # transforms writing fewer floats run on the calling thread only
# Blocked kernels: input and output channels at most this many together (the transformed
# weights, 2.4 MB for F4 at 128, stay in cache while every block reads them all), blocks of
# tiles whose transformed tiles take about this many floats (2.4 MB), and block bounds.
_BLOCKED_CHANNELS = 256
_BLOCK_FLOATS = 36 * 128 * 128
_MIN_BLOCK, _MAX_BLOCK = 16, 128


def native_transforms():
    """The compiled transform library, or None (no compiler, or ``MXTORCH_NATIVE=0``)."""
    return native.load("winograd", _C_SOURCE, _SIGNATURES)


class _Splitter:
    """Runs a C loop over ``[0, total)`` in parts: one on the calling thread, the others
    on persistent helper threads (ctypes releases the GIL during the call). One caller
    at a time; a concurrent caller, or one in a forked child before its helpers exist,
    runs the whole range itself."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pid = None
        self._jobs: list = []
        self._done: queue.SimpleQueue = queue.SimpleQueue()

    def _helpers(self, count: int) -> list:
        if self._pid != os.getpid():   # helper threads do not survive a fork
            self._pid, self._jobs, self._done = os.getpid(), [], queue.SimpleQueue()
        while len(self._jobs) < count:
            jobs: queue.SimpleQueue = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(jobs, self._done), daemon=True,
                             name="mxtorch-winograd").start()
            self._jobs.append(jobs)
        return self._jobs[:count]

    @staticmethod
    def _serve(jobs: queue.SimpleQueue, done: queue.SimpleQueue) -> None:
        while True:
            fn, args = jobs.get()
            try:
                fn(*args)
                done.put(None)
            except Exception as err:  # noqa: BLE001 -- handed to the caller
                done.put(err)

    def run(self, fn, args: tuple, total: int, parts: int, each: tuple = ((),)) -> None:
        """``fn(*args, *each[i], lo, hi)`` for part ``i`` of ``[0, total)``; ``each``
        gives every part its own arguments (its scratch buffer) and bounds the parts."""
        parts = min(parts, len(each)) if len(each) > 1 else parts
        if parts < 2 or total < parts or not self._lock.acquire(blocking=False):
            fn(*args, *each[0], 0, total)
            return
        helpers: list = []
        errors: list = []
        try:
            helpers = self._helpers(parts - 1)
            bounds = [total * i // parts for i in range(parts + 1)]
            for i, jobs in enumerate(helpers, start=1):
                mine = each[i] if len(each) > 1 else each[0]
                jobs.put((fn, args + tuple(mine) + (bounds[i], bounds[i + 1])))
            fn(*args, *each[0], bounds[0], bounds[1])
        finally:
            errors = [self._done.get() for _ in helpers]   # never leave a part running
            self._lock.release()
        for err in errors:
            if err is not None:
                raise err


_SPLITTER = _Splitter()


def winograd_conv(weight: torch.Tensor, bias: torch.Tensor | None, data_shape,
                  relu: bool, workspace: Workspace, transforms: str = "auto",
                  tiles: Tiles = F4) -> Callable:
    """``fn(x[, other])``: ``relu?(conv3x3(x, weight, pad=1) + bias [+ other])`` for
    NCHW inputs of ``data_shape``; the result is a fresh channels-last NCHW tensor.

    ``transforms``: ``"native"`` (the compiled C loops), ``"torch"`` (dense torch
    products) or ``"auto"`` (native where a compiler is available). ``tiles``: the
    algorithm, :data:`F4` or :data:`F2`."""
    if transforms not in ("auto", "native", "torch"):
        raise ValueError(f"winograd_conv: transforms={transforms!r}: expected auto, "
                         "native or torch")
    if tiles is not F4 and tiles is not F2:
        raise ValueError(f"winograd_conv: tiles must be F4 or F2, got {tiles!r}")
    k, c = weight.shape[:2]
    g = tiles.g.to(weight.device)
    u = torch.einsum("ai,kcij,bj->abck", g, weight.double(), g)
    u = u.reshape(tiles.a * tiles.a, c, k).float().contiguous()
    b = torch.zeros(k, device=weight.device) if bias is None else bias.float().contiguous()
    lib = None
    if transforms != "torch" and weight.device.type == "cpu":
        lib = native_transforms()
        if lib is None and transforms == "native":
            raise RuntimeError("winograd_conv: the native transforms are not available "
                               "(no C compiler, or MXTORCH_NATIVE=0)")
    if lib is not None:
        return _native_conv(lib, tiles, u, b, tuple(data_shape), relu, workspace)
    return _torch_conv(tiles, u, b, tuple(data_shape), relu, workspace)


def _native_conv(lib, tiles: Tiles, u: torch.Tensor, b: torch.Tensor, data_shape: tuple,
                 relu: bool, ws: Workspace) -> Callable:
    """Transforms in C (one pass each), channel mixes in one bmm; or, where the
    transformed weights fit in cache and torch has MKL, all three in one C loop, block by
    block of tiles (``wg_fused``)."""
    c, k = u.shape[1:]
    n, _, h, w = data_shape
    th, tw = -(-h // tiles.m), -(-w // tiles.m)
    nt = n * th * tw
    aa = tiles.a * tiles.a
    dims = (n, h, w)
    mkl = gemm.mkl_entry_points() if c + k <= _BLOCKED_CHANNELS else None
    if mkl is not None:
        tb = max(_MIN_BLOCK, min(_MAX_BLOCK, _BLOCK_FLOATS // (aa * (c + k))))
        parts = max(1, min(torch.get_num_threads(), nt // _MIN_BLOCK))
        c_fused = getattr(lib, tiles.c_fused)
    else:
        parts_in = torch.get_num_threads() if aa * nt * c >= _SPLIT_FLOATS else 1
        parts_out = torch.get_num_threads() if aa * nt * k >= _SPLIT_FLOATS else 1
        c_input, c_output = getattr(lib, tiles.c_input), getattr(lib, tiles.c_output)

    def fn(x: torch.Tensor, other: torch.Tensor | None = None) -> torch.Tensor:
        if tuple(x.shape) != data_shape or x.dtype != torch.float32 or x.is_cuda:
            raise ValueError(f"winograd: built for float32 CPU data of shape {data_shape}, "
                             f"got {x.dtype} {tuple(x.shape)} on {x.device}")
        x = x.contiguous(memory_format=_CL)
        out = torch.empty((n, k, h, w), memory_format=_CL)
        other_ptr = None
        if other is not None:
            if tuple(other.shape) != (n, k, h, w) or other.dtype != torch.float32:
                raise ValueError(f"winograd: the summed input must be float32 of shape "
                                 f"{(n, k, h, w)}, got {other.dtype} {tuple(other.shape)}")
            other = other.contiguous(memory_format=_CL)
            other_ptr = other.data_ptr()
        if mkl is not None:
            each = tuple((ws.get(f"block{i}", (aa * tb * (c + k),)).data_ptr(), tb)
                         for i in range(parts))
            _SPLITTER.run(c_fused, (x.data_ptr(), u.data_ptr(), b.data_ptr(), other_ptr,
                                    out.data_ptr(), *dims, c, k, th, tw, int(relu), *mkl),
                          nt, parts, each)
            return out
        v = ws.get("v", (aa, nt, c))
        _SPLITTER.run(c_input, (x.data_ptr(), v.data_ptr(), *dims, c, th, tw),
                      nt, parts_in)
        m = torch.bmm(v, u, out=ws.get("m", (aa, nt, k)))
        _SPLITTER.run(c_output, (m.data_ptr(), b.data_ptr(), other_ptr, out.data_ptr(),
                                 *dims, k, th, tw, int(relu)), nt, parts_out)
        return out
    return fn


def _torch_conv(tiles: Tiles, u: torch.Tensor, b: torch.Tensor, data_shape: tuple,
                relu: bool, ws: Workspace) -> Callable:
    """Transforms as dense products with the kron-product matrices (no compiler)."""
    c, k = u.shape[1:]
    n, _, h, w = data_shape
    tm, ta = tiles.m, tiles.a
    th, tw = -(-h // tm), -(-w // tm)
    nt = n * th * tw
    bt = torch.kron(tiles.bt, tiles.bt).float().to(u.device)  # (ta*ta, ta*ta) on row-major tiles
    at = torch.kron(tiles.at, tiles.at).float().to(u.device)  # (tm*tm, ta*ta)
    cropped = bool(h % tm or w % tm)

    def fn(x: torch.Tensor, other: torch.Tensor | None = None) -> torch.Tensor:
        xp = ws.get("pad", (n, th * tm + 2, tw * tm + 2, c))
        xp[:, 0].zero_()
        xp[:, h + 1:].zero_()
        xp[:, 1:h + 1, 0].zero_()
        xp[:, 1:h + 1, w + 1:].zero_()
        xp[:, 1:h + 1, 1:w + 1].copy_(x.permute(0, 2, 3, 1))
        s = xp.stride()
        windows = xp.as_strided((ta, ta, n, th, tw, c),
                                (s[1], s[2], s[0], tm * s[1], tm * s[2], s[3]))
        d = ws.get("tiles", (ta, ta, n, th, tw, c))
        d.copy_(windows)
        v = torch.mm(bt, d.view(ta * ta, -1), out=ws.get("v", (ta * ta, nt * c)))
        m = torch.bmm(v.view(ta * ta, nt, c), u, out=ws.get("m", (ta * ta, nt, k)))
        y = torch.mm(at, m.view(ta * ta, -1), out=ws.get("y", (tm * tm, nt * k)))
        y = y.view(tm, tm, n, th, tw, k).permute(2, 3, 0, 4, 1, 5)
        if cropped:
            full = ws.get("full", (n, th, tm, tw, tm, k))
            torch.add(y, b, out=full)
            out = full.view(n, th * tm, tw * tm, k)[:, :h, :w].contiguous()
        else:
            out = torch.empty(n, h, w, k, device=x.device)
            torch.add(y, b, out=out.view(n, th, tm, tw, tm, k))
        if other is not None:
            out.add_(other.permute(0, 2, 3, 1))
        if relu:
            out.relu_()
        return out.permute(0, 3, 1, 2)
    return fn


def timings(kernels, args: tuple, rounds: int = 3) -> list[float]:
    """Time kernels on ``args``, interleaved, after one warm-up call each: the best
    seconds of each, in order."""
    best = [float("inf")] * len(kernels)
    for f in kernels:
        f(*args)
    for _ in range(rounds):
        for i, f in enumerate(kernels):
            t0 = time.perf_counter()
            f(*args)
            best[i] = min(best[i], time.perf_counter() - t0)
    return best

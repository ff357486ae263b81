"""Float32 matrix products on CPU without OpenMP's wake-ups: MKL's GEMM in parts on a
small spinning thread pool.

torch's CPU ``mm`` calls MKL, which runs each product as OpenMP parallel regions. Under
``OMP_WAIT_POLICY=passive`` (or whenever the workers have gone to sleep) every region
wakes a sleeping worker thread first, 10-25 us on a small machine and 2-4 times per
product, which in a training step of small dense layers costs as much as the products
themselves. MXNet's engine kept its workers busy. Here the product is cut into column
(or row) blocks and each block is one call of MKL's *single-threaded* ``sgemm``: the
calling thread does one block, the pool's helper threads the others. A helper spins for
a short while (``SPIN_US``) after its last block before it sleeps, so the products of one
step find it awake; then it sleeps in the kernel and costs nothing.

The pool is C (:mod:`.native`), started on first use, rebuilt after a fork, and has one
owner at a time: a second thread calling meanwhile runs its whole product on itself.
``MKL`` is reached through the ``sgemm_`` that torch's own library exports; where torch
has no MKL, no C compiler is available or ``MXTORCH_GEMM=0``, :func:`available` is
false and the callers use ``torch.mm``. Results equal ``torch.mm``'s up to float32
summation order.
"""
from __future__ import annotations

import ctypes
import logging
import os
import platform

import torch

from ....ops import tuning
from . import native

__all__ = ["available", "mm", "addmm", "linear", "applies", "planned", "mkl_entry_points"]

_LOG = logging.getLogger(__name__)

SPIN_US = 100            # a helper's spin after its last block, before it sleeps
_PARALLEL_MACS = 1 << 17  # products with fewer multiply-adds run on the calling thread
_LINEAR_MACS = 1 << 24    # smaller dense layers stay on F.linear (autograd.Function costs more)

_C_SOURCE = r"""
/* A thread pool running MKL's single-threaded sgemm on blocks of one product
   (mxtorch/graph/backends/cpu_tuned/gemm.py). Row-major interface; MKL is column-major,
   so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T. */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>

typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *, const int *,
                         const float *, const float *, const int *, const float *,
                         const int *, const float *, float *, const int *);
typedef int (*local_threads_fn)(int);

typedef struct {
    int ta, tb, m, n, k, lda, ldb, ldc, parts, by_cols;
    float alpha, beta;
    const float *a, *b;
    float *c;
} job_t;

#define MAX_HELPERS 63
static sgemm_fn g_sgemm;
static local_threads_fn g_local;
static long g_spin_ns;
static job_t g_job;
static atomic_uint g_gen;       /* bumped once per parallel product */
static atomic_int g_pending;    /* helpers still working on the current product */
static atomic_int g_sleepers;   /* helpers waiting in the kernel */
static atomic_int g_busy;       /* the pool has an owner */
static int g_helpers;           /* helper threads started */
static unsigned g_born[MAX_HELPERS + 1];   /* g_gen when each helper was created */

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Block p of parts: a range of C's columns (or rows), in multiples of 16. */
static void run_block(const job_t *j, int p) {
    int total = j->by_cols ? j->n : j->m;
    int step = ((total + j->parts - 1) / j->parts + 15) / 16 * 16;
    int lo = p * step, hi = lo + step;
    if (hi > total) hi = total;
    if (lo >= hi) return;
    int len = hi - lo;
    char ta = j->ta ? 'T' : 'N', tb = j->tb ? 'T' : 'N';
    const float *a = j->a, *b = j->b;
    float *c = j->c;
    int m = j->m, n = j->n;
    if (j->by_cols) {
        b += j->tb ? (long)lo * j->ldb : lo;
        c += lo;
        n = len;
    } else {
        a += j->ta ? lo : (long)lo * j->lda;
        c += (long)lo * j->ldc;
        m = len;
    }
    g_sgemm(&tb, &ta, &n, &m, &j->k, &j->alpha, b, &j->ldb, a, &j->lda, &j->beta, c, &j->ldc);
}

static void *helper(void *arg) {
    int id = (int)(long)arg;
    g_local(1);
    unsigned seen = g_born[id];
    for (;;) {
        long deadline = now_ns() + g_spin_ns;
        unsigned cur;
        int spins = 0;
        while ((cur = atomic_load_explicit(&g_gen, memory_order_acquire)) == seen) {
            relax();
            if (++spins % 64 == 0 && now_ns() > deadline) {
                atomic_fetch_add(&g_sleepers, 1);
                if (atomic_load(&g_gen) == seen)
                    syscall(SYS_futex, &g_gen, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
                atomic_fetch_sub(&g_sleepers, 1);
                deadline = now_ns() + g_spin_ns;
            }
        }
        seen = cur;
        if (id < g_job.parts) run_block(&g_job, id);
        atomic_fetch_sub_explicit(&g_pending, 1, memory_order_release);
    }
    return NULL;
}

static void after_fork_child(void) {   /* the helpers do not exist in the child */
    g_helpers = 0;
    atomic_store(&g_busy, 0);
    atomic_store(&g_sleepers, 0);
    atomic_store(&g_pending, 0);
}

void mxg_init(void *sgemm, void *local_threads, long spin_ns) {
    g_sgemm = (sgemm_fn)sgemm;
    g_local = (local_threads_fn)local_threads;
    g_spin_ns = spin_ns;
    pthread_atfork(NULL, NULL, after_fork_child);
}

/* C = alpha op(A) op(B) + beta C, C m x n, op(A) m x k; row-major with leading
   dimensions; in up to `parts` blocks. Returns the number of blocks used. */
int mxg_sgemm(int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
              const float *b, int ldb, float beta, float *c, int ldc, int parts) {
    job_t j = {ta, tb, m, n, k, lda, ldb, ldc, 1, n >= m, alpha, beta, a, b, c};
    int prev = g_local(1);
    int expected = 0;
    if (parts > MAX_HELPERS + 1) parts = MAX_HELPERS + 1;
    if (parts < 2 || !atomic_compare_exchange_strong(&g_busy, &expected, 1)) {
        run_block(&j, 0);
        g_local(prev);
        return 1;
    }
    while (g_helpers < parts - 1) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        g_born[g_helpers + 1] = atomic_load(&g_gen);
        int err = pthread_create(&t, &attr, helper, (void *)(long)(g_helpers + 1));
        pthread_attr_destroy(&attr);
        if (err) break;
        g_helpers++;
    }
    if (parts > g_helpers + 1) parts = g_helpers + 1;
    j.parts = parts;
    g_job = j;
    atomic_store(&g_pending, g_helpers);
    atomic_fetch_add_explicit(&g_gen, 1, memory_order_seq_cst);
    if (atomic_load(&g_sleepers) > 0)
        syscall(SYS_futex, &g_gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    run_block(&j, 0);
    for (long spins = 1; atomic_load_explicit(&g_pending, memory_order_acquire) > 0; spins++) {
        relax();
        if (spins % 4096 == 0) sched_yield();
    }
    atomic_store(&g_busy, 0);
    g_local(prev);
    return parts;
}
"""
_I, _F, _P = ctypes.c_int, ctypes.c_float, ctypes.c_void_p
_SIGNATURES = {"mxg_init": (None, [_P, _P, ctypes.c_long]),
               "mxg_sgemm": (_I, [_I] * 5 + [_F, _P, _I, _P, _I, _F, _P, _I, _I])}
_state: dict = {}
# The pool pays where OpenMP's workers sleep between parallel regions (OMP_WAIT_POLICY=
# passive, GOMP_SPINCOUNT=0): there every region wakes one first. With the default
# policy they spin after each region, a wake-up is cheap, and a spinning worker competes
# with the pool's helper for the cores (measured: a 256x784x256 dense layer 2.2x slower).
# Read once: OpenMP reads the same variables once, when it starts.
_OPENMP_SLEEPS = (os.environ.get("OMP_WAIT_POLICY", "").strip().lower() == "passive"
                  or os.environ.get("GOMP_SPINCOUNT", "").strip() == "0")
_wrapped = torch._C._functorch.is_functorch_wrapped_tensor
_dispatch_mode = torch._C._get_dispatch_mode
_PROXY = torch._C._TorchDispatchModeKey.PROXY


def mkl_entry_points() -> tuple[int, int] | None:
    """Addresses of MKL's ``sgemm_`` and ``MKL_Set_Num_Threads_Local`` in torch's library
    (None without them, or with ``MXTORCH_GEMM=0``); looked up once."""
    if "entry" not in _state:
        _state["entry"] = (_mkl_entry_points() if native.switched_on("MXTORCH_GEMM")
                           else None)
    return _state["entry"]


def _mkl_entry_points() -> tuple[int, int] | None:
    if platform.system() != "Linux" or not torch.backends.mkl.is_available():
        return None
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    try:
        lib = ctypes.CDLL(path)
        return (ctypes.cast(lib.sgemm_, _P).value,
                ctypes.cast(lib.MKL_Set_Num_Threads_Local, _P).value)
    except (OSError, AttributeError) as err:
        _LOG.debug("gemm: MKL's entry points not found in %s (%s)", path, err)
        return None


def _library():
    """The initialized pool library, or None."""
    if "lib" in _state:
        return _state["lib"]
    lib = None
    entry = mkl_entry_points()
    if entry is not None:
        lib = native.load("gemm", _C_SOURCE, _SIGNATURES)
    if lib is not None:
        lib.mxg_init(entry[0], entry[1], SPIN_US * 1000)
        if not _self_test(lib):
            _LOG.debug("gemm: MKL's sgemm_ disagrees with torch.mm; not used")
            lib = None
    _state["lib"] = lib
    return lib


def _self_test(lib) -> bool:
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(37, 19, generator=gen), torch.randn(19, 45, generator=gen)
    out = torch.empty(37, 45)
    _run(lib, a, b, out, 0.0, 2)
    return bool(torch.allclose(out, a @ b, rtol=1e-4, atol=1e-4))


def available() -> bool:
    """Whether products run on the pool (a C compiler, torch with MKL, on Linux)."""
    return _library() is not None


def _layout(shape, stride) -> tuple[int, int] | None:
    """``(transposed, leading dimension)`` of a 2-D operand as MKL takes it, or None when
    it has no unit stride (it must be made contiguous first)."""
    rows, cols = shape
    s0, s1 = stride
    if s1 == 1 and s0 >= max(1, cols):
        return 0, s0
    if s0 == 1 and s1 >= max(1, rows):
        return 1, s1
    return None


def _operand(t: torch.Tensor) -> tuple[torch.Tensor, int, int]:
    """``(tensor, transposed, leading dimension)`` of a 2-D float32 operand."""
    lay = _layout(t.shape, t.stride())
    if lay is None:
        t = t.contiguous()
        lay = (0, max(1, t.shape[1]))
    return t, lay[0], lay[1]


def _run(lib, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, beta: float,
         threads: int) -> None:
    m, k = a.shape
    n = b.shape[1]
    a, ta, lda = _operand(a)
    b, tb, ldb = _operand(b)
    parts = threads if m * n * k >= _PARALLEL_MACS else 1
    lib.mxg_sgemm(ta, tb, m, n, k, 1.0, a.data_ptr(), lda, b.data_ptr(), ldb, beta,
                  out.data_ptr(), max(1, n), parts)


_PLAIN = (torch.Tensor, torch.nn.Parameter)


def _fits(t: torch.Tensor) -> bool:
    """A dense 2-D float32 CPU operand MKL's 32-bit interface can take."""
    return (t.dim() == 2 and t.dtype == torch.float32 and t.device.type == "cpu"
            and t.layout == torch.strided and t.numel() < 2**31)


def _usable(*ts: torch.Tensor) -> bool:
    """Plain operands that fit, outside tracing and functorch transforms (which could not
    see a product made in C)."""
    for t in ts:
        if type(t) not in _PLAIN or not _fits(t) or t.is_conj() or t.is_neg() or _wrapped(t):
            return False
    return not (torch.jit.is_tracing() or torch.compiler.is_compiling()
                or _dispatch_mode(_PROXY) is not None)


def _fill(out: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``out[:] = bias`` (broadcast) on the calling thread: an OpenMP worker woken for it
    would find the pool's helper spinning on its core."""
    threads = tuning.single()
    try:
        return out.copy_(bias.expand(out.shape))
    finally:
        tuning.restore(threads)


def _recording(*ts: torch.Tensor) -> bool:
    return torch.is_grad_enabled() and any(t.requires_grad for t in ts)


def mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` for 2-D tensors (any strides); ``torch.mm`` where the pool does not apply
    (not float32 CPU, the pool unavailable, or under tracing)."""
    lib = _library()
    if lib is None or _recording(a, b) or not _usable(a, b) or a.shape[1] != b.shape[0]:
        return torch.mm(a, b)
    out = torch.empty(a.shape[0], b.shape[1])
    if out.numel():
        if a.shape[1] == 0:
            return out.zero_()
        _run(lib, a, b, out, 0.0, torch.get_num_threads())
    return out


def addmm(bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``bias + a @ b`` with ``bias`` broadcast over the rows (a ``(n,)`` or ``(1, n)``
    vector, or a full ``(m, n)`` matrix)."""
    lib = _library()
    if lib is None or _recording(a, b, bias) or not _usable(a, b) or \
            a.shape[1] != b.shape[0] or a.shape[1] == 0 or bias.dtype != torch.float32 or \
            bias.device.type != "cpu":
        return torch.addmm(bias, a, b)
    out = torch.empty(a.shape[0], b.shape[1])
    try:
        _fill(out, bias)
    except RuntimeError:
        return torch.addmm(bias, a, b)
    if out.numel():
        _run(lib, a, b, out, 1.0, torch.get_num_threads())
    return out


class _Linear(torch.autograd.Function):
    """``x W^T + b`` with its gradients on the pool."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        with torch.no_grad():
            wt = weight.t()
            return mm(x, wt) if bias is None else addmm(bias, x, wt)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        if torch.is_grad_enabled():   # create_graph: differentiable torch products
            return (grad @ weight if need_x else None, grad.t() @ x if need_w else None,
                    grad.sum(0) if need_b else None)
        return (mm(grad, weight) if need_x else None, mm(grad.t(), x) if need_w else None,
                grad.sum(0) if need_b else None)


def applies(x: torch.Tensor, weight: torch.Tensor) -> bool:
    """Whether :func:`linear` should run ``x W^T`` on the pool: OpenMP's workers sleep
    between regions, and the operands are 2-D float32 CPU and large enough."""
    return (_OPENMP_SLEEPS and x.dim() == 2 and weight.dim() == 2
            and x.shape[1] == weight.shape[1]
            and x.shape[0] * weight.shape[0] * weight.shape[1] >= _LINEAR_MACS
            and _usable(x, weight) and _library() is not None)


def linear(x: torch.Tensor, weight: torch.Tensor,
           bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear`` for 2-D inputs, differentiable, its products on the pool."""
    if bias is not None and (bias.dtype != torch.float32 or bias.device.type != "cpu"):
        return torch.nn.functional.linear(x, weight, bias)
    return _Linear.apply(x, weight, bias)


def planned(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None,
            threads: int = 1):
    """A function for a product whose operands will always have the shapes and strides of
    ``a``, ``b`` (and ``bias``), as in a traced program: ``fn(a, b)`` -> ``a @ b``, or
    ``fn(bias, a, b)`` -> ``bias + a @ b`` (``bias`` a row vector). The layout is worked
    out here, once; ``fn.by_address`` says, for ``a`` and ``b``, whether only the
    operand's address is read (a view starting at the same address may be passed
    instead). None where the pool does not apply or does not pay (OpenMP's workers spin
    between regions)."""
    lib = _library()
    if lib is None or not _OPENMP_SLEEPS or not (_fits(a) and _fits(b)) or \
            a.shape[1] != b.shape[0] or a.shape[1] == 0:
        return None
    (m, k), n = a.shape, b.shape[1]
    if bias is not None and (bias.dtype != torch.float32 or bias.device.type != "cpu" or
                             tuple(bias.shape) not in ((n,), (1, n), (m, n))):
        return None
    lay_a, lay_b = _layout(a.shape, a.stride()), _layout(b.shape, b.stride())
    ta, lda = lay_a or (0, max(1, k))
    tb, ldb = lay_b or (0, max(1, n))
    parts = threads if m * n * k >= _PARALLEL_MACS else 1
    call = lib.mxg_sgemm
    ldc = max(1, n)

    def product(a, b, out, beta):
        if lay_a is None:
            a = a.contiguous()
        if lay_b is None:
            b = b.contiguous()
        call(ta, tb, m, n, k, 1.0, a.data_ptr(), lda, b.data_ptr(), ldb, beta,
             out.data_ptr(), ldc, parts)
        return out

    def plain(a, b):
        return product(a, b, torch.empty(m, n), 0.0)

    def biased(bias, a, b):
        return product(a, b, _fill(torch.empty(m, n), bias), 1.0)

    fn = plain if bias is None else biased
    fn.by_address = (lay_a is not None, lay_b is not None)
    return fn

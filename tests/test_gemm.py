"""The hand-tuned backend's gemm.py: MKL's single-threaded GEMM in parts on a thread pool."""
import os
import threading

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

import mxtorch as mx
from mxtorch.graph.backends.cpu_tuned import gemm

needs_pool = pytest.mark.skipif(not gemm.available(),
                                reason="no C compiler or torch without MKL")


@pytest.fixture(autouse=True)
def _openmp_sleeps(monkeypatch):
    """The pool's callers use it where OpenMP's workers sleep (OMP_WAIT_POLICY=passive,
    as CI runs); these tests exercise it whatever the environment says."""
    monkeypatch.setattr(gemm, "_OPENMP_SLEEPS", True)


def _ref(a, b):
    return (a.double() @ b.double()).float()


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# operands as stored (a layout per case): contiguous, transposed views, a column slice
_LAYOUTS = {
    "nn": lambda m, k, n: (_rand(m, k), _rand(k, n, seed=1)),
    "nt": lambda m, k, n: (_rand(m, k), _rand(n, k, seed=1).t()),
    "tn": lambda m, k, n: (_rand(k, m).t(), _rand(k, n, seed=1)),
    "tt": lambda m, k, n: (_rand(k, m).t(), _rand(n, k, seed=1).t()),
    "strided": lambda m, k, n: (_rand(m, 2 * k)[:, ::2], _rand(k, n + 3, seed=1)[:, 1:n + 1]),
}


@needs_pool
@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("shape", [(128, 784, 256), (128, 256, 10), (10, 128, 256),
                                   (3, 5, 7), (1, 64, 1)])
def test_mm_matches_float64_for_every_layout(layout, shape):
    a, b = _LAYOUTS[layout](*shape)
    got = gemm.mm(a, b)
    assert got.shape == (shape[0], shape[2]) and got.is_contiguous()
    torch.testing.assert_close(got, _ref(a, b), rtol=1e-4, atol=1e-4)


@needs_pool
def test_mm_parts_give_the_same_bits_as_one_part():
    a, b = _rand(200, 300), _rand(300, 180, seed=1)
    lib = gemm._library()
    outs = []
    for parts in (1, 2, 3):
        out = torch.empty(200, 180)
        gemm._run(lib, a, b, out, 0.0, parts)
        outs.append(out)
    assert torch.equal(outs[0], outs[1]) and torch.equal(outs[0], outs[2])


@needs_pool
def test_mm_edge_sizes_and_fallbacks():
    assert torch.equal(gemm.mm(torch.ones(3, 0), torch.ones(0, 4)), torch.zeros(3, 4))
    assert gemm.mm(torch.ones(0, 5), torch.ones(5, 4)).shape == (0, 4)
    a64, b64 = _rand(4, 5).double(), _rand(5, 6).double()
    assert gemm.mm(a64, b64).dtype == torch.float64                  # torch.mm
    torch.testing.assert_close(gemm.mm(a64, b64), a64 @ b64)
    with pytest.raises(RuntimeError):
        gemm.mm(_rand(4, 5), _rand(6, 4))                             # torch's message


@needs_pool
@pytest.mark.parametrize("bias_shape", [(40,), (1, 40), (30, 40)])
def test_addmm_broadcasts_the_bias(bias_shape):
    a, b, bias = _rand(30, 50), _rand(40, 50, seed=1).t(), _rand(*bias_shape, seed=2)
    torch.testing.assert_close(gemm.addmm(bias, a, b), bias.double() + _ref(a, b).double(),
                               rtol=1e-4, atol=1e-4, check_dtype=False)


@needs_pool
def test_linear_gradients_match_f_linear_including_double_backward():
    x, w, b = _rand(64, 96), _rand(48, 96, seed=1), _rand(48, seed=2)
    leaves = [t.clone().requires_grad_() for t in (x, w, b)]
    refs = [t.clone().requires_grad_() for t in (x, w, b)]
    y, y_ref = gemm.linear(*leaves), F.linear(*refs)
    torch.testing.assert_close(y, y_ref, rtol=1e-4, atol=1e-4)
    g = _rand(64, 48, seed=3)
    got = torch.autograd.grad(y, leaves, g, create_graph=True)
    ref = torch.autograd.grad(y_ref, refs, g, create_graph=True)
    for p, q in zip(got, ref):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-4)
    # second order: d/dw of sum(dx^2)
    (gg,) = torch.autograd.grad(got[0].square().sum(), leaves[1])
    (gg_ref,) = torch.autograd.grad(ref[0].square().sum(), refs[1])
    torch.testing.assert_close(gg, gg_ref, rtol=1e-4, atol=1e-3)


@needs_pool
def test_linear_without_bias_and_frozen_input():
    x, w = _rand(32, 700), _rand(800, 700, seed=1).requires_grad_()
    y = gemm.linear(x, w)
    y.sum().backward()
    torch.testing.assert_close(w.grad, x.sum(0).expand(800, 700), rtol=1e-4, atol=1e-3)


@needs_pool
def test_planned_product_fixes_the_layout_once():
    a, b, bias = _rand(128, 256).t(), _rand(128, 64, seed=1), _rand(64, seed=2)
    fn = gemm.planned(a, b, threads=2)
    torch.testing.assert_close(fn(a, b), _ref(a, b), rtol=1e-4, atol=1e-4)
    a2, b2 = _rand(128, 256, seed=5).t(), _rand(128, 64, seed=6)
    torch.testing.assert_close(fn(a2, b2), _ref(a2, b2), rtol=1e-4, atol=1e-4)
    fb = gemm.planned(a, b, bias, threads=2)
    torch.testing.assert_close(fb(bias, a, b), bias + _ref(a, b), rtol=1e-4, atol=1e-4)
    odd = _rand(256, 2 * 128)[:, ::2]                     # no unit stride: copied per call
    torch.testing.assert_close(gemm.planned(odd, b)(odd, b), _ref(odd, b),
                               rtol=1e-4, atol=1e-4)
    assert gemm.planned(a.double(), b.double()) is None
    assert gemm.planned(a, b, _rand(3, 64)) is None       # bias that does not broadcast


@needs_pool
def test_tracing_sees_torch_products():
    x, w = _rand(64, 512), _rand(512, 512, seed=1)
    gm = make_fx(lambda x, w: gemm.mm(x, w) + gemm.linear(x, w))(x, w)
    targets = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    assert "aten.mm.default" in targets
    torch.testing.assert_close(gm(x, w), x @ w + x @ w.t(), rtol=1e-4, atol=1e-3)
    traced = torch.jit.trace(lambda x, w: gemm.mm(x, w), (x, w))
    x2 = _rand(64, 512, seed=7)
    torch.testing.assert_close(traced(x2, w), x2 @ w, rtol=1e-4, atol=1e-3)


@needs_pool
def test_concurrent_callers_are_both_right():
    a, b = _rand(256, 512), _rand(512, 256, seed=1)
    ref = _ref(a, b)
    errors = []

    def work():
        for _ in range(20):
            if not torch.allclose(gemm.mm(a, b), ref, rtol=1e-4, atol=1e-3):
                errors.append("wrong")

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@needs_pool
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_pool_works_in_a_forked_child():
    a, b = _rand(256, 512), _rand(512, 256, seed=1)
    ref = _ref(a, b).numpy()
    gemm.mm(a, b)                                  # the parent's helpers exist
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # child: no helper threads survive (and no OpenMP: NumPy compares)
        ok = np.allclose(gemm.mm(a, b).numpy(), ref, rtol=1e-4, atol=1e-3)
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    status = os.read(read, 1)
    os.waitpid(pid, 0)
    assert status == b"1"


def test_switched_off_uses_torch(monkeypatch):
    monkeypatch.setenv("MXTORCH_GEMM", "0")
    monkeypatch.setattr(gemm, "_state", {})
    assert not gemm.available()
    a, b = _rand(64, 64), _rand(64, 64, seed=1)
    torch.testing.assert_close(gemm.mm(a, b), a @ b)
    assert not gemm.applies(a, b)


@needs_pool
def test_fully_connected_in_the_core_stays_on_torch(monkeypatch):
    calls = []
    real = gemm._Linear.apply
    monkeypatch.setattr(gemm._Linear, "apply", lambda *a: calls.append(1) or real(*a))
    rng = np.random.RandomState(0)
    x = rng.randn(64, 800).astype(np.float32)
    w = rng.randn(500, 800).astype(np.float32) * 0.05
    b = rng.randn(500).astype(np.float32)
    xs, ws, bs = mx.nd.array(x), mx.nd.array(w), mx.nd.array(b)
    ws.attach_grad()
    with mx.autograd.record():
        y = mx.nd.FullyConnected(xs, ws, bs, num_hidden=500)
    y.backward()
    # the pool is the hand-tuned backend's (its traced training steps): the operator
    # registry never reaches it
    assert not calls
    np.testing.assert_allclose(y.asnumpy(), x @ w.T + b, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(ws.grad.asnumpy(), np.ones((64, 500)).T @ x, rtol=1e-4,
                               atol=1e-2)


@needs_pool
def test_spinning_openmp_workers_keep_torch_products(monkeypatch):
    """With OpenMP's default wait policy its workers spin between regions and would
    compete with the pool's helper: the callers keep torch's products."""
    monkeypatch.setattr(gemm, "_OPENMP_SLEEPS", False)
    x, w = _rand(256, 784), _rand(256, 784, seed=1)
    assert not gemm.applies(x, w)
    assert gemm.planned(x, w.t(), threads=2) is None
    out = mx.nd.FullyConnected(mx.nd.array(x.numpy()), mx.nd.array(w.numpy()),
                               num_hidden=256, no_bias=True)
    np.testing.assert_allclose(out.asnumpy(), _ref(x, w.t()).numpy(), rtol=1e-4, atol=1e-3)

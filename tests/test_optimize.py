"""The optimizing inference path (mxtorch.graph.optimize) equals the plain program."""
import ctypes
import logging
import os
import platform
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mxtorch as mx
from mxtorch.gluon import nn
from mxtorch.graph import fusion, optimize, winograd
from mxtorch.ops import gemm, native

RTOL, ATOL = 1e-4, 1e-5


class _Block(nn.HybridBlock):
    """A residual block: conv-BN-relu-conv-BN + (1x1 conv-BN) shortcut."""

    def __init__(self, channels, stride, in_channels, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.body = nn.HybridSequential(prefix="")
            self.body.add(nn.Conv2D(channels, 3, stride, 1, use_bias=False,
                                    in_channels=in_channels),
                          nn.BatchNorm(in_channels=channels), nn.Activation("relu"),
                          nn.Conv2D(channels, 3, 1, 1, use_bias=False, in_channels=channels),
                          nn.BatchNorm(in_channels=channels))
            self.down = nn.HybridSequential(prefix="")
            self.down.add(nn.Conv2D(channels, 1, stride, use_bias=False,
                                    in_channels=in_channels),
                          nn.BatchNorm(in_channels=channels))

    def hybrid_forward(self, F, x):
        return F.Activation(self.body(x) + self.down(x), act_type="relu")


def _resnet_like():
    mx.random.seed(42)
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(8, 3, 1, 1, in_channels=3), nn.BatchNorm(in_channels=8),
                nn.Activation("relu"), nn.MaxPool2D(2, 2), _Block(16, 2, 8),
                nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(5, in_units=16))
    net.initialize(mx.init.Xavier())
    rng = np.random.RandomState(0)
    for name, p in net.collect_params().items():  # non-trivial BatchNorm statistics
        if name.endswith(("running_mean", "beta")):
            p.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, p.shape)))
        elif name.endswith(("running_var", "gamma")):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape)))
    return net


def _x(batch=2, size=12, seed=1):
    return mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, (batch, 3, size, size)))


def _close(a, b):
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=RTOL, atol=ATOL)


def test_fold_batchnorm_numerics():
    rng = np.random.RandomState(0)
    t = lambda *s: torch.tensor(rng.uniform(-1, 1, s), dtype=torch.float64)  # noqa: E731
    x, w, b = t(2, 3, 6, 6), t(4, 3, 3, 3), t(4)
    gamma, beta, mean = t(4), t(4), t(4)
    var = t(4).abs() + 0.1
    for fix_gamma in (False, True):
        g = torch.ones(4, dtype=torch.float64) if fix_gamma else gamma
        ref = F.batch_norm(F.conv2d(x, w, b, padding=1), mean, var, g, beta, False, 0.0, 1e-3)
        fw, fb = optimize.fold_batchnorm(w, b, gamma, beta, mean, var, 1e-3, fix_gamma)
        torch.testing.assert_close(F.conv2d(x, fw, fb, padding=1), ref)
    fw, fb = optimize.fold_batchnorm(w, None, gamma, beta, mean, var, 1e-3)
    ref = F.batch_norm(F.conv2d(x, w, padding=1), mean, var, gamma, beta, False, 0.0, 1e-3)
    torch.testing.assert_close(F.conv2d(x, fw, fb, padding=1), ref)


def test_hybridize_static_equals_plain_and_folds_bn():
    net = _resnet_like()
    x = _x()
    ref = net(x)
    net.hybridize(static_alloc=True, static_shape=True)
    for _ in range(3):  # compiled on the second call
        _close(net(x), ref)
    opt = net._cached_op._optimizer
    entry = next(iter(opt._cache.values()))
    assert entry.fn is not None and entry.compiles == 1
    if fusion.available():  # MXNet's MKLDNN backend: conv+BN(+add)(+relu) fused
        targets = [n.target.__name__ for n in entry.fn.gm.graph.nodes
                   if n.op == "call_function"]
        fused = [t for t in targets if t.endswith("_onednn")]
        assert len(fused) == 4, targets
        assert not any("batchnorm" in t for t in targets if t not in fused)


def test_jit_backend_folds_bn():
    net = _resnet_like()
    x = _x()
    ref = net(x)
    net.hybridize(static_alloc=True, static_shape=True, backend="JIT")
    for _ in range(3):
        _close(net(x), ref)
    entry = next(iter(net._cached_op._optimizer._cache.values()))
    kinds = {n.kind() for n in entry.fn.graph.nodes()}
    assert "aten::batch_norm" not in kinds  # folded into the convolutions


def test_shape_change_recompiles_once():
    net = _resnet_like()
    cases = [(2, 12), (3, 16), (2, 12)]
    refs = [net(_x(b, s)) for b, s in cases]
    net.hybridize(static_alloc=True, static_shape=True)
    for (batch, size), ref in zip(cases, refs):
        for _ in range(3):
            _close(net(_x(batch, size)), ref)
    opt = net._cached_op._optimizer
    assert len(opt._cache) == 2
    assert all(e.compiles == 1 for e in opt._cache.values())


def test_parameter_change_is_seen():
    net = _resnet_like()
    x = _x()
    net.hybridize(static_alloc=True, static_shape=True)
    net(x), net(x)
    dense_w = [p for n, p in net.collect_params().items() if n.endswith("dense0_weight")][0]
    dense_w.set_data(dense_w.data() * 2)
    out = net(x)
    net.hybridize(False)
    _close(out, net(x))


def test_training_and_recording_unchanged():
    net = _resnet_like()
    x = _x()
    net.hybridize(static_alloc=True, static_shape=True)
    net(x), net(x)
    params = [p for p in net.collect_params().values() if p.grad_req != "null"]
    with mx.autograd.record():
        loss = net(x).sum()
    loss.backward()
    grads = [p.grad().asnumpy().copy() for p in params]
    net2 = _resnet_like()
    with mx.autograd.record():
        loss2 = net2(x).sum()
    loss2.backward()
    np.testing.assert_allclose(loss.asnumpy(), loss2.asnumpy(), rtol=RTOL)
    params2 = [p for p in net2.collect_params().values() if p.grad_req != "null"]
    for g, p in zip(grads, params2):
        np.testing.assert_allclose(g, p.grad().asnumpy(), rtol=1e-3, atol=1e-5)


def test_optimize_for_backend():
    net = _resnet_like()
    x = _x()
    ref = net(x)
    net.optimize_for(x, backend="MKLDNN")
    assert net._cached_op._optimizer is not None
    for _ in range(3):
        _close(net(x), ref)


def _mlp_sym():
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=8, name="fc1")
    net = mx.sym.BatchNorm(net, name="bn")
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def test_module_inference_bind_equals_training_bind():
    sym = _mlp_sym()
    x = np.random.RandomState(0).uniform(-1, 1, (4, 6)).astype(np.float32)
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.zeros((4,))])
    train = mx.mod.Module(sym)
    train.bind([("data", (4, 6))], [("softmax_label", (4,))])
    train.init_params(mx.init.Uniform(0.5))
    args, auxs = train.get_params()
    auxs = {k: mx.nd.array(np.random.RandomState(1).uniform(0.5, 1, v.shape))
            for k, v in auxs.items()}
    train.set_params(args, auxs)
    infer = mx.mod.Module(sym)
    infer.bind([("data", (4, 6))], [("softmax_label", (4,))], for_training=False)
    infer.set_params(args, auxs)
    assert infer._exec_group.execs[0]._opt is not None
    train.forward(batch, is_train=False)
    ref = train.get_outputs()[0].asnumpy()
    for _ in range(3):
        infer.forward(batch, is_train=False)
        np.testing.assert_allclose(infer.get_outputs()[0].asnumpy(), ref, rtol=RTOL, atol=ATOL)
    opt = infer._exec_group.execs[0]._opt
    assert any(e.fn is not None for e in opt._cache.values())
    x2 = np.random.RandomState(2).uniform(-1, 1, (7, 6)).astype(np.float32)
    batch2 = mx.io.DataBatch([mx.nd.array(x2)], [mx.nd.zeros((7,))])  # reshapes the executors
    for _ in range(2):
        infer.forward(batch2, is_train=False)
    train.forward(batch2, is_train=False)
    np.testing.assert_allclose(infer.get_outputs()[0].asnumpy(),
                               train.get_outputs()[0].asnumpy(), rtol=RTOL, atol=ATOL)


def test_executor_subgraph_backend_env(monkeypatch):
    sym = _mlp_sym()
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "MKLDNN")
    exe = sym.simple_bind(mx.cpu(), data=(4, 6), grad_req="null")
    assert exe._opt is not None
    for arr in exe.arg_arrays + exe.aux_arrays:
        arr[:] = np.random.RandomState(arr.size).uniform(0.1, 1, arr.shape)
    outs = [exe.forward(is_train=False)[0].asnumpy() for _ in range(3)]
    monkeypatch.delenv("MXNET_SUBGRAPH_BACKEND")
    plain = sym.bind(mx.cpu(), exe.arg_dict, aux_states=exe.aux_dict)
    assert plain._opt is None
    ref = plain.forward(is_train=False)[0].asnumpy()
    for o in outs:
        np.testing.assert_allclose(o, ref, rtol=RTOL, atol=ATOL)
    exe.arg_dict["fc2_weight"][:] = 0.5  # a changed parameter is recompiled
    np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(),
                               plain.forward(is_train=False)[0].asnumpy(), rtol=RTOL,
                               atol=ATOL)


def test_failure_falls_back_with_one_warning(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("no compiler")
    monkeypatch.setattr(torch.jit, "freeze", boom)
    monkeypatch.setattr(fusion, "fuse_program", boom)
    net = _resnet_like()
    x = _x()
    ref = net(x)
    net.hybridize(static_alloc=True, static_shape=True)
    _close(net(x), ref)
    with pytest.warns(RuntimeWarning, match="running the plain program"):
        _close(net(x), ref)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _close(net(x), ref)
        _close(net(_x(3)), net(_x(3)))


def test_compile_time_logged_at_debug(caplog):
    net = _resnet_like()
    x = _x()
    net.hybridize(static_alloc=True, static_shape=True)
    with caplog.at_level(logging.DEBUG, logger="mxtorch.graph.optimize"):
        net(x), net(x)
    assert any("compiled" in r.getMessage() and r.levelno == logging.DEBUG
               for r in caplog.records)


def test_backend_names():
    assert optimize.resolve_backend("MKLDNN") == "onednn"
    assert optimize.resolve_backend("JIT") == "jit"
    assert optimize.resolve_backend("inductor") == "inductor"
    assert optimize.resolve_backend(None) == "onednn"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_graph_path_equals_plain():
    net = _resnet_like()
    x = _x()
    ref = net(x)
    net.collect_params().reset_ctx(mx.gpu(0))
    xg = x.as_in_context(mx.gpu(0))
    net.hybridize(static_alloc=True, static_shape=True)
    for _ in range(3):
        _close(net(xg), ref)
    entry = next(iter(net._cached_op._optimizer._cache.values()))
    assert isinstance(entry.fn, optimize._CudaGraph)


# ---------------------------------------------------------------- oneDNN fusion (CPU)
needs_onednn = pytest.mark.skipif(not fusion.available(), reason="torch built without oneDNN")


def _fused_names(fn):
    return [n.target.__name__ for n in fn.gm.graph.nodes
            if n.op == "call_function" and n.target.__name__.endswith("_onednn")]


def _plain_and_compiled(net, x, warning: str):
    """The plain output, then the output of the static call that compiles, which must warn
    ``warning`` (the first static call runs the plain program)."""
    ref = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    net(x)
    with pytest.warns(RuntimeWarning, match=warning):
        out = net(x).asnumpy()
    return ref, out


def _run_optimized(net, x, calls=3):
    net.hybridize(static_alloc=True, static_shape=True)
    outs = [net(x).asnumpy() for _ in range(calls)]
    entry = next(iter(net._cached_op._optimizer._cache.values()))
    return outs, entry


class _Residual(nn.HybridBlock):
    """conv(x) + x and conv(x) + y (graph inputs as the summand: never written)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.c1 = nn.Conv2D(3, 3, padding=1, in_channels=3)
            self.c2 = nn.Conv2D(3, 3, padding=1, in_channels=3, activation="relu")

    def hybrid_forward(self, F, x, y):
        a = F.Activation(self.c1(x) + x, act_type="relu")
        return a, self.c2(a) + y, a * 2


@needs_onednn
def test_fusion_never_writes_inputs_or_shared_values():
    net = _Residual()
    net.initialize(mx.init.Xavier())
    x, y = _x(), _x(seed=5)
    x0, y0 = x.asnumpy().copy(), y.asnumpy().copy()
    ref = [o.asnumpy() for o in net(x, y)]
    net.hybridize(static_alloc=True, static_shape=True)
    for _ in range(3):
        outs = net(x, y)
        for o, r in zip(outs, ref):
            np.testing.assert_allclose(o.asnumpy(), r, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(x.asnumpy(), x0)
    np.testing.assert_array_equal(y.asnumpy(), y0)
    entry = next(iter(net._cached_op._optimizer._cache.values()))
    # c1+add+relu fused; c2's relu stays (its output feeds the add, which feeds nothing else)
    assert len(_fused_names(entry.fn)) == 2
    assert all(o.asnumpy().flags.c_contiguous for o in outs)


@needs_onednn
@pytest.mark.parametrize("kw", [dict(kernel_size=3, strides=2, padding=1),
                                dict(kernel_size=3, dilation=2, padding=2, use_bias=False),
                                dict(kernel_size=1, groups=2),
                                dict(kernel_size=(3, 1), padding=(1, 0), activation="relu")])
def test_fusion_conv_variants(kw):
    mx.random.seed(3)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, in_channels=4, **kw), nn.BatchNorm(in_channels=4),
            nn.Activation("relu"), nn.Conv2D(4, 1, in_channels=4, **{
                k: v for k, v in kw.items() if k == "use_bias"}))
    net.initialize(mx.init.Xavier())
    for name, p in net.collect_params().items():
        if name.endswith(("running_var", "gamma")):
            p.set_data(mx.nd.array(np.random.RandomState(1).uniform(0.5, 2, p.shape)))
        elif name.endswith(("running_mean", "beta")):
            p.set_data(mx.nd.array(np.random.RandomState(2).uniform(-1, 1, p.shape)))
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 4, 9, 9)))
    ref = net(x).asnumpy()
    outs, entry = _run_optimized(net, x)
    for o in outs:
        np.testing.assert_allclose(o, ref, rtol=RTOL, atol=ATOL)
    assert len(_fused_names(entry.fn)) == 2


@needs_onednn
def test_fusion_symbol_batchnorm_fix_gamma_in_module():
    """Legacy BatchNorm defaults to fix_gamma=True: gamma is read as 1 when folded."""
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv")
    net = mx.sym.BatchNorm(net, name="bn")  # fix_gamma=True
    net = mx.sym.relu(net)
    net = mx.sym.Pooling(net, global_pool=True, pool_type="avg", kernel=(1, 1))
    sym = mx.sym.FullyConnected(mx.sym.flatten(net), num_hidden=2, name="fc")
    rng = np.random.RandomState(0)
    shapes, _, aux_shapes = sym.infer_shape(data=(2, 3, 8, 8))
    args = {n: mx.nd.array(rng.uniform(0.5, 1.5, s)) for n, s in
            zip(sym.list_arguments(), shapes) if n != "data"}
    auxs = {n: mx.nd.array(rng.uniform(0.5, 1.5, s)) for n, s in
            zip(sym.list_auxiliary_states(), aux_shapes)}
    x = mx.nd.array(rng.uniform(-1, 1, (2, 3, 8, 8)))
    plain = sym.bind(mx.cpu(), dict(args, data=x), aux_states=auxs)
    ref = plain.forward(is_train=False)[0].asnumpy()
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind([("data", (2, 3, 8, 8))], for_training=False)
    mod.set_params(args, auxs)
    for _ in range(3):
        mod.forward(mx.io.DataBatch([x]), is_train=False)
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), ref, rtol=RTOL, atol=ATOL)
    opt = mod._exec_group.execs[0]._opt
    entry = next(e for e in opt._cache.values() if e.fn is not None)
    assert len(_fused_names(entry.fn)) == 1


@needs_onednn
def test_fusion_skips_nhwc_and_unfrozen_weights():
    data, w = mx.sym.var("data"), mx.sym.var("w")
    sym = mx.sym.Convolution(data, w, kernel=(3, 3), num_filter=2, no_bias=True,
                             layout="NHWC", name="c")
    sym = mx.sym.Convolution(sym, kernel=(1, 1), num_filter=2, layout="NHWC", name="d")
    exe = sym.simple_bind(mx.cpu(), data=(1, 5, 5, 3), grad_req="null")
    for a in exe.arg_arrays:
        a[:] = np.random.RandomState(a.size).uniform(-1, 1, a.shape)
    ref = exe.forward(is_train=False)[0].asnumpy()
    exe.optimize_for_inference()
    for _ in range(3):
        np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(), ref,
                                   rtol=RTOL, atol=ATOL)


_REUSE_SCRIPT = """
import resource, torch
import mxtorch as mx
from mxtorch.graph import memory
import sys
if sys.argv[1] == "executor":
    mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=4).simple_bind(mx.cpu(), x=(2, 3))
else:
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, in_units=3))
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    net(mx.nd.ones((2, 3)))
def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        ts = [torch.empty(3 * 1024 * 1024) for _ in range(3)]   # 3 x 12 MiB
        ts.append(torch.empty(12 * 1024 * 1024))                # 48 MiB: above any threshold
        for t in ts:
            t.fill_(1.0)
        del ts, t
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10
faults()
measured = faults()
print(memory.retain_freed_memory(), measured)
"""


@pytest.mark.skipif(not (sys.platform.startswith("linux")
                         and platform.libc_ver()[0] == "glibc"), reason="glibc only")
@pytest.mark.parametrize("env, retained", [("1", True), ("0", False)])
@pytest.mark.parametrize("built", ["static_alloc", "executor"])
def test_static_alloc_keeps_freed_host_buffers(env, retained, built):
    proc = subprocess.run([sys.executable, "-c", _REUSE_SCRIPT, built], capture_output=True,
                          text=True, timeout=120,
                          env=dict(os.environ, MXTORCH_RETAIN_FREED_MEMORY=env,
                                   # glibc's starting threshold, fixed (not adapted to the
                                   # import's allocations) so the baseline is deterministic
                                   MALLOC_MMAP_THRESHOLD_="131072"))
    assert proc.returncode == 0, proc.stderr
    applied, faults = proc.stdout.split()
    assert applied == str(retained), proc.stdout
    if retained:
        assert float(faults) < 20, faults  # the buffers are reused, not page-faulted again
    else:
        assert float(faults) > 10000, faults  # glibc maps or trims them and faults them in again


# ---------------------------------------------------------------- Winograd F(4x4, 3x3)
def _conv_ref(x, w, b, other, relu):
    y = F.conv2d(x.double(), w.double(), None if b is None else b.double(), padding=1)
    if other is not None:
        y = y + other.double()
    return y.clamp_min(0) if relu else y


def _transforms(kind):
    if kind == "native" and winograd.native_transforms() is None:
        pytest.skip("no C compiler: the native Winograd transforms are not built")
    return kind


def _native_path(monkeypatch, path):
    """The native kernels' channel mixes: ``blocked`` (C with MKL's sgemm, block by
    block) or ``bmm`` (one torch.bmm between the two transforms)."""
    _transforms("native")
    if path == "bmm":
        monkeypatch.setattr(winograd, "_BLOCKED_CHANNELS", 0)
    elif gemm.mkl_entry_points() is None:
        pytest.skip("torch without MKL's sgemm: no blocked Winograd kernel")


@pytest.mark.parametrize("tiles", ["F4", "F2"])
@pytest.mark.parametrize("transforms", ["blocked", "bmm", "torch"])
@pytest.mark.parametrize("shape, k, bias, add, relu", [
    ((2, 32, 8, 8), 40, True, False, False),      # whole tiles
    ((1, 33, 7, 9), 32, False, True, True),       # cropped tiles, no bias, sum + relu
    ((3, 64, 5, 4), 48, True, True, False),
    ((1, 100, 6, 10), 70, True, False, True),     # channels beyond one 64-lane block
    ((2, 32, 13, 12), 32, False, False, False)])
def test_winograd_kernel_equals_convolution(shape, k, bias, add, relu, transforms, tiles,
                                            monkeypatch):
    rng = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=rng).contiguous(memory_format=torch.channels_last)
    w = torch.randn(k, shape[1], 3, 3, generator=rng) * 0.1
    b = torch.randn(k, generator=rng) if bias else None
    other = torch.randn(shape[0], k, *shape[2:], generator=rng) if add else None
    assert winograd.applicable(w, (1, 1), (1, 1), (1, 1), 1)
    if transforms != "torch":
        _native_path(monkeypatch, transforms)
    fn = winograd.winograd_conv(w, b, shape, relu, winograd.Workspace(),
                                transforms="torch" if transforms == "torch" else "native",
                                tiles=getattr(winograd, tiles))
    out = fn(x, other) if add else fn(x)
    ref = _conv_ref(x, w, b, other, relu)
    assert out.shape == ref.shape and out.dtype == torch.float32
    assert out.is_contiguous(memory_format=torch.channels_last)
    scale = float(ref.abs().max())
    assert float((out.double() - ref).abs().max()) < 1e-5 * scale
    # the result is fresh: a second call (other input) leaves it as it was
    first = out.clone()
    fn(x * 2, other) if add else fn(x * 2)
    assert torch.equal(out, first)


def test_winograd_native_takes_any_input_layout_and_checks_shapes():
    _transforms("native")
    rng = torch.Generator().manual_seed(1)
    w = torch.randn(32, 32, 3, 3, generator=rng) * 0.1
    x = torch.randn(2, 32, 9, 9, generator=rng)          # NCHW, not channels-last
    other = torch.randn(2, 32, 9, 9, generator=rng)
    fn = winograd.winograd_conv(w, None, x.shape, False, winograd.Workspace(), "native")
    ref = _conv_ref(x, w, None, other, False)
    assert float((fn(x, other).double() - ref).abs().max()) < 1e-5 * float(ref.abs().max())
    with pytest.raises(ValueError, match=r"shape \(2, 32, 9, 9\), got torch.float32 "
                                         r"\(1, 32, 9, 9\)"):
        fn(x[:1])
    with pytest.raises(ValueError, match="summed input"):
        fn(x, other[:, :16])
    with pytest.raises(ValueError, match="transforms='fast'"):
        winograd.winograd_conv(w, None, x.shape, False, winograd.Workspace(), "fast")
    with pytest.raises(ValueError, match="tiles must be F4 or F2"):
        winograd.winograd_conv(w, None, x.shape, False, winograd.Workspace(),
                               tiles=winograd.F4._replace(m=6, a=8))


def test_winograd_tile_matrices_are_the_algorithms():
    """Each algorithm's transforms give the exact 1-D correlation of a 3-tap filter over
    its input tile (in float64): A^T ((G g) * (B^T d)) == correlate(d, g)."""
    rng = np.random.RandomState(0)
    for tiles in (winograd.F4, winograd.F2):
        assert tiles.bt.shape == (tiles.a, tiles.a) and tiles.at.shape == (tiles.m, tiles.a)
        d, g = rng.randn(tiles.a), rng.randn(3)
        got = tiles.at.numpy() @ ((tiles.g.numpy() @ g) * (tiles.bt.numpy() @ d))
        np.testing.assert_allclose(got, np.correlate(d, g, "valid"), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("path", ["blocked", "bmm"])
@pytest.mark.parametrize("tiles", ["F4", "F2"])
def test_winograd_split_between_threads_equals_one_thread(monkeypatch, tiles, path):
    _native_path(monkeypatch, path)
    rng = torch.Generator().manual_seed(2)
    shape = (8, 64, 32, 32)                               # 36 * 512 * 64 floats: split
    x = torch.randn(shape, generator=rng).contiguous(memory_format=torch.channels_last)
    other = torch.randn(shape, generator=rng).contiguous(memory_format=torch.channels_last)
    w = torch.randn(64, 64, 3, 3, generator=rng) * 0.1
    outs = []
    for threads in (1, 2, 3):
        monkeypatch.setattr(torch, "get_num_threads", lambda t=threads: t)
        fn = winograd.winograd_conv(w, None, shape, True, winograd.Workspace(), "native",
                                    getattr(winograd, tiles))
        outs.append(fn(x, other))
    assert torch.equal(outs[0], outs[1]) and torch.equal(outs[0], outs[2])
    ref = _conv_ref(x, w, None, other, True)
    assert float((outs[0].double() - ref).abs().max()) < 1e-5 * float(ref.abs().max())


def test_splitter_hands_errors_back_and_survives_a_fork():
    splitter = winograd._Splitter()
    seen = []

    def part(tag, *rest):
        *buf, lo, hi = rest
        if lo > 0 and tag == "bad":
            raise OSError("part failed")
        seen.append((lo, hi) + tuple(buf))
    splitter.run(part, ("ok",), 10, 3)
    assert sorted(seen) == [(0, 3), (3, 6), (6, 10)]
    with pytest.raises(OSError, match="part failed"):
        splitter.run(part, ("bad",), 10, 2)
    seen.clear()
    splitter.run(part, ("ok",), 10, 3, each=(("x",), ("y",)))   # two parts: two buffers
    assert sorted(seen) == [(0, 5, "x"), (5, 10, "y")]
    splitter._pid = -1                       # as in a forked child: new helper threads
    seen.clear()
    splitter.run(part, ("ok",), 4, 2)
    assert sorted(seen) == [(0, 2), (2, 4)] and splitter._pid == os.getpid()


_ADD_SOURCE = "int mxt_add(int a, int b) { return a + b; }\n"
_ADD_SIG = {"mxt_add": (ctypes.c_int, [ctypes.c_int, ctypes.c_int])}


needs_cc = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc").split()[0]) is None,
                              reason="no C compiler")


def _block_cache_folder(root, monkeypatch, tmp):
    """Point the cache folder below a plain file (unusable); ``tmp``: the temp folder."""
    blocker = root / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MXTORCH_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(native.tempfile, "tempdir", str(tmp(blocker)))


@pytest.fixture
def fresh_native(monkeypatch, tmp_path):
    """native.load with an empty registry, warning state and cache folder."""
    monkeypatch.setattr(native, "_loaded", {})
    monkeypatch.setattr(native, "_warned", False)
    monkeypatch.setenv("MXTORCH_CACHE_DIR", str(tmp_path))
    return tmp_path


@needs_cc
def test_native_builds_once_and_reuses_the_cache(fresh_native, monkeypatch):
    lib = native.load("addtest", _ADD_SOURCE, _ADD_SIG)
    assert lib.mxt_add(2, 3) == 5
    built = [p.name for p in fresh_native.iterdir()]
    assert len(built) == 1 and built[0].startswith("addtest-") and built[0].endswith(".so")
    assert native.load("addtest", _ADD_SOURCE, _ADD_SIG) is lib     # same process
    monkeypatch.setattr(native, "_loaded", {})                       # a new process
    monkeypatch.setattr(native, "_build", lambda *a: pytest.fail("rebuilt"))
    assert native.load("addtest", _ADD_SOURCE, _ADD_SIG).mxt_add(4, 5) == 9


@needs_cc
def test_native_rebuilds_a_truncated_cache_file(fresh_native, monkeypatch):
    native.load("addtest", _ADD_SOURCE, _ADD_SIG)
    (built,) = fresh_native.iterdir()
    # another process died writing it (a loaded library is never truncated in place)
    other = fresh_native / "other"
    other.mkdir()
    (other / built.name).write_bytes(built.read_bytes()[:100])
    monkeypatch.setenv("MXTORCH_CACHE_DIR", str(other))
    monkeypatch.setattr(native, "_loaded", {})
    assert native.load("addtest", _ADD_SOURCE, _ADD_SIG).mxt_add(1, 1) == 2
    assert (other / built.name).stat().st_size > 100                # rebuilt whole
    assert [p.name for p in other.iterdir()] == [built.name]   # no temporary left


@needs_cc
def test_native_unusable_cache_folder_builds_in_the_temp_folder(fresh_native, monkeypatch):
    (fresh_native / "tmp").mkdir()
    _block_cache_folder(fresh_native, monkeypatch, lambda blocker: fresh_native / "tmp")
    assert native.load("addtest", _ADD_SOURCE, _ADD_SIG).mxt_add(20, 22) == 42
    (sub,) = (fresh_native / "tmp").iterdir()
    assert [p.suffix for p in sub.iterdir()] == [".so"]


@needs_cc
def test_native_no_writable_folder_warns_and_returns_none(fresh_native, monkeypatch):
    _block_cache_folder(fresh_native, monkeypatch, lambda blocker: blocker / "tmp")
    with pytest.warns(RuntimeWarning, match="'addtest' kernels could not be built"):
        assert native.load("addtest", _ADD_SOURCE, _ADD_SIG) is None


def test_native_without_compiler_warns_once_and_returns_none(fresh_native, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.warns(RuntimeWarning, match="no C compiler.*'addtest'"):
        assert native.load("addtest", _ADD_SOURCE, _ADD_SIG) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert native.load("other", _ADD_SOURCE, _ADD_SIG) is None


@needs_cc
def test_native_compile_error_warns_with_the_compiler_message(fresh_native):
    with pytest.warns(RuntimeWarning, match="compiling the 'broken' kernels failed.*error"):
        assert native.load("broken", "int f( {", {}) is None
    assert list(fresh_native.iterdir()) == []                        # nothing half-written


def test_native_switched_off_uses_torch_transforms(fresh_native, monkeypatch):
    monkeypatch.setenv("MXTORCH_NATIVE", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert winograd.native_transforms() is None
        with pytest.raises(RuntimeError, match="native transforms are not available"):
            winograd.winograd_conv(torch.zeros(32, 32, 3, 3), None, (1, 32, 4, 4), False,
                                   winograd.Workspace(), "native")
        rng = torch.Generator().manual_seed(3)
        x = torch.randn(1, 32, 6, 6, generator=rng)
        w = torch.randn(32, 32, 3, 3, generator=rng)
        fn = winograd.winograd_conv(w, None, x.shape, False, winograd.Workspace())
        ref = _conv_ref(x, w, None, None, False)
        assert float((fn(x).double() - ref).abs().max()) < 1e-5 * float(ref.abs().max())


@pytest.mark.parametrize("kw", [dict(stride=(2, 2)), dict(dilate=(2, 2), pad=(2, 2)),
                                dict(groups=2), dict(c=16), dict(kernel=(1, 1), pad=(0, 0)),
                                dict(dtype=torch.float64)])
def test_winograd_not_applicable(kw):
    c, kernel = kw.get("c", 32), kw.get("kernel", (3, 3))
    w = torch.zeros(32, c, *kernel, dtype=kw.get("dtype", torch.float32))
    assert not winograd.applicable(w, kw.get("pad", (1, 1)), kw.get("stride", (1, 1)),
                                   kw.get("dilate", (1, 1)), kw.get("groups", 1))


class _WideResidual(nn.HybridBlock):
    """conv-BN-relu-conv-BN + x, relu: 3x3 convolutions with 32 channels."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.stem = nn.Conv2D(32, 3, padding=1, in_channels=3, activation="relu")
            self.c1 = nn.Conv2D(32, 3, padding=1, in_channels=32, use_bias=False)
            self.b1 = nn.BatchNorm(in_channels=32)
            self.c2 = nn.Conv2D(32, 3, padding=1, in_channels=32, use_bias=False)
            self.b2 = nn.BatchNorm(in_channels=32)

    def hybrid_forward(self, F, x):
        x = self.stem(x)
        y = F.Activation(self.b1(self.c1(x)), act_type="relu")
        return F.Activation(self.b2(self.c2(y)) + x, act_type="relu")


def _wide_net():
    mx.random.seed(7)
    net = _WideResidual()
    net.initialize(mx.init.Xavier())
    rng = np.random.RandomState(3)
    for name, p in net.collect_params().items():
        if name.endswith(("running_mean", "beta")):
            p.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, p.shape)))
        elif name.endswith(("running_var", "gamma")):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape)))
    return net


def _kernel_names(entry, suffix):
    return [n.target.__name__ for n in entry.fn.gm.graph.nodes
            if n.op == "call_function" and n.target.__name__.endswith(suffix)]


@needs_onednn
def test_winograd_in_network_equals_plain_after_shape_change(monkeypatch):
    monkeypatch.setenv("MXTORCH_WINOGRAD", "1")
    net = _wide_net()
    cases = [(2, 8), (1, 11), (2, 8)]   # 11: tiles cropped
    refs = [net(_x(b, s)).asnumpy() for b, s in cases]
    net.hybridize(static_alloc=True, static_shape=True)
    for (batch, size), ref in zip(cases, refs):
        for _ in range(3):
            np.testing.assert_allclose(net(_x(batch, size)).asnumpy(), ref,
                                       rtol=RTOL, atol=ATOL)
    opt = net._cached_op._optimizer
    assert len(opt._cache) == 2
    for entry in opt._cache.values():
        assert entry.compiles == 1
        # the stem (3 input channels) stays oneDNN; both 32-channel groups are Winograd
        assert len(_kernel_names(entry, "_onednn")) == 1
        assert len(_kernel_names(entry, "_winograd")) == 2


@needs_onednn
@pytest.mark.parametrize("env, timings, f4, f2", [
    ("0", None, 0, 0),
    ("auto", [1.0, 0.5, 0.6], 2, 0),     # F2 more than 10% slower than F4
    ("auto", [1.0, 0.5, 0.54], 0, 2),    # F2 within 10% of F4: its smaller weights win
    ("auto", [1.0, 0.95, 0.8], 0, 2),
    ("auto", [1.0, 0.95, 0.95], 0, 0),   # neither 10% faster than oneDNN
    ("1", None, 2, 0)])                  # always F4, untimed
def test_winograd_choice(monkeypatch, env, timings, f4, f2):
    """auto times oneDNN, F4 and (few tiles here) F2, and keeps Winograd only where it is
    at least 10% faster; 0 never tries it."""
    monkeypatch.setenv("MXTORCH_WINOGRAD", env)
    calls = []

    def timed(kernels, args, rounds=3):
        calls.append((len(kernels), args[0].shape))
        return timings
    monkeypatch.setattr(winograd, "timings", timed)
    net = _wide_net()
    x = _x(2, 8)
    ref = net(x).asnumpy()
    outs, entry = _run_optimized(net, x)
    for o in outs:
        np.testing.assert_allclose(o, ref, rtol=RTOL, atol=ATOL)
    assert len(_kernel_names(entry, "_winograd")) == f4
    assert len(_kernel_names(entry, "_winograd2x2")) == f2
    assert calls == ([(3, (2, 32, 8, 8))] * 2 if env == "auto" else [])


def test_winograd_f2_is_tried_only_with_few_tiles():
    assert winograd.few_tiles((1, 256, 14, 14))       # 16 tiles of 4x4
    assert winograd.few_tiles((2, 32, 8, 8))
    assert not winograd.few_tiles((1, 64, 56, 56))    # 196
    assert not winograd.few_tiles((16, 512, 7, 7))    # 64


def test_winograd_timings_are_interleaved_best_of_rounds():
    seen = []

    def kernel(tag):
        def fn(x):
            seen.append(tag)
        return fn
    times = winograd.timings([kernel("a"), kernel("b"), kernel("c")], (None,), rounds=2)
    assert seen == ["a", "b", "c"] + ["a", "b", "c"] * 2   # warm-up, then interleaved
    assert len(times) == 3 and all(0 <= t < 1 for t in times)


@needs_onednn
def test_winograd_without_compiler_warns_once_and_equals_plain(fresh_native, monkeypatch):
    """The torch-product transforms run; the missing compiler is reported, not hidden
    by the compile step."""
    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setenv("MXTORCH_WINOGRAD", "1")
    net = _wide_net()
    ref, out = _plain_and_compiled(net, _x(2, 8), "no C compiler")
    np.testing.assert_allclose(out, ref, rtol=RTOL, atol=ATOL)
    (entry,) = net._cached_op._optimizer._cache.values()
    assert len(_kernel_names(entry, "_winograd")) == 2


@needs_onednn
def test_winograd_bad_setting_runs_plain_with_warning(monkeypatch):
    monkeypatch.setenv("MXTORCH_WINOGRAD", "sometimes")
    with pytest.raises(ValueError, match="MXTORCH_WINOGRAD='sometimes'"):
        winograd.mode()
    net = _wide_net()
    x = _x(2, 8)
    ref, out = _plain_and_compiled(net, x, "MXTORCH_WINOGRAD")
    np.testing.assert_allclose(out, ref, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=RTOL, atol=ATOL)

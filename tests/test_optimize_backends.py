"""The optimizing inference path (mxtorch.graph.backends) equals the plain program: static
hybridize, optimize_for, Module binds, backend choice and fallback."""
import logging
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mxtorch as mx
from mxtorch.gluon import nn
from mxtorch.base import MXNetError
from mxtorch.graph import backends
from mxtorch.graph.backends.cpu_tuned import fusion
from mxtorch.graph.backends import inference
from optimize_helpers import (RTOL, ATOL, _x, _close)


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



def test_fold_batchnorm_numerics():
    rng = np.random.RandomState(0)
    t = lambda *s: torch.tensor(rng.uniform(-1, 1, s), dtype=torch.float64)  # noqa: E731
    x, w, b = t(2, 3, 6, 6), t(4, 3, 3, 3), t(4)
    gamma, beta, mean = t(4), t(4), t(4)
    var = t(4).abs() + 0.1
    for fix_gamma in (False, True):
        g = torch.ones(4, dtype=torch.float64) if fix_gamma else gamma
        ref = F.batch_norm(F.conv2d(x, w, b, padding=1), mean, var, g, beta, False, 0.0, 1e-3)
        fw, fb = fusion.fold_batchnorm(w, b, gamma, beta, mean, var, 1e-3, fix_gamma)
        torch.testing.assert_close(F.conv2d(x, fw, fb, padding=1), ref)
    fw, fb = fusion.fold_batchnorm(w, None, gamma, beta, mean, var, 1e-3)
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
    with caplog.at_level(logging.DEBUG, logger="mxtorch.graph.backends.inference"):
        net(x), net(x)
    assert any("compiled" in r.getMessage() and r.levelno == logging.DEBUG
               for r in caplog.records)


def test_backend_names():
    # every MXNet spelling picks its backend; no name picks the hand-tuned CPU one
    for name, picked in (("MKLDNN", "onednn"), ("ONEDNN", "onednn"), ("dnnl", "onednn"),
                         ("JIT", "jit"), ("inductor", "inductor"),
                         ("TORCH_COMPILE", "inductor"), (None, "onednn"), ("", "onednn")):
        assert backends.resolve(name).name == picked
    assert backends.names() == ["CUDAGRAPH", "DNNL", "INDUCTOR", "JIT", "MKLDNN", "ONEDNN",
                                "TORCH_COMPILE"]
    # the name decides what is built: JIT a frozen TorchScript program
    net = _resnet_like()
    x = _x()
    ref = net(x)
    net.hybridize(backend="JIT")
    for _ in range(3):
        _close(net(x), ref)
    opt = net._cached_op._optimizer
    assert opt.strategy == "jit"
    assert all(isinstance(e.fn, torch.jit.ScriptModule) for e in opt._cache.values())


@pytest.mark.parametrize("name", ["MKLDNN_QUANTIZE", "TENSORRT", "nonexistent", "default2"])
def test_unknown_backend_is_an_error(name):
    # MXNet names mxtorch has no backend for are errors naming the known ones, never a
    # different backend run quietly
    with pytest.raises(MXNetError, match=f"backend '{name}' is not a known backend; "
                       "program backends: CUDAGRAPH, DNNL, INDUCTOR, JIT, MKLDNN, ONEDNN, "
                       "TORCH_COMPILE; partitioning backends: default, default_v2"):
        backends.resolve(name)
    sym = mx.sym.exp(mx.sym.var("x"))
    with pytest.raises(MXNetError, match=f"backend '{name}' is not a known backend"):
        mx.nd.CachedOp(sym, [("backend", name)])


def test_unknown_backend_at_bind_and_in_executor(monkeypatch):
    sym = _mlp_sym()
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "TENSORRT")
    with pytest.raises(MXNetError, match="TENSORRT is not found.*known backends: default"):
        sym.simple_bind(mx.cpu(), data=(4, 6), grad_req="null")
    monkeypatch.delenv("MXNET_SUBGRAPH_BACKEND")
    exe = sym.simple_bind(mx.cpu(), data=(4, 6), grad_req="null")
    with pytest.raises(MXNetError, match="'MKLDNN_QUANTIZE' is not a known backend"):
        exe.optimize_for_inference(backend="MKLDNN_QUANTIZE")
    exe.optimize_for_inference(backend="jit")
    assert exe._opt.strategy == "jit"


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDAGRAPH runs where CUDA is")
def test_cudagraph_backend_unavailable_without_cuda():
    with pytest.raises(MXNetError, match="backend 'CUDAGRAPH' cannot run here: it needs a "
                       "CUDA device; available backends: DNNL, INDUCTOR, JIT, MKLDNN"):
        backends.resolve("CUDAGRAPH")
    net = _resnet_like()
    with pytest.raises(MXNetError, match="'CUDAGRAPH' cannot run here"):
        net.hybridize(backend="CUDAGRAPH")
        net(_x())


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
    assert isinstance(entry.fn, inference._CudaGraph)

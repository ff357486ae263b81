"""Every path of the performance work on each device: the CPU always, CUDA where a GPU
exists (skipped cleanly elsewhere).

Values are checked against files real MXNet 1.9.1 wrote, or against NumPy, never against
another mxtorch run on the CPU, so the CPU run checks these tests as well as the CPU path.
"""
import json
import os

import numpy as np
import pytest
import torch

import mxtorch as mx
from helpers import FIXTURES
from mxtorch import gluon, io
from mxtorch import module as mod
from test_gluon_block import LENET, lenet

MODELS = os.path.join(FIXTURES, "models")

DEVICES = [pytest.param("cpu", id="cpu"),
           pytest.param("gpu", id="gpu", marks=pytest.mark.skipif(
               not torch.cuda.is_available(), reason="needs a CUDA GPU"))]


@pytest.fixture(params=DEVICES)
def ctx(request):
    return mx.cpu() if request.param == "cpu" else mx.gpu(0)


def _fixture(name):
    folder = os.path.join(MODELS, name)
    with open(os.path.join(folder, "manifest.json")) as f:
        return folder, json.load(f)


def _on(arr, ctx):
    assert arr.context.device_type == ctx.device_type, (arr.context, ctx)
    return arr.asnumpy()


# ---------------------------------------------------------------- imperative + autograd
def test_imperative_ops_and_autograd(ctx):
    rng = np.random.RandomState(0)
    x, w, b = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((4, 6), (3, 6), (3,)))
    X, W, B = (mx.nd.array(a, ctx=ctx) for a in (x, w, b))
    W.attach_grad()
    B.attach_grad()
    with mx.autograd.record():
        h = mx.nd.relu(mx.nd.FullyConnected(X, W, B, num_hidden=3))
        loss = (h * h).sum()
    loss.backward()
    pre = x @ w.T + b
    hn = np.maximum(pre, 0)
    np.testing.assert_allclose(_on(h, ctx), hn, rtol=1e-5, atol=1e-6)
    dpre = 2 * hn * (pre > 0)
    np.testing.assert_allclose(_on(W.grad, ctx), dpre.T @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_on(B.grad, ctx), dpre.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_on(X + 1, ctx), x + 1)


# ---------------------------------------------------------------- Module / Executor
def test_module_forward_backward_update_match_mxnet(ctx):
    """Bound executor forward+backward against MXNet's gradients, then the fused SGD update
    against MXNet's rule (wd only on *_weight/*_gamma, rescale_grad = 1/batch)."""
    d, man = _fixture("mlp_module")
    tol = man["tolerance"]
    x = np.load(os.path.join(d, "input_data.npy"))
    lab = np.load(os.path.join(d, "input_softmax_label.npy"))
    m = mod.Module.load(os.path.join(d, "mlp"), 1, load_optimizer_states=True, context=ctx)
    m.bind(data_shapes=[("data", x.shape)], label_shapes=[("softmax_label", lab.shape)])
    batch = io.DataBatch([mx.nd.array(x)], [mx.nd.array(lab)])
    m.forward(batch, is_train=False)
    np.testing.assert_allclose(_on(m.get_outputs()[0], ctx),
                               np.load(os.path.join(d, "output_infer_0.npy")), **tol)
    m.forward_backward(batch)
    grads = {}
    for name, fname in man["train_backward"]["grads"].items():
        if name == "data":
            continue
        grads[name] = np.load(os.path.join(d, fname))
        got = m._exec_group.execs[0].grad_dict[name]
        np.testing.assert_allclose(_on(got, ctx), grads[name], **tol)
    lr, momentum, wd = 0.1, 0.9, 1e-4
    m.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": lr,
                                                         "momentum": momentum, "wd": wd})
    before = {k: v.asnumpy() for k, v in m.get_params()[0].items()}
    moms = np.load(os.path.join(d, "states_expected.npz"))
    index = man["optimizer_states"]["index_to_param"]
    m.update()
    after = m.get_params()[0]
    for idx, name in index.items():
        decay = wd if name.endswith(("_weight", "_gamma")) else 0.0
        mom = momentum * moms[f"momentum.{idx}"] - lr * (grads[name] / x.shape[0]
                                                          + decay * before[name])
        np.testing.assert_allclose(after[name].asnumpy(), before[name] + mom,
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_on(m._updater.states[int(idx)], ctx), mom,
                                   rtol=1e-5, atol=1e-6)


def test_module_inference_bind_and_training_match_mxnet(ctx):
    """bind(for_training=False) takes the optimizing path (BatchNorm folded); the training
    bind keeps MXNet's batch statistics, gradients and moving-average update."""
    d, man = _fixture("cnn_bn_module")
    tol = man["tolerance"]
    x = mx.nd.array(np.load(os.path.join(d, "input_data.npy")))
    infer = mod.Module.load(os.path.join(d, "cnn_bn"), 0, label_names=None, context=ctx)
    infer.bind(data_shapes=[("data", x.shape)], for_training=False)
    assert infer._exec_group.execs[0]._opt is not None
    for _ in range(2):  # compiled on the first call, reused on the second
        infer.forward(io.DataBatch([x]), is_train=False)
        np.testing.assert_allclose(_on(infer.get_outputs()[0], ctx),
                                   np.load(os.path.join(d, "output_infer_0.npy")), **tol)
    train = mod.Module.load(os.path.join(d, "cnn_bn"), 0, label_names=None, context=ctx)
    train.bind(data_shapes=[("data", x.shape)], inputs_need_grad=True)
    train.forward(io.DataBatch([x]), is_train=True)
    np.testing.assert_allclose(_on(train.get_outputs()[0], ctx),
                               np.load(os.path.join(d, "output_train_0.npy")), **tol)
    train.backward([mx.nd.ones((2, 10), ctx=ctx)])
    exe = train._exec_group.execs[0]
    for name, fname in man["train_backward"]["grads"].items():
        got = train.get_input_grads()[0] if name == "data" else exe.grad_dict[name]
        np.testing.assert_allclose(_on(got, ctx), np.load(os.path.join(d, fname)), **tol)
    for name, fname in man["train_backward"]["aux_after_train_forward"].items():
        np.testing.assert_allclose(_on(exe.aux_dict[name], ctx),
                                   np.load(os.path.join(d, fname)),
                                   **man["train_backward"]["tolerance"])


# ---------------------------------------------------------------- Gluon
def _lenet_on(ctx):
    net = lenet()
    net.load_parameters(os.path.join(LENET, "lenet.params"), ctx=ctx)
    return net


def test_hybridized_static_training_step_matches_mxnet(ctx):
    """hybridize(static_alloc, static_shape): MXNet's gradients, then one Trainer step
    (the multi-tensor SGD) against NumPy."""
    _, man = _fixture("lenet_gluon")
    tol = man["tolerance"]
    x = mx.nd.array(np.load(os.path.join(LENET, "input_data.npy")), ctx=ctx)
    net = _lenet_on(ctx)
    net.hybridize(static_alloc=True, static_shape=True)
    params = net._collect_params_with_prefix()
    before = {k: p.data().asnumpy() for k, p in params.items()}
    lr, momentum = 0.05, 0.9
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": lr, "momentum": momentum})
    for step in range(2):
        with mx.autograd.record(train_mode=False):
            y = net(x)
        y.backward()
        if step == 0:
            for key, fname in man["train_backward"]["grads"].items():
                np.testing.assert_allclose(_on(params[key].grad(), ctx),
                                           np.load(os.path.join(LENET, fname)), **tol)
            grads = {k: p.grad().asnumpy() for k, p in params.items()}
            trainer.step(x.shape[0])
    # two steps: mom1 = -lr g0/2, w1 = w0 + mom1; mom2 = m mom1 - lr g1/2, w2 = w1 + mom2
    grads1 = {k: p.grad().asnumpy() for k, p in params.items()}
    trainer.step(x.shape[0])
    for key, p in params.items():
        mom1 = -lr * grads[key] / 2
        mom2 = momentum * mom1 - lr * grads1[key] / 2
        np.testing.assert_allclose(_on(p.data(), ctx), before[key] + mom1 + mom2,
                                   rtol=1e-5, atol=1e-6)


def test_hybridized_inference_path_and_shape_change(ctx):
    """The optimizing inference path on this device equals MXNet's output, and a new batch
    size recompiles (rows are independent, so the expected rows are MXNet's)."""
    _, man = _fixture("lenet_gluon")
    tol = man["tolerance"]
    x = np.load(os.path.join(LENET, "input_data.npy"))
    expected = np.load(os.path.join(LENET, "output_infer_0.npy"))
    sb = gluon.SymbolBlock.imports(os.path.join(LENET, "lenet-symbol.json"), ["data"],
                                   os.path.join(LENET, "lenet-0000.params"), ctx=ctx)
    sb.hybridize(static_alloc=True, static_shape=True)
    for _ in range(2):
        np.testing.assert_allclose(_on(sb(mx.nd.array(x, ctx=ctx)), ctx), expected, **tol)
    x3 = np.concatenate([x, x[:1]])
    np.testing.assert_allclose(_on(sb(mx.nd.array(x3, ctx=ctx)), ctx),
                               np.concatenate([expected, expected[:1]]), **tol)
    assert len(sb._cached_op._optimizer._cache) == 2

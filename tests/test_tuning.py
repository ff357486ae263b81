"""Operator tuning (mxtorch/ops/tuning.py): small imperative calls of kernels that start
OpenMP at any size, and the backward pass of a graph of small calls, run on one thread;
large ones, and hybridized programs, keep the thread count. Values never change."""
import numpy as np
import pytest
import torch

import mxtorch as mx
from mxtorch.base import MXNetError
from mxtorch.ops import registry, tuning


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def _spy(monkeypatch, name):
    """Record the thread count each call of operator ``name``'s compute sees."""
    opdef = registry.get(name)
    compute, seen = opdef.compute, []

    def spy(attrs, *tensors, **kw):
        seen.append(torch.get_num_threads())
        return compute(attrs, *tensors, **kw)
    monkeypatch.setattr(opdef, "compute", spy)
    return seen


class _Threads(mx.autograd.Function):
    """Identity whose backward notes the thread count the backward pass runs with."""
    seen: list = []

    def forward(self, x):
        return x * 1

    def backward(self, dy):
        _Threads.seen.append(torch.get_num_threads())
        return dy


def test_estimates():
    data, weight = torch.ones(32, 784), torch.ones(256, 784)
    assert tuning.dense(None, data, weight) == pytest.approx(32 * 784 * 256 / 40_000)
    assert tuning.elements(None, torch.ones(1000)) == pytest.approx(0.5)
    assert tuning.conv(None, torch.ones(2, 3, 8, 8), torch.ones(4, 3, 3, 3)) == \
        pytest.approx(2 * 64 * 108 / 40_000)
    lhs, rhs = torch.ones(5, 6, 7), torch.ones(5, 7, 8)
    assert tuning.batch_dot(None, lhs, rhs) == pytest.approx(5 * 6 * 7 * 8 / 40_000)
    assert tuning.dot(None, torch.ones(6, 7), torch.ones(7, 8)) == \
        pytest.approx(6 * 7 * 8 / 40_000)


def test_small_calls_run_on_one_thread_large_ones_on_all(two_threads, monkeypatch):
    seen = _spy(monkeypatch, "softmax")
    small = np.random.RandomState(0).randn(32, 10).astype(np.float32)
    out = mx.nd.softmax(mx.nd.array(small))
    e = np.exp(small - small.max(1, keepdims=True))
    np.testing.assert_allclose(out.asnumpy(), e / e.sum(1, keepdims=True), rtol=1e-5)
    mx.nd.softmax(mx.nd.ones((1024, 1024)))
    assert seen == [1, 2]
    assert torch.get_num_threads() == 2


def test_thread_count_restored_after_an_operator_error(two_threads):
    with pytest.raises(MXNetError, match="FullyConnected"):
        mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 5)), mx.nd.ones((4,)),
                             num_hidden=4)
    assert torch.get_num_threads() == 2


def test_backward_of_a_small_graph_runs_on_one_thread(two_threads):
    _Threads.seen = []
    w = mx.nd.ones((4, 3))
    w.attach_grad()
    x = mx.nd.ones((2, 3))
    with mx.autograd.record():
        y = _Threads()(mx.nd.FullyConnected(x, w, num_hidden=4, no_bias=True))
    y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), np.full((4, 3), 2.0))
    assert _Threads.seen == [1] and torch.get_num_threads() == 2


def test_backward_keeps_the_threads_for_a_large_call_or_a_hybridized_block(two_threads):
    _Threads.seen = []
    w = mx.nd.ones((512, 1024))
    w.attach_grad()
    x = mx.nd.ones((64, 1024))      # 64 x 1024 x 512 multiply-adds: about 840 us
    with mx.autograd.record():
        y = _Threads()(mx.nd.FullyConnected(x, w, num_hidden=512, no_bias=True))
    y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), np.full((512, 1024), 64.0))

    net = mx.gluon.nn.Dense(3, in_units=3)
    net.initialize()
    net.hybridize()
    with mx.autograd.record():        # the block's program counts as large
        y = _Threads()(net(mx.nd.ones((2, 3))))
    y.backward()
    with mx.autograd.record():        # a new graph of small calls: one thread again
        y = _Threads()(mx.nd.FullyConnected(mx.nd.ones((2, 3)), w[:4, :3], num_hidden=4,
                                            no_bias=True))
    y.backward()
    assert _Threads.seen == [2, 2, 1]


def test_small_fused_sgd_step_runs_on_one_thread(two_threads, monkeypatch):
    from mxtorch.ops import optim
    if optim._FUSED_SGD is None:
        pytest.skip("this torch has no fused SGD kernel")
    fused, seen = optim._FUSED_SGD, []

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return fused(*args, **kwargs)
    monkeypatch.setattr(optim, "_FUSED_SGD", spy)
    for units in (3, 1024):            # 4 x 3, then 1024 x 1024 weights
        net = mx.gluon.nn.Dense(units, in_units=units, use_bias=False,
                                weight_initializer=mx.init.One())
        net.initialize()
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                                   {"learning_rate": 0.1, "momentum": 0.9})
        with mx.autograd.record():
            y = net(mx.nd.ones((1, units)))
        y.backward()
        trainer.step(1)
        np.testing.assert_allclose(net.weight.data().asnumpy(),
                                   np.full((units, units), 0.9), rtol=1e-6)
    assert seen == [1, 2] and torch.get_num_threads() == 2

"""Channels-last convolution activations in training programs (mxtorch.graph.layout):
which entries change layout, and results equal to the plain NCHW program."""
import numpy as np
import pytest
import torch

import mxtorch as mx
from mxtorch.gluon import nn
from mxtorch.graph import layout
from mxtorch.graph.compile import GraphProgram

RTOL, ATOL = 1e-4, 1e-5


def _sym():
    data = mx.sym.var("data")
    c1 = mx.sym.Convolution(data, kernel=(3, 3), num_filter=6, pad=(1, 1), name="c1")
    r1 = mx.sym.Activation(c1, act_type="relu", name="r1")
    p1 = mx.sym.Pooling(r1, kernel=(2, 2), stride=(2, 2), pool_type="max", name="p1")
    c2 = mx.sym.Convolution(p1, kernel=(3, 3), num_filter=6, pad=(1, 1), name="c2")
    b2 = mx.sym.BatchNorm(c2, name="b2")
    s = mx.sym.elemwise_add(b2, p1, name="sum")
    r2 = mx.sym.Activation(s, act_type="relu", name="r2")
    f = mx.sym.Flatten(r2, name="flat")
    fc = mx.sym.FullyConnected(f, num_hidden=4, name="fc")
    return mx.sym.Group([mx.sym.SoftmaxOutput(fc, name="softmax"), r2])


def _by_name(program, keys):
    return {n.name for n in program.nodes if (id(n), 0) in keys}


def test_channels_last_entries():
    program = GraphProgram(_sym()._outputs)
    cl, starts = layout.channels_last_entries(program.nodes)
    assert _by_name(program, cl) == {"c1", "r1", "p1", "c2", "b2", "sum", "r2"}
    assert {n.name for n in program.nodes if id(n) in starts} == {"c1", "c2"}
    # a sum with one NCHW summand is not channels-last, nor is what follows it
    data = mx.sym.var("data")
    c = mx.sym.Convolution(data, kernel=(1, 1), num_filter=2, name="c")
    s = mx.sym.elemwise_add(c, data, name="s")
    program = GraphProgram([mx.sym.Activation(s, act_type="relu", name="r")._outputs[0]])
    cl, _ = layout.channels_last_entries(program.nodes)
    assert _by_name(program, cl) == {"c"}
    # so is a concatenation: of two convolutions it is channels-last, with data not
    c2 = mx.sym.Convolution(data, kernel=(1, 1), num_filter=3, name="c2")
    both = mx.sym.Concat(c, c2, dim=1, name="both")
    mixed = mx.sym.Concat(c, data, dim=1, name="mixed")
    program = GraphProgram(mx.sym.Group([both, mixed])._outputs)
    cl, _ = layout.channels_last_entries(program.nodes)
    assert _by_name(program, cl) == {"c", "c2", "both"}
    # NHWC and 1-D convolutions keep their layout
    x3 = mx.sym.var("x")
    c1d = mx.sym.Convolution(x3, kernel=(3,), num_filter=2, name="c1d")
    nhwc = mx.sym.Convolution(data, kernel=(1, 1), num_filter=2, layout="NHWC", name="nhwc")
    program = GraphProgram(mx.sym.Group([c1d, nhwc])._outputs)
    assert layout.channels_last_entries(program.nodes) == (set(), set())


def _calls(gm, fn):
    return [n for n in gm.graph.nodes if n.op == "call_function" and n.target is fn]


def test_training_program_converts_at_the_edges():
    program = GraphProgram(_sym()._outputs, channels_last=True)
    gm = program.module(True, torch.device("cpu"))
    to_cl = _calls(gm, layout.to_channels_last)
    # each convolution's output; the weights stay NCHW (a channels-last copy of each
    # would be kept for the backward pass, and oneDNN reorders them as fast itself)
    assert sorted(str(n.args[0]) for n in to_cl) == ["c1", "c2"]
    dense = _calls(gm, layout.to_dense)
    # one copy of r2 serves both Flatten and the second output
    assert len(dense) == 1 and len(dense[0].users) == 2
    # inference programs (the fusion's business) and other devices stay NCHW
    assert not _calls(program.module(False, torch.device("cpu")), layout.to_channels_last)
    assert not _calls(program.module(True, torch.device("meta")), layout.to_channels_last)
    assert not _calls(GraphProgram(_sym()._outputs).module(True, torch.device("cpu")),
                      layout.to_channels_last)


def _bind(channels_last):
    rng = np.random.RandomState(3)
    exe = _sym().simple_bind(mx.cpu(), data=(4, 3, 8, 8))
    for name, arr in exe.arg_dict.items():
        if name == "softmax_label":
            arr[:] = rng.randint(0, 4, arr.shape)
        else:
            arr[:] = rng.uniform(-1, 1, arr.shape)
    exe._program.channels_last = channels_last
    return exe


@pytest.mark.parametrize("trace", [False, True])
def test_executor_training_equals_nchw(trace):
    exes = [_bind(True), _bind(False)]
    for exe in exes:
        exe._trace = "always" if trace else None
        for _ in range(3):   # the third step runs the traced programs
            exe.forward(is_train=True)
            exe.backward([mx.nd.ones((4, 4)) * 0, mx.nd.ones((4, 6, 4, 4))])
    cl, plain = exes
    assert cl._program.channels_last and _calls(cl._program.module(True, torch.device("cpu")),
                                                layout.to_channels_last)
    for a, b in zip(cl.outputs, plain.outputs):
        assert a._t.is_contiguous()
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=RTOL, atol=ATOL)
    for name in cl._arg_names:
        g, ref = cl.grad_dict.get(name), plain.grad_dict.get(name)
        if ref is None:
            continue
        assert g._t.is_contiguous(), name
        np.testing.assert_allclose(g.asnumpy(), ref.asnumpy(), rtol=RTOL, atol=ATOL,
                                   err_msg=name)
    for a, b in zip(cl.aux_arrays, plain.aux_arrays):   # BatchNorm's moving statistics
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=RTOL, atol=ATOL)


def _net():
    mx.random.seed(7)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


def test_static_hybridized_training_equals_plain():
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (4, 2, 10, 10)))
    y = mx.nd.array([0, 1, 2, 1])
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    results = []
    for flags in ({"static_alloc": True, "static_shape": True}, {}):
        net = _net()
        net.hybridize(**flags)
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        for _ in range(2):
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(4)
        results.append((loss.asnumpy(), [p.data().asnumpy() for p in
                                         net.collect_params().values()]))
        assert net._cached_op._program.channels_last == bool(flags)
    (l1, p1), (l2, p2) = results
    np.testing.assert_allclose(l1, l2, rtol=RTOL, atol=ATOL)
    for a, b in zip(p1, p2):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def test_autograd_grad_of_a_channels_last_program_is_dense():
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (2, 2, 10, 10)))
    grads = []
    for flags in ({"static_alloc": True, "static_shape": True}, {}):
        net = _net()
        net.hybridize(**flags)
        net(x)   # deferred initialization
        weights = [p.data() for name, p in net.collect_params().items()
                   if name.endswith("weight") and p.data().ndim == 4]
        with mx.autograd.record():
            out = net(x).sum()
        got = mx.autograd.grad(out, weights)
        assert all(g._t.is_contiguous() for g in got)
        grads.append([g.asnumpy() for g in got])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)

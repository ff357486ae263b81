"""oneDNN fusion (CPU) in the optimizing inference path equals the plain program."""

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.gluon import nn
from optimize_helpers import (RTOL, ATOL, _x, needs_onednn, _run_optimized)


def _fused_names(fn):
    return [n.target.__name__ for n in fn.gm.graph.nodes
            if n.op == "call_function" and n.target.__name__.endswith("_onednn")]



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

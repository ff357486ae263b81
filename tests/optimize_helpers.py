"""Helpers shared by the test_optimize_*.py files (the optimizing inference path)."""

import numpy as np
import pytest
import torch.nn.functional as F

import mxtorch as mx
from mxtorch.gluon import nn
from mxtorch.graph.backends.cpu_tuned import fusion

RTOL, ATOL = 1e-4, 1e-5


def _x(batch=2, size=12, seed=1):
    return mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, (batch, 3, size, size)))


def _close(a, b):
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=RTOL, atol=ATOL)


needs_onednn = pytest.mark.skipif(not fusion.available(), reason="torch built without oneDNN")


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


def _conv_ref(x, w, b, other, relu):
    y = F.conv2d(x.double(), w.double(), None if b is None else b.double(), padding=1)
    if other is not None:
        y = y + other.double()
    return y.clamp_min(0) if relu else y


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

"""Imperative dispatch: mx.nd calls against the same torch calls, in one run.

Targets (issue 2): ratio <= 1.5 for a 64x64 elementwise add, <= 1.1 for FullyConnected
on a (256, 784) batch with 256 hidden units.
"""
import torch

import mxtorch as mx
from common import compare, report

torch.set_num_threads(int(__import__("os").environ.get("BENCH_THREADS", "2")))


def main():
    a = mx.nd.ones((64, 64))
    b = mx.nd.ones((64, 64))
    ta, tb = a._t, b._t
    res = compare({"torch.add": lambda: torch.add(ta, tb),
                   "mx.nd a + b": lambda: a + b,
                   "mx.nd.elemwise_add": lambda: mx.nd.elemwise_add(a, b)}, number=20000)
    report("64x64 add", res, "torch.add")
    x = mx.nd.ones((256, 784))
    w = mx.nd.ones((256, 784))
    bias = mx.nd.ones((256,))
    tx, tw, tbias = x._t, w._t, bias._t
    res = compare({"torch F.linear": lambda: torch.nn.functional.linear(tx, tw, tbias),
                   "mx.nd.FullyConnected": lambda: mx.nd.FullyConnected(
                       x, w, bias, num_hidden=256)}, number=300)
    report("FullyConnected (256, 784) -> 256", res, "torch F.linear")
    recorded()


def recorded():
    """The same small calls on an attached array inside ``autograd.record()``, against
    torch building its graph (mx.autograd also keeps the operator record that
    ``get_symbol`` reads)."""
    a = mx.nd.ones((64, 64))
    b = mx.nd.ones((64, 64))
    a.attach_grad()
    ta, tb = a._t, b._t
    with mx.autograd.record():
        res = compare({"torch.add (grad)": lambda: torch.add(ta, tb),
                       "mx.nd a + b": lambda: a + b,
                       "mx.nd a * 2": lambda: a * 2,
                       "mx.nd.relu": lambda: mx.nd.relu(a),
                       "mx.nd.FullyConnected": lambda: mx.nd.FullyConnected(
                           a, b, num_hidden=64, no_bias=True)}, number=20000)
    report("recorded 64x64, attached input", res, "torch.add (grad)")


if __name__ == "__main__":
    main()

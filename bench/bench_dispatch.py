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


if __name__ == "__main__":
    main()

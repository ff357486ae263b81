"""Bound-executor forward+backward of an MLP 784-256-256-10 with SoftmaxOutput at batch
128, against a plain torch nn.Module doing the same work in the same run.

Target (issue 3): ratio <= 1.15.
"""
import numpy as np
import torch
import torch.nn.functional as F

import mxtorch as mx
from common import compare, report
from mxnet_ref import _mlp_symbol

torch.set_num_threads(int(__import__("os").environ.get("BENCH_THREADS", "2")))
BATCH = 128


def mx_executor():
    net = _mlp_symbol(mx)
    exe = net.simple_bind(mx.cpu(), data=(BATCH, 784), grad_req={
        n: ("null" if n in ("data", "softmax_label") else "write")
        for n in net.list_arguments()})
    rng = np.random.RandomState(0)
    for arr in exe.arg_dict.values():
        arr[:] = rng.uniform(-0.05, 0.05, arr.shape)
    exe.arg_dict["softmax_label"][:] = rng.randint(0, 10, BATCH)

    def step():
        exe.forward(is_train=True)
        exe.backward()
    return step


def torch_module():
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    x = torch.rand(BATCH, 784)
    y = torch.randint(0, 10, (BATCH,))
    params = list(model.parameters())

    def step():
        out = model(x)
        loss = F.cross_entropy(out, y, reduction="sum")
        torch.autograd.grad(loss, params)
    return step


def main():
    res = compare({"torch nn.Module": torch_module(), "mx executor": mx_executor()},
                  number=50)
    report("MLP 784-256-256-10 forward+backward, batch 128", res, "torch nn.Module")


if __name__ == "__main__":
    main()

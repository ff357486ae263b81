"""The issue-10 workloads, each for three columns: ``mxtorch``, ``torch`` (eager) and
``compile`` (``torch.compile`` of the same torch model).

``build(workload, column)`` returns ``(step, number)``: a no-argument callable doing one
unit of work and how many calls one timing sample takes. Used by ``run_all.py``. The
mxtorch column runs the MXNet-API code of ``mxnet_ref.build`` with ``mx = mxtorch`` (the
same code the optional real-MXNet column runs); this file holds the torch baselines.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn as tnn
import torch.nn.functional as F

import mxtorch as mx
from mxnet_ref import _data, resnet18_train
from mxnet_ref import build as build_mx

WORKLOADS = ["resnet18_b1", "resnet18_b16", "lenet_train_b64", "mlp_fwdbwd_b128",
             "module_fit_epoch_b100", "imperative_mlp_b32", "dispatch_add"]
COLUMNS = ["mxtorch", "torch", "compile"]


def _compile(model):
    return torch.compile(model)


# ---------------------------------------------------------------- resnet18 inference
class _TBasic(tnn.Module):
    def __init__(self, cin, c, stride):
        super().__init__()
        self.c1 = tnn.Conv2d(cin, c, 3, stride, 1, bias=False)
        self.b1 = tnn.BatchNorm2d(c)
        self.c2 = tnn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.b2 = tnn.BatchNorm2d(c)
        self.down = None
        if stride != 1 or cin != c:
            self.down = tnn.Sequential(tnn.Conv2d(cin, c, 1, stride, bias=False),
                                       tnn.BatchNorm2d(c))

    def forward(self, x):
        r = x if self.down is None else self.down(x)
        return F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))) + r)


def torch_resnet18() -> tnn.Module:
    """torchvision's resnet18 layout (torchvision is not installed here)."""
    layers = [tnn.Conv2d(3, 64, 7, 2, 3, bias=False), tnn.BatchNorm2d(64), tnn.ReLU(),
              tnn.MaxPool2d(3, 2, 1)]
    cin = 64
    for c, s in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [_TBasic(cin, c, s), _TBasic(c, c, 1)]
        cin = c
    layers += [tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(512, 1000)]
    return tnn.Sequential(*layers)


def resnet_infer(column: str, batch: int):
    x = np.random.RandomState(0).uniform(-1, 1, (batch, 3, 224, 224)).astype(np.float32)
    number = 5 if batch == 1 else 1
    model = torch_resnet18().eval()
    if column == "compile":
        model = _compile(model)
    xt = torch.from_numpy(x)

    def step():
        with torch.no_grad():
            model(xt)
    return step, number


# ---------------------------------------------------------------- LeNet training
def torch_lenet() -> tnn.Module:
    return tnn.Sequential(tnn.Conv2d(1, 20, 5), tnn.ReLU(), tnn.MaxPool2d(2, 2),
                          tnn.Conv2d(20, 50, 5), tnn.ReLU(), tnn.MaxPool2d(2, 2),
                          tnn.Flatten(), tnn.Linear(800, 500), tnn.ReLU(), tnn.Linear(500, 10))


def _torch_step(model, x, y):
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def lenet_train(column: str):
    x, y = _data((64, 1, 28, 28))
    model = torch_lenet()
    if column == "compile":
        model = _compile(model)
    return _torch_step(model, torch.from_numpy(x), torch.from_numpy(y)), 10


# ---------------------------------------------------------------- MLP
def torch_mlp() -> tnn.Module:
    return tnn.Sequential(tnn.Linear(784, 256), tnn.ReLU(), tnn.Linear(256, 256), tnn.ReLU(),
                          tnn.Linear(256, 10))


def mlp_fwdbwd(column: str):
    batch = 128
    model = torch_mlp()
    if column == "compile":
        model = _compile(model)
    x, y = _data((batch, 784))
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    params = list(model.parameters())

    def tstep():
        loss = F.cross_entropy(model(xt), yt, reduction="sum")
        torch.autograd.grad(loss, params)
    return tstep, 20


def module_fit(column: str):
    x, y = _data((2000, 784))
    model = torch_mlp()
    if column == "compile":
        model = _compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
    xs = torch.from_numpy(x).split(100)
    ys = torch.from_numpy(y).split(100)

    def tstep():
        correct = 0
        for xb, yb in zip(xs, ys):
            opt.zero_grad(set_to_none=True)
            out = model(xb)
            F.cross_entropy(out, yb).backward()
            opt.step()
            correct += int((out.argmax(1) == yb).sum())
    return tstep, 1


def imperative_mlp(column: str):
    x, y = _data((32, 784))
    model = torch_mlp()
    if column == "compile":
        model = _compile(model)
    return _torch_step(model, torch.from_numpy(x), torch.from_numpy(y)), 50


def dispatch_add(column: str):
    a, b = mx.nd.ones((64, 64)), mx.nd.ones((64, 64))
    ta, tb = a._t, b._t
    if column == "compile":
        fn = torch.compile(torch.add)
        return (lambda: fn(ta, tb)), 20000
    return (lambda: torch.add(ta, tb)), 20000


def build(workload: str, column: str):
    """``(step, number)`` for one workload and column."""
    if column == "mxtorch":
        return build_mx(mx, workload)
    if workload == "resnet18_b1":
        return resnet_infer(column, 1)
    if workload == "resnet18_b16":
        return resnet_infer(column, 16)
    table = {"lenet_train_b64": lenet_train, "mlp_fwdbwd_b128": mlp_fwdbwd,
             "module_fit_epoch_b100": module_fit, "imperative_mlp_b32": imperative_mlp,
             "dispatch_add": dispatch_add}
    return table[workload](column)


def resnet18_train_step(column: str, batch: int = 8):
    """One resnet18 training step (for the peak-memory measurement)."""
    if column == "mxtorch":
        return resnet18_train(mx, batch)
    x, y = _data((batch, 3, 224, 224), classes=1000)
    model = torch_resnet18()
    if column == "compile":
        model = _compile(model)
    return _torch_step(model, torch.from_numpy(x), torch.from_numpy(y))

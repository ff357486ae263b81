"""The issue-10 workloads written once against the MXNet 1.9.1 API: ``build(mx, name)``.

The ``mxtorch`` column of run_all.py runs them with ``mx = mxtorch`` (the same user code a
MXNet user would bring) and the optional ``mxnet`` column with real MXNet 1.9.1:
``run_all.py --columns mxtorch,torch,mxnet --mxnet-python /path/to/python`` runs this file
with an interpreter that has ``mxnet`` (and NumPy < 1.24); it never imports torch or
mxtorch. ``serve`` is the workers' line protocol: one workload name per line in, one JSON
timing sample per line out. MXNet runs asynchronously, so its samples end with
``mx.nd.waitall()``.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np


def _data(shape, classes=10, seed=0):
    rng = np.random.RandomState(seed)
    return (rng.uniform(0, 1, shape).astype(np.float32),
            rng.randint(0, classes, shape[0]).astype(np.int64))


def _gluon_step(mx, net, x, y, batch):
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.01, "momentum": 0.9})

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
    return step


def _mlp_symbol(mx):
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=256, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=256, name="fc2")
    net = mx.sym.Activation(net, act_type="relu", name="relu2")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc3")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def resnet18(mx):
    net = mx.gluon.model_zoo.vision.resnet18_v1()
    net.initialize(mx.init.Xavier())
    return net


def build(mx, name: str):
    """``(step, number)``: one unit of work and how many calls one timing sample takes."""
    nn = mx.gluon.nn
    if name in ("resnet18_b1", "resnet18_b16"):
        batch = 1 if name == "resnet18_b1" else 16
        net = resnet18(mx)
        net.hybridize(static_alloc=True, static_shape=True)
        x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (batch, 3, 224, 224)))
        return (lambda: net(x).wait_to_read()), (5 if batch == 1 else 1)
    if name == "lenet_train_b64":
        net = nn.HybridSequential()
        net.add(nn.Conv2D(20, 5, activation="relu"), nn.MaxPool2D(2, 2),
                nn.Conv2D(50, 5, activation="relu"), nn.MaxPool2D(2, 2), nn.Flatten(),
                nn.Dense(500, activation="relu"), nn.Dense(10))
        net.initialize(mx.init.Xavier())
        net.hybridize(static_alloc=True, static_shape=True)
        x, y = _data((64, 1, 28, 28))
        return _gluon_step(mx, net, mx.nd.array(x), mx.nd.array(y), 64), 10
    if name == "mlp_fwdbwd_b128":
        sym = _mlp_symbol(mx)
        exe = sym.simple_bind(mx.cpu(), data=(128, 784), grad_req={
            n: ("null" if n in ("data", "softmax_label") else "write")
            for n in sym.list_arguments()})
        rng = np.random.RandomState(0)
        for arr in exe.arg_dict.values():
            arr[:] = rng.uniform(-0.05, 0.05, arr.shape)
        exe.arg_dict["softmax_label"][:] = rng.randint(0, 10, 128)

        def step():
            exe.forward(is_train=True)
            exe.backward()
        return step, 20
    if name == "module_fit_epoch_b100":
        x, y = _data((2000, 784))
        it = mx.io.NDArrayIter(x, y.astype(np.float32), batch_size=100,
                               label_name="softmax_label")
        mod = mx.mod.Module(_mlp_symbol(mx))
        mod.bind(it.provide_data, it.provide_label)
        mod.init_params(mx.init.Xavier())
        mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.01,
                                                              "momentum": 0.9})

        def fit():
            it.reset()
            mod.fit(it, num_epoch=1, eval_metric="acc", kvstore=None, force_init=False)
        return fit, 1
    if name == "imperative_mlp_b32":
        net = nn.Sequential()
        net.add(nn.Dense(256, activation="relu"), nn.Dense(256, activation="relu"),
                nn.Dense(10))
        net.initialize(mx.init.Xavier())
        x, y = _data((32, 784))
        return _gluon_step(mx, net, mx.nd.array(x), mx.nd.array(y), 32), 50
    if name == "dispatch_add":
        a, b = mx.nd.ones((64, 64)), mx.nd.ones((64, 64))
        return (lambda: a + b), 20000
    raise KeyError(name)


def serve(build_one, sync=lambda: None) -> None:
    """Answer workload names on stdin with one JSON timing sample each (first call builds
    and warms the workload up, untimed)."""
    built: dict = {}
    for line in sys.stdin:
        name = line.strip()
        if not name:
            continue
        try:
            if name not in built:
                t0 = time.perf_counter()
                step, number = build_one(name)
                for _ in range(3):
                    step()
                sync()
                built[name] = (step, number, time.perf_counter() - t0)
            step, number, setup = built[name]
            t0 = time.perf_counter()
            for _ in range(number):
                step()
            sync()
            reply = {"t": (time.perf_counter() - t0) / number, "setup": setup}
        except Exception as err:  # noqa: BLE001 -- report, keep serving
            reply = {"error": f"{type(err).__name__}: {err}"[:300]}
        print(json.dumps(reply), flush=True)


def resnet18_train(mx, batch: int = 8):
    """One hybridized resnet18_v1 training step (for the peak-memory measurement)."""
    x, y = _data((batch, 3, 224, 224), classes=1000)
    net = resnet18(mx)
    net.hybridize(static_alloc=True, static_shape=True)
    return _gluon_step(mx, net, mx.nd.array(x), mx.nd.array(y), batch)


def peak_memory(step, sync=lambda: None, steps: int = 5) -> None:
    """Print the peak RSS and its growth (MiB) over ``steps`` calls of ``step``, as JSON:
    the peak settles after three or four (freed blocks are reused only when they fit)."""
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(steps):
        step()
    sync()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_mib": after / 1024, "step_mib": (after - before) / 1024}))


def worker() -> None:
    """The ``mxnet`` column: these workloads in real MXNet."""
    os.environ.setdefault("MXNET_MKLDNN_ENABLED", "1")
    import logging
    import warnings
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    import mxnet as mx
    if sys.argv[1:] == ["--memory"]:
        peak_memory(resnet18_train(mx), mx.nd.waitall)
        return
    serve(lambda name: build(mx, name), mx.nd.waitall)


if __name__ == "__main__":
    worker()

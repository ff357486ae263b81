"""Data parallelism over several contexts: each batch is split across
context=[mx.cpu(0), mx.cpu(1)] (use [mx.gpu(0), mx.gpu(1)] on a multi-GPU machine), the
gradients are summed through a KVStore and every copy of the weights stays identical.
Shown with both Module and Gluon (split_and_load + Trainer).

    python examples/multi_context.py [--epochs 5] [--gpus 0,1]
"""
import argparse
import logging

import numpy as np

import mxtorch as mx  # with real MXNet: import mxnet as mx
from mxtorch import autograd, gluon
from mxtorch.gluon import nn


def make_data(n, rng, w):
    x = rng.randn(n, 16).astype(np.float32)
    return x, (x @ w).argmax(axis=1).astype(np.float32)


def with_module(ctxs, epochs, train, val):
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=64, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=4, name="fc2")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    mod = mx.mod.Module(net, context=ctxs)  # each batch of 64 -> 32 per context
    train_iter = mx.io.NDArrayIter(*train, batch_size=64, shuffle=True)
    val_iter = mx.io.NDArrayIter(*val, batch_size=64)
    mod.fit(train_iter, eval_data=val_iter, num_epoch=epochs, kvstore="device",
            optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
            initializer=mx.init.Xavier())
    pred = mod.predict(val_iter).asnumpy().argmax(axis=1)
    return float((pred == val[1]).mean())


def with_gluon(ctxs, epochs, train, val):
    net = nn.HybridSequential()
    net.add(nn.Dense(64, activation="relu"), nn.Dense(4))
    net.initialize(mx.init.Xavier(), ctx=ctxs)  # one copy of each weight per context
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.1, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(*train), 64, shuffle=True)
    for epoch in range(epochs):
        metric = mx.metric.Accuracy()
        for x, y in loader:
            xs = gluon.utils.split_and_load(x, ctxs, even_split=False)
            ys = gluon.utils.split_and_load(y, ctxs, even_split=False)
            with autograd.record():
                outs = [net(part) for part in xs]
                losses = [loss_fn(o, t) for o, t in zip(outs, ys)]
            autograd.backward(losses)
            trainer.step(x.shape[0])  # sums the per-context gradients, updates every copy
            metric.update(ys, outs)
        print("gluon Epoch[%d] Train-%s=%f" % (epoch, *metric.get()))
    weight = net[0].weight
    copies = [weight.data(c).asnumpy() for c in ctxs]
    print("weights identical on all contexts:",
          all(np.array_equal(copies[0], c) for c in copies[1:]))
    out = net(mx.nd.array(val[0], ctx=ctxs[0])).asnumpy().argmax(axis=1)
    return float((out == val[1]).mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--gpus", default="", help="e.g. 0,1 to use GPUs instead of cpu(0), cpu(1)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    ctxs = ([mx.gpu(int(i)) for i in args.gpus.split(",")] if args.gpus
            else [mx.cpu(0), mx.cpu(1)])
    rng = np.random.RandomState(7)
    mx.random.seed(7)
    w = rng.randn(16, 4).astype(np.float32)
    train, val = make_data(1280, rng, w), make_data(320, rng, w)
    acc_module = with_module(ctxs, args.epochs, train, val)
    print("module accuracy=%.4f" % acc_module)
    acc_gluon = with_gluon(ctxs, args.epochs, train, val)
    print("gluon accuracy=%.4f" % acc_gluon)
    print("final-accuracy=%.4f" % min(acc_module, acc_gluon))


if __name__ == "__main__":
    main()

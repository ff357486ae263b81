"""Gluon: a LeNet-style HybridBlock on the bundled 8x8 digits, hybridized, trained with
gluon.Trainer, exported to MXNet's symbol JSON + params, and re-imported with
SymbolBlock.imports (the re-imported network must give the same predictions).

    python examples/gluon_lenet_export.py [--epochs 5] [--out DIR]

Needs scikit-learn for the data (pip install 'mxtorch[demo]'); nothing is downloaded.
"""
import argparse
import os
import tempfile
import time

import numpy as np

import mxtorch as mx  # with real MXNet: import mxnet as mx
from mxtorch import autograd, gluon
from mxtorch.gluon import nn


def load_digits_split():
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]  # N x 1 x 8 x 8
    y = digits.target.astype(np.float32)
    order = np.random.RandomState(0).permutation(len(x))
    x, y = x[order], y[order]
    return x[360:], y[360:], x[:360], y[:360]


def lenet():
    net = nn.HybridSequential(prefix="lenet_")
    with net.name_scope():
        net.add(nn.Conv2D(16, kernel_size=3, padding=1, activation="relu"),
                nn.MaxPool2D(pool_size=2),
                nn.Conv2D(32, kernel_size=3, padding=1, activation="relu"),
                nn.MaxPool2D(pool_size=2),
                nn.Flatten(),
                nn.Dense(64, activation="relu"),
                nn.Dense(10))
    return net


def accuracy(net, x, y):
    return float((net(mx.nd.array(x)).asnumpy().argmax(axis=1) == y).mean())


def train(net, x_train, y_train, epochs, batch_size):
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_train, y_train),
                                   batch_size=batch_size, shuffle=True)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.005})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    metric = mx.metric.Accuracy()
    for epoch in range(epochs):
        tic = time.time()
        metric.reset()
        for data, label in loader:
            with autograd.record():
                out = net(data)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(data.shape[0])
            metric.update([label], [out])
        print("Epoch[%d] Train-%s=%f Time cost=%.3f" % (epoch, *metric.get(), time.time() - tic))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--out", default=None, help="export directory (default: a temp dir)")
    args = parser.parse_args()
    mx.random.seed(0)
    np.random.seed(0)
    x_train, y_train, x_val, y_val = load_digits_split()

    net = lenet()
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net.hybridize()  # runs as one compiled graph from the first call on
    train(net, x_train, y_train, args.epochs, args.batch_size)
    acc = accuracy(net, x_val, y_val)
    print("trained network: accuracy=%.4f" % acc)

    out = args.out or tempfile.mkdtemp(prefix="mxtorch-lenet-")
    os.makedirs(out, exist_ok=True)
    prefix = os.path.join(out, "lenet")
    net.export(prefix, epoch=args.epochs)  # lenet-symbol.json + lenet-%04d.params
    print("exported:", ", ".join(sorted(os.listdir(out))))

    imported = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                         "%s-%04d.params" % (prefix, args.epochs))
    same = np.allclose(net(mx.nd.array(x_val)).asnumpy(),
                       imported(mx.nd.array(x_val)).asnumpy(), atol=1e-5)
    print("re-imported network gives the same outputs:", same)
    print("final-accuracy=%.4f" % accuracy(imported, x_val, y_val))


if __name__ == "__main__":
    main()

"""An MXNet script that never seeds: it prints the same numbers in every fresh process.

MXNet starts each process from one default random state, so unseeded initial weights,
dropout masks and random data repeat from run to run. Unchanged MXNet code: run it twice,

    mxtorch run examples/unseeded_reproducible.py [--steps 20]

and compare the output.
"""
import argparse

import mxnet as mx
from mxnet import autograd, gluon
from mxnet.gluon import nn


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()

    x = mx.nd.random.normal(shape=(64, 8))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype("float32")
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu"), nn.Dropout(0.3), nn.Dense(2))
    net.initialize(mx.init.Xavier())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.2})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for step in range(args.steps):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])
        if step % 5 == 0:
            print("step %d loss=%.6f" % (step, loss.mean().asscalar()))
    print("sample=%s" % mx.np.random.uniform(size=3))
    acc = (net(x).argmax(axis=1) == y).mean().asscalar()
    print("final-accuracy=%.4f" % acc)


if __name__ == "__main__":
    main()

"""Module API: a symbolic MLP trained with Module.fit, then scored and used for prediction.

Synthetic data (no download): 20-dimensional points labelled by which of 5 fixed random
directions they lean towards most. Runs in a few seconds on CPU.

    python examples/module_mlp.py [--epochs 10] [--batch-size 50]
"""
import argparse
import logging

import numpy as np

import mxtorch as mx  # with real MXNet: import mxnet as mx


def make_data(n, rng, w):
    """Points in R^20, label = argmax of their projections on the 5 columns of ``w``."""
    x = rng.randn(n, 20).astype(np.float32)
    return x, (x @ w).argmax(axis=1).astype(np.float32)


def mlp_symbol(num_classes=5):
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=64, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=num_classes, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=50)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rng = np.random.RandomState(42)
    mx.random.seed(42)
    w = rng.randn(20, 5).astype(np.float32)
    x_train, y_train = make_data(2000, rng, w)
    x_val, y_val = make_data(500, rng, w)
    train_iter = mx.io.NDArrayIter(x_train, y_train, args.batch_size, shuffle=True)
    val_iter = mx.io.NDArrayIter(x_val, y_val, args.batch_size)

    mod = mx.mod.Module(mlp_symbol(), context=mx.cpu())
    mod.fit(train_iter, eval_data=val_iter, num_epoch=args.epochs,
            optimizer="adam", optimizer_params={"learning_rate": 0.01},
            initializer=mx.init.Xavier(),
            batch_end_callback=mx.callback.Speedometer(args.batch_size, 20))
    for name, value in mod.score(val_iter, ["acc", "ce"]):
        print("validation %s=%.4f" % (name, value))
    pred = mod.predict(val_iter).asnumpy().argmax(axis=1)
    print("final-accuracy=%.4f" % (pred == y_val).mean())


if __name__ == "__main__":
    main()

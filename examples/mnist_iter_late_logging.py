"""An MXNet script as users wrote it: MNISTIter, then logging configured, then Module.fit.

The iterator is created (and reports what it loaded) before ``logging.basicConfig``; the
script's DEBUG configuration still takes effect, so Module.fit prints MXNet's
``Epoch[i] Train-accuracy=`` lines. Unchanged MXNet code: run it with

    mxtorch run examples/mnist_iter_late_logging.py [--epochs 3] [--image F --label F]

Without --image/--label it writes a small MNIST-format set of synthetic digits (a bright
bar whose row is the class) into the working directory.
"""
import argparse
import logging
import struct

import numpy as np

import mxnet as mx


def write_synthetic_mnist(image, label, n=600, seed=0):
    """MNIST's idx format (big-endian headers, uint8 pixels): class k lights rows 2k..2k+2."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, n).astype(np.uint8)
    pixels = rng.randint(0, 60, (n, 28, 28)).astype(np.uint8)
    for i, k in enumerate(labels):
        pixels[i, 2 * k + 4:2 * k + 6, 4:24] = 255
    with open(image, "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + pixels.tobytes())
    with open(label, "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labels.tobytes())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--image", default=None)
    parser.add_argument("--label", default=None)
    args = parser.parse_args()
    if args.image is None:
        args.image, args.label = "synthetic-images-idx3-ubyte", "synthetic-labels-idx1-ubyte"
        write_synthetic_mnist(args.image, args.label)

    train = mx.io.MNISTIter(image=args.image, label=args.label, batch_size=50, flat=True,
                            shuffle=True, silent=False)
    logging.basicConfig(level=logging.DEBUG)   # configured after the iterator exists

    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data / 255, num_hidden=32, name="fc1")
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc2")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(train, num_epoch=args.epochs, optimizer="adam",
            optimizer_params={"learning_rate": 0.05}, initializer=mx.init.Xavier())
    print("final-accuracy=%.4f" % mod.score(train, "acc")[0][1])


if __name__ == "__main__":
    main()

"""Module API: a small CNN on scikit-learn's bundled 8x8 digits, checkpointed every epoch,
then resumed from a checkpoint (weights *and* optimizer state) to finish training.

    python examples/module_cnn_checkpoint.py [--epochs 6] [--out DIR]

Needs scikit-learn for the data (pip install 'mxtorch[demo]'); nothing is downloaded.
"""
import argparse
import logging
import os
import tempfile

import numpy as np

import mxtorch as mx  # with real MXNet: import mxnet as mx


def load_digits_split():
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]  # N x 1 x 8 x 8
    y = digits.target.astype(np.float32)
    order = np.random.RandomState(0).permutation(len(x))
    x, y = x[order], y[order]
    return x[360:], y[360:], x[:360], y[:360]


def cnn_symbol():
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=16, name="conv1")
    net = mx.sym.BatchNorm(net, name="bn1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    net = mx.sym.Convolution(net, kernel=(3, 3), pad=(1, 1), num_filter=32, name="conv2")
    net = mx.sym.Activation(net, act_type="relu", name="relu2")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool2")
    net = mx.sym.Flatten(net, name="flatten")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def accuracy(mod, it, labels):
    return float((mod.predict(it).asnumpy().argmax(axis=1) == labels).mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=6, help="total epochs (resume at half)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--out", default=None, help="checkpoint directory (default: a temp dir)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    mx.random.seed(0)
    np.random.seed(0)
    out = args.out or tempfile.mkdtemp(prefix="mxtorch-cnn-")
    os.makedirs(out, exist_ok=True)
    prefix = os.path.join(out, "digits-cnn")
    x_train, y_train, x_val, y_val = load_digits_split()
    train_iter = mx.io.NDArrayIter(x_train, y_train, args.batch_size, shuffle=True)
    val_iter = mx.io.NDArrayIter(x_val, y_val, args.batch_size)
    first = max(1, args.epochs // 2)
    opt = {"learning_rate": 0.05, "momentum": 0.9}

    # Part 1: train `first` epochs, writing prefix-symbol.json, prefix-%04d.params and
    # prefix-%04d.states (optimizer state) after every epoch.
    mod = mx.mod.Module(cnn_symbol(), context=mx.cpu())
    mod.fit(train_iter, eval_data=val_iter, num_epoch=first, optimizer="sgd",
            optimizer_params=opt, initializer=mx.init.Xavier(magnitude=2.0),
            epoch_end_callback=mx.callback.module_checkpoint(mod, prefix,
                                                             save_optimizer_states=True))
    print("after %d epochs: accuracy=%.4f" % (first, accuracy(mod, val_iter, y_val)))

    # Part 2: a fresh process would do exactly this: load the checkpoint and resume.
    resumed = mx.mod.Module.load(prefix, first, load_optimizer_states=True,
                                 context=mx.cpu())
    resumed.fit(train_iter, eval_data=val_iter, begin_epoch=first, num_epoch=args.epochs,
                optimizer="sgd", optimizer_params=opt,
                epoch_end_callback=mx.callback.do_checkpoint(prefix))
    print("checkpoints:", ", ".join(sorted(os.listdir(out))))
    print("final-accuracy=%.4f" % accuracy(resumed, val_iter, y_val))


if __name__ == "__main__":
    main()

"""A custom operator written in Python with mx.operator.CustomOp / CustomOpProp — MXNet's
classic "numpy softmax" output layer — used inside a symbolic network trained by Module,
and called imperatively through mx.nd.Custom (with autograd) as well.

    python examples/custom_op.py [--epochs 8]
"""
import argparse
import logging

import numpy as np

import mxtorch as mx  # with real MXNet: import mxnet as mx


class Softmax(mx.operator.CustomOp):
    """Forward: row-wise softmax. Backward: softmax - one_hot(label), as SoftmaxOutput."""

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = np.exp(x - x.max(axis=1, keepdims=True))
        y /= y.sum(axis=1, keepdims=True)
        self.assign(out_data[0], req[0], mx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label = in_data[1].asnumpy().ravel().astype(int)
        y = out_data[0].asnumpy()
        y[np.arange(label.shape[0]), label] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y))


@mx.operator.register("numpy_softmax")
class SoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)  # a loss layer: no gradient from above

    def list_arguments(self):
        return ["data", "label"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        data_shape = in_shape[0]
        return [data_shape, (data_shape[0],)], [data_shape], []

    def create_operator(self, ctx, shapes, dtypes):
        return Softmax()


def make_data(n, rng, centers):
    """Gaussian blobs around 4 centres in R^10."""
    y = rng.randint(0, len(centers), n)
    x = centers[y] + 0.8 * rng.randn(n, centers.shape[1])
    return x.astype(np.float32), y.astype(np.float32)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rng = np.random.RandomState(1)
    mx.random.seed(1)
    centers = rng.randn(4, 10) * 1.5
    x_train, y_train = make_data(1200, rng, centers)
    x_val, y_val = make_data(400, rng, centers)

    # Imperative use: the custom op is one more operator of mx.nd.
    probs = mx.nd.Custom(mx.nd.array(x_val[:3]), mx.nd.array(y_val[:3]),
                         op_type="numpy_softmax")
    print("row sums of the custom softmax:", probs.sum(axis=1).asnumpy().round(4))

    # Symbolic use: the custom op is the output layer of a network trained by Module.
    data, label = mx.sym.var("data"), mx.sym.var("softmax_label")
    net = mx.sym.FullyConnected(data, num_hidden=32, name="fc1")
    net = mx.sym.Activation(net, act_type="tanh", name="tanh1")
    net = mx.sym.FullyConnected(net, num_hidden=4, name="fc2")
    net = mx.sym.Custom(net, label, op_type="numpy_softmax", name="softmax")
    train_iter = mx.io.NDArrayIter(x_train, y_train, 40, shuffle=True)
    val_iter = mx.io.NDArrayIter(x_val, y_val, 40)
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(train_iter, eval_data=val_iter, num_epoch=args.epochs, optimizer="sgd",
            optimizer_params={"learning_rate": 0.1}, initializer=mx.init.Xavier())
    pred = mod.predict(val_iter).asnumpy().argmax(axis=1)
    print("final-accuracy=%.4f" % (pred == y_val).mean())


if __name__ == "__main__":
    main()

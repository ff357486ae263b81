"""mx.operator: CustomOp / CustomOpProp / register, in mx.nd and mx.sym."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError


class _Scale(mx.operator.CustomOp):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * self.factor + in_data[1])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.factor)
        self.assign(in_grad[1], req[1], out_grad[0])


@mx.operator.register("scale_add")
class _ScaleProp(mx.operator.CustomOpProp):
    def __init__(self, factor="2"):
        super().__init__(need_top_grad=True)
        self.factor = float(factor)

    def list_arguments(self):
        return ["data", "other"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Scale(self.factor)


def test_custom_nd_forward_backward():
    x = mx.nd.array([1.0, 2.0])
    y = mx.nd.array([10.0, 20.0])
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        z = mx.nd.Custom(x, y, op_type="scale_add", factor=3)
    z.backward(mx.nd.array([1.0, 2.0]))
    np.testing.assert_array_equal(z.asnumpy(), [13, 26])
    np.testing.assert_array_equal(x.grad.asnumpy(), [3, 6])
    np.testing.assert_array_equal(y.grad.asnumpy(), [1, 2])


def test_custom_symbol_bind_and_json():
    s = mx.sym.Custom(mx.sym.var("a"), mx.sym.var("b"), op_type="scale_add", name="c")
    assert s.list_arguments() == ["a", "b"] and s.list_outputs() == ["c_output"]
    assert s.infer_shape(a=(2,), b=(2,))[1] == [(2,)]
    grads = {"a": mx.nd.zeros((2,)), "b": mx.nd.zeros((2,))}
    exe = s.bind(mx.cpu(), {"a": mx.nd.array([1, 2]), "b": mx.nd.array([0, 1])},
                 args_grad=grads)
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), [2, 5])
    exe.backward(mx.nd.array([1, 1]))
    np.testing.assert_array_equal(grads["a"].asnumpy(), [2, 2])
    s2 = mx.sym.load_json(s.tojson())
    assert s2.list_arguments() == ["a", "b"]


def test_unregistered_op_type():
    with pytest.raises(MXNetError, match="not registered"):
        mx.nd.Custom(mx.nd.array([1]), op_type="no_such_custom_op")


def test_register_requires_prop_subclass():
    with pytest.raises(MXNetError):
        mx.operator.register("bad")(object)

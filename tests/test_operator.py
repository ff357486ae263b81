"""mx.operator: CustomOp / CustomOpProp / register, in mx.nd and mx.sym."""
import json

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


# ---------------------------------------------------------------------- errors in user code
class _Failing(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise AssertionError("forward failed")

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise ValueError("backward failed")


class _Doubling(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise ValueError("backward failed")


@mx.operator.register("h5_failing")
class _FailingProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Failing()


@mx.operator.register("h5_bad_backward")
class _BadBackwardProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Doubling()


@mx.operator.register("h5_bad_shape")
class _BadShapeProp(mx.operator.CustomOpProp):
    def infer_shape(self, in_shape):
        raise ValueError("no shape")


def test_forward_exception_is_reported_at_the_wait():
    # MXNet: the call returns (outputs of the inferred shape); the wait raises MXNetError
    # with the user's traceback, once
    c = mx.nd.Custom(mx.nd.ones((2, 3)), op_type="h5_failing")
    assert c.shape == (2, 3)
    d = c + 1                       # operators on a failed array fail the same way
    with pytest.raises(MXNetError, match="(?s)Error in CustomOp.forward.*forward failed"):
        d.wait_to_read()
    np.testing.assert_array_equal(c.asnumpy(), np.zeros((2, 3)))   # reported once
    mx.nd.waitall()


def test_infer_shape_and_backward_exceptions_are_mxnet_errors():
    with pytest.raises(MXNetError, match="(?s)Error in h5_bad_shape.infer_shape.*no shape"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="h5_bad_shape")
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="h5_bad_backward")
    np.testing.assert_array_equal(y.asnumpy(), [2, 2])
    with pytest.raises(MXNetError, match="(?s)Error in CustomOp.backward.*backward failed"):
        y.backward()


def test_exception_in_an_executor_is_reported_at_the_wait():
    s = mx.sym.Custom(mx.sym.var("a"), op_type="h5_failing")
    exe = s.bind(mx.cpu(), {"a": mx.nd.ones((2,))})
    out = exe.forward()[0]
    with pytest.raises(MXNetError, match="forward failed"):
        out.asnumpy()


# ---------------------------------------------------------------------- storage types
def test_default_storage_type_inference():
    prop = _ScaleProp()
    assert prop.infer_storage_type(["default", "default"]) == (
        ["default", "default"], ["default"], [])
    ograd, ins, outs, igrad = ["default"], ["default", "default"], ["default"], \
        ["undefined", "default"]
    assert prop.infer_storage_type_backward(ograd, ins, outs, igrad, []) == (
        ["default"], ["default", "default"], ["default"], ["default", "default"], [])
    with pytest.raises(MXNetError, match="in_stype\\[1\\]"):
        prop.infer_storage_type(["default", "csr"])
    with pytest.raises(MXNetError, match="ograd_stype\\[0\\]"):
        prop.infer_storage_type_backward(["row_sparse"], ins, outs, igrad, [])


# ---------------------------------------------------------------------- legacy Python ops
class _NumpyTimes3(mx.operator.NumpyOp):
    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] * 3

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0] * 3 + in_data[0]


class _NDArrayConcat(mx.operator.NDArrayOp):
    def list_arguments(self):
        return ["a", "b"]

    def infer_shape(self, in_shape):
        return in_shape, [(in_shape[0][0] + in_shape[1][0],)]

    def forward(self, in_data, out_data):
        out_data[0][:] = mx.nd.concat(in_data[0], in_data[1], dim=0)

    def backward(self, out_grad, in_data, out_data, in_grad):
        n = in_data[0].shape[0]
        in_grad[0][:] = out_grad[0][:n] * 10
        in_grad[1][:] = out_grad[0][n:]


def test_numpy_op_default_forward_and_backward():
    # PythonOp's defaults: forward copies input 0, backward sets its gradient to ones
    with pytest.warns(UserWarning, match="deprecated"):
        op = mx.operator.NumpyOp()
    s = op.get_symbol(mx.sym.var("X"), name="numpy_op")
    assert s.list_arguments() == ["X"] and s.list_outputs() == ["numpy_op_output"]
    x = mx.nd.array([1.0, 5.0, 10.0])
    dx = mx.nd.zeros((3,))
    exe = s.bind(mx.cpu(), args=[x], args_grad={"X": dx})
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), [1, 5, 10])
    exe.backward(mx.nd.array([7.0, 7.0, 7.0]))
    np.testing.assert_array_equal(dx.asnumpy(), [1, 1, 1])


def test_numpy_op_subclass_on_numpy_arrays():
    with pytest.warns(UserWarning):
        s = _NumpyTimes3().get_symbol(mx.sym.var("X"))
    assert _last_op(s) == "_Native"   # MXNet: NumpyOp runs as the legacy _Native operator
    dx = mx.nd.zeros((2,))
    exe = s.bind(mx.cpu(), args=[mx.nd.array([1.0, 2.0])], args_grad={"X": dx})
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), [3, 6])
    exe.backward(mx.nd.array([1.0, 10.0]))
    np.testing.assert_array_equal(dx.asnumpy(), [4, 32])


def test_ndarray_op_with_two_inputs():
    with pytest.warns(UserWarning):
        s = _NDArrayConcat()(mx.sym.var("a"), mx.sym.var("b"), name="cat")
    assert s.list_arguments() == ["a", "b"]
    assert _last_op(s) == "_NDArray"
    assert s.infer_shape(a=(2,), b=(3,))[1] == [(5,)]
    grads = {"a": mx.nd.zeros((2,)), "b": mx.nd.zeros((1,))}
    exe = s.bind(mx.cpu(), {"a": mx.nd.array([1, 2]), "b": mx.nd.array([3])},
                 args_grad=grads)
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), [1, 2, 3])
    exe.backward(mx.nd.array([1, 2, 3]))
    np.testing.assert_array_equal(grads["a"].asnumpy(), [10, 20])
    np.testing.assert_array_equal(grads["b"].asnumpy(), [3])


def _last_op(sym):
    return json.loads(sym.tojson())["nodes"][-1]["op"]


def test_legacy_python_operator_with_an_unknown_info_fails():
    """_Native / _NDArray find their Python operator by ``info``; one this process never
    registered (a graph loaded from elsewhere) is an MXNetError naming the operator."""
    for make in (mx.sym._internal._Native, mx.sym._internal._NDArray):
        with pytest.raises(MXNetError, match="_Native/_NDArray: no Python operator"):
            make(mx.sym.var("x"), info="not-registered")


# ---------------------------------------------------------------------- registry queries
def test_get_operator_arguments_as_mxnet_reports_them():
    # the names and type strings real MXNet 1.9.1 reports
    args = mx.operator.get_operator_arguments("Activation")
    assert isinstance(args, mx.operator.OperatorArguments)
    assert args == (2, ["data", "act_type"], [
        "NDArray-or-Symbol", "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"])
    fc = mx.operator.get_operator_arguments("FullyConnected")
    assert fc.names == ["data", "weight", "bias", "num_hidden", "no_bias", "flatten"]
    assert fc.types[3:] == ["int, required", "boolean, optional, default=0",
                            "boolean, optional, default=1"]
    dropout = mx.operator.get_operator_arguments("Dropout")
    assert dropout.types[1:4] == ["float, optional, default=0.5",
                                  "{'always', 'training'},optional, default='training'",
                                  "Shape(tuple), optional, default=[]"]
    assert mx.operator.get_operator_arguments("concat")[:2] == (
        3, ["data", "num_args", "dim"])
    assert mx.operator.get_operator_arguments("concat").types[0] == "NDArray-or-Symbol[]"
    with pytest.raises(MXNetError, match="no_such_op is not registered"):
        mx.operator.get_operator_arguments("no_such_op")


def test_every_operator_answers_get_operator_arguments():
    for name in mx.operator.get_all_registered_operators():
        args = mx.operator.get_operator_arguments(name)
        assert args.narg == len(args.names) == len(args.types)


def test_star_import_gives_mxnet_module_names():
    names: dict = {}
    exec("from mxtorch.operator import *", names)  # noqa: S102 - the star import is under test
    for n in ("CustomOp", "CustomOpProp", "NumpyOp", "NDArrayOp", "PythonOp", "register",
              "get_operator_arguments", "OperatorArguments", "symbol", "context", "NDArray"):
        assert n in names, n
    assert names["symbol"] is mx.symbol and names["NDArray"] is mx.nd.NDArray


class _LabelledDouble(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * 2)
        self.assign(in_grad[1], req[1], mx.nd.zeros_like(in_data[1]))


@mx.operator.register("labelled_double")
class _LabelledDoubleProp(mx.operator.CustomOpProp):
    """Infers its label's shape (one per row) and type (int32) from the data."""

    def __init__(self):
        super().__init__(need_top_grad=True)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []

    def infer_type(self, in_type):
        return [in_type[0], np.int32], [in_type[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _LabelledDouble()


def _labelled_net():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=5, name="fc")
    return mx.sym.Custom(fc, mx.sym.var("wlr_label"), op_type="labelled_double", name="wlr")


def test_custom_infer_shape_gives_its_inputs_shapes():
    """The prop's infer_shape is the source of the label's shape, as in MXNet."""
    out = _labelled_net()
    assert out.infer_shape(data=(4, 5)) == ([(4, 5), (5, 5), (5,), (4,)], [(4, 5)], [])
    assert out.infer_shape_partial(data=(4, 5))[0][3] == (4,)
    assert out.infer_type(data="float16")[0] == [np.float16] * 3 + [np.int32]
    ex = out.simple_bind(mx.cpu(), data=(4, 5), type_dict={"wlr_label": "int32"})
    assert ex.arg_dict["wlr_label"].shape == (4,)
    ex.arg_dict["data"][:] = 1
    ex.arg_dict["fc_weight"][:] = 0.5
    ex.arg_dict["fc_bias"][:] = 0
    np.testing.assert_allclose(ex.forward(is_train=True)[0].asnumpy(), np.full((4, 5), 5.0))
    ex.backward(mx.nd.ones((4, 5)))
    np.testing.assert_allclose(ex.grad_dict["fc_weight"].asnumpy(), np.full((5, 5), 8.0))
    mod = mx.mod.Module(out, data_names=["data"], label_names=["wlr_label"])
    mod.bind(data_shapes=[("data", (4, 5))], for_training=False)
    assert mod._exec_group.execs[0].arg_dict["wlr_label"].shape == (4,)
    block = mx.gluon.SymbolBlock(out, [mx.sym.var("data"), mx.sym.var("wlr_label")])
    block.initialize()
    assert block(mx.nd.ones((4, 5)), mx.nd.ones((4,))).shape == (4, 5)
    assert block.collect_params()["fc_weight"].shape == (5, 5)
    with pytest.raises(MXNetError, match=r"Shape inconsistent, Provided = \[3\]"):
        out.infer_shape(data=(4, 5), wlr_label=(3,))

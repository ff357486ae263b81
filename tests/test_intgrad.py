"""Gradients of integer arrays as MXNet 1.x computes them (ops/intgrad.py,
graph/int_tape.py): attach_grad on integer arrays, gradients truncated to the integer
dtype, indexing and setitem under record, casts to integer types in recorded graphs and
executors. Expected values come from MXNet 1.9.1."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError

nd, ag = mx.nd, mx.autograd


def _int(values, dtype="int32"):
    x = nd.array(values, dtype=dtype)
    x.attach_grad()
    return x


def _check(arr, expected, dtype):
    assert arr.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(arr.asnumpy(), expected)


def test_square_of_int32_has_int32_gradient():
    x = _int([1, 2, 3, -4])
    with ag.record():
        y = x * x
    y.backward()
    _check(y, [1, 4, 9, 16], "int32")
    _check(x.grad, [2, 4, 6, -8], "int32")


@pytest.mark.parametrize("scale,expected", [(1.5, [1, 1, 1]), (2.7, [2, 2, 2])])
def test_cast_to_float_gradient_is_truncated(scale, expected):
    x = _int([1, 2, 3])
    with ag.record():
        z = x.astype("float32") * scale
    z.backward()
    np.testing.assert_allclose(z.asnumpy(), np.array([1, 2, 3], "float32") * np.float32(scale))
    _check(x.grad, expected, "int32")


def test_sum_of_int_arrays():
    x = _int([[1, 2, 3], [4, 5, 6]])
    with ag.record():
        z = nd.sum(x * x)
    z.backward()
    _check(z, [91], "int32")
    _check(x.grad, [[2, 4, 6], [8, 10, 12]], "int32")
    with ag.record():
        z = x.sum()
    z.backward()
    _check(x.grad, [[1, 1, 1], [1, 1, 1]], "int32")


def test_mixed_int_float_elementwise_is_a_type_error():
    # MXNet: elemwise operators take one dtype ("Incompatible attr in node")
    x, y = _int([1, 2, 3]), nd.array([0.5, 1.5, 2.5])
    y.attach_grad()
    with pytest.raises(MXNetError):
        with ag.record():
            x + y


def test_indexing_int_arrays():
    x = _int([1, 2, 3, 4])
    with ag.record():
        z = x[1:3] * 3
    z.backward()
    _check(z, [6, 9], "int32")
    _check(x.grad, [0, 3, 3, 0], "int32")
    with ag.record():
        z = x[nd.array([0, 2, 0], dtype="int32")] * 2
    z.backward()
    _check(z, [2, 6, 2], "int32")
    _check(x.grad, [4, 0, 2, 0], "int32")
    with ag.record():
        z = x[[0, 2]] * 2
    z.backward()
    _check(x.grad, [2, 0, 2, 0], "int32")


def test_negative_step_beside_index_array():
    for dtype in ("int32", "float32"):
        x = _int([[1, 5], [3, 4]], dtype)
        with ag.record():
            z = x[::-1, nd.array([1, 0, 1])] * 2
        z.backward()
        _check(z, [[8, 6, 8], [10, 2, 10]], dtype)
        _check(x.grad, [[2, 4], [2, 4]], dtype)


def test_reshape_of_int_array():
    x = _int([1, 2, 3, 4])
    with ag.record():
        z = x.reshape((2, 2)) * nd.array([[1, 2], [3, 4]], dtype="int32")
    z.backward()
    _check(z, [[1, 4], [9, 16]], "int32")
    _check(x.grad, [1, 2, 3, 4], "int32")


@pytest.mark.parametrize("fluent", [True, False])
def test_cast_float_int_float_passes_truncated_gradient(fluent):
    x = nd.array([1.7, 2.2, -3.6])
    x.attach_grad()
    with ag.record():
        if fluent:
            z = x.astype("int32").astype("float32") * 2.5
        else:
            z = nd.Cast(nd.Cast(x, dtype="int32"), dtype="float32") * 2.5
    z.backward()
    _check(z, [2.5, 5.0, -7.5], "float32")
    _check(x.grad, [2.0, 2.0, 2.0], "float32")


def test_int_head_with_and_without_head_gradient():
    x = _int([1, 2, 3])
    with ag.record():
        y = x * 3
    ag.backward([y])
    _check(x.grad, [3, 3, 3], "int32")
    with ag.record():
        y = x * 3
    y.backward(nd.array([2, -1, 4], dtype="int32"))
    _check(y, [3, 6, 9], "int32")
    _check(x.grad, [6, -3, 12], "int32")


def test_backward_twice_and_retain_graph():
    x = _int([1, 2, 3])
    with ag.record():
        z = x * 2
    z.backward(retain_graph=True)
    z.backward()
    _check(x.grad, [2, 2, 2], "int32")
    with pytest.raises(MXNetError, match="Cannot differentiate node"):
        z.backward()


def test_grad_req_add_on_int_array():
    x = nd.array([1, 2, 3], dtype="int32")
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with ag.record():
            z = x * 2
        z.backward()
    _check(x.grad, [4, 4, 4], "int32")


def test_autograd_grad_with_int_variables():
    x = _int([1, 2, 3])
    with ag.record():
        y = x * x * x
    (g,) = ag.grad(y, [x])
    _check(g, [3, 12, 27], "int32")
    w = nd.array([0.5, 0.5, 0.5])
    w.attach_grad()
    with ag.record():
        y = x.astype("float32") * w * 3
    gx, gw = ag.grad(y, [x, w])
    _check(gx, [1, 1, 1], "int32")
    _check(gw, [3.0, 6.0, 9.0], "float32")


def test_int64_and_uint8_gradients():
    x = _int([1, 2, 3], "int64")
    w = nd.array([0.3, 0.6, 0.9])
    w.attach_grad()
    with ag.record():
        z = (nd.Cast(x, dtype="float32") * w).sum()
    z.backward()
    _check(x.grad, [0, 0, 0], "int64")
    np.testing.assert_allclose(w.grad.asnumpy(), [1, 2, 3])
    u = _int([1, 2, 3], "uint8")
    with ag.record():
        z = nd.Cast(u, dtype="float32") * -1.5
    z.backward()
    _check(u.grad, [255, 255, 255], "uint8")   # -1 wrapped, as MXNet's cast gives


def test_max_and_topk_of_int_array():
    x = _int([[1, 5], [3, 4]])
    with ag.record():
        z = nd.max(x, axis=1) * 3 + nd.topk(x, k=1, ret_typ="value").reshape((2,))
    z.backward()
    _check(z, [20, 16], "int32")
    _check(x.grad, [[0, 4], [0, 4]], "int32")


def test_division_of_int_array():
    x = _int([[1, 5], [3, 4]])
    with ag.record():
        z = (x / 2) * 3
    z.backward()
    _check(z, [[0, 6], [3, 6]], "int32")
    _check(x.grad, [[1, 1], [1, 1]], "int32")


# ---------------------------------------------------------------- writes under record
@pytest.mark.parametrize("key", [slice(None), Ellipsis, (slice(None), slice(None)),
                                 slice(0, 2), (Ellipsis, slice(None))])
def test_recorded_value_over_whole_int_array(key):
    x = _int([[1, 2, 3, 4], [5, 6, 7, 8]])
    y = nd.zeros((2, 4), dtype="int32")
    with ag.record():
        w = x * 2
        y[key] = w
        z = y * 3
    z.backward()
    _check(y, [[2, 4, 6, 8], [10, 12, 14, 16]], "int32")
    _check(x.grad, [[6, 6, 6, 6], [6, 6, 6, 6]], "int32")


def test_recorded_value_broadcast_into_int_array():
    x = _int([1, 2, 3, 4])
    y = nd.zeros((2, 4), dtype="int32")
    with ag.record():
        y[:] = x * 2
        z = y * 1
    z.backward()
    _check(y, [[2, 4, 6, 8], [2, 4, 6, 8]], "int32")
    _check(x.grad, [4, 4, 4, 4], "int32")


def test_recorded_float_value_into_int_array():
    x = nd.array([1.5, 2.5, 3.5])
    x.attach_grad()
    y = nd.zeros((3,), dtype="int32")
    with ag.record():
        y[:] = x * 2
        z = y * 3
    z.backward()
    _check(y, [3, 5, 7], "int32")
    _check(z, [9, 15, 21], "int32")
    _check(x.grad, [6.0, 6.0, 6.0], "float32")


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("key,part", [(slice(1, 3), slice(1, 3)),
                                      (slice(None, None, -1), slice(None)),
                                      (nd.array([0, 1], dtype="int32"), slice(0, 2))])
def test_recorded_value_into_part_of_array_raises(dtype, key, part):
    x = _int([1, 2, 3, 4], dtype)
    y = nd.zeros((4,), dtype=dtype)
    with ag.record():
        w = x * 2
        with pytest.raises(MXNetError, match=r"Inplace operations \(\+=, -=, x\[:\]=, etc\) "
                                             "are not supported when recording"):
            y[key] = w[part]


def test_recorded_row_into_int_matrix_raises():
    x = _int([1, 2, 3, 4])
    y = nd.zeros((2, 4), dtype="int32")
    with ag.record():
        with pytest.raises(MXNetError, match="Inplace operations"):
            y[1] = x * 2


@pytest.mark.parametrize("write", ["item", "all", "iadd", "out"])
@pytest.mark.parametrize("attached", [True, False])
def test_writes_into_int_array_in_the_graph_raise(write, attached):
    x = _int([1, 2, 3, 4])
    with ag.record():
        y = x if attached else x * 2
        with pytest.raises(MXNetError, match="Assigning to NDArrays that are already in a "
                                             "computational graph"):
            if write == "item":
                y[1] = 7
            elif write == "all":
                y[:] = 7
            elif write == "iadd":
                y += 1
            else:
                nd.elemwise_mul(x, x, out=y)


def test_iadd_of_recorded_value_into_int_array_raises():
    x = _int([1, 2, 3, 4])
    y = nd.zeros((4,), dtype="int32")
    with ag.record():
        with pytest.raises(MXNetError, match="Inplace operations"):
            y += x


def test_constant_into_part_of_fresh_int_array():
    x = _int([1, 2, 3, 4])
    y = nd.zeros((4,), dtype="int32")
    with ag.record():
        y[1:3] = 5
        z = y * x
    z.backward()
    _check(y, [0, 5, 5, 0], "int32")
    _check(x.grad, [0, 5, 5, 0], "int32")


def test_out_argument_keeps_int_gradient_path():
    x = _int([1, 2, 3, 4])
    y = nd.zeros((4,), dtype="int32")
    with ag.record():
        nd.elemwise_mul(x, x, out=y)
        z = y * 3
    z.backward()
    _check(y, [1, 4, 9, 16], "int32")
    _check(x.grad, [6, 12, 18, 24], "int32")


def test_write_outside_record_is_seen_by_later_use():
    x = _int([1, 2, 3, 4])
    with ag.record():
        y = x * 2
    y[1] = 9
    with ag.record():
        z = y * x
    z.backward()
    _check(y, [2, 9, 6, 8], "int32")
    _check(x.grad, [4, 13, 12, 16], "int32")


def test_attached_int_array_written_outside_record():
    x = _int([1, 2, 3, 4])
    x[:] = nd.array([5, 6, 7, 8], dtype="int32")
    with ag.record():
        z = x * x
    z.backward()
    _check(x.grad, [10, 12, 14, 16], "int32")


def test_float_code_never_takes_the_shadow_path():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    c = nd.array([1.0, 1.0, 1.0])
    with ag.record():
        y = (x * x + c).reshape((3, 1))[1:] * 2
        k = c * 3   # a recorded call on constants only
    y.backward(nd.ones((2, 1)))
    for t in (x._t, y._t, k._t, c._t):
        assert getattr(t, "_mx_shadow", None) is None
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 8, 12])


# ---------------------------------------------------------------------------- executors
def _bound_cast_mul(grad_req):
    x, y = mx.sym.Variable("x", dtype="int32"), mx.sym.Variable("y")
    out = mx.sym.Cast(x, dtype="float32") * y * 1.5
    exe = out.simple_bind(mx.cpu(), grad_req=grad_req, x=(3,), y=(3,))
    exe.arg_dict["x"][:] = np.array([1, 2, 3])
    exe.arg_dict["y"][:] = np.array([1.0, 2.0, 3.0])
    return exe


@pytest.mark.parametrize("grad_req,second", [("write", ([1, 3, 4], [1.5, 3.0, 4.5])),
                                             ("add", ([2, 6, 8], [3.0, 6.0, 9.0]))])
def test_executor_int32_argument(grad_req, second):
    exe = _bound_cast_mul(grad_req)
    for expected in (([1, 3, 4], [1.5, 3.0, 4.5]), second):
        exe.forward(is_train=True)
        exe.backward(nd.ones((3,)))
        _check(exe.outputs[0], [1.5, 6.0, 13.5], "float32")
        _check(exe.grad_dict["x"], expected[0], "int32")
        _check(exe.grad_dict["y"], expected[1], "float32")


@pytest.mark.parametrize("grad_req,second", [("write", [2.0] * 3), ("add", [4.0] * 3)])
def test_executor_cast_chain_through_int32(grad_req, second):
    x = mx.sym.Variable("x")
    out = mx.sym.Cast(mx.sym.Cast(x * 1.0, dtype="int32"), dtype="float32") * 2.5
    exe = out.simple_bind(mx.cpu(), grad_req=grad_req, x=(3,))
    exe.arg_dict["x"][:] = np.array([1.7, 2.2, -3.6])
    for expected in ([2.0] * 3, second):
        exe.forward(is_train=True)
        exe.backward(nd.ones((3,)))
        _check(exe.outputs[0], [2.5, 5.0, -7.5], "float32")
        _check(exe.grad_dict["x"], expected, "float32")


def test_executor_int_heads():
    x = mx.sym.Variable("x", dtype="int32")
    exe = (x * 3).simple_bind(mx.cpu(), grad_req="write", x=(3,))
    exe.arg_dict["x"][:] = np.array([1, 2, 3])
    exe.forward(is_train=True)
    exe.backward(nd.array([2, -1, 5], dtype="int32"))
    _check(exe.outputs[0], [3, 6, 9], "int32")
    _check(exe.grad_dict["x"], [6, -3, 15], "int32")
    f = mx.sym.Variable("f")
    exe = (mx.sym.Cast(f, dtype="int32") * 3).simple_bind(mx.cpu(), grad_req="write", f=(3,))
    exe.arg_dict["f"][:] = np.array([1.5, 2.5, -3.5])
    exe.forward(is_train=True)
    exe.backward(nd.array([2, -1, 5], dtype="int32"))
    _check(exe.outputs[0], [3, 6, -9], "int32")
    _check(exe.grad_dict["f"], [6.0, -3.0, 15.0], "float32")


def test_executor_float_graph_builds_no_int_tape():
    x, w = mx.sym.Variable("x"), mx.sym.Variable("w")
    out = mx.sym.FullyConnected(x, w, num_hidden=2, no_bias=True) * 2
    exe = out.simple_bind(mx.cpu(), grad_req="write", x=(1, 3), w=(2, 3))
    exe.arg_dict["x"][:] = np.array([[1.0, 2.0, 3.0]])
    exe.arg_dict["w"][:] = np.ones((2, 3))
    exe.forward(is_train=True)
    exe.backward(nd.ones((1, 2)))
    assert exe._int_tape is None and not exe._int_slots
    np.testing.assert_array_equal(exe.grad_dict["w"].asnumpy(), [[2, 4, 6], [2, 4, 6]])
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), [[4, 4, 4]])


def test_mod_of_integers_is_recorded_with_zero_gradients():
    # MXNet 1.9.1: mod_grad/mod_rgrad are 0 for integer dtypes (their float
    # specializations give 1 and -floor(a/b)); the result is still on the graph
    a = mx.nd.array([7, -7, 5, 9], dtype="int32")
    b = mx.nd.array([3, 3, -2, 4], dtype="int32")
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = a % b + mx.nd.broadcast_mod(a, b) + (a % 4) + (17 % b)
    y.backward()
    assert y.asnumpy().tolist() == [7, 7, -2, 4]
    assert a.grad.asnumpy().tolist() == [0, 0, 0, 0]
    assert b.grad.asnumpy().tolist() == [0, 0, 0, 0]
    x, z = mx.sym.Variable("a", dtype="int32"), mx.sym.Variable("b", dtype="int32")
    exe = (x % z).simple_bind(mx.cpu(), a=(4,), b=(4,))
    exe.arg_dict["a"][:] = a
    exe.arg_dict["b"][:] = mx.nd.array([0, 3, -2, 4], dtype="int32")   # b == 0 too
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((4,), dtype="int32"))
    assert exe.grad_dict["a"].asnumpy().tolist() == [0, 0, 0, 0]
    assert exe.grad_dict["b"].asnumpy().tolist() == [0, 0, 0, 0]

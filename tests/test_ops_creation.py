"""Creation and conversion operators: _zeros/_ones/_full/_arange/_linspace/_eye, *_like,
Cast, amp_cast, amp_multicast, identity/_copy, shape_array, size_array.

Expected values are NumPy or values recorded from real MXNet 1.9.1.
"""
import json

import numpy as np
import pytest

import mxtorch as mx
from helpers import check_op
from mxtorch.base import MXNetError


def _eq(arr, expected, dtype):
    assert np.dtype(arr.dtype) == np.dtype(dtype), arr.dtype
    np.testing.assert_allclose(arr.asnumpy().astype(np.float64), np.asarray(expected,
                                                                            np.float64))


def test_zeros_ones_full():
    nd = mx.nd
    _eq(nd.zeros((2, 3), dtype="int32"), np.zeros((2, 3)), np.int32)
    _eq(nd.zeros(4), np.zeros(4), np.float32)
    _eq(nd.ones((2, 2), dtype=np.float16), np.ones((2, 2)), np.float16)
    _eq(nd.full((2, 2), 2.5), np.full((2, 2), 2.5), np.float32)
    # MXNet: the fill value is truncated for integer dtypes.
    _eq(nd.full((2,), 2.7, dtype="int32"), [2, 2], np.int32)
    _eq(nd.full((2,), -2.7, dtype="int32"), [-2, -2], np.int32)
    check_op("_zeros", [], {"shape": (3, 1), "dtype": "int64"}, expected=[np.zeros((3, 1))],
             grad=False, dtype_out=np.int64)
    check_op("_ones", [], {"shape": "(2, 3)"}, expected=[np.ones((2, 3))], grad=False,
             dtype_out=np.float32)
    check_op("_full", [], {"shape": (2,), "value": 7.0, "dtype": "float64"},
             expected=[np.full(2, 7.0)], grad=False, dtype_out=np.float64)
    check_op("_zeros_without_dtype", [], {"shape": (2,)}, expected=[np.zeros(2)], grad=False,
             dtype_out=np.float32)
    check_op("_zeros_without_dtype", [], {"shape": (2,), "dtype": 4},
             expected=[np.zeros(2)], grad=False, dtype_out=np.int32)


def test_out_and_ctx():
    out = mx.nd.ones((2, 3))
    mx.nd.zeros((2, 3), out=out)
    _eq(out, np.zeros((2, 3)), np.float32)
    a = mx.nd._internal._ones(shape=(2,), ctx="cpu(0)")
    assert a.context == mx.cpu(0)
    b = mx.nd.zeros((2,), ctx=mx.cpu(1))
    assert b.context == mx.cpu(1)


def test_arange():
    nd = mx.nd
    _eq(nd.arange(0, 10, 2, repeat=2), [0, 0, 2, 2, 4, 4, 6, 6, 8, 8], np.float32)
    _eq(nd.arange(5, dtype="int32"), np.arange(5), np.int32)
    _eq(nd.arange(0.5, 3.1, 0.7), np.arange(0.5, 3.1, 0.7, dtype=np.float32), np.float32)
    _eq(nd.arange(3, 1, -0.5), [3, 2.5, 2, 1.5], np.float32)
    _eq(nd.arange(0, -5, -1.5), [0, -1.5, -3, -4.5], np.float32)
    # MXNet 1.9.1: the step is cast to the integer dtype (1.5 -> 1), the length is not.
    _eq(nd.arange(0, 5, 1.5, dtype="int32"), [0, 1, 2, 3], np.int32)
    check_op("_arange", [], {"start": 2, "stop": 8, "step": 3, "dtype": "int64"},
             expected=[np.array([2, 5])], grad=False, dtype_out=np.int64)
    with pytest.raises(MXNetError, match=r"_arange.*Invalid range"):
        nd.arange(3, 1)


def test_linspace_eye():
    nd = mx.nd
    _eq(nd.linspace(0, 1, 5), np.linspace(0, 1, 5), np.float32)
    _eq(nd.linspace(0, 1, 5, endpoint=False), [0, 0.2, 0.4, 0.6, 0.8], np.float32)
    _eq(nd.linspace(0, 10, 4, dtype="int32"), [0, 3, 6, 10], np.int32)
    _eq(nd.linspace(0, 10, 1), [0], np.float32)
    _eq(nd.eye(3, 4, 1), np.eye(3, 4, 1), np.float32)
    _eq(nd.eye(3, k=-1, dtype="int32"), np.eye(3, k=-1), np.int32)
    _eq(nd.eye(2), np.eye(2), np.float32)
    _eq(nd.eye(2, 3, k=5), np.zeros((2, 3)), np.float32)
    check_op("_eye", [], {"N": 4, "M": 2, "k": -1}, expected=[np.eye(4, 2, -1)], grad=False)
    check_op("_linspace", [], {"start": -1, "stop": 1, "num": 3}, expected=[[-1, 0, 1]],
             grad=False)


def test_like_copy_shape():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    check_op("zeros_like", [x], expected=[np.zeros((2, 3))], grad=False, dtype_out=np.int32)
    check_op("ones_like", [x.astype(np.int8)], expected=[np.ones((2, 3))], grad=False,
             dtype_out=np.int8)
    f = np.random.RandomState(0).rand(2, 3).astype(np.float32)
    check_op("identity", [f], expected=lambda a: a)
    check_op("_copy", [f], expected=lambda a: a)
    check_op("_copyto", [f], expected=lambda a: a, grad=False)
    check_op("shape_array", [np.ones((2, 3, 4), np.float32)], expected=[np.array([2, 3, 4])],
             grad=False, dtype_out=np.int64)
    check_op("size_array", [np.ones((2, 3, 4), np.float32)], expected=[np.array([24])],
             grad=False, dtype_out=np.int64)
    a = mx.nd.array(f)
    b = mx.nd.identity(a)
    b[:] = 0
    assert a.asnumpy().sum() > 0, "identity must copy"


def test_cast():
    f = np.array([-2.7, -0.5, 0.5, 2.7, 300.6], np.float32)
    # Recorded from MXNet 1.9.1: truncation, then wrap-around for narrow integers.
    table = {"int32": [-2, 0, 0, 2, 300], "uint8": [254, 0, 0, 2, 44],
             "int8": [-2, 0, 0, 2, 44], "int64": [-2, 0, 0, 2, 300], "bool": [1] * 5,
             "float16": np.float16(f)}
    for dt, exp in table.items():
        check_op("Cast", [f], {"dtype": dt}, expected=[np.asarray(exp)], grad=False,
                 dtype_out=dt)
    check_op("cast", [f], {"dtype": "float64"}, expected=lambda a: a, dtype_out=np.float64)
    x = mx.nd.array([1.5, 2.5])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Cast(x, dtype="float16")
    y.backward(mx.nd.array([1, 2], dtype="float16"))
    _eq(x.grad, [1, 2], np.float32)
    with pytest.raises(MXNetError, match="Cast.*dtype"):
        mx.nd.Cast(x)


def test_amp_cast_multicast():
    nd = mx.nd
    f = np.array([1.5, -2.25], np.float32)
    check_op("amp_cast", [f], {"dtype": "float16"}, expected=lambda a: a,
             dtype_out=np.float16, grad=False)
    # MXNet: non-float inputs pass through amp_cast unchanged.
    check_op("amp_cast", [np.array([1, 2], np.int32)], {"dtype": "float16"},
             expected=[np.array([1, 2])], grad=False, dtype_out=np.int32)
    h, s = nd.array([1, 2], dtype="float16"), nd.array([3, 4])
    outs = nd.amp_multicast(h, s, num_outputs=2)
    assert [np.dtype(o.dtype) for o in outs] == [np.float32, np.float32]
    outs = nd.amp_multicast(h, s, num_outputs=2, cast_narrow=True)
    assert [np.dtype(o.dtype) for o in outs] == [np.float16, np.float16]
    d, i = nd.array([1, 2], dtype="float64"), nd.array([1, 2], dtype="int32")
    outs = nd.amp_multicast(h, d, i, num_outputs=3)
    assert [np.dtype(o.dtype) for o in outs] == [np.float16, np.float64, np.int32]
    _eq(outs[0], [1, 2], np.float16)
    with pytest.raises(MXNetError, match="amp_multicast.*num_outputs"):
        nd.amp_multicast(h, s, num_outputs=3)


def test_symbol_json_with_ctx():
    graph = {"nodes": [{"op": "_zeros", "name": "z", "attrs": {"shape": "(2, 3)",
                                                             "dtype": "int32",
                                                             "ctx": "cpu(0)"},
                        "inputs": []},
                       {"op": "_arange", "name": "r", "attrs": {
                           "start": "0", "stop": "3", "step": "1.0", "repeat": "1",
                           "infer_range": "False", "dtype": "float32"}, "inputs": []}],
             "arg_nodes": [], "node_row_ptr": [0, 1, 2], "heads": [[0, 0, 0], [1, 0, 0]],
             "attrs": {"mxnet_version": ["int", 10901]}}
    sym = mx.sym.load_json(json.dumps(graph))
    _, out, _ = sym.infer_shape()
    assert out == [(2, 3), (3,)]
    _, types, _ = sym.infer_type()
    assert [np.dtype(t) for t in types] == [np.int32, np.float32]


def test_scalar_and_zero_size_shapes_need_np_shape():
    # MXNet: outside NumPy shape semantics () and a 0 dimension are unknown shapes
    for fn in (lambda: mx.nd.zeros(()), lambda: mx.nd.ones((0, 1, 3, 0)),
               lambda: mx.nd.full((), 2.0)):
        with pytest.raises(MXNetError, match="np_shape"):
            fn()
    with mx.np_shape():
        assert mx.nd.ones(()).asnumpy() == 1 and mx.nd.zeros(()).shape == ()
        assert mx.nd.ones((0, 1, 0, 4)).shape == (0, 1, 0, 4)
        assert mx.nd.full((), 2.5).asnumpy() == 2.5

    @mx.use_np_shape
    def scalar_one():
        return mx.nd.ones(shape=())
    assert scalar_one().shape == ()


def test_arange_infer_range_takes_its_length_from_the_graph():
    # MXNet: arange(start, infer_range=True) without stop is as long as the graph needs
    s = mx.sym.elemwise_add(mx.sym.arange(start=2, step=3, infer_range=True),
                            mx.sym.zeros(shape=[4]))
    assert s.infer_shape() == ([], [(4,)], [])
    out = s.bind(mx.cpu(), args={}).forward()[0]
    assert out.asnumpy().tolist() == [2, 5, 8, 11]
    assert mx.sym.arange(2, 11, step=3, repeat=2).infer_shape()[1] == [(6,)]


def test_arange_like():
    # values from MXNet 1.9.1
    x = mx.nd.array(np.random.RandomState(0).rand(3, 4))
    assert mx.nd.contrib.arange_like(x).asnumpy().tolist() == [[0, 1, 2, 3], [4, 5, 6, 7],
                                                               [8, 9, 10, 11]]
    out = mx.nd.contrib.arange_like(x, start=1, step=2, repeat=2, axis=-1)
    assert out.asnumpy().tolist() == [1, 1, 3, 3]
    ints = mx.nd.contrib.arange_like(mx.nd.ones((2, 3), dtype="int32"), start=0.5, step=1.5)
    assert ints.dtype == np.int32 and ints.asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    sym = mx.sym.contrib.arange_like(mx.sym.var("x"), axis=0)
    assert sym.infer_shape(x=(3, 4))[1] == [(3,)]
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.arange_like(x) * x
    y.backward()   # arange_like itself passes no gradient to x
    assert x.grad.asnumpy().tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]

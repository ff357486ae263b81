"""Contrib tensor operators (index_array, index_copy, boolean_mask, allclose, quadratic,
div_sqrt_dim) vs NumPy and values recorded with MXNet 1.9.1."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from helpers import check_op

RNG = np.random.RandomState(0)


def test_index_array():
    shape = (2, 3, 4)
    grid = np.stack(np.mgrid[tuple(slice(0, n) for n in shape)], axis=-1)
    out = check_op("_contrib_index_array", [np.ones(shape, np.float32)], {}, [grid],
                   grad=False)[0]
    assert out.dtype == np.int64
    check_op("_contrib_index_array", [np.ones(shape, np.float32)], {"axes": (-1, 0)},
             [grid[..., [2, 0]]], grad=False)
    sym = mx.sym.contrib.index_array(mx.sym.var("data"), axes=(1,))
    assert sym.infer_shape(data=(5, 6))[1] == [(5, 6, 1)]
    with pytest.raises(MXNetError, match="index_array"):
        mx.nd.contrib.index_array(mx.nd.ones((2, 3)), axes=(2,))


def test_index_copy():
    # the example of MXNet 1.9.1's documentation, with its gradients
    x, t = mx.nd.zeros((5, 3)), mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    index = mx.nd.array([0, 4, 2], dtype=np.int64)
    x.attach_grad()
    t.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.index_copy(x, index, t)
    out.backward(mx.nd.arange(15).reshape((5, 3)))
    assert out.asnumpy().tolist() == [[1, 2, 3], [0, 0, 0], [7, 8, 9], [0, 0, 0], [4, 5, 6]]
    assert x.grad.asnumpy().tolist() == [[0, 0, 0], [3, 4, 5], [0, 0, 0], [9, 10, 11],
                                         [0, 0, 0]]
    assert t.grad.asnumpy().tolist() == [[0, 1, 2], [12, 13, 14], [6, 7, 8]]
    with pytest.raises(MXNetError, match="index_copy"):
        mx.nd.contrib.index_copy(x, mx.nd.array([0, 1]), t)


def test_boolean_mask():
    data = mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.boolean_mask(data, mx.nd.array([0, 1, 1]))
    out.backward(mx.nd.array([[1, 2, 3], [4, 5, 6]]))
    assert out.asnumpy().tolist() == [[4, 5, 6], [7, 8, 9]]
    assert data.grad.asnumpy().tolist() == [[0, 0, 0], [1, 2, 3], [4, 5, 6]]
    assert mx.nd.contrib.boolean_mask(data, mx.nd.zeros((3,))).shape == (0, 3)
    with pytest.raises(MXNetError, match="boolean_mask"):
        mx.nd.contrib.boolean_mask(data, mx.nd.ones((2,)))


def test_allclose():
    a = mx.nd.array([1e10, 1e-8])
    # recorded with MXNet 1.9.1: computed in float32, 1.00001e10 is not close here
    out = mx.nd.contrib.allclose(a, mx.nd.array([1.00001e10, 1e-9]))
    assert out.shape == () and out.dtype == np.uint8 and out.asscalar() == 0
    assert mx.nd.contrib.allclose(a, mx.nd.array([1.000001e10, 1e-9])).asscalar() == 1
    nan = mx.nd.array([1, np.nan])
    assert mx.nd.contrib.allclose(nan, nan).asscalar() == 1
    assert mx.nd.contrib.allclose(nan, nan, equal_nan=False).asscalar() == 0
    for dtype in (np.float16, np.float64):
        x = RNG.randn(4, 5).astype(dtype)
        y = (x + RNG.randn(4, 5) * 1e-4).astype(dtype)
        for rtol, atol in ((1e-2, 1e-4), (1e-7, 1e-9)):
            got = mx.nd.contrib.allclose(mx.nd.array(x, dtype=dtype),
                                         mx.nd.array(y, dtype=dtype), rtol=rtol, atol=atol)
            assert got.asscalar() == np.allclose(x, y, rtol, atol)


def test_quadratic_and_div_sqrt_dim():
    x = RNG.randn(3, 4).astype(np.float32)
    check_op("_contrib_quadratic", [x], {"a": 0.5, "b": -2.0, "c": 1.5},
             lambda d: 0.5 * d * d - 2 * d + 1.5)
    assert mx.nd.contrib.quadratic(mx.nd.array([1, 2]), a=1, b=2, c=3).asnumpy().tolist() \
        == [6, 11]
    check_op("_contrib_div_sqrt_dim", [x], {}, lambda d: d / 2.0)

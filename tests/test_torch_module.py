"""mx.th / mx.torch: torch functions over NDArrays (MXNet's Torch-backend module)."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError


def test_functions_take_and_return_ndarrays():
    assert mx.th is mx.torch
    a = np.array([[1., 2.], [3., 4.]], np.float32)
    x = mx.nd.array(a)
    out = mx.th.mm(x, x)
    assert isinstance(out, mx.nd.NDArray) and out.context == mx.cpu(0)
    np.testing.assert_array_equal(out.asnumpy(), a @ a)
    np.testing.assert_allclose(mx.th.exp(x).asnumpy(), np.exp(a), rtol=1e-6)
    # NDArrays inside a list, keyword arguments, non-tensor results
    np.testing.assert_array_equal(mx.th.cat([x, x], dim=1).asnumpy(), np.hstack([a, a]))
    assert mx.th.numel(x) == 4
    values, indices = mx.th.max(x, dim=1)
    np.testing.assert_array_equal(values.asnumpy(), [2, 4])
    np.testing.assert_array_equal(indices.asnumpy(), [1, 1])
    assert isinstance(mx.th.max(x, dim=0).values, mx.nd.NDArray)
    parts = mx.th.split(x, 1)
    assert isinstance(parts, tuple) and [p.shape for p in parts] == [(1, 2), (1, 2)]


def test_out_argument_writes_into_the_ndarray():
    x = mx.nd.array([[1., 2.], [3., 4.]])
    res = mx.nd.zeros((2, 2))
    assert mx.th.add(x, x, out=res) is res
    np.testing.assert_array_equal(res.asnumpy(), [[2, 4], [6, 8]])


def test_result_context_and_creation_functions():
    with mx.Context(mx.cpu(1)):
        created = mx.th.ones(2, 3)
    assert created.shape == (2, 3) and created.context == mx.cpu(1)
    x = mx.nd.ones((2,), ctx=mx.cpu(2))
    assert mx.th.neg(x).context == mx.cpu(2)


def test_bad_names_and_failures():
    for name in ("no_such_function", "Tensor", "float32", "nn", "_C"):
        with pytest.raises(AttributeError, match="has no attribute '%s'" % name):
            getattr(mx.th, name)
    assert "mm" in dir(mx.th) and "Tensor" not in dir(mx.th)
    assert "torch function mm" in mx.th.mm.__doc__
    x = mx.nd.ones((2, 2))
    with pytest.raises(MXNetError, match=r"mx.th.mm on NDArrays of shapes \[\(2, 2\), "
                                         r"\(3, 3\)\]"):
        mx.th.mm(x, mx.nd.ones((3, 3)))
    with pytest.raises(TypeError):
        mx.th.mm(x)

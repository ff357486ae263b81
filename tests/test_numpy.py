"""mx.np against NumPy: shapes, dtypes, broadcasting, 0-d and zero-size arrays."""
import numpy as onp
import pytest

import mxtorch as mx
from mxtorch import autograd
from mxtorch import numpy as np

R = onp.random.RandomState(0)
A = R.uniform(0.1, 0.9, (2, 3)).astype("float32")
B = R.uniform(0.1, 0.9, (3,)).astype("float32")


def _close(got, want, rtol=1e-5, atol=1e-6, dtype=True):
    g = got.asnumpy() if isinstance(got, np.ndarray) else onp.asarray(got)
    want = onp.asarray(want)
    assert g.shape == want.shape, (g.shape, want.shape)
    if dtype:
        assert g.dtype == want.dtype, (g.dtype, want.dtype)
    onp.testing.assert_allclose(g, want, rtol=rtol, atol=atol)


# ----------------------------------------------------------------- ndarray basics
def test_array_defaults_and_repr():
    a = np.array([1, 2])
    assert isinstance(a, mx.nd.NDArray) and a.dtype == onp.dtype("float32")
    assert repr(a) == "array([1., 2.])"
    assert repr(np.array([[1, 2], [3, 4]], dtype="int32")) == (
        "array([[1, 2],\n       [3, 4]], dtype=int32)")
    assert repr(np.zeros((2, 0, 3))) == "array([], shape=(2, 0, 3))"
    assert repr(np.array(1.5)) == "array(1.5)" and np.array(1.5).shape == ()
    assert np.array(onp.array([1, 2], dtype="int64")).dtype == onp.int64
    assert str(np.array([1., 2])) == "[1. 2.]" and f"{np.array(2.5)}" == "2.5"
    assert np.array([1.]).ctx == mx.cpu(0) and np.array([1.]).device == mx.cpu(0)
    with pytest.raises(ValueError):
        np.array(mx.nd.array([1]))


def test_indexing_0d_and_views():
    a = np.arange(6).reshape(2, 3)
    assert a[0, 1].shape == () and a[0, 1].item() == 1.0
    assert float(a[1, 2]) == 5.0 and int(a[1, 0]) == 3
    _close(a[:, ::-2], onp.arange(6, dtype="float32").reshape(2, 3)[:, ::-2])
    _close(a[np.array([1, 0], dtype="int64")], onp.arange(6, dtype="float32").reshape(2, 3)[[1, 0]])
    _close(a[a > 2], onp.array([3., 4., 5.], dtype="float32"))
    v = a[0]
    v[:] = 9
    assert a.asnumpy()[0].tolist() == [9, 9, 9]
    a[1, ::-1] = np.array([1., 2., 3.])
    assert a.asnumpy()[1].tolist() == [3, 2, 1]
    a[a > 8] = 0
    assert a.asnumpy()[0].tolist() == [0, 0, 0]
    assert len(np.zeros((3, 2))) == 3 and np.zeros((4,))[None].shape == (1, 4)


def test_memory_sharing_with_legacy():
    a = np.array([1., 2.])
    nd = a.as_nd_ndarray()
    assert type(nd) is mx.nd.NDArray
    nd[:] = 5
    assert a.asnumpy().tolist() == [5, 5]
    back = np.as_np_ndarray(mx.nd.array([1, 2]))
    assert isinstance(back, np.ndarray) and back.dtype == onp.float32


# ----------------------------------------------------------------- dtype rules (MXNet 1.9.1)
@pytest.mark.parametrize("expr, dtype", [
    (lambda: np.array([1, 2], dtype="int32") / np.array([1, 2], dtype="int32"), "float32"),
    (lambda: np.array([1, 2], dtype="int32") * 2.5, "int32"),
    (lambda: np.array([1, 2], dtype="int32") + np.array([1, 2], dtype="float16"), "float16"),
    (lambda: np.array([1, 2], dtype="int64") + np.array([1., 2.]), "float32"),
    (lambda: np.array([1, 2], dtype="bool") + np.array([1, 2], dtype="int32"), "int32"),
    (lambda: np.array([1, 2], dtype="int8") + np.array([1, 2], dtype="uint8"), "int32"),
    (lambda: np.array([1, 2], dtype="int32") + np.array([1, 2], dtype="int64"), "int64"),
    (lambda: np.array([1, 2], dtype="float16") + np.array([1, 2], dtype="float64"), "float64"),
    (lambda: np.array([True, False], dtype="bool") + 1, "int64"),
    (lambda: np.sqrt(np.array([2, 4], dtype="int32")), "int32"),
    (lambda: np.array([1, 2], dtype="int32") > 1.5, "bool"),
    (lambda: 1 / np.array([1, 2], dtype="int32"), "float32"),
    (lambda: np.sum(np.array([1, 2], dtype="int8")), "int8"),
    (lambda: np.sum(np.array([1, 0], dtype="bool")), "int64"),
    (lambda: np.mean(np.array([1, 2], dtype="int32")), "float32"),
    (lambda: np.std(np.array([1, 2, 4], dtype="int32")), "int32"),
    (lambda: np.argmax(np.array([1, 2])), "int64"),
    (lambda: np.arange(3), "float32"),
    (lambda: np.full((2,), 3), "float32"),
    (lambda: np.ones((2,), dtype=int), "int64"),
    (lambda: np.linspace(0, 1, 5, dtype="int32"), "int32"),
])
def test_mxnet_dtype_rules(expr, dtype):
    assert expr().dtype == onp.dtype(dtype)


def test_quirk_values():
    _close(np.array([1, 2], dtype="int32") * 2.5, onp.array([2, 4], dtype="int32"))
    _close(np.sqrt(np.array([2, 4], dtype="int32")), onp.array([1, 2], dtype="int32"))
    _close(np.array([1, 2], dtype="int32") / 2, onp.array([0.5, 1.], dtype="float32"))
    _close(np.mod(np.array([5, -2], dtype="int32"), 3), onp.array([2, 1], dtype="int32"))
    with pytest.raises(TypeError):
        np.array([1., 2.]) + [1, 2]


# ----------------------------------------------------------------- ufuncs vs NumPy
BIN = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod",
       "remainder", "power", "maximum", "minimum", "fmax", "fmin", "hypot", "arctan2",
       "copysign", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
       "logical_and", "logical_or", "logical_xor"]
UN = ["abs", "absolute", "sign", "sqrt", "cbrt", "square", "exp", "expm1", "exp2", "log",
      "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
      "cosh", "tanh", "arcsinh", "arctanh", "degrees", "radians", "deg2rad", "rad2deg",
      "floor", "ceil", "trunc", "fix", "rint", "reciprocal", "negative", "positive",
      "isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_not"]


@pytest.mark.parametrize("name", BIN)
def test_binary_broadcast(name):
    want = getattr(onp, name)(A, B)
    _close(getattr(np, name)(np.array(A), np.array(B)), want, rtol=1e-4)
    _close(getattr(np, name)(np.zeros((0, 3)), np.array(B)), getattr(onp, name)(
        onp.zeros((0, 3), "float32"), B))
    z = getattr(np, name)(np.array(A[0, 0]), np.array(B[0]))
    assert z.shape == ()


@pytest.mark.parametrize("name", UN)
def test_unary(name):
    x = A if name not in ("arccosh",) else A + 1
    _close(getattr(np, name)(np.array(x)), getattr(onp, name)(x), rtol=1e-4)
    assert getattr(np, name)(np.zeros((0, 2))).shape == (0, 2)


def test_int_ufuncs():
    a, b = np.array([4, 6], dtype="int32"), np.array([6, 4], dtype="int32")
    for name in ["lcm", "gcd", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                 "right_shift"]:
        _close(getattr(np, name)(a, b), getattr(onp, name)(a.asnumpy(), b.asnumpy()))
    _close(np.invert(a), ~a.asnumpy())
    _close(np.bitwise_not(a), ~a.asnumpy())
    _close(np.ldexp(np.array([1., 2.]), np.array([2., 3.])), onp.array([4., 16.], "float32"))
    _close(np.float_power(np.array([2.]), np.array([3.])), onp.array([8.]))
    _close(np.around(np.array([1.234, 2.5]), 2), onp.around(onp.array([1.234, 2.5], "float32"), 2))
    _close(np.nan_to_num(np.array([onp.nan, 1.])), onp.array([0., 1.], "float32"))
    _close(np.interp(np.array([1.5]), np.array([1., 2]), np.array([10., 20])), onp.array([15.]))


def test_operators_and_inplace():
    a, b = np.array(A), np.array(B)
    _close(a + b, A + B)
    _close(2 - a, 2 - A)
    _close(a ** 2, A ** 2, rtol=1e-5)
    _close(-a, -A)
    _close(a @ np.ones((3, 2)), A @ onp.ones((3, 2), "float32"))
    _close(a // b, A // B)
    _close(a % 0.3, onp.mod(A, onp.float32(0.3)), rtol=1e-4, atol=1e-5)
    c = a.copy()
    c += b
    c *= 2
    _close(c, (A + B) * 2)
    with pytest.raises(ValueError):
        b += a


# ----------------------------------------------------------------- products
def test_products():
    a, b = np.array(A), np.array(B)
    _close(np.dot(a, b), A.dot(B))
    _close(np.matmul(a, np.array(A.T)), A @ A.T)
    _close(np.vdot(b, b), onp.vdot(B, B))
    _close(np.inner(a, b), onp.inner(A, B))
    _close(np.outer(b, b), onp.outer(B, B))
    _close(np.tensordot(a, np.array(A), ([0, 1], [0, 1])), onp.tensordot(A, A, ([0, 1], [0, 1])))
    _close(np.einsum("ij,j->i", a, b), onp.einsum("ij,j->i", A, B))
    _close(np.kron(a, a), onp.kron(A, A))
    _close(np.cross(b, b + 1), onp.cross(B, B + 1))
    _close(np.trace(np.array(A)), onp.trace(A))
    _close(np.matmul(np.ones((2, 0)), np.ones((0, 3))), onp.zeros((2, 3), "float32"))


# Real MXNet 1.9.1's mx.np: functions and methods return copies, even reshape/transpose;
# basic indexing and astype(copy=False) share memory.
_NP_COPIES = {
    "reshape": lambda a: np.reshape(a, (6, 4)),
    "method reshape": lambda a: a.reshape(6, 4),
    "transpose": lambda a: np.transpose(a),
    "T": lambda a: a.T,
    "squeeze": lambda a: np.squeeze(np.expand_dims(a, 0)),
    "expand_dims": lambda a: np.expand_dims(a, 0),
    "swapaxes": lambda a: np.swapaxes(a, 0, 1),
    "moveaxis": lambda a: np.moveaxis(a, 0, 1),
    "split": lambda a: np.split(a, 2, axis=0)[0],
    "array_split": lambda a: np.array_split(a, 2)[0],
    "ravel": lambda a: np.ravel(a),
    "npx.reshape": lambda a: mx.npx.reshape(a, (6, 4)),
    "diagonal": lambda a: np.diagonal(a[0]),
    "atleast_3d": lambda a: np.atleast_3d(a),
    "broadcast_to": lambda a: np.broadcast_to(a[0:1], (2, 3, 4)),
    "copy": lambda a: np.copy(a),
    "real": lambda a: np.real(a),
}
_NP_SHARES = {
    "a[0]": lambda a: a[0],
    "a[0:1]": lambda a: a[0:1],
    "astype copy=False": lambda a: a.astype("float32", copy=False),
}


@pytest.mark.parametrize("name", sorted(_NP_COPIES) + sorted(_NP_SHARES))
def test_np_results_share_memory_only_where_mxnet_does(name):
    with mx.util.np_shape(True), mx.util.np_array(True):
        a = np.array(onp.arange(24, dtype=onp.float32).reshape(2, 3, 4))
        res = (_NP_COPIES.get(name) or _NP_SHARES[name])(a)
        res[...] = -1
        assert bool((a.asnumpy() == -1).any()) == (name in _NP_SHARES)


def test_np_copy_is_differentiable():
    a = np.array([1.0, 2.0])
    a.attach_grad()
    with autograd.record():
        b = np.copy(a) * 3
    b.backward()
    onp.testing.assert_array_equal(a.grad.asnumpy(), [3, 3])


def test_real_follows_numpy_like_mxnet():
    # MXNet 1.9.1 falls back to NumPy: a new array of the same dtype for mx arrays,
    # NumPy's own answer for lists and scalars.
    for dtype in ("float32", "float64", "int32"):
        r = np.real(np.array([1.5, -2.0], dtype=dtype))
        assert isinstance(r, np.ndarray) and r.dtype == onp.dtype(dtype)
        onp.testing.assert_array_equal(r.asnumpy(), onp.array([1.5, -2.0], dtype=dtype))
    assert np.real(3.0) == 3.0 and isinstance(np.real(3.0), float)
    r = np.real([1, 2])
    assert type(r) is onp.ndarray
    onp.testing.assert_array_equal(r, [1, 2])


def test_ndarray_methods_take_mxnet_argument_forms():
    """mx.np.ndarray methods as MXNet 1.9.1 defines them (values from NumPy)."""
    src = onp.arange(24, dtype="float32").reshape(2, 3, 4) - 7
    x = np.array(src)
    _close(x.transpose(0, 2, 1), src.transpose(0, 2, 1))
    _close(x.transpose((2, 0, 1)), src.transpose(2, 0, 1))
    _close(x.transpose(None), src.T)
    _close(x.transpose(), src.T)
    with pytest.raises(TypeError):
        x.transpose(axes=(0, 2, 1))   # MXNet: transpose(self, *axes)
    _close(x.reshape(2, -1), src.reshape(2, -1))
    _close(x.reshape((4, 6)), src.reshape(4, 6))
    _close(x.reshape(-1), src.reshape(-1))
    with pytest.raises(TypeError, match="exactly 1 argument"):
        x.reshape()
    with pytest.raises(TypeError, match="invalid keyword"):
        x.reshape(4, 6, shape=(4, 6))
    _close(x.reshape_view(0, -1), src.reshape(2, 12))   # legacy codes: 0 keeps the dim
    _close(x.sum(0), src.sum(0))
    _close(x.sum(0, "float64"), src.sum(0, dtype="float64"))
    _close(x.mean(axis=0, keepdims=True), src.mean(axis=0, keepdims=True))
    _close(x.max(1, None, True), src.max(1, keepdims=True))
    _close(x.var(0, None, None, 1), src.var(0, ddof=1))
    same = x.astype("float32", copy=False)
    assert same is x
    assert x.astype("float32") is not x
    _close(x.astype(onp.int32), src.astype(onp.int32))
    for kwargs in ({"order": "F"}, {"casting": "safe"}, {"subok": False}):
        with pytest.raises(ValueError):
            x.astype("float64", **kwargs)
    _close(x.clip(min=1), src.clip(1, None))
    _close(x.clip(None, 3), src.clip(None, 3))
    _close(x.clip(0, 5), src.clip(0, 5))
    with pytest.raises(ValueError, match="must set either max or min"):
        x.clip()
    _close(x.flatten(), src.flatten())
    _close(x.flatten("F"), src.flatten("F"))
    with pytest.raises(ValueError):
        x.flatten("Z")
    _close(round(x / 3, 1), onp.round(src / 3, 1))
    assert isinstance(round(x[0, 0, 1] / 3), np.ndarray)
    _close(x.sum(axis=onp.int64(2)), src.sum(axis=2))
    _close(np.expand_dims(x, onp.int32(0)), src[None])


def test_random_samplers_take_size_dtype_ctx_positionally():
    # MXNet: np.random.normal(loc, scale, size, dtype, ctx, out) -- all positional
    x = mx.np.random.normal(0, 1, (2, 3))
    assert x.shape == (2, 3)
    u = mx.np.random.uniform(0, 1, (4,), "float64")
    assert u.shape == (4,) and u.dtype == np.float64
    assert mx.np.random.exponential(2.0, (3,)).shape == (3,)
    with pytest.raises(TypeError, match="at most 6 positional"):
        mx.np.random.normal(0, 1, (2,), None, None, None, 5)
    # distributions without defaults take their parameters first too
    assert mx.np.random.beta(2.0, 3.0, (5,)).shape == (5,)
    assert mx.np.random.pareto(2.0, (2, 2)).shape == (2, 2)

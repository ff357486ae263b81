"""mx.sym.np beyond the basics: elementwise math, reductions, shapes, creation,
mx.sym.np.linalg and mx.sym.np.random — MXNet 1.9.1's node names, evaluated vs NumPy,
shape inference (meta) vs the real result, and a hybridized block under npx.set_np()."""
import json
import warnings

import numpy as onp
import pytest

import mxtorch as mx
from mxtorch import numpy_extension as npx
from mxtorch.numpy.multiarray import array as np_array
from mxtorch.numpy.multiarray import ndarray as np_ndarray

S = mx.sym.np


@pytest.fixture(autouse=True)
def _np_mode():
    npx.set_np()
    yield
    npx.reset_np()


def _rand(*shape, seed=0, lo=-1.0, hi=1.0):
    return onp.random.RandomState(seed).uniform(lo, hi, shape).astype("float32")


def _var(name):
    return S.var(name)


def _op_of(sym):
    node = [n for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"][-1]
    return node["op"], node.get("attrs", {})


def _run(sym, **arrays):
    """Evaluate ``sym``; check infer_shape (meta) agrees with the real output shapes."""
    feed = {k: np_array(v) for k, v in arrays.items()}
    outs = sym.eval(**feed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in arrays.items()})
    assert out_shapes is not None
    for o, s in zip(outs, out_shapes):
        assert tuple(o.shape) == tuple(s)
    return [o.asnumpy() for o in outs]


X = _rand(3, 4)
P = _rand(3, 4, seed=1, lo=0.1, hi=0.9)   # in (0, 1): valid for arcsin, log, ...
Y = _rand(3, 4, seed=2)
IDX = onp.arange(12, dtype="int32").reshape(3, 4)

UNARY = [  # (function, op name, input, NumPy reference)
    ("arcsin", P, onp.arcsin), ("arccos", P, onp.arccos), ("arctan", X, onp.arctan),
    ("sinh", X, onp.sinh), ("cosh", X, onp.cosh), ("tan", X, onp.tan),
    ("arcsinh", X, onp.arcsinh), ("arccosh", P + 1, onp.arccosh),
    ("arctanh", P * 0.9, onp.arctanh), ("log2", P, onp.log2), ("log10", P, onp.log10),
    ("cbrt", X, onp.cbrt), ("reciprocal", P, onp.reciprocal), ("degrees", X, onp.degrees),
    ("radians", X, onp.radians), ("floor", X * 3, onp.floor), ("ceil", X * 3, onp.ceil),
    ("trunc", X * 3, onp.trunc), ("fix", X * 3, onp.fix), ("rint", X * 3, onp.rint),
    ("logical_not", X > 0, onp.logical_not),
    ("isnan", onp.where(X > 0, X, onp.nan), onp.isnan),
    ("isinf", onp.where(X > 0, X, onp.inf), onp.isinf),
    ("isfinite", onp.where(X > 0.5, onp.nan, onp.where(X < -0.5, -onp.inf, X)), onp.isfinite),
]


@pytest.mark.parametrize("fname,data,ref", UNARY, ids=[u[0] for u in UNARY])
def test_unary(fname, data, ref):
    with onp.errstate(all="ignore"):
        expected = ref(data)
    sym = getattr(S, fname)(_var("x"))
    assert _op_of(sym)[0] == f"_npi_{fname}"
    out = _run(sym, x=data)[0]
    assert out.dtype == expected.dtype
    onp.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_unary_integer_inputs():
    assert _run(S.floor(_var("x")), x=IDX)[0].dtype == onp.int32   # rounding keeps ints
    assert _run(S.log2(_var("x")), x=IDX + 1)[0].dtype == onp.float32
    onp.testing.assert_array_equal(_run(S.invert(_var("x")), x=IDX)[0], onp.invert(IDX))
    assert _op_of(S.bitwise_not(_var("x")))[0] == "_npi_bitwise_not"


def test_binary_array_and_scalar_forms():
    x, y = _var("x"), _var("y")
    for fname, ref in (("arctan2", onp.arctan2), ("hypot", onp.hypot),
                       ("copysign", onp.copysign), ("ldexp", lambda a, b: a * 2.0 ** b)):
        out = _run(getattr(S, fname)(x, y), x=X, y=Y)[0]
        onp.testing.assert_allclose(out, ref(X, Y), rtol=1e-5, err_msg=fname)
    onp.testing.assert_allclose(_run(S.arctan2(2.0, x), x=X)[0], onp.arctan2(2.0, X),
                                rtol=1e-5)
    assert _op_of(S.arctan2(2.0, x)) == ("_npi_rarctan2_scalar",
                                         {"is_int": "False", "scalar": "2.0"})
    assert _op_of(S.hypot(x, 2.0))[0] == "_hypot_scalar"
    onp.testing.assert_allclose(_run(S.hypot(x, 2.0), x=X)[0], onp.hypot(X, 2.0), rtol=1e-5)
    onp.testing.assert_allclose(_run(S.ldexp(x, 3), x=X)[0], X * 8, rtol=1e-6)
    onp.testing.assert_allclose(_run(S.copysign(2, x), x=X)[0], onp.copysign(2, X))
    j = IDX + 1
    for fname in ("bitwise_and", "bitwise_or", "bitwise_xor", "lcm"):
        ref = getattr(onp, fname)
        onp.testing.assert_array_equal(_run(getattr(S, fname)(x, y), x=IDX, y=j)[0], ref(IDX, j))
        onp.testing.assert_array_equal(_run(getattr(S, fname)(x, 6), x=IDX)[0], ref(IDX, 6))


def test_reductions():
    x = _var("x")
    onp.testing.assert_allclose(_run(S.std(x, axis=1), x=X)[0], X.std(1), rtol=1e-5)
    onp.testing.assert_allclose(_run(S.std(x, ddof=1, keepdims=True), x=X)[0],
                                X.std(ddof=1, keepdims=True), rtol=1e-5)
    assert _op_of(S.std(x, ddof=1, keepdims=True)) == (
        "_npi_std", {"axis": "None", "ddof": "1", "keepdims": "True"})
    v = S.var(x, axis=0)  # MXNet: sym.np.var of a symbol is the variance
    assert _op_of(v)[0] == "_npi_var"
    onp.testing.assert_allclose(_run(v, x=X)[0], X.var(0), rtol=1e-5)
    am = _run(S.argmin(x, axis=1), x=X)[0]
    assert am.dtype == onp.int64 and (am == X.argmin(1)).all()
    assert _run(S.argmin(x), x=X)[0] == X.argmin()
    onp.testing.assert_allclose(_run(S.cumsum(x, axis=0), x=X)[0], X.cumsum(0), rtol=1e-6)
    flat = _run(S.cumsum(x), x=IDX)[0]
    assert flat.dtype == onp.int64 and (flat == IDX.cumsum()).all()
    assert _run(S.all(x > 0), x=X)[0] == (X > 0).all()
    onp.testing.assert_array_equal(_run(S.any(x > 0.5, axis=0), x=X)[0], (X > 0.5).any(0))


def test_shape_functions():
    x, y = _var("x"), _var("y")
    x3 = _rand(2, 3, 4)
    cases = [
        (S.moveaxis(x, 0, 2), x3, onp.moveaxis(x3, 0, 2), "_np_moveaxis"),
        (S.swapaxes(x, 0, 2), x3, onp.swapaxes(x3, 0, 2), "SwapAxis"),
        (S.tile(x, (2, 1)), X, onp.tile(X, (2, 1)), "tile"),
        (S.repeat(x, 2, axis=0), X, onp.repeat(X, 2, 0), "repeat"),
        (S.flip(x), X, onp.flip(X), "_npi_flip"),
        (S.flip(x, 1), X, onp.flip(X, 1), "_npi_flip"),
        (S.roll(x, 1), X, onp.roll(X, 1), "_np_roll"),
        (S.roll(x, (1, 2), axis=(0, 1)), X, onp.roll(X, (1, 2), (0, 1)), "_np_roll"),
        (S.ravel(x), X, X.ravel(), "_npx_reshape"),
        (S.tril(x, -1), X, onp.tril(X, -1), "_npi_tril"),
        (S.sort(x), X, onp.sort(X), "sort"),
        (S.diag(x, 1), X, onp.diag(X, 1), "_np_diag"),
        (S.trace(x), X, onp.trace(X), "_np_trace"),
        (S.around(x * 10, 1), X, onp.around(X * 10, 1), "_npi_around"),
        (S.einsum("ij,kj->ik", x, x), X, X @ X.T, "_npi_einsum"),
        (S.tensordot(x, S.transpose(x), 1), X, X @ X.T, "_npi_tensordot_int_axes"),
    ]
    for sym, data, ref, op in cases:
        assert _op_of(sym)[0] == op
        onp.testing.assert_allclose(_run(sym, x=data)[0], ref, rtol=1e-5, err_msg=op)
    onp.testing.assert_array_equal(_run(S.argsort(x), x=X)[0], onp.argsort(X))
    onp.testing.assert_allclose(_run(S.outer(x, y), x=X[0], y=Y[0])[0],
                                onp.outer(X[0], Y[0]), rtol=1e-6)
    idx = onp.array([2, 0], dtype="int64")
    onp.testing.assert_allclose(_run(S.take(x, y, axis=1), x=X, y=idx)[0],
                                onp.take(X, idx, 1))
    onp.testing.assert_allclose(_run(S.take(x, y), x=X, y=idx)[0], onp.take(X, idx))
    onp.testing.assert_allclose(_run(S.vstack([x, y]), x=X, y=Y)[0], onp.vstack([X, Y]))
    onp.testing.assert_allclose(_run(S.hstack([x, y]), x=X, y=Y)[0], onp.hstack([X, Y]))


def test_split_and_aliases():
    x = _var("x")
    parts = _run(S.split(x, 2, axis=0), x=_rand(4, 3))
    for got, ref in zip(parts, onp.split(_rand(4, 3), 2, axis=0)):
        onp.testing.assert_array_equal(got, ref)
    s = S.split(x, [1, 3], axis=1)
    assert _op_of(s) == ("_split_v2", {"axis": "1", "indices": "[0, 1, 3]", "sections": "0",
                                       "squeeze_axis": "False"})
    assert _op_of(S.split(x, 2))[1]["indices"] == "[]"
    for got, ref in zip(_run(s, x=X), onp.split(X, [1, 3], axis=1)):
        onp.testing.assert_array_equal(got, ref)
    assert len(_run(S.vsplit(x, 3), x=X)) == 3
    onp.testing.assert_array_equal(_run(S.fliplr(x), x=X)[0], onp.fliplr(X))
    onp.testing.assert_array_equal(_run(S.flipud(x), x=X)[0], onp.flipud(X))
    onp.testing.assert_array_equal(_run(S.fabs(x), x=X)[0], onp.fabs(X))
    onp.testing.assert_array_equal(_run(S.row_stack([x, x]), x=X)[0], onp.vstack([X, X]))
    r = _run(S.random.rand(2, 3))[0]
    assert r.shape == (2, 3) and ((r >= 0) & (r < 1)).all()


def test_creation_functions():
    cases = [
        (S.full((2, 3), 7.0), onp.full((2, 3), 7.0, "float32"), "_full"),
        (S.arange(1, 7, 2, dtype="int32"), onp.arange(1, 7, 2, dtype="int32"), "_npi_arange"),
        (S.arange(5), onp.arange(5, dtype="float32"), "_npi_arange"),
        (S.eye(3, 4, 1), onp.eye(3, 4, 1, dtype="float32"), "_npi_eye"),
        (S.eye(3, k=-1), onp.eye(3, k=-1, dtype="float32"), "_npi_eye"),
        (S.identity(3), onp.identity(3, dtype="float32"), "_npi_identity"),
        (S.linspace(0, 1, 5), onp.linspace(0, 1, 5, dtype="float32"), "_linspace"),
    ]
    for sym, ref, op in cases:
        assert _op_of(sym)[0] == op
        out = _run(sym)[0]
        assert out.dtype == ref.dtype, op
        onp.testing.assert_allclose(out, ref, rtol=1e-6, err_msg=op)
    assert _op_of(S.eye(3, 4, 1))[1] == {"M": "4", "N": "3", "ctx": "cpu(0)",
                                         "dtype": "float32", "k": "1"}


def test_linalg():
    L = S.linalg
    a = _rand(3, 3, seed=3) + 3 * onp.eye(3, dtype="float32")
    spd = a @ a.T
    x, y = _var("x"), _var("y")
    b = _rand(3, 2, seed=4)
    checks = [
        (L.norm(x), X, onp.linalg.norm(X)),
        (L.norm(x, axis=1), X, onp.linalg.norm(X, axis=1)),
        (L.norm(x, ord=1, axis=1), X, onp.linalg.norm(X, ord=1, axis=1)),
        (L.norm(x, ord=onp.inf, axis=1), X, onp.linalg.norm(X, ord=onp.inf, axis=1)),
        (L.norm(x, "fro", (0, 1)), X, onp.linalg.norm(X, "fro", (0, 1))),
        (L.norm(x, "nuc", (0, 1)), X, onp.linalg.norm(X, "nuc", (0, 1))),
        (L.norm(x, 1, (0, 1)), X, onp.linalg.norm(X, 1, (0, 1))),
        (L.inv(x), a, onp.linalg.inv(a)),
        (L.det(x), a, onp.linalg.det(a)),
        (L.cholesky(x), spd, onp.linalg.cholesky(spd)),
        (L.pinv(x), X, onp.linalg.pinv(X)),
        (L.eigvalsh(x), spd, onp.linalg.eigvalsh(spd)),
    ]
    for sym, data, ref in checks:
        onp.testing.assert_allclose(_run(sym, x=data)[0], ref, rtol=1e-4, atol=1e-5,
                                    err_msg=_op_of(sym)[0])
    assert _op_of(L.norm(x, ord=1, axis=1)) == (
        "_npi_norm", {"axis": "(1,)", "flag": "-1", "keepdims": "False", "ord": "1"})
    assert _op_of(L.inv(x))[0] == "_linalg_inverse"
    onp.testing.assert_allclose(_run(L.solve(x, y), x=a, y=b)[0], onp.linalg.solve(a, b),
                                rtol=1e-4)
    sign, logdet = _run(L.slogdet(x), x=a)
    # the legacy _linalg_slogdet gives shape (1,) outputs for one matrix (MXNet: 0-d in np mode)
    onp.testing.assert_allclose(onp.ravel([sign, logdet]), onp.linalg.slogdet(a), rtol=1e-5)
    ut, s, v = _run(L.svd(x), x=X)
    onp.testing.assert_allclose(s, onp.linalg.svd(X, compute_uv=False), rtol=1e-5)
    onp.testing.assert_allclose((ut * s) @ v, X, atol=1e-5)


def test_random():
    R = S.random
    mx.random.seed(7)
    u = R.uniform(2.0, 3.0, size=(2000,))
    assert _op_of(u) == ("_npi_uniform", {"ctx": "cpu(0)", "dtype": "float32", "high": "3.0",
                                          "low": "2.0", "size": "(2000,)"})
    out = _run(u)[0]
    assert out.dtype == onp.float32 and out.min() >= 2.0 and out.max() < 3.0
    assert abs(out.mean() - 2.5) < 0.03
    n = _run(R.normal(1.0, 2.0, size=(4000,)))[0]
    assert abs(n.mean() - 1.0) < 0.15 and abs(n.std() - 2.0) < 0.15
    e = _run(R.exponential(2.0, size=(4000,)))[0]
    assert e.min() >= 0 and abs(e.mean() - 2.0) < 0.15
    lo = _var("lo")
    ua = R.uniform(lo, 1.0, size=(500, 3))
    assert _op_of(ua)[1]["low"] == "None"
    res = _run(ua, lo=onp.array([0.0, 0.5, 0.9], "float32"))[0]
    assert res.shape == (500, 3) and (res.min(0) >= [0.0, 0.5, 0.9]).all()
    sc = _run(R.normal(_var("m"), _var("s")), m=onp.zeros(3, "float32"),
              s=onp.zeros(3, "float32"))[0]
    assert sc.shape == (3,) and (sc == 0).all()
    ri = _run(R.randint(0, 5, size=(100,)))[0]
    assert ri.dtype == onp.int64 and ri.min() >= 0 and ri.max() < 5


def test_json_attributes_match_mxnet():
    x = _var("x")
    expected = [  # as MXNet 1.9.1 writes them
        (S.arange(5), ("_npi_arange", {"ctx": "cpu(0)", "dtype": "float32", "start": "0",
                                       "step": "1", "stop": "5"})),
        (S.all(x), ("_np_all", {})), (S.any(x, axis=0), ("_np_any", {"axis": "0"})),
        (S.roll(x, 1), ("_np_roll", {"shift": "1"})), (S.diag(x), ("_np_diag", {})),
        (S.trace(x, 1), ("_np_trace", {"offset": "1"})),
        (S.ravel(x), ("_npx_reshape", {"newshape": "-1"})),
        (S.argmin(x, axis=0), ("_npi_argmin", {"axis": "0", "keepdims": "False"})),
        (S.hypot(x, 2), ("_hypot_scalar", {"is_int": "True", "scalar": "2.0"})),
        (S.random.exponential(2.0, size=3),
         ("_npi_exponential", {"ctx": "cpu(0)", "scale": "2.0", "size": "3"})),
        (S.random.randint(0, 5, size=(2,)),
         ("_random_randint", {"ctx": "cpu(0)", "dtype": "int64", "high": "5", "low": "0",
                              "shape": "(2,)"})),
        (S.linalg.norm(x), ("_npi_norm", {"axis": "None", "flag": "-2", "keepdims": "False",
                                          "ord": "2"})),
        (S.linalg.norm(x, ord=onp.inf, axis=1),
         ("_npi_norm", {"axis": "(1,)", "flag": "-1", "keepdims": "False", "ord": "inf"})),
        (S.invert(x), ("_npi_bitwise_not", {})),
        (S.swapaxes(x, 0, 1), ("SwapAxis", {"dim1": "0", "dim2": "1"})),
    ]
    for sym, ref in expected:
        assert _op_of(sym) == ref


class _Net(mx.gluon.HybridBlock):
    """Uses the new functions through F.np when hybridized."""

    def hybrid_forward(self, F, x):
        y = F.np.arctan2(F.np.cumsum(x, axis=1), F.np.flip(x, 0) + 2.0)
        return F.np.linalg.norm(F.np.tril(y), axis=1) + F.np.std(x, axis=1)


def test_hybridized_block_matches_numpy():
    net = _Net()
    net.initialize()
    net.hybridize()
    out = net(np_array(X))
    y = onp.arctan2(X.cumsum(1), onp.flip(X, 0) + 2.0)
    ref = onp.linalg.norm(onp.tril(y), axis=1) + X.std(1)
    assert isinstance(out, np_ndarray)
    onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5)


def test_graph_roundtrip_matches_mxnet_values():
    x = _var("x")
    y = S.arctan2(S.cumsum(x, axis=1), S.flip(x, 0) + 2.0)
    s = (S.linalg.norm(S.tril(y), ord=1, axis=1) + S.std(x, axis=1) + S.arange(3)
         + S.linalg.norm(x) + S.trace(S.moveaxis(x, 0, 1)))
    loaded = S.load_json(s.tojson())
    xa = onp.arange(12, dtype="float32").reshape(3, 4) / 7
    out = loaded.eval(x=np_array(xa))[0].asnumpy()
    # real MXNet 1.9.1 binding the same graph
    onp.testing.assert_allclose(out, [5.516068, 7.177111, 9.918873], rtol=1e-6)


def test_tensordot_with_axis_lists():
    a, b = _var("a"), _var("b")
    x3, y3 = _rand(2, 3, 4), _rand(4, 3, 5, seed=1)
    sym = S.tensordot(a, b, axes=([1, 2], [1, 0]))
    # MXNet writes the axis lists as attributes of _npi_tensordot
    assert _op_of(sym) == ("_npi_tensordot", {"a_axes_summed": "[1, 2]",
                                              "b_axes_summed": "[1, 0]"})
    (out,) = _run(sym, a=x3, b=y3)
    onp.testing.assert_allclose(out, onp.tensordot(x3, y3, axes=([1, 2], [1, 0])),
                                rtol=1e-5, atol=1e-5)


_F = [-2.5, -1.0, 0.0, 1.5, 3.0]
_I = [-6, -3, 0, 4, 9]
_T, _FA = True, False
SCALAR_OPS = [  # (operator emitted, input, result dtype, expression, MXNet 1.9.1 result)
    ("_npi_equal_scalar", _F, "bool", lambda x: x == 1.5, [_FA, _FA, _FA, _T, _FA]),
    ("_npi_not_equal_scalar", _F, "bool", lambda x: x != 0, [_T, _T, _FA, _T, _T]),
    ("_npi_greater_scalar", _F, "bool", lambda x: x > 0, [_FA, _FA, _FA, _T, _T]),
    ("_npi_greater_equal_scalar", _F, "bool", lambda x: x >= 1.5, [_FA, _FA, _FA, _T, _T]),
    ("_npi_less_scalar", _I, "bool", lambda x: x < 0, [_T, _T, _FA, _FA, _FA]),
    ("_npi_less_equal_scalar", _I, "bool", lambda x: x <= 4, [_T, _T, _T, _T, _FA]),
    ("_npi_equal_scalar", _I, "bool", lambda x: x == 4.5, [_FA] * 5),
    ("_npi_equal_scalar", [True, False], "bool", lambda x: x == 1, [_T, _FA]),
    ("_npi_power_scalar", _F, "float32", lambda x: x ** 2, [6.25, 1.0, 0.0, 2.25, 9.0]),
    ("_npi_power_scalar", _I, "int32", lambda x: x ** 2, [36, 9, 0, 16, 81]),
    # MXNet: an integer array with a float scalar computes in float64
    ("_npi_power_scalar", _I, "float64", lambda x: x ** 0.5,
     [onp.nan, onp.nan, 0.0, 2.0, 3.0]),
    ("_npi_power_scalar", [True, False], "int64", lambda x: x ** 2, [1, 0]),
    ("_npi_rpower_scalar", _F, "float32", lambda x: 2 ** x,
     [0.176777, 0.5, 1.0, 2.828427, 8.0]),
    ("_npi_rpower_scalar", _I, "float64", lambda x: 2 ** x,
     [0.015625, 0.125, 1.0, 16.0, 512.0]),
    ("_npi_mod_scalar", _F, "float32", lambda x: x % 2, [1.5, 1.0, 0.0, 1.5, 1.0]),
    ("_npi_mod_scalar", _F, "float32", lambda x: x % -2, [-0.5, -1.0, 0.0, -0.5, -1.0]),
    ("_npi_mod_scalar", _I, "int32", lambda x: x % 4, [2, 1, 0, 0, 1]),
    ("_npi_mod_scalar", _I, "float64", lambda x: x % 2.5, [1.5, 2.0, 0.0, 1.5, 1.5]),
    ("_npi_rmod_scalar", [1.5, 2.0, 4.0], "float32", lambda x: 7.5 % x, [0.0, 1.5, 3.5]),
    ("_npi_rmod_scalar", [4, 9, -2], "float64", lambda x: 7 % x, [3.0, 7.0, -1.0]),
    ("_npi_add_scalar", [True, False], "int64", lambda x: x + 2, [3, 2]),
    ("_npi_multiply_scalar", [True, False], "float64", lambda x: x * 2.5, [2.5, 0.0]),
    ("_npi_add_scalar", _I, "float64", lambda x: x + 2.5, [-3.5, -0.5, 2.5, 6.5, 11.5]),
    ("_npi_true_divide_scalar", _I, "float32", lambda x: x / 2.5,
     [-2.4, -1.2, 0.0, 1.6, 3.6]),
    ("_npi_bitwise_and_scalar", _I, "int32", lambda x: S.bitwise_and(x, 5), [0, 5, 0, 4, 1]),
    ("_npi_bitwise_or_scalar", _I, "int32", lambda x: S.bitwise_or(x, 5), [-1, -3, 5, 5, 13]),
    ("_npi_bitwise_xor_scalar", _I, "int32", lambda x: S.bitwise_xor(x, 5),
     [-1, -8, 5, 1, 12]),
    ("_npi_copysign_scalar", _F, "float32", lambda x: S.copysign(x, -1.0),
     [-2.5, -1.0, -0.0, -1.5, -3.0]),
    ("_npi_copysign_scalar", _I, "int32", lambda x: S.copysign(x, -1), [-6, -3, 0, -4, -9]),
    ("_npi_copysign_scalar", [-6, 4], "float64", lambda x: S.copysign(x, -1.5), [-6.0, -4.0]),
    ("_npi_rcopysign_scalar", _F, "float32", lambda x: S.copysign(2.0, x),
     [-2.0, -2.0, 2.0, 2.0, 2.0]),
    ("_npi_rcopysign_scalar", [-6, 4], "float64", lambda x: S.copysign(-2, x), [-2.0, 2.0]),
    ("_npi_lcm_scalar", _I, "int32", lambda x: S.lcm(x, 4), [12, 12, 0, 4, 36]),
    ("_npi_ldexp_scalar", _F, "float32", lambda x: S.ldexp(x, 2), [-10.0, -4.0, 0.0, 6.0, 12.0]),
    ("_npi_ldexp_scalar", _I, "int32", lambda x: S.ldexp(x, 2), [-24, -12, 0, 16, 36]),
    ("_npi_ldexp_scalar", [-6, 4], "float64", lambda x: S.ldexp(x, 1.5),
     [-16.970563, 11.313708]),
    ("_npi_rldexp_scalar", [0, 4, 9], "float64", lambda x: S.ldexp(3.0, x),
     [3.0, 48.0, 1536.0]),
]


@pytest.mark.parametrize("op,data,dtype,expr,want", SCALAR_OPS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(SCALAR_OPS)])
def test_scalar_operators_match_mxnet(op, data, dtype, expr, want):
    """The _npi_*_scalar operators mx.sym.np emits for an array and a Python scalar: result
    values and dtypes of real MXNet 1.9.1 (NumpyBinaryScalarType: a float scalar on an
    integer array gives float64, a bool array int64/float64; copysign and ldexp keep an
    integer array's dtype; true_divide gives float32)."""
    in_dtype = {"bool": "bool"}.get(str(onp.array(data).dtype), "int32")
    if isinstance(data[0], float):
        in_dtype = "float32"
    sym = expr(_var("x"))
    assert _op_of(sym)[0] == op
    out = sym.eval(x=np_array(onp.array(data, dtype=in_dtype)))[0].asnumpy()
    assert out.dtype == onp.dtype(dtype)
    if out.dtype == onp.bool_:
        onp.testing.assert_array_equal(out, want)
    else:
        onp.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def test_pinv_scalar_rcond_matches_mxnet():
    """_npi_pinv_scalar_rcond: singular values below rcond * the largest are dropped."""
    sym = S.linalg.pinv(_var("a"), rcond=0.1)
    assert _op_of(sym) == ("_npi_pinv_scalar_rcond", {"hermitian": "False", "rcond": "0.1"})
    a = onp.array([[1.0, 2.0], [2.0, 4.0], [0.0, 1.0]], dtype="float32")
    onp.testing.assert_allclose(_run(sym, a=a)[0],
                                [[0.03753, 0.075061, 0.015129], [0.078087, 0.156174, 0.031479]],
                                rtol=1e-4)
    b = onp.diag([3.0, 1e-3]).astype("float32")
    out = _run(S.linalg.pinv(_var("a"), rcond=0.01), a=b)[0]
    onp.testing.assert_allclose(out, [[1 / 3, 0.0], [0.0, 0.0]], rtol=1e-6, atol=1e-7)
    onp.testing.assert_allclose(_run(S.linalg.pinv(_var("a"), rcond=1e-6), a=b)[0],
                                [[1 / 3, 0.0], [0.0, 1000.0]], rtol=1e-4)

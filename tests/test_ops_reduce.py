"""Reduction and sorting operators vs NumPy (values from real MXNet 1.9.1 where noted)."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from helpers import check_op

RNG = np.random.RandomState(0)
X = RNG.uniform(-1, 1, (2, 3, 4)).astype(np.float32)


def _np_reduce(fn, axis=None, keepdims=False, exclude=False):
    def run(x):
        ax = axis
        if exclude:
            given = (axis,) if isinstance(axis, int) else axis
            ax = tuple(i for i in range(x.ndim) if i not in [g % x.ndim for g in given])
        out = fn(x, axis=ax, keepdims=keepdims)
        return np.asarray(out).reshape(1) if np.ndim(out) == 0 else out
    return run


@pytest.mark.parametrize("op,fn", [("sum", np.sum), ("mean", np.mean), ("prod", np.prod),
                                   ("max", np.max), ("min", np.min), ("nansum", np.nansum),
                                   ("nanprod", np.nanprod)])
@pytest.mark.parametrize("attrs", [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True},
                                   {"axis": -1}, {"axis": (0, 2), "exclude": True},
                                   {"keepdims": True}])
def test_reduce(op, fn, attrs):
    check_op(op, [X], attrs, _np_reduce(fn, **attrs))


def test_reduce_full_is_shape_1_and_aliases():
    x = mx.nd.array(X)
    assert mx.nd.sum(x).shape == (1,)
    assert mx.nd.sum(x, axis=()).shape == (1,)
    assert mx.nd.sum(x, keepdims=True).shape == (1, 1, 1)
    np.testing.assert_allclose(mx.nd.sum_axis(x, axis=1).asnumpy(), X.sum(1), rtol=1e-6)
    np.testing.assert_allclose(mx.nd.max_axis(x, axis=0).asnumpy(), X.max(0))
    np.testing.assert_allclose(mx.nd.min_axis(x, axis=2).asnumpy(), X.min(2))
    # exclude of every axis reduces nothing
    assert mx.nd.sum(x, axis=(0, 1, 2), exclude=True).shape == X.shape
    np.testing.assert_allclose(x.sum(axis=1).asnumpy(), X.sum(1), rtol=1e-6)


def test_reduce_int_and_nan():
    xi = mx.nd.array([[1, 2, 3], [4, 5, 7]], dtype="int32")
    # MXNet: integer mean truncates and keeps int32
    out = mx.nd.mean(xi, axis=1)
    assert out.dtype == np.int32 and out.asnumpy().tolist() == [2, 5]
    assert mx.nd.sum(xi).dtype == np.int32 and mx.nd.prod(xi, axis=1).asnumpy().tolist() == [6, 140]
    xn = np.array([[1, np.nan, 3], [np.nan, np.nan, 2]], np.float32)
    np.testing.assert_allclose(mx.nd.nansum(mx.nd.array(xn), axis=1).asnumpy(), [4, 2])
    np.testing.assert_allclose(mx.nd.nanprod(mx.nd.array(xn), axis=1).asnumpy(), [3, 2])
    a = mx.nd.array(xn)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.nanprod(a, axis=1)
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [[3, 0, 1], [0, 0, 1]])  # MXNet 1.9.1
    assert mx.nd.sum(mx.nd.array(X, dtype="float16")).dtype == np.float16


@pytest.mark.parametrize("op,expected", [
    ("max", [[0, 1, 1], [10, 10, 0]]), ("min", [[1, 0, 0], [0, 0, 10]])])
def test_max_min_tie_gradient(op, expected):
    # MXNet 1.9.1: every tied extreme element receives the full head gradient.
    a = mx.nd.array([[1, 3, 3], [2, 2, 0]])
    a.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, op)(a, axis=1)
    y.backward(mx.nd.array([1, 10]))
    np.testing.assert_allclose(a.grad.asnumpy(), expected)
    a = mx.nd.array([[1, 3, 3], [2, 2, 0]])
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.max(a)
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [[0, 1, 1], [0, 0, 0]])


@pytest.mark.parametrize("attrs", [{}, {"ord": 1}, {"axis": 1}, {"ord": 1, "axis": (0, 2)},
                                   {"axis": -1, "keepdims": True}])
def test_norm(attrs):
    ord_ = attrs.get("ord", 2)
    axis = attrs.get("axis")
    fn = (lambda x, axis, keepdims: np.sqrt((x * x).sum(axis=axis, keepdims=keepdims))) \
        if ord_ == 2 else (lambda x, axis, keepdims: np.abs(x).sum(axis=axis, keepdims=keepdims))
    check_op("norm", [X], attrs, _np_reduce(fn, axis, attrs.get("keepdims", False)),
             rtol=1e-5)


def test_norm_dtype_and_errors():
    x = mx.nd.array(X)
    assert mx.nd.norm(x, out_dtype="float64").dtype == np.float64
    assert mx.nd.norm(x.astype("float16")).dtype == np.float16
    with pytest.raises(MXNetError, match="norm"):
        mx.nd.norm(x, ord=3)
    with pytest.raises(MXNetError, match="sum.*axis 3"):
        mx.nd.sum(x, axis=3)
    with pytest.raises(MXNetError, match="duplicates"):
        mx.nd.sum(x, axis=(0, 0))


@pytest.mark.parametrize("op,fn", [("argmax", np.argmax), ("argmin", np.argmin)])
def test_argmax_argmin(op, fn):
    check_op(op, [X], {"axis": 1}, lambda x: fn(x, axis=1), grad=False, dtype_out=np.float32)
    check_op(op, [X], {"axis": -1, "keepdims": True},
             lambda x: np.expand_dims(fn(x, axis=-1), -1), grad=False)
    check_op(op, [X], {}, lambda x: np.array([fn(x)]), grad=False)
    out = getattr(mx.nd, op)(mx.nd.array(X), keepdims=True)
    assert out.shape == (1, 1, 1)
    xi = mx.nd.array([[1, 3, 3], [2, 2, 0]], dtype="int32")
    res = getattr(mx.nd, op)(xi, axis=1)
    assert res.dtype == np.int32  # MXNet: indices in the input dtype
    assert res.asnumpy().tolist() == ([1, 0] if op == "argmax" else [0, 2])  # first tie


def test_argmax_channel():
    check_op("argmax_channel", [X], {}, lambda x: np.argmax(x, axis=1), grad=False)


T = np.array([[1, 3, 2, 5], [4, 4, 0, -1]], np.float32)


def test_sort_argsort():
    check_op("sort", [X], {}, lambda x: np.sort(x, axis=-1))
    check_op("sort", [X], {"axis": 0, "is_ascend": False}, lambda x: -np.sort(-x, axis=0))
    check_op("sort", [X], {"axis": None}, lambda x: np.sort(x.reshape(-1)))
    check_op("argsort", [T], {}, [[[0, 2, 1, 3], [3, 2, 0, 1]]], grad=False,
             dtype_out=np.float32)
    # MXNet 1.9.1: descending keeps ties in order; axis=None flattens
    check_op("argsort", [T], {"is_ascend": False}, [[[3, 1, 2, 0], [0, 1, 2, 3]]],
             grad=False)
    check_op("argsort", [T], {"axis": None, "dtype": "int32"}, [[7, 6, 0, 2, 1, 4, 5, 3]],
             grad=False, dtype_out=np.int32)


def test_topk():
    check_op("topk", [T], {}, [[[3], [0]]], grad=False, dtype_out=np.float32)
    outs = check_op("topk", [T], {"k": 2, "ret_typ": "both"},
                    [[[5, 3], [4, 4]], [[3, 1], [0, 1]]], grad=False)
    assert len(outs) == 2
    check_op("topk", [T], {"k": 2, "ret_typ": "mask"}, [[[0, 1, 0, 1], [1, 1, 0, 0]]],
             grad=False)
    check_op("topk", [T], {"k": 1, "axis": 0, "is_ascend": True, "ret_typ": "both"},
             [[[1, 3, 0, -1]], [[0, 0, 1, 1]]], grad=False)
    check_op("topk", [T], {"k": 3, "axis": None, "ret_typ": "both"},
             [[5, 4, 4], [3, 4, 5]], grad=False)
    check_op("topk", [T], {"k": 0, "ret_typ": "value"}, [-np.sort(-T, axis=-1)], grad=False)
    check_op("topk", [X], {"k": 2, "ret_typ": "value", "axis": 1},
             lambda x: -np.sort(-x, axis=1)[:, :2])
    out = mx.nd.topk(mx.nd.array(T), k=2, dtype="int32")
    assert out.dtype == np.int32
    with pytest.raises(MXNetError, match="topk"):
        mx.nd.topk(mx.nd.array(T), k=5)


@pytest.mark.parametrize("ret_typ", ["value", "indices", "both", "mask"])
@pytest.mark.parametrize("is_ascend", [False, True])
def test_topk_small_k_of_many(ret_typ, is_ascend):
    # k * 8 <= n takes a partial sort (as MXNet's CPU kernel does): same results
    x = RNG.permutation(64 * 3).astype(np.float32).reshape(3, 64)
    order = np.argsort(x if is_ascend else -x, axis=1, kind="stable")[:, :5]
    values = np.take_along_axis(x, order, axis=1)
    mask = np.zeros_like(x)
    np.put_along_axis(mask, order, 1, axis=1)
    want = {"value": [values], "indices": [order], "both": [values, order],
            "mask": [mask]}[ret_typ]
    check_op("topk", [x], {"k": 5, "ret_typ": ret_typ, "is_ascend": is_ascend}, want,
             grad=ret_typ == "value")


def test_topk_gradient():
    a = mx.nd.array(T)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.topk(a, k=2, ret_typ="value")
    y.backward(mx.nd.array([[1, 2], [3, 4]]))
    np.testing.assert_allclose(a.grad.asnumpy(), [[0, 2, 0, 1], [3, 4, 0, 0]])  # MXNet


D = np.array([[1, 2], [3, 4], [5, 6]], np.float32)


def test_pick():
    idx = np.array([0, 1, 5], np.float32)
    check_op("pick", [D, idx], {}, [[1, 4, 6]], grad=[0])
    check_op("pick", [D, np.array([0, -1, 5], np.float32)], {"mode": "wrap"}, [[1, 4, 6]],
             grad=[0])
    check_op("pick", [D, np.array([-1, 1, 0], np.float32)], {}, [[1, 4, 5]], grad=[0])
    check_op("pick", [D, np.array([0.7, 1.2, 1.9], np.float32)], {}, [[1, 4, 6]], grad=[0])
    check_op("pick", [D, np.array([0, 2], np.float32)], {"axis": 0, "keepdims": True},
             [[[1, 6]]], grad=[0])
    check_op("pick", [X, RNG.randint(0, 3, (2, 4)).astype(np.float32)], {"axis": 1},
             lambda x, i: np.take_along_axis(x, i.astype(int)[:, None], 1)[:, 0], grad=[0])
    with pytest.raises(MXNetError, match="pick"):
        mx.nd.pick(mx.nd.array(D), mx.nd.array([0]), axis=None)


def test_hidden_output_names():
    # MXNet 1.9.1: sort and topk('value'/'both') keep a hidden indices output
    x = mx.sym.var("x")
    assert mx.sym.sort(x, name="s").list_outputs() == ["s_output0"]
    assert mx.sym.topk(x, ret_typ="value", name="t").list_outputs() == ["t_output0"]
    assert mx.sym.topk(x, name="t").list_outputs() == ["t_output"]
    assert mx.sym.topk(x, ret_typ="both", name="t").list_outputs() == ["t_output0",
                                                                       "t_output1"]


# ---------------------------------------------------------------------- moments, histogram
@pytest.mark.parametrize("axes,keepdims", [((1,), False), ((0, 2), True), ((0, 1, 2), False)])
def test_moments(axes, keepdims):
    def expected(x):
        mean, var = x.mean(axis=axes, keepdims=keepdims), x.var(axis=axes, keepdims=keepdims)
        return [np.asarray(m).reshape(-1) if np.ndim(m) == 0 else m for m in (mean, var)]
    check_op("moments", [X], {"axes": axes, "keepdims": keepdims}, expected=expected)


def test_moments_int_and_errors():
    # recorded with MXNet 1.9.1: integer moments truncate
    mean, var = mx.nd.moments(mx.nd.array(np.arange(6).reshape(2, 3), dtype="int32"), axes=1)
    assert mean.asnumpy().tolist() == [1, 4] and var.asnumpy().tolist() == [0, 0]
    assert mx.sym.moments(mx.sym.var("d"), axes=(1,)).list_outputs() == [
        "moments0_output0", "moments0_output1"]
    with pytest.raises(MXNetError, match="Empty axes"):
        mx.nd.moments(mx.nd.ones((2, 3)))


def test_histogram():
    data = mx.nd.array([0, 1, 2, 2, 3, 4.0, 7, -1])
    # values recorded with MXNet 1.9.1
    counts, edges = mx.nd.histogram(data, bins=5, range=(0, 5))
    assert counts.dtype == np.int64 and counts.asnumpy().tolist() == [1, 1, 2, 1, 1]
    np.testing.assert_allclose(edges.asnumpy(), [0, 1, 2, 3, 4, 5])
    counts, edges = mx.nd.histogram(data, bins=mx.nd.array([0, 2.1, 3]))
    assert counts.asnumpy().tolist() == [4, 1]
    np.testing.assert_allclose(edges.asnumpy(), [0, 2.1, 3], rtol=1e-6)
    counts, edges = mx.nd.histogram(mx.nd.array([1, 1, 1.0]), bins=3, range=(1, 1))
    assert counts.asnumpy().tolist() == [0, 3, 0]
    np.testing.assert_allclose(edges.asnumpy(), [0.5, 0.8333333, 1.1666666, 1.5])
    x = RNG.uniform(-3, 3, (4, 5, 6))
    for bins, rng in ((7, (-2.5, 2.5)), (np.array([-1.0, 0.5, 2.0, 4.5]), None)):
        arg = mx.nd.array(bins, dtype=np.float64) if rng is None else bins
        got = mx.nd.histogram(mx.nd.array(x, dtype=np.float64), bins=arg, range=rng)
        want = np.histogram(x, bins, range=rng)
        assert got[0].asnumpy().tolist() == want[0].tolist()
        np.testing.assert_allclose(got[1].asnumpy(), want[1])
    with pytest.raises(ValueError):
        mx.nd.histogram(data, bins=[0, 1])


def test_histogram_symbol():
    data = mx.sym.var("data")
    sym = mx.sym.histogram(data, bins=4, range=(0, 1))
    assert sym.list_outputs() == ["_histogram0_output0", "_histogram0_output1"]
    assert sym.infer_shape(data=(3, 4))[1] == [(4,), (5,)]
    assert sym.infer_type(data="float64")[1] == [np.int64, np.float64]
    exe = sym.bind(mx.cpu(), {"data": mx.nd.array([[0.1, 0.3, 0.35, 0.9]])})
    assert exe.forward()[0].asnumpy().tolist() == [1, 2, 0, 1]
    sym = mx.sym.histogram(data, bins=mx.sym.var("bins"))
    assert sym.list_arguments() == ["data", "bins"]
    assert sym.infer_shape(data=(3, 4), bins=(6,))[1] == [(5,), (6,)]
    with pytest.raises(ValueError, match="null range"):
        mx.sym.histogram(data, bins=4)


def test_square_sum_reduces_squares():
    x = np.array([[1., -2., 3.], [0.5, 4., -1.]], dtype=np.float32)
    out = mx.nd._internal._square_sum(mx.nd.array(x), axis=1, keepdims=True)
    np.testing.assert_allclose(out.asnumpy(), (x * x).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(mx.nd._internal._square_sum(mx.nd.array(x)).asnumpy(),
                               [(x * x).sum()])
    v = mx.sym.Variable("v")
    sym = mx.sym._internal._square_sum(data=v, axis=0)
    assert sym.infer_shape(v=(2, 3))[1] == [(3,)]
    exe = sym.simple_bind(mx.cpu(), v=(2, 3))
    exe.forward(is_train=True, v=mx.nd.array(x))
    exe.backward(mx.nd.ones((3,)))
    np.testing.assert_allclose(exe.grad_dict["v"].asnumpy(), 2 * x)


def test_norm_inference_is_declared_not_run_on_meta_tensors():
    # torch's meta vector_norm imports torch._dynamo on its first call (about 1 s)
    import subprocess
    import sys
    code = ("import sys, mxtorch as mx\n"
            "x = mx.sym.Variable('x')\n"
            "s = mx.sym.norm(x, axis=(0, 2), keepdims=True, out_dtype='float64')\n"
            "assert s.infer_shape(x=(2, 3, 4))[1] == [(1, 3, 1)]\n"
            "assert s.infer_type(x='float32')[1][0].__name__ == 'float64'\n"
            "assert mx.sym.norm(x).infer_shape(x=(2, 3))[1] == [(1,)]\n"
            "print('torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
    with pytest.raises(mx.base.MXNetError, match="only ord=1 and ord=2"):
        mx.sym.norm(mx.sym.Variable("x"), ord=3).infer_shape(x=(2, 3))

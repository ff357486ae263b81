"""mx.np creation, manipulation, reduction, linalg, random and autograd vs NumPy."""
import numpy as onp
import pytest

import mxtorch as mx
from mxtorch import autograd
from mxtorch import numpy as np

A = onp.arange(24, dtype="float32").reshape(2, 3, 4) / 7
M = onp.array([[4., 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]], dtype="float32")


def _close(got, want, rtol=1e-5, atol=1e-5, dtype=True):
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, rtol, atol, dtype)
        return
    g = got.asnumpy() if isinstance(got, np.ndarray) else onp.asarray(got)
    want = onp.asarray(want)
    assert g.shape == want.shape, (g.shape, want.shape)
    if dtype:
        assert g.dtype == want.dtype, (g.dtype, want.dtype)
    onp.testing.assert_allclose(g, want, rtol=rtol, atol=atol)


CREATION = [
    (lambda m: m.zeros((2, 0)), {}), (lambda m: m.ones(()), {}),
    (lambda m: m.full((2, 2), 3), {}), (lambda m: m.eye(3, 4, 1), {}),
    (lambda m: m.identity(2), {}), (lambda m: m.linspace(0, 1, 5), {}),
    (lambda m: m.logspace(0, 2, 3), {}), (lambda m: m.arange(2, 10, 3), {}),
    (lambda m: m.tri(3), {}), (lambda m: m.empty((2, 3)).shape, {"raw": True}),
]


@pytest.mark.parametrize("i", range(len(CREATION)))
def test_creation(i):
    fn, opts = CREATION[i]
    got, want = fn(np), fn(onp)
    if opts.get("raw"):
        assert got == want
        return
    _close(got, onp.asarray(want).astype("float32"))


def test_like_and_grid():
    x = np.array(A)
    _close(np.zeros_like(x), onp.zeros_like(A))
    _close(np.ones_like(np.array([1, 2], dtype="int32")), onp.ones(2, "int32"))
    _close(np.full_like(x, 2), onp.full_like(A, 2))
    assert np.empty_like(x).shape == A.shape
    _close(np.meshgrid(np.array([1., 2]), np.array([3., 4, 5])),
           onp.meshgrid(onp.array([1., 2], "float32"), onp.array([3., 4, 5], "float32")))
    _close(np.tril(np.array(M)), onp.tril(M))
    _close(np.triu(np.array(M), 1), onp.triu(M, 1))


MANIP = [
    lambda m, a: m.reshape(a, (4, -1)), lambda m, a: m.transpose(a, (2, 0, 1)),
    lambda m, a: m.swapaxes(a, 0, 2), lambda m, a: m.moveaxis(a, 0, -1),
    lambda m, a: m.expand_dims(a, 1), lambda m, a: m.squeeze(a[:1]),
    lambda m, a: m.concatenate([a, a], axis=1), lambda m, a: m.stack([a, a], 1),
    lambda m, a: m.vstack([a[0], a[1]]), lambda m, a: m.hstack([a[0], a[1]]),
    lambda m, a: m.dstack([a[0], a[1]]), lambda m, a: m.column_stack([a[0, 0], a[0, 1]]),
    lambda m, a: m.split(a, 2, axis=2), lambda m, a: m.array_split(a, 3, axis=2),
    lambda m, a: m.hsplit(a, 3), lambda m, a: m.vsplit(a, 2),
    lambda m, a: m.tile(a, (1, 2)), lambda m, a: m.repeat(a, 2, axis=1),
    lambda m, a: m.flip(a, 1), lambda m, a: m.fliplr(a), lambda m, a: m.flipud(a),
    lambda m, a: m.roll(a, 2), lambda m, a: m.roll(a, -1, 2), lambda m, a: m.rot90(a[0]),
    lambda m, a: m.broadcast_to(a[0, 0], (2, 4)),
    lambda m, a: m.broadcast_arrays(a[0], a[:, :1]),
    lambda m, a: m.ravel(a), lambda m, a: m.clip(a, 0.5, 2.0), lambda m, a: m.where(a > 1, a, 0.),
    lambda m, a: m.pad(a, 1), lambda m, a: m.take(a, m.array([0, 2]) if m is np else [0, 2], 1),
    lambda m, a: m.diag(a[0]), lambda m, a: m.diagonal(a, 0, 1, 2),
    lambda m, a: m.atleast_1d(a[0, 0, 0]), lambda m, a: m.atleast_2d(a[0, 0]),
    lambda m, a: m.atleast_3d(a[0]), lambda m, a: m.append(a, a, 0),
    lambda m, a: m.insert(a[0, 0], 1, 5.), lambda m, a: m.delete(a, 1, 1),
    lambda m, a: m.unique(m.floor(a)), lambda m, a: m.nonzero(a > 2),
    lambda m, a: m.argwhere(a > 2),
    lambda m, a: m.diff(a), lambda m, a: m.concatenate([a[:, :0], a[:, :1]], axis=1),
]


@pytest.mark.parametrize("i", range(len(MANIP)))
def test_manipulation(i):
    fn = MANIP[i]
    got, want = fn(np, np.array(A)), fn(onp, A)
    if isinstance(want, (list, tuple)):
        _close(list(got), list(want))
    else:
        _close(got, want)


REDUCE = ["sum", "prod", "mean", "std", "var", "min", "max", "amin", "amax", "average",
          "cumsum", "cumprod", "argmin", "argmax", "sort", "argsort", "median", "all", "any"]


@pytest.mark.parametrize("name", REDUCE)
@pytest.mark.parametrize("axis", [None, 1])
def test_reduce(name, axis):
    got = getattr(np, name)(np.array(A), axis=axis)
    want = getattr(onp, name)(A, axis=axis)
    if name in ("argsort", "argmin", "argmax"):
        want = want.astype("int64")
    if name in ("cumsum", "cumprod", "sort", "argsort") and axis is None:
        want = onp.asarray(want).reshape(-1)
    _close(got, onp.asarray(want).astype(onp.asarray(want).dtype), rtol=1e-4)


def test_reduce_extras():
    x = np.array(A)
    assert np.sum(x, axis=(0, 2), keepdims=True).shape == (1, 3, 1)
    _close(np.zeros((0, 3)).sum(axis=0), onp.zeros(3, "float32"))
    _close(np.percentile(x, 50), onp.percentile(A, 50).astype("float32"))
    _close(np.quantile(x, 0.25, axis=1), onp.quantile(A, 0.25, axis=1).astype("float32"))
    assert np.count_nonzero(np.array([1., 0, 2])) == 2
    _close(np.bincount(np.array([1, 1, 3], dtype="int64")), onp.array([0, 2, 0, 1]))
    h, e = np.histogram(x, bins=3)
    hw, ew = onp.histogram(A, bins=3)
    _close(h, hw)
    _close(e, ew.astype("float32"))
    _close(np.unique(np.array([3., 1, 3]), return_counts=True)[1], onp.array([1, 2]))
    with pytest.raises(ValueError):
        np.max(np.zeros((0,)))
    _close(x.sum(axis=0), A.sum(axis=0))
    _close(x.mean(), onp.float32(A.mean()))


LINALG = [
    ("inv", (M,)), ("det", (M,)), ("cholesky", (M,)), ("pinv", (M,)),
    ("eigvalsh", (M,)), ("matrix_rank", (M,)), ("norm", (M,)), ("slogdet", (M,)),
    ("solve", (M, M[0])), ("matrix_power", (M, 3)), ("tensorinv", (M, 1)),
]


@pytest.mark.parametrize("name, args", LINALG)
def test_linalg(name, args):
    margs = [np.array(a) if isinstance(a, onp.ndarray) else a for a in args]
    got, want = getattr(np.linalg, name)(*margs), getattr(onp.linalg, name)(*args)
    if isinstance(want, tuple):
        _close(list(got), [onp.asarray(w).astype("float32") for w in want], 1e-4, 1e-4)
    else:
        _close(got, onp.asarray(want).astype(onp.asarray(got.asnumpy()).dtype), 1e-4, 1e-4)


def test_linalg_decompositions():
    m = np.array(M)
    u, s, vh = np.linalg.svd(m)
    _close(np.matmul(u * s, vh), M, 1e-4, 1e-4)
    q, r = np.linalg.qr(m)
    _close(q @ r, M, 1e-4, 1e-4)
    w, v = np.linalg.eigh(m)
    _close(w, onp.linalg.eigh(M)[0], 1e-4, 1e-4)
    _close(np.sort(np.linalg.eigvals(m)), onp.sort(onp.linalg.eigvals(M)), 1e-4, 1e-4)
    x = np.linalg.lstsq(m, np.array(M[0]))[0]
    _close(x, onp.linalg.lstsq(M, M[0], rcond=None)[0], 1e-4, 1e-4)
    _close(np.linalg.norm(m, axis=1), onp.linalg.norm(M, axis=1), 1e-5, 1e-5)
    _close(np.linalg.multi_dot([m, m, m]), M @ M @ M, 1e-4, 1e-3)
    b = onp.ones((3, 3), "float32")
    _close(np.linalg.tensorsolve(m, np.array(b[0])), onp.linalg.tensorsolve(M, b[0]), 1e-4, 1e-4)


RANDOM = [("uniform", (0, 1)), ("normal", (0, 1)), ("lognormal", (0, 1)), ("gamma", (2., 1.)),
          ("beta", (2., 3.)), ("exponential", (1.,)), ("laplace", (0., 1.)),
          ("gumbel", (0., 1.)), ("logistic", (0., 1.)), ("pareto", (2.,)), ("power", (2.,)),
          ("rayleigh", (1.,)), ("weibull", (2.,)), ("chisquare", (3.,)), ("f", (3., 4.))]


@pytest.mark.parametrize("name, args", RANDOM)
def test_random_shapes(name, args):
    np.random.seed(0)
    x = getattr(np.random, name)(*args, size=(2000,))
    assert x.shape == (2000,) and x.dtype == onp.float32
    assert getattr(np.random, name)(*args).shape == ()
    ref = getattr(onp.random.RandomState(0), name)(*args, size=200000)
    assert abs(float(x.mean()) - ref.mean()) < 0.15 * (1 + abs(ref.mean()))


def test_random_discrete():
    np.random.seed(1)
    assert np.random.randint(0, 5, size=(3,)).dtype == onp.int64
    c = np.random.choice(5, size=(4,), replace=False)
    assert c.dtype == onp.int64 and len(set(c.asnumpy().tolist())) == 4
    assert np.random.multinomial(5, [0.5, 0.5]).asnumpy().sum() == 5
    assert np.random.rand(2, 3).shape == (2, 3) and np.random.randn(4).shape == (4,)
    assert np.random.uniform(np.zeros((2,)), 1).shape == (2,)
    x = np.arange(10)
    np.random.shuffle(x)
    assert sorted(x.asnumpy().tolist()) == list(range(10))
    mvn = np.random.multivariate_normal(np.zeros(2), np.array(onp.eye(2, dtype="float32")),
                                        size=(5,))
    assert mvn.shape == (5, 2)


@pytest.mark.parametrize("name", ["uniform", "normal", "randint", "choice", "exponential"])
def test_random_rejects_unknown_keywords(name):
    # MXNet's samplers have fixed signatures: shape= is a TypeError (size= is the name)
    with pytest.raises(TypeError, match="shape"):
        getattr(np.random, name)(shape=(2,))
    assert np.random.normal(loc=1.0, scale=0.5, size=3).shape == (3,)
    assert np.random.gamma(shape=2.0, size=2).shape == (2,)


def test_reshape_errors():
    a = np.ones((10, 10))
    assert a.reshape((-1,)).shape == (100,) and np.reshape(a, (4, -1)).shape == (4, 25)
    assert np.zeros((0, 3)).reshape((0, 5)).shape == (0, 5)
    # MXNet raises MXNetError (torch's RuntimeError before)
    for shape in [(1,), (3, -1), (-1, -1), (-2,)]:
        with pytest.raises(mx.base.MXNetError, match="reshape"):
            a.reshape(shape)
        with pytest.raises(mx.base.MXNetError, match="reshape"):
            np.reshape(a, shape)


def test_autograd_through_np():
    x = np.array([[1., 2.], [3., 4.]])
    x.attach_grad()
    with autograd.record():
        y = np.sum(np.exp(x) * x[0] + np.matmul(x, x))
    y.backward()
    xn = x.asnumpy()
    g = onp.exp(xn) * xn[0] + onp.ones((2, 2)) @ xn.T + xn.T @ onp.ones((2, 2))
    g[0] += (onp.exp(xn) * 1).sum(0)
    _close(x.grad, g.astype("float32"), 1e-4, 1e-4)
    assert isinstance(x.grad, np.ndarray)
    z = np.ones((2,))
    z2 = z * 2
    assert not z2._t.requires_grad

"""Random sampling operators and the mx.nd.random wrappers: distributions, shapes, seeding."""
import json
import os

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from mxtorch.ops import registry

N = 200_000


def _stats(arr):
    a = arr.asnumpy().astype(np.float64)
    return a.mean(), a.var()


# (wrapper, kwargs, expected mean, expected variance)
SCALAR_CASES = [
    ("uniform", dict(low=-1.0, high=3.0), 1.0, 16 / 12),
    ("normal", dict(loc=2.0, scale=3.0), 2.0, 9.0),
    ("gamma", dict(alpha=2.0, beta=3.0), 6.0, 18.0),
    ("exponential", dict(scale=2.0), 2.0, 4.0),
    ("poisson", dict(lam=4.0), 4.0, 4.0),
    # MXNet: mean k(1-p)/p, variance k(1-p)/p^2 (oracle: 12.0068, 60.09)
    ("negative_binomial", dict(k=3, p=0.2), 12.0, 60.0),
    # MXNet: mean mu, variance mu + alpha*mu^2 (oracle: 2.985, 7.38)
    ("generalized_negative_binomial", dict(mu=3.0, alpha=0.5), 3.0, 7.5),
    ("generalized_negative_binomial", dict(mu=3.0, alpha=0.0), 3.0, 3.0),
]


@pytest.mark.parametrize("name,kw,mean,var", SCALAR_CASES)
def test_scalar_distribution_moments(name, kw, mean, var):
    mx.random.seed(42)
    x = getattr(mx.nd.random, name)(shape=(N,), **kw)
    assert x.shape == (N,) and x.dtype == np.float32
    m, v = _stats(x)
    assert abs(m - mean) < 5 * np.sqrt(var / N) + 1e-3
    assert abs(v - var) / var < 0.05


def test_randint_range_and_dtype():
    mx.random.seed(0)
    x = mx.nd.random.randint(-3, 5, shape=(10000,))
    assert x.dtype == np.int32
    a = x.asnumpy()
    assert a.min() == -3 and a.max() == 4
    assert mx.nd.random.randint(0, 5, shape=(2,), dtype="int64").dtype == np.int64
    assert mx.nd.random.randint(0, 5).shape == (1,)
    np.testing.assert_array_equal(mx.nd.random.randint(7, 7, shape=(3,)).asnumpy(), [7] * 3)


@pytest.mark.parametrize("name,params", [
    ("uniform", ([0.0, 10.0], [1.0, 12.0])),
    ("normal", ([0.0, 10.0], [1.0, 2.0])),
    ("gamma", ([1.0, 5.0], [2.0, 0.5])),
    ("exponential", ([1.0, 0.25],)),  # wrapper takes scale = 1/lam
    ("poisson", ([1.0, 20.0],)),
])
def test_sample_forms_per_element(name, params):
    mx.random.seed(7)
    arrs = [mx.nd.array(p) for p in params]
    x = getattr(mx.nd.random, name)(*arrs, shape=(N // 10,))
    assert x.shape == (2, N // 10) and x.dtype == np.float32
    a = x.asnumpy().astype(np.float64)
    p = [np.array(q) for q in params]
    mean = {"uniform": lambda: (p[0] + p[1]) / 2, "normal": lambda: p[0],
            "gamma": lambda: p[0] * p[1], "exponential": lambda: p[0],
            "poisson": lambda: p[0]}[name]()
    np.testing.assert_allclose(a.mean(axis=1), mean, rtol=0.03, atol=0.02)
    if name == "uniform":
        assert np.all((a >= p[0][:, None]) & (a < p[1][:, None]))


def test_sample_shapes_and_dtypes():
    # MXNet 1.9.1: output shape param.shape + shape; dtype float32 whatever the input dtype
    low = mx.nd.array(np.zeros((2, 2)), dtype="float64")
    high = mx.nd.array(np.ones((2, 2)), dtype="float64")
    assert mx.nd.random.uniform(low, high).shape == (2, 2)
    out = mx.nd.sample_uniform(low, high)
    assert out.dtype == np.float32
    out = mx.nd.random.uniform(low, high, shape=(3, 2), dtype="float16")
    assert out.shape == (2, 2, 3, 2) and out.dtype == np.float16
    assert mx.nd.random.poisson(mx.nd.array([2, 3], dtype="int32"), shape=2).shape == (2, 2)
    nb = mx.nd.random.negative_binomial(mx.nd.array([2, 3]), mx.nd.array([0.5, 0.5]), shape=4)
    gnb = mx.nd.random.generalized_negative_binomial(mx.nd.array([2, 3]),
                                                     mx.nd.array([0.5, 0.0]), shape=4)
    assert nb.shape == gnb.shape == (2, 4)
    assert np.all(nb.asnumpy() >= 0) and np.all(gnb.asnumpy() == np.round(gnb.asnumpy()))
    x64 = mx.nd.random.uniform(shape=(3,), dtype="float64")
    assert x64.dtype == np.float64
    assert mx.nd.random.normal(0, 1, 5).shape == (5,)
    assert mx.nd.random.randn(2, 3).shape == (2, 3)
    assert mx.nd.random.uniform().shape == (1,)


def test_like_forms():
    data = mx.nd.array(np.ones((2, 3)), dtype="float64")
    x = mx.nd.random.uniform_like(data, low=5, high=6)
    assert x.shape == (2, 3) and x.dtype == np.float64
    assert np.all((x.asnumpy() >= 5) & (x.asnumpy() < 6))
    p = mx.nd.random.poisson_like(mx.nd.array(np.ones(4), dtype="int32"))
    assert p.dtype == np.int32
    for name in ("normal", "gamma", "exponential", "negative_binomial",
                 "generalized_negative_binomial"):
        assert getattr(mx.nd.random, name + "_like")(data).shape == (2, 3)


def test_seed_reproducibility():
    def draw():
        return [mx.nd.random.uniform(shape=(5,)).asnumpy(),
                mx.nd.random.normal(mx.nd.array([0.0, 1.0]), mx.nd.array([1.0, 1.0]),
                                    shape=3).asnumpy(),
                mx.nd.random.gamma(2.0, 1.0, shape=(4,)).asnumpy(),
                mx.nd.random.poisson(3.0, shape=(4,)).asnumpy(),
                mx.nd.random.randint(0, 100, shape=(4,)).asnumpy(),
                mx.nd.random.shuffle(mx.nd.array(np.arange(10))).asnumpy()]
    mx.random.seed(128)
    a = draw()
    mx.random.seed(128)
    b = draw()
    mx.random.seed(129)
    c = draw()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0]) and not np.array_equal(a[1], c[1])
    mx.random.seed(5, ctx=mx.cpu())
    d = mx.random.uniform(shape=(3,)).asnumpy()
    mx.random.seed(5)
    np.testing.assert_array_equal(d, mx.random.uniform(shape=(3,)).asnumpy())


def test_multinomial():
    probs = np.array([[0.1, 0.6, 0.3], [0.8, 0.1, 0.1]], dtype=np.float32)
    mx.random.seed(3)
    s = mx.nd.random.multinomial(mx.nd.array(probs), shape=(N // 10,))
    assert s.shape == (2, N // 10) and s.dtype == np.int32
    freq = np.stack([np.bincount(r, minlength=3) for r in s.asnumpy()]) / (N // 10)
    np.testing.assert_allclose(freq, probs, atol=0.01)
    # MXNet 1.9.1: no shape -> one sample per row; a 1-D input gives shape (1,)
    assert mx.nd.random.multinomial(mx.nd.array(probs)).shape == (2,)
    one = mx.nd.sample_multinomial(mx.nd.array([0.1, 0.9]), get_prob=True)
    assert [o.shape for o in one] == [(1,), (1,)]
    f = mx.nd.random.multinomial(mx.nd.array(probs), dtype="float32")
    assert f.dtype == np.float32


def test_multinomial_get_prob_and_gradient():
    x = mx.nd.array([[0.2, 0.8]])
    x.attach_grad()
    with mx.autograd.record():
        s, logp = mx.nd.random.multinomial(x, shape=4, get_prob=True)
    np.testing.assert_allclose(logp.asnumpy(), np.log(np.array([0.2, 0.8])[s.asnumpy()]),
                               rtol=1e-6)
    logp.backward()
    counts = np.bincount(s.asnumpy().ravel(), minlength=2)
    # MXNet: d(log p_i)/dp_i = 1/p_i summed over the samples (oracle: [[0, 5]] for 4 x idx 1)
    np.testing.assert_allclose(x.grad.asnumpy(), [counts / np.array([0.2, 0.8])], rtol=1e-5)


def test_sample_gradient_is_zero():
    a = mx.nd.array([1.0, 2.0])
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.random.normal(a, a, shape=3)
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [0.0, 0.0])


def test_shuffle_is_permutation_of_rows():
    data = np.arange(20, dtype=np.float32).reshape(10, 2)
    mx.random.seed(11)
    out = mx.nd.random.shuffle(mx.nd.array(data)).asnumpy()
    assert out.shape == (10, 2)
    assert sorted(map(tuple, out)) == sorted(map(tuple, data))
    assert not np.array_equal(out, data)
    ints = mx.nd.shuffle(mx.nd.array(np.arange(6), dtype="int32"))
    assert ints.dtype == np.int32 and sorted(ints.asnumpy()) == list(range(6))


def test_out_and_ctx():
    out = mx.nd.array(np.zeros((2, 2)))
    res = mx.nd.random.normal(out=out)
    assert res is out and np.all(out.asnumpy() != 0)
    x = mx.nd.random.uniform(shape=(2,), ctx=mx.cpu(1))
    assert x.context == mx.cpu(1)


def test_infer_shape_and_type():
    op = registry.get("_random_uniform")
    a = op.parse_attrs({"shape": (2, 3), "dtype": "float64"})
    assert op.infer_shape(a, []) == ([], [(2, 3)])
    assert op.infer_type(a, [])[1] == ["float64"]
    op = registry.get("_sample_normal")
    a = op.parse_attrs({"shape": 4})
    assert op.infer_shape(a, [(2, 3), None]) == ([(2, 3), (2, 3)], [(2, 3, 4)])
    assert op.infer_type(a, ["float64", "float64"])[1] == ["float32"]
    op = registry.get("_sample_multinomial")
    a = op.parse_attrs({"shape": (5,), "get_prob": True})
    assert op.infer_shape(a, [(2, 3)])[1] == [(2, 5), (2, 5)]
    assert op.infer_type(a, ["float32"])[1] == ["int32", "float32"]
    op = registry.get("_random_randint")
    assert op.infer_type(op.parse_attrs({"low": 0, "high": 2, "shape": 2}), [])[1] == ["int32"]


def test_sample_input_names():
    # MXNet 1.9.1's input names of the _sample_* operators (list_arguments on the oracle)
    names = {"uniform": ["low", "high"], "normal": ["mu", "sigma"],
             "gamma": ["alpha", "beta"], "exponential": ["lam"], "poisson": ["lam"],
             "negative_binomial": ["k", "p"],
             "generalized_negative_binomial": ["mu", "alpha"]}
    for dist, inputs in names.items():
        args = [mx.sym.var(n) for n in inputs]
        sym = getattr(mx.sym, "sample_" + dist)(*args)
        assert sym.list_arguments() == inputs, dist
    s = mx.nd.sample_normal(mu=mx.nd.array([10.0]), sigma=mx.nd.array([0.5]))
    assert s.shape == (1,)
    s = mx.nd.sample_normal(mu=mx.nd.array([10.0]), sigma=mx.nd.array([0.5]), shape=1)
    assert s.shape == (1, 1)
    s = mx.nd.sample_uniform(low=mx.nd.array([1.0, 2.0]), high=mx.nd.array([1.5, 2.5]),
                             shape=(3,))
    assert s.shape == (2, 3) and (s.asnumpy()[1] >= 2).all()


def test_public_names():
    # the names MXNet 1.9.1 has in mx.nd and mx.nd.random (dir() on the oracle)
    for n in ("random_uniform", "uniform", "random_normal", "normal", "random_gamma",
              "random_exponential", "random_poisson", "random_negative_binomial",
              "random_generalized_negative_binomial", "random_randint", "sample_uniform",
              "sample_normal", "sample_gamma", "sample_exponential", "sample_poisson",
              "sample_negative_binomial", "sample_generalized_negative_binomial",
              "sample_multinomial", "shuffle"):
        assert callable(getattr(mx.nd, n)), n
    for n in ("uniform", "normal", "randn", "gamma", "exponential", "poisson",
              "negative_binomial", "generalized_negative_binomial", "multinomial",
              "shuffle", "randint", "uniform_like", "normal_like", "gamma_like",
              "exponential_like", "poisson_like", "negative_binomial_like",
              "generalized_negative_binomial_like"):
        assert callable(getattr(mx.nd.random, n)), n
    assert mx.random.uniform is mx.nd.random.uniform


@pytest.mark.parametrize("call,match", [
    (lambda: mx.nd.random.uniform(2, 1, shape=(2,)), "low must be less"),
    (lambda: mx.nd.random.normal(0, -1, shape=(2,)), "scale"),
    (lambda: mx.nd.random.gamma(-1, 1, shape=(2,)), "alpha"),
    (lambda: mx.nd.random.poisson(-1, shape=(2,)), "non-negative"),
    (lambda: mx.nd.random.uniform(dtype="int32"), "dtype"),
    (lambda: mx.nd.random.randint(0, 5, dtype="float32"), "dtype"),
    (lambda: mx.nd.random.randint(5, 0), "low must be less"),
    (lambda: mx.nd.random.randn(), "shape"),
    (lambda: mx.nd.random.uniform(mx.nd.array(np.zeros((2, 2))), mx.nd.array(np.ones(3))),
     "same shape"),
])
def test_errors(call, match):
    # MXNet reports a sampler's parameter check where the result is waited for
    # (mxtorch/ops/failure.py); the other errors at the call
    with pytest.raises(MXNetError, match=match):
        call().wait_to_read()


def test_wrapper_type_errors():
    with pytest.raises(AssertionError, match="same type"):
        mx.nd.random.uniform(mx.nd.array([1.0, 2.0]), 3)
    with pytest.raises(ValueError, match="NDArray or numbers"):
        mx.nd.random.uniform("a")


# ---------------------------------------------------------------------- densities
_X = np.array([[0.5, 1.5], [2.0, 3.0]], np.float32)
_K = np.array([[0, 1], [2, 5]], np.float32)
# (operator, samples, parameters, MXNet 1.9.1's output, is_log)
PDF_CASES = [
    ("uniform", _X, ([0, 1], [2, 4]), [[0.5, 0.5], [1 / 3, 1 / 3]], False),
    ("normal", _X, ([0, 1], [1, 2]), [[0.35206532, 0.1295176], [0.17603266, 0.12098536]],
     False),
    ("gamma", _X, ([2, 3], [1, 0.5]), [[-1.1931472, -1.0945349], [-2.3862944, -2.075364]],
     True),
    ("exponential", _X, ([1, 2],), [[0.60653067, 0.22313017], [0.03663128, 0.0049575]],
     False),
    ("poisson", _K, ([1, 2],), [[0.36787945, 0.36787945], [0.27067056, 0.03608941]], False),
    ("negative_binomial", _K, ([3, 2], [0.4, 0.6]),
     [[0.06400001, 0.11520002], [0.17279999, 0.0221184]], False),
    ("generalized_negative_binomial", _K, ([3, 2], [0.4, 0.6]),
     [[0.13929749, 0.1899511], [0.17766428, 0.04659405]], False),
    ("dirichlet", np.array([[0.2, 0.8], [0.5, 0.5]], np.float32), ([2.5, 1.5],),
     [0.4074366, 1.2732396], False),
]


@pytest.mark.parametrize("dist,x,params,expected,is_log", PDF_CASES)
def test_pdf_values(dist, x, params, expected, is_log):
    args = [mx.nd.array(x)] + [mx.nd.array(p) for p in params]
    out = getattr(mx.nd, f"random_pdf_{dist}")(*args, is_log=is_log)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5)
    log = getattr(mx.nd._internal, f"_random_pdf_{dist}")(*args, is_log=not is_log).asnumpy()
    np.testing.assert_allclose(log, np.log(expected) if not is_log else np.exp(expected),
                               rtol=1e-5)


def test_pdf_outside_support_and_rate_parameters():
    """MXNet 1.9.1 evaluates the density formula off the support too (uniform stays
    1/(high-low), exponential grows for negative samples); gamma's beta is a rate."""
    x = mx.nd.array([[-0.5, 0.0, 2.0], [1.0, 4.5, 5.0]])
    out = mx.nd.random_pdf_uniform(x, mx.nd.array([0, 1]), mx.nd.array([2, 4]))
    np.testing.assert_allclose(out.asnumpy(), [[0.5] * 3, [1 / 3] * 3], rtol=1e-6)
    out = mx.nd.random_pdf_exponential(x, mx.nd.array([1, 2]))
    np.testing.assert_allclose(out.asnumpy(), [[1.6487212, 1.0, 0.13533528],
                                               [0.27067056, 2.468196e-4, 9.079986e-5]],
                               rtol=1e-5)
    out = mx.nd.random_pdf_gamma(mx.nd.array([[0.5, 2.0]]), mx.nd.array([1.0]),
                                 mx.nd.array([2.0]))
    np.testing.assert_allclose(out.asnumpy(), [[0.7357589, 0.03663128]], rtol=1e-6)
    k = mx.nd.array([[0, 3]])
    out = mx.nd.random_pdf_negative_binomial(k, mx.nd.array([1.0]), mx.nd.array([0.5]))
    np.testing.assert_allclose(out.asnumpy(), [[0.5, 0.0625]], rtol=1e-6)
    out = mx.nd.random_pdf_generalized_negative_binomial(k, mx.nd.array([2.0]),
                                                         mx.nd.array([0.5]))
    np.testing.assert_allclose(out.asnumpy(), [[0.25, 0.125]], rtol=1e-6)
    with pytest.raises(MXNetError, match="_random_pdf_uniform"):
        mx.nd.random_pdf_uniform(mx.nd.ones((2, 3)), mx.nd.ones((3,)), mx.nd.ones((3,)))


def test_pdf_gradients():
    # recorded with MXNet 1.9.1: gradients w.r.t. parameters are the densities' own; the
    # discrete distributions give the samples a zero gradient
    x = mx.nd.array(_X)
    mu, sigma = mx.nd.array([0, 1]), mx.nd.array([1, 2])
    for a in (x, mu, sigma):
        a.attach_grad()
    with mx.autograd.record():
        out = mx.nd.random_pdf_normal(x, mu, sigma, is_log=True)
    out.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[-0.5, -1.5], [-0.25, -0.5]], rtol=1e-6)
    np.testing.assert_allclose(mu.grad.asnumpy(), [2.0, 0.75], rtol=1e-6)
    np.testing.assert_allclose(sigma.grad.asnumpy(), [0.5, -0.375], rtol=1e-6)
    k, lam = mx.nd.array(_K), mx.nd.array([1, 2])
    k.attach_grad()
    lam.attach_grad()
    with mx.autograd.record():
        out = mx.nd.random_pdf_poisson(k, lam, is_log=True)
    out.backward()
    np.testing.assert_array_equal(k.grad.asnumpy(), 0)
    np.testing.assert_allclose(lam.grad.asnumpy(), [-1.0, 1.5], rtol=1e-6)


def test_pdf_dirichlet_shapes_and_symbol():
    sample = RNG_PDF.dirichlet([1, 2, 3], size=(2, 4))          # (2, 4, 3)
    alpha = RNG_PDF.uniform(0.5, 2, (2, 3))
    out = mx.nd.random_pdf_dirichlet(mx.nd.array(sample), mx.nd.array(alpha), is_log=True)
    assert out.shape == (2, 4)
    from math import lgamma
    want = [[sum((a - 1) * np.log(s)) + lgamma(a.sum()) - sum(lgamma(v) for v in a)
             for s in row] for row, a in zip(sample, alpha)]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5)
    sym = mx.sym.random_pdf_dirichlet(mx.sym.var("v0"), mx.sym.var("v1"))
    assert sym.list_arguments() == ["v0", "v1"]
    assert sym.infer_shape(v0=(2, 4, 3), v1=(2, 3))[1] == [(2, 4)]
    assert mx.sym.random_pdf_normal(mx.sym.var("x"), mx.sym.var("m"),
                                    mx.sym.var("s")).list_arguments() == ["x", "m", "s"]
    with pytest.raises(MXNetError, match="_random_pdf_normal"):
        mx.nd.random_pdf_normal(mx.nd.ones((2, 3)), mx.nd.ones((3,)), mx.nd.ones((3,)))


RNG_PDF = np.random.RandomState(3)


# ---------------------------------------------------------------------- unique zipfian
def test_sample_unique_zipfian():
    mx.random.seed(7)
    classes, tries = mx.nd._internal._sample_unique_zipfian(1000, shape=(3, 200))
    assert classes.shape == (3, 200) and tries.shape == (3,)
    assert classes.dtype == np.int64 and tries.dtype == np.int64
    c = classes.asnumpy()
    for row, n in zip(c, tries.asnumpy()):
        assert len(np.unique(row)) == 200 and n >= 200
    assert c.min() >= 0 and c.max() < 1000
    # log-uniform: small classes come first and often
    assert (c < 10).sum(axis=1).min() >= 8
    with pytest.raises(MXNetError, match="cannot exceed"):
        mx.nd._internal._sample_unique_zipfian(10, shape=(1, 11))


# ---------------------------------------------------------------------- mx.sym.random
def test_symbol_random_wrappers():
    a = mx.sym.var("a")
    c = mx.sym.random.shuffle(data=mx.sym.random.shuffle(a), name="c")
    data = mx.nd.array(np.arange(12).reshape(4, 3))
    out = mx.sym.sort(c, axis=0).eval(a=data)[0]
    np.testing.assert_array_equal(out.asnumpy(), data.asnumpy())
    node = json.loads(mx.sym.random.exponential(2, shape=(3,)).tojson())["nodes"][0]
    assert node["op"] == "_random_exponential" and node["attrs"]["lam"] == "0.5"
    # MXNet: the Symbol multinomial returns the log-probabilities by default
    assert len(mx.sym.random.multinomial(a).list_outputs()) == 2
    assert mx.sym.random.randn(2, 3).infer_shape()[1] == [(2, 3)]
    sym = mx.sym.random.normal(mx.sym.var("m"), mx.sym.var("s"), shape=2)
    assert sym.list_arguments() == ["m", "s"]
    assert json.loads(sym.tojson())["nodes"][2]["op"] == "_sample_normal"
    assert mx.sym.random.randint(0, 5, shape=(2,)).infer_type()[1] == [np.int32]


# ------------------------------------------------------------- default state per process
_UNSEEDED_DRAWS = """
import mxtorch as mx
from mxtorch.gluon import nn
print(mx.nd.random.uniform(shape=3).asnumpy().tolist())
print(mx.np.random.normal(size=2).tolist())
print(mx.random.normal(shape=2, ctx=mx.cpu(1)).asnumpy().tolist())
print(mx.nd.Dropout(mx.nd.ones(8), p=0.5, mode="always").asnumpy().tolist())
net = nn.Dense(3, in_units=4)
net.initialize(mx.init.Xavier())
print(net.weight.data().asnumpy().tolist())
"""


def _fresh_process(code):
    import subprocess
    import sys
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_unseeded_processes_draw_the_same_values(tmp_path):
    """MXNet: every process starts from one default random state, so an unseeded script
    draws the same samples, dropout masks and initial weights in every run."""
    first, second = _fresh_process(_UNSEEDED_DRAWS), _fresh_process(_UNSEEDED_DRAWS)
    assert first == second
    assert len(first.splitlines()) == 5
    # The default state is the one mx.random.seed(0) sets: reseeding here replays it.
    import contextlib
    import io
    import runpy
    script = tmp_path / "draws.py"
    script.write_text(_UNSEEDED_DRAWS)
    mx.random.seed(0)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        runpy.run_path(str(script))
    assert buf.getvalue() == first


def test_seed_per_context_and_bad_seed():
    mx.random.seed(7, ctx=mx.cpu(0))
    a = mx.nd.random.uniform(shape=4).asnumpy()
    mx.random.seed(7, ctx="cpu")
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=4).asnumpy(), a)
    with pytest.raises(ValueError):
        mx.random.seed(1.5)

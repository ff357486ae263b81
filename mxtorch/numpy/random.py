"""``mx.np.random``: sampling into ``mx.np.ndarray`` from torch's generators.

``size=None`` with scalar parameters gives a 0-d array (NumPy semantics); array
parameters broadcast against ``size``. Samples are float32 unless ``dtype`` says
otherwise; integer samplers (randint, choice, multinomial) give int64, as in MXNet.
"""
from __future__ import annotations

import torch

from .. import random as _mx_random
from ..context import current_context
from ..ndarray.ndarray import NDArray
from ..ops.tensor_util import torch_dtype
from .multiarray import _ctx_of, np_op, wrap

__all__ = ["seed", "uniform", "normal", "randint", "choice", "shuffle", "rand", "randn",
           "gamma", "beta", "exponential", "laplace", "gumbel", "logistic", "multinomial",
           "multivariate_normal", "pareto", "power", "rayleigh", "weibull", "chisquare", "f",
           "lognormal", "random", "random_sample", "permutation"]


def seed(seed_state, ctx="all"):
    """Seed the random number generators (as ``mx.random.seed``)."""
    _mx_random.seed(seed_state, ctx)


def _params(*ps, dtype="float32"):
    """Parameters as tensors of one dtype, and the context to sample on."""
    ctx = _ctx_of(*ps)
    td = torch_dtype(dtype if dtype is not None else "float32")
    ts = [p._t.to(td) if isinstance(p, NDArray) else
          torch.tensor(p, dtype=td, device=ctx.torch_device) for p in ps]
    return ts, ctx


def _shape(size, ts):
    if size is None:
        return torch.broadcast_shapes(*[t.shape for t in ts]) if ts else ()
    return (size,) if isinstance(size, int) else tuple(size)


def _sampler(name, draw, *defaults, doc=""):
    """Build ``name(*params, size=None, dtype=None, ctx=None, out=None)`` from ``draw``."""
    def sample(*args, size=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
        # MXNet: name(*params, size=None, dtype=None, ctx=None, out=None), all positional
        nparams = len(_NAMES.get(name, defaults))
        extra = args[nparams:]
        if len(extra) > 4:
            raise TypeError(f"{name}() takes at most {nparams + 4} positional "
                            f"arguments ({len(args)} given)")
        size, dtype, ctx, out = (list(extra) + [size, dtype, ctx, out][len(extra):])[:4]
        args = args[:nparams]
        params = list(args) + list(defaults[len(args):])
        for i, key in enumerate(_NAMES.get(name, ())):
            if key in kwargs:
                params[i] = kwargs.pop(key)
        if kwargs:   # MXNet's samplers have fixed signatures (no ``shape=``)
            raise TypeError(f"{name}() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        ts, c = _params(*params, dtype=dtype)
        c = ctx or device or (c if any(isinstance(p, NDArray) for p in params)
                              else current_context())
        ts = [t.to(c.torch_device) for t in ts]
        shape = _shape(size, ts)
        with torch.no_grad():
            res = draw(shape, *[torch.broadcast_to(t, shape) for t in ts])
        if out is not None:
            out._t.copy_(res)
            return out
        return wrap(res.contiguous(), c)
    sample.__name__ = name
    sample.__doc__ = doc or f"Draw samples from the {name} distribution."
    return sample


def _u(shape, like):
    return torch.rand(shape, dtype=like.dtype, device=like.device)


_NAMES = {"uniform": ("low", "high"), "normal": ("loc", "scale"),
          "lognormal": ("mean", "sigma"), "gamma": ("shape", "scale"), "beta": ("a", "b"),
          "exponential": ("scale",), "laplace": ("loc", "scale"), "gumbel": ("loc", "scale"),
          "logistic": ("loc", "scale"), "pareto": ("a",), "power": ("a",),
          "rayleigh": ("scale",), "weibull": ("a",), "chisquare": ("df",),
          "f": ("dfnum", "dfden")}

uniform = _sampler("uniform", lambda s, lo, hi: lo + (hi - lo) * _u(s, lo), 0.0, 1.0)
normal = _sampler("normal", lambda s, m, sd: m + sd * torch.randn(s, dtype=m.dtype,
                                                                  device=m.device), 0.0, 1.0)
lognormal = _sampler("lognormal", lambda s, m, sd: torch.exp(
    m + sd * torch.randn(s, dtype=m.dtype, device=m.device)), 0.0, 1.0)
gamma = _sampler("gamma", lambda s, k, th: torch._standard_gamma(k.contiguous()) * th,
                 1.0, 1.0)
exponential = _sampler("exponential", lambda s, sc: -torch.log1p(-_u(s, sc)) * sc, 1.0)
laplace = _sampler("laplace", lambda s, m, b: torch.distributions.Laplace(m, b).sample(),
                   0.0, 1.0)
gumbel = _sampler("gumbel", lambda s, m, b: m - b * torch.log(-torch.log(
    _u(s, m).clamp_min(1e-12))), 0.0, 1.0)
logistic = _sampler("logistic", lambda s, m, b: m + b * torch.logit(
    _u(s, m).clamp(1e-7, 1 - 1e-7)), 0.0, 1.0)
pareto = _sampler("pareto", lambda s, a: torch.pow(1 - _u(s, a), -1.0 / a) - 1)
power = _sampler("power", lambda s, a: torch.pow(_u(s, a), 1.0 / a))
rayleigh = _sampler("rayleigh", lambda s, sc: sc * torch.sqrt(
    -2.0 * torch.log1p(-_u(s, sc))), 1.0)
weibull = _sampler("weibull", lambda s, a: torch.pow(-torch.log1p(-_u(s, a)), 1.0 / a))
chisquare = _sampler("chisquare", lambda s, df: 2.0 * torch._standard_gamma(
    (df / 2.0).contiguous()))
beta = _sampler("beta", lambda s, a, b: torch.distributions.Beta(a, b).sample())
f = _sampler("f", lambda s, d1, d2: (torch._standard_gamma((d1 / 2).contiguous()) / d1)
             / (torch._standard_gamma((d2 / 2).contiguous()) / d2))


def rand(*size, **kwargs):
    """Uniform samples in [0, 1) of the given shape."""
    return uniform(size=size, **kwargs)


def randn(*size, **kwargs):
    """Standard normal samples of the given shape."""
    return normal(size=size, **kwargs)


def random_sample(size=None, ctx=None):
    """Uniform samples in [0, 1)."""
    return uniform(size=size, ctx=ctx)


random = random_sample


def randint(low, high=None, size=None, dtype=None, ctx=None, out=None, device=None):
    """Random integers from ``[low, high)`` (int64 by default)."""
    if high is None:
        low, high = 0, low
    ctx = ctx or device or current_context()
    shape = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
    td = torch_dtype(dtype if dtype is not None else "int64")
    return wrap(torch.randint(int(low), int(high), shape, dtype=td,
                              device=ctx.torch_device), ctx)


def choice(a, size=None, replace=True, p=None, ctx=None, out=None, device=None):
    """Random sample from ``arange(a)`` or a 1-D array (indices are int64)."""
    ctx = ctx or device or _ctx_of(a)
    n = a if isinstance(a, int) else a.shape[0]
    shape = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
    k = 1
    for d in shape:
        k *= d
    probs = (p._t.double() if isinstance(p, NDArray) else
             torch.tensor(p, dtype=torch.float64) if p is not None else
             torch.ones(n, dtype=torch.float64))
    if not replace and k > n:
        raise ValueError("Cannot take a larger sample than population when 'replace=False'")
    idx = torch.multinomial(probs.cpu(), k, replacement=replace).reshape(shape)
    idx = idx.to(ctx.torch_device)
    return wrap(idx, ctx) if isinstance(a, int) else wrap(a._t[idx], ctx)


@np_op
def shuffle(x):
    """Shuffle an array in place along its first axis."""
    perm = torch.randperm(x.shape[0], device=x._t.device)
    x._t.copy_(x._t[perm])


def permutation(x):
    """A permuted copy of ``x`` or of ``arange(x)``."""
    if isinstance(x, int):
        return wrap(torch.randperm(x), current_context())
    perm = torch.randperm(x.shape[0], device=x._t.device)
    return wrap(x._t[perm].clone(), x._ctx)


def multinomial(n, pvals, size=None):
    """Draw counts (int64) from a multinomial distribution."""
    probs = (pvals._t if isinstance(pvals, NDArray) else torch.tensor(pvals)).double()
    shape = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
    k = 1
    for d in shape:
        k *= d
    draws = torch.multinomial(probs.expand(k, -1), n, replacement=True)
    counts = torch.zeros(k, probs.numel(), dtype=torch.int64)
    counts.scatter_add_(1, draws, torch.ones_like(draws))
    return wrap(counts.reshape(shape + (probs.numel(),)), current_context())


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    """Samples from a multivariate normal distribution."""
    m, c = mean._t.double(), cov._t.double()
    shape = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
    dist = torch.distributions.MultivariateNormal(m, covariance_matrix=c)
    return wrap(dist.sample(shape).to(mean._t.dtype), mean._ctx)

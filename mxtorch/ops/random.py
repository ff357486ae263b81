"""Random sampling operators: random_*, sample_*, *_like, multinomial, shuffle, randint.

Every sampler draws from torch's default generator of the output's device, so
``mx.random.seed(s)`` (``torch.manual_seed``) makes results reproducible. The sequences are
not MXNet's (its generators are different); the distributions are.

Three forms per distribution, as in MXNet:

* ``_random_<d>`` takes scalar parameters and a ``shape`` (creates an array from nothing);
* ``_sample_<d>`` takes parameter arrays of one shape ``S`` and draws ``shape`` samples per
  element: the output has shape ``S + shape``;
* ``_random_<d>_like`` takes scalar parameters and an array whose shape and dtype it copies.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import torch

from ..base import MXNetError, dtype_name, dtype_np
from .failure import RANDOM, failed
from .params import Bool, Float, Int, OptShape, Param, Shape, Str
from .registry import OpDef, register
from .tensor_util import torch_dtype

__all__: list[str] = []

_FLOATS = ("float16", "float32", "float64")

Num = float | torch.Tensor


# ---------------------------------------------------------------------- parameters
def _dtype_choice(choices: tuple, default: str | None) -> Param:
    """A ``dtype`` attribute restricted to ``choices`` (``None`` allowed when default)."""
    def parse(value: Any) -> str | None:
        if value is None or (isinstance(value, str) and value.strip() == "None"):
            if default is None:
                return None
            raise ValueError("dtype must not be None")
        name = dtype_name(dtype_np(value))
        if name not in choices:
            raise ValueError(f"Invalid Input: '{name}', valid values are: "
                             f"{['None', *choices] if default is None else list(choices)}")
        return name
    return Param("dtype", parse, default, "Output dtype.", "dtype", tuple(choices))


class _ZeroGrad(torch.autograd.Function):
    """Pass samples through; the distribution parameters get a zero gradient."""

    @staticmethod
    def forward(ctx, sample, *params):  # type: ignore[override]
        ctx.shapes = [(p.shape, p.dtype, p.device) for p in params]
        return sample.view_as(sample)

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        # MXNet: sampling operators give zero gradients to their parameter inputs.
        return (None, *[torch.zeros(s, dtype=d, device=v) for s, d, v in ctx.shapes])


def _no_grad_sample(fn: Callable, params: tuple, *args) -> torch.Tensor:
    """Draw without recording; connect parameters with a zero gradient when recording."""
    with torch.no_grad():
        out = fn(*args)
    if torch.is_grad_enabled() and any(p.requires_grad for p in params):
        return _ZeroGrad.apply(out, *params)
    return out


# ---------------------------------------------------------------------- samplers
def _as_tensor(x: Num, shape: tuple, dtype: torch.dtype, device) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.expand(shape)
    return torch.full(shape, x, dtype=dtype, device=device)


def _uniform(p: tuple, shape, dtype, device) -> torch.Tensor:
    low, high = p
    return low + (high - low) * torch.rand(shape, dtype=dtype, device=device)


def _normal(p: tuple, shape, dtype, device) -> torch.Tensor:
    loc, scale = p
    return loc + scale * torch.randn(shape, dtype=dtype, device=device)


def _gamma_draw(alpha: Num, beta: Num, shape, dtype, device) -> torch.Tensor:
    a = _as_tensor(alpha, shape, dtype, device).contiguous()
    return torch._standard_gamma(a) * beta


def _gamma(p: tuple, shape, dtype, device) -> torch.Tensor:
    return _gamma_draw(p[0], p[1], shape, dtype, device)


def _exponential(p: tuple, shape, dtype, device) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device=device).exponential_() / p[0]


def _poisson(p: tuple, shape, dtype, device) -> torch.Tensor:
    return torch.poisson(_as_tensor(p[0], shape, dtype, device).contiguous())


def _negative_binomial(p: tuple, shape, dtype, device) -> torch.Tensor:
    # MXNet: lambda ~ Gamma(k, (1-p)/p), then Poisson(lambda).
    k, prob = p
    lam = _gamma_draw(k, (1 - prob) / prob, shape, dtype, device)
    return torch.poisson(lam)


def _generalized_negative_binomial(p: tuple, shape, dtype, device) -> torch.Tensor:
    # MXNet: alpha == 0 is Poisson(mu); else lambda ~ Gamma(1/alpha, alpha*mu).
    mu, alpha = (_as_tensor(v, shape, dtype, device) for v in p)
    zero = alpha == 0
    safe = torch.where(zero, torch.ones_like(alpha), alpha)
    lam = _gamma_draw(1 / safe, safe * mu, shape, dtype, device)
    return torch.poisson(torch.where(zero, mu, lam))


# ---------------------------------------------------------------------- scalar checks
def _check_uniform(low: float, high: float) -> str | None:
    return None if high >= low else (f"low must be less or equal to high in uniform "
                                     f"distribution (low={low}, high={high})")


def _check_positive(what: str) -> Callable[[float], str | None]:
    return lambda v, *rest: None if v > 0 else f"{what} has to be positive (got {v})"


def _check_poisson(lam: float) -> str | None:
    return None if lam >= 0 else f"lambda parameter in poisson distribution has to be " \
                                 f"non-negative (got {lam})"


def _check_nb(k: float, p: float) -> str | None:
    if k < 0 or not 0 < p <= 1:
        return f"k must be non-negative and p in (0, 1] (got k={k}, p={p})"
    return None


def _check_gnb(mu: float, alpha: float) -> str | None:
    if mu < 0 or alpha < 0:
        return f"mu and alpha must be non-negative (got mu={mu}, alpha={alpha})"
    return None


# (distribution, [(param, default, doc)], sampler, scalar check, extra public names,
#  the _sample_<d> input names: MXNet names some differently from the scalar parameters)
_DISTRIBUTIONS = [
    ("uniform", [("low", 0.0, "Lower bound."), ("high", 1.0, "Upper bound.")],
     _uniform, _check_uniform, ("uniform",), ("low", "high")),
    ("normal", [("loc", 0.0, "Mean."), ("scale", 1.0, "Standard deviation.")],
     _normal, lambda loc, scale: _check_positive("scale parameter in gaussian")(scale),
     ("normal",), ("mu", "sigma")),
    ("gamma", [("alpha", 1.0, "Shape."), ("beta", 1.0, "Scale.")], _gamma,
     lambda a, b: _check_positive("alpha parameter in gamma distribution")(a)
     or _check_positive("beta parameter in gamma distribution")(b), (), ("alpha", "beta")),
    ("exponential", [("lam", 1.0, "Rate.")], _exponential,
     _check_positive("lambda parameter in exponential distribution"), (), ("lam",)),
    ("poisson", [("lam", 1.0, "Rate.")], _poisson, _check_poisson, (), ("lam",)),
    ("negative_binomial", [("k", 1, "Limit of unsuccessful experiments."),
                           ("p", 1.0, "Failure probability.")],
     _negative_binomial, _check_nb, (), ("k", "p")),
    ("generalized_negative_binomial", [("mu", 1.0, "Mean."),
                                       ("alpha", 1.0, "Dispersion.")],
     _generalized_negative_binomial, _check_gnb, (), ("mu", "alpha")),
]


def _compute_dtype(name: str | None) -> torch.dtype:
    """Sampling dtype: float64 stays, everything else samples in float32."""
    return torch.float64 if name == "float64" else torch.float32


def _finish(out: torch.Tensor, dtype_name_: str) -> torch.Tensor:
    dt = torch_dtype(dtype_name_)
    return out if out.dtype == dt else out.to(dt)


# ---------------------------------------------------------------------- _random_<d>
def _scalar_values(attrs: Any, names: list[str]) -> tuple:
    return tuple(float(getattr(attrs, n)) for n in names)


def _random_compute(dist: str, names: list[str], sampler, check) -> Callable:
    opname = f"_random_{dist}"

    def compute(attrs: Any, *, device=None) -> torch.Tensor:
        if not attrs.shape or any(d is None or d < 0 for d in attrs.shape):
            raise MXNetError(f"Operator {opname}: inferring shapes failed: the output shape "
                             f"must be given (got shape={attrs.shape})")
        values = _scalar_values(attrs, names)
        msg = check(*values)
        dtype = attrs.dtype or "float32"
        if msg or RANDOM.pending():
            # MXNet: the sampler checks while the engine runs it, and the wait reports it;
            # until then the shared generator is failed too (ops/failure.py)
            return failed(MXNetError(f"Operator {opname}: {msg}") if msg else None,
                          torch.zeros(tuple(attrs.shape), dtype=torch_dtype(dtype),
                                      device=device), resource=RANDOM)
        with torch.no_grad():
            out = sampler(values, tuple(attrs.shape), _compute_dtype(dtype), device)
        return _finish(out, dtype)
    return compute


def _random_infer_shape(attrs: Any, shapes: list):
    if attrs.shape and all(d and d > 0 for d in attrs.shape):
        return shapes, [tuple(attrs.shape)]
    return shapes, None


def _random_infer_type(attrs: Any, types: list):
    return types, [attrs.dtype or "float32"]


def _param_defs(params: list) -> list[Param]:
    return [Int(n, d, doc) if isinstance(d, int) else Float(n, d, doc) for n, d, doc in params]


def _register_random(dist, params, sampler, check, extra) -> None:
    names = [p[0] for p in params]
    register(OpDef(
        f"_random_{dist}", _random_compute(dist, names, sampler, check), inputs=(),
        params=[*_param_defs(params), OptShape("shape", None, "Output shape."),
                Str("ctx", "", "Context of the output (imperative calls)."),
                _dtype_choice(_FLOATS, None)],
        creates=True, aliases=(f"random_{dist}", *extra),
        infer_shape=_random_infer_shape, infer_type=_random_infer_type,
        deterministic=False,
        doc=f"Draw samples from the {dist.replace('_', ' ')} distribution with scalar "
            f"parameters {', '.join(names)}; output of the given ``shape``."))


# ---------------------------------------------------------------------- _sample_<d>
def _sample_compute(dist: str, sampler) -> Callable:
    opname = f"_sample_{dist}"

    def compute(attrs: Any, *params: torch.Tensor) -> torch.Tensor:
        base = tuple(params[0].shape)
        for p in params[1:]:
            if tuple(p.shape) != base:
                raise MXNetError(f"Operator {opname}: all parameter arrays must have the same "
                                 f"shape; got {[tuple(q.shape) for q in params]}")
        extra = tuple(attrs.shape)
        out_shape = base + extra
        dtype = attrs.dtype or "float32"
        cdt = _compute_dtype(dtype)
        device = params[0].device
        if RANDOM.pending():   # MXNet: the shared generator failed earlier (see above)
            return failed(None, torch.zeros(out_shape, dtype=torch_dtype(dtype),
                                            device=device), resource=RANDOM)

        def draw():
            vals = tuple(p.to(cdt).reshape(base + (1,) * len(extra)) for p in params)
            return sampler(vals, out_shape, cdt, device)
        return _finish(_no_grad_sample(draw, params), dtype)
    return compute


def _sample_infer_shape(attrs: Any, shapes: list):
    known = next((s for s in shapes if s is not None and 0 not in s), None)
    if known is None:
        return shapes, None
    return [known] * len(shapes), [tuple(known) + tuple(attrs.shape)]


def _register_sample(dist, names, sampler) -> None:
    register(OpDef(
        f"_sample_{dist}", _sample_compute(dist, sampler), inputs=tuple(names),
        params=[Shape("shape", (), "Samples drawn per parameter element."),
                _dtype_choice(_FLOATS, None)],
        aliases=(f"sample_{dist}",), infer_shape=_sample_infer_shape,
        infer_type=lambda attrs, types: (types, [attrs.dtype or "float32"]),
        deterministic=False,
        doc=f"Draw ``shape`` samples of the {dist.replace('_', ' ')} distribution for each "
            f"element of the parameter arrays {', '.join(names)} (output shape "
            f"``param.shape + shape``)."))


# ---------------------------------------------------------------------- _random_<d>_like
def _like_compute(dist: str, names: list[str], sampler, check) -> Callable:
    opname = f"_random_{dist}_like"

    def compute(attrs: Any, data: torch.Tensor) -> torch.Tensor:
        values = _scalar_values(attrs, names)
        msg = check(*values)
        if msg or RANDOM.pending():   # MXNet: reported where it is waited for, as above
            return failed(MXNetError(f"Operator {opname}: {msg}") if msg else None,
                          torch.zeros_like(data), resource=RANDOM)
        cdt = torch.float64 if data.dtype == torch.float64 else torch.float32
        out = _no_grad_sample(sampler, (data,), values, tuple(data.shape), cdt, data.device)
        return out if out.dtype == data.dtype else out.to(data.dtype)
    return compute


def _register_like(dist, params, sampler, check) -> None:
    names = [p[0] for p in params]
    register(OpDef(
        f"_random_{dist}_like", _like_compute(dist, names, sampler, check),
        params=_param_defs(params),
        infer_shape=lambda attrs, shapes: (shapes, [shapes[0]] if shapes[0] else None),
        infer_type=lambda attrs, types: (types, [types[0]]),
        deterministic=False,
        doc=f"Draw samples from the {dist.replace('_', ' ')} distribution with the shape "
            f"and dtype of ``data``."))


for _dist, _params, _sampler, _check, _extra, _inputs in _DISTRIBUTIONS:
    _register_random(_dist, _params, _sampler, _check, _extra)
    _register_sample(_dist, _inputs, _sampler)
    _register_like(_dist, _params, _sampler, _check)


# ---------------------------------------------------------------------- randint
def _randint_compute(attrs: Any, *, device=None) -> torch.Tensor:
    if not attrs.shape or any(d is None or d < 0 for d in attrs.shape):
        raise MXNetError("Operator _random_randint: inferring shapes failed: the output "
                         f"shape must be given (got shape={attrs.shape})")
    dt = torch_dtype(attrs.dtype or "int32")
    shape = tuple(attrs.shape)
    if attrs.high < attrs.low or RANDOM.pending():   # reported at the wait, as above
        return failed(MXNetError("Operator _random_randint: low must be less or equal to "
                                 f"high (low={attrs.low}, high={attrs.high})")
                      if attrs.high < attrs.low else None,
                      torch.zeros(shape, dtype=dt, device=device), resource=RANDOM)
    if attrs.high == attrs.low:
        return torch.full(shape, attrs.low, dtype=dt, device=device)
    return torch.randint(attrs.low, attrs.high, shape, dtype=dt, device=device)


register(OpDef(
    "_random_randint", _randint_compute, inputs=(),
    params=[Int("low"), Int("high"), OptShape("shape", None), Str("ctx", ""),
            _dtype_choice(("int32", "int64"), None)],
    creates=True, aliases=("random_randint",), infer_shape=_random_infer_shape,
    infer_type=lambda attrs, types: (types, [attrs.dtype or "int32"]),
    deterministic=False,
    doc="Draw integers uniformly from ``[low, high)`` (int32 unless ``dtype='int64'``)."))


# ---------------------------------------------------------------------- multinomial
def _multinomial_compute(attrs: Any, data: torch.Tensor):
    """Sample category indices from the probabilities on the last axis."""
    k = data.shape[-1]
    extra = tuple(attrs.shape)
    out_shape = tuple(data.shape[:-1]) + extra or (1,)
    flat = data.reshape(-1, k)
    n = math.prod(extra) if extra else 1
    with torch.no_grad():
        probs = flat.detach()
        probs = probs if probs.dtype == torch.float64 else probs.float()
        idx = torch.multinomial(probs, n, replacement=True)
    sample = idx.reshape(out_shape).to(torch_dtype(attrs.dtype))
    if not attrs.get_prob:
        return sample
    # the log-probability is differentiable w.r.t. data (MXNet: grad 1/p at the samples)
    logp = torch.log(flat.gather(1, idx)).reshape(out_shape)
    return sample, logp


def _multinomial_infer_shape(attrs: Any, shapes: list):
    (d,) = shapes
    if d is None or 0 in d:
        return shapes, None
    out = tuple(d[:-1]) + tuple(attrs.shape) or (1,)
    return shapes, [out] * (2 if attrs.get_prob else 1)


register(OpDef(
    "_sample_multinomial", _multinomial_compute, aliases=("sample_multinomial",),
    params=[Shape("shape", ()), Bool("get_prob", False),
            _dtype_choice(("float16", "float32", "float64", "int32", "uint8"), "int32")],
    num_outputs=lambda attrs: 2 if attrs.get_prob else 1,
    infer_shape=_multinomial_infer_shape,
    infer_type=lambda attrs, types: (types, [attrs.dtype, types[0]][:2 if attrs.get_prob
                                                                    else 1]),
    deterministic=False,
    doc="""Sample from multinomial distributions given by the last axis of ``data``.

Parameters
----------
data : NDArray
    Probabilities, shape (..., k), summing to one on the last axis.
shape : tuple, default ()
    Samples per distribution; the output has shape ``data.shape[:-1] + shape``.
get_prob : bool, default False
    Also return the log-probability of each sample (differentiable).
dtype : {'int32', 'uint8', 'float16', 'float32', 'float64'}, default 'int32'
"""))


# ---------------------------------------------------------------------- shuffle
def _shuffle_compute(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """A random permutation of the first axis (a new array)."""
    perm = torch.randperm(data.shape[0], device=data.device)
    return data.index_select(0, perm)


register(OpDef(
    "_shuffle", _shuffle_compute, aliases=("shuffle",),
    infer_shape=lambda attrs, shapes: (shapes, [shapes[0]] if shapes[0] else None),
    deterministic=False,
    doc="Randomly shuffle the elements along the first axis."))


# ---------------------------------------------------------------------- unique zipfian
def _unique_zipfian_row(range_max: int, num: int, device) -> tuple[torch.Tensor, int]:
    """Draw log-uniform classes until ``num`` distinct ones; (them in draw order, draws)."""
    log_range = math.log(range_max)
    draws = torch.empty(0, dtype=torch.int64, device=device)
    chunk = max(2 * num, 64)
    while True:
        u = torch.rand(chunk, dtype=torch.float64, device=device)
        # MXNet: lround(exp(u * log(range_max))) - 1, a class in [0, range_max)
        new = torch.floor(torch.exp(u * log_range) + 0.5).to(torch.int64) - 1
        draws = torch.cat([draws, new])
        values, inverse = torch.unique(draws, return_inverse=True)
        if values.numel() >= num:
            break
        chunk *= 2
    positions = torch.arange(draws.numel(), device=device)
    first = torch.full((values.numel(),), draws.numel(), dtype=torch.int64, device=device)
    first = first.scatter_reduce(0, inverse, positions, reduce="amin")
    first = first.sort().values[:num]
    return draws[first], int(first[-1]) + 1 if num else 0


def _unique_zipfian_compute(attrs: Any, *, device=None):
    """Classes sampled without replacement from the log-uniform (Zipfian) distribution."""
    shape = tuple(attrs.shape)
    if len(shape) != 2:
        raise MXNetError("Operator _sample_unique_zipfian: shape must be 2-D (batch_size, "
                         f"num_sampled), got {shape}")
    batch, num = shape
    if num > attrs.range_max:
        raise MXNetError("Operator _sample_unique_zipfian: Number of samples cannot exceed "
                         f"the number of possible classes ({num} > {attrs.range_max})")
    if device is not None and device.type == "meta":
        return (torch.empty(shape, dtype=torch.int64, device=device),
                torch.empty((batch,), dtype=torch.int64, device=device))
    rows = [_unique_zipfian_row(attrs.range_max, num, device) for _ in range(batch)]
    samples = torch.stack([r[0] for r in rows]) if rows else \
        torch.empty(shape, dtype=torch.int64, device=device)
    tries = torch.tensor([r[1] for r in rows], dtype=torch.int64, device=device)
    return samples, tries


register(OpDef(
    "_sample_unique_zipfian", _unique_zipfian_compute, inputs=(),
    params=[Int("range_max"), Shape("shape", ())], creates=True, num_outputs=2,
    infer_shape=lambda attrs, shapes: (shapes, [tuple(attrs.shape), tuple(attrs.shape[:1])]),
    infer_type=lambda attrs, types: (types, ["int64", "int64"]),
    deterministic=False,
    doc="""Sample classes without replacement from the log-uniform (Zipfian) distribution
P(class) = (log(class + 2) - log(class + 1)) / log(range_max + 1).

Parameters
----------
range_max : int
    The number of possible classes.
shape : (batch_size, num_sampled)
    Classes drawn per batch row.

Returns
-------
(samples, num_tries) : int64 NDArrays of shapes (batch_size, num_sampled) and
    (batch_size,): the classes, and how many draws each row took.
"""))

"""Probability density operators: ``_random_pdf_<d>`` (alias ``random_pdf_<d>``).

Each takes an array of samples and arrays of distribution parameters whose shape is the
leading part of the samples' shape (for the Dirichlet distribution the parameters also have
the samples' last axis, the vector of concentrations): parameters at index ``i`` describe
every sample under ``sample[i, ...]``. The output has the samples' shape (Dirichlet: without
the last axis) and holds the density, or its logarithm with ``is_log=True``.

Densities are torch expressions, so the gradients w.r.t. parameters and samples are
torch's. # MXNet: for the discrete distributions (Poisson, negative binomial, generalized
negative binomial) the gradient w.r.t. the samples is zero, and the gamma density takes
``beta`` as a rate (``alpha log(beta) - beta x``) although the sampler takes it as a scale.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import torch

from ..base import MXNetError
from .params import Bool
from .registry import OpDef, ShapeInfer, Shapes, TShape, register

__all__: list[str] = []

Fn = Callable[..., torch.Tensor]


# ---------------------------------------------------------------------- log densities
def _uniform(x: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    # MXNet: no check that the sample lies inside [low, high]
    return torch.zeros_like(x) - torch.log(high - low)


def _normal(x: torch.Tensor, mu: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    return -0.5 * (x - mu) ** 2 / (sigma * sigma) - torch.log(math.sqrt(2 * math.pi) * sigma)


def _gamma(x: torch.Tensor, alpha: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    return alpha * torch.log(beta) + (alpha - 1) * torch.log(x) - beta * x - torch.lgamma(alpha)


def _exponential(x: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    return torch.log(lam) - lam * x


def _poisson(x: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    x = x.detach()
    return x * torch.log(lam) - torch.lgamma(x + 1) - lam


def _negative_binomial(x: torch.Tensor, k: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    x = x.detach()   # p is the failure probability
    return (torch.lgamma(x + k) - torch.lgamma(x + 1) - torch.lgamma(k) + k * torch.log(p)
            + x * torch.log(1 - p))


def _generalized_negative_binomial(x: torch.Tensor, mu: torch.Tensor,
                                   alpha: torch.Tensor) -> torch.Tensor:
    # reparameterized as a negative binomial with k = 1/alpha, p = 1/(mu alpha + 1)
    return _negative_binomial(x, 1 / alpha, 1 / (mu * alpha + 1))


def _dirichlet(x: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    norm = torch.lgamma(alpha.sum(-1)) - torch.lgamma(alpha).sum(-1)
    return ((alpha - 1) * torch.log(x)).sum(-1) + norm


# (distribution, log density, parameter input names)
_PDFS: list[tuple[str, Fn, tuple[str, ...]]] = [
    ("uniform", _uniform, ("low", "high")),
    ("normal", _normal, ("mu", "sigma")),
    ("gamma", _gamma, ("alpha", "beta")),
    ("exponential", _exponential, ("lam",)),
    ("poisson", _poisson, ("lam",)),
    ("negative_binomial", _negative_binomial, ("k", "p")),
    ("generalized_negative_binomial", _generalized_negative_binomial, ("mu", "alpha")),
    ("dirichlet", _dirichlet, ("alpha",)),
]


# ---------------------------------------------------------------------- operators
def _param_shape(sample: TShape, nparam: int, vector: bool) -> TShape:
    """The shape every parameter array must have: the samples' leading axes (+ last)."""
    lead = sample[:nparam - 1] + sample[-1:] if vector else sample[:nparam]
    return tuple(lead)


def _check_shapes(op: str, sample: TShape, params: Sequence[TShape], vector: bool) -> None:
    first = tuple(params[0])
    if any(tuple(p) != first for p in params[1:]) or len(first) > len(sample) \
            or first != _param_shape(sample, len(first), vector):
        raise MXNetError(f"Operator {op}: the parameter arrays {[tuple(p) for p in params]} "
                         f"must have the leading shape of the samples {sample}"
                         + (" and their last axis" if vector else ""))


def _pdf_compute(dist: str, logpdf: Fn, vector: bool) -> Fn:
    op = f"_random_pdf_{dist}"

    def compute(attrs: Any, sample: torch.Tensor, *params: torch.Tensor) -> torch.Tensor:
        _check_shapes(op, tuple(sample.shape), [p.shape for p in params], vector)
        extra = sample.dim() - params[0].dim()
        if vector:   # (S..., k) parameters for (S..., n..., k) samples
            view = params[0].shape[:-1] + (1,) * extra + params[0].shape[-1:]
        else:
            view = params[0].shape + (1,) * extra
        out = logpdf(sample, *(p.reshape(view) for p in params))
        if vector and sample.dim() == 1:
            out = out.reshape(1)   # MXNet: a single vector sample gives shape (1,)
        return out if attrs.is_log else torch.exp(out)
    return compute


def _pdf_infer_shape(vector: bool) -> Callable[[Any, Shapes], ShapeInfer]:
    def infer(attrs: Any, shapes: Shapes) -> ShapeInfer:
        sample = shapes[0]
        if sample is None or any(s is None for s in shapes[1:]):
            return shapes, None
        out = sample[:-1] if vector else sample
        return shapes, [tuple(out) or (1,)]
    return infer


for _dist, _fn, _inputs in _PDFS:
    _vector = _dist == "dirichlet"
    register(OpDef(
        f"_random_pdf_{_dist}", _pdf_compute(_dist, _fn, _vector),
        inputs=("sample",) + _inputs, aliases=(f"random_pdf_{_dist}",),
        params=[Bool("is_log", False, "Compute the log density instead of the density.")],
        infer_shape=_pdf_infer_shape(_vector),
        doc=f"The density of the {_dist.replace('_', ' ')} "
            f"distribution at ``sample`` for the parameters {', '.join(_inputs)}.\n\n"
            "Parameters\n----------\nsample : NDArray\n    Samples; the parameters at "
            "index i apply to every sample under sample[i, ...].\n"
            + "".join(f"{n} : NDArray\n" for n in _inputs)
            + "is_log : bool, default False\n    Return the log density.\n"))

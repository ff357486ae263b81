"""``mx.nd.random``: Python wrappers choosing between ``_random_*`` and ``_sample_*``.

As in MXNet's ``mxnet/ndarray/random.py``: scalar distribution parameters call the
``_random_<d>`` operator (an array of ``shape`` on ``ctx``), NDArray parameters call
``_sample_<d>`` (``shape`` samples per parameter element, on the parameters' context).
"""
from __future__ import annotations

from typing import Any

from ..base import numeric_types
from ..context import Context, current_context
from .ndarray import NDArray, invoke

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint"]


class _NullType:
    """MXNet's ``_Null``: an argument that was not given."""

    def __repr__(self) -> str:
        return "_Null"


_Null = _NullType()


def _as_context(ctx: Any) -> Context:
    if ctx is None:
        return current_context()
    if isinstance(ctx, str):
        kind, _, rest = ctx.partition("(")
        return Context(kind, int(rest.rstrip(")") or 0))
    return ctx


def _random_helper(random: str | None, sampler: str | None, names: list[str],
                   params: list, shape, dtype, ctx, out, kwargs: dict):
    """Dispatch to the scalar (``random``) or the array (``sampler``) operator."""
    attrs = dict(kwargs)
    attrs.pop("name", None)  # MXNet: accepted and ignored by imperative calls
    if dtype is not _Null:
        attrs["dtype"] = dtype
    if isinstance(params[0], NDArray):
        if sampler is None:
            raise TypeError(f"{random} takes scalar parameters only, got an NDArray")
        for p in params[1:]:
            assert isinstance(p, NDArray), \
                "Distribution parameters must all have the same type, but got " \
                f"both {type(params[0])} and {type(p)}."
        if shape is not _Null:
            attrs["shape"] = shape
        return invoke(sampler, params, attrs, out=out)
    if isinstance(params[0], numeric_types):
        for p in params[1:]:
            assert isinstance(p, numeric_types), \
                "Distribution parameters must all have the same type, but got " \
                f"both {type(params[0])} and {type(p)}."
        if shape is _Null:
            # MXNet: one sample by default; with out= the output's shape is used
            shape = out.shape if out is not None else 1
        attrs.update(zip(names, params))
        attrs["shape"] = shape
        return invoke(random, [], attrs, out=out, ctx=_as_context(ctx))
    raise ValueError("Distribution parameters must be either NDArray or numbers, "
                     f"but got {type(params[0])}.")


def uniform(low=0, high=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from a uniform distribution over ``[low, high)``.

    Parameters
    ----------
    low, high : float or NDArray, optional
        Bounds of the interval (defaults 0 and 1).
    shape : int or tuple of ints, optional
        Output shape for scalar bounds; samples per element for NDArray bounds (the
        output then has shape ``low.shape + shape``).
    dtype : {'float16', 'float32', 'float64'}, optional
        Output dtype (float32 by default).
    ctx : Context, optional
        Output context for scalar bounds (default: the current context).
    out : NDArray, optional
        Store the result here.

    Returns
    -------
    NDArray
    """
    return _random_helper("_random_uniform", "_sample_uniform", ["low", "high"],
                          [low, high], shape, dtype, ctx, out, kwargs)


def normal(loc=0, scale=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from a normal distribution with mean ``loc`` and std ``scale``.

    Parameters and return value as in :func:`uniform`.
    """
    return _random_helper("_random_normal", "_sample_normal", ["loc", "scale"],
                          [loc, scale], shape, dtype, ctx, out, kwargs)


def randn(*shape, **kwargs):
    """Draw standard-normal samples of the given shape (``loc``/``scale`` keywords).

    Examples
    --------
    >>> mx.nd.random.randn(2, 3).shape
    (2, 3)
    """
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    dtype = kwargs.pop("dtype", _Null)
    ctx = kwargs.pop("ctx", None)
    out = kwargs.pop("out", None)
    assert isinstance(loc, (int, float, NDArray))
    assert isinstance(scale, (int, float, NDArray))
    return _random_helper("_random_normal", "_sample_normal", ["loc", "scale"],
                          [loc, scale], shape, dtype, ctx, out, kwargs)


def poisson(lam=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from a Poisson distribution with rate ``lam``.

    Parameters and return value as in :func:`uniform`.
    """
    return _random_helper("_random_poisson", "_sample_poisson", ["lam"], [lam], shape,
                          dtype, ctx, out, kwargs)


def exponential(scale=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from an exponential distribution with mean ``scale`` (rate 1/scale).

    Parameters and return value as in :func:`uniform`.
    """
    return _random_helper("_random_exponential", "_sample_exponential", ["lam"],
                          [1.0 / scale], shape, dtype, ctx, out, kwargs)


def gamma(alpha=1, beta=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from a gamma distribution with shape ``alpha`` and scale ``beta``.

    Parameters and return value as in :func:`uniform`.
    """
    return _random_helper("_random_gamma", "_sample_gamma", ["alpha", "beta"],
                          [alpha, beta], shape, dtype, ctx, out, kwargs)


def negative_binomial(k=1, p=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from a negative binomial distribution (``k`` failures, probability ``p``).

    Parameters and return value as in :func:`uniform`.
    """
    return _random_helper("_random_negative_binomial", "_sample_negative_binomial",
                          ["k", "p"], [k, p], shape, dtype, ctx, out, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=_Null, dtype=_Null, ctx=None,
                                  out=None, **kwargs):
    """Draw samples from a generalized negative binomial (mean ``mu``, dispersion ``alpha``).

    Parameters and return value as in :func:`uniform`.
    """
    return _random_helper("_random_generalized_negative_binomial",
                          "_sample_generalized_negative_binomial", ["mu", "alpha"],
                          [mu, alpha], shape, dtype, ctx, out, kwargs)


def multinomial(data, shape=_Null, get_prob=False, out=None, dtype="int32", **kwargs):
    """Draw category indices from the multinomial distributions on ``data``'s last axis.

    Parameters
    ----------
    data : NDArray
        Probabilities of shape (..., k).
    shape : int or tuple of ints, optional
        Samples per distribution; the output has shape ``data.shape[:-1] + shape``.
    get_prob : bool, default False
        Also return the log-probabilities of the samples.
    out : NDArray, optional
    dtype : str, default 'int32'

    Returns
    -------
    NDArray, or a list [samples, log_probabilities] when ``get_prob``.
    """
    attrs: dict = dict(kwargs, get_prob=get_prob, dtype=dtype)
    if shape is not _Null:
        attrs["shape"] = shape
    return invoke("_sample_multinomial", [data], attrs, out=out)


def shuffle(data, **kwargs):
    """Return a copy of ``data`` randomly shuffled along its first axis."""
    return invoke("_shuffle", [data], {}, out=kwargs.pop("out", None))


def randint(low, high, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw integers uniformly from ``[low, high)`` (int32 unless ``dtype='int64'``)."""
    return _random_helper("_random_randint", None, ["low", "high"], [low, high], shape,
                          dtype, ctx, out, kwargs)

"""``mx.sym.random``: wrappers choosing between ``_random_*`` and ``_sample_*``.

As in MXNet's ``mxnet/symbol/random.py``: scalar distribution parameters make a
``_random_<d>`` node (an array of ``shape``), Symbol parameters a ``_sample_<d>`` node
(``shape`` samples per parameter element).
"""
from __future__ import annotations

from ..base import numeric_types
from .symbol import Symbol

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint"]


def _internal(name: str):
    from .. import symbol
    return getattr(symbol._internal, name)


def _random_helper(random: str, sampler: str | None, params: list, shape, dtype,
                   kwargs: dict) -> Symbol:
    """A ``sampler`` node for Symbol parameters, a ``random`` node for numbers."""
    if shape is not None:
        kwargs["shape"] = shape
    if dtype is not None:
        kwargs["dtype"] = dtype
    if isinstance(params[0], Symbol) and sampler is not None:
        for p in params[1:]:
            assert isinstance(p, Symbol), "Distribution parameters must all have the same " \
                f"type, but got both {type(params[0])} and {type(p)}."
        return _internal(sampler)(*params, **kwargs)
    if isinstance(params[0], numeric_types):
        for p in params[1:]:
            assert isinstance(p, numeric_types), "Distribution parameters must all have " \
                f"the same type, but got both {type(params[0])} and {type(p)}."
        return _internal(random)(*params, **kwargs)
    raise ValueError("Distribution parameters must be either Symbol or numbers, but got "
                     f"{type(params[0])}.")


def uniform(low=0, high=1, shape=None, dtype=None, **kwargs) -> Symbol:
    """Samples of a uniform distribution over ``[low, high)``.

    Parameters
    ----------
    low, high : float or Symbol, optional
        Bounds (defaults 0 and 1).
    shape : int or tuple of ints, optional
        Output shape for scalar bounds; samples per element for Symbol bounds (the
        output then has shape ``low.shape + shape``).
    dtype : {'float16', 'float32', 'float64'}, optional

    Returns
    -------
    Symbol
    """
    return _random_helper("_random_uniform", "_sample_uniform", [low, high], shape, dtype,
                          kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, **kwargs) -> Symbol:
    """Samples of a normal distribution (mean ``loc``, standard deviation ``scale``);
    parameters as in :func:`uniform`."""
    return _random_helper("_random_normal", "_sample_normal", [loc, scale], shape, dtype,
                          kwargs)


def randn(*shape, **kwargs) -> Symbol:
    """Standard-normal samples of the given shape (``loc``/``scale``/``dtype`` keywords)."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    dtype = kwargs.pop("dtype", None)
    return _random_helper("_random_normal", "_sample_normal", [loc, scale], shape, dtype,
                          kwargs)


def poisson(lam=1, shape=None, dtype=None, **kwargs) -> Symbol:
    """Samples of a Poisson distribution with rate ``lam``."""
    return _random_helper("_random_poisson", "_sample_poisson", [lam], shape, dtype, kwargs)


def exponential(scale=1, shape=None, dtype=None, **kwargs) -> Symbol:
    """Samples of an exponential distribution with mean ``scale`` (rate ``1/scale``)."""
    return _random_helper("_random_exponential", "_sample_exponential", [1.0 / scale], shape,
                          dtype,
                          kwargs)


def gamma(alpha=1, beta=1, shape=None, dtype=None, **kwargs) -> Symbol:
    """Samples of a gamma distribution with shape ``alpha`` and scale ``beta``."""
    return _random_helper("_random_gamma", "_sample_gamma", [alpha, beta], shape, dtype,
                          kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, **kwargs) -> Symbol:
    """Samples of a negative binomial distribution (``k`` failures, probability ``p``)."""
    return _random_helper("_random_negative_binomial", "_sample_negative_binomial", [k, p],
                          shape, dtype, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, **kwargs) -> Symbol:
    """Samples of a generalized negative binomial (mean ``mu``, dispersion ``alpha``)."""
    return _random_helper("_random_generalized_negative_binomial",
                          "_sample_generalized_negative_binomial", [mu, alpha], shape, dtype,
                          kwargs)


def multinomial(data, shape=None, get_prob=True, dtype="int32", **kwargs) -> Symbol:
    """Category indices drawn from the distributions on ``data``'s last axis.

    # MXNet: the Symbol form returns the log-probabilities too by default (get_prob=True).
    """
    if shape is not None:
        kwargs["shape"] = shape
    return _internal("_sample_multinomial")(data, get_prob=get_prob, dtype=dtype, **kwargs)


def shuffle(data, **kwargs) -> Symbol:
    """``data`` randomly shuffled along its first axis."""
    return _internal("_shuffle")(data, **kwargs)


def randint(low, high, shape=None, dtype=None, **kwargs) -> Symbol:
    """Integers drawn uniformly from ``[low, high)`` (int32 unless ``dtype='int64'``)."""
    return _random_helper("_random_randint", None, [low, high], shape, dtype, kwargs)


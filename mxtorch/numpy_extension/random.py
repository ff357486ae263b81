"""``mx.npx.random``: MXNet's extra samplers in NumPy mode (``bernoulli``, ``*_n``).

Built on :mod:`mxtorch.numpy.random`: results are ``mx.np.ndarray`` (float32 unless
``dtype`` says otherwise: 'float16', 'float32' or 'float64'), on the device ``ctx`` (the
current context by default), drawn from the generators ``seed`` resets. The ``*_n``
samplers put the leading dimensions ``batch_shape`` (an int or a tuple) before the
broadcast shape of their parameters.
"""
from __future__ import annotations

import math
import numbers

import numpy as _onp

from ..random import seed
from ..numpy import random as _np_random

__all__ = ["seed", "bernoulli", "normal_n", "uniform_n"]


def _param_shape(*ps) -> tuple:
    """The broadcast shape of scalar / array parameters."""
    return tuple(_onp.broadcast_shapes(*[() if isinstance(p, numbers.Number) else
                                         tuple(p.shape) for p in ps]))


def _n_size(batch_shape, *ps) -> tuple:
    """``batch_shape + broadcast(params).shape`` (MXNet's ``*_n`` output shape)."""
    if batch_shape is None:
        batch = ()
    else:
        batch = (batch_shape,) if isinstance(batch_shape, int) else tuple(batch_shape)
    return batch + _param_shape(*ps)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """Draw 0/1 samples that are 1 with probability ``prob`` (or ``sigmoid(logit)``).

    Parameters
    ----------
    prob, logit : float or ndarray
        Exactly one of them: the probability of a 1, or its log-odds.
    size : int or tuple of ints, optional
        Output shape; default: the parameter's shape (a 0-d array for a scalar).
    dtype : dtype, optional
        Result dtype, float32 by default.
    ctx : Context, optional
        Device of the result.
    out : ndarray, optional
        Array to write into.

    Returns
    -------
    ndarray
    """
    if (prob is None) == (logit is None):
        raise ValueError("Either `prob` or `logit` must be specified, but not both. "
                         f"Received prob={prob}, logit={logit}")
    if logit is not None:
        prob = (1.0 / (1.0 + math.exp(-logit))
                if isinstance(logit, numbers.Number) else _ma_sigmoid(logit))
    u = _np_random.uniform(0.0, 1.0, size=size if size is not None else _param_shape(prob),
                           ctx=ctx)
    res = (u < prob).astype(dtype or "float32")
    if out is not None:
        out[...] = res
        return out
    return res


def _ma_sigmoid(x):
    """Elementwise logistic function of an ndarray."""
    from .. import numpy as _np
    return 1.0 / (1.0 + _np.exp(-x))


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """Uniform samples on ``[low, high)`` (floats or ndarrays) of shape ``batch_shape +
    broadcast(low, high).shape``; ``dtype`` and ``ctx`` as in the module docstring."""
    return _np_random.uniform(low, high, size=_n_size(batch_shape, low, high),
                              dtype=dtype, ctx=ctx)


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    """Normal samples with mean ``loc`` and standard deviation ``scale`` (floats or
    ndarrays) of shape ``batch_shape + broadcast(loc, scale).shape``; ``dtype`` and ``ctx``
    as in the module docstring."""
    return _np_random.normal(loc, scale, size=_n_size(batch_shape, loc, scale),
                             dtype=dtype, ctx=ctx)

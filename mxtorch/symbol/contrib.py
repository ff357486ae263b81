"""``mx.sym.contrib``: the contrib operators of the registry (``_contrib_ctc_loss`` is
``contrib.ctc_loss``) and MXNet's Python-level Zipfian candidate sampler."""
from __future__ import annotations

import math

from .register import populate as _populate
from .symbol import Symbol, _make

__all__ = ["rand_zipfian"]


def rand_zipfian(true_classes: Symbol, num_sampled: int, range_max: int):
    """Sample ``num_sampled`` classes in ``[0, range_max)`` with replacement from the
    approximately log-uniform (Zipfian) distribution
    ``P(c) = (log(c + 2) - log(c + 1)) / log(range_max + 1)``.

    Parameters
    ----------
    true_classes : Symbol
        1-D target classes.
    num_sampled : int
        How many classes to sample.
    range_max : int
        The number of classes.

    Returns
    -------
    (Symbol, Symbol, Symbol)
        The sampled classes (int64), the expected count of each true class and of each
        sampled class (float64).
    """
    if not isinstance(true_classes, Symbol):
        raise AssertionError(f"unexpected type {type(true_classes)}")
    log_range = math.log(range_max + 1)
    rand = _make("_random_uniform", [], {"low": 0.0, "high": log_range,
                                         "shape": (num_sampled,), "dtype": "float64"})
    sampled = (rand.exp() - 1).astype("int64") % range_max

    def expected(classes: Symbol) -> Symbol:
        return ((classes + 2.0) / (classes + 1.0)).log() / log_range * num_sampled

    return sampled, expected(true_classes.astype("float64")), \
        expected(sampled.astype("float64"))


__all__ += _populate(globals(), "contrib")

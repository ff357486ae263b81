"""``mx.sym.random``: wrappers choosing between ``_random_*`` and ``_sample_*``."""
from __future__ import annotations

from .symbol import Symbol

_FORMS = {
    "uniform": ("_random_uniform", "_sample_uniform", ("low", "high"), (0.0, 1.0)),
    "normal": ("_random_normal", "_sample_normal", ("loc", "scale"), (0.0, 1.0)),
    "gamma": ("_random_gamma", "_sample_gamma", ("alpha", "beta"), (1.0, 1.0)),
    "exponential": ("_random_exponential", "_sample_exponential", ("lam",), (1.0,)),
    "poisson": ("_random_poisson", "_sample_poisson", ("lam",), (1.0,)),
    "negative_binomial": ("_random_negative_binomial", "_sample_negative_binomial",
                          ("k", "p"), (1, 1.0)),
    "generalized_negative_binomial": ("_random_generalized_negative_binomial",
                                      "_sample_generalized_negative_binomial",
                                      ("mu", "alpha"), (1.0, 1.0)),
}


def _make(name, scalar_op, array_op, pnames, defaults):
    def fn(*args, shape=None, dtype=None, name=None, **kwargs):
        from .. import symbol as sym
        params = list(args) + [kwargs.pop(p) for p in pnames[len(args):] if p in kwargs]
        params += list(defaults[len(params):])
        kw = dict(kwargs)
        if shape is not None:
            kw["shape"] = shape
        if dtype is not None:
            kw["dtype"] = dtype
        if any(isinstance(p, Symbol) for p in params):
            return getattr(sym._internal, array_op)(*params, name=name, **kw)
        kw.update(zip(pnames, params))
        return getattr(sym._internal, scalar_op)(name=name, **kw)
    fn.__name__ = name
    return fn


def install(ns) -> None:
    from ..ops import registry
    for name, (sop, aop, pnames, defaults) in _FORMS.items():
        if registry.find(sop) and registry.find(aop):
            setattr(ns, name, _make(name, sop, aop, pnames, defaults))

"""``mx.sym.np``: the symbol namespace in NumPy mode.

``_Symbol`` (what ``Symbol.as_np_ndarray()`` returns), the NumPy functions on symbols,
``mx.sym.npx`` (:mod:`._npx`), and ``load``/``load_json`` returning ``_Symbol``.
"""
from . import _npx, linalg, random
from ._op import *  # noqa: F403
from ._op_ext import *  # noqa: F403
from ._op_ext import variance as _variance
from ._symbol import _Symbol, as_np_symbol
from ..symbol import Symbol as _SymbolBase, var as _var, load as _load, load_json as _load_json


def var(name, *args, **kwargs):
    """The variance of a symbol (MXNet's ``mx.sym.np.var``), or, given a name string,
    a numpy-mode variable (``mx.sym.var(name, ...).as_np_ndarray()``)."""
    if isinstance(name, _SymbolBase):
        return _variance(name, *args, **kwargs)
    return as_np_symbol(_var(name, **kwargs))


def load(fname):
    """Load a symbol JSON file as a ``_Symbol``."""
    return as_np_symbol(_load(fname))


def load_json(json_str):
    """Load a symbol from JSON text as a ``_Symbol``."""
    return as_np_symbol(_load_json(json_str))


fromjson = load_json

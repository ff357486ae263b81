"""``mx.sym.np``: the symbol namespace in NumPy mode.

``_Symbol`` (what ``Symbol.as_np_ndarray()`` returns), the NumPy functions on symbols,
``mx.sym.npx`` (:mod:`._npx`), and ``load``/``load_json`` returning ``_Symbol``.
"""
from . import _npx  # noqa: F401
from ._op import *  # noqa: F401,F403
from ._symbol import _Symbol, as_np_symbol  # noqa: F401
from ..symbol import var as _var, load as _load, load_json as _load_json


def var(name, **kwargs):
    """A numpy-mode variable (``mx.sym.var(name, ...).as_np_ndarray()``)."""
    return as_np_symbol(_var(name, **kwargs))


def load(fname):
    """Load a symbol JSON file as a ``_Symbol``."""
    return as_np_symbol(_load(fname))


def load_json(json_str):
    """Load a symbol from JSON text as a ``_Symbol``."""
    return as_np_symbol(_load_json(json_str))


fromjson = load_json

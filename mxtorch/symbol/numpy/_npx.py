"""``mx.sym.npx``: the symbolic ``npx`` operators (``F.npx`` when hybridizing in NumPy mode).

Each function creates a node of the registered operator MXNet 1.9.1's ``sym.npx``
creates (``npx.fully_connected`` -> ``FullyConnected``) and returns a ``_Symbol``.
"""
from __future__ import annotations

from typing import Callable

from ...ops import registry as _reg
from ...ops.np_ops import NPX_FUNCTIONS
from ..symbol import Symbol
from ..register import create_symbol
from ._symbol import as_np_symbol, make_np

__all__ = list(NPX_FUNCTIONS)


def _make(fname: str, opname: str) -> Callable:
    opdef = _reg.get(opname)

    def fn(*args, name=None, attr=None, out=None, **kwargs):
        attrs = {k: v for k, v in kwargs.items()
                 if not isinstance(v, Symbol) and not (v is None and k not in opdef.params)}
        names = opdef.input_names(opdef.parse_attrs(attrs))
        if len(args) > len(names):
            raise TypeError(f"npx.{fname}: {len(args)} inputs given; inputs are {names}")
        named = {n: s for n, s in zip(names, args) if s is not None}
        named.update({k: v for k, v in kwargs.items() if isinstance(v, Symbol)})
        # missing parameters (weight, bias, ...) become variables, as in mx.sym
        return as_np_symbol(create_symbol(opdef, opname, [], named, attrs, name, attr))
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"Symbolic ``npx.{fname}`` (operator ``{opname}``).\n\n{opdef.doc}"
    return fn


for _fname, _opname in NPX_FUNCTIONS.items():
    globals()[_fname] = _make(_fname, _opname)


def reshape(a, newshape, reverse=False, order='C'):
    """Symbolic ``npx.reshape`` with MXNet's codes -1..-6 (see ``mx.npx.reshape``)."""
    shape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    attrs = {"newshape": shape}
    if reverse:
        attrs["reverse"] = True
    if order != 'C':
        attrs["order"] = order
    return make_np("_npx_reshape", [a], attrs)


def nonzero(a):
    """Symbolic ``npx.nonzero``."""
    return make_np("_npx_nonzero", [a], {})

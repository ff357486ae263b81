"""``mx.sym.np._Symbol``: a Symbol whose outputs are ``mx.np.ndarray`` when run.

A ``_Symbol`` shares the node graph of the Symbol it came from (``as_np_ndarray``);
its operators emit MXNet 1.9.1's numpy-mode operators (``_npi_add``, ``_np_reshape``,
``_np_sum``, ...), so an exported numpy-mode graph carries the names MXNet writes.
A CachedOp (hence a hybridized Block) built from a ``_Symbol`` returns ``mx.np.ndarray``.
"""
from __future__ import annotations

import numbers

import numpy as _onp

from ...base import MXNetError
from ...ops import np_ops as _np_ops  # noqa: F401  (registers the _npi_/_np_/_npx_ ops)
from ...ops import registry as _reg
from ..register import create_symbol
from ..symbol import Symbol

__all__ = ["_Symbol", "make_np", "binary", "as_np_symbol"]


def as_np_symbol(sym):
    """``sym`` as a ``_Symbol`` (same graph); other values are returned unchanged."""
    if isinstance(sym, Symbol) and not isinstance(sym, _Symbol):
        return _Symbol(sym._outputs)
    return sym


def make_np(opname: str, inputs: list, attrs: dict, name: str | None = None,
            attr: dict | None = None) -> "_Symbol":
    """Create one node of the registered operator ``opname``; return it as ``_Symbol``."""
    for s in inputs:
        if not isinstance(s, Symbol):
            raise TypeError(f"{opname}: expected Symbol inputs, got {type(s).__name__}")
    hint = opname
    for pre in ("_npi_", "_np_", "_npx_"):
        if opname.startswith(pre):
            hint = opname[len(pre):]  # MXNet names nodes like "rsubtract_scalar0"
    sym = create_symbol(_reg.get(opname), hint, list(inputs), {}, dict(attrs), name, attr)
    return _Symbol(sym._outputs)


def _is_scalar(v) -> bool:
    return isinstance(v, (numbers.Number, _onp.generic))


def _scalar_attrs(v, reflected: bool = False) -> dict:
    # MXNet: the scalar is stored as a float; is_int says whether it was a Python int.
    # A scalar on the left (reflected operators but __radd__) is passed as float first.
    is_int = isinstance(v, (int, _onp.integer)) and not isinstance(v, bool) and not reflected
    return {"scalar": float(v), "is_int": is_int}


def binary(lhs, rhs, op: str, reflect_op: str | None = None) -> "_Symbol":
    """``op`` of two symbols, or its ``_scalar`` form (``reflect_op`` for scalar-lhs)."""
    if isinstance(lhs, Symbol) and isinstance(rhs, Symbol):
        return make_np(op, [lhs, rhs], {})
    if isinstance(lhs, Symbol) and _is_scalar(rhs):
        return make_np(op + "_scalar", [lhs], _scalar_attrs(rhs))
    if isinstance(rhs, Symbol) and _is_scalar(lhs):
        return make_np(reflect_op or op + "_scalar", [rhs], _scalar_attrs(lhs, True))
    raise TypeError(f"{op}: unsupported operand types {type(lhs).__name__} and "
                    f"{type(rhs).__name__}")


class _Symbol(Symbol):
    """A symbol in numpy mode (``mxnet.symbol.numpy._Symbol``)."""

    __slots__ = ()

    # ------------------------------------------------------------------ conversion
    def as_np_ndarray(self) -> "_Symbol":
        return self

    def as_nd_ndarray(self) -> Symbol:
        """The same graph as a classic Symbol."""
        return Symbol(self._outputs)

    # ------------------------------------------------------------------ structure
    def __iter__(self):
        return (_Symbol([e]) for e in self._outputs)

    def __getitem__(self, key):
        if len(self._outputs) > 1 or isinstance(key, str):
            return as_np_symbol(Symbol.__getitem__(self, key))
        return _index(self, key)

    def get_internals(self) -> "_Symbol":
        return as_np_symbol(Symbol.get_internals(self))

    def get_children(self):
        return as_np_symbol(Symbol.get_children(self))

    def __copy__(self) -> "_Symbol":
        return as_np_symbol(Symbol.__copy__(self))

    def __deepcopy__(self, memo) -> "_Symbol":
        return as_np_symbol(Symbol.__deepcopy__(self, memo))

    def copy(self) -> "_Symbol":
        return as_np_symbol(Symbol.copy(self))

    def __call__(self, *args, **kwargs) -> "_Symbol":
        return as_np_symbol(Symbol.__call__(self, *args, **kwargs))

    def __repr__(self) -> str:
        return Symbol.__repr__(self).replace("<Symbol", "<_Symbol", 1)

    __str__ = __repr__

    # ------------------------------------------------------------------ arithmetic
    def __add__(self, other):
        return binary(self, other, "_npi_add")

    def __radd__(self, other):
        return binary(self, other, "_npi_add")  # MXNet: __radd__ is __add__

    def __sub__(self, other):
        return binary(self, other, "_npi_subtract")

    def __rsub__(self, other):
        return binary(other, self, "_npi_subtract", "_npi_rsubtract_scalar")

    def __mul__(self, other):
        return binary(self, other, "_npi_multiply")

    def __rmul__(self, other):
        return binary(other, self, "_npi_multiply")

    def __truediv__(self, other):
        return binary(self, other, "_npi_true_divide")

    def __rtruediv__(self, other):
        return binary(other, self, "_npi_true_divide", "_npi_rtrue_divide_scalar")

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __mod__(self, other):
        return binary(self, other, "_npi_mod")

    def __rmod__(self, other):
        return binary(other, self, "_npi_mod", "_npi_rmod_scalar")

    def __pow__(self, other):
        return binary(self, other, "_npi_power")

    def __rpow__(self, other):
        return binary(other, self, "_npi_power", "_npi_rpower_scalar")

    def __neg__(self):
        # MXNet: -x is written as x * -1.0
        return make_np("_npi_multiply_scalar", [self], {"scalar": -1.0, "is_int": False})

    def __abs__(self):
        return make_np("_npi_absolute", [self], {})

    def __eq__(self, other):
        return binary(self, other, "_npi_equal")

    def __ne__(self, other):
        return binary(self, other, "_npi_not_equal")

    def __gt__(self, other):
        return binary(self, other, "_npi_greater")

    def __ge__(self, other):
        return binary(self, other, "_npi_greater_equal")

    def __lt__(self, other):
        return binary(self, other, "_npi_less")

    def __le__(self, other):
        return binary(self, other, "_npi_less_equal")

    __hash__ = Symbol.__hash__

    # ------------------------------------------------------------------ array methods
    def reshape(self, *args, **kwargs) -> "_Symbol":
        """NumPy reshape (``order='C'`` only)."""
        order = kwargs.pop("order", "C")
        shape = kwargs.pop("newshape", kwargs.pop("shape", None))
        if kwargs:
            raise TypeError(f"reshape: unexpected arguments {sorted(kwargs)}")
        if shape is None:
            shape = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) \
                else args
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return make_np("_np_reshape", [self], {"newshape": shape, "order": order})

    def transpose(self, *axes) -> "_Symbol":
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        return make_np("_np_transpose", [self], {"axes": axes or None})

    @property
    def T(self) -> "_Symbol":
        return make_np("_np_transpose", [self], {"axes": None})

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return make_np("Cast", [self], {"dtype": _onp.dtype(dtype).name})

    def flatten(self, order="C") -> "_Symbol":
        return make_np("_np_reshape", [self], {"newshape": (-1,), "order": order})

    def squeeze(self, axis=None) -> "_Symbol":
        return make_np("_np_squeeze", [self], {"axis": axis})

    def _reduce(self, opname, axis=None, dtype=None, keepdims=False, **kw):
        attrs = {"keepdims": keepdims}
        if axis is not None:
            attrs["axis"] = axis
        if dtype is not None:
            attrs["dtype"] = _onp.dtype(dtype).name
        return make_np(opname, [self], attrs)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return self._reduce("_np_sum", axis, dtype, keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return self._reduce("_npi_mean", axis, dtype, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return self._reduce("_np_prod", axis, dtype, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return self._reduce("_np_max", axis, None, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return self._reduce("_np_min", axis, None, keepdims)

    def argmax(self, axis=None, out=None):
        return make_np("_npi_argmax", [self], {"axis": axis})

    def dot(self, b, out=None):
        return make_np("_np_dot", [self, b], {})

    def __getattr__(self, name):
        fn = Symbol.__getattr__(self, name)
        return lambda *args, **kwargs: as_np_symbol(fn(*args, **kwargs))


def _index(sym: _Symbol, key) -> _Symbol:
    """Basic indexing with integers and slices (MXNet's ``slice`` + squeeze)."""
    parts = key if isinstance(key, tuple) else (key,)
    begin, end, step, drop = [], [], [], []
    for axis, k in enumerate(parts):
        if isinstance(k, (int, _onp.integer)):
            k = int(k)
            begin.append(k)
            end.append(k + 1 if k != -1 else None)
            step.append(1)
            drop.append(axis)
        elif isinstance(k, slice):
            begin.append(k.start)
            end.append(k.stop)
            step.append(k.step)
        else:
            raise MXNetError(f"numpy symbol indexing supports ints and slices, got {k!r}")
    out = make_np("slice", [sym], {"begin": tuple(begin), "end": tuple(end),
                                   "step": tuple(step)})
    if drop:
        out = make_np("_np_squeeze", [out], {"axis": tuple(drop)})
    return out

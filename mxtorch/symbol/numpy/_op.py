"""``mx.sym.np`` functions: NumPy functions on ``_Symbol`` (``F.np`` when hybridized).

Each builds a node of the operator MXNet 1.9.1 emits for it (``np.add`` ->
``_npi_add``, ``np.sum`` -> ``_np_sum``, ``np.maximum`` -> ``broadcast_maximum``, ...).
"""
from __future__ import annotations

import numpy as _onp

from ..symbol import Symbol
from ._symbol import _Symbol, binary, make_np

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "power", "mod",
           "remainder", "equal", "not_equal", "greater", "greater_equal", "less",
           "less_equal", "maximum", "minimum", "square", "abs", "absolute", "negative",
           "sign", "log", "log1p", "exp", "expm1", "sqrt", "tanh", "sin", "cos", "copy",
           "sum", "mean", "prod", "max", "amax", "min", "amin", "argmax", "reshape",
           "transpose", "squeeze", "expand_dims", "concatenate", "stack", "dot", "matmul",
           "where", "broadcast_to", "clip", "zeros_like", "ones_like", "full_like", "zeros",
           "ones"]


def _binary_fn(op: str, reflect_op: str | None = None, doc: str = ""):
    def fn(x1, x2, out=None, **kwargs):
        return binary(x1, x2, op, reflect_op)
    fn.__doc__ = doc or f"Symbolic NumPy ``{op[5:]}`` with broadcasting."
    return fn


add = _binary_fn("_npi_add")
subtract = _binary_fn("_npi_subtract", "_npi_rsubtract_scalar")
multiply = _binary_fn("_npi_multiply")
true_divide = _binary_fn("_npi_true_divide", "_npi_rtrue_divide_scalar")
divide = true_divide
power = _binary_fn("_npi_power", "_npi_rpower_scalar")
mod = _binary_fn("_npi_mod", "_npi_rmod_scalar")
remainder = mod
equal = _binary_fn("_npi_equal")
not_equal = _binary_fn("_npi_not_equal")
greater = _binary_fn("_npi_greater", "_npi_less_scalar")
greater_equal = _binary_fn("_npi_greater_equal", "_npi_less_equal_scalar")
less = _binary_fn("_npi_less", "_npi_greater_scalar")
less_equal = _binary_fn("_npi_less_equal", "_npi_greater_equal_scalar")


def _extreme(array_op: str, scalar_op: str):
    def fn(x1, x2, out=None, **kwargs):
        if isinstance(x1, Symbol) and isinstance(x2, Symbol):
            return make_np(array_op, [x1, x2], {})
        sym, scalar = (x1, x2) if isinstance(x1, Symbol) else (x2, x1)
        return make_np(scalar_op, [sym], {"scalar": float(scalar),
                                          "is_int": isinstance(scalar, int)})
    fn.__doc__ = f"Symbolic elementwise {array_op[10:]} (MXNet emits ``{array_op}``)."
    return fn


maximum = _extreme("broadcast_maximum", "_maximum_scalar")
minimum = _extreme("broadcast_minimum", "_minimum_scalar")


def _unary_fn(op: str):
    def fn(x, out=None, **kwargs):
        return make_np(op, [x], {})
    fn.__doc__ = f"Symbolic NumPy ``{op.split('_', 2)[-1]}``."
    return fn


square = _unary_fn("_npi_square")
absolute = _unary_fn("_npi_absolute")
abs = absolute  # noqa: A001 - NumPy's name
negative = _unary_fn("_npi_negative")
sign = _unary_fn("_npi_sign")
log = _unary_fn("_npi_log")
log1p = _unary_fn("_npi_log1p")
exp = _unary_fn("_npi_exp")
expm1 = _unary_fn("_npi_expm1")
sqrt = _unary_fn("_npi_sqrt")
tanh = _unary_fn("_npi_tanh")
sin = _unary_fn("_npi_sin")
cos = _unary_fn("_npi_cos")
copy = _unary_fn("_np_copy")


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):  # noqa: A001
    """Symbolic sum over ``axis`` (``_np_sum``)."""
    return _Symbol._reduce(a, "_np_sum", axis, dtype, keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Symbolic mean over ``axis`` (``_npi_mean``)."""
    return _Symbol._reduce(a, "_npi_mean", axis, dtype, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """Symbolic product over ``axis`` (``_np_prod``)."""
    return _Symbol._reduce(a, "_np_prod", axis, dtype, keepdims)


def amax(a, axis=None, out=None, keepdims=False):
    """Symbolic maximum over ``axis`` (``_np_max``)."""
    return _Symbol._reduce(a, "_np_max", axis, None, keepdims)


def amin(a, axis=None, out=None, keepdims=False):
    """Symbolic minimum over ``axis`` (``_np_min``)."""
    return _Symbol._reduce(a, "_np_min", axis, None, keepdims)


max = amax  # noqa: A001
min = amin  # noqa: A001


def argmax(a, axis=None, out=None):
    """Symbolic indices of the maxima (int64)."""
    return make_np("_npi_argmax", [a], {"axis": axis, "keepdims": False})


def reshape(a, newshape, order="C"):
    """Symbolic NumPy reshape (``_np_reshape``)."""
    shape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    return make_np("_np_reshape", [a], {"newshape": shape})


def transpose(a, axes=None):
    """Symbolic transpose (``_np_transpose``)."""
    return make_np("_np_transpose", [a], {} if axes is None else {"axes": tuple(axes)})


def squeeze(a, axis=None):
    """Symbolic squeeze (``_np_squeeze``)."""
    return make_np("_np_squeeze", [a], {} if axis is None else {"axis": axis})


def expand_dims(a, axis):
    """Insert a new axis (MXNet emits ``expand_dims``)."""
    return make_np("expand_dims", [a], {"axis": axis})


def concatenate(seq, axis=0, out=None):
    """Join symbols along an existing axis (``_npi_concatenate``)."""
    return make_np("_npi_concatenate", list(seq), {"axis": axis, "num_args": len(seq)})


def stack(arrays, axis=0, out=None):
    """Join symbols along a new axis (``_npi_stack``)."""
    return make_np("_npi_stack", list(arrays), {"axis": axis, "num_args": len(arrays)})


def dot(a, b, out=None):
    """Symbolic NumPy dot (``_np_dot``)."""
    return make_np("_np_dot", [a, b], {})


def matmul(a, b, out=None, **kwargs):
    """Symbolic NumPy matmul (``_npi_matmul``)."""
    return make_np("_npi_matmul", [a, b], {})


def where(condition, x, y):
    """Elements of ``x`` where ``condition`` holds, else of ``y`` (``_npi_where``)."""
    return make_np("_npi_where", [condition, x, y], {})


def broadcast_to(array, shape):
    """Broadcast to ``shape`` (``_npi_broadcast_to``)."""
    return make_np("_npi_broadcast_to", [array], {"shape": tuple(shape)})


def clip(a, a_min, a_max, out=None):
    """Clip values to ``[a_min, a_max]`` (MXNet emits ``clip``)."""
    return make_np("clip", [a], {"a_min": a_min, "a_max": a_max})


def full_like(a, fill_value, dtype=None, order="C", ctx=None, out=None):
    """An array of ``fill_value`` shaped like ``a`` (``_npi_full_like``)."""
    attrs = {"fill_value": fill_value, "ctx": str(ctx or "cpu(0)")}
    if dtype is not None:
        attrs["dtype"] = _onp.dtype(dtype).name
    return make_np("_npi_full_like", [a], attrs)


def zeros_like(a, dtype=None, order="C", ctx=None, out=None):
    """Zeros shaped like ``a``."""
    return full_like(a, 0, dtype, order, ctx)


def ones_like(a, dtype=None, order="C", ctx=None, out=None):
    """Ones shaped like ``a``."""
    return full_like(a, 1, dtype, order, ctx)


def _creator(op: str):
    def fn(shape, dtype="float32", order="C", ctx=None):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return make_np(op, [], {"shape": shape, "ctx": str(ctx or "cpu(0)"),
                                "dtype": _onp.dtype(dtype or "float32").name})
    fn.__doc__ = f"A symbolic array of {op[5:]} (``{op}``)."
    return fn


zeros = _creator("_npi_zeros")
ones = _creator("_npi_ones")

"""More ``mx.sym.np`` functions: elementwise math, reductions, shapes and creation.

Each builds the node MXNet 1.9.1 emits for it (``np.arcsin`` -> ``_npi_arcsin``,
``np.swapaxes`` -> ``SwapAxis``, ``np.full`` -> ``_full``, ...).
"""
from __future__ import annotations

import numpy as _onp

from ..symbol import Symbol
from ._symbol import _scalar_attrs, binary, make_np

_UNARY = ["arcsin", "arccos", "arctan", "sinh", "cosh", "tan", "arcsinh", "arccosh",
          "arctanh", "log2", "log10", "cbrt", "reciprocal", "degrees", "radians", "floor",
          "ceil", "trunc", "fix", "rint", "logical_not", "isnan", "isinf", "isfinite"]
_BINARY = {"arctan2": "_npi_rarctan2_scalar", "copysign": "_npi_rcopysign_scalar",
           "ldexp": "_npi_rldexp_scalar", "lcm": None, "bitwise_and": None,
           "bitwise_or": None, "bitwise_xor": None}

__all__ = _UNARY + list(_BINARY) + [
    "invert", "bitwise_not", "hypot", "std", "argmin", "cumsum", "all", "any", "moveaxis",
    "swapaxes", "tile", "repeat", "flip", "roll", "ravel", "tril", "sort", "argsort",
    "take", "diag", "trace", "outer", "tensordot", "vstack", "hstack", "around", "round",
    "einsum", "full", "arange", "eye", "identity", "linspace", "variance"]


def _unary(op: str):
    def fn(x, out=None, **kwargs):
        return make_np(op, [x], {})
    fn.__name__ = op[5:]
    fn.__doc__ = f"Symbolic NumPy ``{op[5:]}`` (``{op}``)."
    return fn


def _binary(short: str, reflect_op):
    def fn(x1, x2, out=None, **kwargs):
        return binary(x1, x2, f"_npi_{short}", reflect_op)
    fn.__name__ = short
    fn.__doc__ = f"Symbolic NumPy ``{short}`` with broadcasting (``_npi_{short}``)."
    return fn


for _n in _UNARY:
    globals()[_n] = _unary(f"_npi_{_n}")
for _n, _r in _BINARY.items():
    globals()[_n] = _binary(_n, _r)
invert = bitwise_not = _unary("_npi_bitwise_not")


def hypot(x1, x2, out=None, **kwargs):
    """Symbolic ``hypot``; MXNet emits the legacy ``_hypot_scalar`` for a scalar operand."""
    if isinstance(x1, Symbol) and isinstance(x2, Symbol):
        return make_np("_npi_hypot", [x1, x2], {})
    sym, scalar = (x1, x2) if isinstance(x1, Symbol) else (x2, x1)
    return make_np("_hypot_scalar", [sym], _scalar_attrs(scalar))


def _given(**attrs) -> dict:
    """The attributes that were given (MXNet writes only those, for these functions)."""
    return {k: v for k, v in attrs.items() if v is not None}


def _moment_attrs(axis, dtype, ddof, keepdims) -> dict:
    attrs = {"axis": axis, "ddof": ddof, "keepdims": keepdims}
    if dtype is not None:
        attrs["dtype"] = _onp.dtype(dtype).name
    return attrs


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Symbolic standard deviation (``_npi_std``)."""
    return make_np("_npi_std", [a], _moment_attrs(axis, dtype, ddof, keepdims))


def variance(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Symbolic variance (``_npi_var``); ``mx.sym.np.var`` when given a symbol."""
    return make_np("_npi_var", [a], _moment_attrs(axis, dtype, ddof, keepdims))


def argmin(a, axis=None, out=None):
    """Symbolic indices of the minima (int64)."""
    return make_np("_npi_argmin", [a], {"axis": axis, "keepdims": False})


def cumsum(a, axis=None, dtype=None, out=None):
    """Symbolic cumulative sum (``_np_cumsum``; of the flattened array when axis=None)."""
    attrs = {} if axis is None else {"axis": axis}
    if dtype is not None:
        attrs["dtype"] = _onp.dtype(dtype).name
    return make_np("_np_cumsum", [a], attrs)


def all(a, axis=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Whether all elements along ``axis`` are true (``_np_all``)."""
    return make_np("_np_all", [a], _given(axis=axis, keepdims=keepdims or None))


def any(a, axis=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Whether any element along ``axis`` is true (``_np_any``)."""
    return make_np("_np_any", [a], _given(axis=axis, keepdims=keepdims or None))


def moveaxis(a, source, destination):
    """Move axes to new positions (``_np_moveaxis``)."""
    return make_np("_np_moveaxis", [a], {"source": source, "destination": destination})


def swapaxes(a, axis1, axis2):
    """Interchange two axes (MXNet emits ``SwapAxis``)."""
    return make_np("SwapAxis", [a], {"dim1": axis1, "dim2": axis2})


def tile(A, reps):
    """Repeat the whole array (``tile``)."""
    return make_np("tile", [A], {"reps": (reps,) if isinstance(reps, int) else tuple(reps)})


def repeat(a, repeats, axis=None):
    """Repeat each element (``repeat``)."""
    return make_np("repeat", [a], {"repeats": repeats, "axis": axis})


def flip(m, axis=None, out=None):
    """Reverse along ``axis`` (``_npi_flip``)."""
    return make_np("_npi_flip", [m], {"axis": axis})


def roll(a, shift, axis=None):
    """Roll elements along ``axis`` (``_np_roll``)."""
    return make_np("_np_roll", [a], _given(shift=shift, axis=axis))


def ravel(x, order="C"):
    """Flatten (MXNet emits ``_npx_reshape`` with newshape -1)."""
    return make_np("_npx_reshape", [x], {"newshape": -1})


def tril(m, k=0):
    """Lower triangle (``_npi_tril``)."""
    return make_np("_npi_tril", [m], {"k": k})


def sort(a, axis=-1, kind=None, order=None):
    """Sorted copy (MXNet emits ``sort``)."""
    return make_np("sort", [a], {"axis": axis, "is_ascend": True})


def argsort(a, axis=-1, kind=None, order=None):
    """Indices that sort ``a`` (``argsort``, int64)."""
    return make_np("argsort", [a], {"axis": axis, "is_ascend": True, "dtype": "int64"})


def take(a, indices, axis=None, mode="raise", out=None):
    """Take elements along ``axis`` (``take``; the flattened array when None)."""
    if axis is None:
        return make_np("take", [ravel(a), indices], {"axis": 0, "mode": mode})
    return make_np("take", [a, indices], {"axis": axis, "mode": mode})


def diag(v, k=0):
    """A diagonal, or a diagonal array (``_np_diag``)."""
    return make_np("_np_diag", [v], _given(k=k or None))


def trace(a, offset=0, axis1=0, axis2=1, out=None):
    """Sum along a diagonal (``_np_trace``)."""
    return make_np("_np_trace", [a], _given(offset=offset or None, axis1=axis1 or None,
                                            axis2=None if axis2 == 1 else axis2))


def tensordot(a, b, axes=2):
    """Tensor dot product over ``axes``: an int (``_npi_tensordot_int_axes``) or a pair of
    axis lists (``_npi_tensordot``)."""
    if isinstance(axes, int):
        return make_np("_npi_tensordot_int_axes", [a, b], {"axes": axes})
    a_axes, b_axes = axes
    a_axes = [a_axes] if isinstance(a_axes, int) else list(a_axes)
    b_axes = [b_axes] if isinstance(b_axes, int) else list(b_axes)
    return make_np("_npi_tensordot", [a, b], {"a_axes_summed": a_axes,
                                             "b_axes_summed": b_axes})


def outer(a, b):
    """Outer product of the flattened inputs (``tensordot`` with axes=0)."""
    return tensordot(ravel(a), ravel(b), 0)


def vstack(arrays, out=None):
    """Stack row-wise (``_npi_vstack``)."""
    return make_np("_npi_vstack", list(arrays), {"num_args": len(arrays)})


def hstack(arrays):
    """Stack column-wise (``_npi_hstack``)."""
    return make_np("_npi_hstack", list(arrays), {"num_args": len(arrays)})


def around(x, decimals=0, out=None, **kwargs):
    """Round half to even (``_npi_around``)."""
    return make_np("_npi_around", [x], {"decimals": decimals})


round = around  # noqa: A001 - NumPy's name


def einsum(*operands, **kwargs):
    """Einstein summation: ``einsum(subscripts, *symbols)`` (``_npi_einsum``)."""
    subscripts, syms = operands[0], list(operands[1:])
    return make_np("_npi_einsum", syms, {"subscripts": subscripts, "num_args": len(syms),
                                         "optimize": int(bool(kwargs.get("optimize")))})


def _ctx(ctx) -> str:
    return str(ctx or "cpu(0)")


def full(shape, fill_value, dtype=None, order="C", ctx=None, out=None):
    """An array of ``fill_value`` (MXNet emits ``_full``)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return make_np("_full", [], {"shape": shape, "value": float(fill_value), "ctx": _ctx(ctx),
                                 "dtype": _onp.dtype(dtype or "float32").name})


def arange(start, stop=None, step=1, dtype=None, ctx=None):
    """Evenly spaced values in ``[start, stop)`` (``_npi_arange``)."""
    if stop is None:
        start, stop = 0, start
    return make_np("_npi_arange", [], {"start": start, "stop": stop, "step": step,
                                       "ctx": _ctx(ctx),
                                       "dtype": _onp.dtype(dtype or "float32").name})


def eye(N, M=None, k=0, dtype="float32", **kwargs):
    """Ones on diagonal ``k`` of an N x M array (``_npi_eye``)."""
    return make_np("_npi_eye", [], {"N": N, "M": M, "k": k, "ctx": _ctx(kwargs.get("ctx")),
                                    "dtype": _onp.dtype(dtype or "float32").name})


def identity(n, dtype=None, ctx=None):
    """The n x n identity (``_npi_identity``)."""
    return make_np("_npi_identity", [], {"shape": (n, n), "ctx": _ctx(ctx),
                                         "dtype": _onp.dtype(dtype or "float32").name})


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             ctx=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (``_linspace``)."""
    attrs = {"start": start, "stop": stop, "num": num, "endpoint": endpoint,
             "ctx": _ctx(ctx)}
    if dtype is not None:
        attrs["dtype"] = _onp.dtype(dtype).name
    return make_np("_linspace", [], attrs)


def fliplr(m):
    """Reverse columns (``_npi_flip`` on axis 1)."""
    return make_np("_npi_flip", [m], {"axis": 1})


def flipud(m):
    """Reverse rows (``_npi_flip`` on axis 0)."""
    return make_np("_npi_flip", [m], {"axis": 0})


fabs = absolute = _unary("_npi_absolute")
row_stack = vstack
round_ = around


def split(ary, indices_or_sections, axis=0):
    """Split into several outputs (MXNet emits ``_split_v2``; one symbol, many outputs)."""
    # MXNet: the indices are written as a list, "[0, 1, 3]" (0 prepended), "[]" for sections
    if isinstance(indices_or_sections, int):
        attrs = {"indices": "[]", "sections": indices_or_sections}
    else:
        attrs = {"indices": str([0] + [int(i) for i in indices_or_sections]), "sections": 0}
    attrs.update(axis=axis, squeeze_axis=False)
    return make_np("_split_v2", [ary], attrs)


def array_split(ary, indices_or_sections, axis=0):
    """``split`` (MXNet emits the same ``_split_v2`` node)."""
    return split(ary, indices_or_sections, axis)


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0."""
    return split(ary, indices_or_sections, 0)


__all__ += ["fliplr", "flipud", "fabs", "row_stack", "round_", "split", "array_split",
            "vsplit"]

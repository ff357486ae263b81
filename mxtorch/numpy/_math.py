"""Elementwise ufuncs and products of ``mx.np`` with MXNet 1.9.1's dtype rules.

MXNet's rules (checked against 1.9.1), which differ from NumPy in places:
- array op array: same dtype stays; float with int/bool gives the float's dtype; two
  floats give the wider; two ints promote as NumPy except int8 with uint8 -> int32.
- array op Python scalar: the array's dtype wins and the scalar is cast to it first
  (``int32 * 2.5 == int32 * 2``); a bool array with a non-bool scalar becomes int64.
- true division of integers gives float32; comparisons and logical ops give bool.
- transcendental functions of integer arrays keep the integer dtype (truncated).
"""
from __future__ import annotations

import numbers

import numpy as onp
import torch

from ..ndarray.ndarray import NDArray
from .multiarray import _ctx_of, _grad_scope, np_op, to_tensor, wrap

_INT8_PAIR = {torch.int8, torch.uint8}


def _promote(a: torch.dtype, b: torch.dtype) -> torch.dtype:
    """MXNet's array-array type promotion."""
    if a == b:
        return a
    fa, fb = a.is_floating_point, b.is_floating_point
    if fa and not fb:
        return a
    if fb and not fa:
        return b
    if {a, b} == _INT8_PAIR:
        return torch.int32  # MXNet: int8 with uint8 -> int32 (NumPy: int16)
    return torch.promote_types(a, b)


def _is_scalar(x) -> bool:
    return isinstance(x, (numbers.Number, onp.generic)) and not isinstance(x, onp.ndarray)


def _scalar_tensor(s, like: torch.Tensor) -> tuple[torch.Tensor, torch.dtype]:
    """A Python scalar as a 0-d tensor under MXNet's array-wins rule."""
    dt = like.dtype
    if dt == torch.bool and not isinstance(s, (bool, onp.bool_)):
        dt = torch.int64  # MXNet: bool array with a number -> int64
    if not dt.is_floating_point and dt != torch.bool:
        s = int(s)  # MXNet: the scalar is cast to the integer dtype first
    return torch.tensor(s, dtype=dt, device=like.device), dt


def _operands(x1, x2):
    """Tensors, result dtype and context of a binary ufunc's operands."""
    s1, s2 = _is_scalar(x1), _is_scalar(x2)
    for x in (x1, x2):
        if not (s1 or s2) and not isinstance(x, NDArray) or isinstance(x, (list, onp.ndarray)):
            raise TypeError(f"type {type(x)} not supported")
    if s1 and s2:
        t1, t2 = to_tensor(x1), to_tensor(x2)
        return t1, t2, torch.float32, _ctx_of()
    if s2:
        t1 = x1._t
        t2, dt = _scalar_tensor(x2, t1)
        return t1, t2, dt, x1._ctx
    if s1:
        t2 = x2._t
        t1, dt = _scalar_tensor(x1, t2)
        return t1, t2, dt, x2._ctx
    t1, t2 = x1._t, x2._t
    return t1, t2, _promote(t1.dtype, t2.dtype), x1._ctx


def _finish(res: torch.Tensor, ctx, out):
    if out is None:
        return wrap(res, ctx)
    with _grad_scope():
        out._t.copy_(res)
    return out


def _binary(name: str, fn, kind: str = "arith"):
    """Build an np binary ufunc; ``kind`` is arith, divide, float, bool or int."""
    def ufunc(x1, x2, out=None, **kwargs):
        t1, t2, dt, ctx = _operands(x1, x2)
        if kind == "bool":
            res = fn(t1.to(dt), t2.to(dt))
        elif kind == "divide" or kind == "float":
            if not dt.is_floating_point:
                dt = torch.float32  # MXNet: integer true division gives float32
            res = fn(t1.to(dt), t2.to(dt))
        elif kind == "float64":
            res = fn(t1.to(torch.float64), t2.to(torch.float64))
        else:
            res = fn(t1.to(dt), t2.to(dt))
            if res.dtype != dt:
                res = res.to(dt)
        return _finish(res, ctx, out)
    ufunc.__name__ = name
    ufunc.__doc__ = f"Elementwise ``{name}`` with broadcasting (NumPy semantics)."
    return np_op(ufunc)


def _unary(name: str, fn, kind: str = "float"):
    """Build an np unary ufunc; ``kind`` is float, same, bool or int."""
    def ufunc(x, out=None, **kwargs):
        t = x._t if isinstance(x, NDArray) else to_tensor(x)
        ctx = x._ctx if isinstance(x, NDArray) else _ctx_of()
        if kind == "float" and not t.is_floating_point():
            res = fn(t.to(torch.float32))
            if t.dtype != torch.bool:
                res = res.to(t.dtype)  # MXNet: integer input keeps its dtype (truncated)
        else:
            res = fn(t)
        return _finish(res, ctx, out)
    ufunc.__name__ = name
    ufunc.__doc__ = f"Elementwise ``{name}`` (NumPy semantics)."
    return np_op(ufunc)


_BINARY = [
    ("add", torch.add, "arith"), ("subtract", torch.sub, "arith"),
    ("multiply", torch.mul, "arith"), ("divide", torch.true_divide, "divide"),
    ("true_divide", torch.true_divide, "divide"), ("floor_divide", torch.floor_divide, "arith"),
    ("mod", torch.remainder, "arith"), ("remainder", torch.remainder, "arith"),
    ("power", torch.pow, "arith"), ("float_power", torch.pow, "float64"),
    ("maximum", torch.maximum, "arith"), ("minimum", torch.minimum, "arith"),
    ("fmax", torch.fmax, "arith"), ("fmin", torch.fmin, "arith"),
    ("hypot", torch.hypot, "float"), ("arctan2", torch.atan2, "float"),
    ("copysign", torch.copysign, "float"), ("lcm", torch.lcm, "arith"), ("gcd", torch.gcd, "arith"),
    ("bitwise_and", torch.bitwise_and, "arith"), ("bitwise_or", torch.bitwise_or, "arith"),
    ("bitwise_xor", torch.bitwise_xor, "arith"),
    ("left_shift", torch.bitwise_left_shift, "arith"),
    ("right_shift", torch.bitwise_right_shift, "arith"),
    ("logical_and", torch.logical_and, "bool"), ("logical_or", torch.logical_or, "bool"),
    ("logical_xor", torch.logical_xor, "bool"), ("equal", torch.eq, "bool"),
    ("not_equal", torch.ne, "bool"), ("greater", torch.gt, "bool"),
    ("greater_equal", torch.ge, "bool"), ("less", torch.lt, "bool"),
    ("less_equal", torch.le, "bool"),
]


def _ldexp(a, b):
    return a * torch.pow(2.0, b)


_BINARY.append(("ldexp", _ldexp, "float"))


def _fix(t):
    return torch.trunc(t)


_UNARY = [
    ("sqrt", torch.sqrt, "float"), ("cbrt", lambda t: torch.sign(t) * t.abs().pow(1 / 3), "float"),
    ("exp", torch.exp, "float"), ("expm1", torch.expm1, "float"), ("exp2", torch.exp2, "float"),
    ("log", torch.log, "float"), ("log2", torch.log2, "float"), ("log10", torch.log10, "float"),
    ("log1p", torch.log1p, "float"), ("sin", torch.sin, "float"), ("cos", torch.cos, "float"),
    ("tan", torch.tan, "float"), ("arcsin", torch.asin, "float"), ("arccos", torch.acos, "float"),
    ("arctan", torch.atan, "float"), ("sinh", torch.sinh, "float"), ("cosh", torch.cosh, "float"),
    ("tanh", torch.tanh, "float"), ("arcsinh", torch.asinh, "float"),
    ("arccosh", torch.acosh, "float"), ("arctanh", torch.atanh, "float"),
    ("degrees", torch.rad2deg, "float"), ("radians", torch.deg2rad, "float"),
    ("rad2deg", torch.rad2deg, "float"), ("deg2rad", torch.deg2rad, "float"),
    ("reciprocal", torch.reciprocal, "float"),
    ("floor", torch.floor, "same"), ("ceil", torch.ceil, "same"), ("trunc", torch.trunc, "same"),
    ("fix", _fix, "same"), ("rint", torch.round, "same"),
    ("abs", torch.abs, "same"), ("absolute", torch.abs, "same"), ("fabs", torch.abs, "same"),
    ("sign", torch.sign, "same"), ("square", torch.square, "same"),
    ("negative", torch.neg, "same"), ("positive", torch.clone, "same"),
    ("isnan", torch.isnan, "bool"), ("isinf", torch.isinf, "bool"),
    ("isfinite", torch.isfinite, "bool"), ("isposinf", torch.isposinf, "bool"),
    ("isneginf", torch.isneginf, "bool"), ("logical_not", torch.logical_not, "bool"),
    ("invert", torch.bitwise_not, "int"), ("bitwise_not", torch.bitwise_not, "int"),
]
_INT_SAME = ("floor", "ceil", "trunc", "fix", "rint")


def _build(ns: dict) -> None:
    for name, fn, kind in _BINARY:
        ns[name] = _binary(name, fn, kind)
    for name, fn, kind in _UNARY:
        ns[name] = _unary(name, fn, kind)


_build(globals())


def _same_int_safe(name, fn):
    """floor/ceil/trunc/rint: identity on integer arrays, torch fn on floats."""
    def ufunc(x, out=None, **kwargs):
        t = x._t
        res = fn(t) if t.is_floating_point() else t.clone()
        return _finish(res, x._ctx, out)
    ufunc.__name__ = name
    ufunc.__doc__ = f"Elementwise ``{name}`` (NumPy semantics)."
    return np_op(ufunc)


for _n, _f, _k in _UNARY:
    if _n in _INT_SAME:
        globals()[_n] = _same_int_safe(_n, _f)


@np_op
def around(x, decimals=0, out=None, **kwargs):
    """Round to the given number of decimals (half to even, as NumPy)."""
    t = x._t
    res = torch.round(t, decimals=decimals) if t.is_floating_point() else t.clone()
    return _finish(res, x._ctx, out)


round = around  # noqa: A001 - NumPy's name
round_ = around


@np_op
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, **kwargs):
    """Replace NaN and infinities with finite numbers."""
    t = x._t
    if not t.is_floating_point():
        return x.copy() if copy else x
    res = torch.nan_to_num(t, nan=nan, posinf=posinf, neginf=neginf)
    if copy:
        return wrap(res, x._ctx)
    with _grad_scope():
        t.copy_(res)
    return x


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional linear interpolation (NumPy's, returned as float64)."""
    a = onp.interp(onp.asarray(x), onp.asarray(xp), onp.asarray(fp), left, right, period)
    return wrap(torch.from_numpy(onp.asarray(a)), _ctx_of(x, xp, fp))


# ---------------------------------------------------------------------- products
def _pair(a, b):
    t1, t2 = a._t, b._t
    dt = _promote(t1.dtype, t2.dtype)
    return t1.to(dt), t2.to(dt), _ctx_of(a, b)


@np_op
def dot(a, b, out=None):
    """Dot product of two arrays (NumPy's ``dot`` rules for N-d arrays)."""
    t1, t2, ctx = _pair(a, b)
    if t1.dim() == 0 or t2.dim() == 0:
        res = t1 * t2
    elif t2.dim() == 1:
        res = torch.matmul(t1, t2)
    elif t1.dim() <= 2 and t2.dim() <= 2:
        res = torch.matmul(t1, t2)
    else:
        res = torch.tensordot(t1, t2, dims=([t1.dim() - 1], [t2.dim() - 2]))
    return _finish(res, ctx, out)


@np_op
def matmul(a, b, out=None, **kwargs):
    """Matrix product with NumPy's broadcasting rules."""
    t1, t2, ctx = _pair(a, b)
    if t1.dim() == 0 or t2.dim() == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    return _finish(torch.matmul(t1, t2), ctx, out)


@np_op
def vdot(a, b):
    """Dot product of the flattened arrays."""
    t1, t2, ctx = _pair(a, b)
    return wrap(torch.dot(t1.reshape(-1), t2.reshape(-1)), ctx)


@np_op
def inner(a, b):
    """Inner product over the last axes."""
    t1, t2, ctx = _pair(a, b)
    if t1.dim() == 0 or t2.dim() == 0:
        return wrap(t1 * t2, ctx)
    return wrap(torch.inner(t1, t2), ctx)


@np_op
def outer(a, b):
    """Outer product of the flattened arrays."""
    t1, t2, ctx = _pair(a, b)
    return wrap(torch.outer(t1.reshape(-1), t2.reshape(-1)), ctx)


@np_op
def tensordot(a, b, axes=2):
    """Tensor dot product over the given axes."""
    t1, t2, ctx = _pair(a, b)
    if not isinstance(axes, int):
        axes = tuple(tuple(ax) if isinstance(ax, (list, tuple)) else (ax,) for ax in axes)
    return wrap(torch.tensordot(t1, t2, dims=axes), ctx)


@np_op
def kron(a, b):
    """Kronecker product."""
    t1, t2, ctx = _pair(a, b)
    return wrap(torch.kron(t1, t2), ctx)


@np_op
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (2-vectors are padded with a zero z)."""
    t1, t2, ctx = _pair(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    t1, t2 = t1.movedim(axisa, -1), t2.movedim(axisb, -1)
    two = t1.shape[-1] == 2 and t2.shape[-1] == 2
    if t1.shape[-1] == 2:
        t1 = torch.nn.functional.pad(t1, (0, 1))
    if t2.shape[-1] == 2:
        t2 = torch.nn.functional.pad(t2, (0, 1))
    t1, t2 = torch.broadcast_tensors(t1, t2)
    res = torch.linalg.cross(t1, t2, dim=-1)
    if two:
        return wrap(res[..., 2], ctx)
    return wrap(res.movedim(-1, axisc), ctx)


@np_op
def einsum(*operands, out=None, optimize=False, **kwargs):
    """Einstein summation (subscripts string form)."""
    subscripts, arrays = operands[0], operands[1:]
    ts = [x._t for x in arrays]
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = _promote(dt, t.dtype)
    res = torch.einsum(subscripts, *[t.to(dt) for t in ts])
    return _finish(res, _ctx_of(*arrays), out)


@np_op
def trace(a, offset=0, axis1=0, axis2=1, out=None):
    """Sum along a diagonal."""
    t = a._t
    res = torch.diagonal(t, offset, axis1, axis2).sum(-1)
    return _finish(res.to(t.dtype) if t.dtype != torch.bool else res, a._ctx, out)

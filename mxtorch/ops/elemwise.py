"""Elementwise operators: unary math, binary (elemwise_/broadcast_/_x) and scalar forms.

Families are tables: one row per operator, expanded by one loop each. MXNet's integer
semantics are kept: integer arrays keep their dtype, float math on integers runs in
float32 and truncates back, scalars are cast to the array dtype, comparisons return the
input dtype with 0/1. Where MXNet's gradient differs from torch's at special points
(pow at 0, mod by 0, cbrt, gamma, maximum/minimum ties) the MXNet rule is used.
"""
from __future__ import annotations

import math
from typing import Callable

import torch

from ..base import MXNetError
from .params import Bool, Float, Int
from .registry import OpDef, register, same_type_infer

__all__: list[str] = []

Fn = Callable[..., torch.Tensor]


# ---------------------------------------------------------------------- helpers
def _float_only(fn: Fn) -> Fn:
    """Apply a float function; integer inputs run in float32 and truncate back (MXNet)."""
    def run(x: torch.Tensor) -> torch.Tensor:
        if x.is_floating_point():
            return fn(x)
        return fn(x.to(torch.float32)).to(x.dtype)
    return run


def _int_identity(fn: Fn) -> Fn:
    """Rounding functions: the identity on integer inputs."""
    def run(x: torch.Tensor) -> torch.Tensor:
        return fn(x) if x.is_floating_point() else x.clone()
    return run


class _UnaryGrad(torch.autograd.Function):
    """``y = fwd(x)`` with the local derivative ``dfn(x, y)`` (MXNet's backward rule)."""

    @staticmethod
    def forward(ctx, x, fwd, dfn):  # type: ignore[override]
        y = fwd(x)
        ctx.save_for_backward(x, y)
        ctx.dfn = dfn
        return y

    @staticmethod
    def backward(ctx, g):  # type: ignore[override]
        x, y = ctx.saved_tensors
        return g * ctx.dfn(x, y), None, None


def _unbroadcast(g: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """Sum a broadcast gradient back to ``shape``."""
    if g.shape == shape:
        return g
    extra = g.dim() - len(shape)
    if extra:
        g = g.sum(dim=tuple(range(extra)))
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(dim=dims, keepdim=True) if dims else g


class _BinaryGrad(torch.autograd.Function):
    """``y = fwd(a, b)`` with local derivatives ``dl(a, b, y)`` and ``dr(a, b, y)``."""

    @staticmethod
    def forward(ctx, a, b, fwd, dl, dr):  # type: ignore[override]
        y = fwd(a, b)
        ctx.save_for_backward(a, b, y)
        ctx.fns = (dl, dr)
        return y

    @staticmethod
    def backward(ctx, g):  # type: ignore[override]
        a, b, y = ctx.saved_tensors
        dl, dr = ctx.fns
        ga = _unbroadcast(g * dl(a, b, y), a.shape) if ctx.needs_input_grad[0] else None
        gb = _unbroadcast(g * dr(a, b, y), b.shape) if ctx.needs_input_grad[1] else None
        return ga, gb, None, None, None


def _with_grad(fwd: Fn, dfn: Fn) -> Fn:
    """Unary function with a custom derivative; plain torch when no gradient is needed."""
    def run(x: torch.Tensor) -> torch.Tensor:
        if x.requires_grad and torch.is_grad_enabled():
            return _UnaryGrad.apply(x, fwd, dfn)
        return fwd(x)
    return run


def _with_grad2(fwd: Fn, dl: Fn, dr: Fn) -> Fn:
    """Binary function with custom derivatives; plain torch when no gradient is needed."""
    def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
            return _BinaryGrad.apply(a, b, fwd, dl, dr)
        return fwd(a, b)
    return run


# ---------------------------------------------------------------------- unary math
def _round_half_away(x: torch.Tensor) -> torch.Tensor:
    # MXNet: round() rounds half away from zero (rint rounds half to even).
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


def _cbrt(x: torch.Tensor) -> torch.Tensor:
    return torch.sign(x) * torch.abs(x).pow(1.0 / 3.0)


def _gamma_fwd(x: torch.Tensor) -> torch.Tensor:
    """Gamma(x) = sign * exp(lgamma(x)), computed in float64 for precision."""
    xd = x.to(torch.float64)
    mag = torch.exp(torch.lgamma(xd))
    neg = (xd < 0) & (torch.remainder(torch.floor(xd), 2) == 1)
    pole = (xd < 0) & (torch.floor(xd) == xd)
    y = torch.where(neg, -mag, mag)
    y = torch.where(pole, torch.full_like(y, math.nan), y)
    return y.to(x.dtype)


def _relu_fwd(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) if x.dtype != torch.uint8 else x.clone()


# MXNet: relu(NaN) is NaN and so is its gradient there
_relu = _with_grad(_relu_fwd, lambda x, y: torch.where(torch.isnan(x), x, (x > 0).to(x.dtype)))


def _logical_not(x: torch.Tensor) -> torch.Tensor:
    return (x == 0).to(x.dtype)


def _softsign(x: torch.Tensor) -> torch.Tensor:
    return x / (1 + torch.abs(x))


_cbrt_g = _with_grad(_cbrt, lambda x, y: 1.0 / (3.0 * y * y))
_rcbrt_g = _with_grad(lambda x: 1.0 / _cbrt(x), lambda x, y: -(y ** 4) / 3.0)
_gamma_g = _with_grad(_gamma_fwd, lambda x, y: y * torch.digamma(x))


class _AsinhBackward(torch.autograd.Function):
    """arcsinh's backward ``g / sqrt(x^2 + 1)``, differentiable as MXNet differentiates it."""

    @staticmethod
    def forward(ctx, g, x):  # type: ignore[override]
        ctx.save_for_backward(g, x)
        return g * torch.rsqrt(x * x + 1)

    @staticmethod
    def backward(ctx, gg):  # type: ignore[override]
        g, x = ctx.saved_tensors
        d = torch.rsqrt(x * x + 1)
        # MXNet: the second derivative is taken as +x / (x^2 + 1)^1.5, the true one's
        # sign flipped (its _backward_arcsinh gradient, which its tests encode)
        return _AsinhBackward.apply(gg, x), gg * g * x * d * d * d


class _Asinh(torch.autograd.Function):
    """arcsinh with MXNet's higher-order gradients (see _AsinhBackward)."""

    @staticmethod
    def forward(ctx, x):  # type: ignore[override]
        ctx.save_for_backward(x)
        return torch.asinh(x)

    @staticmethod
    def backward(ctx, g):  # type: ignore[override]
        return _AsinhBackward.apply(g, ctx.saved_tensors[0])


def _asinh(x: torch.Tensor) -> torch.Tensor:
    if x.requires_grad and torch.is_grad_enabled():
        return _Asinh.apply(x)
    return torch.asinh(x)

# (name, function on the input tensor, aliases)
_UNARY: list[tuple[str, Fn, tuple[str, ...]]] = [
    ("abs", torch.abs, ("_sparse_abs",)),
    ("sign", torch.sign, ("_sparse_sign",)),
    ("round", _int_identity(_round_half_away), ("_sparse_round",)),
    ("rint", _int_identity(torch.round), ("_sparse_rint",)),
    ("ceil", _int_identity(torch.ceil), ("_sparse_ceil",)),
    ("floor", _int_identity(torch.floor), ("_sparse_floor",)),
    ("trunc", _int_identity(torch.trunc), ("_sparse_trunc",)),
    ("fix", _int_identity(torch.trunc), ("_sparse_fix",)),
    ("square", torch.square, ("_sparse_square",)),
    ("sqrt", _float_only(torch.sqrt), ("_sparse_sqrt",)),
    ("rsqrt", _float_only(torch.rsqrt), ("_sparse_rsqrt",)),
    ("cbrt", _float_only(_cbrt_g), ("_sparse_cbrt",)),
    ("rcbrt", _float_only(_rcbrt_g), ()),
    ("exp", _float_only(torch.exp), ("_sparse_exp",)),
    ("expm1", _float_only(torch.expm1), ("_sparse_expm1",)),
    ("log", _float_only(torch.log), ("_sparse_log",)),
    ("log10", _float_only(torch.log10), ("_sparse_log10",)),
    ("log2", _float_only(torch.log2), ("_sparse_log2",)),
    ("log1p", _float_only(torch.log1p), ("_sparse_log1p",)),
    ("sin", _float_only(torch.sin), ("_sparse_sin",)),
    ("cos", _float_only(torch.cos), ("_sparse_cos",)),
    ("tan", _float_only(torch.tan), ("_sparse_tan",)),
    ("arcsin", _float_only(torch.asin), ("_sparse_arcsin",)),
    ("arccos", _float_only(torch.acos), ("_sparse_arccos",)),
    ("arctan", _float_only(torch.atan), ("_sparse_arctan",)),
    ("sinh", _float_only(torch.sinh), ("_sparse_sinh",)),
    ("cosh", _float_only(torch.cosh), ("_sparse_cosh",)),
    ("tanh", _float_only(torch.tanh), ("_sparse_tanh",)),
    ("arcsinh", _float_only(_asinh), ("_sparse_arcsinh",)),
    ("arccosh", _float_only(torch.acosh), ("_sparse_arccosh",)),
    ("arctanh", _float_only(torch.atanh), ("_sparse_arctanh",)),
    ("degrees", _float_only(torch.rad2deg), ("_sparse_degrees",)),
    ("radians", _float_only(torch.deg2rad), ("_sparse_radians",)),
    ("relu", _relu, ("_sparse_relu",)),
    ("sigmoid", _float_only(torch.sigmoid), ("_sparse_sigmoid",)),
    ("reciprocal", _float_only(torch.reciprocal), ()),
]


# the same, without an NDArray/Symbol method in MXNet (no ``x.erf()``)
_UNARY_NO_METHOD: list[tuple[str, Fn, tuple[str, ...]]] = [
    ("softsign", _float_only(_softsign), ()),
    ("erf", _float_only(torch.erf), ()),
    ("erfinv", _float_only(torch.erfinv), ()),
    ("gamma", _float_only(_gamma_g), ("_sparse_gamma",)),
    ("gammaln", _float_only(torch.lgamma), ("_sparse_gammaln",)),
    ("negative", torch.negative, ("_sparse_negative",)),
    ("logical_not", _logical_not, ()),
]


def same_shape_infer(attrs, shapes, out_shapes=None):
    """All inputs and the output share one shape: merge what is known (0 = unknown dim),
    the output's shape included (so inputs are inferred backwards too)."""
    merged = None
    for shp in list(shapes) + list(out_shapes or ()):
        if shp is None:
            continue
        if merged is None:
            merged = tuple(shp)
            continue
        if len(shp) != len(merged) or any(m and d and m != d for m, d in zip(merged, shp)):
            return shapes, None  # the forward raises the shape error
        merged = tuple(m or d for m, d in zip(merged, shp))
    if merged is None:
        return shapes, [None]
    return [merged] * len(shapes), [merged]


def _unary_compute(fn: Fn) -> Fn:
    return lambda attrs, x: fn(x)


# the activations that pass channels-last data on (graph/layout.py)
_KEEPS_CHANNELS_LAST = frozenset(("relu", "sigmoid", "tanh"))

for _rows, _fluent in ((_UNARY, True), (_UNARY_NO_METHOD, False)):
    for _name, _fn, _aliases in _rows:
        register(OpDef(_name, _unary_compute(_fn), aliases=_aliases, fluent=_fluent,
                       infer_shape=same_shape_infer,
                       infer_shape_takes_outputs=True, infer_type=same_type_infer,
                       listed_inputs=False,
                       channels_last="keep" if _name in _KEEPS_CHANNELS_LAST else None,
                       fusion_role="relu" if _name == "relu" else None,
                       doc=f"Elementwise {_name} of the input."))


def _hard_sigmoid(attrs, x: torch.Tensor) -> torch.Tensor:
    """``max(0, min(1, alpha * x + beta))``; gradient 0 where the output is clipped."""
    if not x.is_floating_point():
        raise MXNetError("Operator hard_sigmoid: This operation only support floating point "
                         f"types, not {str(x.dtype).replace('torch.', '')}")
    t = attrs.alpha * x + attrs.beta
    # MXNet: the gradient is alpha strictly inside (0, 1) and 0 on the boundaries.
    return torch.where((t > 0) & (t < 1), t, t.detach().clamp(0.0, 1.0))


register(OpDef("hard_sigmoid", _hard_sigmoid, params=[Float("alpha", 0.2), Float("beta", 0.5)],
               doc="Hard sigmoid: max(0, min(1, alpha * x + beta))."))


def _clip(attrs, x: torch.Tensor) -> torch.Tensor:
    """Clip to [a_min, a_max]; integer arrays use the truncated bounds."""
    lo, hi = attrs.a_min, attrs.a_max
    if not x.is_floating_point():
        lo, hi = int(lo), int(hi)
    if lo <= hi:
        return torch.clamp(x, lo, hi)
    # MXNet: with a_min > a_max the a_max test comes first.
    hi_t = torch.full_like(x, hi)
    return torch.where(x > hi, hi_t, torch.where(x < lo, torch.full_like(x, lo), x))


register(OpDef("clip", _clip, params=[Float("a_min"), Float("a_max")], aliases=("_sparse_clip",),
               fluent=True, doc="Clip the values to [a_min, a_max] (gradient 0 outside)."))


def _smooth_l1(x: torch.Tensor, sigma: float) -> torch.Tensor:
    b2 = sigma * sigma
    inv = 1.0 / b2 if b2 else math.inf
    ax = torch.abs(x)
    return torch.where(ax > inv, ax - 0.5 * inv, 0.5 * b2 * x * x)


def _smooth_l1_compute(attrs, x: torch.Tensor) -> torch.Tensor:
    if x.is_floating_point():
        return _smooth_l1(x, attrs.scalar)
    return _smooth_l1(x.to(torch.float32), attrs.scalar).to(x.dtype)


register(OpDef("smooth_l1", _smooth_l1_compute, params=[Float("scalar", 1.0),
                                                         Bool("is_int", True)],
               doc="Smooth L1: 0.5 (sigma x)^2 if |x| < 1/sigma^2, else |x| - 0.5/sigma^2."))


# ---------------------------------------------------------------------- binary functions
def _int_div(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    # MXNet: integer division truncates toward zero.
    if x.is_floating_point():
        return torch.div(x, y)
    return torch.div(x, y, rounding_mode="trunc")


def _mod_fwd(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # MXNet: the result has the sign of the divisor, and x mod 0 is 0.
    zero = b == 0
    r = torch.remainder(a, torch.where(zero, torch.ones_like(b), b))
    return torch.where(zero, torch.zeros_like(r), r)


_mod_float = _with_grad2(_mod_fwd, lambda a, b, y: torch.ones_like(y),
                         lambda a, b, y: -torch.floor(a / b))


def _mod(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _mod_float(a, b) if a.is_floating_point() else _mod_fwd(a, b)


_pow_float = _with_grad2(torch.pow, lambda a, b, y: b * torch.pow(a, b - 1),
                         lambda a, b, y: y * torch.log(a))


def _power(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # MXNet: integer powers are computed in float32 (powf) and truncated.
    if a.is_floating_point():
        return _pow_float(a, b)
    return torch.pow(a.to(torch.float32), b.to(torch.float32)).to(a.dtype)


def _hypot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.is_floating_point():
        return torch.hypot(a, b)
    return torch.hypot(a.to(torch.float32), b.to(torch.float32)).to(a.dtype)


# MXNet: a NaN operand gives NaN (torch.maximum's rule too); the gradient goes to the left
# operand where a >= b (ties included), to the right one where a < b, to neither at a NaN.
_maximum = _with_grad2(torch.maximum, lambda a, b, y: (a >= b).to(y.dtype),
                       lambda a, b, y: (a < b).to(y.dtype))
_minimum = _with_grad2(torch.minimum, lambda a, b, y: (a <= b).to(y.dtype),
                       lambda a, b, y: (a > b).to(y.dtype))


def _as_dtype(fn: Fn) -> Fn:
    """Comparison/logical ops: 0/1 in the input dtype (MXNet), not bool."""
    return lambda a, b: fn(a, b).to(a.dtype)


def _logical(fn: Fn) -> Fn:
    return _as_dtype(lambda a, b: fn(a != 0, b != 0))


# (suffix, torch function, broadcast aliases, elemwise name, elemwise aliases)
_BINARY: list[tuple[str, Fn, tuple, str, tuple]] = [
    ("add", torch.add, ("broadcast_plus", "_sparse_broadcast_add", "_sparse_broadcast_plus"),
     "elemwise_add", ("_add", "_plus", "_Plus", "_sparse_elemwise_add")),
    ("sub", torch.sub, ("broadcast_minus", "_sparse_broadcast_sub", "_sparse_broadcast_minus"),
     "elemwise_sub", ("_sub", "_minus", "_Minus", "_sparse_elemwise_sub")),
    ("mul", torch.mul, ("_sparse_broadcast_mul",),
     "elemwise_mul", ("_mul", "_Mul", "_sparse_elemwise_mul")),
    ("div", _int_div, ("_sparse_broadcast_div",),
     "elemwise_div", ("_div", "_Div", "_sparse_elemwise_div")),
    ("mod", _mod, (), "_mod", ("_Mod",)),
    ("power", _power, (), "_power", ("_Power",)),
    ("maximum", _maximum, (), "_maximum", ("_Maximum",)),
    ("minimum", _minimum, (), "_minimum", ("_Minimum",)),
    ("hypot", _hypot, (), "_hypot", ("_Hypot",)),
    ("equal", _as_dtype(torch.eq), (), "_equal", ("_Equal",)),
    ("not_equal", _as_dtype(torch.ne), (), "_not_equal", ("_Not_Equal",)),
    ("greater", _as_dtype(torch.gt), (), "_greater", ("_Greater",)),
    ("greater_equal", _as_dtype(torch.ge), (), "_greater_equal", ("_Greater_Equal",)),
    ("lesser", _as_dtype(torch.lt), (), "_lesser", ("_Lesser",)),
    ("lesser_equal", _as_dtype(torch.le), (), "_lesser_equal", ("_Lesser_Equal",)),
    ("logical_and", _logical(torch.logical_and), (), "_logical_and", ("_Logical_And",)),
    ("logical_or", _logical(torch.logical_or), (), "_logical_or", ("_Logical_Or",)),
    ("logical_xor", _logical(torch.logical_xor), (), "_logical_xor", ("_Logical_Xor",)),
]


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


def _check_dtypes(name: str, tensors) -> None:
    first = tensors[0].dtype
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype != first:
            raise MXNetError(f"Operator {name}: incompatible input dtypes: input 0 is "
                             f"{_dtype_name(tensors[0])} but input {i} is {_dtype_name(t)}")


def _broadcast_infer(name: str):
    """MXNet's broadcast shape rule: dims aligned from the right, a 1 stretches to the
    other side's size, an unknown (0) dim on either side leaves the output's unknown."""
    def infer(attrs, shapes):
        lhs, rhs = shapes
        if lhs is None or rhs is None:
            return shapes, [None]
        if lhs == rhs:
            return shapes, [tuple(lhs)]
        nd = max(len(lhs), len(rhs))
        lp, rp = (1,) * (nd - len(lhs)) + tuple(lhs), (1,) * (nd - len(rhs)) + tuple(rhs)
        out = []
        for left, right in zip(lp, rp):
            if not left or not right:
                out.append(0)
            elif left != right and 1 not in (left, right):
                raise MXNetError(f"Operator {name}: operands could not be broadcast together "
                                 f"with shapes {tuple(lhs)} {tuple(rhs)}")
            else:
                out.append(right if left == 1 else left)
        return shapes, [tuple(out)]
    return infer


def _broadcast_compute(name: str, fn: Fn) -> Fn:
    """broadcast_*: NumPy-style broadcasting, MXNet's error on incompatible shapes."""
    def compute(attrs, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.dtype is not b.dtype:  # torch dtypes are singletons
            _check_dtypes(name, (a, b))
        try:
            return fn(a, b)
        except RuntimeError:
            try:
                torch.broadcast_shapes(a.shape, b.shape)
            except RuntimeError:
                raise MXNetError(f"Operator {name}: operands could not be broadcast together "
                                 f"with shapes {tuple(a.shape)} {tuple(b.shape)}") from None
            raise
    return compute


def _elemwise_compute(name: str, fn: Fn) -> Fn:
    """elemwise_* and _x forms: both inputs must have the same shape (no broadcasting)."""
    def compute(attrs, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.shape != b.shape:
            raise MXNetError(f"Operator {name}: inputs must have the same shape, got "
                             f"{tuple(a.shape)} and {tuple(b.shape)}")
        if a.dtype is not b.dtype:  # torch dtypes are singletons
            _check_dtypes(name, (a, b))
        return fn(a, b)
    return compute


for _suffix, _fn, _baliases, _ename, _ealiases in _BINARY:
    _bname = f"broadcast_{_suffix}"
    # same_dtype_fn: the compute when both dtypes match; NDArray's operator methods call
    # it directly, one Python frame (a tenth of ``a + b``) fewer
    register(OpDef(_bname, _broadcast_compute(_bname, _fn), inputs=("lhs", "rhs"),
                   same_dtype_fn=_fn, fusion_role="add" if _suffix == "add" else None,
                   int_grad=_suffix != "mod",   # MXNet: mod's integer gradient is 0
                   infer_shape=_broadcast_infer(_bname), infer_type=same_type_infer,
                   aliases=_baliases, doc=f"Broadcasting elementwise {_suffix}."))
    register(OpDef(_ename, _elemwise_compute(_ename, _fn), inputs=("lhs", "rhs"),
                   aliases=_ealiases, infer_shape=same_shape_infer,
                   infer_shape_takes_outputs=True, int_grad=_suffix != "mod",
                   infer_type=same_type_infer,
                   channels_last="keep_all" if _suffix == "add" else None,
                   fusion_role="add" if _suffix == "add" else None,
                   doc=f"Elementwise {_suffix} of two arrays of the same shape."))


# ---------------------------------------------------------------------- scalar forms
def _scalar_value(x: torch.Tensor, s: float):
    # MXNet: the scalar is cast (truncated) to the array's dtype before the operation.
    if x.is_floating_point():
        return s
    if x.dtype == torch.bool:
        return bool(s)
    return int(s)


def _full(x: torch.Tensor, s) -> torch.Tensor:
    if x.is_floating_point():   # MXNet casts: a scalar beyond the dtype's range is inf
        return torch.tensor(s, dtype=x.dtype, device=x.device)
    return torch.full((), s, dtype=x.dtype, device=x.device)


def _via_float(fn: Fn) -> Fn:
    """Integer scalar math in float32, truncated back (MXNet's float math on ints)."""
    def run(x: torch.Tensor, s) -> torch.Tensor:
        if x.is_floating_point():
            return fn(x, s)
        return fn(x.to(torch.float32), float(s)).to(x.dtype)
    return run


def _div_scalar(x: torch.Tensor, s) -> torch.Tensor:
    if x.is_floating_point():
        return x / s
    return torch.div(x, s, rounding_mode="trunc")


def _rdiv_scalar(x: torch.Tensor, s) -> torch.Tensor:
    if x.is_floating_point():
        # MXNet divides by x (one rounding); torch's ``scalar / tensor`` multiplies by
        # the reciprocal, one unit in the last place off for a quarter of the elements
        return torch.div(s if isinstance(s, torch.Tensor) else _full(x, s), x)
    # MXNet: computed in float and truncated; s / 0 gives the dtype's minimum.
    return torch.trunc(s / x.to(torch.float64)).to(x.dtype)


def _pow_scalar_float(x: torch.Tensor, s: float) -> torch.Tensor:
    return _with_grad(lambda t: torch.pow(t, s), lambda t, y: s * torch.pow(t, s - 1))(x)


def _rpow_scalar_float(x: torch.Tensor, s: float) -> torch.Tensor:
    log_s = math.log(s) if s > 0 else (-math.inf if s == 0 else math.nan)
    return _with_grad(lambda t: torch.pow(s, t), lambda t, y: y * log_s)(x)


def _logical_scalar(fn: Fn) -> Fn:
    def run(x: torch.Tensor, s) -> torch.Tensor:
        other = torch.full((), bool(s), dtype=torch.bool, device=x.device)
        return fn(x != 0, other).to(x.dtype)
    return run


def _cmp_scalar(fn: Fn) -> Fn:
    return lambda x, s: fn(x, s).to(x.dtype)


# (name, function(x, scalar already cast to x's dtype), aliases)
_SCALAR: list[tuple[str, Fn, tuple[str, ...]]] = [
    ("_plus_scalar", lambda x, s: x + s, ("_PlusScalar",)),
    ("_minus_scalar", lambda x, s: x - s, ("_MinusScalar",)),
    ("_rminus_scalar", lambda x, s: s - x, ("_RMinusScalar",)),
    ("_mul_scalar", lambda x, s: x * s, ("_MulScalar",)),
    ("_div_scalar", _div_scalar, ("_DivScalar",)),
    ("_rdiv_scalar", _rdiv_scalar, ("_RDivScalar",)),
    ("_mod_scalar", lambda x, s: _mod(x, _full(x, s)), ("_ModScalar",)),
    ("_rmod_scalar", lambda x, s: _mod(_full(x, s), x), ("_RModScalar",)),
    ("_power_scalar", _via_float(_pow_scalar_float), ("_PowerScalar",)),
    ("_rpower_scalar", _via_float(_rpow_scalar_float), ("_RPowerScalar",)),
    ("_maximum_scalar", lambda x, s: torch.clamp(x, min=s), ("_MaximumScalar",)),
    ("_minimum_scalar", lambda x, s: torch.clamp(x, max=s), ("_MinimumScalar",)),
    ("_hypot_scalar", _via_float(lambda x, s: torch.hypot(x, _full(x, s))), ("_HypotScalar",)),
    ("_equal_scalar", _cmp_scalar(torch.eq), ("_EqualScalar",)),
    ("_not_equal_scalar", _cmp_scalar(torch.ne), ("_NotEqualScalar",)),
    ("_greater_scalar", _cmp_scalar(torch.gt), ("_GreaterScalar",)),
    ("_greater_equal_scalar", _cmp_scalar(torch.ge), ("_GreaterEqualScalar",)),
    ("_lesser_scalar", _cmp_scalar(torch.lt), ("_LesserScalar",)),
    ("_lesser_equal_scalar", _cmp_scalar(torch.le), ("_LesserEqualScalar",)),
    ("_logical_and_scalar", _logical_scalar(torch.logical_and), ("_LogicalAndScalar",)),
    ("_logical_or_scalar", _logical_scalar(torch.logical_or), ("_LogicalOrScalar",)),
    ("_logical_xor_scalar", _logical_scalar(torch.logical_xor), ("_LogicalXorScalar",)),
]


def _scalar_compute(fn: Fn) -> Fn:
    def compute(attrs, x: torch.Tensor) -> torch.Tensor:
        if not attrs.is_int and not x.is_floating_point():
            # MXNet: a non-integer scalar on an integer array promotes to float64.
            x = x.to(torch.float64)
        return fn(x, _scalar_value(x, attrs.scalar))
    return compute


# the scalar operators whose function is also right for a float32 or float64 ``x`` and
# the scalar as a 0-dim tensor of x's dtype (``tensor_scalar_fn``): NDArray's operator
# methods keep such tensors, which spares torch wrapping the Python number (2 us of
# ``x + 1``'s 4)
_TENSOR_SCALAR = frozenset((
    "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
    "_rdiv_scalar", "_equal_scalar", "_not_equal_scalar", "_greater_scalar",
    "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar"))


def _scalar_infer_type(attrs, types):
    """The array's dtype, or float64 for an integer array and a non-integer scalar."""
    t = types[0]
    if t is not None and not attrs.is_int and not t.startswith(("float", "bfloat")):
        return types, ["float64"]
    return types, [t]


for _sname, _fn, _saliases in _SCALAR:
    register(OpDef(_sname, _scalar_compute(_fn), params=[Float("scalar", 1.0),
                                                          Bool("is_int", True)],
                   tensor_scalar_fn=_fn if _sname in _TENSOR_SCALAR else None,
                   int_grad="mod" not in _sname,
                   aliases=_saliases, infer_shape=same_shape_infer,
                   infer_shape_takes_outputs=True, listed_inputs=False,
                   infer_type=_scalar_infer_type,
                   doc=f"{_sname}: array-scalar operation."))


# ---------------------------------------------------------------------- add_n, where
def _add_n(attrs, *arrays: torch.Tensor) -> torch.Tensor:
    """Sum of all inputs (same shape and dtype)."""
    if not arrays:
        raise MXNetError("Operator add_n: needs at least one input")
    first = arrays[0]
    for i, t in enumerate(arrays[1:], 1):
        if t.shape != first.shape:
            raise MXNetError(f"Operator add_n: input {i} has shape {tuple(t.shape)}, "
                             f"expected {tuple(first.shape)}")
    _check_dtypes("add_n", arrays)
    out = first.clone() if len(arrays) == 1 else first + arrays[1]
    for t in arrays[2:]:
        out = out + t
    return out


register(OpDef("add_n", _add_n, params=[Int("num_args", lower=1)], key_var_num_args="num_args",
               inputs=lambda attrs: [f"arg{i}" for i in range(attrs.num_args)],
               aliases=("ElementWiseSum", "_sparse_ElementWiseSum", "_sparse_add_n"),
               infer_shape=same_shape_infer,
               infer_shape_takes_outputs=True, doc="Sum of all the input arrays."))


def _where(attrs, cond: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``x`` where ``condition`` is non-zero, else ``y``; 1-D conditions select rows."""
    if x.shape != y.shape:
        raise MXNetError(f"Operator where: x and y must have the same shape, got "
                         f"{tuple(x.shape)} and {tuple(y.shape)}")
    _check_dtypes("where", (x, y))
    if cond.shape != x.shape:
        if cond.dim() == 1 and x.dim() >= 1 and cond.shape[0] == x.shape[0]:
            cond = cond.reshape((-1,) + (1,) * (x.dim() - 1))
        else:
            raise MXNetError(f"Operator where: condition of shape {tuple(cond.shape)} must "
                             f"have the shape of x {tuple(x.shape)} or be 1-D of size "
                             f"{x.shape[0] if x.dim() else 0}")
    return torch.where(cond != 0, x, y)


def _where_infer(attrs, shapes, out_shapes=None):
    """x, y and the output share one shape; nothing is inferred until the condition's
    shape is fully known (MXNet's rule)."""
    cond = shapes[0]
    if cond is None or 0 in cond:
        return shapes, [None]
    new_in, out = same_shape_infer(attrs, shapes[1:], out_shapes)
    if out is None or out[0] is None:
        return shapes, out
    if len(cond) == len(out[0]):
        # MXNet: x, y and the output do not take the condition's shape
        return [cond, *new_in], out
    if len(cond) == 1 and out[0] and out[0][0] and cond[0] != out[0][0]:
        raise MXNetError(f"Operator where: condition of shape {cond} must have the shape "
                         f"of x {out[0]} or be 1-D of size {out[0][0]}")
    return [cond, *new_in], out


register(OpDef("where", _where, inputs=("condition", "x", "y"), aliases=("_sparse_where",),
               infer_shape=_where_infer, infer_shape_takes_outputs=True,
               doc="Select elements of x or y depending on condition."))

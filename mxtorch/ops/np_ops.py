"""NumPy-semantics operators (``_npi_*``, ``_np_*``, ``_npx_*``) that ``mx.sym.np`` and
``mx.sym.npx`` emit, so numpy-mode graphs export and load under MXNet 1.9.1's names.

NumPy rules apply: broadcasting, NumPy type promotion (``true_divide`` of integers gives
float32, MXNet's default float), comparisons return ``bool``, reductions over every axis
return 0-d arrays, zero-size shapes are valid. Gradients are torch's.
"""
from __future__ import annotations

import math
from typing import Callable

import torch

from ..base import MXNetError
from .params import Bool, Dtype, Float, Int, OptDtype, OptFloat, OptInt, OptShape, Shape, Str
from .registry import OpDef, register
from .tensor_util import torch_dtype

__all__ = ["np_reshape_target", "NPX_FUNCTIONS"]

Fn = Callable[..., torch.Tensor]
_DEFAULT_FLOAT = torch.float32  # MXNet: the numpy interface's default float is float32


def _as_float(x: torch.Tensor) -> torch.Tensor:
    """Integer and bool inputs become float32 for float-valued functions (NumPy/MXNet)."""
    return x if x.is_floating_point() else x.to(_DEFAULT_FLOAT)


# ---------------------------------------------------------------------- binary
def _true_divide(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if not a.is_floating_point() and not b.is_floating_point():
        return torch.true_divide(a.to(_DEFAULT_FLOAT), b.to(_DEFAULT_FLOAT))
    return torch.true_divide(a, b)


def _mod(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.remainder(a, b)


# (name, torch function of two tensors)
_BINARY: list[tuple[str, Fn]] = [
    ("_npi_add", torch.add),
    ("_npi_subtract", torch.sub),
    ("_npi_multiply", torch.mul),
    ("_npi_true_divide", _true_divide),
    ("_npi_power", torch.pow),
    ("_npi_mod", _mod),
    ("_npi_equal", torch.eq),
    ("_npi_not_equal", torch.ne),
    ("_npi_greater", torch.gt),
    ("_npi_greater_equal", torch.ge),
    ("_npi_less", torch.lt),
    ("_npi_less_equal", torch.le),
]


def _binary_compute(fn: Fn) -> Fn:
    def compute(attrs, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        try:
            torch.broadcast_shapes(a.shape, b.shape)
        except RuntimeError:
            raise MXNetError(f"operands could not be broadcast together with shapes "
                             f"{tuple(a.shape)} {tuple(b.shape)}") from None
        return fn(a, b)
    return compute


for _name, _fn in _BINARY:
    register(OpDef(_name, _binary_compute(_fn), inputs=("lhs", "rhs"),
                   channels_last="keep_all" if _name == "_npi_add" else None,
                   fusion_role="add" if _name == "_npi_add" else None,
                   int_grad=_name != "_npi_mod",   # MXNet: mod's integer gradient is 0
                   doc=f"NumPy-semantics broadcast {_name[5:]}."))


# ---------------------------------------------------------------------- scalar
def _scalar_value(attrs, x: torch.Tensor):
    """The scalar as NumPy sees it: an int keeps integer arrays integral (``is_int``)."""
    if attrs.is_int and float(attrs.scalar).is_integer():
        return int(attrs.scalar)
    return float(attrs.scalar)


def _promoted(attrs, x: torch.Tensor) -> torch.Tensor:
    """The array in MXNet's result dtype (NumpyBinaryScalarType): a bool array becomes
    int64 (int scalar) or float64, an integer array with a float scalar float64."""
    if x.dtype == torch.bool:
        return x.to(torch.int64 if attrs.is_int else torch.float64)
    return x if x.is_floating_point() or attrs.is_int else x.to(torch.float64)


def _scalar_compute(fn: Fn, reflected: bool, promote: bool = True,
                    keep_int: bool = False) -> Fn:
    """``fn(x, scalar)`` (``fn(scalar, x)`` when ``reflected``); ``keep_int``: a float-valued
    ``fn`` whose result on an integer array is cast back (MXNet's copysign, ldexp)."""
    def compute(attrs, x: torch.Tensor) -> torch.Tensor:
        if promote:
            x = _promoted(attrs, x)
        s = _scalar_value(attrs, x)
        if isinstance(s, float) and not x.is_floating_point() and x.dtype != torch.bool:
            x = x.to(_DEFAULT_FLOAT)  # true_divide: int array with a float scalar -> float32
        other = torch.tensor(s, dtype=x.dtype, device=x.device)
        res = fn(other, x) if reflected else fn(x, other)
        return res.to(x.dtype) if keep_int and not x.is_floating_point() else res
    return compute


_SCALAR: list[tuple[str, Fn, bool]] = [
    ("_npi_add_scalar", torch.add, False),
    ("_npi_subtract_scalar", torch.sub, False),
    ("_npi_rsubtract_scalar", torch.sub, True),
    ("_npi_multiply_scalar", torch.mul, False),
    ("_npi_true_divide_scalar", _true_divide, False),
    ("_npi_rtrue_divide_scalar", _true_divide, True),
    ("_npi_power_scalar", torch.pow, False),
    ("_npi_rpower_scalar", torch.pow, True),
    ("_npi_mod_scalar", _mod, False),
    ("_npi_rmod_scalar", _mod, True),
    ("_npi_equal_scalar", torch.eq, False),
    ("_npi_not_equal_scalar", torch.ne, False),
    ("_npi_greater_scalar", torch.gt, False),
    ("_npi_greater_equal_scalar", torch.ge, False),
    ("_npi_less_scalar", torch.lt, False),
    ("_npi_less_equal_scalar", torch.le, False),
]

for _name, _fn, _refl in _SCALAR:
    # MXNet: true_divide keeps its own result type (float32 for integer arrays)
    register(OpDef(_name, _scalar_compute(_fn, _refl, promote="true_divide" not in _name),
                   params=[Float("scalar", 1.0), Bool("is_int", True)],
                   int_grad="mod" not in _name,
                   doc=f"NumPy-semantics {_name[5:]} with a Python scalar."))


# ---------------------------------------------------------------------- unary
def _float_fn(fn: Fn) -> Fn:
    return lambda attrs, x: fn(_as_float(x))


def _same_fn(fn: Fn) -> Fn:
    return lambda attrs, x: fn(x)


_UNARY: list[tuple[str, Fn]] = [
    ("_npi_square", _same_fn(torch.square)),
    ("_npi_absolute", _same_fn(torch.abs)),
    ("_npi_negative", _same_fn(torch.negative)),
    ("_npi_sign", _same_fn(torch.sign)),
    ("_npi_log", _float_fn(torch.log)),
    ("_npi_log1p", _float_fn(torch.log1p)),
    ("_npi_exp", _float_fn(torch.exp)),
    ("_npi_expm1", _float_fn(torch.expm1)),
    ("_npi_sqrt", _float_fn(torch.sqrt)),
    ("_npi_tanh", _float_fn(torch.tanh)),
    ("_npi_sin", _float_fn(torch.sin)),
    ("_npi_cos", _float_fn(torch.cos)),
    ("_np_copy", _same_fn(torch.clone)),
    ("_npx_relu", _same_fn(torch.relu)),
    ("_npx_sigmoid", _float_fn(torch.sigmoid)),
]

for _name, _fn in _UNARY:
    register(OpDef(_name, _fn, inputs=("x",) if _name.startswith("_npi") else ("data",),
                   channels_last="keep" if _name == "_npx_relu" else None,
                   fusion_role="relu" if _name == "_npx_relu" else None,
                   doc=f"NumPy-semantics elementwise {_name.split('_')[-1]}."))


# ---------------------------------------------------------------------- reductions
def _axes(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise MXNetError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    return tuple(out)


def _sum_like(kind: str) -> Fn:
    def compute(attrs, x: torch.Tensor) -> torch.Tensor:
        dims = _axes(attrs.axis, x.dim())
        dt = torch_dtype(attrs.dtype) if attrs.dtype is not None else None
        if kind == "mean":
            if dt is None:
                dt = x.dtype if x.is_floating_point() else _DEFAULT_FLOAT
            y = x.to(dt).mean(dim=dims, keepdim=attrs.keepdims) if dims else x.to(dt)
        else:
            if dt is None and (x.dtype == torch.bool or not x.is_floating_point()):
                dt = torch.int64 if kind == "sum" and x.dtype != torch.bool else None
            fn = torch.sum if kind == "sum" else torch.prod
            y = fn(x, dim=dims, keepdim=attrs.keepdims, dtype=dt) if dims else \
                x.to(dt or x.dtype)
        if attrs.initial is not None:
            y = y + attrs.initial if kind == "sum" else y * attrs.initial
        return y
    return compute


_RED_PARAMS = [OptShape("axis"), OptDtype("dtype"), Bool("keepdims", False),
               OptFloat("initial")]
for _name, _kind in (("_np_sum", "sum"), ("_npi_mean", "mean"), ("_np_prod", "prod")):
    register(OpDef(_name, _sum_like(_kind), inputs=("a",), params=_RED_PARAMS,
                   doc=f"NumPy-semantics {_kind} over ``axis`` (every axis when None)."))


def _extreme(fn: Fn) -> Fn:
    def compute(attrs, x: torch.Tensor) -> torch.Tensor:
        dims = _axes(attrs.axis, x.dim())
        if x.numel() == 0:
            raise MXNetError("zero-size array to reduction operation which has no identity")
        return fn(x, dim=dims, keepdim=attrs.keepdims) if dims else x.clone()
    return compute


for _name, _fn in (("_np_max", torch.amax), ("_np_min", torch.amin)):
    register(OpDef(_name, _extreme(_fn), inputs=("a",),
                   params=[OptShape("axis"), Bool("keepdims", False), OptFloat("initial")],
                   doc="NumPy-semantics maximum/minimum over ``axis``."))


def _arg_extreme(fn: Fn) -> Fn:
    def compute(attrs, x: torch.Tensor) -> torch.Tensor:
        if attrs.axis is None:
            return fn(x.reshape(-1))
        return fn(x, dim=attrs.axis, keepdim=attrs.keepdims)
    return compute


for _name, _fn, _what in (("_npi_argmax", torch.argmax, "maximum"),
                          ("_npi_argmin", torch.argmin, "minimum")):
    register(OpDef(_name, _arg_extreme(_fn), inputs=("data",),
                   params=[OptInt("axis"), Bool("keepdims", False)],
                   doc=f"Indices (int64) of the {_what} values along ``axis``."))


# ---------------------------------------------------------------------- shapes
def _npx_codes(dshape: list[int], spec: list[int]) -> list[int]:
    """Expand ``npx.reshape``'s codes -1..-6 against ``dshape`` (left to right)."""
    out: list[int] = []
    i = j = 0
    infer = -1
    while j < len(spec):
        c = spec[j]
        if c >= 0:
            out.append(c)
            i += 1
        elif c == -1:
            infer = len(out)
            out.append(-1)
            i += 1
        elif c == -2:
            out.append(dshape[i])
            i += 1
        elif c == -3:
            if dshape[i] != 1:
                raise MXNetError(f"npx.reshape: -3 can only skip a dimension of size 1, "
                                 f"got {dshape[i]}")
            i += 1
        elif c == -4:
            out.extend(dshape[i:])
            i = len(dshape)
        elif c == -5:
            out.append(dshape[i] * dshape[i + 1])
            i += 2
        elif c == -6:
            a, b = spec[j + 1], spec[j + 2]
            d = dshape[i]
            a = d // b if a == -1 else a
            b = d // a if b == -1 else b
            if a * b != d:
                raise MXNetError(f"npx.reshape: cannot split dimension {d} into ({a}, {b})")
            out.extend([a, b])
            i += 1
            j += 2
        else:
            raise MXNetError(f"npx.reshape: invalid shape code {c}")
        j += 1
    if infer >= 0:
        known = math.prod(d for k, d in enumerate(out) if k != infer)
        out[infer] = math.prod(dshape) // known if known else 0
    return out


def np_reshape_target(dshape: tuple, spec: tuple, reverse: bool = False) -> tuple:
    """The output shape of ``npx.reshape(x, spec, reverse)`` for ``x.shape == dshape``."""
    d, s = list(dshape), list(spec)
    if reverse:
        d.reverse()
        s.reverse()  # MXNet: the codes are simply read right to left
    try:
        out = _npx_codes(d, s)
    except IndexError:
        raise MXNetError(f"npx.reshape: codes {tuple(spec)} do not match input shape "
                         f"{tuple(dshape)}") from None
    if reverse:
        out.reverse()
    if math.prod(out) != math.prod(dshape):
        raise MXNetError(f"cannot reshape array of shape {tuple(dshape)} into shape "
                         f"{tuple(spec)}")
    return tuple(out)


def _npx_reshape(attrs, x: torch.Tensor) -> torch.Tensor:
    return x.reshape(np_reshape_target(tuple(x.shape), attrs.newshape, attrs.reverse))


register(OpDef("_npx_reshape", _npx_reshape, inputs=("a",),
               params=[Shape("newshape"), Bool("reverse", False), Str("order", "C")],
               doc="Reshape with MXNet's codes -1 (infer), -2 (copy), -3 (drop a 1), "
                   "-4 (copy the rest), -5 (merge two), -6 (split one into two)."))


def _np_reshape(attrs, x: torch.Tensor) -> torch.Tensor:
    shape = attrs.newshape
    if any(d < -1 for d in shape) or list(shape).count(-1) > 1:
        raise MXNetError(f"np.reshape: invalid newshape {shape}")
    try:
        return x.reshape(shape)
    except RuntimeError:
        raise MXNetError(f"cannot reshape array of shape {tuple(x.shape)} into shape "
                         f"{tuple(shape)}") from None


register(OpDef("_np_reshape", _np_reshape, inputs=("a",),
               params=[Shape("newshape"), Str("order", "C")],
               doc="NumPy reshape (-1 infers one dimension)."))


def _transpose(attrs, x: torch.Tensor) -> torch.Tensor:
    axes = attrs.axes if attrs.axes else tuple(reversed(range(x.dim())))
    return x.permute(axes)


register(OpDef("_np_transpose", _transpose, inputs=("a",), params=[OptShape("axes")],
               doc="Permute the axes (reverse them when ``axes`` is None)."))


def _squeeze(attrs, x: torch.Tensor) -> torch.Tensor:
    if attrs.axis is None:
        return x.reshape([d for d in x.shape if d != 1])
    dims = _axes(attrs.axis, x.dim())
    for d in dims:
        if x.shape[d] != 1:
            raise MXNetError("cannot select an axis to squeeze out which has size not "
                             "equal to one")
    return x.reshape([n for k, n in enumerate(x.shape) if k not in dims])


register(OpDef("_np_squeeze", _squeeze, inputs=("a",), params=[OptShape("axis")],
               doc="Remove axes of length one."))


def _var_inputs(attrs) -> list[str]:
    return [f"data{i}" for i in range(attrs.num_args)]


def _concatenate(attrs, *xs: torch.Tensor) -> torch.Tensor:
    if attrs.axis is None:
        return torch.cat([x.reshape(-1) for x in xs])
    return torch.cat(xs, dim=attrs.axis)


register(OpDef("_npi_concatenate", _concatenate, inputs=_var_inputs,
               key_var_num_args="num_args", params=[Int("num_args"), OptInt("axis", 0)],
               doc="Join arrays along an existing axis (flattened when axis is None)."))
register(OpDef("_npi_stack", lambda attrs, *xs: torch.stack(xs, dim=attrs.axis),
               inputs=_var_inputs, key_var_num_args="num_args",
               params=[Int("num_args"), Int("axis", 0)],
               doc="Join arrays along a new axis."))


def _dot(attrs, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dim() == 0 or b.dim() == 0:
        return a * b
    if b.dim() == 1:
        return torch.tensordot(a, b, dims=([a.dim() - 1], [0]))
    return torch.tensordot(a, b, dims=([a.dim() - 1], [b.dim() - 2]))


register(OpDef("_np_dot", _dot, inputs=("a", "b"), doc="NumPy dot product."))
register(OpDef("_npi_matmul", lambda attrs, a, b: torch.matmul(a, b), inputs=("a", "b"),
               doc="NumPy matmul (batched matrix product with broadcasting)."))
register(OpDef("_npi_where", lambda attrs, c, x, y: torch.where(c.to(torch.bool), x, y),
               inputs=("condition", "x", "y"),
               doc="Elements of ``x`` where ``condition`` holds, else of ``y``."))
register(OpDef("_npi_broadcast_to", lambda attrs, x: x.expand(attrs.shape).clone(),
               inputs=("array",), params=[Shape("shape")],
               doc="Broadcast an array to a new shape."))


# ---------------------------------------------------------------------- creation
def _full_like(attrs, x: torch.Tensor) -> torch.Tensor:
    dt = torch_dtype(attrs.dtype) if attrs.dtype is not None else x.dtype
    return torch.full(x.shape, attrs.fill_value, dtype=dt, device=x.device)


register(OpDef("_npi_full_like", _full_like, inputs=("a",),
               params=[Float("fill_value"), Str("ctx", ""), OptDtype("dtype")],
               doc="An array of ``fill_value`` with the shape of the input."))


def _filled(value: float) -> Fn:
    def compute(attrs, *, device=None) -> torch.Tensor:
        return torch.full(tuple(attrs.shape), value, dtype=torch_dtype(attrs.dtype),
                          device=device or "cpu")
    return compute


for _name, _val in (("_npi_zeros", 0.0), ("_npi_ones", 1.0)):
    register(OpDef(_name, _filled(_val), inputs=(), creates=True,
                   params=[Shape("shape", ()), Str("ctx", ""), Dtype("dtype", "float32")],
                   doc=f"An array of {_name[5:]} (0-d and zero-size shapes allowed)."))


def _nonzero(attrs, x: torch.Tensor) -> torch.Tensor:
    return torch.nonzero(x).to(torch.int64)


register(OpDef("_npx_nonzero", _nonzero, inputs=("x",),
               doc="Indices of the non-zero elements, shape (N, ndim), int64."))


# ---------------------------------------------------------------------- more unary
def _keep_int(fn: Fn) -> Fn:
    """Rounding functions: integer arrays come back unchanged (NumPy)."""
    return lambda attrs, x: fn(x) if x.is_floating_point() else x.clone()


def _bool_fn(fn: Fn) -> Fn:
    return lambda attrs, x: fn(x).to(torch.bool)


_UNARY2: list[tuple[str, Fn]] = [
    ("_npi_arcsin", _float_fn(torch.asin)), ("_npi_arccos", _float_fn(torch.acos)),
    ("_npi_arctan", _float_fn(torch.atan)), ("_npi_sinh", _float_fn(torch.sinh)),
    ("_npi_cosh", _float_fn(torch.cosh)), ("_npi_tan", _float_fn(torch.tan)),
    ("_npi_arcsinh", _float_fn(torch.asinh)), ("_npi_arccosh", _float_fn(torch.acosh)),
    ("_npi_arctanh", _float_fn(torch.atanh)), ("_npi_log2", _float_fn(torch.log2)),
    ("_npi_log10", _float_fn(torch.log10)), ("_npi_cbrt", _float_fn(
        lambda x: torch.sign(x) * torch.abs(x).pow(1.0 / 3.0))),
    ("_npi_reciprocal", _float_fn(torch.reciprocal)),
    ("_npi_degrees", _float_fn(torch.rad2deg)), ("_npi_radians", _float_fn(torch.deg2rad)),
    ("_npi_floor", _keep_int(torch.floor)), ("_npi_ceil", _keep_int(torch.ceil)),
    ("_npi_trunc", _keep_int(torch.trunc)), ("_npi_fix", _keep_int(torch.trunc)),
    ("_npi_rint", _keep_int(torch.round)),
    ("_npi_logical_not", _bool_fn(torch.logical_not)), ("_npi_isnan", _bool_fn(torch.isnan)),
    ("_npi_isinf", _bool_fn(torch.isinf)), ("_npi_isfinite", _bool_fn(torch.isfinite)),
    ("_npi_bitwise_not", _same_fn(torch.bitwise_not)),
]
for _name, _fn in _UNARY2:
    register(OpDef(_name, _fn, inputs=("x",),
                   doc=f"NumPy-semantics elementwise {_name[5:]}."))


# ---------------------------------------------------------------------- more binary
def _floats(fn: Fn) -> Fn:
    """A float-valued function of two arrays: integer operands become float32."""
    return lambda a, b: fn(_as_float(a), _as_float(b))


def _ldexp(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _as_float(a) * torch.pow(2.0, _as_float(b))


_BINARY2: list[tuple[str, Fn, bool]] = [  # (name, fn, has a reflected scalar form)
    ("arctan2", _floats(torch.atan2), True), ("hypot", _floats(torch.hypot), False),
    ("copysign", _floats(torch.copysign), True), ("ldexp", _ldexp, True),
    ("lcm", torch.lcm, False), ("bitwise_and", torch.bitwise_and, False),
    ("bitwise_or", torch.bitwise_or, False), ("bitwise_xor", torch.bitwise_xor, False),
]


def _int_scalar_compute(fn: Fn) -> Fn:
    """Integer-only scalar ops (bitwise, lcm): the scalar is used as an int."""
    def compute(attrs, x: torch.Tensor) -> torch.Tensor:
        return fn(x, torch.tensor(int(attrs.scalar), dtype=x.dtype, device=x.device))
    return compute


_SCALAR_PARAMS = [Float("scalar", 1.0), Bool("is_int", True)]
for _short, _fn, _refl in _BINARY2:
    register(OpDef(f"_npi_{_short}", _binary_compute(_fn), inputs=("lhs", "rhs"),
                   doc=f"NumPy-semantics broadcast {_short}."))
    _int_only = _short.startswith("bitwise") or _short == "lcm"
    if _short != "hypot":  # MXNet: hypot with a scalar emits the legacy _hypot_scalar
        register(OpDef(f"_npi_{_short}_scalar", _int_scalar_compute(_fn) if _int_only else
                       _scalar_compute(_fn, False, keep_int=True), params=_SCALAR_PARAMS,
                       doc=f"NumPy-semantics {_short} with a scalar."))
    if _refl:
        register(OpDef(f"_npi_r{_short}_scalar", _scalar_compute(_fn, True, keep_int=True),
                       params=_SCALAR_PARAMS, doc=f"{_short} with the scalar first."))


# ---------------------------------------------------------------------- more reductions
def _moment(kind: str) -> Fn:
    def compute(attrs, x: torch.Tensor) -> torch.Tensor:
        dims = _axes(attrs.axis, x.dim())
        dt = torch_dtype(attrs.dtype) if attrs.dtype is not None else None
        x = x.to(dt) if dt is not None else _as_float(x)
        fn = torch.std if kind == "std" else torch.var
        return fn(x, dim=dims, correction=attrs.ddof, keepdim=attrs.keepdims)
    return compute


for _name in ("_npi_std", "_npi_var"):
    register(OpDef(_name, _moment(_name[5:]), inputs=("a",),
                   params=[OptShape("axis"), OptDtype("dtype"), Int("ddof", 0),
                           Bool("keepdims", False)],
                   doc=f"NumPy-semantics {_name[5:]} over ``axis`` (``ddof`` correction)."))


def _cumsum(attrs, x: torch.Tensor) -> torch.Tensor:
    dt = torch_dtype(attrs.dtype) if attrs.dtype is not None else (
        torch.int64 if not x.is_floating_point() else x.dtype)
    if attrs.axis is None:
        return torch.cumsum(x.reshape(-1), 0, dtype=dt)
    return torch.cumsum(x, attrs.axis, dtype=dt)


register(OpDef("_np_cumsum", _cumsum, inputs=("a",),
               params=[OptInt("axis"), OptDtype("dtype")],
               doc="Cumulative sum along ``axis`` (of the flattened array when None)."))


def _logical_reduce(fn: Fn) -> Fn:
    def compute(attrs, x: torch.Tensor) -> torch.Tensor:
        dims = _axes(attrs.axis, x.dim())
        xb = x.to(torch.bool)
        return fn(xb, dim=dims, keepdim=attrs.keepdims) if dims else xb.clone()
    return compute


for _name, _fn in (("_np_all", torch.all), ("_np_any", torch.any)):
    register(OpDef(_name, _logical_reduce(_fn), inputs=("data",),
                   params=[OptShape("axis"), Bool("keepdims", False)],
                   doc=f"Whether {_name[4:]} elements along ``axis`` are true (bool)."))


# ---------------------------------------------------------------------- more shapes
register(OpDef("_np_moveaxis", lambda attrs, x: torch.movedim(x, attrs.source,
                                                              attrs.destination),
               inputs=("a",), params=[Shape("source"), Shape("destination")],
               doc="Move axes ``source`` to ``destination``."))


def _flip(attrs, x: torch.Tensor) -> torch.Tensor:
    return torch.flip(x, _axes(attrs.axis, x.dim()))


register(OpDef("_npi_flip", _flip, inputs=("data",), params=[OptShape("axis")],
               doc="Reverse the order of elements along ``axis`` (every axis when None)."))


def _roll(attrs, x: torch.Tensor) -> torch.Tensor:
    if attrs.axis is None:
        return torch.roll(x.reshape(-1), attrs.shift[0]).reshape(x.shape)
    shift = attrs.shift * len(attrs.axis) if len(attrs.shift) == 1 else attrs.shift
    return torch.roll(x, shift, attrs.axis)


register(OpDef("_np_roll", _roll, inputs=("data",),
               params=[OptShape("shift"), OptShape("axis")],
               doc="Roll elements along ``axis`` by ``shift``."))
register(OpDef("_npi_tril", lambda attrs, x: torch.tril(x, attrs.k), inputs=("data",),
               params=[Int("k", 0)], doc="Lower triangle (below diagonal ``k``)."))
register(OpDef("_np_diag", lambda attrs, x: torch.diag(x, attrs.k), inputs=("data",),
               params=[Int("k", 0)], doc="Extract a diagonal or build a diagonal array."))
register(OpDef("_np_trace", lambda attrs, x: torch.diagonal(
                   x, attrs.offset, attrs.axis1, attrs.axis2).sum(-1), inputs=("data",),
               params=[Int("offset", 0), Int("axis1", 0), Int("axis2", 1)],
               doc="Sum along a diagonal."))
register(OpDef("_npi_tensordot_int_axes", lambda attrs, a, b: torch.tensordot(
                   a, b, attrs.axes), inputs=("a", "b"), params=[Int("axes")],
               doc="Tensor dot over the last/first ``axes`` axes (``outer``: axes=0)."))
register(OpDef("_npi_tensordot", lambda attrs, a, b: torch.tensordot(
                   a, b, (list(attrs.a_axes_summed), list(attrs.b_axes_summed))),
               inputs=("a", "b"), params=[Shape("a_axes_summed"), Shape("b_axes_summed")],
               doc="Tensor dot over the listed axes of ``a`` and ``b``."))
register(OpDef("_npi_vstack", lambda attrs, *xs: torch.vstack(xs), inputs=_var_inputs,
               key_var_num_args="num_args", params=[Int("num_args")],
               doc="Stack arrays row-wise."))
register(OpDef("_npi_hstack", lambda attrs, *xs: torch.hstack(xs), inputs=_var_inputs,
               key_var_num_args="num_args", params=[Int("num_args")],
               doc="Stack arrays column-wise."))
register(OpDef("_npi_einsum", lambda attrs, *xs: torch.einsum(attrs.subscripts, *xs),
               inputs=_var_inputs, key_var_num_args="num_args",
               params=[Int("num_args"), Str("subscripts", ""), Int("optimize", 0)],
               doc="Einstein summation."))


def _around(attrs, x: torch.Tensor) -> torch.Tensor:
    return torch.round(x, decimals=attrs.decimals) if x.is_floating_point() else x.clone()


register(OpDef("_npi_around", _around, inputs=("x",), params=[Int("decimals", 0)],
               doc="Round half to even to ``decimals`` places."))


# ---------------------------------------------------------------------- more creation
def _arange(attrs, *, device=None) -> torch.Tensor:
    start, stop = (0.0, attrs.start) if attrs.stop is None else (attrs.start, attrs.stop)
    dt = torch_dtype(attrs.dtype)
    vals = torch.arange(start, stop, attrs.step, dtype=torch.float64, device=device or "cpu")
    return vals.to(dt)


register(OpDef("_npi_arange", _arange, inputs=(), creates=True,
               params=[Float("start"), OptFloat("stop"), Float("step", 1.0),
                       Int("repeat", 1), Bool("infer_range", False), Str("ctx", ""),
                       Dtype("dtype", "float32")],
               doc="Evenly spaced values in ``[start, stop)``."))


def _eye(attrs, *, device=None) -> torch.Tensor:
    m = attrs.N if attrs.M is None else attrs.M
    ones = torch.ones(attrs.N, m, dtype=torch_dtype(attrs.dtype), device=device or "cpu")
    return ones.triu(attrs.k).tril(attrs.k)


register(OpDef("_npi_eye", _eye, inputs=(), creates=True,
               params=[Int("N"), OptInt("M"), Int("k", 0), Str("ctx", ""),
                       Dtype("dtype", "float32")],
               doc="An N x M array with ones on diagonal ``k``."))
register(OpDef("_npi_identity", lambda attrs, *, device=None: torch.eye(
                   attrs.shape[0], dtype=torch_dtype(attrs.dtype), device=device or "cpu"),
               inputs=(), creates=True,
               params=[Shape("shape", ()), Str("ctx", ""), Dtype("dtype", "float32")],
               doc="The identity matrix of shape ``shape`` (n, n)."))


# ---------------------------------------------------------------------- linalg
def _norm(attrs, x: torch.Tensor) -> torch.Tensor:
    # MXNet flags: -2 ord=None over all; -1 vector ord; 0 matrix ord; 1 'fro'; 2 'nuc'
    x = _as_float(x)
    dims = _axes(attrs.axis, x.dim())
    if attrs.flag in (-2, 1):
        return torch.linalg.vector_norm(x, 2, dims, keepdim=attrs.keepdims)
    if attrs.flag == -1:
        return torch.linalg.vector_norm(x, attrs.ord, dims, keepdim=attrs.keepdims)
    ord_ = "nuc" if attrs.flag == 2 else attrs.ord
    return torch.linalg.matrix_norm(x, ord_, dims, keepdim=attrs.keepdims)


register(OpDef("_npi_norm", _norm, inputs=("data",),
               params=[Float("ord", 2.0), OptShape("axis"), Bool("keepdims", False),
                       Int("flag", -1)],
               doc="Vector or matrix norm (``flag`` encodes NumPy's ``ord`` kind)."))
register(OpDef("_npi_cholesky", lambda attrs, a: torch.linalg.cholesky(a), inputs=("A",),
               doc="Lower Cholesky factor of a symmetric positive-definite matrix."))
register(OpDef("_npi_solve", lambda attrs, a, b: torch.linalg.solve(a, b),
               inputs=("A", "B"), doc="Solve ``A x = B``."))
register(OpDef("_npi_pinv_scalar_rcond", lambda attrs, a: torch.linalg.pinv(
                   a, rtol=attrs.rcond, hermitian=attrs.hermitian), inputs=("A",),
               params=[Float("rcond", 1e-15), Bool("hermitian", False)],
               doc="Moore-Penrose pseudo-inverse with a scalar ``rcond``."))
register(OpDef("_npi_eigvalsh", lambda attrs, a: torch.linalg.eigvalsh(a, UPLO=attrs.UPLO),
               inputs=("A",), params=[Str("UPLO", "L")],
               doc="Eigenvalues of a symmetric matrix, ascending."))
register(OpDef("_npi_svd", lambda attrs, a: tuple(torch.linalg.svd(a, full_matrices=False)),
               inputs=("A",), num_outputs=3,
               doc="SVD ``a = ut @ diag(l) @ v``: outputs (ut, l, v)."))


# ---------------------------------------------------------------------- random
def _rand_op(name: str, keys: tuple[str, str] | tuple[str], draw: Callable) -> None:
    """Register ``_npi_<name>``: scalar parameters as attributes, array ones as inputs."""
    def inputs(attrs) -> list[str]:
        return [f"input{i + 1}" for i, k in enumerate(keys) if getattr(attrs, k) is None]

    def compute(attrs, *ts, device=None) -> torch.Tensor:
        dt = torch_dtype(getattr(attrs, "dtype", None) or "float32")
        it = iter(ts)
        ps = [next(it).to(dt) if getattr(attrs, k) is None else
              torch.tensor(getattr(attrs, k), dtype=dt, device=device or "cpu") for k in keys]
        dev = ts[0].device if ts else (device or "cpu")
        shape = tuple(attrs.size) if attrs.size is not None else \
            tuple(torch.broadcast_shapes(*[p.shape for p in ps]))
        with torch.no_grad():
            return draw(torch.empty(shape, dtype=dt, device=dev), *[p.to(dev) for p in ps])
    params = [OptFloat(k) for k in keys] + [OptShape("size"), Str("ctx", "")]
    if name != "exponential":
        params.append(Dtype("dtype", "float32"))
    register(OpDef(f"_npi_{name}", compute, inputs=inputs, creates=True, params=params,
                   deterministic=False,
                   doc=f"Samples of the {name} distribution (NumPy-mode)."))


_rand_op("uniform", ("low", "high"), lambda e, lo, hi: lo + (hi - lo) * e.uniform_())
_rand_op("normal", ("loc", "scale"), lambda e, m, s: m + s * e.normal_())
_rand_op("exponential", ("scale",), lambda e, s: s * e.exponential_())


# ---------------------------------------------------------------------- npx table
# ``mx.npx.<name>`` / ``mx.sym.npx.<name>`` -> the registered operator it runs (the name a
# numpy-mode symbol JSON carries, as MXNet 1.9.1 writes it).
NPX_FUNCTIONS: dict[str, str] = {
    "activation": "Activation", "batch_dot": "batch_dot", "batch_flatten": "Flatten",
    "batch_norm": "BatchNorm", "cast": "Cast", "convolution": "Convolution",
    "deconvolution": "Deconvolution", "dropout": "Dropout", "embedding": "Embedding",
    "erf": "erf", "erfinv": "erfinv", "fully_connected": "FullyConnected", "gamma": "gamma",
    "gammaln": "gammaln", "gather_nd": "gather_nd", "layer_norm": "LayerNorm",
    "leaky_relu": "LeakyReLU", "log_softmax": "log_softmax", "nonzero": "_npx_nonzero",
    "one_hot": "one_hot", "pick": "pick", "pooling": "Pooling", "relu": "_npx_relu",
    "reshape": "_npx_reshape", "reshape_like": "reshape_like", "rnn": "RNN",
    "roi_pooling": "ROIPooling", "sequence_mask": "SequenceMask", "shape_array": "shape_array",
    "sigmoid": "_npx_sigmoid", "slice": "slice", "smooth_l1": "smooth_l1",
    "softmax": "softmax", "topk": "topk",
}

"""Creation and conversion operators: zeros, ones, full, arange, linspace, eye, cast, ...

Creation operators take ``device=`` at run time (``creates=True``) and accept MXNet's
``ctx`` string attribute so that symbol JSON carrying it parses; the device itself comes
from the caller's context.
"""
from __future__ import annotations

import math

import torch

from ..base import MXNetError, dtype_name
from ..util import is_np_shape
from .params import REQUIRED, Bool, Dtype, Float, Int, OptFloat, OptInt, Shape, Str
from .elemwise import same_shape_infer
from .registry import OpDef, register, same_type_infer
from .tensor_util import torch_dtype

__all__: list[str] = []


def _device(device: torch.device | None) -> torch.device:
    return device if device is not None else torch.device("cpu")


def _shape(op: str, shape: tuple) -> tuple:
    if any(d is None or d < 0 for d in shape):
        raise MXNetError(f"Operator {op}: invalid shape {shape}")
    if not is_np_shape() and (not shape or 0 in shape):
        # MXNet: outside NumPy shape semantics () and a 0 dimension mean "unknown"
        raise MXNetError(f"Operator {op}: inferring shapes failed: shape {tuple(shape)} is "
                         "unknown (scalar and zero-size arrays need mx.np_shape())")
    return tuple(shape)


def _fill_value(value: float, dtype: torch.dtype):
    """The fill value cast the way MXNet casts it (truncation for integer dtypes)."""
    if dtype.is_floating_point:
        return value
    if dtype == torch.bool:
        return bool(value)
    return int(value)


def _zeros(attrs, *, device=None) -> torch.Tensor:
    return torch.zeros(_shape("_zeros", attrs.shape), dtype=torch_dtype(attrs.dtype),
                       device=_device(device))


def _ones(attrs, *, device=None) -> torch.Tensor:
    return torch.ones(_shape("_ones", attrs.shape), dtype=torch_dtype(attrs.dtype),
                      device=_device(device))


def _full(attrs, *, device=None) -> torch.Tensor:
    dt = torch_dtype(attrs.dtype)
    return torch.full(_shape("_full", attrs.shape), _fill_value(attrs.value, dt), dtype=dt,
                      device=_device(device))


def _init_infer(attrs, shapes, out_shapes=None):
    """The output is ``shape``; its unknown dimensions (0, or -1 as NumPy semantics
    write them) come from what the graph knows of the output (inferred backwards)."""
    # MXNet: outside NumPy semantics a 0 in ``shape`` is an unknown dimension too.
    shape = tuple(d if d is not None and d > 0 else 0 for d in attrs.shape)
    out = (out_shapes or [None])[0]
    if out is not None and len(out) == len(shape):
        shape = tuple(d or o for d, o in zip(shape, out))
    return shapes, [shape]


_CREATE = [Shape("shape", ()), Str("ctx", ""), Dtype("dtype", "float32")]

register(OpDef("_zeros", _zeros, params=_CREATE, inputs=(), creates=True,
               infer_shape=_init_infer, infer_shape_takes_outputs=True,
               doc="An array of zeros of the given shape and dtype."))
register(OpDef("_ones", _ones, params=_CREATE, inputs=(), creates=True,
               infer_shape=_init_infer, infer_shape_takes_outputs=True,
               doc="An array of ones of the given shape and dtype."))
register(OpDef("_full", _full, params=[*_CREATE, Float("value")], inputs=(), creates=True,
               infer_shape=_init_infer,
               infer_shape_takes_outputs=True, doc="An array filled with ``value``."))


def _zeros_without_dtype(attrs, *, device=None) -> torch.Tensor:
    # MXNet: dtype is a type flag; -1 (unknown) becomes float32 here.
    dt = torch_dtype("float32" if attrs.dtype < 0 else dtype_name(attrs.dtype))
    return torch.zeros(_shape("_zeros_without_dtype", attrs.shape), dtype=dt,
                       device=_device(device))


def _zeros_without_dtype_type(attrs, in_types):
    return in_types, ["float32" if attrs.dtype < 0 else dtype_name(attrs.dtype)]


register(OpDef("_zeros_without_dtype", _zeros_without_dtype, inputs=(), creates=True,
               infer_type=_zeros_without_dtype_type,
               params=[Shape("shape", ()), Str("ctx", ""), Int("dtype", -1)],
               doc="An array of zeros whose dtype is a type flag (-1: float32)."))


# ---------------------------------------------------------------------- ranges
def _arange_len(start: float, stop: float, step: float) -> int:
    if step == 0:
        raise MXNetError("Operator _arange: step must not be 0")
    if (step > 0 and start >= stop) or (step < 0 and start <= stop):
        raise MXNetError(f"Operator _arange: Invalid range (start, stop, step) = "
                         f"({start:g},{stop:g},{step:g})")
    return int(math.ceil((stop - start) / step))


def _arange(attrs, *, device=None) -> torch.Tensor:
    """``start + i * step`` in the target dtype, each value repeated ``repeat`` times."""
    start, stop, step = attrs.start, attrs.stop, attrs.step
    if stop is None:
        start, stop = 0.0, start
    n = _arange_len(start, stop, step)
    if attrs.repeat < 1:
        raise MXNetError(f"Operator _arange: repeat must be positive, got {attrs.repeat}")
    dt = torch_dtype(attrs.dtype)
    dev = _device(device)
    if dt.is_floating_point:
        calc = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
        idx = torch.arange(n, dtype=calc, device=dev)
        out = (idx * torch.tensor(step, dtype=calc, device=dev)
               + torch.tensor(start, dtype=calc, device=dev)).to(dt)
    else:
        # MXNet: start and step are cast to the integer dtype first.
        out = (torch.arange(n, dtype=torch.int64, device=dev) * int(step) + int(start)).to(dt)
    if attrs.repeat > 1:
        out = out.repeat_interleave(attrs.repeat)
    return out


def _infers_range(attrs) -> bool:
    # MXNet: with infer_range and no stop, the length comes from the graph
    return attrs.infer_range and attrs.stop is None


def _arange_infer(attrs, shapes, out_shapes=None):
    if _infers_range(attrs):
        return shapes, [(out_shapes or [None])[0]]
    start, stop = (0.0, attrs.start) if attrs.stop is None else (attrs.start, attrs.stop)
    return shapes, [(_arange_len(start, stop, attrs.step) * attrs.repeat,)]


def _arange_with_shape(attrs, shape: tuple):
    """The stop that gives ``shape`` (arange with infer_range in a graph)."""
    return attrs._replace(stop=attrs.start + attrs.step * (shape[0] // attrs.repeat))


register(OpDef("_arange", _arange, inputs=(), creates=True,
               params=[Float("start"), OptFloat("stop", None), Float("step", 1.0),
                       Int("repeat", 1), Bool("infer_range", False), Str("ctx", ""),
                       Dtype("dtype", "float32")],
               infer_shape=_arange_infer,
               infer_shape_takes_outputs=True, shape_from_graph=_infers_range,
               with_shape=_arange_with_shape,
               doc="Evenly spaced values in [start, stop), each repeated ``repeat`` times."))


def _arange_like(attrs, data: torch.Tensor) -> torch.Tensor:
    """``start + (i // repeat) * step`` in data's shape (or along one of its axes)."""
    if attrs.axis is None:
        shape = tuple(data.shape)
    else:
        if not -data.dim() <= attrs.axis < data.dim():
            raise MXNetError(f"Operator _contrib_arange_like: axis {attrs.axis} is out of "
                             f"range for data of shape {tuple(data.shape)}")
        shape = (data.shape[attrs.axis],)
    n = math.prod(shape)
    idx = torch.div(torch.arange(n, dtype=torch.float64, device=data.device),
                    attrs.repeat, rounding_mode="floor")
    start, step = attrs.start, attrs.step
    if not data.is_floating_point():   # MXNet: start and step cast to the dtype first
        start, step = int(start), int(step)
    return (start + idx * step).to(data.dtype).reshape(shape)


def _arange_like_infer(attrs, shapes):
    data = shapes[0]
    if data is None or attrs.axis is None:
        return shapes, [data]
    return shapes, [(data[attrs.axis],)]


register(OpDef("_contrib_arange_like", _arange_like, aliases=("_npx_arange_like",),
               params=[Float("start", 0.0), Float("step", 1.0), Int("repeat", 1),
                       Str("ctx", ""), OptInt("axis", None)],
               infer_shape=_arange_like_infer, infer_type=same_type_infer,
               doc="Evenly spaced values with the shape of ``data`` (or the size of its "
                   "``axis``); its gradient is zero."))


def _linspace(attrs, *, device=None) -> torch.Tensor:
    """``num`` values from ``start`` to ``stop`` (computed in float64, then cast)."""
    num = attrs.num
    if num < 0:
        raise MXNetError(f"Operator _linspace: num must be non-negative, got {num}")
    div = (num - 1) if attrs.endpoint else num
    step = (attrs.stop - attrs.start) / div if div > 0 else 0.0
    idx = torch.arange(num, dtype=torch.float64, device=_device(device))
    return (attrs.start + idx * step).to(torch_dtype(attrs.dtype))


register(OpDef("_linspace", _linspace, inputs=(), creates=True,
               params=[Float("start"), Float("stop"), Int("num"), Bool("endpoint", True),
                       Str("ctx", ""), Dtype("dtype", "float32")],
               doc="``num`` evenly spaced values over [start, stop]."))


def _eye(attrs, *, device=None) -> torch.Tensor:
    """A 2-D array with ones on the ``k``-th diagonal (``M=0`` means ``M=N``)."""
    n = attrs.N
    m = attrs.M if attrs.M > 0 else n
    if n < 0:
        raise MXNetError(f"Operator _eye: N must be non-negative, got {n}")
    dev = _device(device)
    rows = torch.arange(n, device=dev).unsqueeze(1)
    cols = torch.arange(m, device=dev).unsqueeze(0)
    return (cols - rows == attrs.k).to(torch_dtype(attrs.dtype))


register(OpDef("_eye", _eye, inputs=(), creates=True,
               params=[Int("N"), Int("M", 0), Int("k", 0), Str("ctx", ""),
                       Dtype("dtype", "float32")],
               doc="A 2-D identity-like array with ones on the k-th diagonal."))


# ---------------------------------------------------------------------- *_like, copies
register(OpDef("zeros_like", lambda attrs, x: torch.zeros_like(x), fluent=True,
               aliases=("_sparse_zeros_like",), doc="Zeros with the shape and dtype of x."))
register(OpDef("ones_like", lambda attrs, x: torch.ones_like(x), fluent=True,
               doc="Ones with the shape and dtype of x."))
register(OpDef("_copy", lambda attrs, x: x.clone(), aliases=("identity",),
               doc="A copy of the input."))
register(OpDef("_copyto", lambda attrs, x: x.clone(), doc="A copy of the input (copyto)."))
register(OpDef("_identity_with_attr_like_rhs", lambda attrs, lhs, rhs: lhs.clone(),
               inputs=("lhs", "rhs"), infer_shape=same_shape_infer,
               infer_shape_takes_outputs=True,
               doc="A copy of lhs that takes the shape of rhs in shape inference (which is "
                   "how a graph infers an input backwards); rhs gets no gradient."))


def _shape_array(attrs, x: torch.Tensor) -> torch.Tensor:
    return torch.tensor(list(x.shape), dtype=torch.int64, device=x.device)


def _size_array(attrs, x: torch.Tensor) -> torch.Tensor:
    return torch.tensor([x.numel()], dtype=torch.int64, device=x.device)


register(OpDef("shape_array", _shape_array, fluent=True,
               doc="The shape of the input as a 1-D int64 array."))
register(OpDef("size_array", _size_array, fluent=True,
               doc="The number of elements of the input as a (1,) int64 array."))


# ---------------------------------------------------------------------- casts
def _cast_infer_type(attrs, types):
    """The output is ``dtype`` whatever the input's (still unknown) dtype."""
    return types, [dtype_name(attrs.dtype)]


def _cast(attrs, x: torch.Tensor) -> torch.Tensor:
    """Convert to ``dtype`` (floats to integers truncate and wrap, as in C)."""
    return x.to(torch_dtype(attrs.dtype), copy=True)


def _cast_float_attrs(attrs):
    """A cast to an integer type casts to float64 on integer gradients' path."""
    if torch_dtype(attrs.dtype).is_floating_point:
        return None
    return attrs._replace(dtype="float64")


register(OpDef("Cast", _cast, params=[Dtype("dtype", REQUIRED)], aliases=("cast",),
               fluent="astype", infer_shape=same_shape_infer,
               infer_shape_takes_outputs=True, infer_type=_cast_infer_type,
               float_attrs=_cast_float_attrs,
               doc="Cast the input to ``dtype``; the gradient is cast back."))


# the dtypes that AMP's casts convert; every other dtype passes through them
_AMP_FLOATS = (torch.float32, torch.float16, torch.bfloat16)


def _amp_shape(attrs, in_shapes: list, out_shapes: list | None = None):
    """Each output has its input's shape, inferred both ways (0 = unknown dimension)."""
    outs = list(out_shapes or [None] * len(in_shapes))
    merged = []
    for i, o in zip(in_shapes, outs):
        if i is None or o is None or len(i) != len(o):
            merged.append(i if i is not None else o)
        else:
            merged.append(tuple(a or b for a, b in zip(i, o)))
    return merged, merged


def _amp_cast(attrs, x: torch.Tensor) -> torch.Tensor:
    # MXNet: only float32/float16/bfloat16 inputs are cast; float64 and integers pass through.
    if x.dtype not in _AMP_FLOATS:
        return x.clone()
    return x.to(torch_dtype(attrs.dtype), copy=True)


register(OpDef("amp_cast", _amp_cast, params=[Dtype("dtype", REQUIRED)],
               infer_shape=_amp_shape, infer_shape_takes_outputs=True,
               doc="AMP cast: cast floating-point input to ``dtype``."))


def _amp_multicast(attrs, *xs: torch.Tensor):
    """Cast the float32/float16/bfloat16 inputs to the widest (or narrowest) of them."""
    if len(xs) != attrs.num_outputs:
        raise MXNetError(f"Operator amp_multicast: num_outputs={attrs.num_outputs} but "
                         f"{len(xs)} inputs were given")
    if attrs.cast_narrow:
        # MXNet: float32 unless some input is float16 or bfloat16 (the last such one wins)
        target = torch.float32
        for x in xs:
            if x.dtype is torch.float16 or x.dtype is torch.bfloat16:
                target = x.dtype
    elif any(x.dtype is torch.float32 for x in xs):
        target = torch.float32
    else:
        # MXNet: without a float32 input the first input's dtype is "widest", whatever it
        # is (float64 and int32 included: (int32, float16) casts the float16 to int32)
        target = xs[0].dtype if xs else torch.float32
    outs = tuple(x.to(target, copy=True) if x.dtype in _AMP_FLOATS else x.clone() for x in xs)
    return outs[0] if len(outs) == 1 else outs


register(OpDef("amp_multicast", _amp_multicast,
               params=[Int("num_outputs"), Bool("cast_narrow", False)],
               inputs=lambda attrs: [f"data_{i}" for i in range(attrs.num_outputs)],
               key_var_num_args="num_outputs", num_outputs=lambda attrs: attrs.num_outputs,
               infer_shape=_amp_shape, infer_shape_takes_outputs=True,
               doc="AMP multicast: cast float32/float16/bfloat16 inputs to a common type."))

"""Shape operators: Reshape (MXNet codes 0/-1/-2/-3/-4), Flatten, transpose, expand_dims,
squeeze, SwapAxis, Concat, stack, SliceChannel, _split_v2, slice, slice_axis, slice_like,
tile, repeat, reverse, broadcast_to/_like/_axis, Pad, depth_to_space, space_to_depth, diag
and the slice-assignment operators behind ``NDArray.__setitem__``.

Computes are plain torch calls and return views wherever torch does.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import torch
import torch.nn.functional as F

from ..base import MXNetError
from .params import REQUIRED, Bool, Enum, Float, Int, OptInt, OptShape, Shape
from .registry import OpDef, register, same_type_infer

__all__ = ["reshape_target"]


def _axis(op: str, axis: int, ndim: int, name: str = "axis") -> int:
    """Normalize a possibly negative axis into ``[0, ndim)``; raise naming ``op``."""
    real = axis + ndim if axis < 0 else axis
    if not 0 <= real < ndim:
        raise MXNetError(f"{op}: {name}={axis} is out of bounds for an array of ndim {ndim}")
    return real


def _nonneg_axis(op: str, axis: int, ndim: int) -> int:
    """MXNet: some operators (reverse, broadcast_axis, transpose) reject negative axes."""
    if not 0 <= axis < ndim:
        raise MXNetError(f"{op}: axis index {axis} must be in range [0, {ndim})")
    return axis


def _same_dtype(op: str, tensors: Sequence[torch.Tensor]) -> None:
    """MXNet: variadic ops refuse mixed dtypes instead of promoting."""
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype != tensors[0].dtype:
            raise MXNetError(f"{op}: non-uniform data type, expected {tensors[0].dtype} "
                             f"but input {i} is {t.dtype}")


# ---------------------------------------------------------------------- Reshape
def _split_code(dshape: list, spec: list, i: int, src: int) -> tuple[int, int]:
    """The two dims of a -4 code at ``spec[i]`` splitting ``dshape[src]``."""
    if i + 2 >= len(spec):
        raise MXNetError("Reshape: -4 must be followed by two dims")
    if src >= len(dshape):
        raise MXNetError(f"Reshape: -4 has no input dim left to split in {tuple(dshape)}")
    d0, d1, d2 = dshape[src], spec[i + 1], spec[i + 2]
    if d1 == -1 and d2 == -1:
        raise MXNetError("Reshape: split dims cannot both be -1")
    if d1 == -1:
        d1 = d0 // d2 if d2 else 0
    if d2 == -1:
        d2 = d0 // d1 if d1 else 0
    if d1 * d2 != d0 and d0 != 0:
        raise MXNetError(f"Reshape: split dims {d1}, {d2} do not divide original dim {d0}")
    return d1, d2


def _reshape_codes(dshape: list, spec: list) -> list:
    """Apply MXNet's Reshape codes left to right (0 in ``dshape`` = unknown dim)."""
    out: list[int] = []
    src, inf_idx, i = 0, -1, 0
    while i < len(spec):
        p = spec[i]
        if p == 0:
            if src >= len(dshape):
                raise MXNetError(f"Reshape: code 0 at position {i} has no input dim to "
                                 f"copy from {tuple(dshape)}")
            out.append(dshape[src])
            src += 1
        elif p == -1:
            if inf_idx >= 0:
                raise MXNetError("Reshape: one and only one dim can be inferred (-1)")
            # MXNet indexes the inferred dim by code position (wrong after -2/-3/-4 and
            # giving a shape of the wrong size); we use its position in the output.
            inf_idx = len(out)
            out.append(1)
            src += 1
        elif p == -2:
            out.extend(dshape[src:])
            src = len(dshape)
        elif p == -3:
            if src + 1 >= len(dshape):
                raise MXNetError(f"Reshape: -3 needs two input dims at position {src} of "
                                 f"{tuple(dshape)}")
            out.append(dshape[src] * dshape[src + 1])
            src += 2
        elif p == -4:
            out.extend(_split_code(dshape, spec, i, src))
            src += 1
            i += 2
        elif p > 0:
            out.append(p)
            src += 1
        else:
            raise MXNetError(f"Reshape: invalid shape code {p} in {tuple(spec)}")
        i += 1
    if inf_idx >= 0:
        total, rest = math.prod(dshape), math.prod(out)
        out[inf_idx] = total // rest if rest else 0
    return out


class ReshapeSizeError(MXNetError, ValueError):
    """A target shape of another size: MXNet's ``NDArray.reshape`` raises ValueError for it,
    its operator an MXNetError; this is both."""


def reshape_target(dshape: tuple, spec: tuple, reverse: bool = False) -> tuple:
    """The output shape of MXNet's Reshape for input ``dshape`` and codes ``spec``."""
    dshape_l, spec_l = list(dshape), list(spec)
    if reverse:
        dshape_l.reverse()
        spec_l.reverse()
    out = _reshape_codes(dshape_l, spec_l)
    if reverse:
        out.reverse()
    total_in, total_out = math.prod(dshape), math.prod(out)
    if total_in != total_out and 0 not in dshape:
        raise ReshapeSizeError(f"Reshape: cannot reshape array of size {total_in} into shape "
                               f"{tuple(spec)}: target shape {tuple(out)} has size "
                               f"{total_out}, input shape {tuple(dshape)}")
    return tuple(out)


def _legacy_target(attrs, dshape: tuple) -> tuple:
    """Deprecated ``target_shape``: 0 marks the one inferred dim; keep_highest keeps dim 0."""
    out = list(attrs.target_shape)
    start = 1 if attrs.keep_highest else 0
    if attrs.keep_highest:
        out[0] = dshape[0]
    zeros = [i for i in range(start, len(out)) if out[i] == 0]
    if len(zeros) == 1:
        out[zeros[0]] = 1
        out[zeros[0]] = math.prod(dshape) // math.prod(out)
    if math.prod(out) != math.prod(dshape):
        raise MXNetError(f"Reshape: target shape {tuple(out)} is incompatible with input "
                         f"shape {tuple(dshape)}")
    return tuple(out)


def _reshape_out(attrs, dshape: tuple) -> tuple:
    """Reshape's output shape from either ``shape`` or the deprecated ``target_shape``."""
    if attrs.shape:
        return reshape_target(dshape, attrs.shape, attrs.reverse)
    if attrs.target_shape:
        return _legacy_target(attrs, dshape)
    raise MXNetError("Reshape: the target shape is empty; give shape=(...)")


def _reshape_compute(attrs, x):
    return x.reshape(_reshape_out(attrs, tuple(x.shape)))


def _reshape_infer(attrs, shapes, out_shapes=None):
    """Forward inference, and back-filling one unknown input dim from a known output (the
    one computed, or the one the graph knows)."""
    (d,) = shapes
    if d is None:
        return shapes, [None]
    if 0 not in d:
        return shapes, [_reshape_out(attrs, d)]
    if not attrs.shape:   # the deprecated target_shape: left to the generic inference
        return shapes, None
    out = reshape_target(d, attrs.shape, attrs.reverse)
    given = (out_shapes or [None])[0]
    if 0 in out and given is not None and 0 not in given and len(given) == len(out):
        out = tuple(given)
    if d.count(0) == 1 and 0 not in out:
        known = math.prod(x for x in d if x)
        d = tuple(math.prod(out) // known if x == 0 else x for x in d)
        return [d], [out]
    return shapes, [out]


register(OpDef(
    "Reshape", _reshape_compute, aliases=("reshape",), fluent="reshape",
    params=[Shape("shape", ()), Bool("reverse", False), Shape("target_shape", ()),
            Bool("keep_highest", False)],
    infer_shape=_reshape_infer, infer_shape_takes_outputs=True,
    doc="Reshape the input; supports MXNet's special codes 0, -1, -2, -3 and -4."))


def _reshape_like_compute(attrs, lhs, rhs):
    ln, rn = lhs.dim(), rhs.dim()

    def bound(v: int | None, default: int, n: int) -> int:
        return default if v is None else (v + n if v < 0 else v)
    lb, le = bound(attrs.lhs_begin, 0, ln), bound(attrs.lhs_end, ln, ln)
    rb, re_ = bound(attrs.rhs_begin, 0, rn), bound(attrs.rhs_end, rn, rn)
    if not (0 <= lb <= le <= ln and 0 <= rb <= re_ <= rn):
        raise MXNetError(f"reshape_like: invalid begin/end for lhs {tuple(lhs.shape)} and "
                         f"rhs {tuple(rhs.shape)}")
    target = tuple(lhs.shape[:lb]) + tuple(rhs.shape[rb:re_]) + tuple(lhs.shape[le:])
    if math.prod(target) != lhs.numel():
        raise MXNetError(f"reshape_like: cannot reshape lhs with shape {tuple(lhs.shape)} "
                         f"to new shape {target} because they have different size")
    return lhs.reshape(target)


register(OpDef(
    "reshape_like", _reshape_like_compute, inputs=("lhs", "rhs"), fluent=True,
    params=[OptInt("lhs_begin"), OptInt("lhs_end"), OptInt("rhs_begin"), OptInt("rhs_end")],
    doc="Reshape lhs to the shape of rhs (or of a range of its axes)."))


def _flatten_compute(attrs, x):
    if x.dim() == 0:
        return x.reshape(1, 1)
    return x.reshape(x.shape[0], -1) if x.dim() != 1 else x.reshape(x.shape[0], 1)


def _flatten_infer(attrs, shapes):
    """(d0, d1*...*dk), unknown (0) where a collapsed dim is unknown."""
    data = shapes[0]
    if data is None:
        return shapes, [None]
    if not data:
        return shapes, [(1, 1)]
    return shapes, [(data[0], math.prod(data[1:]))]


register(OpDef("Flatten", _flatten_compute, aliases=("flatten",), fluent="flatten",
               infer_shape=_flatten_infer, infer_type=same_type_infer,
               doc="Flatten to 2-D: (d0, d1*...*dk)."))


def _transpose_compute(attrs, x):
    axes = attrs.axes
    if not axes:
        return x.permute(*reversed(range(x.dim())))
    if sorted(axes) != list(range(x.dim())):
        raise MXNetError(f"transpose: axes {tuple(axes)} is not a permutation of the "
                         f"{x.dim()} axes of shape {tuple(x.shape)}")
    return x.permute(*axes)


def _transpose_infer(attrs, shapes, out_shapes=None):
    """The output permutes the input's dims; each is inferred from the other."""
    data, out = shapes[0], (out_shapes or [None])[0]
    if data is None and out is None:
        return shapes, [None]
    ndim = len(data if data is not None else out)
    axes = tuple(attrs.axes) or tuple(reversed(range(ndim)))
    if sorted(axes) != list(range(ndim)):
        raise MXNetError(f"transpose: axes {axes} is not a permutation of the {ndim} axes "
                         f"of shape {data if data is not None else out}")
    dims = list(data) if data is not None else [0] * ndim
    if out is not None:
        for k, a in enumerate(axes):
            dims[a] = dims[a] or out[k]
    return [tuple(dims)], [tuple(dims[a] for a in axes)]


register(OpDef("transpose", _transpose_compute, params=[Shape("axes", ())], fluent=True,
               infer_shape=_transpose_infer, infer_shape_takes_outputs=True,
               doc="Permute the axes (reverse them by default)."))


def _expand_dims_compute(attrs, x):
    nd = x.dim()
    axis = attrs.axis + nd + 1 if attrs.axis < 0 else attrs.axis
    if not 0 <= axis <= nd:
        raise MXNetError(f"expand_dims: axis must be in the range [{-nd}, {nd}] "
                         f"({attrs.axis} provided)")
    return x.unsqueeze(axis)


register(OpDef("expand_dims", _expand_dims_compute, params=[Int("axis")], fluent=True,
               doc="Insert a new axis of size 1 at ``axis``."))


def _squeeze_compute(attrs, x):
    if attrs.axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = sorted({_axis("squeeze", a, x.dim()) for a in attrs.axis})
    for a in axes:
        if x.shape[a] != 1:
            raise MXNetError(f"squeeze: cannot select axis {a} to squeeze out, it has size "
                             f"{x.shape[a]} != 1 in shape {tuple(x.shape)}")
    keep = [d for i, d in enumerate(x.shape) if i not in axes]
    # MXNet: legacy arrays are never 0-d, squeezing every axis leaves shape (1,).
    return x.reshape(keep or [1])


register(OpDef("squeeze", _squeeze_compute, params=[OptShape("axis")], fluent=True,
               doc="Remove axes of size 1 (all of them, or those in ``axis``)."))


def _swapaxis_compute(attrs, x):
    d1 = _axis("SwapAxis", attrs.dim1, x.dim(), "dim1")
    d2 = _axis("SwapAxis", attrs.dim2, x.dim(), "dim2")
    return x.transpose(d1, d2)


register(OpDef("SwapAxis", _swapaxis_compute, aliases=("swapaxes",), fluent="swapaxes",
               params=[Int("dim1", 0), Int("dim2", 0)],
               doc="Interchange two axes of the input."))


# ---------------------------------------------------------------------- Concat / stack
def _var_inputs(attrs) -> list[str]:
    return [f"arg{i}" for i in range(attrs.num_args)]


def _concat_compute(attrs, *xs):
    if not xs:
        raise MXNetError("Concat: needs at least one input")
    ndim = xs[0].dim()
    axis = _axis("Concat", attrs.dim, ndim, "dim")
    _same_dtype("Concat", xs)
    for i, t in enumerate(xs):
        ok = t.dim() == ndim and all(a == b for k, (a, b) in
                                     enumerate(zip(t.shape, xs[0].shape)) if k != axis)
        if not ok:
            raise MXNetError(f"Concat: incompatible input shape {tuple(t.shape)} for input "
                             f"{i}; expected {tuple(xs[0].shape)} except along dim {axis}")
    return torch.cat(xs, dim=axis)


def _merge_dims(op: str, shapes: list, skip: int | None) -> list[int]:
    """Merge the known dims of several shapes (except axis ``skip``); raise on conflicts."""
    known = [s for s in shapes if s is not None]
    ndim = len(known[0])
    common = [0] * ndim
    for s in known:
        if len(s) != ndim:
            raise MXNetError(f"{op}: inputs have different ndim: {known}")
        for k, d in enumerate(s):
            if k == skip or not d:
                continue
            if common[k] and common[k] != d:
                raise MXNetError(f"{op}: incompatible input shapes {known} at axis {k}")
            common[k] = d
    return common


def _concat_infer(attrs, shapes, out_shapes=None):
    """Fill the non-concat dims of the inputs from each other and from the output (the
    concat dims are not inferred backwards, as in MXNet)."""
    out_known = (out_shapes or [None])[0]
    known = [s for s in list(shapes) + [out_known] if s is not None]
    if not known:
        return shapes, [None]
    axis = _axis("Concat", attrs.dim, len(known[0]), "dim")
    common = _merge_dims("Concat", list(shapes) + [out_known], axis)
    parts = [s[axis] if s is not None else 0 for s in shapes]
    total = out_known[axis] if out_known is not None else 0
    new = []
    for part in parts:
        fill = list(common)
        fill[axis] = part
        new.append(tuple(fill))
    out = list(common)
    out[axis] = sum(parts) if all(parts) else total
    return new, [tuple(out)]


register(OpDef(
    "Concat", _concat_compute, aliases=("concat",), inputs=_var_inputs,
    key_var_num_args="num_args",
    params=[Int("num_args", doc="Number of inputs to be concated.", lower=1), Int("dim", 1)],
    infer_shape=_concat_infer, infer_shape_takes_outputs=True, infer_type=same_type_infer,
    channels_last="keep_all",
    doc="Join the inputs along axis ``dim``."))


def _stack_compute(attrs, *xs):
    if not xs:
        raise MXNetError("stack: needs at least one input")
    nd = xs[0].dim()
    axis = attrs.axis + nd + 1 if attrs.axis < 0 else attrs.axis
    if not 0 <= axis <= nd:
        raise MXNetError(f"stack: axis {attrs.axis} is out of range for inputs of ndim {nd}")
    _same_dtype("stack", xs)
    for i, t in enumerate(xs):
        if t.shape != xs[0].shape:
            raise MXNetError(f"stack: all inputs must have the same shape; input {i} has "
                             f"{tuple(t.shape)}, input 0 has {tuple(xs[0].shape)}")
    return torch.stack(xs, dim=axis)


def _stack_infer(attrs, shapes):
    """All inputs share one shape: fill unknown inputs from the known ones."""
    if all(s is None for s in shapes):
        return shapes, [None]
    common = tuple(_merge_dims("stack", shapes, None))
    nd = len(common)
    axis = attrs.axis + nd + 1 if attrs.axis < 0 else attrs.axis
    if not 0 <= axis <= nd:
        raise MXNetError(f"stack: axis {attrs.axis} is out of range for inputs of ndim {nd}")
    out = common[:axis] + (len(shapes),) + common[axis:]
    return [common] * len(shapes), [out]


register(OpDef(
    "stack", _stack_compute, inputs=_var_inputs, key_var_num_args="num_args",
    params=[Int("axis", 0), Int("num_args", doc="Number of inputs to be stacked.", lower=1)],
    infer_shape=_stack_infer,
    doc="Join the inputs along a new axis."))


# ---------------------------------------------------------------------- split
def _split_parts(x: torch.Tensor, axis: int, sizes: list[int], squeeze: bool):
    """Split ``x`` into views of ``sizes`` along ``axis``; one tensor when only one part."""
    parts = torch.split(x, sizes, dim=axis)
    if squeeze:
        parts = tuple(p.squeeze(axis) if x.dim() > 1 else p for p in parts)
    return parts[0] if len(parts) == 1 else parts


def _slice_channel_compute(attrs, x):
    n = attrs.num_outputs
    axis = _axis("SliceChannel", attrs.axis, x.dim())
    size = x.shape[axis]
    if n <= 0 or size % n:
        raise MXNetError(f"SliceChannel: cannot split axis {axis} of shape {tuple(x.shape)} "
                         f"into num_outputs={n} evenly sized chunks")
    if attrs.squeeze_axis and size != n:
        raise MXNetError(f"SliceChannel: with squeeze_axis=True the size of axis {axis} "
                         f"({size}) must equal num_outputs={n}")
    return _split_parts(x, axis, [size // n] * n, attrs.squeeze_axis)


def _numbered_outputs(count) -> Any:
    return lambda attrs: [f"output{i}" for i in range(count(attrs))]


def _nout_slice(attrs) -> int:
    return attrs.num_outputs


def _slice_channel_infer(attrs, shapes, out_shapes=None):
    """Every output has the input's shape with the split axis divided by num_outputs
    (or removed with squeeze_axis); the input is also inferred from the outputs."""
    n, squeeze = attrs.num_outputs, attrs.squeeze_axis
    data = shapes[0]
    outs = [o for o in out_shapes or () if o is not None]
    if data is None and not outs:
        return shapes, None
    ndim = len(data) if data is not None else len(outs[0]) + squeeze
    axis = _axis("SliceChannel", attrs.axis, ndim)
    dims = list(data) if data is not None else [0] * ndim
    if outs:
        common = _merge_dims("SliceChannel", outs, None)
        if squeeze:
            common.insert(axis, n)
        else:
            common[axis] *= n
        dims = [d or c for d, c in zip(dims, common)]
    size = dims[axis]
    if size and (n <= 0 or size % n or (squeeze and size != n)):
        raise MXNetError(f"SliceChannel: cannot split axis {axis} of shape {tuple(dims)} "
                         f"into num_outputs={n} evenly sized chunks"
                         + (" (squeeze_axis needs it of size num_outputs)" if squeeze else ""))
    out = list(dims)
    if squeeze:
        del out[axis]
    else:
        out[axis] = size // n if size else 0
    return [tuple(dims)], [tuple(out)] * n


register(OpDef(
    "SliceChannel", _slice_channel_compute, aliases=("split",), fluent="split",
    params=[Int("num_outputs", doc="Number of splits.", lower=1), Int("axis", 1),
            Bool("squeeze_axis", False)],
    num_outputs=_nout_slice, output_names=_numbered_outputs(_nout_slice),
    infer_shape=_slice_channel_infer, infer_shape_takes_outputs=True,
    doc="Split the input into ``num_outputs`` equal parts along ``axis``."))


def _nout_split_v2(attrs) -> int:
    return attrs.sections if attrs.sections > 0 else len(attrs.indices)


def _split_v2_compute(attrs, x):
    axis = _axis("_split_v2", attrs.axis, x.dim())
    size = x.shape[axis]
    if attrs.sections > 0:
        # MXNet: the first size % sections parts are one longer
        small, extra = divmod(size, attrs.sections)
        bounds = [i * small + min(i, extra) for i in range(attrs.sections)]
    else:
        bounds = list(attrs.indices)
    bounds.append(size)
    sizes = [e - b for b, e in zip(bounds[:-1], bounds[1:])]
    if bounds[0] != 0 or any(s < 0 for s in sizes) or bounds[-2] > size:
        raise MXNetError(f"_split_v2: indices {tuple(attrs.indices)} are not increasing "
                         f"from 0 within axis {axis} of size {size}")
    if attrs.squeeze_axis and any(s != 1 for s in sizes):
        raise MXNetError("_split_v2: squeeze_axis=True needs every section to have size 1")
    return _split_parts(x, axis, sizes, attrs.squeeze_axis)


register(OpDef(
    "_split_v2", _split_v2_compute,
    params=[Shape("indices"), Int("axis", 1), Bool("squeeze_axis", False),
            Int("sections", 0)],
    num_outputs=_nout_split_v2, output_names=_numbered_outputs(_nout_split_v2),
    doc="Split the input at ``indices`` (starting with 0) or into ``sections`` parts."))


# ---------------------------------------------------------------------- slice
def _slice_plan(op: str, shape: tuple, begin: tuple, end: tuple, step: tuple):
    """Python-style slices with positive steps, and the axes to flip afterwards."""
    if len(begin) != len(end) or (step and len(step) != len(begin)):
        raise MXNetError(f"{op}: begin {begin}, end {end} and step {step} must have the "
                         "same length")
    if len(begin) > len(shape):
        raise MXNetError(f"{op}: slicing {len(begin)} axes exceeds the data dimensions "
                         f"{shape}")
    slices: list[slice] = []
    flips: list[int] = []
    for i, (b, e) in enumerate(zip(begin, end)):
        s = step[i] if step and step[i] is not None else 1
        if s == 0:
            raise MXNetError(f"{op}: step[{i}] cannot be 0")
        if s > 0:
            slices.append(slice(b, e, s))
            continue
        idx = range(*slice(b, e, s).indices(shape[i]))
        slices.append(slice(idx[-1], idx[0] + 1, -s) if idx else slice(0, 0))
        flips.append(i)
    return tuple(slices), flips


def _slice_compute(attrs, x):
    slices, flips = _slice_plan("slice", tuple(x.shape), attrs.begin, attrs.end, attrs.step)
    out = x[slices]
    return out.flip(flips) if flips else out


def _slice_infer(compute):
    """Inference for slice/slice_axis: an axis of unknown size stays unknown in the output
    (MXNet's rule, whatever begin/end say); the other axes come from the compute on a
    meta tensor whose unknown axes are long enough for every begin/end."""
    def infer(attrs, shapes):
        data = shapes[0]
        if data is None or 0 not in data:
            return shapes, None
        bounds = [v for v in (attrs.begin, attrs.end) for v in
                  (v if isinstance(v, tuple) else (v,)) if v is not None]
        probe = 2 + max((abs(v) for v in bounds), default=0)
        out = compute(attrs, torch.empty(tuple(d or probe for d in data), device="meta"))
        return shapes, [tuple(o if d else 0 for d, o in zip(data, out.shape))]
    return infer


_SLICE_PARAMS = [Shape("begin"), Shape("end"), Shape("step", ())]

register(OpDef(
    "slice", _slice_compute, aliases=("crop",), params=_SLICE_PARAMS, fluent=True,
    infer_shape=_slice_infer(_slice_compute),
    doc="Slice with begin/end/step per axis (None = whole axis; negative steps allowed)."))


def _slice_axis_compute(attrs, x):
    axis = _axis("slice_axis", attrs.axis, x.dim())
    n = x.shape[axis]
    b = attrs.begin + n if attrs.begin < 0 else attrs.begin
    e = n if attrs.end is None else (attrs.end + n if attrs.end < 0 else attrs.end)
    if not (0 <= b < e <= n):
        raise MXNetError(f"slice_axis: invalid begin={attrs.begin}, end={attrs.end} for "
                         f"axis {axis} of size {n}")
    return x.narrow(axis, b, e - b)


register(OpDef(
    "slice_axis", _slice_axis_compute, fluent=True,
    params=[Int("axis"), Int("begin"), OptInt("end", REQUIRED)],
    infer_shape=_slice_infer(_slice_axis_compute),
    doc="Slice one axis from ``begin`` to ``end`` (None = to the end)."))


def _slice_like_compute(attrs, x, like):
    if attrs.axes:
        axes = [_axis("slice_like", a, x.dim()) for a in attrs.axes]
    else:
        if x.dim() != like.dim():
            raise MXNetError(f"slice_like: by default all axes are sliced, but the inputs "
                             f"have ndim {x.dim()} and {like.dim()}")
        axes = list(range(x.dim()))
    out = x
    for a in axes:
        if a >= like.dim() or like.shape[a] > x.shape[a]:
            raise MXNetError(f"slice_like: axis {a} of shape_like {tuple(like.shape)} does "
                             f"not fit in data {tuple(x.shape)}")
        out = out.narrow(a, 0, like.shape[a])
    return out


register(OpDef(
    "slice_like", _slice_like_compute, inputs=("data", "shape_like"), fluent=True,
    params=[Shape("axes", ())], doc="Slice data to the shape of ``shape_like``."))


def _slice_assign_compute(attrs, lhs, rhs):
    slices, flips = _slice_plan("_slice_assign", tuple(lhs.shape), attrs.begin, attrs.end,
                                attrs.step)
    out = lhs.clone()
    view = out[slices]
    if tuple(view.shape) != tuple(rhs.shape):
        raise MXNetError(f"_slice_assign: rhs shape {tuple(rhs.shape)} does not match the "
                         f"slice shape {tuple(view.shape)}")
    out[slices] = rhs.flip(flips) if flips else rhs
    return out


register(OpDef(
    "_slice_assign", _slice_assign_compute, aliases=("_crop_assign",),
    inputs=("lhs", "rhs"), params=_SLICE_PARAMS,
    doc="A copy of lhs with the slice begin:end:step replaced by rhs."))


def _slice_assign_scalar_compute(attrs, x):
    slices, _ = _slice_plan("_slice_assign_scalar", tuple(x.shape), attrs.begin, attrs.end,
                            attrs.step)
    out = x.clone()
    out[slices] = attrs.scalar
    return out


register(OpDef(
    "_slice_assign_scalar", _slice_assign_scalar_compute, aliases=("_crop_assign_scalar",),
    params=[Float("scalar", 0.0), *_SLICE_PARAMS],
    doc="A copy of the input with the slice begin:end:step set to ``scalar``."))


# ---------------------------------------------------------------------- tile / repeat / reverse
def _tile_compute(attrs, x):
    reps = attrs.reps
    if any(r <= 0 for r in reps):
        raise MXNetError(f"tile: reps {tuple(reps)} must be positive")
    return x.tile(tuple(reps)) if reps else x


register(OpDef("tile", _tile_compute, params=[Shape("reps")], fluent=True,
               doc="Repeat the whole array ``reps`` times along each axis (NumPy tile)."))


def _repeat_compute(attrs, x):
    if attrs.repeats < 0:
        raise MXNetError(f"repeat: repeats cannot be a negative number ({attrs.repeats})")
    if attrs.repeats == 0:
        # MXNet: zero repeats give an empty 1-D array whatever the axis.
        return x.reshape(-1)[:0]
    if attrs.axis is None:
        return x.reshape(-1).repeat_interleave(attrs.repeats)
    axis = _axis("repeat", attrs.axis, x.dim())
    return x.repeat_interleave(attrs.repeats, dim=axis)


register(OpDef("repeat", _repeat_compute, params=[Int("repeats"), OptInt("axis")],
               fluent=True, doc="Repeat each element (of the flattened array if axis=None)."))


def _reverse_compute(attrs, x):
    axes = [_nonneg_axis("reverse", a, x.dim()) for a in attrs.axis]
    return x.flip(axes)


register(OpDef("reverse", _reverse_compute, aliases=("flip",), fluent="flip",
               params=[Shape("axis")],
               doc="Reverse the order of elements along the given axes."))


# ---------------------------------------------------------------------- broadcast
def _broadcast_check(op: str, src: tuple, dst: tuple) -> None:
    if len(src) != len(dst):
        raise MXNetError(f"{op}: operand of shape {src} cannot be broadcast to {dst}")
    for a, b in zip(src, dst):
        if a != b and a != 1:
            raise MXNetError(f"{op}: array cannot be broadcast from {src} to {dst}")


def _broadcast_to_compute(attrs, x):
    src = tuple(x.shape)
    if len(attrs.shape) != len(src):
        raise MXNetError(f"broadcast_to: operand of shape {src} cannot be broadcast to "
                         f"{tuple(attrs.shape)}")
    dst = tuple(s if t == 0 else t for s, t in zip(src, attrs.shape))
    _broadcast_check("broadcast_to", src, dst)
    return x.expand(dst)


register(OpDef("broadcast_to", _broadcast_to_compute, params=[Shape("shape", ())],
               fluent=True, doc="Broadcast to ``shape`` (0 keeps the input's dim)."))


def _broadcast_like_compute(attrs, lhs, rhs):
    src = tuple(lhs.shape)
    if attrs.lhs_axes is None or attrs.rhs_axes is None:
        _broadcast_check("broadcast_like", src, tuple(rhs.shape))
        return lhs.expand(rhs.shape)
    if len(attrs.lhs_axes) != len(attrs.rhs_axes):
        raise MXNetError("broadcast_like: lhs_axes and rhs_axes must have the same length")
    if not attrs.lhs_axes:
        raise MXNetError("broadcast_like: empty axes tuple is not allowed (lhs_axes=(), "
                         f"rhs_axes=()) for lhs {src} and rhs {tuple(rhs.shape)}")
    dst = list(src)
    for la, ra in zip(attrs.lhs_axes, attrs.rhs_axes):
        la = _axis("broadcast_like", la, lhs.dim(), "lhs_axes")
        ra = _axis("broadcast_like", ra, rhs.dim(), "rhs_axes")
        if src[la] != 1 and src[la] != rhs.shape[ra]:
            raise MXNetError(f"broadcast_like: axis {la} of lhs {src} cannot be broadcast "
                             f"to {rhs.shape[ra]}")
        dst[la] = rhs.shape[ra]
    return lhs.expand(dst)


register(OpDef(
    "broadcast_like", _broadcast_like_compute, inputs=("lhs", "rhs"),
    params=[OptShape("lhs_axes"), OptShape("rhs_axes")], fluent=True,
    doc="Broadcast lhs to the shape of rhs (or of the matched axes)."))


def _broadcast_axis_compute(attrs, x):
    if len(attrs.axis) != len(attrs.size):
        raise MXNetError(f"broadcast_axis: axis {tuple(attrs.axis)} and size "
                         f"{tuple(attrs.size)} must have the same length")
    dst = list(x.shape)
    for a, s in zip(attrs.axis, attrs.size):
        a = _nonneg_axis("broadcast_axis", a, x.dim())
        if x.shape[a] != 1:
            raise MXNetError(f"broadcast_axis: broadcasting axis {a} of shape "
                             f"{tuple(x.shape)} must have size 1")
        dst[a] = s
    return x.expand(dst)


register(OpDef(
    "broadcast_axis", _broadcast_axis_compute, aliases=("broadcast_axes",),
    fluent="broadcast_axes",
    params=[Shape("axis", ()), Shape("size", ())],
    doc="Broadcast size-1 axes ``axis`` to ``size``."))


# ---------------------------------------------------------------------- Pad
def _pad_check(attrs, x) -> list[int]:
    """Validate MXNet's Pad restrictions; return torch's pad list (last axis first)."""
    pw = attrs.pad_width
    if x.dim() not in (4, 5):
        raise MXNetError(f"Pad: only 4-D or 5-D input is supported, got shape "
                         f"{tuple(x.shape)}")
    if len(pw) != 2 * x.dim():
        raise MXNetError(f"Pad: pad_width {tuple(pw)} must have 2 * ndim = {2 * x.dim()} "
                         "entries")
    if any(pw[:4]):
        raise MXNetError("Pad: padding on the first two axes must be zero")
    if not x.is_floating_point():
        raise MXNetError(f"Pad: only floating point types are supported, not {x.dtype}")
    if attrs.mode == "reflect":
        for k in range(2, x.dim()):
            if max(pw[2 * k], pw[2 * k + 1]) >= x.shape[k]:
                raise MXNetError("Pad: reflection padding must be smaller than the input "
                                 f"size; pad_width {tuple(pw)}, shape {tuple(x.shape)}")
    out: list[int] = []
    for k in reversed(range(2, x.dim())):
        out += [pw[2 * k], pw[2 * k + 1]]
    return out


def _pad_compute(attrs, x):
    pads = _pad_check(attrs, x)
    if attrs.mode == "constant":
        return F.pad(x, pads, mode="constant", value=attrs.constant_value)
    return F.pad(x, pads, mode="replicate" if attrs.mode == "edge" else "reflect")


register(OpDef(
    "Pad", _pad_compute, aliases=("pad",), fluent="pad",
    params=[Enum("mode", ("constant", "edge", "reflect")), Shape("pad_width"),
            Float("constant_value", 0.0)],
    doc="Pad a 4-D/5-D array; pad_width is (before, after) per axis, first two zero."))


# ---------------------------------------------------------------------- depth / space / diag
def _block_check(op: str, x: torch.Tensor, b: int, spatial: bool) -> None:
    """MXNet's shape checks of depth_to_space / space_to_depth (zero sizes rejected)."""
    shape = tuple(x.shape)
    if x.dim() != 4:
        raise MXNetError(f"Operator {op}: requires exactly a 4-D tensor, got shape {shape}")
    if b <= 0:
        raise MXNetError(f"Operator {op}: block_size must be a positive integer value, got "
                         f"{b}")
    for axis in range(4):
        if shape[axis] == 0:
            raise MXNetError(f"Operator {op}: size of dimension {axis} cannot be 0 (input "
                             f"shape {shape})")
    if not spatial and shape[1] % (b * b):
        raise MXNetError(f"Operator {op}: depth dimension {shape[1]} must be a multiple of "
                         f"block_size^2 = {b * b} (input shape {shape})")
    if spatial and (shape[2] % b or shape[3] % b):
        raise MXNetError(f"Operator {op}: spatial dimensions {shape[2:]} must be multiples "
                         f"of block_size={b} (input shape {shape})")


def _depth_to_space_compute(attrs, x):
    b = attrs.block_size
    _block_check("depth_to_space", x, b, spatial=False)
    n, c, h, w = x.shape
    y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def _space_to_depth_compute(attrs, x):
    b = attrs.block_size
    _block_check("space_to_depth", x, b, spatial=True)
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


register(OpDef("depth_to_space", _depth_to_space_compute, params=[Int("block_size")],
               fluent=True, doc="Move depth blocks into spatial blocks (DCR order)."))
register(OpDef("space_to_depth", _space_to_depth_compute, params=[Int("block_size")],
               fluent=True, doc="Move spatial blocks into the depth dimension."))


def _diag_compute(attrs, x):
    if x.dim() == 1:
        return torch.diag(x, attrs.k)
    a1 = _axis("diag", attrs.axis1, x.dim(), "axis1")
    a2 = _axis("diag", attrs.axis2, x.dim(), "axis2")
    if a1 == a2:
        raise MXNetError(f"diag: axis1 and axis2 cannot refer to the same axis {a1}")
    out = torch.diagonal(x, attrs.k, a1, a2)
    if x.dim() == 2 and out.shape[-1] == 0:
        raise MXNetError(f"diag: diagonal k={attrs.k} does not exist in shape "
                         f"{tuple(x.shape)}")
    return out


register(OpDef("diag", _diag_compute,
               params=[Int("k", 0), Int("axis1", 0), Int("axis2", 1)], fluent=True,
               doc="Build a diagonal matrix from 1-D input, or take a diagonal."))

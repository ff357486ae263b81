"""Shape operators: Reshape (MXNet codes 0/-1/-2/-3/-4), Flatten, transpose, ..."""
from __future__ import annotations

import math

import torch

from ..base import MXNetError
from .params import Bool, OptShape, Shape
from .registry import OpDef, register

__all__ = ["reshape_target"]


def _reshape_codes(dshape: list, spec: list) -> list:
    out: list[int] = []
    src = 0
    inf_idx = -1
    i = 0
    while i < len(spec):
        p = spec[i]
        if p == 0:
            out.append(dshape[src])
            src += 1
        elif p == -1:
            if inf_idx >= 0:
                raise MXNetError("Reshape: one and only one dim can be inferred (-1)")
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
            if i + 2 >= len(spec):
                raise MXNetError("Reshape: -4 must be followed by two dims")
            d0 = dshape[src]
            src += 1
            d1, d2 = spec[i + 1], spec[i + 2]
            i += 2
            if d1 == -1 and d2 == -1:
                raise MXNetError("Reshape: split dims cannot both be -1")
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            if d1 * d2 != d0 and d0 != 0:
                raise MXNetError(f"Reshape: cannot split dim {d0} into {d1} x {d2}")
            out.extend([d1, d2])
        elif p > 0:
            out.append(p)
            src += 1
        else:
            raise MXNetError(f"Reshape: invalid shape code {p}")
        i += 1
    if inf_idx >= 0:
        total = math.prod(dshape)
        rest = math.prod(out)
        if total and rest:
            out[inf_idx] = total // rest
        elif total == 0:
            out[inf_idx] = 0
    return out


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
    if total_in and total_out and total_in != total_out:
        raise MXNetError(f"Reshape: target shape {tuple(out)} (from {tuple(spec)}) is "
                         f"incompatible with input shape {tuple(dshape)}")
    return tuple(out)


def _reshape_compute(attrs, x):
    shape = attrs.shape
    if not shape and attrs.target_shape:
        shape = attrs.target_shape
    target = reshape_target(tuple(x.shape), tuple(shape), attrs.reverse)
    return x.reshape(target)


def _reshape_infer(attrs, shapes):
    (d,) = shapes
    if d is None or 0 in d:
        return shapes, [None]
    shape = attrs.shape or attrs.target_shape
    return shapes, [reshape_target(d, tuple(shape), attrs.reverse)]


register(OpDef(
    "Reshape", _reshape_compute, aliases=("reshape",),
    params=[Shape("shape", ()), Bool("reverse", False), Shape("target_shape", ()),
            Bool("keep_highest", False)],
    infer_shape=_reshape_infer,
    doc="Reshape the input; supports MXNet's special codes 0, -1, -2, -3 and -4."))


def _flatten_compute(attrs, x):
    if x.dim() == 0:
        return x.reshape(1, 1)
    return x.reshape(x.shape[0], -1) if x.dim() != 1 else x.reshape(x.shape[0], 1)


register(OpDef("Flatten", _flatten_compute, aliases=("flatten",), fluent=True,
               doc="Flatten to 2-D: (d0, d1*...*dk)."))


def _transpose_compute(attrs, x):
    axes = attrs.axes
    if not axes:
        return x.permute(*reversed(range(x.dim())))
    return x.permute(*axes)


register(OpDef("transpose", _transpose_compute, params=[Shape("axes", ())], fluent=True,
               doc="Permute the axes (reverse them by default)."))

del torch, OptShape

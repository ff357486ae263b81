"""The ``Custom`` operator: runs a user's ``mx.operator.CustomOp`` (registered by
``mx.operator.register``) with its own forward and backward."""
from __future__ import annotations

from typing import Any

import torch

from ..base import MXNetError, dtype_name, dtype_np
from .params import Str
from .registry import OpDef, register
from .tensor_util import torch_dtype, torch_to_np_name

__all__ = ["CUSTOM_PROPS", "get_prop"]

# op_type -> CustomOpProp subclass (filled by mx.operator.register)
CUSTOM_PROPS: dict[str, type] = {}
_PROP_CACHE: dict[tuple, Any] = {}


def get_prop(attrs) -> Any:
    """The CustomOpProp instance for these attributes (kwargs passed as strings)."""
    cls = CUSTOM_PROPS.get(attrs.op_type)
    if cls is None:
        raise MXNetError(f"Custom: op_type '{attrs.op_type}' is not registered; use "
                         "@mx.operator.register")
    key = (cls, attrs.extra)
    prop = _PROP_CACHE.get(key)
    if prop is None:
        prop = cls(**dict(attrs.extra))
        _PROP_CACHE[key] = prop
    return prop


def _inputs(attrs) -> list[str]:
    prop = get_prop(attrs)
    return list(prop.list_arguments()) + list(prop.list_auxiliary_states())


def _infer_shape(attrs, shapes):
    prop = get_prop(attrs)
    nargs = len(prop.list_arguments())
    args = shapes[:nargs]
    if any(s is None for s in args):
        return shapes, None
    res = prop.infer_shape([list(s) for s in args])
    in_s, out_s = res[0], res[1]
    aux_s = res[2] if len(res) > 2 else []
    return ([tuple(s) for s in in_s] + [tuple(s) for s in aux_s],
            [tuple(s) for s in out_s])


def _infer_type(attrs, types):
    prop = get_prop(attrs)
    nargs = len(prop.list_arguments())
    args = types[:nargs]
    if any(t is None for t in args):
        known = [t for t in args if t is not None]
        if not known:
            return types, [None] * len(prop.list_outputs())
        args = [t or known[0] for t in args]
    res = prop.infer_type([dtype_np(t).type for t in args])
    in_t, out_t = res[0], res[1]
    aux_t = res[2] if len(res) > 2 else []
    return ([dtype_name(t) for t in in_t] + [dtype_name(t) for t in aux_t],
            [dtype_name(t) for t in out_t])


def _custom_compute(attrs, *tensors, is_train: bool = False):
    prop = get_prop(attrs)
    nargs = len(prop.list_arguments())
    in_t, aux_t = list(tensors[:nargs]), list(tensors[nargs:])
    shapes = [list(t.shape) for t in in_t]
    res = prop.infer_shape(shapes)
    out_shapes = [tuple(s) for s in res[1]]
    types = prop.infer_type([dtype_np(torch_to_np_name(t.dtype)).type for t in in_t])
    out_types = [torch_dtype(dtype_name(t)) for t in types[1]]
    if in_t and in_t[0].device.type == "meta":
        return _pack([torch.empty(s, dtype=d, device="meta")
                      for s, d in zip(out_shapes, out_types)])
    device = in_t[0].device if in_t else torch.device("cpu")
    from ..context import context_of_device
    op = prop.create_operator(context_of_device(device), shapes,
                              [dtype_np(torch_to_np_name(t.dtype)).type for t in in_t])
    outs = _CustomFn.apply(prop, op, is_train, out_shapes, out_types, len(aux_t), *in_t,
                           *aux_t)
    return _pack(list(outs))


def _pack(outs):
    return outs[0] if len(outs) == 1 else tuple(outs)


class _CustomFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, prop, op, is_train, out_shapes, out_types, naux, *tensors):
        from ..ndarray.ndarray import _wrap
        nin = len(tensors) - naux
        ins = [_wrap(t.detach(), None) for t in tensors[:nin]]
        aux = [_wrap(t.detach(), None) for t in tensors[nin:]]
        outs = [_wrap(torch.zeros(s, dtype=d, device=tensors[0].device if tensors else None),
                      None) for s, d in zip(out_shapes, out_types)]
        with torch.no_grad():
            op.forward(is_train=is_train, req=["write"] * len(outs), in_data=ins,
                       out_data=outs, aux=aux)
        ctx.op, ctx.ins, ctx.aux, ctx.outs = op, ins, aux, outs
        ctx.nin = nin
        return tuple(o._t for o in outs)

    @staticmethod
    def backward(ctx, *grads):
        from ..ndarray.ndarray import _wrap
        out_grads = [_wrap(g.contiguous() if g is not None else torch.zeros_like(o._t), None)
                     for g, o in zip(grads, ctx.outs)]
        in_grads = [_wrap(torch.zeros_like(i._t), None) for i in ctx.ins]
        with torch.no_grad():
            ctx.op.backward(req=["write"] * len(in_grads), out_grad=out_grads,
                            in_data=ctx.ins, out_data=ctx.outs, in_grad=in_grads,
                            aux=ctx.aux)
        naux = len(ctx.aux)
        return (None,) * 6 + tuple(g._t for g in in_grads) + (None,) * naux


register(OpDef(
    "Custom", _custom_compute, params=[Str("op_type")], inputs=_inputs,
    deterministic=False,   # MXNet: a stateful operator
    aux=lambda a: list(get_prop(a).list_auxiliary_states()),
    num_outputs=lambda a: len(get_prop(a).list_outputs()),
    output_names=lambda a: list(get_prop(a).list_outputs()),
    infer_shape=_infer_shape, infer_type=_infer_type, train_aware=True, allow_extra=True,
    doc="Apply a custom operator implemented in Python (see mx.operator)."))

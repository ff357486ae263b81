"""Operators implemented in Python: ``Custom`` runs a user's ``mx.operator.CustomOp``
(registered by ``mx.operator.register``); ``_Native`` and ``_NDArray`` run the legacy
``mx.operator.NumpyOp`` and ``NDArrayOp``. Each call is one node of torch's tape whose
forward and backward are the user's.

As in MXNet, an exception in the user's ``forward`` is reported where the result is
waited for (``ops/failure.py``), one in ``infer_shape`` at the call; one in ``backward``
is raised by the backward pass (MXNet reports it at the wait on the gradients).
"""
from __future__ import annotations

import traceback
from typing import Any

import torch

from ..base import MXNetError, dtype_name, dtype_np
from .failure import failed, propagated
from .params import Bool, Str
from .registry import OpDef, register
from .tensor_util import torch_dtype, torch_to_np_name

__all__ = ["CUSTOM_PROPS", "PYTHON_OPS", "get_prop", "add_python_op"]

# op_type -> CustomOpProp subclass (filled by mx.operator.register)
CUSTOM_PROPS: dict[str, type] = {}
_PROP_CACHE: dict[tuple, Any] = {}
# info -> NumpyOp / NDArrayOp instance (filled by their get_symbol; kept, as MXNet keeps them)
PYTHON_OPS: dict[str, Any] = {}


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


def add_python_op(op: Any) -> str:
    """Register a NumpyOp / NDArrayOp instance; return the ``info`` its symbol carries."""
    key = format(id(op), "x")
    PYTHON_OPS[key] = op
    return key


def _python_op(attrs) -> Any:
    op = PYTHON_OPS.get(attrs.info)
    if op is None:
        raise MXNetError(f"Operator _Native/_NDArray: no Python operator with info "
                         f"'{attrs.info}' in this process")
    return op


def _user_error(where: str, err: BaseException) -> MXNetError:
    """MXNet's report of an exception in user code called by an operator."""
    text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    return MXNetError(f"Error in {where}: {text}")


def _user_call(where: str, fn, *args, **kwargs):
    """Call user code; any exception becomes the MXNetError MXNet reports."""
    try:
        return fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - user code: every exception is reported
        raise _user_error(where, err) from None


class _HostFn(torch.autograd.Function):
    """One call of Python operator code as one node of torch's tape. ``run`` already
    computed the outputs; its ``backward`` computes the inputs' gradients."""

    @staticmethod
    def forward(ctx, run, *tensors):
        ctx.run = run
        return tuple(run.outputs)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.run.backward(grads))


def _run(run, where: str, tensors: list) -> Any:
    """Run ``run.forward`` on ``tensors`` and record it for backward when needed. An
    exception in it makes failed outputs, reported where they are waited for; so does
    a failed input (MXNet skips the operator)."""
    outs = propagated(tensors, *run.outputs)
    if outs is not None:
        return outs
    try:
        with torch.no_grad():
            run.forward(tensors)
    except Exception as err:  # noqa: BLE001 - user code
        return failed(_user_error(where, err), *run.outputs)
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        outs = _HostFn.apply(run, *tensors)
    else:
        outs = tuple(run.outputs)
    return outs[0] if len(outs) == 1 else outs


# ---------------------------------------------------------------------- Custom
def _inputs(attrs) -> list[str]:
    prop = get_prop(attrs)
    return list(prop.list_arguments()) + list(prop.list_auxiliary_states())


def _prop_call(attrs, prop, method: str, *args):
    """Call a CustomOpProp method; MXNet names its errors by the registered op_type."""
    return _user_call(f"{attrs.op_type}.{method}", getattr(prop, method), *args)


def _infer_shape(attrs, shapes):
    """The prop's ``infer_shape``: the source of its inputs' shapes too (a label's shape
    from the data's). MXNet: an unknown input shape reaches it as ``[]``; while some are
    unknown, a prop that cannot answer yet (it raises) leaves them for a later pass."""
    prop = get_prop(attrs)
    nargs = len(prop.list_arguments())
    args = shapes[:nargs]
    if all(s is None for s in args):
        return shapes, None
    given = [[] if s is None else list(s) for s in args]
    if any(s is None for s in args):
        try:
            res = prop.infer_shape(given)
        except Exception:  # noqa: BLE001 - the user's code, asked too early
            return shapes, None
    else:
        res = _prop_call(attrs, prop, "infer_shape", given)
    in_s, out_s = res[0], res[1]
    aux_s = res[2] if len(res) > 2 else []
    unknown = [s is None for s in args] + [True] * len(aux_s)
    return ([_answer(s, u) for s, u in zip(list(in_s) + list(aux_s), unknown)],
            [tuple(s) for s in out_s])


def _answer(shape, was_unknown: bool) -> tuple | None:
    """A shape the prop returned for an input; for one that was unknown, an empty answer
    is still unknown (MXNet's legacy ndim 0)."""
    if shape is None or (was_unknown and not len(shape)):
        return None
    return tuple(shape)


def _infer_type(attrs, types):
    prop = get_prop(attrs)
    nargs = len(prop.list_arguments())
    args = types[:nargs]
    if any(t is None for t in args):
        known = [t for t in args if t is not None]
        if not known:
            return types, [None] * len(prop.list_outputs())
        args = [t or known[0] for t in args]
    res = _prop_call(attrs, prop, "infer_type", [dtype_np(t).type for t in args])
    in_t, out_t = res[0], res[1]
    aux_t = res[2] if len(res) > 2 else []
    return ([dtype_name(t) for t in in_t] + [dtype_name(t) for t in aux_t],
            [dtype_name(t) for t in out_t])


class _CustomRun:
    """One call of a CustomOp: its arrays, kept for backward."""

    def __init__(self, op, is_train: bool, outputs: list, nin: int):
        self.op, self.is_train, self.outputs, self.nin = op, is_train, outputs, nin

    def forward(self, tensors) -> None:
        from ..ndarray.ndarray import _wrap
        arrays = [_wrap(t.detach(), None) for t in tensors]
        self.ins, self.aux = arrays[:self.nin], arrays[self.nin:]
        self.outs = [_wrap(t, None) for t in self.outputs]
        self.op.forward(is_train=self.is_train, req=["write"] * len(self.outs),
                        in_data=self.ins, out_data=self.outs, aux=self.aux)
        self.outputs = [o._t for o in self.outs]   # assign may have replaced them

    def backward(self, grads) -> list:
        from ..ndarray.ndarray import _wrap
        out_grads = [_wrap(g.contiguous() if g is not None else torch.zeros_like(o._t), None)
                     for g, o in zip(grads, self.outs)]
        in_grads = [_wrap(torch.zeros_like(i._t), None) for i in self.ins]
        with torch.no_grad():
            _user_call("CustomOp.backward", self.op.backward,
                       req=["write"] * len(in_grads), out_grad=out_grads, in_data=self.ins,
                       out_data=[_wrap(o._t.detach(), None) for o in self.outs],
                       in_grad=in_grads, aux=self.aux)
        return [g._t for g in in_grads] + [None] * len(self.aux)


def _custom_compute(attrs, *tensors, is_train: bool = False):
    prop = get_prop(attrs)
    nargs = len(prop.list_arguments())
    in_t = list(tensors[:nargs])
    shapes = [list(t.shape) for t in in_t]
    out_shapes = [tuple(s) for s in _prop_call(attrs, prop, "infer_shape", shapes)[1]]
    in_types = [dtype_np(torch_to_np_name(t.dtype)).type for t in in_t]
    out_types = [torch_dtype(dtype_name(t))
                 for t in _prop_call(attrs, prop, "infer_type", in_types)[1]]
    device = tensors[0].device if tensors else torch.device("cpu")
    outputs = [torch.zeros(s, dtype=d, device=device) for s, d in zip(out_shapes, out_types)]
    if device.type == "meta":
        return outputs[0] if len(outputs) == 1 else tuple(outputs)
    from ..context import context_of_device
    op = _prop_call(attrs, prop, "create_operator", context_of_device(device), shapes,
                    in_types)
    return _run(_CustomRun(op, is_train, outputs, nargs), "CustomOp.forward", list(tensors))


register(OpDef(
    "Custom", _custom_compute, params=[Str("op_type")], inputs=_inputs,
    deterministic=False,   # MXNet: a stateful operator
    aux=lambda a: list(get_prop(a).list_auxiliary_states()),
    num_outputs=lambda a: len(get_prop(a).list_outputs()),
    output_names=lambda a: list(get_prop(a).list_outputs()),
    infer_shape=_infer_shape, infer_type=_infer_type, train_aware=True, allow_extra=True,
    custom_op_attr="op_type",
    doc="Apply a custom operator implemented in Python (see mx.operator)."))


# ---------------------------------------------------------------------- _Native, _NDArray
class _NumpyRun:
    """One call of a NumpyOp: NumPy views of host copies of the arrays."""

    def __init__(self, op, outputs: list):
        self.op, self.outputs = op, outputs

    def forward(self, tensors) -> None:
        self.device = tensors[0].device if tensors else torch.device("cpu")
        self.ins = [t.detach().cpu() for t in tensors]
        outs = [o.cpu() for o in self.outputs]
        self.op.forward(in_data=[t.numpy() for t in self.ins],
                        out_data=[o.numpy() for o in outs])
        self.outs = outs
        self.outputs = [o.to(self.device) for o in outs]

    def backward(self, grads) -> list:
        out_grad = [(g if g is not None else torch.zeros_like(o)).detach().cpu().contiguous()
                    for g, o in zip(grads, self.outs)]
        in_grad = [torch.zeros_like(t) for t in self.ins]
        _user_call("NumpyOp.backward", self.op.backward,
                   out_grad=[g.numpy() for g in out_grad],
                   in_data=[t.numpy() for t in self.ins],
                   out_data=[o.numpy() for o in self.outs],
                   in_grad=[g.numpy() for g in in_grad])
        return [g.to(self.device) for g in in_grad]


class _NDArrayRun:
    """One call of an NDArrayOp: its arrays, kept for backward."""

    def __init__(self, op, outputs: list):
        self.op, self.outputs = op, outputs

    def forward(self, tensors) -> None:
        from ..ndarray.ndarray import _wrap
        self.ins = [_wrap(t.detach(), None) for t in tensors]
        self.outs = [_wrap(t, None) for t in self.outputs]
        self.op.forward(in_data=self.ins, out_data=self.outs)
        self.outputs = [o._t for o in self.outs]

    def backward(self, grads) -> list:
        from ..ndarray.ndarray import _wrap
        out_grad = [_wrap(g.contiguous() if g is not None else torch.zeros_like(o._t), None)
                    for g, o in zip(grads, self.outs)]
        in_grad = [_wrap(torch.zeros_like(i._t), None) for i in self.ins]
        with torch.no_grad():
            _user_call("NDArrayOp.backward", self.op.backward, out_grad=out_grad,
                       in_data=self.ins, out_data=self.outs, in_grad=in_grad)
        return [g._t for g in in_grad]


def _python_infer_shape(attrs, shapes):
    op = _python_op(attrs)
    if any(s is None for s in shapes):
        return shapes, None
    where = f"{type(op).__name__}.infer_shape"
    in_s, out_s = _user_call(where, op.infer_shape, [list(s) for s in shapes])[:2]
    return [tuple(s) for s in in_s], [tuple(s) for s in out_s]


def _python_compute(run_class, where: str):
    def compute(attrs, *tensors):
        op = _python_op(attrs)
        out_shapes = _python_infer_shape(attrs, [tuple(t.shape) for t in tensors])[1]
        device = tensors[0].device if tensors else torch.device("cpu")
        # MXNet: legacy Python operators compute in float32 (mshadow's default real type)
        outputs = [torch.zeros(s, dtype=torch.float32, device=device) for s in out_shapes]
        if device.type == "meta":
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        return _run(run_class(op, outputs), where, list(tensors))
    return compute


def _register_python(name: str, run_class, where: str, params: list, doc: str) -> None:
    register(OpDef(
        name, _python_compute(run_class, where), params=params, deterministic=False,
        inputs=lambda a: list(_python_op(a).list_arguments()),
        num_outputs=lambda a: len(_python_op(a).list_outputs()),
        output_names=lambda a: list(_python_op(a).list_outputs()),
        infer_shape=_python_infer_shape,
        infer_type=lambda a, types: (["float32"] * len(types),
                                     ["float32"] * len(_python_op(a).list_outputs())),
        doc=doc))


_register_python("_Native", _NumpyRun, "NumpyOp.forward",
                 [Str("info"), Bool("need_top_grad", True)],
                 "Run an mx.operator.NumpyOp (legacy): forward and backward on NumPy "
                 "arrays.")
_register_python("_NDArray", _NDArrayRun, "NDArrayOp.forward", [Str("info")],
                 "Run an mx.operator.NDArrayOp (legacy): forward and backward on "
                 "NDArrays.")

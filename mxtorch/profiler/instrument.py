"""The instrumentation that exists only while the profiler runs: operator computes and
NDArray's operator methods replaced by timed wrappers (``torch.profiler.record_function``
under MXNet's operator names), put back when it stops."""
from __future__ import annotations

import contextvars
import inspect
import sys

import torch

from .recorder import REC

__all__ = ["INSTRUMENTS", "SCOPE"]

SCOPE = contextvars.ContextVar("profilerscope", default="<unk>:")


def _label(name: str) -> tuple[str, str]:
    """(category, label) of an operator call: inside a custom operator's forward or backward,
    ``MyOp::name`` in "Custom Operator", as MXNet reports them."""
    labels = getattr(REC.local, "custom", None)
    if labels:
        return "Custom Operator", f"{labels[-1]}::{name}"
    return "operator", name


def _timed(cat: str, label: str, fn, args, kwargs):
    """Run ``fn`` timed under ``label`` (unless the same label is being timed: the operator
    method that records an operator calls its compute)."""
    local = REC.local
    stack = getattr(local, "labels", None)
    if stack is None:
        stack = local.labels = []
    if stack and stack[-1] == label:
        return fn(*args, **kwargs)
    stack.append(label)
    start = REC.now()
    try:
        with torch.profiler.record_function(label):
            return fn(*args, **kwargs)
    finally:
        stack.pop()
        scope_name = SCOPE.get()
        REC.duration(cat, label, start, REC.now(),
                      {"scope": scope_name} if scope_name != "<unk>:" else None)


def _timed_compute(opdef, fn):
    """``fn`` (an operator's compute) timed while the profiler records."""
    custom = opdef.custom_op_attr

    def compute(attrs, *tensors, **kwargs):
        if not REC.recording:
            return fn(attrs, *tensors, **kwargs)
        if custom:
            return _timed_custom(fn, getattr(attrs, custom), attrs, tensors, kwargs)
        cat, label = _label(opdef.name)
        return _timed(cat, label, fn, (attrs,) + tensors, kwargs)
    compute.__wrapped__ = fn
    return compute


def _custom_stack() -> list:
    stack = getattr(REC.local, "custom", None)
    if stack is None:
        stack = REC.local.custom = []
    return stack


def _timed_custom(fn, op_type: str, attrs, tensors, kwargs):
    """A custom operator: ``op_type::pure_python``, the operators it calls inside
    ``op_type::name``, and its backward ``_backward_op_type::pure_python``."""
    stack = _custom_stack()
    stack.append(op_type)
    try:
        res = _timed("Custom Operator", f"{op_type}::pure_python", fn, (attrs,) + tensors,
                     kwargs)
    finally:
        stack.pop()
    first = res[0] if isinstance(res, (tuple, list)) else res
    node = getattr(first, "grad_fn", None)
    if node is not None:
        started = []

        def before(grad_outputs):
            _custom_stack().append(f"_backward_{op_type}")
            started.append(REC.now())

        def after(grad_inputs, grad_outputs):
            _custom_stack().pop()
            if started and REC.recording:
                REC.duration("Custom Operator", f"_backward_{op_type}::pure_python",
                              started.pop(), REC.now())
        node.register_prehook(before)
        node.register_hook(after)
    return res


def _timed_method(method, array_op: str, scalar_op: str):
    """An NDArray operator method (``__add__``) timed under the operator it runs."""
    from ..ndarray.ndarray import NDArray

    def timed(lhs, rhs):
        if not REC.recording:
            return method(lhs, rhs)
        cat, label = _label(array_op if isinstance(rhs, NDArray) else scalar_op)
        return _timed(cat, label, method, (lhs, rhs), {})
    timed.__name__, timed.__qualname__ = method.__name__, method.__qualname__
    timed.__wrapped__ = method
    return timed


def _operator_methods():
    """(holder, name, method, array op, scalar op) of every NDArray operator method that
    runs an operator directly (made by ``_binary_method``), on the class and the module."""
    from ..ndarray.ndarray import NDArray
    found = []
    for holder in (NDArray, sys.modules[NDArray.__module__]):
        for name, value in list(vars(holder).items()):
            if not inspect.isfunction(value) or value.__closure__ is None:
                continue
            names = inspect.getclosurevars(value).nonlocals
            if "array_op" in names and "scalar_op" in names:
                found.append((holder, name, value, names["array_op"], names["scalar_op"]))
    return found


class _Instrumentation:
    """Puts the timed wrappers in place while the profiler runs, and takes them out."""

    def __init__(self):
        self.computes: dict = {}      # OpDef -> its own compute
        self.methods: list = []       # (holder, name, original)

    def install(self) -> None:
        if self.computes:
            return
        from ..ops import registry
        for opdef in registry.canonical_ops().values():
            self.computes[opdef] = opdef.compute
            opdef.compute = _timed_compute(opdef, opdef.compute)
        for holder, name, method, array_op, scalar_op in _operator_methods():
            self.methods.append((holder, name, method))
            setattr(holder, name, _timed_method(method, array_op, scalar_op))

    def remove(self) -> None:
        for opdef, compute in self.computes.items():
            opdef.compute = compute
        for holder, name, method in self.methods:
            setattr(holder, name, method)
        self.computes, self.methods = {}, []


INSTRUMENTS = _Instrumentation()

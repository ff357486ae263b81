"""Operator failures that MXNet's engine reports when the result is waited for.

MXNet runs operators asynchronously. An error raised while the engine *runs* an operator
(a kernel's check such as a negative scale in ``_random_normal``, an exception inside a
custom operator's ``forward``) does not reach the call: the call returns arrays of the
inferred shapes, operators that read them fail the same way without running, and the
error is raised where a result is waited for (``wait_to_read``, ``asnumpy``,
``waitall``). It is raised once: every array that carries it is clean afterwards, and
``waitall`` raises the first pending one and clears them all. Errors found when the call
is made (attribute parsing, shape and type inference) are raised at once, as MXNet does.

mxtorch runs operators eagerly, so it reproduces what can be observed: an operator that
fails returns :func:`failed` outputs, tensors of the class :class:`FailedTensor`. Through
torch's ``__torch_function__`` protocol every torch call that reads one gives failed
results that share its error, and reading values (``numpy``, ``item``, ...) raises it.
Ordinary tensors never enter this module: the normal path pays nothing.
"""
from __future__ import annotations

from typing import Any

import torch

from ..base import MXNetError

__all__ = ["FailedTensor", "Resource", "RANDOM", "failed", "propagated", "raise_failure",
           "raise_pending"]


class _Failure:
    """One operator error, shared by every array computed from the failed operator."""

    __slots__ = ("error",)

    def __init__(self, error: MXNetError | None):
        self.error = error


# MXNet: the engine's global list of exceptions, raised (the first) and cleared by waitall
_PENDING: list[_Failure] = []

# torch functions that read values: they raise the pending error
_READS = frozenset([torch.Tensor.numpy, torch.Tensor.item, torch.Tensor.tolist,
                    torch.Tensor.__array__, torch.Tensor.__bool__, torch.Tensor.__float__,
                    torch.Tensor.__int__, torch.Tensor.__index__, torch.Tensor.__complex__])


class FailedTensor(torch.Tensor):
    """The output of an operator whose execution failed (see the module docstring)."""

    _mx_failure: _Failure

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        failure = _failure_of(args, kwargs)
        if failure is not None and func in _READS:
            raise_failure_of(failure)
        with torch._C.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
        if failure is None:
            return ret   # the error was raised already: plain results from here on
        return _spread(ret, failure, func, args)


def _failure_of(args, kwargs) -> _Failure | None:
    """The pending failure of a failed tensor among a call's arguments; failed tensors
    whose error was raised already become ordinary tensors again."""
    found = None
    for a in (*args, *kwargs.values()):
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if t.__class__ is FailedTensor:
                failure = t._mx_failure
                if failure.error is None:
                    t.__class__ = getattr(t, "_mx_base", torch.Tensor)
                elif found is None:
                    found = failure
    return found


def _mark(t: torch.Tensor, failure: _Failure) -> torch.Tensor:
    if t.__class__ is not FailedTensor:
        t = t.as_subclass(FailedTensor)
    t._mx_failure = failure
    return t


def _writes_first(name: str) -> bool:
    """Whether a torch function of this name writes its first argument: ``copy_``,
    ``add_``, ``__setitem__``, ``__iadd__`` (not ``__add__``)."""
    if name.startswith("__"):
        return name == "__setitem__" or name.startswith("__i") and name not in (
            "__index__", "__int__", "__invert__", "__init__")
    return name.endswith("_")


def _spread(ret: Any, failure: _Failure, func, args) -> Any:
    """Results of a torch call on failed inputs carry the failure; an array written in
    place (``copy_``, ``__setitem__``, ``add_`` ...) carries it too, as MXNet's engine
    marks every array an operator writes."""
    if _writes_first(getattr(func, "__name__", "")) and args and \
            isinstance(args[0], torch.Tensor) and args[0].__class__ is not FailedTensor:
        dst = args[0]
        dst._mx_base = dst.__class__
        dst.__class__ = FailedTensor
        dst._mx_failure = failure
    if isinstance(ret, torch.Tensor):
        return _mark(ret, failure)
    if isinstance(ret, (tuple, list)) and any(isinstance(r, torch.Tensor) for r in ret):
        return type(ret)(_mark(r, failure) if isinstance(r, torch.Tensor) else r
                         for r in ret)
    return ret


class Resource:
    """A resource operators share and write, such as MXNet's random generator: an
    operator that fails while using it leaves it failed, and every operator that uses it
    afterwards fails with the same error (without running) until the error is raised."""

    __slots__ = ("failure",)

    def __init__(self):
        self.failure: _Failure | None = None

    def pending(self) -> bool:
        """Whether an operator that failed on this resource has not been reported yet."""
        return self.failure is not None and self.failure.error is not None


# MXNet: the random generator of the sampling operators (ResourceRequest::kRandom)
RANDOM = Resource()


def failed(error: MXNetError | None, *outputs: torch.Tensor, resource: Resource | None = None):
    """What a compute returns when the operator fails while it runs: ``outputs`` (the
    arrays MXNet would have allocated, of the inferred shapes and dtypes) carry ``error``,
    which is raised where they are waited for. With a ``resource`` whose failure is still
    pending, the outputs carry that failure instead (``error`` may then be None). On meta
    tensors (shape inference) the outputs are returned as they are; on other tensor
    classes (a trace's fake tensors) the error is raised: the trace must see it."""
    if outputs and outputs[0].device.type == "meta":
        return outputs[0] if len(outputs) == 1 else outputs
    if any(t.__class__ is not torch.Tensor and t.__class__ is not FailedTensor
           for t in outputs):
        raise error if error is not None else resource.failure.error
    if resource is not None and resource.pending():
        failure = resource.failure
    else:
        failure = _Failure(error.with_traceback(None))
        _PENDING.append(failure)
        if resource is not None:
            resource.failure = failure
    marked = tuple(_mark(t.detach(), failure) for t in outputs)
    return marked[0] if len(marked) == 1 else marked


def propagated(inputs, *outputs: torch.Tensor):
    """``outputs`` carrying the pending failure of one of ``inputs``, or None when no
    input carries one: an operator whose compute runs user code checks its inputs first,
    as MXNet's engine skips an operator whose input failed."""
    for t in inputs:
        if t.__class__ is FailedTensor and t._mx_failure.error is not None:
            failure = t._mx_failure
            marked = tuple(_mark(o.detach(), failure) for o in outputs)
            return marked[0] if len(marked) == 1 else marked
    return None


def raise_failure_of(failure: _Failure) -> None:
    """Raise a pending error once: every array sharing it is clean afterwards."""
    error, failure.error = failure.error, None
    raise error


def raise_failure(t: torch.Tensor) -> None:
    """``wait_to_read`` of a failed tensor: raise its error if it is still pending."""
    failure = t._mx_failure
    if failure.error is not None:
        raise_failure_of(failure)


def raise_pending() -> None:
    """``waitall``: raise the first pending error and clear every other one."""
    first = next((f.error for f in _PENDING if f.error is not None), None)
    for f in _PENDING:
        f.error = None
    _PENDING.clear()
    if first is not None:
        raise first

"""``mx.autograd`` on top of ``torch.autograd``.

MXNet records operations only inside ``record()``; outside it nothing is recorded even for
arrays with attached gradients. mxtorch mirrors this: ``record()`` turns torch's grad mode
on, and ``mx.nd`` (and CachedOp) run an operator under ``no_grad`` when an input requires
grad while nothing is being recorded (including inside ``pause()``). Gradients land in the
NDArray's own ``grad`` buffer according to its ``grad_req`` (write / add / null): torch's
post-accumulate hook of each attached tensor moves its gradient into the buffer as soon
as it is complete, as MXNet's backward writes it, so ``x.grad`` is a stable array callers
can hold on to.
"""
from __future__ import annotations

import threading
import weakref

import torch

from .base import (MXCallbackList, MXNetError, NDArrayHandle, SymbolHandle, c_array,
                   c_array_buf, c_handle_array, check_call, mx_uint, string_types)
from .ops import tuning

# MXNet's autograd module has no __all__: ``from mxnet.autograd import *`` also gives the
# NDArray and Symbol classes and the ctypes helpers it imports; they are listed here.
__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad", "Function",
           "get_symbol", "NDArray", "Symbol", "MXCallbackList", "c_array", "c_array_buf",
           "c_handle_array", "check_call", "string_types", "mx_uint", "NDArrayHandle",
           "SymbolHandle"]


class _State(threading.local):
    def __init__(self):
        self.recording = False
        self.training = False
        self.work = 0.0   # the largest call recorded since record() began (ops/tuning.py)


_STATE = _State()


def is_recording() -> bool:
    """Whether operations are being recorded for gradient computation."""
    return _STATE.recording


def is_training() -> bool:
    """Whether operators run in training mode (Dropout active, BatchNorm batch stats)."""
    return _STATE.training


def set_recording(is_recording: bool) -> bool:  # noqa: F811 - MXNet's signature
    """Set the recording state; return the previous one."""
    prev = _STATE.recording
    _STATE.recording = bool(is_recording)
    if is_recording and not prev:   # a new graph: nothing large recorded yet
        _STATE.work = 0.0
    if is_recording:
        # Outside recording torch's grad mode is left alone: mx.nd runs an operator under
        # no_grad itself when an input requires grad and nothing is being recorded.
        torch.set_grad_enabled(True)
    return prev


def set_training(train_mode: bool) -> bool:
    """Set the training state; return the previous one."""
    prev = _STATE.training
    _STATE.training = bool(train_mode)
    return prev


class _RecordingStateScope:
    """Scope that sets recording and/or training state and restores them on exit."""

    def __init__(self, is_record: bool | None, train_mode: bool | None):
        self._enter_is_record = is_record
        self._enter_train_mode = train_mode
        self._prev_is_record = None
        self._prev_train_mode = None
        self._prev_grad = None

    def __enter__(self):
        self._prev_grad = torch.is_grad_enabled()
        if self._enter_is_record is not None:
            self._prev_is_record = set_recording(self._enter_is_record)
        if self._enter_train_mode is not None:
            self._prev_train_mode = set_training(self._enter_train_mode)
        return self

    def __exit__(self, ptype, value, trace):
        if self._enter_is_record is not None:
            _STATE.recording = self._prev_is_record
        if self._enter_train_mode is not None:
            _STATE.training = self._prev_train_mode
        torch.set_grad_enabled(self._prev_grad)


def record(train_mode: bool = True) -> _RecordingStateScope:
    """Scope in which operations are recorded (``with autograd.record():``)."""
    return _RecordingStateScope(True, train_mode)


def pause(train_mode: bool = False) -> _RecordingStateScope:
    """Scope in which recording is paused."""
    return _RecordingStateScope(False, train_mode)


def train_mode() -> _RecordingStateScope:
    """Scope in which operators run in training mode (recording unchanged)."""
    return _RecordingStateScope(None, True)


def predict_mode() -> _RecordingStateScope:
    """Scope in which operators run in inference mode (recording unchanged)."""
    return _RecordingStateScope(None, False)


# ---------------------------------------------------------------------------- variables
_GRAD_REQS = ("write", "add", "null")


def _arrived(tensor: torch.Tensor) -> None:
    """Torch's post-accumulate hook of an attached tensor: its gradient goes into its
    NDArray's ``grad`` buffer according to ``grad_req`` as soon as it is complete, as
    MXNet's backward writes each gradient into its buffer. Delivering it then, not after
    the whole backward pass, frees the buffer's previous contents at once: the model's
    gradients are never held twice (resnet18: 45 MiB less at the end of backward)."""
    g = tensor.grad
    if g is None:
        return
    tensor.grad = None
    arr = tensor._mx_owner()
    if arr is None:
        return
    info = arr._ag
    buf = None if info is None else info.grad
    if info is None or info.req == "null" or buf is None:
        return
    if info.req == "add":
        buf._t.add_(g.to(buf._t.dtype))
    else:
        _write_grad(buf, g)
    info.fresh = True


def _write_grad(buf, g: torch.Tensor) -> None:
    """grad_req 'write': the gradient becomes the buffer's contents.

    The gradient torch just accumulated is owned by nobody else, so the buffer NDArray
    (the object callers hold) takes it over instead of copying it; it is copied only when
    layouts differ.
    """
    t = buf._t
    if g.shape == t.shape and g.dtype == t.dtype and g.device == t.device and \
            g.is_contiguous() and t.is_contiguous() and not t._is_view():
        buf._t = g
    else:
        t.copy_(g)


def _attach(arr, grad_buf, grad_req: str) -> None:
    """Make ``arr`` a recorded leaf whose gradient is written into ``grad_buf``."""
    if grad_req not in _GRAD_REQS:
        raise MXNetError(f"grad_req must be one of {_GRAD_REQS}, got {grad_req!r}")
    t = arr._t
    if t.requires_grad and not t.is_leaf:
        t = t.detach()
    elif not t.is_leaf:
        t = t.detach()
    if grad_req == "null":
        if t.requires_grad:
            t = t.detach()
        arr._t = t
        arr._grad = grad_buf
        arr._grad_req = "null"
        return
    if not t.is_floating_point() and not t.is_complex():
        raise MXNetError(f"cannot attach a gradient to an array of dtype {t.dtype}: only "
                         "floating-point arrays are differentiable")
    if not t.requires_grad:
        t.requires_grad_(True)
    if getattr(arr, "_hook_tensor", None) is not t:
        t.register_post_accumulate_grad_hook(_arrived)
        t._mx_owner = weakref.ref(arr)
        arr._hook_tensor = t
    arr._t = t
    arr._grad = grad_buf
    arr._grad_req = grad_req


def mark_variables(variables, gradients, grad_reqs="write") -> None:
    """Mark NDArrays as variables to compute gradients for (``attach_grad`` in bulk)."""
    from .ndarray.ndarray import NDArray
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not (len(variables) == len(gradients) == len(grad_reqs)):
        raise MXNetError("mark_variables: variables, gradients and grad_reqs must have the "
                         "same length")
    for var, g, req in zip(variables, gradients, grad_reqs):
        _attach(var, g, req)


def _as_tensors(heads, head_grads):
    from .ndarray.ndarray import NDArray
    if isinstance(heads, NDArray):
        heads = [heads]
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    if len(head_grads) != len(heads):
        raise MXNetError("backward: heads and head_grads must have the same length")
    outs, grads = [], []
    for h, g in zip(heads, head_grads):
        t = h._t
        if not t.requires_grad:
            raise MXNetError("Cannot differentiate node because it is not in a computational "
                             "graph. You need to set is_recording to true or use autograd."
                             "record() to save computational graphs for backward. If you "
                             "want to differentiate the same graph twice, you need to pass "
                             "retain_graph=True to backward.")
        outs.append(t)
        grads.append(torch.ones_like(t) if g is None else g._t.to(t.dtype))
    return outs, grads


def backward(heads, head_grads=None, retain_graph: bool = False, train_mode: bool = True):
    """Compute the gradients of ``heads`` w.r.t. previously marked variables."""
    outs, grads = _as_tensors(heads, head_grads)
    threads = tuning.single(_STATE.work)
    with torch.enable_grad():
        try:
            torch.autograd.backward(outs, grads, retain_graph=retain_graph)
        except BaseException as err:
            if isinstance(err, RuntimeError) and \
                    "backward through the graph a second time" in str(err):
                raise MXNetError("backward: the graph has already been freed; pass "
                                 "retain_graph=True to the first backward to run it "
                                 "again") from None
            raise
        finally:
            tuning.restore(threads)


def grad(heads, variables, head_grads=None, retain_graph: bool | None = None,
         create_graph: bool = False, train_mode: bool = True):
    """Return the gradients of ``heads`` w.r.t. ``variables`` as new NDArrays.

    Variables' own ``grad`` buffers are not touched.
    """
    from .ndarray.ndarray import NDArray, _wrap
    single = isinstance(variables, NDArray)
    if single:
        variables = [variables]
    outs, grads = _as_tensors(heads, head_grads)
    if retain_graph is None:
        retain_graph = create_graph
    threads = tuning.single(_STATE.work)
    try:
        with torch.enable_grad():
            res = torch.autograd.grad(outs, [v._t for v in variables], grads,
                                      retain_graph=retain_graph, create_graph=create_graph,
                                      allow_unused=True)
    finally:
        tuning.restore(threads)
    out = []
    for v, g in zip(variables, res):
        if g is None:
            g = torch.zeros_like(v._t)
        # a channels-last program (mxtorch.graph.layout) may give strided gradients
        out.append(_wrap(g.contiguous(), v._ctx))
    return out


def get_symbol(x):
    """MXNet returns the recorded graph as a Symbol; torch keeps no symbolic record."""
    raise MXNetError("autograd.get_symbol is not available: mxtorch records with "
                     "torch.autograd, which keeps no symbolic graph. Use HybridBlock."
                     "export or a Symbol built with mx.sym instead.")


class Function:
    """Customize differentiation: subclass and define ``forward`` and ``backward``.

    As in MXNet, both take and return NDArrays; ``save_for_backward`` keeps arrays for
    ``backward`` in ``self.saved_tensors``.
    """

    def __init__(self):
        self._used = False
        self.saved_tensors: tuple = ()

    def save_for_backward(self, *args) -> None:
        self.saved_tensors = args

    def __call__(self, *inputs):
        from .ndarray.ndarray import NDArray, _wrap
        if self._used:
            raise MXNetError("Each autograd.Function object can only be called once")
        self._used = True
        func = self
        ctx0 = inputs[0]._ctx if inputs and isinstance(inputs[0], NDArray) else None

        class _Bridge(torch.autograd.Function):
            @staticmethod
            def forward(tctx, *tensors):
                with pause(is_training()):
                    outs = func.forward(*[_wrap(t.detach(), ctx0) for t in tensors])
                single = isinstance(outs, NDArray)
                tctx.single = single
                outs = (outs,) if single else tuple(outs)
                return tuple(o._t.clone() for o in outs)

            @staticmethod
            def backward(tctx, *out_grads):
                with pause():
                    grads = func.backward(*[_wrap(g.contiguous(), ctx0) for g in out_grads])
                if isinstance(grads, NDArray):
                    grads = (grads,)
                return tuple(None if g is None else g._t for g in grads)

        outs = _Bridge.apply(*[x._t for x in inputs])
        res = [_wrap(o, ctx0) for o in outs]
        return res[0] if len(res) == 1 else res

    def forward(self, *inputs):
        raise MXNetError(f"{type(self).__name__} must define forward")

    def backward(self, *output_grads):
        raise MXNetError(f"{type(self).__name__} must define backward")


def __getattr__(name: str):
    """``autograd.NDArray`` and ``autograd.Symbol``, as MXNet's module has them (resolved
    on first use: the array and symbol layers import this module)."""
    if name == "NDArray":
        from .ndarray.ndarray import NDArray
        return NDArray
    if name == "Symbol":
        from .symbol.symbol import Symbol
        return Symbol
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

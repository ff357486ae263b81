"""``mx.autograd`` on top of ``torch.autograd``.

MXNet records operations only inside ``record()``; outside it nothing is recorded even for
arrays with attached gradients. mxtorch mirrors this: ``record()`` turns torch's grad mode
on, and ``mx.nd`` (and CachedOp) run an operator under ``no_grad`` when an input requires
grad while nothing is being recorded (including inside ``pause()``). Gradients land in the
NDArray's own ``grad`` buffer according to its ``grad_req`` (write / add / null): torch's
post-accumulate hook of each attached tensor moves its gradient into the buffer as soon
as it is complete, as MXNet's backward writes it, so ``x.grad`` is a stable array callers
can hold on to. Beside torch's tape, each recorded operator call leaves a small record on
its outputs (operator, keywords, inputs): ``get_symbol`` turns it into a Symbol and a
backward without ``retain_graph`` marks it freed, as MXNet's graph is.
"""
from __future__ import annotations

import itertools
import threading
import weakref

import torch

from .base import (MXCallbackList, MXNetError, NDArrayHandle, SymbolHandle, c_array,
                   c_array_buf, c_handle_array, check_call, mx_uint, string_types)
from .ops import intgrad, tuning
from .ops.failure import FailedTensor, raise_failure

# MXNet's autograd module has no __all__: ``from mxnet.autograd import *`` also gives the
# NDArray and Symbol classes and the ctypes helpers it imports; they are listed here.
__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad", "Function",
           "get_symbol", "NDArray", "Symbol", "MXCallbackList", "c_array", "c_array_buf",  # noqa: F822 - module __getattr__
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


def set_recording(is_recording: bool) -> bool:  # MXNet's signature
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


# ---------------------------------------------------------------------- the recorded graph
# MXNet keeps the operator graph recorded under record(): get_symbol returns it, and a
# backward without retain_graph frees it. mxtorch keeps the same record beside torch's
# tape: every tensor a recorded operator call produces carries ``_mx_entry``, the pair
# (node, output index). An operator node is the list
# [OpDef, attributes (the call's keywords), input entries, number, freed]; a variable
# node is its name. Nodes hold no tensors, so the record never keeps activations alive.
_NODE_IDS = itertools.count()   # MXNet: node_<n>, one counter for the process
_VAR_IDS = itertools.count()    # MXNet: var<n> (attached arrays), null<n> (constants)
_FREED = 4                      # index of the freed flag in an operator node


def note(opdef, attrs: dict, tensors, res) -> None:
    """Record one operator call made under ``record()``: ``res`` (a tensor or a list of
    them) came from ``opdef`` with keywords ``attrs`` on ``tensors``. An input that no
    recorded call produced and that is not attached becomes a new variable, as in MXNet.
    Called on the recording path only; one and two inputs are spelled out (a loop costs
    a third of the whole)."""
    if len(tensors) == 2:
        a, b = tensors
        ins = [getattr(a, "_mx_entry", None) or _constant(a),
               getattr(b, "_mx_entry", None) or _constant(b)]
    elif len(tensors) == 1:
        a = tensors[0]
        ins = [getattr(a, "_mx_entry", None) or _constant(a)]
    else:
        ins = [getattr(t, "_mx_entry", None) or _constant(t) for t in tensors]
    node = [opdef, attrs, ins, next(_NODE_IDS), False]
    if res.__class__ is list:
        for i, r in enumerate(res):
            r._mx_entry = (node, i)
    else:
        res._mx_entry = (node, 0)


def note_graph(heads, inputs: dict, res) -> None:
    """Record a graph run as one call (a hybridized block's CachedOp inlined, as MXNet
    records a graph within its ``inline_limit``): each operator node of ``heads``
    (symbol entries) becomes a recorded node; ``inputs`` maps variable names to the
    tensors they were given; ``res`` are the outputs, one per head."""
    from .graph.ir import topo_order
    entries: dict[int, object] = {}
    for node in topo_order(heads):
        if node.op is None:
            t = inputs[node.name]
            entries[id(node)] = getattr(t, "_mx_entry", None) or _constant(t)
            continue
        ins = [_at(entries[id(e.node)], e.index) for e in node.inputs]
        entries[id(node)] = [node.op, node.op_attrs(), ins, next(_NODE_IDS), False]
    for head, r in zip(heads, res):
        r._mx_entry = _at(entries[id(head.node)], head.index)


def _at(rec, index: int) -> tuple:
    """The entry of output ``index`` of a recorded node (a variable's own entry)."""
    return rec if rec.__class__ is tuple else (rec, index)


def _constant(t: torch.Tensor) -> tuple:
    """The variable MXNet makes for a recorded input that is neither attached nor
    recorded (kept on the array, so its later uses share it)."""
    e = t._mx_entry = (f"null{next(_VAR_IDS)}", 0)
    return e


def _free_graph(tensors) -> None:
    """A backward without ``retain_graph`` frees the graph recorded for ``tensors``:
    differentiating any of its arrays again fails, as in MXNet."""
    stack = [e[0] for e in (getattr(t, "_mx_entry", None) for t in tensors)
             if e is not None and e[0].__class__ is list]
    while stack:
        node = stack.pop()
        if node[_FREED]:
            continue
        node[_FREED] = True
        stack.extend(e[0] for e in node[2] if e[0].__class__ is list)


def _freed(t: torch.Tensor) -> bool:
    e = getattr(t, "_mx_entry", None)
    return e is not None and e[0].__class__ is list and e[0][_FREED]


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
        elif getattr(t, intgrad.SHADOW, None) is not None:
            t = t.detach()   # an integer array attached before: its shadow stays behind
        t._mx_entry = (f"var{next(_VAR_IDS)}", 0)   # MXNet: a new variable per attach
        arr._t = t
        arr._grad = grad_buf
        arr._grad_req = "null"
        return
    t._mx_entry = (f"var{next(_VAR_IDS)}", 0)
    if not t.is_floating_point() and not t.is_complex():
        # MXNet: integer arrays have gradients too, in their own dtype (ops/intgrad.py);
        # torch differentiates the float64 shadow leaf that stands for the array
        leaf = intgrad.attach(t)
        leaf.register_post_accumulate_grad_hook(_arrived)
        leaf._mx_owner = weakref.ref(arr)
        arr._hook_tensor = leaf
    else:
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
    outs, grads, roots = [], [], []
    for h, g in zip(heads, head_grads):
        t = h._t
        if t.__class__ is FailedTensor:   # computed by a failed operator: report it here
            raise_failure(t)
        # an integer head: torch differentiates its shadow (ops/intgrad.py)
        out = t if t.requires_grad or t.is_floating_point() else intgrad.head(t)
        if out is None or not out.requires_grad or _freed(t):
            raise MXNetError("Cannot differentiate node because it is not in a computational "
                             "graph. You need to set is_recording to true or use autograd."
                             "record() to save computational graphs for backward. If you "
                             "want to differentiate the same graph twice, you need to pass "
                             "retain_graph=True to backward.")
        outs.append(out)
        roots.append(t)
        if g is None:
            grads.append(torch.ones_like(out))
        else:   # MXNet: the head gradient in the head's dtype (truncated for an integer one)
            grads.append(g._t.to(t.dtype) if out is t else g._t.to(t.dtype).to(out.dtype))
    return outs, grads, roots


def backward(heads, head_grads=None, retain_graph: bool = False, train_mode: bool = True):
    """Compute the gradients of ``heads`` w.r.t. previously marked variables."""
    outs, grads, roots = _as_tensors(heads, head_grads)
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
    if not retain_graph:
        _free_graph(roots)


def grad(heads, variables, head_grads=None, retain_graph: bool | None = None,
         create_graph: bool = False, train_mode: bool = True):
    """Return the gradients of ``heads`` w.r.t. ``variables`` as new NDArrays.

    Variables' own ``grad`` buffers are not touched.
    """
    from .ndarray.ndarray import NDArray, _wrap
    single = isinstance(variables, NDArray)
    if single:
        variables = [variables]
    outs, grads, roots = _as_tensors(heads, head_grads)
    if retain_graph is None:
        retain_graph = create_graph
    threads = tuning.single(_STATE.work)
    try:
        with torch.enable_grad():
            res = torch.autograd.grad(outs, [_differentiated(v._t) for v in variables],
                                      grads, retain_graph=retain_graph,
                                      create_graph=create_graph, allow_unused=True)
    finally:
        tuning.restore(threads)
    if not retain_graph:
        _free_graph(roots)
    out = []
    for v, g in zip(variables, res):
        if g is None or g._is_zerotensor():   # torch's symbolic zeros hold no data
            g = torch.zeros_like(v._t)
        elif g.dtype != v._t.dtype:   # an integer variable: truncated, as a cast does
            g = g.to(v._t.dtype)
        elif create_graph and not g.requires_grad:
            # MXNet: a gradient computed with create_graph is in the graph even where it
            # does not depend on the variables (clip, dropout, x * c): differentiating it
            # again gives zeros instead of failing.
            g = g.detach().requires_grad_()
        # a channels-last program (mxtorch.graph.layout) may give strided gradients
        out.append(_wrap(g.contiguous(), v._ctx))
    return out


def _differentiated(t: torch.Tensor) -> torch.Tensor:
    """The tensor torch differentiates for a variable: itself, or an attached integer
    array's shadow leaf."""
    if t.requires_grad or t.is_floating_point():
        return t
    s = getattr(t, intgrad.SHADOW, None)
    return s if s is not None and s.is_leaf else t


def get_symbol(x):
    """Retrieve the recorded computation history as a ``Symbol``.

    Parameters
    ----------
    x : NDArray
        Array representing the head of the computation graph.

    Returns
    -------
    Symbol
        The retrieved Symbol: ``node_<n>`` operator nodes over ``var<n>`` (attached
        arrays) and ``null<n>`` (other inputs) variables, as MXNet names them.
    """
    from .symbol.symbol import Symbol
    e = getattr(x._t, "_mx_entry", None)
    if e is None or (e[0].__class__ is list and e[0][_FREED]):
        raise MXNetError("NDArray is not part of a computation graph. Did you forget to "
                         "turn on recording?")
    return Symbol([_symbol_entry(e)])


def _symbol_entry(head):
    """The graph IR entry for a recorded entry: its nodes built once each, inputs first
    (an explicit stack: recorded graphs can be deeper than Python's recursion limit)."""
    from .base import attr_to_str
    from .graph.ir import Entry, Node
    built: dict[int, Node] = {}
    stack = [head[0]]
    while stack:
        rec = stack[-1]
        if id(rec) in built:
            stack.pop()
            continue
        if rec.__class__ is str:
            built[id(rec)] = Node(None, rec)
            stack.pop()
            continue
        todo = [e[0] for e in rec[2] if id(e[0]) not in built]
        if todo:
            stack.extend(reversed(todo))
            continue
        stack.pop()
        opdef, kwargs = rec[0], rec[1]
        parsed = opdef.parse_attrs(kwargs)
        attrs = {k: attr_to_str(getattr(parsed, k, v)) for k, v in kwargs.items()}
        node = Node(opdef, f"node_{rec[3]}", attrs,
                    [Entry(built[id(e[0])], e[1]) for e in rec[2]])
        node._parsed = parsed
        built[id(rec)] = node
    return Entry(built[id(head[0])], head[1])


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

"""``mx.executor.Executor``: arrays bound to a Symbol (seeds 000/001, MXNet 1.9.1 API).

The caller's arrays ARE the executor's arrays: writing into ``arg_dict['w']`` changes the
next forward. Forward runs the compiled GraphProgram; backward differentiates it with
``torch.autograd.grad`` and writes (or adds) into the bound gradient arrays. It sits above
``graph/`` (which compiles and runs the program on tensors) and works on NDArrays.

Like MXNet's module it also exposes the helpers its source imports (``ndarray``,
``NDArray``, ``py_str``, the C-array converters of :mod:`mxtorch.base`).
"""
from __future__ import annotations

import operator
import time
import warnings
from typing import Any

import numpy as np
import torch

from . import ndarray  # noqa: F401 - MXNet's module exposes these names
from .base import (MXNetError, c_array_buf, c_handle_array, c_str_array,  # noqa: F401
                   check_call, py_str)
from .context import Context, current_context
from .graph.budget import CompileGate
from .graph.compile import GraphProgram, own_outputs
from .graph.cse import eliminate_common_expr, enabled as cse_enabled
from .graph.int_tape import IntTape, needs_int_tape
from .graph.monitor import BackwardTaps
from .graph import backends
from .graph.partition import is_partition_backend, partition_for_bind
from .graph.passes import gradient_nodes, infer_graph_shapes, infer_graph_types, planned_bytes
from .graph.threads import largest_work
from .ndarray.ndarray import NDArray, _wrap
from .ops import tuning
from .ops.tensor_util import torch_dtype

__all__ = ["Executor"]

_REQS = ("write", "add", "null", "inplace")


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


class Executor:
    """Executes a bound symbol. Create it with ``Symbol.bind`` or ``Symbol.simple_bind``."""

    def __init__(self, sym, ctx: Context, arg_arrays: list, grad_arrays: list,
                 grad_reqs: list[str], aux_arrays: list, group2ctx=None):
        self._symbol = sym
        self._ctx = ctx
        self._group2ctx = group2ctx
        # MXNet: an output lives on the context of its node's ctx_group
        self._out_ctxs = [_group_ctx(e.node, group2ctx, ctx) for e in sym._outputs]
        self._out_buffers: list | None = None   # set by reshape: the parent's output memory
        self._arg_names = sym.list_arguments()
        self._aux_names = sym.list_auxiliary_states()
        self._output_names = sym.list_outputs()
        self.arg_arrays = list(arg_arrays)
        self.grad_arrays = list(grad_arrays)
        self.aux_arrays = list(aux_arrays)
        self._grad_reqs = list(grad_reqs)
        # MXNet's executors keep oneDNN layouts between convolutions in training too
        # MXNet: executors run the graph with common subexpressions merged
        # MXNet: MXNET_SUBGRAPH_BACKEND partitions the graph at bind, before CSE
        heads = partition_for_bind(sym._outputs)
        self._heads = eliminate_common_expr(heads) if cse_enabled() else heads
        self._program = GraphProgram(self._heads, channels_last=True)
        by_name = dict(zip(self._arg_names, self.arg_arrays))
        by_name.update(zip(self._aux_names, self.aux_arrays))
        self._input_arrays = [by_name[n] for n in self._program.input_names]
        pos = {n: i for i, n in enumerate(self._arg_names)}
        slots = [(k, pos[n]) for k, n in enumerate(self._program.input_names)
                 if n in pos and self._grad_reqs[pos[n]] != "null"
                 and self.grad_arrays[pos[n]] is not None]
        if slots:   # MXNet fails at bind where a gradient meets a non-differentiable op
            gradient_nodes(sym._outputs, {self._arg_names[i] for _, i in slots})
        # torch differentiates floats only: integer arguments get theirs from an
        # interpreted run (graph/int_tape.py); every argument does where a cast to an
        # integer type lies on the gradient path
        if slots and needs_int_tape(self._program):
            self._grad_slots, self._int_slots = [], slots
        else:
            self._grad_slots = [(k, i) for k, i in slots
                                if self.arg_arrays[i]._t.is_floating_point()]
            self._int_slots = [(k, i) for k, i in slots
                               if not self.arg_arrays[i]._t.is_floating_point()]
        self._int_tape: IntTape | None = None
        self._outputs: list[NDArray] | None = None   # made when first asked for
        self._out_tensors: tuple = ()
        self._leaves: list = []
        self._handed: dict[int, torch.Tensor] = {}  # grad tensors placed by backward
        # training steps are traced where it pays (graph/budget.py); None: never
        self._trace = backends.training_trace_mode(ctx.torch_device)
        self._gates: dict[tuple, CompileGate] = {}   # by input signature
        self._gate: CompileGate | None = None    # the one the last forward charged
        self._step: Any = None   # the traced step (backends) the last forward ran
        self._last_signature: tuple = ((), 0, None)  # (tensors, threads, their gate)
        self._monitor = None
        self._monitor_all = False
        self._work: dict[tuple, float] = {}   # largest operator estimate by input shapes
        self._last_work: tuple = ((), 0.0)    # (tensors, their estimate)
        self._taps: BackwardTaps | None = None
        self._opt: backends.InferenceOptimizer | None = None
        self._opt_consts: list[str] | None = None
        self._opt_backend: str | None = None
        if backends.backend_from_env() and not is_partition_backend(
                backends.backend_from_env()):
            self.optimize_for_inference()

    def optimize_for_inference(self, const_names=None, backend=None) -> None:
        """Run ``forward(is_train=False)`` through the optimizing path (inference only).

        ``const_names`` are the inputs frozen as constants (parameters and auxiliary
        states; default: auxiliary states and arguments not named like data or labels).
        Used by ``Module.bind(for_training=False)`` and ``MXNET_SUBGRAPH_BACKEND``.
        """
        names = self._program.input_names
        if const_names is None:
            aux = set(self._aux_names)
            const_names = [n for n in names if n in aux or not
                           (n.endswith("data") or n.endswith("label"))]
        const = set(const_names)
        self._opt_consts, self._opt_backend = list(const_names), backend
        self._opt = backends.create(
            self._program, [i for i, n in enumerate(names) if n in const],
            backend or backends.backend_from_env(), name=self._symbol.name or "executor")

    @property
    def outputs(self) -> list[NDArray]:
        """The output arrays: those of the last forward; before the first, zero arrays of
        the inferred shapes (MXNet allocates them at bind; here they are inferred when
        first asked for, so a bind runs no shape inference of its own)."""
        if self._outputs is None:
            self._outputs = self._initial_outputs()
        return self._outputs

    @outputs.setter
    def outputs(self, arrays: list[NDArray]) -> None:
        self._outputs = list(arrays)

    def _initial_outputs(self) -> list[NDArray]:
        """MXNet allocates the outputs at bind time: zero arrays of the inferred shapes."""
        shapes = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
        shapes.update((n, a.shape) for n, a in zip(self._aux_names, self.aux_arrays))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, out_shapes, _ = self._symbol.infer_shape(**shapes)
                types = {n: a.dtype for n, a in zip(self._arg_names, self.arg_arrays)}
                _, out_types, _ = self._symbol.infer_type(**types)
        except MXNetError:
            return []
        if out_shapes is None:
            return []
        out_types = out_types or [np.float32] * len(out_shapes)
        return [_zeros(s, t, c) for s, t, c in zip(out_shapes, out_types, self._out_ctxs)]

    # ------------------------------------------------------------------ running
    def forward(self, is_train: bool = False, **kwargs) -> list[NDArray]:
        """Run the graph; keyword arrays are copied into the bound inputs first."""
        if kwargs:
            arg_dict = self.arg_dict
            for name, value in kwargs.items():
                if name not in arg_dict:
                    raise TypeError(f"Unknown argument {name}")
                if not isinstance(value, (NDArray, np.ndarray)):
                    raise ValueError("only accept keyword argument of NDArrays and "
                                     "numpy.ndarray")
                dst = arg_dict[name]
                if tuple(value.shape) != dst.shape:
                    raise ValueError(f"Shape not match! Argument {name}, need: {dst.shape}, "
                                     f"received: {tuple(value.shape)}")
                dst[:] = value
        tensors = [a._t for a in self._input_arrays]
        device = self._ctx.torch_device
        leaves = []
        self._step = self._gate = None
        threads = self._threads_for(tensors)   # MXNet's operator tuning (threads.py)
        try:
            if self._grad_slots:
                outs = self._forward_for_backward(tensors, leaves, device, is_train)
            else:
                with torch.no_grad():
                    outs = None
                    if self._opt is not None and not is_train and self._monitor is None:
                        outs = self._opt(tensors, device)
                    if outs is None:
                        outs = self._run(tensors, is_train, device)
            outs = own_outputs(outs, tensors)
            self._int_tape = self._int_record(tensors, device) \
                if self._int_slots and is_train else None
        finally:
            tuning.restore(threads)
        self._leaves = leaves
        self._out_tensors = outs
        self._set_outputs(outs)
        return self.outputs

    def _threads_for(self, tensors) -> int:
        """:func:`tuning.single` for a program on ``tensors``: one thread where its
        largest operator is small (estimated once per input shapes, on CPU)."""
        if self._ctx.torch_device.type != "cpu":
            return 0
        last, work = self._last_work
        if len(last) != len(tensors) or not all(map(operator.is_, tensors, last)):
            key = tuple(tuple(t.shape) for t in tensors)
            work = self._work.get(key)
            if work is None:
                work = self._work[key] = largest_work(self._program, key)
            self._last_work = (tensors, work)
        return tuning.single(work)

    def _forward_for_backward(self, tensors, leaves: list, device, is_train: bool):
        """A forward a backward may follow: the traced step of this input signature where
        one runs, else autograd's, timed for the signature's gate (which decides when
        tracing pays) while it has not decided for good."""
        gate = None
        if self._trace and is_train and self._monitor is None:
            gate = self._signature_gate(tensors)
            self._step = gate.compiled
        if self._step is not None:
            start = time.perf_counter()
            outs = self._step.forward(tensors)
            if not gate.final:
                self._gate = gate
                gate.charge(time.perf_counter() - start, new_run=True)
            return outs
        if gate is None or gate.final:
            return self._record(tensors, leaves, device, is_train)
        self._gate = gate
        return self._plain_training_step(gate, tensors, leaves, device)

    def _signature_gate(self, tensors) -> CompileGate:
        """The compile gate of the training step on ``tensors`` (by their shapes, dtypes
        and strides, and the thread count)."""
        threads = torch.get_num_threads()
        last_tensors, last_threads, gate = self._last_signature
        # the same tensor objects have the same shapes, dtypes and strides
        if threads == last_threads and all(map(operator.is_, tensors, last_tensors)):
            return gate
        key = (tuple((t.shape, t.dtype, t.stride()) for t in tensors), threads)
        gate = self._gates.get(key)
        if gate is None:
            nodes = len(self._program.nodes) - len(self._program.input_nodes)
            gate = self._gates[key] = CompileGate(backends.training_trace_cost(), nodes,
                                                  at_once=self._trace == "always")
        self._last_signature = (tensors, threads, gate)
        return gate

    def _plain_training_step(self, gate: CompileGate, tensors, leaves: list, device):
        """Run the step on autograd, charge its time to ``gate``, and trace it when that
        is due (the traced programs run from the next step)."""
        rng = torch.default_generator.get_state()
        start = time.perf_counter()
        outs = self._record(tensors, leaves, device, True)
        gate.charge(time.perf_counter() - start, new_run=True)
        if gate.due():
            if not torch.equal(rng, torch.default_generator.get_state()):
                gate.never()   # it draws random numbers: autograd's streams stay in use
            else:
                start = time.perf_counter()
                step = backends.trace_training_step(
                    self._program, tensors, [k for k, _ in self._grad_slots], outs, device)
                gate.compiled_as(step, time.perf_counter() - start)
        return outs

    def _record(self, tensors, leaves: list, device, is_train: bool):
        """Run on the autograd tape with the gradient slots as leaves (into ``leaves``)."""
        tensors = list(tensors)
        for k, _ in self._grad_slots:
            leaf = tensors[k].detach().requires_grad_(True)
            tensors[k] = leaf
            leaves.append(leaf)
        with torch.enable_grad():
            return self._run(tensors, is_train, device)

    def _run(self, tensors, is_train, device):
        if self._monitor is None:
            return self._program(tensors, is_train, device)
        ctx = self._ctx
        cb = self._monitor
        self._taps = BackwardTaps() if torch.is_grad_enabled() else None
        return self._program.run_monitored(
            tensors, is_train, device, lambda n, t: cb(n, _wrap(t.detach(), ctx)),
            self._monitor_all, self._taps)

    def _set_outputs(self, outs) -> None:
        if self._out_buffers is not None:   # a reshaped executor: its parent's memory
            self._outputs = []
            for buf, t, c in zip(self._out_buffers, outs, self._out_ctxs):
                if buf is None or buf.shape != tuple(t.shape):
                    # no room in the parent's memory: the output itself (copying it into
                    # its own alias would be an in-place write autograd refuses)
                    self._outputs.append(_wrap(t.detach(), c))
                else:
                    buf._t.copy_(t)
                    self._outputs.append(buf)
            return
        if self._outputs is None or len(self._outputs) != len(outs):
            self._outputs = [_wrap(t.detach(), c) for t, c in zip(outs, self._out_ctxs)]
            return
        for arr, t in zip(self._outputs, outs):
            arr._t = t.detach()

    def backward(self, out_grads=None, is_train: bool = True) -> None:
        """Propagate ``out_grads`` (ones by default) back to the bound gradient arrays."""
        gate = self._gate
        threads = self._threads_for([a._t for a in self._input_arrays])
        try:
            if gate is None or gate.final:
                self._backward(out_grads)
                return
            start = time.perf_counter()
            self._backward(out_grads)
            gate.charge(time.perf_counter() - start, new_run=False)
        finally:
            tuning.restore(threads)

    def _int_record(self, tensors, device) -> IntTape:
        """The interpreted run that gives the integer slots' gradients; auxiliary states
        are copies (the real step updated them already)."""
        aux = set(self._aux_names)
        tensors = [t.detach().clone() if n in aux else t
                   for n, t in zip(self._program.input_names, tensors)]
        return IntTape(self._program, tensors, [k for k, _ in self._int_slots], device)

    def _int_backward(self, out_grads) -> None:
        """Write the integer slots' gradients (each truncated to its argument's dtype)."""
        grads: list = [None] * len(self._int_slots)
        if self._int_tape is not None:
            given = self._given_grads(out_grads, len(self._int_tape.outs))
            grads = self._int_tape.grads([None if g is None else _as_tensor(g)
                                          for g in given])
        with torch.no_grad():
            for (_, i), g in zip(self._int_slots, grads):
                buf = self.grad_arrays[i]._t
                if g is not None:
                    buf.add_(g.to(buf.dtype)) if self._grad_reqs[i] == "add" else buf.copy_(g)
                elif self._grad_reqs[i] == "write":
                    buf.zero_()

    def _backward(self, out_grads) -> None:
        if self._int_slots:
            self._int_backward(out_grads)
        if not self._grad_slots:
            return
        step = self._step
        if step is None and not self._leaves:
            # MXNet: a backward with no training forward before it runs on whatever the
            # forward buffers hold; here that forward runs, on the current inputs
            self.forward(is_train=True)
            step = self._step
        if step is not None:
            self._hand_over(step.backward(self._head_grads(out_grads, step)[1]), step.fresh)
            return
        heads, grads = self._head_grads(out_grads)
        if heads:
            res = torch.autograd.grad(heads, self._leaves, grads, retain_graph=True,
                                      allow_unused=True)
        else:
            res = [None] * len(self._leaves)
        # A fresh gradient whose storage nothing else uses (no head gradient, input or other
        # gradient) becomes the bound grad array's contents without a copy, in whatever
        # strides autograd produced (a dense layer's weight gradient is a transposed view).
        taken = {_storage(t) for t in grads}
        taken.update(_storage(a._t) for a in self._input_arrays)
        taken.update(_storage(t) for t in self._out_tensors)
        fresh = []
        for g in res:
            fresh.append(g is not None and _storage(g) not in taken)
            if g is not None:
                taken.add(_storage(g))
        with torch.no_grad():
            self._hand_over(res, fresh)
        if self._monitor is not None and self._taps is not None:
            ctx, cb = self._ctx, self._monitor
            self._taps.report(lambda n, t: cb(n, _wrap(t.detach(), ctx)))

    def _hand_over(self, res, fresh) -> None:
        """Write (or add) the gradients ``res`` into the bound arrays; a ``fresh`` one (new
        memory nothing else holds) that is dense becomes the array's contents without a
        copy. The NDArray object the caller holds is unchanged."""
        for (_, i), g, new in zip(self._grad_slots, res, fresh):
            arr = self.grad_arrays[i]
            buf = arr._t
            if self._grad_reqs[i] == "add":
                if g is not None:
                    buf.add_(g)
            elif g is None:
                buf.zero_()
            elif new and g.shape == buf.shape and g.dtype == buf.dtype and \
                    g.device == buf.device and g.is_contiguous() and \
                    (self._handed.get(i) is buf or not buf._is_view()):
                arr._t = self._handed[i] = g
            else:
                buf.copy_(g)

    def _given_grads(self, out_grads, n: int) -> list:
        """The head gradients given to backward, one per output (None: ones)."""
        if out_grads is None or (isinstance(out_grads, (list, tuple)) and not out_grads):
            given = [None] * n
        elif isinstance(out_grads, NDArray):
            given = [out_grads]
        elif isinstance(out_grads, dict):
            given = [out_grads.get(name) for name in self._output_names]
        else:
            given = list(out_grads)[:n]   # MXNet: extra head gradients are unused
        if len(given) != n:
            raise MXNetError(f"backward: {len(given)} head gradients given for {n} outputs")
        return given

    def _head_grads(self, out_grads, step: Any = None):
        outs = self._out_tensors
        given = self._given_grads(out_grads, len(outs))
        if step is not None and all(g is None for g in given):
            return None, step.ones()
        heads, grads = [], []
        mask = step.head_mask if step is not None else [t.requires_grad for t in outs]
        for t, g, m in zip(outs, given, mask):
            if not m:
                continue
            heads.append(t)
            grads.append(torch.ones_like(t) if g is None else
                         _as_tensor(g).to(t.device, t.dtype))
        return heads, grads

    # ------------------------------------------------------------------ views
    @staticmethod
    def _as_dict(names, arrays, what: str) -> dict:
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"Duplicate names detected in {what}: {dup}")
        return dict(zip(names, arrays))

    @property
    def arg_dict(self) -> dict[str, NDArray]:
        return self._as_dict(self._arg_names, self.arg_arrays, "arguments")

    @property
    def grad_dict(self) -> dict[str, NDArray]:
        return self._as_dict(self._arg_names, self.grad_arrays, "gradients")

    @property
    def aux_dict(self) -> dict[str, NDArray]:
        return self._as_dict(self._aux_names, self.aux_arrays, "auxiliary states")

    @property
    def output_dict(self) -> dict[str, NDArray]:
        return self._as_dict(self._output_names, self.outputs, "outputs")

    # ------------------------------------------------------------------ parameters
    def copy_params_from(self, arg_params: dict, aux_params: dict | None = None,
                         allow_extra_params: bool = False) -> None:
        """Copy parameter values into the bound arrays (cast to their dtypes)."""
        arg_dict = self.arg_dict
        for name, value in arg_params.items():
            if name in arg_dict:
                dst = arg_dict[name]
                value.astype(dst.dtype).copyto(dst)
            elif not allow_extra_params:
                raise ValueError(f'Find name "{name}" that is not in the arguments')
        if aux_params is None:
            return
        aux_dict = self.aux_dict
        for name, value in aux_params.items():
            if name in aux_dict:
                dst = aux_dict[name]
                value.astype(dst.dtype).copyto(dst)
            elif not allow_extra_params:
                raise ValueError(f'Find name {name} that is not in the auxiliary states')

    def get_optimized_symbol(self):
        """The symbol this executor runs: the bound one partitioned by
        ``MXNET_SUBGRAPH_BACKEND`` and with common subexpressions merged
        (``MXNET_ELIMINATE_COMMON_EXPR``); other optimizations happen at compile time."""
        return type(self._symbol)(self._heads).__copy__()

    def set_monitor_callback(self, callback, monitor_all: bool = False) -> None:
        """Call ``callback(name, array)`` for every node output during forward."""
        self._monitor = callback
        self._monitor_all = monitor_all

    def debug_str(self) -> str:
        """The graph, the bound arrays and, as MXNet prints it, the memory its
        intermediate results take (``Total N MB allocated``)."""
        lines = [self._symbol.debug_str(), "Bound arrays:"]
        for n, a in zip(self._arg_names, self.arg_arrays):
            lines.append(f"\targ {n}: {a.shape} {np.dtype(a.dtype).name}")
        for n, a in zip(self._aux_names, self.aux_arrays):
            lines.append(f"\taux {n}: {a.shape} {np.dtype(a.dtype).name}")
        lines.append(f"Total {self._planned_bytes() >> 20} MB allocated")
        return "\n".join(lines)

    def _planned_bytes(self) -> int:
        names = self._arg_names + self._aux_names
        arrays = self.arg_arrays + self.aux_arrays
        heads = self._symbol._outputs
        shapes = infer_graph_shapes(heads, {n: a.shape for n, a in zip(names, arrays)})
        types = infer_graph_types(heads, {n: np.dtype(a.dtype).name
                                          for n, a in zip(names, arrays)})
        wrt = {self._arg_names[i] for _, i in self._grad_slots}
        return planned_bytes(heads, shapes, types, wrt)

    def reshape(self, partial_shaping: bool = False, allow_up_sizing: bool = False,
                **kwargs) -> "Executor":
        """A new executor for new input shapes that shares memory with this one (so the two
        cannot run in parallel): arrays whose shape is unchanged are the same arrays, smaller
        ones are views of the start of the old ones, and its outputs are written into this
        executor's output memory where they fit. A larger array needs ``allow_up_sizing``;
        a changed array not named in ``kwargs`` needs ``partial_shaping``."""
        # MXNet: shapes are inferred from the given ones alone
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arg_shapes, out_shapes, aux_shapes = self._symbol.infer_shape_partial(**kwargs)
        new_args, new_grads = [], []
        for i, (name, shape) in enumerate(zip(self._arg_names, arg_shapes)):
            old, old_grad = self.arg_arrays[i], self.grad_arrays[i]
            shape = _reshape_target(old, shape, partial_shaping or name in kwargs, name)
            new_args.append(_resized(old, shape, allow_up_sizing, name))
            new_grads.append(None if old_grad is None else
                             _resized(old_grad, shape, allow_up_sizing, name))
        new_aux = [_resized(old, _reshape_target(old, shape, partial_shaping, name),
                            allow_up_sizing, name)
                   for name, shape, old in zip(self._aux_names, aux_shapes, self.aux_arrays)]
        exe = Executor(self._symbol, self._ctx, new_args, new_grads, self._grad_reqs,
                       new_aux, self._group2ctx)
        exe._out_buffers = [None if not shape or 0 in shape else _shared_view(old, shape)
                            for old, shape in zip(self.outputs, out_shapes)]
        if self._opt is not None:
            exe.optimize_for_inference(self._opt_consts, self._opt_backend)
        if self._monitor is not None:   # MXNet: the monitor moves to the new executor
            exe.set_monitor_callback(self._monitor, self._monitor_all)
        return exe


def _reshape_target(arr: NDArray, shape: tuple, may_change: bool, name: str) -> tuple:
    """The shape an array takes in a reshaped executor (checked as MXNet checks it)."""
    shape = tuple(shape)
    if shape == arr.shape:
        return shape
    if not may_change:
        raise MXNetError(f"Shape of unspecified arg: {name} changed. This can cause the new "
                         "executor to not share parameters with the old one. Please check "
                         "for error in network. If this is intended, set "
                         "partial_shaping=True to suppress this warning.")
    if not shape or 0 in shape:
        raise MXNetError(f"reshape: cannot infer the new shape of {name} from the given "
                         f"shapes (got {shape})")
    return shape


def _shared_view(arr: NDArray, shape) -> NDArray | None:
    """An array of ``shape`` over the start of ``arr``'s memory (None when it is larger)."""
    size = int(np.prod(shape))
    t = arr._t
    if size > t.numel() or not t.is_contiguous():
        return None
    return _wrap(t.reshape(-1)[:size].view(tuple(shape)), arr.context)


def _resized(arr: NDArray, shape, allow_up_sizing: bool, what: str) -> NDArray:
    """``arr`` itself, a view of its start (MXNet's NDArray::Reshape), or, with
    ``allow_up_sizing``, a new zero array where the new shape is larger."""
    if arr.shape == tuple(shape):
        return arr
    view = _shared_view(arr, shape)
    if view is not None:
        return view
    if int(np.prod(shape)) > arr.size and not allow_up_sizing:
        raise MXNetError(f"New shape of arg: {what} is larger than original. First making "
                         "a big executor and then down sizing it is more efficient than "
                         "the reverse. If you really want to up size, set "
                         "allow_up_sizing=True to enable allocation of new arrays.")
    return _zeros(shape, arr.dtype, arr.context)

def _as_tensor(g) -> torch.Tensor:
    return g._t if isinstance(g, NDArray) else torch.as_tensor(g)


def _zeros(shape, dtype, ctx: Context) -> NDArray:
    return _wrap(torch.zeros(tuple(shape), dtype=torch_dtype(dtype),
                             device=ctx.torch_device), ctx)


# ---------------------------------------------------------------------- binding
def _reqs(grad_req, names: list[str]) -> list[str]:
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise MXNetError(f"grad_req list has {len(grad_req)} entries for "
                             f"{len(names)} arguments")
        reqs = list(grad_req)
    elif isinstance(grad_req, dict):
        reqs = [grad_req.get(n, "null") for n in names]
    else:
        raise TypeError("grad_req must be a str, list or dict")
    for r in reqs:
        if r not in _REQS:
            raise MXNetError(f"grad_req must be one of {list(_REQS)}, got {r!r}")
    return ["write" if r == "inplace" else r for r in reqs]


def _arrays(given, names: list[str], what: str, required: bool = True) -> list:
    if given is None:
        if required and names:
            raise MXNetError(f"bind: {what} must be provided for {names}")
        return [None] * len(names)
    if isinstance(given, dict):
        out = []
        for n in names:
            if n not in given:
                if required:
                    raise ValueError(f"key `{n}` is missing in `{what}`")
                out.append(None)
            else:
                out.append(given[n])
        return out
    given = list(given)
    if len(given) != len(names):
        raise ValueError(f"Length of {what} does not match the number of arguments "
                         f"({len(given)} vs {len(names)}: {names})")
    return given


def bind(sym, ctx, args, args_grad=None, grad_req="write", aux_states=None,
         group2ctx=None, shared_exec=None) -> Executor:
    """``Symbol.bind``: the given arrays become the executor's arrays (no copies)."""
    ctx = ctx or current_context()
    arg_names = sym.list_arguments()
    aux_names = sym.list_auxiliary_states()
    arg_arrays = _arrays(args, arg_names, "args")
    for n, a in zip(arg_names, arg_arrays):
        if not isinstance(a, NDArray):
            raise TypeError(f"bind: argument '{n}' must be an NDArray, got {type(a).__name__}")
    grads = _arrays(args_grad, arg_names, "args_grad", required=False)
    reqs = _reqs(grad_req, arg_names) if args_grad is not None else ["null"] * len(arg_names)
    reqs = [r if g is not None else "null" for r, g in zip(reqs, grads)]
    aux_arrays = _arrays(aux_states, aux_names, "aux_states")
    if not group2ctx:
        _check_contexts(ctx, arg_arrays, grads)
    return Executor(sym, ctx, arg_arrays, grads, reqs, aux_arrays, group2ctx)


def _check_contexts(ctx: Context, args: list, grads: list) -> None:
    """MXNet: without group2ctx every argument and gradient is on the bind context."""
    for what, arrays in (("Input", args), ("Gradient", grads)):
        for a in arrays:
            if a is not None and a.context != ctx:
                plural = "arguments" if what == "Input" else "gradients"
                raise MXNetError(f"{what} array is in {a.context} while binding with ctx={ctx}."
                                 f" All {plural} must be in global context ({ctx}) unless "
                                 "group2ctx is specified for cross-device graph.")


def simple_bind(sym, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                shared_arg_names=None, shared_exec=None, shared_buffer=None,
                **kwargs) -> Executor:
    """``Symbol.simple_bind``: infer shapes and dtypes, allocate arrays, bind."""
    ctx = default_ctx = ctx or current_context()
    # MXNet: only the keywords that are shapes of the symbol's inputs count
    inputs = set(sym.list_inputs())
    kwargs = {k: v for k, v in kwargs.items() if isinstance(v, (tuple, list)) and k in inputs}
    try:
        arg_shapes, _, aux_shapes = sym.infer_shape(**kwargs)
    except MXNetError as err:
        # MXNet: simple_bind lists the shapes it was given above the operator's error
        given = "".join(f"\n  {k}: {tuple(v)}" for k, v in kwargs.items())
        raise MXNetError(f"simple_bind error. Arguments:{given}\n{err}") from None
    if arg_shapes is None:
        raise MXNetError(f"simple_bind: cannot infer every argument shape from {kwargs}; "
                         f"arguments are {sym.list_arguments()}")
    if type_dict is None:
        # MXNet: arguments without a __dtype__ attribute default to float32
        attrs = sym.attr_dict()
        type_dict = {k: "float32" for k in sym.list_arguments()
                     if "__dtype__" not in attrs.get(k, {})}
    arg_types, _, aux_types = sym.infer_type(**type_dict)
    if arg_types is None:
        arg_types = [np.float32] * len(arg_shapes)
        aux_types = [np.float32] * len(aux_shapes)
    arg_names = sym.list_arguments()
    reqs = _reqs(grad_req, arg_names)
    shared_names = set(shared_arg_names or [])
    args, grads = [], []
    var_ctx = _variable_ctxs(sym, group2ctx, default_ctx)
    for i, (n, s, t) in enumerate(zip(arg_names, arg_shapes, arg_types)):
        arr = grad = None
        ctx = var_ctx.get(n, default_ctx)
        if shared_exec is not None and n in shared_names:
            src = shared_exec.arg_dict.get(n)
            if src is not None and src.shape == tuple(s):
                arr, grad = src, shared_exec.grad_dict.get(n)
        if arr is None and shared_buffer is not None and n not in shared_names:
            buf = shared_buffer.get(n)
            if buf is not None and buf.shape == tuple(s):
                arr = buf
        if arr is None:
            arr = _zeros(s, t, ctx)
            if shared_buffer is not None and n not in shared_names:
                shared_buffer[n] = arr
        if grad is None and reqs[i] != "null":
            grad = _zeros(s, t, ctx)
        args.append(arr)
        grads.append(grad if reqs[i] != "null" else None)
    ctx = default_ctx
    aux = []
    for n, s, t in zip(sym.list_auxiliary_states(), aux_shapes, aux_types):
        src = shared_exec.aux_dict.get(n) if shared_exec is not None else None
        aux.append(src if src is not None and src.shape == tuple(s) else
                   _zeros(s, t, var_ctx.get(n, ctx)))
    return Executor(sym, ctx, args, grads, reqs, aux, group2ctx)


def _group_ctx(node, group2ctx: dict | None, default: Context) -> Context:
    """The context of ``node``'s ``ctx_group`` attribute in ``group2ctx`` (else
    ``default``)."""
    if not group2ctx:
        return default
    return group2ctx.get(node.attrs.get("__ctx_group__"), default)


def _variable_ctxs(sym, group2ctx: dict | None, default: Context) -> dict:
    """MXNet: simple_bind allocates each input on the context of its ctx_group."""
    if not group2ctx:
        return {}
    return {n.name: _group_ctx(n, group2ctx, default) for n in sym._topo() if n.is_variable}


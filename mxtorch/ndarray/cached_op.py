"""``mx.nd.CachedOp``: a Symbol compiled once and run imperatively under ``mx.autograd``."""
from __future__ import annotations

import torch

from .. import autograd as _ag
from ..base import MXNetError
from ..context import current_context
from ..graph.compile import GraphProgram, own_outputs
from ..graph.ir import topo_order
from ..graph import backends
from ..graph.partition import is_partition_backend
from ..ops import registry as _reg
from ..ops import tuning
from .ndarray import NDArray, _wrap, _write_out

__all__ = ["CachedOp"]


class CachedOp:
    """Run a symbol's compiled program on NDArrays (inputs in ``list_inputs`` order).

    Recording and training follow ``mx.autograd``: under ``record()`` torch records the
    program's operations, so ``backward`` reaches the inputs' attached gradients.

    With ``static_alloc`` and ``static_shape`` set, a ``backend`` flag, or
    ``MXNET_SUBGRAPH_BACKEND`` in the environment, inference calls (not recording, not
    training) run an optimized program (see :mod:`mxtorch.graph.backends`) with the
    ``param_indices`` inputs frozen as constants.
    """

    def __init__(self, sym, flags=()):
        self._sym = sym
        self.flags = dict(flags) if flags else {}
        self._program = GraphProgram(sym._outputs, channels_last=self._optimizing())
        self._num_inputs = len(self._program.input_names)
        self._num_outputs = len(sym._outputs)
        self._optimizer = self._make_optimizer()
        self._json = self._inline = None   # how recorded calls are recorded, made once

    def _optimizing(self) -> bool:
        """Whether the flags ask for the optimizing path: ``static_alloc`` with
        ``static_shape``, or a backend."""
        flags = self.flags
        static = bool(flags.get("static_alloc")) and bool(flags.get("static_shape"))
        backend = flags.get("backend") or backends.backend_from_env()
        # a partitioning backend ('default') has changed the graph already (gluon's
        # optimize_for); it does not optimize the program
        return static or bool(backend and not is_partition_backend(backend))

    def _make_optimizer(self) -> backends.InferenceOptimizer | None:
        flags = self.flags
        backend = flags.get("backend") or backends.backend_from_env()
        if not self._optimizing():
            return None
        const_idx = flags.get("param_indices")
        if const_idx is None:
            data = set(flags.get("data_indices", ()))
            const_idx = [i for i in range(self._num_inputs) if i not in data] if data else []
        name = self._sym.name if len(self._sym._outputs) == 1 else "cached_op"
        return backends.create(self._program, list(const_idx), backend, name=name)

    def _record(self, tensors, res) -> None:
        """Record the call for ``autograd.get_symbol``: operator by operator when the
        graph has at most ``inline_limit`` of them (and no static_alloc), else as one
        ``_CachedOp`` node, as MXNet records it."""
        if self._json is None:
            nodes = topo_order(self._sym._outputs)
            self._inline = not self.flags.get("static_alloc") and \
                sum(n.op is not None for n in nodes) <= int(self.flags.get("inline_limit", 2))
            self._json = self._sym.tojson()
        if self._inline:
            _ag.note_graph(self._sym._outputs, dict(zip(self._program.input_names, tensors)),
                           res)
        else:
            _ag.note(_reg.get("_CachedOp"), {"subgraph": self._json}, tensors, list(res))

    @property
    def program(self) -> GraphProgram:
        return self._program

    def get_optimized_symbol(self):
        return self._sym.__copy__()

    def __call__(self, *args, out=None, default_ctx=None, default_device=None):
        if len(args) != self._num_inputs:
            raise MXNetError(f"CachedOp: expected {self._num_inputs} inputs "
                             f"{self._program.input_names}, got {len(args)}")
        tensors = []
        for name, a in zip(self._program.input_names, args):
            if not isinstance(a, NDArray):
                raise MXNetError(f"CachedOp: input '{name}' must be an NDArray, got "
                                 f"{type(a).__name__}")
            tensors.append(a._t)
        ctx = args[0]._ctx if args else (default_ctx or default_device or current_context())
        state = _ag._STATE
        device = ctx.torch_device
        res = None
        if self._optimizer is not None and not state.recording and not state.training:
            with torch.no_grad():
                res = self._optimizer(tensors, device)
                if res is None:
                    res = self._program(tensors, False, device)
        elif not state.recording and any(t.requires_grad for t in tensors):
            with torch.no_grad():
                res = self._program(tensors, state.training, device)
        else:
            if state.recording:   # its calls are not seen one by one: count it as large
                tuning.recorded(state, float("inf"))
            res = self._program(tensors, state.training, device)
        res = own_outputs(res, tensors)
        if state.recording and any(r.requires_grad for r in res):
            self._record(tensors, res)
        if out is not None:
            outs = out if isinstance(out, (list, tuple)) else [out]
            for o, r in zip(outs, res):
                _write_out(o, r)
            return out
        outs = [_wrap(r, ctx) for r in res]
        return outs[0] if self._num_outputs == 1 else outs

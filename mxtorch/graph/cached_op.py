"""``mx.nd.CachedOp``: a Symbol compiled once and run imperatively under ``mx.autograd``."""
from __future__ import annotations

import torch

from .. import autograd as _ag
from ..base import MXNetError
from ..context import current_context
from ..ndarray.ndarray import NDArray, _wrap, _write_out
from .compile import GraphProgram

__all__ = ["CachedOp"]


class CachedOp:
    """Run a symbol's compiled program on NDArrays (inputs in ``list_inputs`` order).

    Recording and training follow ``mx.autograd``: under ``record()`` torch records the
    program's operations, so ``backward`` reaches the inputs' attached gradients.
    """

    def __init__(self, sym, flags=()):
        self._sym = sym
        self.flags = dict(flags) if flags else {}
        self._program = GraphProgram(sym._outputs)
        self._num_inputs = len(self._program.input_names)
        self._num_outputs = len(sym._outputs)

    @property
    def program(self) -> GraphProgram:
        return self._program

    def get_optimized_symbol(self):
        return self._sym.copy()

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
        if not state.recording and any(t.requires_grad for t in tensors):
            with torch.no_grad():
                res = self._program(tensors, state.training, device)
        else:
            res = self._program(tensors, state.training, device)
        if out is not None:
            outs = out if isinstance(out, (list, tuple)) else [out]
            for o, r in zip(outs, res):
                _write_out(o, r)
            return out
        outs = [_wrap(r, ctx) for r in res]
        return outs[0] if self._num_outputs == 1 else outs

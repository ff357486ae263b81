"""Gradients a bound graph gives integer arguments and casts to integer types.

MXNet differentiates every dtype: an int32 argument gets an int32 gradient, and a Cast to
int32 passes its head gradient back (truncated to the integer dtype). torch's autograd
differentiates floats only, so an executor whose graph has such a path computes those
gradients on a second, interpreted run of the graph that follows the imperative rules of
:mod:`mxtorch.ops.intgrad`: integer arguments carry float64 shadows, every operator that
drops the gradient path (an integer result) is grafted back onto it with its exact
values. The compiled program still computes the outputs; this run is for gradients only.
"""
from __future__ import annotations

from typing import Sequence

import torch

from ..base import MXNetError
from ..ops import intgrad
from .compile import GraphProgram

__all__ = ["needs_int_tape", "IntTape"]


def needs_int_tape(program: GraphProgram) -> bool:
    """Whether a node turns a float into an integer on a gradient path (Cast to int32):
    then every argument's gradient comes from the interpreted run."""
    return any(not n.is_variable and n.op.float_attrs is not None
               and n.op.float_attrs(n.parsed) is not None for n in program.nodes)


class IntTape:
    """One interpreted training run of ``program`` on ``tensors`` (the inputs in program
    order, auxiliary states already copied), differentiable w.r.t. the inputs at
    ``positions``; :meth:`grads` gives their gradients, each in its input's dtype."""

    def __init__(self, program: GraphProgram, tensors: Sequence[torch.Tensor],
                 positions: Sequence[int], device: torch.device | None):
        tensors = [t.detach() for t in tensors]
        self.leaves: list[torch.Tensor] = []
        self.dtypes = [tensors[k].dtype for k in positions]
        for k in positions:
            t = tensors[k]
            if t.is_floating_point():
                tensors[k] = t.requires_grad_(True)
                self.leaves.append(t)
            else:   # an alias of the argument carries the shadow, the argument none
                self.leaves.append(intgrad.attach(t))
        with torch.enable_grad():
            self.outs = _interpret(program, tensors, device)

    def grads(self, head_grads: Sequence) -> list:
        """Gradients of the leaves for the head gradients (None: ones; one per output);
        None where an input has none."""
        heads, grads = [], []
        for t, g in zip(self.outs, head_grads):
            h = t if t.requires_grad else (None if t.is_floating_point() else intgrad.head(t))
            if h is None or not h.requires_grad:
                continue
            heads.append(h)
            if g is None:
                grads.append(torch.ones_like(h))
            else:   # MXNet: the head gradient in the head's dtype
                grads.append(g.to(h.device, t.dtype).to(h.dtype))
        if not heads:
            return [None] * len(self.leaves)
        res = torch.autograd.grad(heads, self.leaves, grads, retain_graph=True,
                                  allow_unused=True)
        return [None if g is None else g.to(dt) for g, dt in zip(res, self.dtypes)]


def _interpret(program: GraphProgram, tensors: Sequence[torch.Tensor],
               device: torch.device | None) -> tuple:
    def run(n, ins: list):
        try:
            if n.op.takes_subgraphs:
                return program.run_node(n, intgrad.stand_ins(ins), True, device)
            res = n.op.run(n.parsed, ins, True, device)
            outs = res if isinstance(res, (tuple, list)) else (res,)
            if not any(o.requires_grad for o in outs) and \
                    intgrad.involved(ins, all(o.is_floating_point() for o in outs)):
                res = intgrad.run_op(n.op, n.parsed, ins, res, True, device)
            return res
        except (RuntimeError, TypeError, ValueError) as err:
            raise MXNetError(f"Error in operator {n.name}: {err}") from None
    return program.interpret(tensors, run)

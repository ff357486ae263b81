"""Operator tuning for bound graphs: a program whose every operator is small runs on one
thread.

MXNet's operator tuning ran each small operator without OpenMP. Imperative calls get
that from :mod:`mxtorch.ops.tuning` one by one; an executor runs a whole program, so the
estimate is made once per input signature from the inferred shapes: the largest of its
operators' estimates (their ``work`` function, else one pass over the largest tensor).
A program under ``ONE_THREAD_US`` runs its forward and backward on one thread (restored
after each call); with several workers asleep under ``OMP_WAIT_POLICY=passive``, waking
them costs more than such a program's whole work.
"""
from __future__ import annotations

import math
from typing import Sequence

import torch

from ..base import MXNetError
from ..ops import tuning
from .compile import GraphProgram
from .passes import infer_graph_shapes

__all__ = ["largest_work"]


def largest_work(program: GraphProgram, in_shapes: Sequence[tuple]) -> float:
    """The largest single-thread estimate (microseconds) of the program's operators on
    inputs of ``in_shapes``; infinity where a shape cannot be inferred."""
    try:
        shapes = infer_graph_shapes(program.heads, dict(zip(program.input_names, in_shapes)))
    except MXNetError:
        return math.inf
    largest = 0.0
    for n in program.nodes:
        if n.is_variable:
            continue
        ins = [shapes.get((id(e.node), e.index)) for e in n.inputs]
        outs = [shapes.get((id(n), i)) for i in range(n.num_outputs())]
        if any(s is None for s in ins + outs) or n.op.takes_subgraphs:
            return math.inf
        if n.op.work is not None:
            metas = [torch.empty(s, device="meta") for s in ins]
            try:
                work = n.op.work(n.parsed, *metas)
            except (TypeError, ValueError, IndexError, AttributeError, RuntimeError):
                return math.inf
        else:
            work = max((math.prod(s) for s in ins + outs), default=0) \
                / tuning.ELEMENTS_PER_US
        largest = max(largest, work)
        if largest >= tuning.ONE_THREAD_US:
            break
    return largest

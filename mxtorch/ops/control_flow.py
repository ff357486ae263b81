"""Control-flow operators whose bodies are nested graphs: ``_foreach``."""
from __future__ import annotations

import torch

from .params import Int, Shape
from .registry import OpDef, register

__all__: list[str] = []


def _foreach_compute(attrs, *inputs, subgraphs):
    """Run the body over axis 0 of the data inputs, threading the states."""
    (body,) = subgraphs
    data_locs, state_locs, remain_locs = (attrs.in_data_locs, attrs.in_state_locs,
                                          attrs.remain_locs)
    n_data = len(data_locs)
    data = inputs[:n_data]
    states = list(inputs[n_data:n_data + len(state_locs)])
    remain = inputs[n_data + len(state_locs):]
    nin = n_data + len(states) + len(remain)
    steps = data[0].shape[0] if data else 0
    outs: list[list[torch.Tensor]] = [[] for _ in range(attrs.num_out_data)]
    for t in range(steps):
        args: list = [None] * nin
        for loc, d in zip(data_locs, data):
            args[loc] = d[t]
        for loc, s in zip(state_locs, states):
            args[loc] = s
        for loc, r in zip(remain_locs, remain):
            args[loc] = r
        res = body(*args)
        for i in range(attrs.num_out_data):
            outs[i].append(res[i])
        states = list(res[attrs.num_out_data:])
    stacked = [torch.stack(o) for o in outs]
    result = stacked + states
    return result[0] if len(result) == 1 else tuple(result)


def _foreach_inputs(attrs) -> list[str]:
    n = len(attrs.in_data_locs) + len(attrs.in_state_locs) + len(attrs.remain_locs)
    return [f"data{i}" for i in range(n)]


register(OpDef(
    "_foreach", _foreach_compute, inputs=_foreach_inputs, takes_subgraphs=True,
    params=[Int("num_args"), Int("num_outputs"), Int("num_out_data"),
            Shape("in_state_locs"), Shape("in_data_locs"), Shape("remain_locs")],
    num_outputs=lambda a: a.num_outputs,
    doc="Run a subgraph over the first axis of its data inputs (mx.sym.contrib.foreach)."))

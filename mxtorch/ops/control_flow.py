"""Operators whose bodies are nested graphs: ``_foreach``, ``_CachedOp``."""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable, NamedTuple, Sequence

import torch

from ..base import MXNetError
from .params import Int, Shape, Str
from .registry import OpDef, get, register

__all__: list[str] = []

# A compiled nested graph: called on tensors, returns its outputs.
Subgraph = Callable[..., Sequence[torch.Tensor]]


def _foreach_compute(attrs: Any, *inputs: torch.Tensor, subgraphs: Sequence[Subgraph]
                     ) -> torch.Tensor | tuple[torch.Tensor, ...]:
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
        args: list[torch.Tensor | None] = [None] * nin
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


def _foreach_inputs(attrs: Any) -> list[str]:
    n = len(attrs.in_data_locs) + len(attrs.in_state_locs) + len(attrs.remain_locs)
    return [f"data{i}" for i in range(n)]


register(OpDef(
    "_foreach", _foreach_compute, inputs=_foreach_inputs, takes_subgraphs=True,
    params=[Int("num_args", doc="Number of inputs.", lower=1), Int("num_outputs"),
            Int("num_out_data"), Shape("in_state_locs"), Shape("in_data_locs"),
            Shape("remain_locs")],
    num_outputs=lambda a: a.num_outputs,
    doc="Run a subgraph over the first axis of its data inputs (mx.sym.contrib.foreach)."))


# ---------------------------------------------------------------------- _CachedOp
class _Nested(NamedTuple):
    """What a nested graph (symbol JSON) looks like from outside."""

    inputs: tuple[str, ...]    # its variables, in MXNet's list_inputs order
    aux: tuple[str, ...]       # those that are auxiliary states
    outputs: tuple[str, ...]   # its list_outputs names


def _node_attrs(raw: dict[str, Any]) -> dict[str, Any]:
    attrs = raw.get("attrs", raw.get("param", raw.get("attr", {}))) or {}
    return {k: v for k, v in attrs.items() if not (k.startswith("__") and k.endswith("__"))}


@lru_cache(maxsize=256)
def _nested(text: str) -> _Nested:
    """Read a nested graph's interface from its JSON (the operators from the registry)."""
    try:
        graph = json.loads(text)
        nodes, heads = graph["nodes"], graph["heads"]
    except (ValueError, TypeError, KeyError) as err:
        raise MXNetError(f"Operator _CachedOp: subgraph is not a symbol JSON: {err}") from None
    ops = [None if raw["op"] == "null" else get(raw["op"]) for raw in nodes]
    parsed = [None if op is None else op.parse_attrs(_node_attrs(raw))
              for op, raw in zip(ops, nodes)]
    order: list[int] = []     # DFS post-order from the heads, inputs in order (MXNet's)
    seen: set[int] = set()
    for head in heads:
        stack = [(head[0], 0)]
        while stack:
            nid, i = stack.pop()
            if nid in seen:
                continue
            ins = nodes[nid]["inputs"]
            if i < len(ins):
                stack += [(nid, i + 1), (ins[i][0], 0)]
            else:
                seen.add(nid)
                order.append(nid)
    aux: set[int] = set()
    for nid in order:
        op = ops[nid]
        if op is not None:
            names = op.input_names(parsed[nid])
            aux.update(nodes[nid]["inputs"][names.index(a)][0]
                       for a in op.aux_names(parsed[nid]) if a in names)
    variables = [nid for nid in order if ops[nid] is None]

    def entry_name(nid: int, index: int) -> str:
        op = ops[nid]
        name: str = nodes[nid]["name"]
        if op is None:
            return name
        return f"{name}_{op.output_names(parsed[nid])[index]}"

    repeats: dict[tuple[int, int], int] = {}
    outputs: list[str] = []
    for h in heads:
        key = (h[0], h[1])
        k = repeats[key] = repeats.get(key, -1) + 1
        # MXNet: a repeated output is a _copy node, named <node>_copy0, then
        # <node>_copy0_0_copy, ... for each further repeat of the same entry
        outputs.append(entry_name(*key) if k == 0 else
                       f"{nodes[h[0]]['name']}_copy0{'_0_copy' * (k - 1)}_output")
    return _Nested(tuple(nodes[v]["name"] for v in variables),
                   tuple(nodes[v]["name"] for v in variables if v in aux), tuple(outputs))


def _cached_op_compute(attrs: Any, *inputs: torch.Tensor, subgraphs: Sequence[Subgraph]
                       ) -> torch.Tensor | tuple[torch.Tensor, ...]:
    """Run the nested graph on the inputs (in its list_inputs order)."""
    (body,) = subgraphs
    outs = body(*inputs)
    return outs[0] if len(outs) == 1 else tuple(outs)


register(OpDef(
    "_CachedOp", _cached_op_compute, params=[Str("subgraph")], takes_subgraphs=True,
    subgraph_attr="subgraph", deterministic=False,
    inputs=lambda a: list(_nested(a.subgraph).inputs),
    aux=lambda a: list(_nested(a.subgraph).aux),
    num_outputs=lambda a: len(_nested(a.subgraph).outputs),
    output_names=lambda a: list(_nested(a.subgraph).outputs),
    doc="Apply a nested graph (the symbol JSON in ``subgraph``) to the inputs, as one "
        "node: its variables are the inputs, its auxiliary states the node's, and its "
        "shapes and types are inferred through it."))

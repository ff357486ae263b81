"""The graph IR: nodes, entries and traversal, shared by Symbol and the compiler. Torch-free."""
from __future__ import annotations

import json
from typing import Any, Iterable

from ..ops import registry as _reg

__all__ = ["Node", "Entry", "topo_order", "HIDDEN_KEYS", "AUX_INIT"]

# Keys MXNet also lists without underscores in list_attr()/attr_dict().
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")

# MXNet: the implicit moving statistics of normalization layers carry init hints.
AUX_INIT = {"moving_mean": '["zero", {}]', "moving_var": '["one", {}]'}


class Node:
    """One graph node: a variable (``op is None``) or an operator application."""

    __slots__ = ("op", "name", "attrs", "inputs", "_parsed", "subgraphs")

    def __init__(self, op: _reg.OpDef | None, name: str, attrs: dict[str, str] | None = None,
                 inputs: list["Entry"] | None = None, subgraphs: list | None = None):
        self.op = op
        self.name = name
        self.attrs: dict[str, str] = dict(attrs or {})
        self.inputs: list[Entry] = list(inputs or [])
        self._parsed = None
        self.subgraphs = subgraphs or []

    @property
    def is_variable(self) -> bool:
        return self.op is None

    @property
    def parsed(self) -> Any:
        """The operator's parsed attributes (hidden ``__x__`` keys left out)."""
        if self._parsed is None:
            attrs = {k: v for k, v in self.attrs.items() if not _is_hidden(k)}
            key = self.op.subgraph_attr
            if self.subgraphs and key is not None and key not in attrs:
                # MXNet: a partitioned graph keeps a _CachedOp's graph in the node's
                # subgraphs, not in an attribute
                attrs[key] = json.dumps(self.subgraphs[0])
            self._parsed = self.op.parse_attrs(attrs)
        return self._parsed

    def op_attrs(self) -> dict[str, str]:
        return {k: v for k, v in self.attrs.items() if not _is_hidden(k)}

    def num_outputs(self) -> int:
        return 1 if self.op is None else self.op.num_outputs(self.parsed)

    def output_names(self) -> list[str]:
        return [] if self.op is None else self.op.output_names(self.parsed)

    def input_names(self) -> list[str]:
        return [] if self.op is None else self.op.input_names(self.parsed)

    def aux_positions(self) -> list[int]:
        if self.op is None:
            return []
        aux = self.op.aux_names(self.parsed)
        if not aux:
            return []
        names = self.input_names()
        return [names.index(a) for a in aux if a in names]

    def __repr__(self):
        return f"<Node {self.op.name if self.op else 'null'} {self.name}>"


def _is_hidden(key: str) -> bool:
    return key.startswith("__") and key.endswith("__")


class Entry(tuple):
    """``(node, index)``: the ``index``-th output of ``node``."""

    __slots__ = ()

    def __new__(cls, node: Node, index: int = 0):
        return tuple.__new__(cls, (node, index))

    @property
    def node(self) -> Node:
        return self[0]

    @property
    def index(self) -> int:
        return self[1]


def topo_order(heads: Iterable[Entry]) -> list[Node]:
    """Nodes in DFS post-order from the heads (inputs visited in order), as MXNet does."""
    order: list[Node] = []
    seen: set[int] = set()
    for head in heads:
        stack = [(head.node, 0)]
        while stack:
            node, i = stack.pop()
            if id(node) in seen and i == 0:
                continue
            if i < len(node.inputs):
                stack.append((node, i + 1))
                child = node.inputs[i].node
                if id(child) not in seen:
                    stack.append((child, 0))
            else:
                if id(node) not in seen:
                    seen.add(id(node))
                    order.append(node)
    return order

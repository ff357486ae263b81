"""Common subexpression elimination, as MXNet's executors run it at bind time
(``MXNET_ELIMINATE_COMMON_EXPR``, on by default). Torch-free.

Two operator nodes merge when they apply the same operator, with the same attributes,
to the same inputs, and the operator's output depends on nothing else: operators that
update auxiliary states (BatchNorm), keep state or draw random numbers never merge.
Where merging makes two graph outputs the same entry, the later one becomes a ``_copy``
of it, so every output is still its own array.
"""
from __future__ import annotations

import os

from ..ops import registry as _reg
from .ir import Entry, Node, topo_order

__all__ = ["eliminate_common_expr", "enabled"]


def enabled() -> bool:
    """``MXNET_ELIMINATE_COMMON_EXPR`` (default on, as in MXNet 1.9.1)."""
    return os.environ.get("MXNET_ELIMINATE_COMMON_EXPR", "1").strip().lower() not in (
        "0", "false", "")


def _mergeable(n: Node) -> bool:
    op = n.op
    if op is None or not n.inputs or op.takes_subgraphs or n.aux_positions():
        return False
    return op.is_deterministic(n.parsed)


def eliminate_common_expr(heads: list[Entry]) -> list[Entry]:
    """The heads of an equivalent graph without duplicate computations (new nodes; the
    given graph is not changed). Returns ``heads`` itself when nothing merges."""
    nodes = topo_order(heads)
    seen: dict[tuple, Node] = {}
    canon: dict[int, Node] = {}
    for n in nodes:
        if not _mergeable(n):
            continue
        key = (n.op, tuple(sorted(n.attrs.items())),
               tuple((id(_canon(canon, e.node)), e.index) for e in n.inputs))
        first = seen.setdefault(key, n)
        if first is not n:
            canon[id(n)] = first
    if not canon:
        return heads
    return _rebuild(nodes, heads, canon)


def _canon(canon: dict[int, Node], node: Node) -> Node:
    return canon.get(id(node), node)


def _rebuild(nodes: list[Node], heads: list[Entry], canon: dict[int, Node]) -> list[Entry]:
    """Copy the graph with every merged node replaced by the one it merged into."""
    memo: dict[int, Node] = {}
    for n in nodes:
        if id(n) in canon:
            continue
        new = Node(n.op, n.name, n.attrs, [Entry(memo[id(_canon(canon, e.node))], e.index)
                                           for e in n.inputs], n.subgraphs)
        new._parsed = n._parsed
        memo[id(n)] = new
    out: list[Entry] = []
    copies: dict[tuple, int] = {}
    copy_op = _reg.get("_copy")
    for h in heads:
        e = Entry(memo[id(_canon(canon, h.node))], h.index)
        key = (id(e.node), e.index)
        if key in copies:
            # MXNet: a repeated output becomes <name>_<k>_copy of the first
            node = Node(copy_op, f"{e.node.name}_{copies[key]}_copy", {}, [e])
            copies[key] += 1
            e = Entry(node, 0)
        else:
            copies[key] = 0
        out.append(e)
    return out

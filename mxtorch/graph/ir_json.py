"""The graph IR to and from symbol JSON's plain dicts (``format/symbol_json.py`` turns them
into text and back): operators found in the registry, their attributes and input counts
checked as MXNet's reader checks them, legacy graphs upgraded."""
from __future__ import annotations

from typing import Any

from ..base import MXNetError
from ..format.symbol_json import (MXNET_VERSION, read_graph, read_heads, read_node,
                                  read_text, write_text)
from ..ops import registry as _reg
from ..ops.params import Shape
from .ir import AUX_INIT, Entry, Node, topo_order

__all__ = ["dump_graph", "load_graph", "graph_dict", "subgraph_heads", "MXNET_VERSION"]

_AMP_CAST = ("amp_cast", "amp_multicast")
_VAR_SHAPE = Shape("__shape__")


# ---------------------------------------------------------------------- writing
def _strip_amp(heads: list[Entry]) -> list[Entry]:
    def skip(e: Entry) -> Entry:
        while not e.node.is_variable and e.node.op.name in _AMP_CAST:
            e = e.node.inputs[e.index if e.node.op.name == "amp_multicast" else 0]
        return e
    memo: dict[int, Node] = {}
    for n in topo_order(heads):
        if not n.is_variable and n.op.name in _AMP_CAST:
            continue
        new = Node(n.op, n.name, n.attrs, [], n.subgraphs)
        new._parsed = n._parsed
        new.inputs = [Entry(memo[id(skip(e).node)], skip(e).index) for e in n.inputs]
        memo[id(n)] = new
    return [Entry(memo[id(skip(h).node)], skip(h).index) for h in heads]


def graph_dict(heads: list[Entry], with_attrs: bool = True) -> dict[str, Any]:
    """The graph under ``heads`` as symbol JSON's dict (nodes in topological order)."""
    nodes = topo_order(heads)
    index = {id(n): i for i, n in enumerate(nodes)}
    aux_vars = set()
    for n in nodes:
        for pos in n.aux_positions():
            aux_vars.add((id(n), pos))
    out_nodes, row_ptr = [], [0]
    for n in nodes:
        d: dict[str, Any] = {"op": "null" if n.is_variable else n.op.name, "name": n.name}
        if n.attrs:
            d["attrs"] = {k: n.attrs[k] for k in sorted(n.attrs)}
        d["inputs"] = [[index[id(e.node)], e.index,
                        1 if (id(n), i) in aux_vars and e.node.is_variable else 0]
                       for i, e in enumerate(n.inputs)]
        if n.subgraphs:
            d["subgraphs"] = n.subgraphs
        out_nodes.append(d)
        total = 1 if n.is_variable else n.op.total_outputs(n.parsed)
        row_ptr.append(row_ptr[-1] + total)
    g = {"nodes": out_nodes,
         "arg_nodes": [i for i, n in enumerate(nodes) if n.is_variable],
         "node_row_ptr": row_ptr,
         "heads": [[index[id(h.node)], h.index, 0] for h in heads]}
    if with_attrs:
        g["attrs"] = {"mxnet_version": ["int", MXNET_VERSION]}
    return g


def dump_graph(heads: list[Entry], remove_amp_cast: bool = True,
               extra_attrs: dict | None = None) -> str:
    """Serialize output entries to MXNet's JSON text (MXNet's indentation and spacing)."""
    if remove_amp_cast:
        heads = _strip_amp(heads)
    return write_text(graph_dict(heads), extra_attrs)


# ---------------------------------------------------------------------- reading
def load_graph(text: str | bytes, fname: str | None = None) -> list[Entry]:
    """Parse symbol JSON into output entries, upgrading legacy layouts.

    Every problem (bytes that are not UTF-8, malformed JSON, unknown or missing fields,
    entries naming absent nodes or outputs, attribute values MXNet refuses) raises
    :class:`MXNetError` naming ``fname`` (when given) and the node. Nested graphs
    (``subgraphs``) are checked too, with a work list rather than recursion.
    """
    graph, what = read_text(text, fname)
    heads, nested = _build(graph, None, what)
    while nested:   # MXNet parses nested graphs as it loads; any depth, no recursion
        sub, where = nested.pop()
        nested.extend(_build(sub, MXNET_VERSION, where)[1])
    return heads


def subgraph_heads(graph: dict) -> list[Entry]:
    """Output entries of a nested graph (a node's ``subgraphs`` item)."""
    return _build(graph, MXNET_VERSION, "symbol JSON subgraph")[0]


def _build(graph: Any, version: int | None, where: str) -> tuple[list[Entry], list]:
    """The graph's heads, and its nodes' nested graphs (to check) with where they are."""
    raw_nodes, version = read_graph(graph, version, where)
    nodes: list[Node] = []
    nested: list = []
    for i, raw in enumerate(raw_nodes):
        node = _build_node(read_node(raw, len(nodes), version, f"{where}: node {i}"),
                           nodes, version)
        for k, sub in enumerate(node.subgraphs):
            nested.append((sub, f"{where}: subgraph {k} of node '{node.name}'"))
        nodes.append(node)
    heads = read_heads(graph, len(nodes), where)
    return [_entry(h, nodes, f"{where}: heads") for h in heads], nested


def _entry(raw: list[int], nodes: list[Node], where: str) -> Entry:
    """``[node_id, index(, version)]`` as an Entry, the index among the node's outputs."""
    nid, idx = raw[0], raw[1]
    node = nodes[nid]
    total = 1 if node.op is None else node.op.total_outputs(node.parsed)
    if not 0 <= idx < total:
        raise MXNetError(f"{where}: entry {raw} asks for output {idx} of node "
                         f"'{node.name}', which has {total} output(s)")
    return Entry(node, idx)


def _build_node(raw: dict[str, Any], nodes: list[Node], version: int) -> Node:
    """One checked node dict (``read_node``'s) as a Node, its inputs among ``nodes``."""
    where, attrs = raw["where"], raw["attrs"]
    inputs = [_entry(e, nodes, f"{where}: inputs") for e in raw["inputs"]]
    if raw["op"] == "null":
        # MXNet: a variable's inputs are read and ignored
        if "__shape__" in attrs:
            _check_var_shape(attrs["__shape__"], where)
        return Node(None, raw["name"], attrs)
    op = _reg.find(raw["op"])
    if op is None:
        raise MXNetError(f"{where}: operator '{raw['op']}' is not supported by mxtorch")
    node = Node(op, raw["name"], _upgrade_op_attrs(op, attrs, version), inputs,
                raw["subgraphs"])
    try:
        node.parsed  # noqa: B018 - validate attributes now, naming the node
    except MXNetError as err:
        raise MXNetError(f"{where}: {err}") from None
    if version < 900:
        _add_missing_inputs(node)
    names = node.input_names()
    if len(node.inputs) != len(names):
        # MXNet: refused at shape inference ("Input:[data, weight, bias]")
        raise MXNetError(f"{where}: operator {op.name} takes {len(names)} input(s) "
                         f"[{', '.join(names)}], the node has {len(node.inputs)}")
    return node


def _check_var_shape(text: str, where: str) -> None:
    """A variable's ``__shape__`` must be a shape (MXNet refuses another at inference)."""
    try:
        _VAR_SHAPE.parse(text)
    except (ValueError, TypeError):
        raise MXNetError(f"{where}: Invalid Parameter format for __shape__ expect "
                         f"Shape(tuple) but value='{text}'") from None


def _upgrade_op_attrs(op, attrs: dict[str, str], version: int) -> dict[str, str]:
    # MXNet < 0.9.5: argmax/argmin with axis=-1 meant "no axis".
    if version < 905 and op.name in ("argmax", "argmin") and attrs.get("axis") == "-1":
        attrs = {k: v for k, v in attrs.items() if k != "axis"}
    return attrs


def _add_missing_inputs(node: Node) -> None:
    """MXNet < 0.9: append trailing inputs (BatchNorm's moving stats) as new variables."""
    names = node.input_names()
    for name in names[len(node.inputs):]:
        vattrs = node.op_attrs()
        if name in node.op.aux and name in AUX_INIT:
            vattrs["__init__"] = AUX_INIT[name]
        node.inputs.append(Entry(Node(None, f"{node.name}_{name}", vattrs), 0))

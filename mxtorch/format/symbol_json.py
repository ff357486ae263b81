"""MXNet symbol JSON (MXNET_FORMATS.md section 2): writing 1.9.1's layout, reading every
layout 1.9.1 reads (including the 0.8 ``param``/``attr`` form, upgraded as MXNet does)."""
from __future__ import annotations

import json
from typing import Any

from ..base import MXNetError
from ..ops import registry as _reg
from ..symbol.node import Entry, Node, topo_order

__all__ = ["dump_graph", "load_graph", "MXNET_VERSION"]

MXNET_VERSION = 10901
_HIDDEN = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")
_AMP_CAST = ("amp_cast", "amp_multicast")


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
    g = graph_dict(heads)
    if extra_attrs:
        # MXNet: graph attributes are a std::map, written in sorted key order
        g["attrs"] = dict(sorted({**g["attrs"], **extra_attrs}.items()))
    return _write(g, 0)


def _is_short(v: list) -> bool:
    return len(v) <= 10 and all(not isinstance(x, (dict,)) for x in v) and \
        all(not isinstance(x, list) or all(not isinstance(y, (list, dict)) for y in x)
            for x in v)


def _write(v: Any, indent: int) -> str:
    """dmlc's JSONWriter layout: 2-space indent, ", " + newline separators."""
    pad = " " * indent
    inner = " " * (indent + 2)
    if isinstance(v, dict):
        if not v:
            return "{}"
        if len(v) == 1:
            (k, x), = v.items()
            return "{" + json.dumps(k, ensure_ascii=False) + ": " + _write(x, indent) + "}"
        items = [inner + json.dumps(k, ensure_ascii=False) + ": " + _write(x, indent + 2)
                 for k, x in v.items()]
        return "{\n" + ", \n".join(items) + "\n" + pad + "}"
    if isinstance(v, list):
        if not v:
            return "[]"
        if _is_short(v):
            return "[" + ", ".join(_write(x, indent) for x in v) + "]"
        items = [inner + _write(x, indent + 2) for x in v]
        return "[\n" + ", \n".join(items) + "\n" + pad + "]"
    return json.dumps(v, ensure_ascii=False)


# ---------------------------------------------------------------------- reading
def _entry(raw, n_nodes: int) -> tuple[int, int]:
    if not isinstance(raw, list) or len(raw) not in (2, 3):
        raise MXNetError(f"symbol JSON: malformed entry {raw!r}")
    nid, idx = int(raw[0]), int(raw[1])
    if not 0 <= nid < n_nodes:
        raise MXNetError(f"symbol JSON: entry {raw!r} points outside the node list")
    return nid, idx


def _version(graph: dict) -> int:
    attrs = graph.get("attrs") or {}
    ver = attrs.get("mxnet_version")
    if ver is None:
        return 800
    if isinstance(ver, list) and len(ver) == 2:
        return int(ver[1])
    return int(ver)


def _node_attrs(raw: dict, version: int) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for key in ("param", "attr", "attrs"):
        part = raw.get(key) or {}
        if not isinstance(part, dict):
            raise MXNetError(f"symbol JSON: '{key}' of node {raw.get('name')!r} must be an "
                             "object")
        attrs.update({str(k): str(v) for k, v in part.items()})
    if version < MXNET_VERSION:
        for k in _HIDDEN:
            if k in attrs:
                attrs[f"__{k}__"] = attrs.pop(k)
    return attrs


def load_graph(text: str) -> list[Entry]:
    """Parse symbol JSON into output entries, upgrading legacy layouts."""
    try:
        graph = json.loads(text)
    except json.JSONDecodeError as err:
        raise MXNetError(f"symbol JSON is malformed: {err}") from None
    if not isinstance(graph, dict) or "nodes" not in graph or "heads" not in graph:
        raise MXNetError("symbol JSON must be an object with 'nodes' and 'heads'")
    return _build(graph, _version(graph))


def subgraph_heads(graph: dict) -> list[Entry]:
    """Output entries of a nested graph (a node's ``subgraphs`` item)."""
    return _build(graph, MXNET_VERSION)


def _build(graph: dict, version: int) -> list[Entry]:
    raw_nodes = graph["nodes"]
    nodes: list[Node] = []
    for raw in raw_nodes:
        if not isinstance(raw, dict) or "op" not in raw or "name" not in raw:
            raise MXNetError(f"symbol JSON: malformed node {raw!r}")
        attrs = _node_attrs(raw, version)
        if raw["op"] == "null":
            node = Node(None, raw["name"], attrs)
        else:
            op = _reg.find(raw["op"])
            if op is None:
                raise MXNetError(f"symbol JSON: operator '{raw['op']}' (node "
                                 f"{raw['name']!r}) is not supported by mxtorch")
            node = Node(op, raw["name"], _upgrade_op_attrs(op, attrs, version),
                        subgraphs=raw.get("subgraphs"))
        inputs = []
        for e in raw.get("inputs", []):
            nid, idx = _entry(e, len(raw_nodes))
            if nid >= len(nodes):
                raise MXNetError(f"symbol JSON: node {raw['name']!r} uses node {nid} "
                                 "before it is defined")
            inputs.append(Entry(nodes[nid], idx))
        node.inputs = inputs
        if node.op is not None:
            try:
                node.parsed  # noqa: B018 - validate attributes now, naming the node
            except MXNetError as err:
                raise MXNetError(f"symbol JSON: node {node.name!r}: {err}") from None
            if version < 900:
                _add_missing_inputs(node)
        nodes.append(node)
    heads = []
    for h in graph["heads"]:
        nid, idx = _entry(h, len(nodes))
        heads.append(Entry(nodes[nid], idx))
    return heads


def _upgrade_op_attrs(op, attrs: dict[str, str], version: int) -> dict[str, str]:
    # MXNet < 0.9.5: argmax/argmin with axis=-1 meant "no axis".
    if version < 905 and op.name in ("argmax", "argmin") and attrs.get("axis") == "-1":
        attrs = {k: v for k, v in attrs.items() if k != "axis"}
    return attrs


def _add_missing_inputs(node: Node) -> None:
    """MXNet < 0.9: append trailing inputs (BatchNorm's moving stats) as new variables."""
    names = node.input_names()
    from ..symbol.register import _AUX_INIT
    for name in names[len(node.inputs):]:
        vattrs = node.op_attrs()
        if name in node.op.aux and name in _AUX_INIT:
            vattrs["__init__"] = _AUX_INIT[name]
        node.inputs.append(Entry(Node(None, f"{node.name}_{name}", vattrs), 0))

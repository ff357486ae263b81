"""MXNet symbol JSON (MXNET_FORMATS.md section 2): writing 1.9.1's layout, reading every
layout 1.9.1 reads (including the 0.8 ``param``/``attr`` form, upgraded as MXNet does)."""
from __future__ import annotations

import json
import re
import reprlib
from typing import Any

from ..base import MXNetError
from ..ops import registry as _reg
from ..ops.params import Shape
from ..graph.ir import Entry, Node, topo_order
from .json_text import read_json

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
    """dmlc's JSONWriter layout: 2-space indent, ", " + newline separators.

    Iterative (a work stack of text and ``(value, indent)`` items), so graphs nested
    deeper than Python's recursion limit (``_foreach`` in ``_foreach``) are written too.
    """
    out: list[str] = []
    stack: list = [(v, indent)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        parts = _layout(*item)
        if parts is None:
            out.append(json.dumps(item[0], ensure_ascii=False))
        else:
            stack.extend(reversed(parts))
    return "".join(out)


def _layout(v: Any, indent: int) -> list | None:
    """One container as text pieces and ``(child, indent)`` items (None: a scalar)."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(v, dict):
        if not v:
            return ["{}"]
        if len(v) == 1:
            (k, x), = v.items()
            return ["{" + json.dumps(k, ensure_ascii=False) + ": ", (x, indent), "}"]
        parts: list = ["{\n"]
        for i, (k, x) in enumerate(v.items()):
            sep = ", \n" if i else ""
            parts += [sep + inner + json.dumps(k, ensure_ascii=False) + ": ", (x, indent + 2)]
        return parts + ["\n" + pad + "}"]
    if isinstance(v, list):
        if not v:
            return ["[]"]
        if _is_short(v):
            parts = ["["]
            for i, x in enumerate(v):
                parts += [", "] * bool(i) + [(x, indent)]
            return parts + ["]"]
        parts = ["[\n"]
        for i, x in enumerate(v):
            parts += [(", \n" if i else "") + inner, (x, indent + 2)]
        return parts + ["\n" + pad + "]"]
    return None


# ---------------------------------------------------------------------- reading
# MXNet: the fields dmlc's JSON reader knows for a graph and for a node; any other key
# ("aVtrs" for "attrs") is refused, a missing required one too.
_GRAPH_FIELDS = ("arg_nodes", "attrs", "heads", "node_row_ptr", "nodes")
_GRAPH_REQUIRED = ("nodes", "arg_nodes", "heads")
_NODE_FIELDS = ("attr", "attrs", "backward_source_id", "control_deps", "inputs", "name", "op",
                "param", "subgraphs")
_NODE_REQUIRED = ("op", "name", "inputs")
_UINT32 = 2 ** 32
_VAR_SHAPE = Shape("__shape__")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _short(value: Any) -> str:
    """A bounded repr (a hostile value may be huge or deeply nested)."""
    return reprlib.repr(value)


def _check_fields(raw: Any, fields: tuple, required: tuple, where: str) -> None:
    if not isinstance(raw, dict):
        raise MXNetError(f"{where}: expected a JSON object, got {_short(raw)}")
    for key in raw:
        if key not in fields:
            raise MXNetError(f"{where}: Unknown field {key}, candidates are: "
                             f"{', '.join(fields)}")
    for key in required:
        if key not in raw:
            raise MXNetError(f'{where}: Missing field "{key}"')


def _is_uint(value: Any) -> bool:
    return type(value) is int and 0 <= value < _UINT32


def _int_list(raw: Any, where: str, bound: int | None = None) -> list[int]:
    if not isinstance(raw, list) or not all(_is_uint(v) for v in raw):
        raise MXNetError(f"{where}: expected a list of non-negative integers, got "
                         f"{_short(raw)}")
    if bound is not None:
        for v in raw:
            if v >= bound:
                raise MXNetError(f"{where}: node index {v} is past the {bound} nodes")
    return raw


def _entry(raw: Any, nodes: list[Node], where: str) -> Entry:
    """``[node_id, index(, version)]`` as an Entry of an already-built node."""
    if not isinstance(raw, list) or len(raw) not in (2, 3) or \
            not all(type(v) is int for v in raw):
        raise MXNetError(f"{where}: malformed entry {_short(raw)} (expected [node_id, "
                         "output_index, version])")
    nid, idx = raw[0], raw[1]
    if not 0 <= nid < len(nodes):
        raise MXNetError(f"{where}: entry {raw} names node {nid}, which is not among the "
                         f"{len(nodes)} nodes defined before it")
    node = nodes[nid]
    total = 1 if node.op is None else node.op.total_outputs(node.parsed)
    if not 0 <= idx < total:
        raise MXNetError(f"{where}: entry {raw} asks for output {idx} of node "
                         f"'{node.name}', which has {total} output(s)")
    return Entry(node, idx)


def _version(graph: dict, where: str) -> int:
    attrs = graph.get("attrs", {})
    if not isinstance(attrs, dict):
        raise MXNetError(f"{where}: graph 'attrs' must be a JSON object, got {_short(attrs)}")
    if "mxnet_version" not in attrs:
        return 800
    ver = attrs["mxnet_version"]
    if not (isinstance(ver, list) and len(ver) == 2 and type(ver[1]) is int):
        raise MXNetError(f"{where}: 'mxnet_version' must be [\"int\", <version>], got "
                         f"{_short(ver)}")
    return ver[1]


def _node_attrs(raw: dict, version: int, where: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for key in ("param", "attr", "attrs"):
        part = raw.get(key, {})
        if not isinstance(part, dict):
            raise MXNetError(f"{where}: '{key}' must be a JSON object, got {_short(part)}")
        for k, v in part.items():
            if not isinstance(v, str):
                raise MXNetError(f"{where}: attribute '{k}' must be a string, got "
                                 f"{_short(v)}")
        attrs.update(part)
    if version < MXNET_VERSION:
        for k in _HIDDEN:
            if k in attrs:
                attrs[f"__{k}__"] = attrs.pop(k)
    return attrs


def load_graph(text: str | bytes, fname: str | None = None) -> list[Entry]:
    """Parse symbol JSON into output entries, upgrading legacy layouts.

    Every problem (bytes that are not UTF-8, malformed JSON, unknown or missing fields,
    entries naming absent nodes or outputs, attribute values MXNet refuses) raises
    :class:`MXNetError` naming ``fname`` (when given) and the node. Nested graphs
    (``subgraphs``) are checked too, with a work list rather than recursion.
    """
    what = f"symbol JSON {fname!r}" if fname else "symbol JSON"
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise MXNetError(f"{what} is not UTF-8 text: {err.reason} at byte "
                             f"{err.start}") from None
    elif _SURROGATE.search(text):
        raise MXNetError(f"{what} is not UTF-8 text: it holds a lone surrogate")
    graph = read_json(text, what)
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
    _check_fields(graph, _GRAPH_FIELDS, _GRAPH_REQUIRED, where)
    if version is None:
        version = _version(graph, where)
    else:
        _version(graph, where)
    raw_nodes = graph["nodes"]
    if not isinstance(raw_nodes, list):
        raise MXNetError(f"{where}: 'nodes' must be a list, got {_short(raw_nodes)}")
    nodes: list[Node] = []
    nested: list = []
    for i, raw in enumerate(raw_nodes):
        node = _build_node(raw, nodes, version, f"{where}: node {i}")
        for k, sub in enumerate(node.subgraphs):
            nested.append((sub, f"{where}: subgraph {k} of node '{node.name}'"))
        nodes.append(node)
    _int_list(graph["arg_nodes"], f"{where}: arg_nodes", len(nodes))
    if "node_row_ptr" in graph:
        _int_list(graph["node_row_ptr"], f"{where}: node_row_ptr")
    heads = graph["heads"]
    if not isinstance(heads, list):
        raise MXNetError(f"{where}: 'heads' must be a list, got {_short(heads)}")
    return [_entry(h, nodes, f"{where}: heads") for h in heads], nested


def _build_node(raw: Any, nodes: list[Node], version: int, where: str) -> Node:
    """One node of the list, its inputs among the nodes before it."""
    _check_fields(raw, _NODE_FIELDS, _NODE_REQUIRED, where)
    op_name, name = raw["op"], raw["name"]
    if not isinstance(op_name, str) or not isinstance(name, str):
        raise MXNetError(f"{where}: 'op' and 'name' must be strings")
    where = f"{where} ('{name}')"
    attrs = _node_attrs(raw, version, where)
    raw_inputs = raw["inputs"]
    if not isinstance(raw_inputs, list):
        raise MXNetError(f"{where}: 'inputs' must be a list, got {_short(raw_inputs)}")
    subgraphs = raw.get("subgraphs", [])
    if not isinstance(subgraphs, list):
        raise MXNetError(f"{where}: 'subgraphs' must be a list, got {_short(subgraphs)}")
    _int_list(raw.get("control_deps", []), f"{where}: control_deps", len(nodes))
    if type(raw.get("backward_source_id", 0)) is not int:
        raise MXNetError(f"{where}: 'backward_source_id' must be an integer")
    inputs = [_entry(e, nodes, f"{where}: inputs") for e in raw_inputs]
    if op_name == "null":
        # MXNet: a variable's inputs are read and ignored
        if "__shape__" in attrs:
            _check_var_shape(attrs["__shape__"], where)
        return Node(None, name, attrs)
    op = _reg.find(op_name)
    if op is None:
        raise MXNetError(f"{where}: operator '{op_name}' is not supported by mxtorch")
    node = Node(op, name, _upgrade_op_attrs(op, attrs, version), inputs, subgraphs)
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
    from ..symbol.register import _AUX_INIT
    for name in names[len(node.inputs):]:
        vattrs = node.op_attrs()
        if name in node.op.aux and name in _AUX_INIT:
            vattrs["__init__"] = _AUX_INIT[name]
        node.inputs.append(Entry(Node(None, f"{node.name}_{name}", vattrs), 0))

"""MXNet symbol JSON (MXNET_FORMATS.md section 2) as plain data: text in 1.9.1's layout
from a graph dict, and the checked, normalized dicts of every layout 1.9.1 reads (including
the 0.8 ``param``/``attr`` form, upgraded as MXNet does). Building nodes from them is
``graph/ir_json.py``'s part."""
from __future__ import annotations

import json
import re
import reprlib
from typing import Any

from ..base import MXNetError
from .json_text import read_json

__all__ = ["write_text", "read_text", "read_graph", "read_node", "read_heads", "MXNET_VERSION"]

MXNET_VERSION = 10901
_HIDDEN = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")


# ---------------------------------------------------------------------- writing
# A piece of written text, or a ``(value, indent)`` still to lay out.
_Piece = str | tuple[Any, int]


def write_text(graph: dict[str, Any], extra_attrs: dict[str, Any] | None = None) -> str:
    """A graph dict as MXNet's JSON text (MXNet's indentation and spacing)."""
    if extra_attrs:
        # MXNet: graph attributes are a std::map, written in sorted key order
        graph = {**graph, "attrs": dict(sorted({**graph.get("attrs", {}),
                                                **extra_attrs}.items()))}
    return _write(graph, 0)


def _is_short(v: list[Any]) -> bool:
    return len(v) <= 10 and all(not isinstance(x, (dict,)) for x in v) and \
        all(not isinstance(x, list) or all(not isinstance(y, (list, dict)) for y in x)
            for x in v)


def _write(v: Any, indent: int) -> str:
    """dmlc's JSONWriter layout: 2-space indent, ", " + newline separators.

    Iterative (a work stack of text and ``(value, indent)`` items), so graphs nested
    deeper than Python's recursion limit (``_foreach`` in ``_foreach``) are written too.
    """
    out: list[str] = []
    stack: list[_Piece] = [(v, indent)]
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


def _layout(v: Any, indent: int) -> list[_Piece] | None:
    """One container as text pieces and ``(child, indent)`` items (None: a scalar)."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(v, dict):
        if not v:
            return ["{}"]
        if len(v) == 1:
            (k, x), = v.items()
            return ["{" + json.dumps(k, ensure_ascii=False) + ": ", (x, indent), "}"]
        parts: list[_Piece] = ["{\n"]
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
_SURROGATE = re.compile("[\ud800-\udfff]")


def _short(value: Any) -> str:
    """A bounded repr (a hostile value may be huge or deeply nested)."""
    return reprlib.repr(value)


def _check_fields(raw: Any, fields: tuple[str, ...], required: tuple[str, ...],
                  where: str) -> None:
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


def _entry(raw: Any, num_nodes: int, where: str) -> list[int]:
    """``[node_id, index(, version)]``, checked: the node is one defined before it."""
    if not isinstance(raw, list) or len(raw) not in (2, 3) or \
            not all(type(v) is int for v in raw):
        raise MXNetError(f"{where}: malformed entry {_short(raw)} (expected [node_id, "
                         "output_index, version])")
    nid = raw[0]
    if not 0 <= nid < num_nodes:
        raise MXNetError(f"{where}: entry {raw} names node {nid}, which is not among the "
                         f"{num_nodes} nodes defined before it")
    return raw


def _version(graph: dict[str, Any], where: str) -> int:
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


def _node_attrs(raw: dict[str, Any], version: int, where: str) -> dict[str, str]:
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


def read_text(text: str | bytes, fname: str | None = None) -> tuple[Any, str]:
    """The JSON value of symbol JSON text, and how errors name it (``fname`` when given).

    Bytes that are not UTF-8 and malformed JSON raise :class:`MXNetError`.
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
    return read_json(text, what), what


def read_graph(graph: Any, version: int | None, where: str) -> tuple[list[Any], int]:
    """A graph's raw node list and its version (``version`` when given: a nested graph)."""
    _check_fields(graph, _GRAPH_FIELDS, _GRAPH_REQUIRED, where)
    found = _version(graph, where)
    raw_nodes = graph["nodes"]
    if not isinstance(raw_nodes, list):
        raise MXNetError(f"{where}: 'nodes' must be a list, got {_short(raw_nodes)}")
    return raw_nodes, found if version is None else version


def read_node(raw: Any, num_nodes: int, version: int, where: str) -> dict[str, Any]:
    """One raw node, checked, as ``{"op", "name", "attrs", "inputs", "subgraphs", "where"}``
    with ``inputs`` as ``[node_id, index(, version)]`` among the ``num_nodes`` before it
    and the legacy attribute keys merged into ``attrs``."""
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
    _int_list(raw.get("control_deps", []), f"{where}: control_deps", num_nodes)
    if type(raw.get("backward_source_id", 0)) is not int:
        raise MXNetError(f"{where}: 'backward_source_id' must be an integer")
    inputs = [_entry(e, num_nodes, f"{where}: inputs") for e in raw_inputs]
    return {"op": op_name, "name": name, "attrs": attrs, "inputs": inputs,
            "subgraphs": subgraphs, "where": where}


def read_heads(graph: dict[str, Any], num_nodes: int, where: str) -> list[list[int]]:
    """The graph's ``heads``, checked as ``[node_id, index(, version)]`` (and ``arg_nodes``)."""
    _int_list(graph["arg_nodes"], f"{where}: arg_nodes", num_nodes)
    if "node_row_ptr" in graph:
        _int_list(graph["node_row_ptr"], f"{where}: node_row_ptr")
    heads = graph["heads"]
    if not isinstance(heads, list):
        raise MXNetError(f"{where}: 'heads' must be a list, got {_short(heads)}")
    return [_entry(h, num_nodes, f"{where}: heads") for h in heads]

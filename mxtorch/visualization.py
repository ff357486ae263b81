"""``mx.viz``: print_summary (MXNet's table) and plot_network (a graphviz Digraph)."""
from __future__ import annotations

import ast
import json
import warnings

from .symbol import Symbol

__all__ = ["print_summary", "plot_network"]


def _str2tuple(text: str) -> tuple:
    val = ast.literal_eval(text)
    return (val,) if isinstance(val, int) else tuple(val)


def _print_row(fields, positions) -> None:
    line = ""
    for field, pos in zip(fields, positions):
        line += str(field)
        line = line[:pos]
        line += " " * (pos - len(line))
    print(line)


def _layer_params(node: dict, pre_filter: int, shape_dict: dict | None) -> int:
    op, attrs = node["op"], node.get("attrs", {})
    if op == "Convolution":
        groups = int(attrs.get("num_group", "1"))
        n = pre_filter * int(attrs["num_filter"]) // groups
        for k in _str2tuple(attrs["kernel"]):
            n *= int(k)
        if attrs.get("no_bias") != "True":
            n += int(attrs["num_filter"])
        return n
    if op == "FullyConnected":
        extra = 0 if attrs.get("no_bias") == "True" else 1
        return (pre_filter + extra) * int(attrs["num_hidden"])
    if op == "BatchNorm" and shape_dict is not None:
        return int(shape_dict[node["name"] + "_output"][1]) * 2
    if op == "Embedding":
        return int(attrs["input_dim"]) * int(attrs["output_dim"])
    return 0


def print_summary(symbol, shape=None, line_length: int = 120,
                  positions=(.44, .64, .74, 1.)) -> None:
    """Print a layer table (name, output shape, parameter count, previous layer)."""
    shape_dict = None
    if shape is not None:
        internals = symbol.get_internals()
        _, out_shapes, _ = internals.infer_shape(**shape)
        if out_shapes is None:
            raise ValueError("Input shape is incomplete")
        shape_dict = dict(zip(internals.list_outputs(), out_shapes))
    conf = json.loads(symbol.tojson())
    nodes = conf["nodes"]
    # MXNet: "heads" is the set of the FIRST head entry's numbers [node, index, version].
    heads = set(conf["heads"][0])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    print("_" * line_length)
    _print_row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"], positions)
    print("=" * line_length)
    total = 0
    for i, node in enumerate(nodes):
        op = node["op"]
        if op == "null" and i > 0:
            continue
        out_shape = []
        if (op != "null" or i in heads) and shape_dict is not None:
            key = node["name"] + "_output" if op != "null" else node["name"]
            out_shape = list(shape_dict.get(key, ())[1:])
        pre_nodes, pre_filter = [], 0
        if op != "null":
            for item in node["inputs"]:
                src = nodes[item[0]]
                if src["op"] != "null" or item[0] in heads:
                    pre_nodes.append(src["name"])
                    if shape_dict is not None:
                        key = src["name"] + "_output" if src["op"] != "null" else src["name"]
                        if key in shape_dict:
                            pre_filter += int(shape_dict[key][1:][0])
        n = _layer_params(node, pre_filter, shape_dict)
        _print_row([f"{node['name']}({op})", "x".join(str(x) for x in out_shape), n,
                    pre_nodes[0] if pre_nodes else ""], positions)
        for extra in pre_nodes[1:]:
            _print_row(["", "", "", extra], positions)
        total += n
        print(("=" if i == len(nodes) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)


_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69",
           "#fccde5")
# MXNet's fill colour (index into _COLORS) by operator; every other operator gets 7
_OP_COLOR = {"Convolution": 1, "FullyConnected": 1, "BatchNorm": 3, "Activation": 2,
             "LeakyReLU": 2, "Pooling": 4, "Concat": 5, "Flatten": 5, "Reshape": 5,
             "Softmax": 6}
_WEIGHT_LIKE = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean",
                "_running_var", "_running_mean")


def _x_joined(attrs: dict, key: str, default: str) -> str:
    """A tuple attribute as MXNet's label writes it ('3x3'), or ``default``."""
    return "x".join(str(v) for v in _str2tuple(attrs[key])) if key in attrs else default


def _node_label(node: dict) -> str:
    """The text of an operator's box."""
    op, attrs = node["op"], node.get("attrs", {})
    if op == "Convolution":
        return "Convolution\n%s/%s, %s" % (_x_joined(attrs, "kernel", ""),
                                            _x_joined(attrs, "stride", "1"),
                                            attrs["num_filter"])
    if op == "FullyConnected":
        return "FullyConnected\n%s" % attrs["num_hidden"]
    if op == "Activation":
        return "Activation\n%s" % attrs["act_type"]
    if op == "LeakyReLU":
        return "LeakyReLU\n%s" % attrs.get("act_type", "Leaky")
    if op == "Pooling":
        return "Pooling\n%s, %s/%s" % (attrs["pool_type"], _x_joined(attrs, "kernel", "[]"),
                                       _x_joined(attrs, "stride", "1"))
    if op == "Custom":
        return attrs["op_type"]
    return node["name"]


def _warn_repeated_names(nodes: list) -> None:
    """MXNet warns when two nodes share a name: graphviz would draw a cycle."""
    seen: set = set()
    repeated = {n["name"] for n in nodes if n["name"] in seen or seen.add(n["name"])}
    if repeated:
        warnings.warn("There are multiple variables with the same name in your graph, "
                      "this may result in cyclic graph. Repeated names: "
                      + ",".join(repeated), RuntimeWarning)


def _edge_label(node: dict, shape_dict: dict | None, type_dict: dict | None) -> str:
    """'CxHxW' (without the batch axis) and/or '(dtype)' of the entry ``node`` outputs;
    for a multi-output operator, of its last output, as MXNet labels it."""
    key = node["name"]
    if node["op"] != "null":
        key += "_output"
        if "num_outputs" in node.get("attrs", {}):
            key += str(int(node["attrs"]["num_outputs"]) - 1)
    label = ""
    if shape_dict is not None:
        label = "x".join(str(x) for x in shape_dict[key][1:])
    if type_dict is not None:
        label += "(" + type_dict[key].__name__ + ")"
    return label


def plot_network(symbol, title: str = "plot", save_format: str = "pdf", shape=None,
                 dtype=None, node_attrs={}, hide_weights: bool = True):  # noqa: B006
    """Creates a visualization (Graphviz digraph object) of the given computation graph.

    Graphviz (the ``graphviz`` Python package) must be installed.

    Parameters
    ----------
    symbol : Symbol
        The part of the computation graph needed to compute ``symbol`` is drawn.
    title : str, optional
        Title (graph name) of the generated visualization.
    save_format : str, optional
        Output format of ``render``.
    shape : dict of str to tuple, optional
        Input shapes; edges are then labelled with the tensor shapes (batch axis left out).
    dtype : dict of str to numpy type, optional
        Input types; edges are then labelled with the tensor types.
    node_attrs : dict, optional
        Graphviz node attributes merged into the defaults, e.g.
        ``{"shape": "oval", "fixedsize": "false"}``.
    hide_weights : bool, optional
        Hide inputs named like weights (``*_weight``, ``*_bias``, ``*_gamma``, ...).

    Returns
    -------
    graphviz.Digraph
        The digraph; ``.view()`` or ``.render()`` draw it.
    """
    try:
        from graphviz import Digraph
    except ImportError:
        raise ImportError("Draw network requires graphviz library") from None
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be a Symbol")
    internals = symbol.get_internals()
    shape_dict = type_dict = None
    if shape is not None:
        _, out_shapes, _ = internals.infer_shape(**shape)
        if out_shapes is None:
            raise ValueError("Input shape is incomplete")
        shape_dict = dict(zip(internals.list_outputs(), out_shapes))
    if dtype is not None:
        _, out_types, _ = internals.infer_type(**dtype)
        if out_types is None:
            raise ValueError("Input type is incomplete")
        type_dict = dict(zip(internals.list_outputs(), out_types))
    nodes = json.loads(symbol.tojson())["nodes"]
    _warn_repeated_names(nodes)
    base = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
            "style": "filled"}
    base.update(node_attrs)
    dot = Digraph(name=title, format=save_format)
    hidden = set()
    for node in nodes:
        attr = dict(base)
        if node["op"] == "null":
            if node["name"].endswith(_WEIGHT_LIKE):
                # MXNet: with hide_weights=False the node is not drawn either, but its
                # edges are, so graphviz shows it as a plain oval
                if hide_weights:
                    hidden.add(node["name"])
                continue
            attr.update(shape="oval", fillcolor=_COLORS[0])
        else:
            attr["fillcolor"] = _COLORS[_OP_COLOR.get(node["op"], 7)]
        dot.node(name=node["name"], label=_node_label(node) if node["op"] != "null"
                 else node["name"], **attr)
    for node in nodes:
        if node["op"] == "null":
            continue
        inputs = node["inputs"][:1] if node["op"] == "_contrib_BilinearResize2D" \
            else node["inputs"]
        for item in inputs:
            src = nodes[item[0]]
            if src["name"] in hidden:
                continue
            dot.edge(tail_name=node["name"], head_name=src["name"], dir="back",
                     arrowtail="open", label=_edge_label(src, shape_dict, type_dict))
    return dot

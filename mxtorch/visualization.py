"""``mx.viz``: print_summary (MXNet's table) and plot_network (graphviz source)."""
from __future__ import annotations

import ast
import json

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
_OP_COLOR = {"FullyConnected": 1, "Convolution": 1, "Deconvolution": 1, "BatchNorm": 3,
             "Activation": 2, "LeakyReLU": 2, "Pooling": 4, "Concat": 5, "Flatten": 5,
             "Reshape": 5, "Softmax": 7, "SoftmaxOutput": 7}


class _Digraph:
    """Minimal stand-in for ``graphviz.Digraph`` when the graphviz package is absent."""

    def __init__(self, name: str):
        self.name = name
        self.body: list[str] = []

    def node(self, name: str, label: str, **attrs) -> None:
        items = " ".join(f"{k}={_quote(v)}" for k, v in sorted(attrs.items()))
        self.body.append(f"\t{name} [label={_quote(label)} {items}]")

    def edge(self, tail: str, head: str, **attrs) -> None:
        items = " ".join(f"{k}={_quote(v)}" for k, v in sorted(attrs.items()))
        self.body.append(f"\t{tail} -> {head} [{items}]")

    @property
    def source(self) -> str:
        return "digraph " + self.name + " {\n" + "\n".join(self.body) + "\n}"

    def render(self, *args, **kwargs):
        raise ImportError("Rendering needs the graphviz package: pip install graphviz")


def _quote(value) -> str:
    text = str(value)
    if text.replace("_", "").isalnum() and not text[:1].isdigit():
        return text
    return '"' + text.replace('"', '\\"') + '"'


def _label(node: dict) -> tuple[str, str]:
    op, attrs, name = node["op"], node.get("attrs", {}), node["name"]
    if op == "null":
        return name, _COLORS[0]
    color = _COLORS[_OP_COLOR.get(op, 6)]
    if op == "FullyConnected":
        return f"FullyConnected\n{attrs.get('num_hidden')}", color
    if op == "Convolution":
        kernel = "x".join(str(k) for k in _str2tuple(attrs["kernel"]))
        return f"Convolution\n{kernel}/{attrs.get('stride', '1')}, {attrs['num_filter']}", color
    if op in ("Activation", "LeakyReLU"):
        return f"{op}\n{attrs.get('act_type', '')}", color
    if op == "Pooling":
        return f"Pooling\n{attrs.get('pool_type', 'max')}", color
    return name, color


def plot_network(symbol, title: str = "plot", save_format: str = "pdf", shape=None,
                 dtype=None, node_attrs=None, hide_weights: bool = True):
    """Build a graphviz digraph of the network (a ``graphviz.Digraph`` when installed)."""
    try:
        from graphviz import Digraph
        dot = Digraph(name=title, format=save_format)
    except ImportError:
        dot = _Digraph(title)
    shape_dict = None
    if shape is not None:
        internals = symbol.get_internals()
        _, out_shapes, _ = internals.infer_shape(**shape)
        shape_dict = dict(zip(internals.list_outputs(), out_shapes or []))
    base = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
            "style": "filled"}
    base.update(node_attrs or {})
    nodes = json.loads(symbol.tojson())["nodes"]
    hidden = set()
    for i, node in enumerate(nodes):
        if node["op"] == "null" and hide_weights and i > 0 and \
                node["name"].endswith(("_weight", "_bias", "_beta", "_gamma", "_moving_var",
                                       "_moving_mean", "_running_var", "_running_mean")):
            hidden.add(i)
            continue
        label, color = _label(node)
        attrs = dict(base, fillcolor=color)
        if node["op"] == "null":
            attrs["shape"] = "oval"
        dot.node(name=node["name"], label=label, **attrs)
    for i, node in enumerate(nodes):
        if node["op"] == "null":
            continue
        for item in node["inputs"]:
            if item[0] in hidden:
                continue
            src = nodes[item[0]]
            label = ""
            if shape_dict is not None:
                key = src["name"] if src["op"] == "null" else src["name"] + "_output"
                if key in shape_dict:
                    label = "x".join(str(x) for x in shape_dict[key][1:])
            dot.edge(node["name"], src["name"], label=label, arrowtail="open", dir="back")
    return dot

"""Symbol JSON is checked as MXNet 1.9.1 checks it, and attribute values against MXNet's
parameter bounds; a seeded fuzz run shows that only MXNetError escapes load, infer_shape
and bind. Expected messages were taken from real MXNet 1.9.1 (``mx.sym.load_json``)."""
import copy
import glob
import json
import os
import random
import re
import time

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError

from helpers import FIXTURES

BASE = {"nodes": [{"op": "null", "name": "x", "inputs": []},
                  {"op": "null", "name": "w", "inputs": []},
                  {"op": "null", "name": "b", "inputs": []},
                  {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "4"},
                   "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}],
        "arg_nodes": [0, 1, 2], "node_row_ptr": [0, 1, 2, 3, 4], "heads": [[3, 0, 0]],
        "attrs": {"mxnet_version": ["int", 10901]}}


def _mutated(change):
    g = copy.deepcopy(BASE)
    change(g)
    return json.dumps(g)


def _rename(node, old, new):
    return lambda g: g["nodes"][node].__setitem__(new, g["nodes"][node].pop(old))


def _set(path, value):
    def change(g):
        obj = g
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value
    return change


REFUSED = [
    # (what changed, MXNet refuses it: a piece of our message)
    (_rename(3, "attrs", "aVtrs"), "Unknown field aVtrs"),
    (_rename(3, "inputs", "inputz"), "Unknown field inputz"),
    (_set(["nodes", 3, "parm"], {"num_hidden": "4"}), "Unknown field parm"),
    (lambda g: g["nodes"][0].pop("inputs"), 'Missing field "inputs"'),
    (lambda g: g.pop("arg_nodes"), 'Missing field "arg_nodes"'),
    (_set(["foo"], 1), "Unknown field foo"),
    (_set(["nodes", 3, "inputs"], -1), "'inputs' must be a list, got -1"),
    (_set(["nodes", 3, "inputs", 1], [1, -1, 0]), "asks for output -1 of node 'w'"),
    (_set(["nodes", 3, "inputs", 1], [1, 3, 0]), "asks for output 3 of node 'w'"),
    (_set(["nodes", 3, "inputs", 1], [9, 0, 0]), "names node 9"),
    (_set(["nodes", 3, "inputs", 1], [1]), "malformed entry [1]"),
    (_set(["nodes", 3, "inputs", 1], [1.5, 0, 0]), "malformed entry [1.5, 0, 0]"),
    (_set(["heads"], [[3, 1, 0]]), "asks for output 1 of node 'fc'"),
    (_set(["heads"], [[3, -1, 0]]), "asks for output -1 of node 'fc'"),
    (_set(["heads"], [[7, 0, 0]]), "names node 7"),
    (_set(["arg_nodes"], [0, 1, 99]), "node index 99"),
    (_set(["attrs"], ["mxnet_version", 10901]), "graph 'attrs' must be a JSON object"),
    (_set(["attrs", "mxnet_version"], 10901), "'mxnet_version' must be"),
    (_set(["nodes", 3, "attrs", "num_hidden"], 4), "attribute 'num_hidden' must be a string"),
    (_set(["nodes", 3, "attrs", "num_hidden"], "-5"),
     "value -5 for Parameter num_hidden should be greater equal to 1"),
    (_set(["nodes", 3, "attrs", "num_hidden"], "0"),
     "value 0 for Parameter num_hidden should be greater equal to 1"),
    (_set(["nodes", 3, "attrs", "num_hidden"], "100000000000"),
     "Invalid Parameter format for num_hidden expect int but value='100000000000'"),
    (_set(["nodes", 3, "attrs", "num_hidden"], "1e11"),
     "Invalid Parameter format for num_hidden expect int but value='1e11'"),
    (_set(["nodes", 3, "attrs", "num_hidden"], "True"),
     "Invalid Parameter format for num_hidden expect int but value='True'"),
    (_set(["nodes", 3, "attrs", "num_hidden"], "4.0"),
     "Invalid Parameter format for num_hidden expect int but value='4.0'"),
    (_set(["nodes", 3, "attrs", "no_bias"], "yes"),
     "Invalid Parameter format for no_bias expect boolean but value='yes'"),
    # MXNet refuses these at shape inference; here at load, naming the inputs
    (lambda g: g["nodes"][3]["inputs"].pop(), "takes 3 input(s) [data, weight, bias]"),
    (_set(["nodes", 3, "attrs", "no_bias"], "1"), "takes 2 input(s) [data, weight]"),
]


@pytest.mark.parametrize("change,message", REFUSED)
def test_refused_as_mxnet_refuses(change, message):
    with pytest.raises(MXNetError, match=re.escape(message)):
        mx.sym.load_json(_mutated(change))


ACCEPTED = [
    # MXNet 1.9.1 loads each of these; the FullyConnected output is (2, 4) (or (2, 5))
    (lambda g: None, (2, 4)),
    (_set(["nodes", 3, "inputs", 1], [1, 0]), (2, 4)),              # two-element entry
    (_set(["nodes", 3, "inputs", 1], [1, 0, 7]), (2, 4)),           # any version
    (lambda g: g.pop("node_row_ptr"), (2, 4)),
    (_set(["attrs", "foo"], ["str", "bar"]), (2, 4)),
    (_set(["nodes", 3, "attrs", "num_hidden"], " 4 "), (2, 4)),
    (_set(["nodes", 1, "inputs"], [[0, 0, 0]]), (2, 4)),            # a variable's inputs
    (_set(["nodes", 3, "control_deps"], [0]), (2, 4)),
]


@pytest.mark.parametrize("change,shape", ACCEPTED)
def test_accepted_as_mxnet_accepts(change, shape):
    sym = mx.sym.load_json(_mutated(change))
    assert sym.infer_shape(x=(2, 3))[1] == [shape]


def test_text_after_the_graph_and_duplicate_keys_read_as_mxnet_reads_them():
    text = json.dumps(BASE)
    assert mx.sym.load_json(text + " x").infer_shape(x=(2, 3))[1] == [(2, 4)]
    dup = text.replace('"num_hidden": "4"', '"num_hidden": "4", "num_hidden": "5"')
    assert mx.sym.load_json(dup).infer_shape(x=(2, 3))[1] == [(2, 5)]


@pytest.mark.parametrize("text,message", [
    (json.dumps(BASE).replace('"arg_nodes": [0, 1, 2]', '"arg_nodes": [0, 1, NaN]'),
     "NaN is not a JSON number"),
    (json.dumps(BASE).replace("[[3, 0, 0]]", "[[3, 0, 1e400]]"), "1e400 is out of range"),
    (json.dumps(BASE).replace("[[3, 0, 0]]", "[[3, 0, " + "9" * 5000 + "]]"),
     "5000 digits is out of range"),
    (json.dumps(BASE)[:-1] + ', "zz": ' + "[" * 3000 + "]" * 3000 + "}", "Unknown field zz"),
    (json.dumps(BASE).replace('"num_hidden": "4"', '"qq": ' + "[" * 3000 + "]" * 3000),
     "attribute 'qq' must be a string"),
    (json.dumps(BASE).replace('"fc"', '"f\udcffc"'), "lone surrogate"),
    ("[" * 100000, "malformed"),
    ("", "malformed"),
])
def test_hostile_text_raises_mxnet_error(text, message):
    with pytest.raises(MXNetError, match=message):
        mx.sym.load_json(text)


def test_load_names_the_file_and_refuses_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / "bad-symbol.json"
    path.write_bytes(json.dumps(BASE).replace('"fc"', '"f\xffc"').encode("latin-1"))
    with pytest.raises(MXNetError, match=r"bad-symbol\.json.*not UTF-8 text"):
        mx.sym.load(str(path))
    path.write_text(_mutated(_rename(3, "attrs", "aVtrs")))
    with pytest.raises(MXNetError, match=r"bad-symbol\.json.*Unknown field aVtrs"):
        mx.sym.load(str(path))


def test_mutated_model_node_is_refused_not_run_with_defaults():
    # one byte of MXNet's own cnn_bn model: "attrs" -> "aVtrs" on a BatchNorm node
    with open(os.path.join(FIXTURES, "models", "cnn_bn_module", "cnn_bn-symbol.json")) as f:
        text = f.read()
    at = text.index('"attrs"', text.index('"op": "BatchNorm"'))
    with pytest.raises(MXNetError, match=r"node \d+: Unknown field aVtrs"):
        mx.sym.load_json(text[:at] + '"aVtrs"' + text[at + 7:])


def _nested_foreach(levels):
    """Symbol JSON of ``levels`` _foreach nodes, each one's body the next (x + h inside)."""
    body = {"nodes": [{"op": "null", "name": "x", "inputs": []},
                      {"op": "null", "name": "h", "inputs": []},
                      {"op": "elemwise_add", "name": "add", "inputs": [[0, 0, 0], [1, 0, 0]]}],
            "arg_nodes": [0, 1], "heads": [[2, 0, 0], [2, 0, 0]]}
    text = json.dumps(body)
    for level in range(levels):   # nest as text: json.dumps itself would recurse too deep
        attrs = {"in_data_locs": "[0]", "in_state_locs": "[1]", "num_args": "3",
                 "num_out_data": "1", "num_outputs": "2", "remain_locs": "[]"}
        node = json.dumps({"op": "_foreach", "name": f"loop{level}", "attrs": attrs,
                           "inputs": [[0, 0, 0], [1, 0, 0]], "subgraphs": []})
        text = ('{"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": "null", '
                '"name": "h", "inputs": []}, ' + node[:-3] + "[" + text + ']}], "arg_nodes": '
                '[0, 1], "heads": [[2, 0, 0], [2, 1, 0]]')
        text += ', "attrs": {"mxnet_version": ["int", 10901]}}' if level == levels - 1 \
            else "}"
    return text


def test_deep_foreach_nesting_loads_and_saves_iteratively():
    # MXNet 1.9.1 loads this 300-level nesting (1,200 levels of JSON)
    sym = mx.sym.load_json(_nested_foreach(300))
    assert sym.list_arguments() == ["x", "h"]
    assert sym.list_outputs() == ["loop299_output0", "loop299_output1"]
    again = mx.sym.load_json(sym.tojson())
    assert again.tojson() == sym.tojson()
    bad = _nested_foreach(300).replace('"op": "elemwise_add"', '"op": "elemwise_add", "x": 1')
    with pytest.raises(MXNetError, match=r"subgraph 0 of node 'loop0'.*Unknown field x"):
        mx.sym.load_json(bad)


# ---------------------------------------------------------------------- attribute bounds
@pytest.mark.parametrize("make,message", [
    (lambda x: mx.sym.FullyConnected(x, num_hidden=-5),
     "value -5 for Parameter num_hidden should be greater equal to 1"),
    (lambda x: mx.sym.FullyConnected(x, num_hidden=0), "should be greater equal to 1"),
    (lambda x: mx.sym.FullyConnected(x, num_hidden=int(1e11)),
     "Invalid Parameter format for num_hidden expect int but value='100000000000'"),
    (lambda x: mx.sym.FullyConnected(x, num_hidden=2 ** 31), "expect int"),
    (lambda x: mx.sym.FullyConnected(x, num_hidden="4.0"), "value='4.0'"),
    (lambda x: mx.sym.FullyConnected(x, num_hidden=4.5), "value='4.5'"),
    (lambda x: mx.sym.FullyConnected(x, num_hidden="True"), "value='True'"),
    (lambda x: mx.sym.softmax(x, axis="True"),
     "Invalid Parameter format for axis expect int but value='True'"),
    (lambda x: mx.sym.sum(x, axis="True"), "expect Shape or None but value='True'"),
    (lambda x: mx.sym.SliceChannel(x, num_outputs=int(1e12)),
     "Invalid Parameter format for num_outputs expect int"),
    (lambda x: mx.sym.SliceChannel(x, num_outputs=-3),
     "value -3 for Parameter num_outputs should be greater equal to 1"),
    (lambda x: mx.sym.Convolution(x, kernel=(3, 3), num_filter=0),
     "value 0 for Parameter num_filter should be greater equal to 1"),
    (lambda x: mx.sym.Deconvolution(x, kernel=(3, 3), num_filter=0), "num_filter"),
    (lambda x: mx.sym.Dropout(x, p=1.5), r"value 1.5 for Parameter p exceed bound \[0,1\]"),
    (lambda x: mx.sym.Dropout(x, p="0.5x"), "Some trailing characters could not be parsed"),
    (lambda x: mx.sym.Dropout(x, p="1e400"), "Out of range value for p, value='1e400'"),
    (lambda x: mx.sym.Embedding(x, input_dim=0, output_dim=3),
     "value 0 for Parameter input_dim should be greater equal to 1"),
    (lambda x: mx.sym.SoftmaxOutput(x, smooth_alpha=2), r"exceed bound \[0,1\]"),
    (lambda x: mx.sym.RNN(x, state_size=4, num_layers=1, mode="lstm", p=2),
     r"value 2 for Parameter p exceed bound \[0,1\]"),
    (lambda x: mx.sym.Concat(x, num_args=0), "num_args should be greater equal to 1"),
    (lambda x: mx.sym.BatchNorm(x, fix_gamma=2),
     "Invalid Parameter format for fix_gamma expect boolean but value='2'"),
    (lambda x: mx.sym.Activation(x, act_type="foo"),
     "Invalid Input: 'foo' for act_type, valid values are: "
     "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}"),
])
def test_symbol_attributes_refused_with_mxnet_messages(make, message):
    with pytest.raises(MXNetError, match=message.replace("{", r"\{").replace("}", r"\}")):
        make(mx.sym.var("x"))


def test_attributes_mxnet_accepts():
    x = mx.sym.var("x")
    assert mx.sym.FullyConnected(x, num_hidden=2 ** 31 - 1).list_arguments()[0] == "x"
    assert mx.sym.FullyConnected(x, num_hidden="+4").infer_shape(x=(2, 3))[1] == [(2, 4)]
    assert mx.sym.FullyConnected(x, num_hidden=np.int64(4)).infer_shape(x=(2, 3))[1] == \
        [(2, 4)]
    mx.sym.Dropout(x, p="nan")                   # MXNet: NaN passes the [0, 1] range check
    mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, workspace=2 ** 40)   # uint64


def test_fully_connected_negative_hidden_refused_before_inference():
    x = mx.sym.var("x")
    with pytest.raises(MXNetError, match="num_hidden should be greater equal to 1"):
        mx.sym.FullyConnected(x, num_hidden=-1).infer_shape(x=(2, 3))
    with pytest.raises(MXNetError, match="num_hidden should be greater equal to 1"):
        mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), mx.nd.ones(4),
                             num_hidden=-1)


# ---------------------------------------------------------------------- fuzzing
SEED = 20261125
FUZZ_SECONDS = 30
FUZZ_INPUTS = 6000
BIND_ELEMENTS = 1 << 22      # bind only graphs whose arrays stay this small


def _fixture_texts():
    paths = sorted(glob.glob(os.path.join(FIXTURES, "**", "*-symbol.json"), recursive=True))
    return [(os.path.basename(p), open(p, encoding="utf-8").read()) for p in paths]


def _byte_mutation(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data))
        kind = rng.random()
        if kind < 0.4:
            data[at] = rng.randrange(256)
        elif kind < 0.6:
            del data[at:at + rng.randint(1, 8)]
        elif kind < 0.8:
            data[at:at] = rng.choice([b"-", b"9", b"0", b"[", b"]", b"{", b"}", b'"', b",",
                                      b"1e400", b"NaN", b"\xff", b"99999999999"])
        else:   # a digit becomes another number
            digits = [i for i in range(len(data)) if 48 <= data[i] <= 57]
            if digits:
                i = rng.choice(digits)
                data[i:i + 1] = str(rng.choice([0, 2, 7, -1, 65536, 2 ** 31])).encode()
    return bytes(data)


def _structure_mutation(rng, graph):
    graph = json.loads(json.dumps(graph))
    nodes = graph["nodes"]
    node = rng.choice(nodes)
    kind = rng.randrange(7)
    if kind == 0 and node.get("attrs"):
        key = rng.choice(sorted(node["attrs"]))
        node["attrs"][key] = rng.choice(["-1", "0", "1e12", "True", "", "(0, 0)", "None",
                                         "(-1,)", "2147483648", "[]", "nan"])
    elif kind == 1 and node["inputs"]:
        entry = rng.choice(node["inputs"])
        entry[rng.randrange(2)] = rng.choice([-1, 0, 1, 2, len(nodes), 2 ** 31])
    elif kind == 2:
        key = rng.choice(sorted(node))
        node[key[:-1] + "X"] = node.pop(key)
    elif kind == 3:
        graph["heads"] = [[rng.randrange(-1, len(nodes) + 1), rng.randrange(-1, 3), 0]]
    elif kind == 4:
        node["inputs"] = node["inputs"][:-1] if node["inputs"] else [[0, 0, 0]]
    elif kind == 5:
        node[rng.choice(["op", "name", "inputs", "attrs"])] = rng.choice([-1, None, [], {}, "x"])
    else:
        rng.shuffle(nodes)
    return json.dumps(graph).encode()


def _exercise(sym):
    """infer_shape with every argument given a small shape, and bind when small enough."""
    args = sym.list_arguments()
    shapes = {name: (2, 3) for name in args if name in ("data", "x")}
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape_partial(**shapes)
    if arg_shapes is None or any(s is None or 0 in s or not s for s in arg_shapes):
        return "partial"
    sizes = [int(np.prod(s)) for s in arg_shapes + out_shapes + aux_shapes if s]
    if sum(sizes) > BIND_ELEMENTS:
        return "large"
    sym.simple_bind(mx.cpu(), grad_req="null", **dict(zip(args, arg_shapes)))
    return "bound"


def test_fuzz_symbol_json_only_mxnet_errors_escape(capsys):
    rng = random.Random(SEED)
    fixtures = _fixture_texts()
    assert len(fixtures) >= 8
    counts = {"inputs": 0, "refused at load": 0, "loaded": 0, "refused at infer/bind": 0,
              "bound": 0}
    escaped = []
    deadline = time.monotonic() + FUZZ_SECONDS
    while counts["inputs"] < FUZZ_INPUTS and time.monotonic() < deadline:
        name, text = fixtures[counts["inputs"] % len(fixtures)]
        if rng.random() < 0.5:
            blob = _byte_mutation(rng, text.encode("utf-8"))
        else:
            blob = _structure_mutation(rng, json.loads(text))
        counts["inputs"] += 1
        try:
            sym = mx.sym.load_json(blob.decode("utf-8", "surrogateescape"))
        except MXNetError:
            counts["refused at load"] += 1
            continue
        except Exception as err:   # noqa: BLE001 - the assertion below names it
            escaped.append((name, "load", type(err).__name__, str(err)[:200]))
            continue
        counts["loaded"] += 1
        try:
            if _exercise(sym) == "bound":
                counts["bound"] += 1
        except MXNetError:
            counts["refused at infer/bind"] += 1
        except Exception as err:   # noqa: BLE001
            escaped.append((name, "infer/bind", type(err).__name__, str(err)[:200]))
    with capsys.disabled():
        print(f"\nsymbol JSON fuzz: {counts}, other exceptions: {len(escaped)}")
    assert counts["inputs"] >= 1000
    assert not escaped, escaped[:5]

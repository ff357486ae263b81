"""Subgraph partitioning (mxtorch/graph/partition.py): Symbol.optimize_for('default' /
'default_v2'), the C API's op-name settings, MXNET_SUBGRAPH_BACKEND at bind,
HybridBlock.hybridize(backend=) / optimize_for, and inference through _CachedOp nodes.
Node names, inputs and structures were taken from real MXNet 1.9.1."""
import contextlib
import json
import logging

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError, _LIB, c_str, c_str_array, check_call, mx_uint
from mxtorch.gluon import nn


@contextlib.contextmanager
def op_names(names, backend="default", bind=False):
    """Give ``backend`` the operators to group (V2: optimize_for; else: bind)."""
    suffix = "" if bind else "V2"
    check_call(getattr(_LIB, "MXSetSubgraphPropertyOpNames" + suffix)(
        c_str(backend), mx_uint(len(names)), c_str_array(names)))
    try:
        yield
    finally:
        check_call(getattr(_LIB, "MXRemoveSubgraphPropertyOpNames" + suffix)(c_str(backend)))


def part(sym, names, backend="default", **kwargs):
    with op_names(names, backend):
        return sym.optimize_for(backend, **kwargs)


def structure(sym):
    """(op, name, inputs) of every node, nested graphs as (heads, [(op, name, inputs)])."""
    js = json.loads(sym.tojson())
    out = []
    for n in js["nodes"]:
        item = (n["op"], n["name"], n["inputs"])
        for g in n.get("subgraphs", []):
            item += ((g["heads"], [(m["op"], m["name"], m["inputs"]) for m in g["nodes"]]),)
        out.append(item)
    return out, js["heads"]


def _cycle_graph():
    data = mx.sym.var("data", shape=(1,))
    r1 = mx.sym.sin(data, name="sin1")
    r2 = mx.sym.cos(r1, name="cos1")
    r2 = mx.sym.cos(mx.sym.cos(r2, name="cos2"), name="cos3")
    return mx.sym.elemwise_add(r1, r2, name="_plus2")


def _shared_input_graph():
    data = mx.sym.var("data", shape=(1,))
    plus = mx.sym.elemwise_add(mx.sym.sin(data, name="sin2"), mx.sym.sin(data, name="sin3"),
                               name="_plus3")
    return mx.sym.elemwise_sub(mx.sym.cos(plus, name="cos4"), mx.sym.cos(plus, name="cos5"),
                               name="_minus0")


# ---------------------------------------------------------------------- structure
def test_two_groups_around_an_outside_node():
    data = mx.sym.var("data")
    e = mx.sym.exp(data, name="exp0")
    s = mx.sym.elemwise_add(mx.sym.cos(e, name="cos0"), mx.sym.sin(e, name="sin0"),
                            name="_plus0")
    p = part(s, ["exp", "sin", "_Plus", "elemwise_add", "_plus"])
    # MXNet: exp+sin in one group, cos outside, the add in a second group (one group
    # would read cos, which reads the group: a cycle)
    assert structure(p) == ([
        ("null", "data", []),
        ("_CachedOp", "_CachedOp0", [[0, 0, 0]],
         ([[1, 0, 0], [2, 0, 0]], [("null", "data0", []), ("exp", "exp0", [[0, 0, 0]]),
                                   ("sin", "sin0", [[1, 0, 0]])])),
        ("cos", "cos0", [[1, 0, 0]]),
        ("_CachedOp", "_CachedOp1", [[2, 0, 0], [1, 1, 0]],
         ([[2, 0, 0]], [("null", "cos0_output0", []), ("null", "_CachedOp0_sin0_output0", []),
                        ("elemwise_add", "_plus0", [[0, 0, 0], [1, 0, 0]])])),
    ], [[3, 0, 0]])
    assert p.list_outputs() == ["_CachedOp1__plus0_output"]
    assert p.list_arguments() == s.list_arguments() == ["data"]
    # every op grouped: one node
    whole = part(s, ["exp", "cos", "sin", "elemwise_add"])
    nodes, heads = structure(whole)
    assert [n[:2] for n in nodes] == [("null", "data"), ("_CachedOp", "_CachedOp0")]
    assert [m[1] for m in nodes[1][3][1]] == ["data0", "exp0", "cos0", "sin0", "_plus0"]
    assert whole.list_outputs() == ["_CachedOp0__plus0_output"]


def test_cycle_through_outside_nodes_is_broken():
    p = part(_cycle_graph(), ["sin", "elemwise_add", "_plus", "_Plus"])
    assert structure(p) == ([
        ("null", "data", []),
        ("_CachedOp", "_CachedOp0", [[0, 0, 0]],
         ([[1, 0, 0], [1, 0, 0]], [("null", "data0", []), ("sin", "sin1", [[0, 0, 0]])])),
        ("cos", "cos1", [[1, 1, 0]]),
        ("cos", "cos2", [[2, 0, 0]]),
        ("cos", "cos3", [[3, 0, 0]]),
        ("_CachedOp", "_CachedOp1", [[1, 0, 0], [4, 0, 0]],
         ([[2, 0, 0]], [("null", "_CachedOp0_sin1_output0", []),
                        ("null", "cos3_output0", []),
                        ("elemwise_add", "_plus2", [[0, 0, 0], [1, 0, 0]])])),
    ], [[5, 0, 0]])


def test_shared_inputs_and_outputs_with_and_without_dedup():
    sym = _shared_input_graph()
    p = part(sym, ["sin", "elemwise_add"])
    nodes, heads = structure(p)
    assert nodes[1] == (
        "_CachedOp", "_CachedOp0", [[0, 0, 0], [0, 0, 0]],
        ([[4, 0, 0], [4, 0, 0]], [("null", "data0", []), ("sin", "sin2", [[0, 0, 0]]),
                                  ("null", "data1", []), ("sin", "sin3", [[2, 0, 0]]),
                                  ("elemwise_add", "_plus3", [[1, 0, 0], [3, 0, 0]])]))
    assert nodes[2:] == [("cos", "cos4", [[1, 0, 0]]), ("cos", "cos5", [[1, 1, 0]]),
                         ("elemwise_sub", "_minus0", [[2, 0, 0], [3, 0, 0]])]
    # dedup_subgraph: one nested input per entry, one output per entry
    d = part(sym, ["sin", "elemwise_add"], dedup_subgraph=True)
    nodes, heads = structure(d)
    assert nodes[1] == (
        "_CachedOp", "_CachedOp0", [[0, 0, 0]],
        ([[3, 0, 0]], [("null", "data0", []), ("sin", "sin2", [[0, 0, 0]]),
                       ("sin", "sin3", [[0, 0, 0]]),
                       ("elemwise_add", "_plus3", [[1, 0, 0], [2, 0, 0]])]))
    assert nodes[2:4] == [("cos", "cos4", [[1, 0, 0]]), ("cos", "cos5", [[1, 0, 0]])]
    data = mx.sym.var("data")
    twice = mx.sym.elemwise_add(data, data, name="_plus1")
    assert structure(part(twice, ["elemwise_add"]))[0][1][2:] == (
        [[0, 0, 0], [0, 0, 0]],
        ([[2, 0, 0]], [("null", "data0", []), ("null", "data1", []),
                       ("elemwise_add", "_plus1", [[0, 0, 0], [1, 0, 0]])]))
    assert structure(part(twice, ["elemwise_add"], dedup_subgraph=True))[0][1][2:] == (
        [[0, 0, 0]], ([[1, 0, 0]], [("null", "data0", []),
                                    ("elemwise_add", "_plus1", [[0, 0, 0], [0, 0, 0]])]))


def test_duplicated_heads():
    e = mx.sym.exp(mx.sym.var("data"), name="exp1")
    p = part(mx.sym.Group([e, e, e]), ["exp"])
    assert structure(p) == ([
        ("null", "data", []),
        ("_CachedOp", "_CachedOp0", [[0, 0, 0]],
         ([[1, 0, 0], [1, 0, 0], [1, 0, 0]], [("null", "data0", []),
                                              ("exp", "exp1", [[0, 0, 0]])]))],
        [[1, 0, 0], [1, 1, 0], [1, 2, 0]])
    # MXNet: repeated outputs of a _CachedOp come out of _copy nodes
    assert p.list_outputs() == ["_CachedOp0_exp1_output", "_CachedOp0_exp1_copy0_output",
                                "_CachedOp0_exp1_copy0_0_copy_output"]
    d = part(mx.sym.Group([e, e, e]), ["exp"], dedup_subgraph=True)
    assert structure(d)[1] == [[1, 0, 0], [1, 0, 0], [1, 0, 0]]
    assert d.list_outputs() == ["_CachedOp0_exp1_output"] * 3


def test_cached_op_names_repeated_outputs_per_entry():
    d = mx.sym.var("data")
    sp = mx.sym.split(d, num_outputs=2, name="sp")
    cases = [([sp[1]] * 3, ["c_sp_output1", "c_sp_copy0_output", "c_sp_copy0_0_copy_output"]),
             ([d, d, d], ["c_data", "c_data_copy0_output", "c_data_copy0_0_copy_output"]),
             ([sp[0], sp[1], sp[0], sp[1]],
              ["c_sp_output0", "c_sp_output1", "c_sp_copy0_output", "c_sp_copy0_output"])]
    for heads, names in cases:
        c = mx.sym._internal._CachedOp(d, subgraph=mx.sym.Group(heads).tojson(), name="c")
        assert c.list_outputs() == names
    exe = c.bind(mx.cpu(), {"data": mx.nd.array([[1.0, 2.0]])})
    assert [o.asnumpy().tolist() for o in exe.forward()] == [[[1.0]], [[2.0]]] * 2


def test_weights_stay_arguments_in_order():
    x = mx.sym.var("x")
    fc1 = mx.sym.FullyConnected(x, num_hidden=3, name="fc1")
    fc2 = mx.sym.FullyConnected(mx.sym.relu(fc1, name="relu0"), num_hidden=2, name="fc2")
    p = part(fc2, ["FullyConnected"])
    nodes, heads = structure(p)
    assert [n[:2] for n in nodes] == [
        ("null", "x"), ("null", "fc1_weight"), ("null", "fc1_bias"), ("_CachedOp", "_CachedOp0"),
        ("relu", "relu0"), ("null", "fc2_weight"), ("null", "fc2_bias"),
        ("_CachedOp", "_CachedOp1")]
    assert [m[1] for m in nodes[7][3][1]] == ["relu0_output0", "fc2_weight0", "fc2_bias0",
                                              "fc2"]
    assert p.list_arguments() == fc2.list_arguments()
    assert p.list_outputs() == ["_CachedOp1_fc2_output"]


def test_aux_states_stay_aux_states():
    data = mx.sym.var("data")
    s = mx.sym.BatchNorm(mx.sym.exp(data), name="bn0")
    p = part(s, ["exp", "BatchNorm"])
    assert p.list_arguments() == ["data", "bn0_gamma", "bn0_beta"]
    assert p.list_auxiliary_states() == ["bn0_moving_mean", "bn0_moving_var"]
    assert p.list_inputs() == s.list_inputs()


def test_no_selected_op_and_the_original_is_untouched():
    s = mx.sym.exp(mx.sym.var("x"), name="e") * 2
    before = s.tojson()
    p = part(s, ["Convolution"])
    assert p.tojson() == before and p is not s
    part(s, ["exp"])
    assert s.tojson() == before


# ---------------------------------------------------------------------- values
def _bind_values(sym, values, grad=True):
    args = {k: mx.nd.array(v) for k, v in values.items() if k in sym.list_arguments()}
    aux = {k: mx.nd.array(v) for k, v in values.items() if k in sym.list_auxiliary_states()}
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()} if grad else None
    exe = sym.bind(mx.cpu(), args, args_grad=grads, aux_states=aux)
    outs = [o.asnumpy() for o in exe.forward(is_train=grad)]
    if grad:
        exe.backward([mx.nd.ones(o.shape) for o in outs])
        return outs, {k: g.asnumpy() for k, g in grads.items()}
    return outs, {}


def test_partitioned_symbol_computes_same_outputs_and_gradients():
    x = mx.sym.var("x")
    fc1 = mx.sym.FullyConnected(x, num_hidden=3, name="fc1")
    fc2 = mx.sym.FullyConnected(mx.sym.relu(fc1), num_hidden=2, name="fc2")
    out = mx.sym.Group([fc2, mx.sym.exp(fc1)])
    rng = np.random.RandomState(0)
    values = {"x": rng.uniform(-1, 1, (4, 5)), "fc1_weight": rng.uniform(-1, 1, (3, 5)),
              "fc1_bias": rng.uniform(-1, 1, (3,)), "fc2_weight": rng.uniform(-1, 1, (2, 3)),
              "fc2_bias": rng.uniform(-1, 1, (2,))}
    p = part(out, ["FullyConnected", "exp"])
    assert sum(n[0] == "_CachedOp" for n in structure(p)[0]) == 2
    ref_out, ref_grad = _bind_values(out, values)
    got_out, got_grad = _bind_values(p, values)
    # NumPy reference for the outputs
    h = values["x"] @ values["fc1_weight"].T + values["fc1_bias"]
    o = np.maximum(h, 0) @ values["fc2_weight"].T + values["fc2_bias"]
    np.testing.assert_allclose(got_out[0], o, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_out[1], np.exp(h), rtol=1e-5, atol=1e-6)
    for a, b in zip(ref_out, got_out):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    for k in ref_grad:
        np.testing.assert_allclose(got_grad[k], ref_grad[k], rtol=1e-5, atol=1e-6)
    gx = ((values["fc2_weight"].sum(0) * (h > 0) + np.exp(h)) @ values["fc1_weight"])
    np.testing.assert_allclose(got_grad["x"], gx, rtol=1e-5, atol=1e-6)


def test_cycle_graph_values():
    sym = _cycle_graph()
    p = part(sym, ["sin", "elemwise_add"])
    x = np.array([0.3])
    out, grad = _bind_values(p, {"data": x})
    np.testing.assert_allclose(out[0], np.sin(x) + np.cos(np.cos(np.cos(np.sin(x)))),
                               rtol=1e-6)
    ref = _bind_values(sym, {"data": x})[1]["data"]
    np.testing.assert_allclose(grad["data"], ref, rtol=1e-6)


def test_json_round_trip_of_partitioned_symbol():
    sym = _shared_input_graph()
    p = part(sym, ["sin", "elemwise_add"])
    back = mx.sym.load_json(p.tojson())
    assert back.tojson() == p.tojson()
    assert back.list_outputs() == p.list_outputs() == ["_minus0_output"]
    x = {"data": np.array([0.7])}
    np.testing.assert_allclose(_bind_values(back, x, grad=False)[0][0],
                               [0.0], atol=1e-7)   # cos(p) - cos(p)
    s2 = mx.sym.exp(mx.sym.var("a"), name="e") * 3
    p2 = mx.sym.load_json(part(s2, ["exp"]).tojson())
    np.testing.assert_allclose(_bind_values(p2, {"a": np.array([1.0, 2.0])}, False)[0][0],
                               3 * np.exp([1.0, 2.0]), rtol=1e-6)


def test_shape_and_type_inference_through_cached_op():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    p = part(mx.sym.elemwise_add(mx.sym.exp(a, name="e"), b, name="_plus0"), ["exp"])
    # the nested graph learns its output shape from outside (b) and gives it to 'a'
    assert p.infer_shape(b=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert p.infer_shape_partial(b=(2, 0)) == ([(2, 0), (2, 0)], [(2, 0)], [])
    assert p.infer_type(a="float64") == ([np.float64, np.float64], [np.float64], [])
    with pytest.raises(MXNetError, match=r"_plus0.*same shape.*\(2, 3\) and \(4, 3\)"):
        p.infer_shape(a=(2, 3), b=(4, 3))
    # a conflict inside the nested graph names the _CachedOp node
    inner = part(mx.sym.elemwise_add(a, b, name="add9"), ["elemwise_add"])
    with pytest.raises(MXNetError, match=r"operator _CachedOp0: .*add9.*\(2, 3\) and \(4, 3\)"):
        inner.infer_shape(a=(2, 3), b=(4, 3))


# ---------------------------------------------------------------------- options, errors
def test_optimize_for_checks_its_arguments():
    s = mx.sym.exp(mx.sym.var("x"))
    with op_names(["exp"]):
        with pytest.raises(TypeError, match="Only accept list of NDArrays or dict"):
            s.optimize_for("default", args={"x": [1.0, 2.0]})
        with pytest.raises(ValueError, match="3 has to be a tuple or list"):
            s.optimize_for("default", shape_dict={"x": 3})
        with pytest.raises(ValueError, match="is not a MXNet type"):
            s.optimize_for("default", type_dict={"x": "complex64"})
        with pytest.raises(ValueError, match="bogus is not a MXNet storage type"):
            s.optimize_for("default", stype_dict={"x": "bogus"})
        with pytest.raises(AssertionError):
            s.optimize_for("default", args=[mx.nd.ones((1,))])
        with pytest.raises(MXNetError, match=r"same shape, got \(2,\) and \(3,\)"):
            (s + mx.sym.var("y")).optimize_for("default", args={"x": mx.nd.ones((2,)),
                                                                "y": mx.nd.ones((3,))})
        # names that are no input are left out, as MXNet does
        p = s.optimize_for("default", args={"zzz": mx.nd.ones((2,))})
        assert [n[0] for n in structure(p)[0]] == ["null", "_CachedOp"]


def test_default_backend_without_op_names_is_an_error():
    s = mx.sym.exp(mx.sym.var("x"))
    with pytest.raises(MXNetError, match="Cannot find attribute op_names"):
        s.optimize_for("default")
    with pytest.raises(MXNetError, match="Cannot find attribute op_names"):
        s.get_backend_symbol("default_v2")


def test_unknown_backend(caplog):
    s = mx.sym.exp(mx.sym.var("x"))
    # MXNet: optimize_for logs the error and gives the symbol back unchanged
    with caplog.at_level(logging.ERROR):
        p = s.optimize_for("nonexistent")
    assert p is not s and p.tojson() == s.tojson()
    assert "Error optimizing for backend 'nonexistent' cannot be found" in caplog.text
    # so a block hybridized for it runs its graph as it is
    net = nn.Dense(2, in_units=3)
    net.initialize(mx.init.One())
    net.hybridize(backend="nonexistent")
    np.testing.assert_array_equal(net(mx.nd.ones((1, 3))).asnumpy(), [[3.0, 3.0]])
    # get_backend_symbol raises, naming the known backends (binding: see below)
    with pytest.raises(MXNetError, match="SubgraphProperty nonexistent is not found.*default"):
        s.get_backend_symbol("nonexistent")


def test_get_backend_symbol_and_optimizer_names():
    s = mx.sym.exp(mx.sym.var("x"), name="e") * 2
    with op_names(["exp"], "default_v2"):
        g = s.get_backend_symbol("default_v2")
    assert [n[:2] for n in structure(g)[0]][:2] == [("null", "x"), ("_CachedOp", "_CachedOp0")]
    assert [n[0] for n in structure(g)[0]][2:] == ["_mul_scalar"]
    # an inference optimizer's name leaves the graph as it is (a copy)
    for name in ("MKLDNN", "JIT", "inductor"):
        c = s.get_backend_symbol(name)
        assert c is not s and c.tojson() == s.tojson()
    # MXNet's quantization backend is none of mxtorch's: an error, not the float fusion
    with pytest.raises(MXNetError, match="MKLDNN_QUANTIZE is not found.*JIT, MKLDNN"):
        s.get_backend_symbol("MKLDNN_QUANTIZE")


# ---------------------------------------------------------------------- binding
def test_subgraph_backend_env_at_bind(monkeypatch):
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.elemwise_add(mx.sym.exp(a, name="e"), b, name="_plus0")
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "default")
    with op_names(["exp"], bind=True):
        exe = s.simple_bind(mx.cpu(), a=(2,), b=(2,))
        exe.arg_dict["a"][:] = mx.nd.array([0.0, 1.0])
        exe.arg_dict["b"][:] = mx.nd.array([1.0, 2.0])
        np.testing.assert_allclose(exe.forward()[0].asnumpy(), [2.0, np.e + 2], rtol=1e-6)
        o = exe.get_optimized_symbol()
        assert [n[:2] for n in structure(o)[0]] == [
            ("null", "a"), ("_CachedOp", "_CachedOp0"), ("null", "b"),
            ("elemwise_add", "_plus0")]
        assert o.list_outputs() == ["_plus0_output"]
    # V2 op names do not apply at bind, and removed names leave the graph whole
    with op_names(["exp"]):
        exe = s.simple_bind(mx.cpu(), a=(2,), b=(2,))
    assert [n[1] for n in structure(exe.get_optimized_symbol())[0]] == ["a", "e", "b", "_plus0"]
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "nonexistent")
    with pytest.raises(MXNetError, match="SubgraphProperty nonexistent is not found"):
        s.simple_bind(mx.cpu(), a=(2,), b=(2,))


# ---------------------------------------------------------------------- gluon
def _mlp(prefix, act="relu"):
    net = nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(nn.Dense(3, activation=act, in_units=2), nn.Dense(1, in_units=3))
    net.initialize(mx.init.One())
    return net


def test_hybridblock_optimize_for_partitions_the_exported_graph(tmp_path):
    net = _mlp("net_")
    x = mx.nd.array([[1.0, -2.0], [0.5, 0.25]])
    with op_names(["FullyConnected"]):
        assert net.optimize_for(x, backend="default") is None
    net.export(str(tmp_path / "net"))
    js = json.loads((tmp_path / "net-symbol.json").read_text())
    assert [(n["op"], n["name"], len(n.get("subgraphs", []))) for n in js["nodes"]] == [
        ("null", "data", 0), ("null", "net_dense0_weight", 0), ("null", "net_dense0_bias", 0),
        ("_CachedOp", "_CachedOp0", 1), ("Activation", "net_dense0_relu_fwd", 0),
        ("null", "net_dense1_weight", 0), ("null", "net_dense1_bias", 0),
        ("_CachedOp", "_CachedOp1", 1)]
    np.testing.assert_allclose(net(x).asnumpy(), [[0.0], [2.25]], rtol=1e-6)
    with pytest.raises(ValueError, match='Must specify "backend"'):
        net.optimize_for(x)
    # the exported partitioned model loads back and computes the same
    back = nn.SymbolBlock.imports(str(tmp_path / "net-symbol.json"), ["data"],
                                  str(tmp_path / "net-0000.params"))
    np.testing.assert_allclose(back(x).asnumpy(), [[0.0], [2.25]], rtol=1e-6)


def test_hybridize_with_backend_and_options(tmp_path):
    net = _mlp("n2_", act=None)
    x = mx.nd.array([[1.0, -2.0], [0.5, 0.25]])
    with op_names(["FullyConnected"]):
        net.hybridize(backend="default", dedup_subgraph=True)
        np.testing.assert_allclose(net(x).asnumpy(), [[-3.0], [2.25]], rtol=1e-6)
    net.export(str(tmp_path / "n2"))
    js = json.loads((tmp_path / "n2-symbol.json").read_text())
    assert [(n["op"], n["name"]) for n in js["nodes"]] == [
        ("null", "data"), ("null", "n2_dense0_weight"), ("null", "n2_dense0_bias"),
        ("null", "n2_dense1_weight"), ("null", "n2_dense1_bias"), ("_CachedOp", "_CachedOp0")]
    # gradients through the partitioned cached graph
    with mx.autograd.record():
        y = net(x)
    y.backward()
    np.testing.assert_allclose(net[0].weight.grad().asnumpy(),
                               np.ones((3, 1)) @ x.asnumpy().sum(0, keepdims=True), rtol=1e-6)

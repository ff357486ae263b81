"""Gluon and symbols in NumPy mode: np parameters and outputs, training equal to legacy
mode, npx.save-based parameter files, numpy-mode export/import (the MXNet np_dense
fixture included) and mx.sym.np / mx.sym.npx graphs with MXNet's operator names."""
import json
import os

import numpy as onp
import pytest

import mxtorch as mx
from helpers import FIXTURES
from mxtorch import autograd, gluon
from mxtorch import numpy_extension as npx
from mxtorch.gluon import nn
from mxtorch.numpy.multiarray import array as np_array
from mxtorch.numpy.multiarray import ndarray as np_ndarray
from mxtorch.symbol import numpy as sym_np
from mxtorch.symbol.numpy import _npx as sym_npx

SYMFIX = os.path.join(FIXTURES, 'symbol')


@pytest.fixture(autouse=True)
def _reset_np():
    yield
    npx.reset_np()


def _data():
    rs = onp.random.RandomState(3)
    return rs.uniform(-1, 1, (8, 4)).astype("float32"), rs.uniform(-1, 1, (8, 2)).astype(
        "float32")


def _net():
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Dense(5, activation="relu"), nn.Dense(2))
    return net


def _train(np_mode, hybridize):
    """Five SGD steps on fixed data; returns (final loss, parameter values)."""
    if np_mode:
        npx.set_np()
    x, y = _data()
    mk = np_array if np_mode else mx.nd.array
    x, y = mk(x), mk(y)
    mx.random.seed(7)
    net = _net()
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.L2Loss()
    for _ in range(5):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(8)
    if np_mode:
        assert isinstance(loss, np_ndarray)
        assert all(isinstance(p.data(), np_ndarray) and isinstance(p.grad(), np_ndarray)
                   for p in net.collect_params().values())
    params = {k: v.data().asnumpy() for k, v in net.collect_params().items()}
    npx.reset_np()
    return loss.asnumpy(), params


@pytest.mark.parametrize("hybridize", [False, True])
def test_training_in_np_mode_matches_legacy(hybridize):
    loss_nd, p_nd = _train(False, hybridize)
    loss_np, p_np = _train(True, hybridize)
    onp.testing.assert_allclose(loss_np, loss_nd, rtol=1e-6)
    assert p_nd.keys() == p_np.keys()
    for k in p_nd:
        onp.testing.assert_allclose(p_np[k], p_nd[k], rtol=1e-6, err_msg=k)


def test_block_outputs_are_checked():
    npx.set_np()

    class Legacy(gluon.Block):
        def forward(self, x):
            return x.as_nd_ndarray()

    with pytest.raises(TypeError, match="mxnet.numpy.ndarray"):
        Legacy()(np_array([1.0]))


def test_save_load_parameters_np_and_legacy(tmp_path):
    x, _ = _data()
    net = _net()
    net.initialize()
    ref = net(mx.nd.array(x)).asnumpy()
    legacy_file = str(tmp_path / "legacy.params")
    net.save_parameters(legacy_file)
    npx.set_np()
    net2 = _net()
    net2.load_parameters(legacy_file)  # a legacy (V2) file loads in NumPy mode
    out = net2(np_array(x))
    assert isinstance(out, np_ndarray)
    onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    np_file = str(tmp_path / "np.params")
    net2.save_parameters(np_file)
    with open(np_file, "rb") as f:
        blob = f.read()
    assert blob[24:28] == (0xF993FACA).to_bytes(4, "little")  # V3 records (npx.save)
    net3 = _net()
    net3.load_parameters(np_file)
    onp.testing.assert_allclose(net3(np_array(x)).asnumpy(), ref, rtol=1e-6)
    pd_file = str(tmp_path / "pd.params")
    net3.collect_params().save(pd_file, strip_prefix="net_")
    net4 = _net()
    net4.collect_params().load(pd_file, restore_prefix="net_")
    onp.testing.assert_allclose(net4(np_array(x)).asnumpy(), ref, rtol=1e-6)


def test_export_round_trips_through_symbolblock(tmp_path):
    npx.set_np()
    x, _ = _data()
    net = _net()
    net.initialize()
    net.hybridize()
    ref = net(np_array(x)).asnumpy()
    prefix = str(tmp_path / "npnet")
    net.export(prefix)
    graph = json.load(open(prefix + "-symbol.json"))
    assert graph["attrs"] == {"is_np_shape": ["int", 1], "mxnet_version": ["int", 10901]}
    assert [n["op"] for n in graph["nodes"] if n["op"] != "null"] == \
        ["FullyConnected", "Activation", "FullyConnected"]
    with open(prefix + "-0000.params", "rb") as f:
        assert f.read()[24:28] == (0xF993FACA).to_bytes(4, "little")
    blk = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    out = blk(np_array(x))
    assert isinstance(out, np_ndarray)
    onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    npx.reset_np()  # the same files load in legacy mode too
    blk2 = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    onp.testing.assert_allclose(blk2(mx.nd.array(x)).asnumpy(), ref, rtol=1e-6)


def test_mxnet_np_dense_fixture_loads_and_reproduces():
    npx.set_np()
    blk = gluon.SymbolBlock.imports(os.path.join(SYMFIX, "np_dense-symbol.json"), ["data"],
                                    os.path.join(SYMFIX, "np_dense-0000.params"))
    out = blk(np_array(onp.arange(8, dtype="float32").reshape(2, 4)))
    assert isinstance(out, np_ndarray)
    expected = [[-0.15140491724014282, 0.3079434931278229, -0.23604805767536163],
                [-0.5919331908226013, 0.6646615266799927, -0.7788239121437073]]  # MXNet 1.9.1
    onp.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6)


class _NpBlock(gluon.HybridBlock):
    """Uses F.np / F.npx, as NumPy-mode model code does."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.w = self.params.get("w", shape=(3,), init=mx.init.Constant(0.5))

    def hybrid_forward(self, F, x, w):
        h = F.npx.relu(x * w - 0.25)
        return F.np.sum(F.np.square(h) + 1, axis=1), F.npx.reshape(h, (-1,))


def test_f_np_and_npx_in_hybrid_forward():
    npx.set_np()
    blk = _NpBlock(prefix="blk_")
    blk.initialize()
    x = onp.arange(6, dtype="float32").reshape(2, 3)
    h = onp.maximum(x * 0.5 - 0.25, 0)
    s_imp, r_imp = blk(np_array(x))
    blk.hybridize()
    s_hyb, r_hyb = blk(np_array(x))
    for s, r in ((s_imp, r_imp), (s_hyb, r_hyb)):
        assert isinstance(s, np_ndarray) and isinstance(r, np_ndarray)
        onp.testing.assert_allclose(s.asnumpy(), (h * h + 1).sum(1), rtol=1e-6)
        onp.testing.assert_allclose(r.asnumpy(), h.ravel(), rtol=1e-6)
    ops = [n["op"] for n in json.loads(blk._cached_graph[1].tojson())["nodes"]]
    assert ops == ["null", "null", "_npi_multiply", "_npi_subtract_scalar", "_npx_relu",
                   "_npi_square", "_npi_add_scalar", "_np_sum", "_npx_reshape"]


# ---------------------------------------------------------------------- mx.sym.np
def _last_op(sym):
    node = json.loads(sym.tojson())["nodes"][-1]
    return node["op"], node.get("attrs")


def test_np_symbol_operator_names_match_mxnet():
    x, y = sym_np.var("x"), sym_np.var("y")
    # (expression, MXNet 1.9.1 op, attrs) as real MXNet writes them
    cases = [
        (x + y, "_npi_add", None), (x + 1, "_npi_add_scalar", {"is_int": "True",
                                                               "scalar": "1.0"}),
        (1 - x, "_npi_rsubtract_scalar", {"is_int": "False", "scalar": "1.0"}),
        (1 + x, "_npi_add_scalar", {"is_int": "True", "scalar": "1.0"}),
        (2 * x, "_npi_multiply_scalar", {"is_int": "False", "scalar": "2.0"}),
        (x * y, "_npi_multiply", None), (x / 2, "_npi_true_divide_scalar",
                                         {"is_int": "True", "scalar": "2.0"}),
        (2 / x, "_npi_rtrue_divide_scalar", {"is_int": "False", "scalar": "2.0"}),
        (-x, "_npi_multiply_scalar", {"is_int": "False", "scalar": "-1.0"}),
        (x > y, "_npi_greater", None), (sym_np.square(x), "_npi_square", None),
        (sym_np.abs(x), "_npi_absolute", None), (sym_np.copy(x), "_np_copy", None),
        (sym_np.mean(x, axis=(1, 2)), "_npi_mean", {"axis": "(1, 2)", "keepdims": "False"}),
        (sym_np.maximum(x, y), "broadcast_maximum", None),
        (sym_np.reshape(x, (2, -1)), "_np_reshape", {"newshape": "(2, -1)"}),
        (x.reshape((2, 3)), "_np_reshape", {"newshape": "(2, 3)", "order": "C"}),
        (sym_np.concatenate([x, y], axis=1), "_npi_concatenate",
         {"axis": "1", "num_args": "2"}),
        (sym_npx.fully_connected(x, num_hidden=3), "FullyConnected",
         {"num_hidden": "3"}),
        (sym_npx.batch_flatten(x), "Flatten", None),
        (sym_npx.relu(x), "_npx_relu", None),
        (sym_npx.reshape(x, (-1,)), "_npx_reshape", {"newshape": "(-1,)"}),
    ]
    for sym, op, attrs in cases:
        assert isinstance(sym, sym_np._Symbol)
        assert _last_op(sym) == (op, attrs), op


def test_is_np_shape_attr_and_conversions():
    x = mx.sym.var("x")
    s = x.as_np_ndarray()
    assert isinstance(s, sym_np._Symbol) and s.as_np_ndarray() is s
    assert type(s.as_nd_ndarray()) is mx.sym.Symbol and x.as_nd_ndarray() is x
    assert "is_np_shape" not in json.loads(s.tojson())["attrs"]
    npx.set_np()
    assert json.loads(x.tojson())["attrs"]["is_np_shape"] == ["int", 1]
    loaded = sym_np.load_json(s.tojson())
    assert isinstance(loaded, sym_np._Symbol) and loaded.list_arguments() == ["x"]
    fc = sym_npx.fully_connected(s, num_hidden=4, name="fc")
    assert fc.list_arguments() == ["x", "fc_weight", "fc_bias"]
    assert all(isinstance(o, sym_np._Symbol) for o in fc.get_internals())


def test_np_symbol_graph_evaluates_like_numpy():
    npx.set_np()
    x, y = sym_np.var("x"), sym_np.var("y")
    out = sym_np.sum(sym_np.where(x > y, x, y) ** 2, axis=0) / 2 + x[0]
    xa, ya = onp.array([[1., -2.], [3., 0.5]], "float32"), onp.array([0., 1.], "float32")
    res = out.eval(x=np_array(xa), y=np_array(ya))[0]
    onp.testing.assert_allclose(res.asnumpy(), (onp.maximum(xa, ya) ** 2).sum(0) / 2 + xa[0],
                                rtol=1e-6)


@pytest.mark.parametrize("loss_cls", [gluon.loss.SoftmaxCrossEntropyLoss, gluon.loss.L1Loss,
                                      gluon.loss.SigmoidBinaryCrossEntropyLoss,
                                      gluon.loss.HuberLoss])
def test_losses_accept_np_arrays(loss_cls):
    rs = onp.random.RandomState(0)
    pred = rs.randn(4, 3).astype("float32")
    label = onp.array([0, 2, 1, 1], "float32") if loss_cls is \
        gluon.loss.SoftmaxCrossEntropyLoss else rs.rand(4, 3).astype("float32")
    ref = loss_cls()(mx.nd.array(pred), mx.nd.array(label)).asnumpy()
    npx.set_np()
    out = loss_cls()(np_array(pred), np_array(label))
    assert isinstance(out, np_ndarray) and out.shape == (4,)
    onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)

"""mx.contrib.amp: the cast operators, convert_symbol/convert_model (checked against the
graphs real MXNet 1.9.1 builds), init()'s operator wrapping and dynamic loss scaling."""
import json
import logging

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import autograd, gluon
from mxtorch.base import dtype_np
from mxtorch.contrib import amp
from mxtorch.contrib.amp import amp as amp_impl
from mxtorch.contrib.amp.loss_scaler import LossScaler
from mxtorch.ndarray import NDArray
from mxtorch.ops import registry
from mxtorch.symbol import Symbol

BF16 = dtype_np("bfloat16")


def _nodes(sym):
    """(op, name, inputs) of every node of the symbol's JSON with the casts kept."""
    graph = json.loads(sym.tojson(remove_amp_cast=False))
    return [(n["op"], n["name"], [i[:2] for i in n["inputs"]]) for n in graph["nodes"]]


def _f32(arr):
    return mx.nd.amp_cast(arr, dtype="float32").asnumpy() if arr.dtype == BF16 \
        else arr.asnumpy().astype(np.float32)


# ------------------------------------------------------------------ cast operators
def test_amp_cast_bfloat16_and_pass_through():
    x = mx.nd.array([[1.5, -2.0, 3.25]])
    y = mx.nd.amp_cast(x, dtype="bfloat16")
    assert y.dtype == BF16
    np.testing.assert_array_equal(_f32(y), [[1.5, -2.0, 3.25]])
    # MXNet: float64 and integer inputs are not cast
    assert mx.nd.amp_cast(x.astype("float64"), dtype="float16").dtype == np.float64
    assert mx.nd.amp_cast(x.astype("int32"), dtype="float16").dtype == np.int32


def test_amp_cast_gradient_comes_back_in_the_input_dtype():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.amp_cast(x, dtype="bfloat16")
    y.backward(mx.nd.amp_cast(mx.nd.array([0.5, 4.0]), dtype="bfloat16"))
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.5, 4.0])


@pytest.mark.parametrize("dtypes, narrow, expected", [
    # values from MXNet 1.9.1
    (("bfloat16", "float32"), False, ["float32", "float32"]),
    (("bfloat16", "float16"), False, ["bfloat16", "bfloat16"]),
    (("float16", "bfloat16"), False, ["float16", "float16"]),
    (("float16", "bfloat16", "float32"), True, ["bfloat16", "bfloat16", "bfloat16"]),
    (("bfloat16", "float32"), True, ["bfloat16", "bfloat16"]),
    (("int32", "float32"), True, ["int32", "float32"]),
    (("float64", "float16"), False, ["float64", "float64"]),
    (("int32", "float16"), False, ["int32", "int32"]),
])
def test_amp_multicast_dtype_rule(dtypes, narrow, expected):
    x = mx.nd.array([1.0, 2.0])
    arrays = [mx.nd.amp_cast(x, dtype=d) if d in ("bfloat16", "float16") else x.astype(d)
              for d in dtypes]
    outs = mx.nd.amp_multicast(*arrays, num_outputs=len(arrays), cast_narrow=narrow)
    assert [mx.base.dtype_name(dtype_np(o.dtype)) for o in outs] == expected


def test_amp_cast_infers_shapes_backwards():
    w = mx.sym.var("w")
    fc = mx.sym.FullyConnected(mx.sym.var("data"), mx.sym.amp_cast(w, dtype="float16"),
                               no_bias=True, num_hidden=4)
    arg_shapes, out_shapes, _ = fc.infer_shape(data=(2, 3))
    assert arg_shapes == [(2, 3), (4, 3)] and out_shapes == [(2, 4)]
    multi = mx.sym.amp_multicast(mx.sym.var("a"), mx.sym.var("b"), num_outputs=2)
    assert multi.infer_shape(a=(5, 2), b=(3,))[1] == [(5, 2), (3,)]


# ------------------------------------------------------------------ convert_symbol
def _mlp():
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=8, name="fc1")
    bn = mx.sym.BatchNorm(fc1, name="bn")
    act = mx.sym.Activation(bn, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=4, name="fc2")
    s = fc2 + mx.sym.slice_axis(fc1, axis=1, begin=0, end=4, name="slice_axis0")
    return mx.sym.SoftmaxOutput(s, name="softmax")


def _params(sym, shapes):
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    rng = np.random.RandomState(0)
    args = {n: mx.nd.array(rng.uniform(-1, 1, s)) for n, s in
            zip(sym.list_arguments(), arg_shapes) if n not in shapes}
    aux = {n: mx.nd.array(rng.uniform(0.5, 1, s)) for n, s in
           zip(sym.list_auxiliary_states(), aux_shapes)}
    return args, aux


# The graph real MXNet 1.9.1's convert_model(cast_optional_params=False) builds for _mlp().
_BF16_NODES = [
    ("null", "data", []), ("amp_cast", "data_amp_cast_bfloat16", [[0, 0]]),
    ("null", "fc1_weight", []), ("amp_cast", "fc1_weight_amp_cast_bfloat16", [[2, 0]]),
    ("null", "fc1_bias", []), ("amp_cast", "fc1_bias_amp_cast_bfloat16", [[4, 0]]),
    ("FullyConnected", "fc1", [[1, 0], [3, 0], [5, 0]]),
    ("null", "bn_gamma", []), ("null", "bn_beta", []), ("null", "bn_moving_mean", []),
    ("null", "bn_moving_var", []),
    ("BatchNorm", "bn", [[6, 0], [7, 0], [8, 0], [9, 0], [10, 0]]),
    ("Activation", "relu1", [[11, 0]]),
    ("null", "fc2_weight", []), ("amp_cast", "fc2_weight_amp_cast_bfloat16", [[13, 0]]),
    ("null", "fc2_bias", []), ("amp_cast", "fc2_bias_amp_cast_bfloat16", [[15, 0]]),
    ("FullyConnected", "fc2", [[12, 0], [14, 0], [16, 0]]),
    ("amp_cast", "fc2_output_amp_cast_float32", [[17, 0]]),
    ("amp_cast", "fc1_output_amp_cast_float32", [[6, 0]]),
    ("slice_axis", "slice_axis0", [[19, 0]]),
    ("elemwise_add", "_plus0", [[18, 0], [20, 0]]),
    ("null", "softmax_label", []), ("SoftmaxOutput", "softmax", [[21, 0], [22, 0]])]


def test_convert_model_bfloat16_matches_mxnet_graph():
    with mx.name.NameManager():
        sym = _mlp()
    args, aux = _params(sym, {"data": (2, 5), "softmax_label": (2,)})
    conv, new_args, new_aux = amp.convert_model(sym, dict(args), dict(aux),
                                                target_dtype="bfloat16")
    assert _nodes(conv) == _BF16_NODES
    attrs = conv.attr_dict()
    assert attrs["fc1_weight"]["__dtype__"] == "0" and attrs["bn_moving_var"]["__dtype__"] == "0"
    assert all(np.dtype(v.dtype) == np.float32 for v in list(new_args.values()) +
               list(new_aux.values()))


def test_convert_model_cast_optional_params_float16():
    with mx.name.NameManager():
        sym = _mlp()
    args, aux = _params(sym, {"data": (2, 5), "softmax_label": (2,)})
    conv, new_args, new_aux = amp.convert_model(sym, dict(args), dict(aux),
                                                target_dtype="float16",
                                                cast_optional_params=True)
    nodes = _nodes(conv)
    # MXNet: the FullyConnected parameters become float16 and lose their casts; BatchNorm
    # takes float16 data as it is; the sum's float16 output is cast back for SoftmaxOutput
    assert [n[1] for n in nodes if n[0] == "amp_cast"] == [
        "data_amp_cast_float16", "_plus0_output_amp_cast_float32"]
    assert {k: np.dtype(v.dtype).name for k, v in new_args.items()} == {
        "fc1_weight": "float16", "fc1_bias": "float16", "bn_gamma": "float32",
        "bn_beta": "float32", "fc2_weight": "float16", "fc2_bias": "float16"}
    assert conv.attr_dict()["fc2_bias"]["__dtype__"] == "2"


@pytest.mark.parametrize("target, tol", [("bfloat16", 3e-2), ("float16", 3e-3)])
def test_converted_symbol_computes_what_float32_does(target, tol):
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv")
    net = mx.sym.Activation(net, act_type="relu", name="relu")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    fc = mx.sym.FullyConnected(net, num_hidden=6, name="fc")
    sym = mx.sym.Group([mx.sym.softmax(fc, name="sm"), fc * 2.0])
    shapes = {"data": (2, 3, 8, 8)}
    args, aux = _params(sym, shapes)
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, shapes["data"]))
    ref = [o.asnumpy() for o in sym.bind(mx.cpu(), {"data": x, **args}).forward()]
    conv, new_args, _ = amp.convert_model(sym, dict(args), {}, target_dtype=target,
                                          cast_optional_params=True)
    outs = conv.bind(mx.cpu(), {"data": x, **new_args}).forward()
    assert [np.dtype(o.dtype) for o in outs] == [np.float32, np.float32]
    for o, r in zip(outs, ref):
        np.testing.assert_allclose(o.asnumpy(), r, rtol=tol, atol=tol * np.abs(r).max())


def test_convert_symbol_json_round_trip_and_remove_amp_cast():
    with mx.name.NameManager():
        sym = _mlp()
    conv = amp.convert_symbol(sym, target_dtype="bfloat16")
    again = mx.sym.load_json(conv.tojson(remove_amp_cast=False))
    assert _nodes(again) == _nodes(conv)
    plain = json.loads(conv.tojson())
    assert not [n for n in plain["nodes"] if n["op"].startswith("amp_")]


def test_convert_symbol_excluded_and_conditional_and_widest():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    soft = mx.sym.Activation(fc, act_type="softrelu", name="act")
    other = mx.sym.var("other")
    out = mx.sym.broadcast_add(soft, other, name="add")
    conv = amp.convert_symbol(out, "float16", excluded_sym_names=["fc"])
    assert [n[1] for n in _nodes(conv) if n[0].startswith("amp_")] == \
        ["act_output_amp_multicast", "add_0_amp_cast_float32"]
    conv = amp.convert_symbol(out, "float16")
    names = [n[1] for n in _nodes(conv) if n[0].startswith("amp_")]
    # softrelu runs in float32 (a conditional operator); broadcast_add meets an input of
    # unknown dtype, so it gets one multicast
    assert names == ["data_amp_cast_float16", "fc_weight_amp_cast_float16",
                     "fc_bias_amp_cast_float16", "fc_output_amp_cast_float32",
                     "act_output_amp_multicast", "add_0_amp_cast_float32"]


def test_convert_symbol_rejects_bad_lists():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2)
    with pytest.raises(AssertionError, match="Common ops in target_dtype_ops and fp32_ops"):
        amp.convert_symbol(sym, target_dtype_ops=["FullyConnected"],
                           fp32_ops=["FullyConnected"])
    with pytest.raises(AssertionError, match="not in any of them"):
        amp.convert_symbol(sym, target_dtype_ops=["no_such_op"])
    with pytest.raises(AssertionError, match="float16 and bfloat16"):
        amp.convert_symbol(sym, target_dtype="float64")
    with pytest.raises(AssertionError, match="should be Symbol"):
        amp.convert_symbol(mx.nd.ones((1,)))


def test_convert_hybrid_block_bfloat16():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(2).uniform(-1, 1, (4, 5)))
    ref = net(x).asnumpy()
    conv = amp.convert_hybrid_block(net, target_dtype="bfloat16", ctx=mx.cpu(),
                                    cast_optional_params=True)
    assert isinstance(conv, gluon.SymbolBlock)
    weights = [p for n, p in conv.collect_params().items() if n.endswith("weight")]
    assert weights and all(p.dtype == BF16 for p in weights)
    out = conv(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=3e-2, atol=3e-2)
    with pytest.raises(RuntimeError, match="hybridize"):
        amp.convert_hybrid_block(gluon.nn.Dense(2), ctx=mx.cpu())


def test_lists_hold_registered_operators_only_and_are_disjoint():
    for target in ("float16", BF16):
        lp16, fp32 = amp.list_lp16_ops(target), amp.list_fp32_ops(target)
        neutral, widest = amp.list_lp16_fp32_ops(target), amp.list_widest_type_cast(target)
        cond = [c[0] for c in amp.list_conditional_fp32_ops(target)]
        for names in (lp16, fp32, neutral, widest, cond,
                      amp.list_loss_output_functions(target)):
            assert names and all(registry.find(n) is not None for n in names)
        assert not (set(lp16) & set(fp32)) and not (set(cond) & set(fp32 + lp16))
    assert amp.list_lp16_ops("float16") == ["Convolution", "Deconvolution", "FullyConnected",
                                            "RNN"]
    assert amp.list_lp16_ops(BF16) == ["Convolution", "FullyConnected"]
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert amp.list_lp16_use_fp32_params(BF16)["BatchNorm"][1:] == [
        "gamma", "beta", "moving_mean", "moving_var"]
    with pytest.raises(AssertionError, match="not supported type"):
        amp.list_fp32_ops("float64")


# ------------------------------------------------------------------ init()
_WRAPPED_CLASSES = (NDArray, Symbol)
_DUNDERS = ("__add__", "__sub__", "__mul__", "__truediv__", "__mod__", "__pow__", "__eq__",
            "__ne__", "__gt__", "__ge__", "__lt__", "__le__")


@pytest.fixture
def amp_initialized():
    """Run a test after amp.init() and put mx.nd, mx.sym and AMP's state back afterwards
    (init() changes them for the rest of the process, as in MXNet)."""
    modules = []
    for front in (mx.nd, mx.sym):
        modules.append(front)
        for sub in ("_internal", "op", "contrib", "linalg", "sparse", "image", "random"):
            if hasattr(front, sub):
                modules.append(getattr(front, sub))
    saved = [(m, dict(vars(m))) for m in modules]
    methods = [(cls, name, cls.__dict__.get(name)) for cls in _WRAPPED_CLASSES
               for name in _DUNDERS]
    state = (amp_impl._amp_initialized, amp_impl._amp_loss_scale_initialized,
             amp_impl._loss_scaler)

    def init(target="bfloat16", **kwargs):
        amp_impl._amp_initialized = False
        amp_impl._amp_loss_scale_initialized = False
        amp.init(target, **kwargs)
    try:
        yield init
    finally:
        for m, d in saved:
            vars(m).update(d)
        for cls, name, fn in methods:
            if fn is None:
                if name in cls.__dict__:
                    delattr(cls, name)
            else:
                setattr(cls, name, fn)
        (amp_impl._amp_initialized, amp_impl._amp_loss_scale_initialized,
         amp_impl._loss_scaler) = state


def test_init_casts_imperative_operators(amp_initialized):
    amp_initialized("bfloat16")
    x, w, b = mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), mx.nd.ones((4,))
    y = mx.nd.FullyConnected(x, w, b, num_hidden=4)
    assert y.dtype == BF16 and mx.nd.op.FullyConnected(x, w, b, num_hidden=4).dtype == BF16
    np.testing.assert_array_equal(_f32(y), np.full((2, 4), 4.0))
    assert mx.nd.softmax(y).dtype == np.float32           # a float32 operator
    assert mx.nd.relu(y).dtype == BF16                    # runs in what it gets
    assert mx.nd.Activation(y, act_type="softrelu").dtype == np.float32   # conditional
    assert mx.nd.Activation(y, act_type="relu").dtype == BF16
    assert mx.nd.broadcast_add(y, x[:, :1]).dtype == np.float32   # widest input type
    assert (y + x[:, :1]).dtype == np.float32 and (y + y).dtype == BF16
    assert mx.nd.FullyConnected.__name__ == "FullyConnected"


def test_init_gluon_softmax_cross_entropy_runs_in_float32(amp_initialized):
    amp_initialized("bfloat16")
    pred = mx.nd.amp_cast(mx.nd.array([[1.0, 2.0, 3.0], [1.0, 0.0, 0.0]]), dtype="bfloat16")
    loss = gluon.loss.SoftmaxCrossEntropyLoss()(pred, mx.nd.array([2, 0]))
    # values and dtype from MXNet 1.9.1 after amp.init('bfloat16')
    assert loss.dtype == np.float32
    np.testing.assert_allclose(loss.asnumpy(), [0.40760383, 0.55144382], rtol=1e-5)


def test_init_inserts_casts_in_symbols(amp_initialized):
    amp_initialized("bfloat16")
    with mx.name.NameManager():
        d = mx.sym.var("data")
        fc = mx.sym.FullyConnected(d, num_hidden=4, name="fc")
        s = mx.sym.softmax(fc) + fc
        bn = mx.sym.BatchNorm(fc, name="bn")
        out = mx.sym.Group([s, bn])
    # the graph MXNet 1.9.1 builds for the same code after amp.init('bfloat16')
    assert _nodes(out) == [
        ("null", "data", []), ("amp_cast", "amp_cast0", [[0, 0]]),
        ("null", "fc_weight", []), ("amp_cast", "amp_cast1", [[2, 0]]),
        ("null", "fc_bias", []), ("amp_cast", "amp_cast2", [[4, 0]]),
        ("FullyConnected", "fc", [[1, 0], [3, 0], [5, 0]]),
        ("amp_cast", "amp_cast3", [[6, 0]]), ("softmax", "softmax0", [[7, 0]]),
        ("amp_multicast", "amp_multicast0", [[8, 0], [6, 0]]),
        ("elemwise_add", "_plus0", [[9, 0], [9, 1]]),
        ("null", "bn_gamma", []), ("null", "bn_beta", []), ("null", "bn_moving_mean", []),
        ("null", "bn_moving_var", []),
        ("BatchNorm", "bn", [[6, 0], [11, 0], [12, 0], [13, 0], [14, 0]])]
    assert out.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]


def test_init_user_lists_and_loss_output_scaling(amp_initialized, caplog):
    amp_initialized("float16", target_precision_ops=["FullyConnected"], fp32_ops=[],
                    conditional_fp32_ops=[])
    x = mx.nd.ones((2, 3))
    assert mx.nd.softmax(x.astype("float16")).dtype == np.float16   # not wrapped now
    # MXNet: an imperative loss output's grad_scale carries the loss scale
    data = mx.nd.array([[1.0, 2.0]])
    data.attach_grad()
    with autograd.record():
        out = mx.nd.SoftmaxOutput(data, mx.nd.array([0]))
    out.backward()
    p = np.exp([1.0, 2.0]) / np.exp([1.0, 2.0]).sum()
    np.testing.assert_allclose(data.grad.asnumpy(), [(p - [1, 0]) * 2.0 ** 16], rtol=1e-5)
    with caplog.at_level(logging.WARNING):
        mx.sym.SoftmaxOutput(mx.sym.var("d"))
    assert "does not support dynamic loss scaling" in caplog.text


# ------------------------------------------------------------------ loss scaling
def _trainer_setup(amp_init):
    amp_init("bfloat16")
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(0.5))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(trainer)
    return net, trainer


def test_scale_loss_skips_overflowing_steps_and_halves_the_scale(amp_initialized):
    net, trainer = _trainer_setup(amp_initialized)
    scaler = trainer._amp_loss_scaler
    x = mx.nd.ones((1, 3))
    for bad in (np.inf, 1.0):
        with autograd.record():
            loss = net(x * bad).sum()
            with amp.scale_loss(loss, trainer) as scaled:
                assert np.isclose(_f32(scaled), _f32(loss) * 2.0 ** 16).all()
                scaled.backward()
        before = net.weight.data().asnumpy().copy()
        trainer.step(1)
        after = net.weight.data().asnumpy()
        if bad == np.inf:
            np.testing.assert_array_equal(after, before)      # the step was skipped
            assert scaler.loss_scale == 2.0 ** 16             # the new scale comes next step
        else:
            assert scaler.loss_scale == 2.0 ** 15
            # the gradient is unscaled by the factor the loss was scaled by: 1 per weight
            np.testing.assert_allclose(after, before - 0.1, rtol=1e-2)


def test_loss_scale_grows_after_a_window_of_clean_steps(amp_initialized):
    net, trainer = _trainer_setup(amp_initialized)
    scaler = trainer._amp_loss_scaler
    scaler._scale_seq_len = 3
    for _ in range(4):
        with autograd.record():
            with amp.scale_loss(net(mx.nd.ones((1, 3))).sum(), trainer) as scaled:
                scaled.backward()
        trainer.step(1)
    assert scaler.loss_scale == 2.0 ** 17
    scaler._loss_scale = scaler._next_loss_scale = 2.0 ** 24
    scaler._unskipped = 2
    scaler.has_overflow(trainer._params)
    assert scaler._next_loss_scale == 2.0 ** 24                 # capped


def test_unscale_and_trainer_errors(amp_initialized):
    net, trainer = _trainer_setup(amp_initialized)
    with autograd.record():
        with amp.scale_loss([net(mx.nd.ones((1, 3))).sum()], trainer) as scaled:
            assert isinstance(scaled, list)
            scaled[0].backward()
    amp.unscale(trainer)
    np.testing.assert_allclose(net.weight.grad().asnumpy(), np.ones((2, 3)), rtol=1e-2)
    assert trainer._scale == 1.0
    with pytest.raises(TypeError, match="only compatible with Gluon Trainer"):
        amp.init_trainer(mx.optimizer.SGD())
    with pytest.raises(TypeError, match="should be a Gluon Trainer"):
        amp.unscale(object())
    other = gluon.Trainer(net.collect_params(), "sgd")
    with pytest.raises(AssertionError, match="init_trainer"):
        with amp.scale_loss(mx.nd.ones((1,)), other):
            pass


def test_init_trainer_needs_init(monkeypatch):
    monkeypatch.setattr(amp_impl, "_amp_initialized", False)
    net = gluon.nn.Dense(1, in_units=1)
    net.initialize()
    with pytest.raises(AssertionError, match="forget to call amp.init"):
        amp.init_trainer(gluon.Trainer(net.collect_params(), "sgd"))


def test_loss_scaler_checks_every_chunk():
    class P:
        def __init__(self, value):
            self._grad = [mx.nd.full((2,), value)]
    scaler = LossScaler()
    params = [P(1.0) for _ in range(250)] + [P(np.nan)]
    assert scaler.has_overflow(params) is True
    assert scaler.has_overflow([P(1.0), P(2.0)]) is False
    assert scaler.loss_scale == 2.0 ** 15

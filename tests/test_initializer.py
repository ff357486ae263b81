"""mx.init: name dispatch, __init__ attributes, registry, and each initializer's values."""
import json
import logging
import warnings

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import initializer as init
from mxtorch.initializer import InitDesc


def _arr(shape, fill=5.0):
    return mx.nd.array(np.full(shape, fill, dtype=np.float32))


@pytest.mark.parametrize("name, expected", [("fc_weight", None), ("fc_bias", 0.0),
                                            ("bn_gamma", 1.0), ("bn_beta", 0.0),
                                            ("q_min", 0.0), ("q_max", 1.0)])
def test_desc_suffix_dispatch(name, expected):
    a = _arr((3, 4))
    init.Uniform(0.1)(InitDesc(name), a)
    v = a.asnumpy()
    if expected is None:
        assert np.all(np.abs(v) <= 0.1) and np.unique(v).size > 1
    else:
        np.testing.assert_array_equal(v, expected)


def test_desc_unknown_suffix_raises():
    # MXNet: an InitDesc ending in moving_mean has no default (only the legacy path has one).
    for name in ["bn_moving_mean", "data"]:
        with pytest.raises(ValueError, match="Unknown initialization pattern for " + name):
            init.Uniform()(InitDesc(name), _arr((2,)))


def test_legacy_string_dispatch():
    cases = {"bn_moving_mean": 0.0, "bn_moving_var": 1.0, "x_moving_inv_var": 0.0,
             "x_moving_avg": 0.0, "fc_bias": 0.0, "bn_gamma": 1.0}
    for name, value in cases.items():
        a = _arr((2, 3))
        with pytest.warns(DeprecationWarning):
            init.Uniform()(name, a)
        np.testing.assert_array_equal(a.asnumpy(), value)
    a = _arr((1, 1, 2, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        init.Uniform()("upsampling0_weight", a)
        np.testing.assert_allclose(a.asnumpy().ravel(), [0.0625, 0.1875, 0.1875, 0.0625,
                                                         0.1875, 0.5625, 0.5625, 0.1875])
        a = _arr((6,))
        init.Uniform()("stn_loc_bias", a)
        np.testing.assert_array_equal(a.asnumpy(), [1, 0, 0, 0, 1, 0])
        with pytest.raises(TypeError, match="arr must be NDArray"):
            init.Uniform()("fc_weight", np.zeros(3))


def test_init_attr_takes_priority():
    a = _arr((2, 3))
    desc = InitDesc("fc_bias", attrs={"__init__": '["constant", {"value": 2.5}]'})
    init.Uniform()(desc, a)
    np.testing.assert_array_equal(a.asnumpy(), 2.5)
    for name, value in [("ones", 1.0), ("zeros", 0.0), ("one", 1.0), ("zero", 0.0)]:
        init.Uniform()(InitDesc("foo", attrs={"__init__": name}), a)
        np.testing.assert_array_equal(a.asnumpy(), value)
    with pytest.raises(AssertionError, match="bogus is not registered"):
        init.Uniform()(InitDesc("foo", attrs={"__init__": "bogus"}), a)


def test_global_init_filled_in():
    desc = InitDesc("fc_weight")
    glob = init.Zero()
    glob(desc, _arr((2, 2)))
    assert desc.global_init is glob and desc.attrs == {}


def test_create_and_dumps():
    assert isinstance(init.create("xavier"), init.Xavier)
    assert isinstance(init.create("MSRAPrelu"), init.MSRAPrelu)
    assert init.create('["normal", {"sigma": 0.5}]').sigma == 0.5
    x = init.Xavier()
    assert init.create(x) is x
    assert init.Normal(0.5).dumps() == '["normal", {"sigma": 0.5}]'
    assert init.Zero().dumps() == '["zero", {}]'
    assert init.LSTMBias().dumps() == '["lstmbias", {"forget_bias": 1.0}]'
    assert init.Xavier(factor_type="in", magnitude=2.34).dumps() == \
        '["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2.34}]'
    assert init.MSRAPrelu().dumps() == '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'
    assert init.Constant(mx.nd.array([1, 1])).dumps() == '["constant", {"value": [1.0, 1.0]}]'
    assert init.FusedRNN(init.Normal(0.5), 2, 1, "lstm").dumps() == (
        '["fusedrnn", {"init": "[\\"normal\\", {\\"sigma\\": 0.5}]", "num_hidden": 2, '
        '"num_layers": 1, "mode": "lstm", "bidirectional": false, "forget_bias": 1.0}]')
    assert init.Xavier() == init.Xavier() and init.Xavier() != init.Xavier(magnitude=2)


def test_register_custom():
    @init.register
    @init.alias("mytestinit_alias")
    class MyTestInit(init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 0.25

    a = _arr((2,))
    init.Zero()(InitDesc("w", attrs={"__init__": "mytestinit_alias"}), a)
    np.testing.assert_array_equal(a.asnumpy(), 0.25)
    assert isinstance(init.create("mytestinit"), MyTestInit)


def test_uniform_normal_statistics_and_seed():
    a = _arr((200, 200))
    mx.random.seed(7)
    init.Uniform(0.5)(InitDesc("w_weight"), a)
    v = a.asnumpy()
    assert v.min() >= -0.5 and v.max() <= 0.5
    assert abs(v.mean()) < 0.01 and abs(v.std() - 0.5 / np.sqrt(3)) < 0.01
    mx.random.seed(7)
    b = _arr((200, 200))
    init.Uniform(0.5)(InitDesc("w_weight"), b)
    np.testing.assert_array_equal(v, b.asnumpy())
    init.Normal(0.2)(InitDesc("w_weight"), a)
    assert abs(a.asnumpy().std() - 0.2) < 0.005 and abs(a.asnumpy().mean()) < 0.005


def test_xavier_scales():
    a = _arr((64, 32, 3, 3))
    init.Xavier()(InitDesc("conv_weight"), a)
    bound = np.sqrt(3.0 / ((32 * 9 + 64 * 9) / 2.0))
    v = a.asnumpy()
    assert v.max() <= bound and v.min() >= -bound and v.max() > 0.9 * bound
    init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2)(InitDesc("c_weight"), a)
    assert abs(a.asnumpy().std() - np.sqrt(2.0 / (32 * 9))) < 0.003
    init.Xavier(factor_type="out")(InitDesc("c_weight"), a)
    assert np.abs(a.asnumpy()).max() <= np.sqrt(3.0 / (64 * 9))
    init.MSRAPrelu()(InitDesc("c_weight"), a)
    assert abs(a.asnumpy().std() - np.sqrt(2.0 / 1.0625 / (48 * 9))) < 0.003
    with pytest.raises(ValueError, match="cannot be applied to vector fc_weight"):
        init.Xavier()(InitDesc("fc_weight"), _arr((3,)))
    with pytest.raises(ValueError, match="Incorrect factor type"):
        init.Xavier(factor_type="bad")(InitDesc("fc_weight"), _arr((3, 3)))
    with pytest.raises(ValueError, match="Unknown random type"):
        init.Xavier(rnd_type="bad")(InitDesc("fc_weight"), _arr((3, 3)))


@pytest.mark.parametrize("shape, rand_type", [((4, 10), "uniform"), ((4, 2, 5), "normal"),
                                              ((10, 4), "uniform")])
def test_orthogonal(shape, rand_type):
    a = _arr(shape)
    init.Orthogonal(scale=2.0, rand_type=rand_type)(InitDesc("w_weight"), a)
    m = a.asnumpy().reshape(shape[0], -1)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-4)


def test_bilinear_matches_mxnet():
    a = _arr((1, 1, 3, 5))
    init.Bilinear()(InitDesc("up_weight"), a)
    # Values printed by MXNet 1.9.1 for the same shape.
    expected = [1 / 9, 2 / 9, 1 / 3, 2 / 9, 1 / 9, 2 / 9, 4 / 9, 2 / 3, 4 / 9, 2 / 9,
                1 / 3, 2 / 3, 1.0, 2 / 3, 1 / 3]
    np.testing.assert_allclose(a.asnumpy().ravel(), expected, rtol=1e-6)
    b = _arr((2, 3, 4, 4))
    init.Bilinear()(InitDesc("up_weight"), b)
    np.testing.assert_array_equal(b.asnumpy()[1, 2], b.asnumpy()[0, 0])


def test_constant_one_zero_lstmbias():
    a = _arr((2, 3))
    init.Constant(mx.nd.array(np.arange(6).reshape(2, 3)))(InitDesc("w_weight"), a)
    np.testing.assert_array_equal(a.asnumpy(), np.arange(6).reshape(2, 3))
    init.One()(InitDesc("w_weight"), a)
    np.testing.assert_array_equal(a.asnumpy(), 1)
    c = _arr((8,))
    desc = InitDesc("x_bias", attrs={"__init__": init.LSTMBias(2.0).dumps()})
    init.Uniform()(desc, c)
    np.testing.assert_array_equal(c.asnumpy(), [0, 0, 2, 2, 0, 0, 0, 0])


def test_fused_rnn_layout():
    # lstm, 1 layer, input 3, hidden 2: 4 gates * 2 * (3 + 2) weights, then 2 * 4 * 2 biases.
    p = _arr((4 * 2 * (3 + 2 + 2),))
    fused = init.FusedRNN(init.Constant(0.5), 2, 1, "lstm", forget_bias=1.0)
    init.Uniform()(InitDesc("rnn_parameters", attrs={"__init__": fused.dumps()}), p)
    bias = [0, 0, 1, 1, 0, 0, 0, 0]
    np.testing.assert_array_equal(p.asnumpy(), [0.5] * 40 + bias + bias)
    # init=None falls back on the global initializer; gru biases are zero.
    q = _arr((3 * 2 * (3 + 2 + 2) * 2,))
    fused = init.FusedRNN(None, 2, 1, "gru", bidirectional=True)
    init.Uniform(0.07)(InitDesc("rnn_parameters", attrs={"__init__": fused.dumps()}), q)
    v = q.asnumpy()
    np.testing.assert_array_equal(v[-24:], 0)
    assert np.all(np.abs(v[:-24]) <= 0.07) and np.unique(v[:-24]).size > 10


def test_mixed_and_load(tmp_path, caplog):
    mixed = init.Mixed(["bias", ".*"], [init.Zero(), init.One()])
    a, b = _arr((2,)), _arr((2,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mixed("fc_bias", a)
        mixed("fc_weight", b)
    np.testing.assert_array_equal(a.asnumpy(), 0)
    np.testing.assert_array_equal(b.asnumpy(), 1)
    with pytest.raises(ValueError, match="did not match any pattern"):
        init.Mixed(["bias"], [init.Zero()])("fc_weight", a)
    params = {"arg:fc_weight": mx.nd.array([1.0, 2.0]), "aux:bn_moving_mean": mx.nd.array([3.0])}
    loader = init.Load(params, default_init=init.Constant(7), verbose=True)
    assert sorted(loader.param) == ["bn_moving_mean", "fc_weight"]
    with caplog.at_level(logging.INFO), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loader("fc_weight", a)
        c = _arr((3,))
        loader("other_weight", c)
    np.testing.assert_array_equal(a.asnumpy(), [1, 2])
    np.testing.assert_array_equal(c.asnumpy(), 7)
    assert "Initialized fc_weight by loading" in caplog.text
    assert "Initialized other_weight by default" in caplog.text
    with pytest.raises(AssertionError, match="Shape mismatch"):
        loader("fc_weight", _arr((3,)))
    with pytest.raises(AssertionError, match="no default Initializer"):
        init.Load(params)("missing", a)


def test_verbose_logging(caplog):
    x = init.One().set_verbosity(True)
    with caplog.at_level(logging.INFO):
        x(InitDesc("fc_weight"), _arr((4,)))
    assert "Initialized fc_weight as weight: 1.0" in caplog.text
    x = init.Zero().set_verbosity(True, print_func=lambda arr: "stat")
    with caplog.at_level(logging.INFO):
        x(InitDesc("w", attrs={"__init__": json.dumps(["one", {}])}), _arr((4,)))
    assert 'Initialized w as ["one", {}]: stat' in caplog.text


def test_operator_inputs_get_their_default_initializer_on_composition():
    """MXNet gives PReLU's gamma a Constant(0.25) init and bilinear UpSampling's weight a
    Bilinear one when the variable fed there has no init; a user's variable included."""
    data = mx.sym.Variable("data")
    prelu = mx.sym.LeakyReLU(data=data, act_type="prelu", name="p")
    assert prelu.attr_dict()["p_gamma"]["__init__"] == '["Constant", {"value": 0.25}]'
    gamma = mx.sym.Variable("g")
    mx.sym.LeakyReLU(data=data, gamma=gamma, act_type="prelu")
    assert gamma.attr("__init__") == '["Constant", {"value": 0.25}]'
    own = mx.sym.Variable("own", init=mx.init.One())
    mx.sym.LeakyReLU(data=data, gamma=own, act_type="prelu")
    assert own.attr("__init__") == '["one", {}]'
    up = mx.sym.UpSampling(data, scale=2, sample_type="bilinear", num_filter=1, num_args=2,
                           name="up")
    assert up.attr_dict()["up_weight"]["__init__"] == '["bilinear", {}]'
    mm = mx.sym.Variable("mm")
    mx.sym.BatchNorm(data=data, moving_mean=mm, name="bn")
    assert mm.attr("__init__") == '["zero", {}]'


def test_module_initializes_prelu_gamma_to_0_25():
    sym = mx.sym.LeakyReLU(data=mx.sym.Variable("data"), act_type="prelu")
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind(data_shapes=[("data", (4, 3))])
    mod.init_params()
    gamma, = mod.get_params()[0].values()
    np.testing.assert_array_equal(gamma.asnumpy(), np.full((3,), 0.25, np.float32))

"""mx.contrib.svrg_optimization: SVRGModule and _SVRGOptimizer vs MXNet 1.9.1."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.contrib.svrg_optimization.svrg_module import SVRGModule
from mxtorch.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer


def _regression():
    x, y = mx.sym.Variable("data"), mx.sym.Variable("lin_reg_label")
    fc = mx.sym.FullyConnected(data=x, name="fc1", num_hidden=1)
    return mx.sym.LinearRegressionOutput(data=fc, label=y, name="lro")


def test_svrg_fit_matches_mxnet():
    rs = np.random.RandomState(0)
    data = rs.randint(1, 5, [70, 2]).astype("float32")
    it = mx.io.NDArrayIter(data, data.dot([1.0, 2.0]), batch_size=16, shuffle=False,
                           label_name="lin_reg_label")
    mod = SVRGModule(symbol=_regression(), data_names=["data"], label_names=["lin_reg_label"],
                     update_freq=2)
    mod.fit(it, eval_metric="mse", optimizer="sgd", optimizer_params=(("learning_rate", 0.02),),
            num_epoch=3, kvstore="local", initializer=mx.init.Zero())
    assert type(mod._optimizer).__name__ == "_SVRGOptimizer"
    assert mod._mod_aux.binded
    arg = mod.get_params()[0]
    # real MXNet 1.9.1 on the same data
    np.testing.assert_allclose(arg["fc1_weight"].asnumpy(), [[1.522664, 1.9337375]], rtol=1e-5)
    np.testing.assert_allclose(arg["fc1_bias"].asnumpy(), [0.5951036], rtol=1e-5)
    np.testing.assert_allclose(mod._param_dict[0]["fc1_weight"].asnumpy(),
                               [[-22.033102, -48.776527]], rtol=1e-5)


def test_svrg_module_checks_update_freq():
    with pytest.raises(TypeError, match="update_freq"):
        SVRGModule(_regression(), label_names=["lin_reg_label"], update_freq=None)
    with pytest.raises(ValueError, match="positive integer"):
        SVRGModule(_regression(), label_names=["lin_reg_label"], update_freq=0)


def test_svrg_optimizer_routes_full_keys_to_assignment():
    svrg = _SVRGOptimizer(default_optimizer="sgd", param_idx2name={0: "w", 1: "w_full"},
                          learning_rate=1.0)
    assert svrg.default_opt.lr == 1.0 and svrg.lr == 1.0
    kv = mx.kv.create("local")
    kv.set_optimizer(svrg)
    w, w_full = mx.nd.array([0, 0, 0]), mx.nd.array([1, 1, 1])
    kv.init(0, w)
    kv.push(0, mx.nd.array([1, 1, 1]))
    kv.pull(0, w)
    kv.init(1, w_full)
    kv.push(1, mx.nd.array([2, 2, 2]))
    kv.pull(1, w_full)
    np.testing.assert_array_equal(w.asnumpy(), [-1, -1, -1])       # SGD step
    np.testing.assert_array_equal(w_full.asnumpy(), [2, 2, 2])     # assigned

"""mx.monitor: Monitor on a bound executor (expected stats from MXNet 1.9.1)."""
import logging

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import monitor


def _bound():
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc1")
    act = mx.sym.Activation(fc, act_type="relu", name="relu1")
    exe = act.simple_bind(mx.cpu(), data=(2, 4))
    exe.arg_dict["data"][:] = mx.nd.array(np.arange(8).reshape(2, 4) / 8.0)
    exe.arg_dict["fc1_weight"][:] = mx.nd.array((np.arange(12).reshape(3, 4) - 6) / 10.0)
    exe.arg_dict["fc1_bias"][:] = mx.nd.array([0.1, -0.2, 0.3])
    return exe


# MXNet 1.9.1: Monitor(1, sort=True) on this executor
EXPECTED = {"data": 0.5229125, "fc1_bias": 0.2160247, "fc1_output": 0.7570502,
            "fc1_weight": 0.3488075, "relu1_output": 0.59808725}


def _values(res):
    return {k: float(v.rstrip("\t")) for _, k, v in res}


def test_monitor_collects_outputs_and_arguments():
    exe = _bound()
    mon = monitor.Monitor(1, sort=True)
    mon.install(exe)
    mon.tic()
    exe.forward(is_train=False)
    res = mon.toc()
    assert [k for _, k, _ in res] == sorted(EXPECTED)
    assert all(step == 1 and v.endswith("\t") for step, _, v in res)
    got = _values(res)
    for k, v in EXPECTED.items():
        assert got[k] == pytest.approx(v, rel=1e-6)
    assert mon.toc() == []  # not activated any more


def test_monitor_pattern_interval_and_stat_func():
    exe = _bound()
    mon = monitor.Monitor(2, pattern="fc1_.*")
    mon.install(exe)
    steps = []
    for _ in range(3):
        mon.tic()
        exe.forward()
        steps.append(mon.toc())
    assert [[k for _, k, _ in r] for r in steps] == [
        ["fc1_output", "fc1_weight", "fc1_bias"], [], ["fc1_output", "fc1_weight", "fc1_bias"]]
    assert [r[0][0] for r in (steps[0], steps[2])] == [1, 3]
    custom = monitor.Monitor(1, stat_func=lambda x: [mx.nd.max(x), mx.nd.min(x) * 2],
                             pattern="relu1_output")
    custom.install(exe)
    custom.tic()
    exe.forward()
    (step, name, text), = custom.toc()
    out = exe.outputs[0].asnumpy()
    assert name == "relu1_output"
    a, b = [float(x) for x in text.split("\t")[:2]]
    assert (a, b) == (pytest.approx(out.max()), pytest.approx(out.min() * 2))
    shaped = monitor.Monitor(1, stat_func=lambda x: x[0], pattern="fc1_bias")
    shaped.install(exe)
    shaped.tic()
    exe.forward()
    assert shaped.toc()[0][2] == str(np.float32(0.1)) + "\t"


def test_monitor_all_and_toc_print(caplog):
    exe = _bound()
    mon = monitor.Monitor(1, pattern="fc1_.*", monitor_all=True)
    mon.install(exe)
    mon.tic()
    exe.forward()
    names = [k for _, k, _ in mon.toc()]
    assert "fc1_data" in names and "fc1_output" in names
    mon.tic()
    exe.forward()
    with caplog.at_level(logging.INFO):
        mon.toc_print()
    assert "Batch:       2 fc1_output" in caplog.text


def test_monitor_sees_backward_node_outputs():
    """MXNet's executor also reports each backward node's outputs: the gradient of every
    input of the operator (``_output`` for one input, ``_output<i>`` for several)."""
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=2, name="fc_0")
    act = mx.sym.Activation(fc, act_type="sigmoid", name="act_0")
    out = mx.sym.LinearRegressionOutput(act, name="lro", grad_scale=2)
    exe = out.simple_bind(mx.cpu(), data=(1, 2), lro_label=(1, 2),
                          grad_req={"data": "null", "fc_0_weight": "write",
                                    "fc_0_bias": "write", "lro_label": "null"})
    exe.copy_params_from({"data": mx.nd.array([[0.05, 0.10]]),
                          "fc_0_weight": mx.nd.array([[.15, .20], [.25, .30]]),
                          "fc_0_bias": mx.nd.array([.35, .35]),
                          "lro_label": mx.nd.array([[.01, .99]])})
    mean_abs = lambda x: mx.nd.sum(mx.nd.abs(x)) / x.size  # noqa: E731
    mon = monitor.Monitor(1, stat_func=mean_abs, pattern=".*backward.*", sort=True)
    mon.install(exe)
    mon.tic()
    exe.forward(is_train=True)
    exe.backward()
    got = _values(mon.toc())
    # MXNet 1.9.1's values (the gradients of data and label, which nothing asked for,
    # are uninitialized memory there and zeros here)
    assert sorted(got) == ["act_0_backward_output", "fc_0_backward_output0",
                           "fc_0_backward_output1", "fc_0_backward_output2",
                           "lro_backward_output0", "lro_backward_output1"]
    np.testing.assert_allclose([got["lro_backward_output0"], got["act_0_backward_output"],
                                got["fc_0_backward_output1"], got["fc_0_backward_output2"]],
                               [0.4881928, 0.117666185, 0.008824964, 0.117666185], rtol=1e-5)
    assert got["fc_0_backward_output0"] == 0.0 and got["lro_backward_output1"] == 0.0

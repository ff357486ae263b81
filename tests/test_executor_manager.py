"""Legacy executor manager (seed 002) and mx.model.FeedForward trained through it."""
import logging
import warnings

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import executor_manager as em
from mxtorch import io
from mxtorch import initializer as init
from mxtorch.feedforward import FeedForward


def _mlp():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _blobs(n=300, dim=6, classes=3, seed=0):
    rng = np.random.RandomState(seed)
    centers = rng.randn(classes, dim).astype(np.float32) * 3
    y = rng.randint(0, classes, n)
    return (centers[y] + rng.randn(n, dim)).astype(np.float32), y.astype(np.float32)


def test_split_input_slice():
    assert em._split_input_slice(10, [1, 1]) == [slice(0, 5), slice(5, 10)]
    assert em._split_input_slice(10, [1, 2, 2]) == [slice(0, 2), slice(2, 6), slice(6, 10)]
    assert em._split_input_slice(7, [1, 1]) == [slice(0, 4), slice(4, 7)]
    with pytest.raises(ValueError, match="Too many slices. Some splits are empty."):
        em._split_input_slice(2, [1, 1, 1])


def test_check_arguments_duplicated_names():
    data = mx.sym.Variable("data")
    a = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    b = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    with pytest.raises(ValueError, match='Find duplicated argument name "fc_weight"'):
        em._check_arguments(a + b)
    em._check_arguments(_mlp())  # no duplicates: no error


def test_load_general_slices_and_checks_batch_size():
    src = mx.nd.array(np.arange(12, dtype=np.float32).reshape(6, 2))
    d1, d2 = mx.nd.zeros((2, 2)), mx.nd.zeros((4, 2))
    em._load_general([src], [[(slice(0, 2), d1), (slice(2, 6), d2)]])
    np.testing.assert_array_equal(d2.asnumpy(), src.asnumpy()[2:])
    with pytest.raises(AssertionError, match="Batch size miss match. Expected 5, got 6"):
        em._load_general([src], [[(slice(0, 5), mx.nd.zeros((5, 2)))]])


def test_bind_exec_shares_params_and_warns_on_bucket_reallocation(caplog):
    sym = _mlp()
    params = [n for n in sym.list_arguments() if n not in ("data", "softmax_label")]
    shared = {}
    base = em._bind_exec(sym, mx.cpu(), {"data": (4, 6), "softmax_label": (4,)}, params,
                         need_grad=True, shared_data_arrays=shared)
    small = em._bind_exec(sym, mx.cpu(), {"data": (2, 6), "softmax_label": (2,)}, params,
                          need_grad=True, base_exec=base, shared_data_arrays=shared)
    assert small.arg_dict["fc1_weight"] is base.arg_dict["fc1_weight"]
    assert small.grad_dict["fc1_weight"] is base.grad_dict["fc1_weight"]
    assert small.arg_dict["data"].shape == (2, 6)
    with caplog.at_level(logging.WARNING):
        em._bind_exec(sym, mx.cpu(), {"data": (8, 6), "softmax_label": (8,)}, params,
                      need_grad=True, base_exec=base, shared_data_arrays=shared)
    assert any('bucketing: data "data" has a shape (8, 6), which is larger than already '
               'allocated shape (4, 6). Need to re-allocate.' in r.getMessage()
               for r in caplog.records)
    assert shared["data"].shape == (8, 6)
    with pytest.raises(AssertionError, match="need_grad must be boolean or set."):
        em._bind_exec(sym, mx.cpu(), {"data": (4, 6)}, params, need_grad="yes")


def test_executor_manager_two_devices_keeps_params_identical():
    x, y = _blobs(n=40)
    it = io.NDArrayIter(x, y, batch_size=20)
    sym = _mlp()
    args = sym.list_arguments()
    params = [n for n in args if n not in ("data", "softmax_label")]
    mgr = em.DataParallelExecutorManager(sym, [mx.cpu(0), mx.cpu(1)], it, args, params,
                                         sym.list_auxiliary_states())
    assert mgr.slices == [slice(0, 10), slice(10, 20)]
    arg_shapes, _, _ = sym.infer_shape(data=(20, 6))
    rng = np.random.RandomState(0)
    arg_params = {n: mx.nd.array(rng.randn(*s) * 0.1) for n, s in zip(args, arg_shapes)
                  if n in params}
    mgr.set_params(arg_params, {})
    batch = next(iter(it))
    mgr.load_data_batch(batch)
    mgr.forward(is_train=True)
    mgr.backward()
    # the per-device gradients sum to the single-device gradient of the whole batch
    exe = sym.simple_bind(mx.cpu(), data=(20, 6), softmax_label=(20,))
    exe.copy_params_from(arg_params)
    exe.forward(is_train=True, data=batch.data[0], softmax_label=batch.label[0])
    exe.backward()
    for name, block in zip(mgr.param_names, mgr.grad_arrays):
        np.testing.assert_allclose(sum(g.asnumpy() for g in block),
                                   exe.grad_dict[name].asnumpy(), rtol=1e-5, atol=1e-6)
    out = {n: mx.nd.zeros(v.shape) for n, v in arg_params.items()}
    mgr.copy_to(out, {})
    np.testing.assert_allclose(out["fc1_weight"].asnumpy(), arg_params["fc1_weight"].asnumpy(),
                               rtol=1e-6)


def test_feedforward_fit_predict_score_save_load(tmp_path):
    x, y = _blobs()
    with pytest.warns(DeprecationWarning, match="FeedForward has been deprecated"):
        model = FeedForward(_mlp(), ctx=[mx.cpu(0), mx.cpu(1)], num_epoch=4,
                            numpy_batch_size=30, initializer=init.Xavier(),
                            learning_rate=0.1, momentum=0.9)
    mx.random.seed(0)
    model.fit(x, y)
    pred = model.predict(x)
    assert pred.shape == (300, 3)
    acc = model.score(io.NDArrayIter(x, y, batch_size=30))
    assert acc > 0.95  # threshold: 95% on separable blobs
    assert np.mean(pred.argmax(1) == y) == pytest.approx(acc)
    prefix = str(tmp_path / "ff")
    model.save(prefix)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        loaded = FeedForward.load(prefix, 4)
    np.testing.assert_allclose(loaded.predict(x), pred, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="y must be specified"):
        model.fit(x)

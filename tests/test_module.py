"""mx.mod.Module (seed 003) and its DataParallelExecutorGroup: training, checkpoints,
real MXNet 1.9.1 fixtures, several contexts, error and warning paths."""
import json
import logging
import os

import numpy as np
import pytest

import mxtorch as mx
from helpers import FIXTURES
from mxtorch import io
from mxtorch import module as mod
from mxtorch import initializer as init

FIX = os.path.join(FIXTURES, 'models')


def _mlp(num_hidden=32, num_classes=4):
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=num_hidden, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=num_classes, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _cnn():
    data = mx.sym.Variable("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=8, pad=(1, 1), name="conv1")
    net = mx.sym.BatchNorm(net, name="bn1")
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max")
    net = mx.sym.Flatten(net)
    net = mx.sym.FullyConnected(net, num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _blobs(n=400, dim=10, classes=4, seed=0):
    rng = np.random.RandomState(seed)
    centers = rng.randn(classes, dim).astype(np.float32) * 3
    y = rng.randint(0, classes, n)
    x = centers[y] + rng.randn(n, dim).astype(np.float32)
    return x.astype(np.float32), y.astype(np.float32)


def _fit(context=None, num_epoch=3, seed=1, **kw):
    x, y = _blobs()
    m = mod.Module(_mlp(), context=context or mx.cpu())
    mx.random.seed(seed)
    m.fit(io.NDArrayIter(x, y, batch_size=40), num_epoch=num_epoch,
          initializer=init.Xavier(), optimizer_params={"learning_rate": 0.1,
                                                       "momentum": 0.9}, **kw)
    return m, x, y


# ---------------------------------------------------------------------- training
def test_mlp_fit_reaches_accuracy_and_logs(caplog):
    x, y = _blobs()
    m = mod.Module(_mlp())
    with caplog.at_level(logging.INFO):
        m.fit(io.NDArrayIter(x, y, batch_size=40, shuffle=True),
              eval_data=io.NDArrayIter(x, y, batch_size=40), num_epoch=4,
              initializer=init.Xavier(), optimizer_params={"learning_rate": 0.1})
    msgs = [r.getMessage() for r in caplog.records]
    assert any(s.startswith("Epoch[3] Train-accuracy=") for s in msgs)
    assert any(s.startswith("Epoch[0] Time cost=") for s in msgs)
    assert any(s.startswith("Epoch[3] Validation-accuracy=") for s in msgs)
    (name, acc), = m.score(io.NDArrayIter(x, y, batch_size=40), "acc")
    assert name == "accuracy" and acc > 0.95  # threshold: 95% on separable blobs


def test_cnn_fit_reaches_accuracy():
    rng = np.random.RandomState(3)
    y = rng.randint(0, 2, 200)
    x = rng.randn(200, 1, 8, 8).astype(np.float32) * 0.5
    x[y == 1, :, :4, :] += 1.5  # class 1: bright top half
    m = mod.Module(_cnn())
    m.fit(io.NDArrayIter(x, y.astype(np.float32), batch_size=20, shuffle=True),
          num_epoch=3, initializer=init.Xavier(),
          optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    (_, acc), = m.score(io.NDArrayIter(x, y.astype(np.float32), batch_size=20), "acc")
    assert acc > 0.9  # threshold: 90%


def test_predict_removes_padding_and_merges():
    m, x, y = _fit(num_epoch=1)
    it = io.NDArrayIter(x[:90], y[:90], batch_size=40)  # last batch padded by 30
    out = m.predict(it)
    assert out.shape == (90, 4)
    per_batch = m.predict(it, merge_batches=False)
    assert [o[0].shape[0] for o in per_batch] == [40, 40, 10]
    assert isinstance(m.predict(it, always_output_list=True), list)
    np.testing.assert_allclose(out.asnumpy()[:40], per_batch[0][0].asnumpy())
    outs = [o[0].shape[0] for o, _, _ in m.iter_predict(it)]
    assert outs == [40, 40, 10]
    direct = m.predict(x[:40])  # numpy input: one forward
    np.testing.assert_allclose(direct.asnumpy(), out.asnumpy()[:40], rtol=1e-5)


def test_forward_reshapes_for_a_new_batch_size():
    m, x, y = _fit(num_epoch=1)
    full = m.predict(io.NDArrayIter(x[:40], y[:40], batch_size=40)).asnumpy()
    m.forward(io.DataBatch([mx.nd.array(x[:7])], [mx.nd.array(y[:7])]), is_train=False)
    assert m.get_outputs()[0].shape == (7, 4)
    np.testing.assert_allclose(m.get_outputs()[0].asnumpy(), full[:7], rtol=1e-5, atol=1e-6)
    assert m.data_shapes[0].shape == (7, 10)


def test_params_roundtrip_and_fixed_params(tmp_path):
    m, x, y = _fit(num_epoch=1)
    fname = str(tmp_path / "p.params")
    m.save_params(fname)
    m2 = mod.Module(_mlp())
    m2.bind(data_shapes=[("data", (40, 10))], label_shapes=[("softmax_label", (40,))])
    m2.load_params(fname)
    for k, v in m.get_params()[0].items():
        np.testing.assert_array_equal(v.asnumpy(), m2.get_params()[0][k].asnumpy())
    fixed = mod.Module(_mlp(), fixed_param_names=["fc1_weight"])
    fixed.bind(data_shapes=[("data", (40, 10))], label_shapes=[("softmax_label", (40,))])
    fixed.init_params(init.Xavier())
    before = fixed.get_params()[0]["fc1_weight"].asnumpy().copy()
    fixed.init_optimizer(optimizer_params={"learning_rate": 1.0})
    fixed.forward_backward(io.DataBatch([mx.nd.array(x[:40])], [mx.nd.array(y[:40])]))
    fixed.update()
    np.testing.assert_array_equal(fixed.get_params()[0]["fc1_weight"].asnumpy(), before)
    assert not np.allclose(fixed.get_params()[0]["fc2_weight"].asnumpy(), 0)


def test_resume_from_checkpoint_matches_uninterrupted(tmp_path):
    prefix = str(tmp_path / "ck")
    x, y = _blobs()
    opt = {"learning_rate": 0.05, "momentum": 0.9, "wd": 1e-4}

    def make():
        return mod.Module(_mlp())

    full = make()
    mx.random.seed(5)
    full.fit(io.NDArrayIter(x, y, batch_size=40), num_epoch=4, initializer=init.Xavier(),
             optimizer_params=opt)
    part = make()
    mx.random.seed(5)
    part.fit(io.NDArrayIter(x, y, batch_size=40), num_epoch=2, initializer=init.Xavier(),
             optimizer_params=opt)
    part.save_checkpoint(prefix, 2, save_optimizer_states=True)
    assert os.path.exists(prefix + "-0002.states")
    resumed = mod.Module.load(prefix, 2, load_optimizer_states=True)
    resumed.fit(io.NDArrayIter(x, y, batch_size=40), num_epoch=4, begin_epoch=2,
                optimizer_params=opt)
    for k, v in full.get_params()[0].items():
        np.testing.assert_allclose(resumed.get_params()[0][k].asnumpy(), v.asnumpy(),
                                   rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------- MXNet fixtures
def _fixture(name):
    d = os.path.join(FIX, name)
    with open(os.path.join(d, "manifest.json")) as f:
        return d, json.load(f)


def test_real_mlp_checkpoint_outputs_grads_and_optimizer_states():
    d, man = _fixture("mlp_module")
    tol = man["tolerance"]
    x = np.load(os.path.join(d, "input_data.npy"))
    lab = np.load(os.path.join(d, "input_softmax_label.npy"))
    m = mod.Module.load(os.path.join(d, "mlp"), 1, load_optimizer_states=True)
    m.bind(data_shapes=[("data", x.shape)], label_shapes=[("softmax_label", lab.shape)],
           inputs_need_grad=True)
    batch = io.DataBatch([mx.nd.array(x)], [mx.nd.array(lab)])
    m.forward(batch, is_train=False)
    np.testing.assert_allclose(m.get_outputs()[0].asnumpy(),
                               np.load(os.path.join(d, "output_infer_0.npy")), **tol)
    m.forward_backward(batch)
    grads = m._exec_group.execs[0].grad_dict
    for name, fname in man["train_backward"]["grads"].items():
        got = m.get_input_grads()[0] if name == "data" else grads[name]
        np.testing.assert_allclose(got.asnumpy(), np.load(os.path.join(d, fname)), **tol)
    m.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1,
                                                         "momentum": 0.9, "wd": 1e-4})
    expected = np.load(os.path.join(d, "states_expected.npz"))
    states = m._updater.states
    for key in expected.files:
        idx = int(key.split(".")[1])
        np.testing.assert_allclose(states[idx].asnumpy(), expected[key], **tol)


def test_real_cnn_bn_checkpoint_outputs_grads_and_aux():
    d, man = _fixture("cnn_bn_module")
    tol = man["tolerance"]
    x = np.load(os.path.join(d, "input_data.npy"))
    m = mod.Module.load(os.path.join(d, "cnn_bn"), 0, label_names=None)
    m.bind(data_shapes=[("data", x.shape)], inputs_need_grad=True)
    batch = io.DataBatch([mx.nd.array(x)])
    m.forward(batch, is_train=False)
    np.testing.assert_allclose(m.get_outputs()[0].asnumpy(),
                               np.load(os.path.join(d, "output_infer_0.npy")), **tol)
    m.forward(batch, is_train=True)
    np.testing.assert_allclose(m.get_outputs()[0].asnumpy(),
                               np.load(os.path.join(d, "output_train_0.npy")), **tol)
    m.backward([mx.nd.ones((2, 10))])
    grads = m._exec_group.execs[0].grad_dict
    for name, fname in man["train_backward"]["grads"].items():
        got = m.get_input_grads()[0] if name == "data" else grads[name]
        np.testing.assert_allclose(got.asnumpy(), np.load(os.path.join(d, fname)), **tol)
    # the device copies hold the updated moving stats (host copies sync on update only)
    aux = m._exec_group.execs[0].aux_dict
    for name, fname in man["train_backward"]["aux_after_train_forward"].items():
        np.testing.assert_allclose(aux[name].asnumpy(), np.load(os.path.join(d, fname)),
                                   **man["train_backward"]["tolerance"])


# ---------------------------------------------------------------------- several contexts
def test_two_contexts_match_one_and_stay_identical():
    one, x, y = _fit(context=mx.cpu(), num_epoch=2, seed=7)
    two, _, _ = _fit(context=[mx.cpu(0), mx.cpu(1)], num_epoch=2, seed=7)
    assert two._exec_group.slices == [slice(0, 20), slice(20, 40)]
    for block in two._exec_group.param_arrays:
        np.testing.assert_array_equal(block[0].asnumpy(), block[1].asnumpy())
    for k, v in one.get_params()[0].items():
        np.testing.assert_allclose(two.get_params()[0][k].asnumpy(), v.asnumpy(),
                                   rtol=1e-4, atol=1e-5)
    it = io.NDArrayIter(x, y, batch_size=40)
    np.testing.assert_allclose(two.predict(it).asnumpy(), one.predict(it).asnumpy(),
                               rtol=1e-4, atol=1e-5)
    outs = two.get_outputs(merge_multi_context=False)
    assert [o.shape for o in outs[0]] == [(20, 4), (20, 4)]


def test_work_load_list_splits_unevenly():
    m = mod.Module(_mlp(), context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1, 3])
    m.bind(data_shapes=[("data", (40, 10))], label_shapes=[("softmax_label", (40,))])
    assert m._exec_group.slices == [slice(0, 10), slice(10, 40)]
    assert m.output_shapes == [("softmax_output", (40, 4))]


# ---------------------------------------------------------------------- error paths
def test_unbound_module_asserts():
    m = mod.Module(_mlp())
    with pytest.raises(AssertionError):
        m.forward(io.DataBatch([mx.nd.zeros((4, 10))]))
    with pytest.raises(AssertionError, match="call bind before initializing"):
        m.init_params()


def test_init_params_twice_warns_and_optimizer_twice_logs(caplog):
    m = mod.Module(_mlp())
    m.bind(data_shapes=[("data", (4, 10))], label_shapes=[("softmax_label", (4,))])
    m.init_params()
    with pytest.warns(UserWarning, match="init_params call ignored"):
        m.init_params()
    m.init_optimizer()
    with caplog.at_level(logging.WARNING):
        m.init_optimizer()
        m.bind(data_shapes=[("data", (4, 10))])
    msgs = [r.getMessage() for r in caplog.records]
    assert "optimizer already initialized, ignoring..." in msgs
    assert "Already bound, ignoring bind()" in msgs


def test_missing_param_and_bad_names_raise():
    with pytest.raises(ValueError, match="input with name 'dta' is not found"):
        mod.Module(_mlp(), data_names=("dta",))
    with pytest.warns(UserWarning, match="label_names"):
        mod.Module(_mlp(), label_names=("lbl",))
    m = mod.Module(_mlp())
    m.bind(data_shapes=[("data", (4, 10))], label_shapes=[("softmax_label", (4,))])
    with pytest.raises(RuntimeError, match="fc1_bias is not presented"):
        m.init_params(arg_params={"fc1_weight": mx.nd.zeros((32, 10))})
    with pytest.raises(ValueError, match="don't match names"):
        mod.Module(_mlp()).bind(data_shapes=[("x", (4, 10))])


def test_manual_optimizer_rescale_warning():
    m = mod.Module(_mlp())
    m.bind(data_shapes=[("data", (4, 10))], label_shapes=[("softmax_label", (4,))])
    m.init_params()
    with pytest.warns(UserWarning, match="rescale_grad is not normalized"):
        m.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=0.1))


def test_too_many_slices_raises():
    m = mod.Module(_mlp(), context=[mx.cpu(i) for i in range(3)])
    with pytest.raises(ValueError, match="Too many slices"):
        m.bind(data_shapes=[("data", (2, 10))], label_shapes=[("softmax_label", (2,))])


def test_module_namespaces_keep_mxnet_reexports():
    # MXNet code imports these from the module files themselves
    from mxtorch.module.bucketing_module import load_params
    from mxtorch.module.module import load_checkpoint
    assert load_checkpoint is mx.model.load_checkpoint and load_params is mx.model.load_params

"""BucketingModule, SequentialModule and PythonLossModule (MXNet 1.9.1 mx.mod)."""

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import io, metric
from mxtorch import module as mod
from mxtorch import initializer as init


def _sym_gen(seq_len):
    data = mx.sym.Variable("data")
    net = mx.sym.Reshape(data, shape=(-1, seq_len * 2))
    net = mx.sym.sum(net, axis=1, keepdims=True)
    net = mx.sym.FullyConnected(net, num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax"), ("data",), ("softmax_label",)


def _batch(seq_len, n=4):
    rng = np.random.RandomState(seq_len)
    x = rng.randn(n, seq_len, 2).astype(np.float32)
    y = (x.sum(axis=(1, 2)) > 0).astype(np.float32)
    return io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], bucket_key=seq_len,
                        provide_data=[io.DataDesc("data", x.shape)],
                        provide_label=[io.DataDesc("softmax_label", y.shape)])


def test_bucketing_shares_parameters_and_optimizer(caplog):
    bm = mod.BucketingModule(_sym_gen, default_bucket_key=5)
    bm.bind(data_shapes=[("data", (4, 5, 2))], label_shapes=[("softmax_label", (4,))])
    bm.init_params(init.Xavier())
    bm.init_optimizer(optimizer_params={"learning_rate": 0.5})
    w0 = bm.get_params()[0]["fc_weight"].asnumpy().copy()
    for key in (3, 5, 3):
        b = _batch(key)
        bm.forward_backward(b)
        bm.update()
        assert bm.get_outputs()[0].shape == (4, 2)
    assert sorted(bm._buckets) == [3, 5]
    small, big = bm._buckets[3], bm._buckets[5]
    assert small._exec_group.execs[0].arg_dict["fc_weight"] is \
        big._exec_group.execs[0].arg_dict["fc_weight"]
    assert small._updater is big._updater
    assert not np.allclose(bm.get_params()[0]["fc_weight"].asnumpy(), w0)
    acc = metric.Accuracy()
    bm.update_metric(acc, _batch(3).label)
    assert acc.num_inst == 4


def test_bucketing_checkpoint_roundtrip(tmp_path):
    bm = mod.BucketingModule(_sym_gen, default_bucket_key=5)
    bm.bind(data_shapes=[("data", (4, 5, 2))], label_shapes=[("softmax_label", (4,))])
    bm.init_params(init.Xavier())
    bm.forward(_batch(3), is_train=False)
    prefix = str(tmp_path / "bk")
    bm.save_checkpoint(prefix, 1)
    loaded = mod.BucketingModule.load(prefix, 1, sym_gen=_sym_gen, default_bucket_key=5)
    loaded.bind(data_shapes=[("data", (4, 5, 2))], label_shapes=[("softmax_label", (4,))])
    for k, v in bm.get_params()[0].items():
        np.testing.assert_array_equal(loaded.get_params()[0][k].asnumpy(), v.asnumpy())
    with pytest.raises(AssertionError):
        mod.BucketingModule(_sym_gen)  # default_bucket_key is required


def test_sequential_module_chains_with_labels_and_auto_wiring():
    data = mx.sym.Variable("data")
    fc1 = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=8, name="fc1"),
                            act_type="relu")
    m1 = mod.Module(fc1, label_names=None)
    d2 = mx.sym.Variable("feat")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(d2, num_hidden=2, name="fc2"),
                               name="softmax")
    m2 = mod.Module(net, data_names=("feat",))
    seq = mod.SequentialModule().add(m1).add(m2, take_labels=True, auto_wiring=True)
    with pytest.raises(AssertionError, match='Unknown meta "typo"'):
        mod.SequentialModule().add(m1, typo=True)
    rng = np.random.RandomState(0)
    x = rng.randn(60, 4).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32)
    seq.fit(io.NDArrayIter(x, y, batch_size=20), num_epoch=8, initializer=init.Xavier(),
            optimizer_params={"learning_rate": 0.5})
    assert seq.output_shapes == [("softmax_output", (20, 2))]
    (_, acc), = seq.score(io.NDArrayIter(x, y, batch_size=20), "acc")
    assert acc > 0.9  # threshold: 90% on a linearly separable problem
    assert set(seq.get_params()[0]) == {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}


def test_python_loss_module_gradient():
    loss = mod.PythonLossModule(grad_func=lambda s, lab: s - lab.reshape((-1, 1)))
    loss.bind(data_shapes=[("data", (3, 1))], label_shapes=[("softmax_label", (3,))])
    assert loss.output_shapes == [("pyloss_output", (3, 1))]
    scores = mx.nd.array([[1.0], [2.0], [3.0]])
    loss.forward(io.DataBatch([scores], [mx.nd.array([1.0, 1.0, 1.0])]), is_train=True)
    loss.backward()
    np.testing.assert_array_equal(loss.get_input_grads()[0].asnumpy(), [[0], [1], [2]])
    assert loss.get_outputs()[0] is scores
    with pytest.raises(AssertionError, match="out_grads should be None"):
        loss.backward(out_grads=[scores])

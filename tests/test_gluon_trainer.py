"""gluon.Trainer against MXNet 1.9.1 (expected values recorded with the real MXNet)."""
import os

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import gluon
from test_gluon_block import LENET, Dense, lenet

# MXNet 1.9.1: Dense(2, in_units=3), weight arange(6)*0.1-0.2, bias [0.05,-0.05],
# loss sum(out**2) on x = arange(12).reshape(4,3)*0.1, two steps with batch_size 4.
SGD_W = np.array([[-0.16054021, -0.0562791, 0.047982],
                  [-0.00210691, 0.0829737, 0.16805431]], np.float32)
SGD_B = np.array([0.09536505, -0.19615006], np.float32)
ADAM_W = np.array([[-0.18011865, -0.08012745, 0.01986524],
                   [0.08002803, 0.18002884, 0.2800295]], np.float32)
ADAM_B = np.array([0.06978785, -0.0699654], np.float32)
X = np.arange(12).reshape(4, 3).astype('float32') * 0.1


def _dense(ctxs):
    net = Dense(2, in_units=3)
    net.initialize(ctx=ctxs)
    net.weight.set_data(mx.nd.array(np.arange(6).reshape(2, 3) * 0.1 - 0.2))
    net.bias.set_data(mx.nd.array([0.05, -0.05]))
    return net


def _train(optname, params, ctxs, hybridize=False, steps=2, **kw):
    net = _dense(ctxs)
    if hybridize:
        net.hybridize()
    tr = gluon.Trainer(net.collect_params(), optname, params, **kw)
    for _ in range(steps):
        xs = gluon.utils.split_and_load(mx.nd.array(X), ctxs)
        with mx.autograd.record():
            ls = [(net(xi) ** 2).sum() for xi in xs]
        mx.autograd.backward(ls)
        tr.step(4)
    return net, tr


@pytest.mark.parametrize('hybridize', [False, True])
def test_sgd_matches_mxnet(hybridize):
    net, tr = _train('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01},
                     [mx.cpu(0)], hybridize)
    np.testing.assert_allclose(net.weight.data().asnumpy(), SGD_W, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(net.bias.data().asnumpy(), SGD_B, rtol=1e-5, atol=1e-7)
    assert tr.learning_rate == 0.1
    tr.set_learning_rate(0.5)
    assert tr.learning_rate == 0.5 and tr.optimizer.lr == 0.5


def test_two_contexts_sum_gradients():
    net, _ = _train('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01},
                    [mx.cpu(0), mx.cpu(1)])
    for ctx in (mx.cpu(0), mx.cpu(1)):
        np.testing.assert_allclose(net.weight.data(ctx).asnumpy(), SGD_W, rtol=1e-5, atol=1e-7)
    net, tr = _train('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01},
                     [mx.cpu(0), mx.cpu(1)], update_on_kvstore=False)
    np.testing.assert_allclose(net.bias.data(mx.cpu(1)).asnumpy(), SGD_B, rtol=1e-5, atol=1e-7)
    assert tr._update_on_kvstore is False


def test_adam_matches_mxnet_and_states_round_trip(tmp_path):
    net, tr = _train('adam', {'learning_rate': 0.01}, [mx.cpu(0)])
    np.testing.assert_allclose(net.weight.data().asnumpy(), ADAM_W, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(net.bias.data().asnumpy(), ADAM_B, rtol=1e-5, atol=1e-7)
    f = str(tmp_path / 't.states')
    tr.save_states(f)
    net2, tr2 = _train('adam', {'learning_rate': 0.01}, [mx.cpu(0)], steps=0)
    tr2.load_states(f)
    assert tr2.optimizer.num_update == tr.optimizer.num_update == 2
    assert tr2.optimizer.param_dict[0] is net2.bias
    m1, v1 = tr._updaters[0].states[1]
    m2, v2 = tr2._updaters[0].states[1]
    np.testing.assert_array_equal(m1.asnumpy(), m2.asnumpy())
    np.testing.assert_array_equal(v1.asnumpy(), v2.asnumpy())


def test_stale_gradient_error():
    net, tr = _train('sgd', {'learning_rate': 0.1}, [mx.cpu(0)], steps=1)
    with pytest.raises(UserWarning, match=r"Gradient of Parameter `dense\d+_bias` on context "
                                          r"cpu\(0\) has not been updated by backward"):
        tr.step(4)
    w = net.weight.data().asnumpy().copy()
    tr.step(4, ignore_stale_grad=True)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), w)


def test_allreduce_and_update():
    net = _dense([mx.cpu(0)])
    tr = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    with mx.autograd.record():
        loss = (net(mx.nd.array(X)) ** 2).sum()
    loss.backward()
    tr.allreduce_grads()
    g = net.weight.grad().asnumpy().copy()
    w = net.weight.data().asnumpy().copy()
    tr.update(4)
    np.testing.assert_allclose(net.weight.data().asnumpy(), w - 0.1 * g / 4, rtol=1e-6)


def test_trainer_errors():
    with pytest.raises(ValueError, match='First argument must be a list or dict of Parameters'):
        gluon.Trainer(3, 'sgd')
    with pytest.raises(ValueError, match='got list of'):
        gluon.Trainer([3], 'sgd')
    net = _dense([mx.cpu(0)])
    with pytest.raises(AssertionError, match='optimizer_params must be None'):
        gluon.Trainer(net.collect_params(), mx.optimizer.SGD(), {'learning_rate': 1})
    p = gluon.Parameter('other', shape=(1,))
    p.initialize(ctx=mx.cpu(1))
    with pytest.raises(AssertionError, match='must be initialized on the same set of contexts'):
        gluon.Trainer([net.weight, p], 'sgd')
    with pytest.raises(TypeError, match='kvstore must be KVStore, str or None'):
        q = gluon.Parameter('q', shape=(1,))
        q.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
        gluon.Trainer([q], 'sgd', kvstore=3).step(1)


def test_trainer_params_sorted_by_name():
    net = _dense([mx.cpu(0)])
    tr = gluon.Trainer(net.collect_params(), 'sgd')
    assert [p.name.split('_')[-1] for p in tr._params] == ['bias', 'weight']


def test_lenet_states_fixture():
    net = lenet()
    net.load_parameters(os.path.join(LENET, 'lenet.params'))
    tr = gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': 1e-3})
    tr.load_states(os.path.join(LENET, 'lenet.states'))
    assert type(tr.optimizer).__name__ == 'Adam'
    assert tr.optimizer.param_dict[0].name == 'lenet_conv0_bias'
    expected = np.load(os.path.join(LENET, 'states_expected.npz'))
    states = tr._updaters[0].states
    assert sorted(states) == list(range(10))
    for i in range(10):
        mean, var = states[i]
        np.testing.assert_array_equal(mean.asnumpy(), expected['mean.%d' % i])
        np.testing.assert_array_equal(var.asnumpy(), expected['var.%d' % i])
    assert tr.optimizer.rescale_grad == 0.5 and tr.optimizer.beta2 == 0.999
    x = mx.nd.array(np.load(os.path.join(LENET, 'input_data.npy')))
    with mx.autograd.record():
        y = net(x)
    y.backward()
    tr.step(1)
    assert tr.optimizer.num_update == 2


def test_hybridized_training_equals_imperative():
    rng = np.random.RandomState(1)
    x = mx.nd.array(rng.rand(4, 1, 28, 28))
    results = []
    for hyb in (False, True):
        net = lenet()
        net.load_parameters(os.path.join(LENET, 'lenet.params'))
        if hyb:
            net.hybridize()
        tr = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.05,
                                                          'momentum': 0.9})
        for _ in range(3):
            with mx.autograd.record(train_mode=False):
                loss = (net(x) ** 2).mean()
            loss.backward()
            tr.step(1)
        results.append({k: v.data().asnumpy() for k, v in
                        net._collect_params_with_prefix().items()})
    for k in results[0]:
        np.testing.assert_allclose(results[0][k], results[1][k], rtol=1e-4, atol=1e-6)

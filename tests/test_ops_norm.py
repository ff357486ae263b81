"""Normalization operators against NumPy (and values recorded from MXNet 1.9.1)."""
import numpy as np
import pytest

import mxtorch as mx
from helpers import check_op

RNG = np.random.RandomState(0)


def _ones(*shape):
    return mx.nd.array(np.ones(shape, dtype=np.float32))


def _bn_ref(x, gamma, beta, mean, var, eps, axis=1):
    shape = [1] * x.ndim
    shape[axis] = -1
    r = [a.reshape(shape) for a in (gamma, beta, mean, var)]
    return (x - r[2]) / np.sqrt(r[3] + eps) * r[0] + r[1]


def _bn_inputs(shape=(4, 3, 2, 2), axis=1):
    c = shape[axis]
    x = RNG.randn(*shape).astype(np.float32)
    gamma = RNG.uniform(0.5, 1.5, c).astype(np.float32)
    beta = RNG.randn(c).astype(np.float32)
    mm = RNG.randn(c).astype(np.float32) * 0.1
    mv = RNG.uniform(0.5, 1.5, c).astype(np.float32)
    return [x, gamma, beta, mm, mv]


def _batch_stats(x, axis=1):
    red = tuple(i for i in range(x.ndim) if i != axis)
    return x.mean(red), x.var(red)


def test_batchnorm_inference_uses_moving_stats():
    ins = _bn_inputs()
    check_op("BatchNorm", ins, {"fix_gamma": False},
             expected=lambda x, g, b, m, v: _bn_ref(x, g, b, m, v, 1e-3), grad=False)
    # fix_gamma (default True): gamma is treated as 1
    check_op("BatchNorm", ins, {},
             expected=lambda x, g, b, m, v: _bn_ref(x, np.ones_like(g), b, m, v, 1e-3),
             grad=False)


@pytest.mark.parametrize("axis,shape", [(1, (4, 3, 2, 2)), (-1, (4, 5, 3)), (1, (6, 3))])
def test_batchnorm_training_forward_and_grad(axis, shape):
    ins = _bn_inputs(shape, axis % len(shape))
    ax = axis % len(shape)

    def ref(x, g, b, m, v):
        mean, var = _batch_stats(x, ax)
        return _bn_ref(x, g, b, mean, var, 1e-5, ax)
    check_op("BatchNorm", ins, {"fix_gamma": False, "eps": 1e-5, "axis": axis},
             expected=ref, train=True, rtol=1e-4, atol=1e-5)


def test_batchnorm_moving_stats_update_on_backward():
    x, g, b, mm, mv = _bn_inputs()
    arrs = [mx.nd.array(a) for a in (x, g, b, mm, mv)]
    arrs[0].attach_grad()
    with mx.autograd.record():
        out = mx.nd.BatchNorm(*arrs, fix_gamma=False, momentum=0.8)
    # MXNet: a training forward alone leaves the moving statistics untouched
    np.testing.assert_array_equal(arrs[3].asnumpy(), mm)
    out.backward()
    mean, var = _batch_stats(x.astype(np.float64))
    np.testing.assert_allclose(arrs[3].asnumpy(), mm * 0.8 + mean * 0.2, rtol=1e-5, atol=1e-6)
    # biased variance goes into moving_var
    np.testing.assert_allclose(arrs[4].asnumpy(), mv * 0.8 + var * 0.2, rtol=1e-5, atol=1e-6)


def test_batchnorm_use_global_stats_and_fix_gamma_grad():
    x, g, b, mm, mv = _bn_inputs()
    arrs = [mx.nd.array(a) for a in (x, g, b, mm, mv)]
    for a in arrs[:3]:
        a.attach_grad()
    head = RNG.randn(*x.shape).astype(np.float32)
    with mx.autograd.record():
        out = mx.nd.BatchNorm(*arrs, use_global_stats=True)
    out.backward(mx.nd.array(head))
    np.testing.assert_allclose(out.asnumpy(), _bn_ref(x, np.ones(3), b, mm, mv, 1e-3),
                               rtol=1e-5, atol=1e-5)
    inv = (1 / np.sqrt(mv + 1e-3)).reshape(1, -1, 1, 1)
    np.testing.assert_allclose(arrs[0].grad.asnumpy(), head * inv, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(arrs[1].grad.asnumpy(), np.zeros(3))
    np.testing.assert_allclose(arrs[2].grad.asnumpy(), head.sum((0, 2, 3)), rtol=1e-5)
    np.testing.assert_array_equal(arrs[3].asnumpy(), mm)


def test_batchnorm_inference_grad_quirk():
    # MXNet: inference forward + default backward uses the batch-stat gradient formula
    x, g, b, mm, mv = _bn_inputs()
    arrs = [mx.nd.array(a) for a in (x, g, b, mm, mv)]
    arrs[0].attach_grad()
    head = RNG.randn(*x.shape)
    with mx.autograd.record(train_mode=False):
        out = mx.nd.BatchNorm(*arrs, fix_gamma=False)
    out.backward(mx.nd.array(head))
    inv = (1 / np.sqrt(mv.astype(np.float64) + 1e-3)).reshape(1, -1, 1, 1)
    xh = (x - mm.reshape(1, -1, 1, 1)) * inv
    ax = (0, 2, 3)
    dx = g.reshape(1, -1, 1, 1) * inv * (head - head.mean(ax, keepdims=True)
                                         - xh * (head * xh).mean(ax, keepdims=True))
    np.testing.assert_allclose(arrs[0].grad.asnumpy(), dx, rtol=1e-4, atol=1e-5)


def test_batchnorm_output_mean_var_and_shapes():
    x, g, b, mm, mv = _bn_inputs()
    with mx.autograd.train_mode():
        out, mean, invstd = mx.nd.BatchNorm(*[mx.nd.array(a) for a in (x, g, b, mm, mv)],
                                            output_mean_var=True)
    m, v = _batch_stats(x.astype(np.float64))
    np.testing.assert_allclose(mean.asnumpy(), m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(invstd.asnumpy(), 1 / np.sqrt(v + 1e-3), rtol=1e-5)
    sym = mx.sym.BatchNorm(mx.sym.var("data"), name="bn", output_mean_var=True)
    assert sym.list_outputs() == ["bn_output", "bn_mean", "bn_var"]
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    args, outs, aux = sym.infer_shape(data=(2, 5, 3))
    assert args == [(2, 5, 3), (5,), (5,)] and aux == [(5,), (5,)]
    assert outs == [(2, 5, 3), (5,), (5,)]


def test_batchnorm_errors():
    x, g, b, mm, mv = _bn_inputs()
    with pytest.raises(mx.base.MXNetError, match="BatchNorm"):
        mx.nd.BatchNorm(*[mx.nd.array(a) for a in (x, g[:2], b, mm, mv)])
    with pytest.raises(mx.base.MXNetError, match="BatchNorm"):
        mx.nd.BatchNorm(*[mx.nd.array(a) for a in (x, g, b, mm, mv)], axis=4)


def _ln_ref(x, g, b, axis, eps):
    m = x.mean(axis, keepdims=True)
    v = x.var(axis, keepdims=True)
    shape = [1] * x.ndim
    shape[axis] = -1
    return (x - m) / np.sqrt(v + eps) * g.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("axis", [-1, 1])
def test_layernorm(axis):
    x = RNG.randn(2, 3, 5)
    c = x.shape[axis]
    ins = [x, RNG.uniform(0.5, 1.5, c), RNG.randn(c)]
    check_op("LayerNorm", ins, {"axis": axis, "eps": 1e-3},
             expected=lambda x, g, b: _ln_ref(x, g, b, axis, 1e-3), rtol=1e-4, atol=1e-5)
    outs = check_op("LayerNorm", ins, {"axis": axis, "output_mean_var": True}, grad=False)
    np.testing.assert_allclose(outs[1].asnumpy(), x.mean(axis, keepdims=True), atol=1e-6)
    np.testing.assert_allclose(outs[2].asnumpy(), np.sqrt(x.var(axis, keepdims=True) + 1e-5),
                               rtol=1e-5)


def test_instancenorm():
    x = RNG.randn(2, 3, 4, 4)
    ins = [x, RNG.uniform(0.5, 1.5, 3), RNG.randn(3)]

    def ref(x, g, b):
        m = x.mean((2, 3), keepdims=True)
        v = x.var((2, 3), keepdims=True)
        return (x - m) / np.sqrt(v + 1e-3) * g.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1)
    check_op("InstanceNorm", ins, {"eps": 1e-3}, expected=ref, rtol=1e-4, atol=1e-5)
    with pytest.raises(mx.base.MXNetError, match="InstanceNorm"):
        mx.nd.InstanceNorm(_ones(2, 3), _ones(3), _ones(3))


def test_groupnorm_gamma_per_group():
    x = RNG.randn(2, 4, 3, 3)
    ins = [x, RNG.uniform(0.5, 1.5, 2), RNG.randn(2)]

    def ref(x, g, b):
        xg = x.reshape(2, 2, -1)
        m = xg.mean(-1, keepdims=True)
        v = xg.var(-1, keepdims=True)
        y = (xg - m) / np.sqrt(v + 1e-5) * g.reshape(1, 2, 1) + b.reshape(1, 2, 1)
        return y.reshape(x.shape)
    check_op("GroupNorm", ins, {"num_groups": 2}, expected=ref, rtol=1e-4, atol=1e-5)
    outs = check_op("GroupNorm", ins, {"num_groups": 2, "output_mean_var": True}, grad=False)
    assert outs[1].shape == (2, 2) and outs[2].shape == (2, 2)
    np.testing.assert_allclose(outs[2].asnumpy(),
                               np.sqrt(x.reshape(2, 2, -1).var(-1) + 1e-5), rtol=1e-5)
    args, _, _ = mx.sym.GroupNorm(mx.sym.var("data"), num_groups=2).infer_shape(
        data=(2, 4, 3, 3))
    assert args[1:] == [(2,), (2,)]
    with pytest.raises(mx.base.MXNetError, match="GroupNorm"):
        mx.nd.GroupNorm(mx.nd.array(x), _ones(3), _ones(3), num_groups=3)


@pytest.mark.parametrize("mode,axes", [("instance", (1, 2, 3)), ("channel", (1,)),
                                       ("spatial", (2, 3))])
def test_l2normalization(mode, axes):
    x = RNG.randn(2, 3, 2, 2)
    check_op("L2Normalization", [x], {"mode": mode, "eps": 1e-3},
             expected=lambda x: x / np.sqrt((x ** 2).sum(axes, keepdims=True) + 1e-3))


def _lrn_ref(x, nsize, alpha, beta, k):
    sq = np.pad(x ** 2, [(0, 0), (nsize // 2, (nsize - 1) // 2), (0, 0), (0, 0)])
    win = sum(sq[:, i:i + x.shape[1]] for i in range(nsize))
    return x / (k + alpha / nsize * win) ** beta


def test_lrn():
    x = RNG.randn(2, 4, 3, 3)
    check_op("LRN", [x], {"nsize": 3, "alpha": 0.5, "beta": 0.75, "knorm": 2},
             expected=lambda x: _lrn_ref(x, 3, 0.5, 0.75, 2), rtol=1e-5, atol=1e-6)
    # value recorded from MXNet 1.9.1: LRN(nsize=3, alpha=0.5, beta=0.75, knorm=2)
    ones = mx.nd.LRN(_ones(1, 3, 1, 1), nsize=3, alpha=0.5, beta=0.75, knorm=2)
    np.testing.assert_allclose(ones.asnumpy().ravel(),
                               [(2 + 0.5 / 3 * n) ** -0.75 for n in (2, 3, 2)], rtol=1e-6)
    with pytest.raises(mx.base.MXNetError, match="LRN"):
        mx.nd.LRN(_ones(2, 3), nsize=3)


def test_sync_batchnorm_is_batchnorm_with_variance_output():
    x, gamma, beta, mm, mv = _bn_inputs((4, 3, 5))
    args = [mx.nd.array(a) for a in (x, gamma, beta, mm, mv)]
    args[0].attach_grad()
    with mx.autograd.record():
        out, mean, var = mx.nd.contrib.SyncBatchNorm(*args, key="bn0", fix_gamma=False,
                                                     output_mean_var=True)
    out.backward(mx.nd.ones(out.shape))
    flat = x.transpose(1, 0, 2).reshape(3, -1)
    # MXNet: SyncBatchNorm's third output is the batch variance (BatchNorm's is 1/std)
    np.testing.assert_allclose(var.asnumpy(), flat.var(1), rtol=1e-5)
    np.testing.assert_allclose(mean.asnumpy(), flat.mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), _bn_ref(x, gamma, beta, flat.mean(1),
                                                      flat.var(1), 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(args[3].asnumpy(), 0.9 * mm + 0.1 * flat.mean(1), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(args[4].asnumpy(), 0.9 * mv + 0.1 * flat.var(1), rtol=1e-5)
    sym = mx.sym.contrib.SyncBatchNorm(mx.sym.var("data"), key="k", name="sbn")
    assert sym.list_auxiliary_states() == ["sbn_moving_mean", "sbn_moving_var"]
    with pytest.raises(mx.base.MXNetError, match="key"):
        mx.nd.contrib.SyncBatchNorm(*args)


def test_instancenorm_single_spatial_element():
    # MXNet: one element per instance and channel normalizes to 0, the output is beta
    with mx.autograd.train_mode():
        check_op("InstanceNorm", [np.array([[[3.0]]]), np.array([2.0]), np.array([0.5])], {},
                 [[[[0.5]]]], train=True)


def test_layernorm_parameter_gradients_are_accurate_sums():
    # MXNet sums gamma/beta gradients over the batch with compensated summation; a float32
    # sum over 4096 rows would be off by about 1e-4 here
    rng = np.random.RandomState(3)
    x = rng.normal(0, 1, (4096, 64)).astype(np.float32)
    head = rng.normal(0, 1, (4096, 64)).astype(np.float32)
    gamma, beta = mx.nd.ones(64), mx.nd.zeros(64)
    gamma.attach_grad()
    beta.attach_grad()
    with mx.autograd.record():
        out = mx.nd.LayerNorm(mx.nd.array(x), gamma, beta, eps=1e-3)
    out.backward(mx.nd.array(head))
    x64 = x.astype(np.float64)
    xhat = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(gamma.grad.asnumpy(), (head * xhat).sum(0), rtol=0, atol=2e-5)
    np.testing.assert_allclose(beta.grad.asnumpy(), head.astype(np.float64).sum(0), rtol=0,
                               atol=2e-5)


def _bn_v1_executor(**kw):
    s = mx.sym.BatchNorm_v1(mx.sym.var("x"), name="bn", eps=1e-3, **kw)
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 1, 2) * 0.5 - 1
    args = {"x": mx.nd.array(x), "bn_gamma": mx.nd.array([1.0, 2.0, 0.5]),
            "bn_beta": mx.nd.array([0.0, 1.0, -1.0])}
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    aux = {"bn_moving_mean": mx.nd.array([0.1, 0.2, 0.3]),
           "bn_moving_var": mx.nd.array([1.0, 2.0, 0.5])}
    return s.bind(mx.cpu(), args, args_grad=grads, aux_states=aux), grads, aux


_BN_V1_HEAD = np.arange(12).reshape(2, 3, 1, 2) % 5


def test_batchnorm_v1_matches_mxnet():
    """BatchNorm_v1 through an executor (MXNet's mx.nd signature cannot pass its auxiliary
    states): values, gradients and moving statistics of real MXNet 1.9.1; its third output
    is the batch variance (BatchNorm's is 1/std)."""
    exe, _, aux = _bn_v1_executor()   # inference; fix_gamma ignores gamma
    np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy()[:, :, 0], [
        [[-1.09945, -0.5997], [0.85861, 1.21208], [-0.01104, 0.69536]],
        [[1.89905, 2.3988], [2.9794, 3.33287], [4.22737, 4.93377]]], rtol=1e-4, atol=1e-5)
    exe, grads, aux = _bn_v1_executor(fix_gamma=False, momentum=0.8)
    out = exe.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy()[:, :, 0], [
        [[-1.15054, -0.82182], [-1.30109, -0.64363], [-1.57527, -1.41091]],
        [[0.82182, 1.15054], [2.64363, 3.30109], [-0.58909, -0.42473]]], rtol=1e-4, atol=1e-5)
    exe.backward(mx.nd.array(_BN_V1_HEAD))
    np.testing.assert_allclose(grads["x"].asnumpy()[:, :, 0], [
        [[-0.2223, 0.31082], [-0.4446, 0.62165], [0.57763, -0.64403]],
        [[-0.31082, 0.2223], [-0.62165, 0.4446], [-0.17779, 0.24418]]], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grads["bn_gamma"].asnumpy(), [2.30109, 2.30109, -3.45163],
                               rtol=1e-5)
    np.testing.assert_allclose(grads["bn_beta"].asnumpy(), [4.0, 12.0, 5.0])
    np.testing.assert_allclose(aux["bn_moving_mean"].asnumpy(), [0.23, 0.51, 0.79], rtol=1e-5)
    np.testing.assert_allclose(aux["bn_moving_var"].asnumpy(), [1.2625, 2.0625, 0.8625],
                               rtol=1e-5)
    exe, grads, aux = _bn_v1_executor(fix_gamma=False, use_global_stats=True)
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(_BN_V1_HEAD))
    np.testing.assert_allclose(grads["bn_gamma"].asnumpy(), [6.09695, 15.62316, 9.88961],
                               rtol=1e-5)
    np.testing.assert_allclose(aux["bn_moving_mean"].asnumpy(), [0.1, 0.2, 0.3], rtol=1e-6)
    exe, _, aux = _bn_v1_executor(fix_gamma=False, output_mean_var=True)
    _, mean, var = exe.forward(is_train=True)
    np.testing.assert_allclose(mean.asnumpy(), [0.75, 1.75, 2.75], rtol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), [2.3125] * 3, rtol=1e-5)
    exe.backward([mx.nd.array(_BN_V1_HEAD), mx.nd.zeros((3,)), mx.nd.zeros((3,))])
    np.testing.assert_allclose(aux["bn_moving_var"].asnumpy(), [1.13125, 2.03125, 0.68125],
                               rtol=1e-5)


def test_batchnorm_v1_takes_2d_or_4d_data():
    s = mx.sym.BatchNorm_v1(mx.sym.var("x"), name="bn", fix_gamma=False)
    exe = s.simple_bind(mx.cpu(), x=(2, 3, 4))
    with pytest.raises(mx.base.MXNetError, match="BatchNorm_v1: data must be 2-D or 4-D"):
        exe.forward(is_train=False)[0].asnumpy()
    # MXNet 1.9.1 normalizes 2-D data per column (MXNet's test_batchnorm_training uses it)
    exe = s.simple_bind(mx.cpu(), x=(2, 3))
    exe.arg_dict["x"][:] = np.arange(6).reshape(2, 3)
    exe.arg_dict["bn_gamma"][:] = 1
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, [[-0.99977785] * 3, [0.99977785] * 3], rtol=1e-5)

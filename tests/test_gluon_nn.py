"""gluon.nn and gluon.contrib.nn layers against NumPy and MXNet 1.9.1's names/reprs."""
import warnings

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import mxtorch as mx
from mxtorch import autograd
from mxtorch.gluon import nn
from mxtorch.gluon.contrib import nn as cnn

RTOL, ATOL = 1e-5, 1e-5


def _x(*shape, seed=0, low=-1.0, high=1.0):
    """Deterministic float32 test input."""
    return np.random.RandomState(seed).uniform(low, high, shape).astype(np.float32)


def _setup(net, *inputs, train=False):
    """Initialize `net`, run it once (deferred init), then give every parameter
    deterministic values; return {short_name: numpy value}."""
    net.initialize()
    args = [mx.nd.array(a) for a in inputs]
    with autograd.record(train_mode=train):
        net(*args)
    values = {}
    for i, (name, p) in enumerate(sorted(net.collect_params().items())):
        v = np.random.RandomState(100 + i).uniform(0.1, 1.0, p.shape).astype(np.float32)
        p.set_data(mx.nd.array(v))
        values[name[len(net.prefix):]] = v
    return values


def _run(net, *inputs, train=False):
    """Forward `inputs` (NumPy) through `net`, returning NumPy."""
    with autograd.record(train_mode=train):
        out = net(*[mx.nd.array(a) for a in inputs])
    return out.asnumpy()


# ----------------------------------------------------------------- NumPy references

def _np_conv(x, w, b, stride, pad, dilate, groups):
    """N-d cross-correlation, NC... layout."""
    nd_ = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    k_eff = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], dilate)]
    win = sliding_window_view(x, k_eff, axis=tuple(range(2, 2 + nd_)))
    sl = (Ellipsis,) + tuple(slice(None, None, d) for d in dilate)
    win = win[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)][sl]
    cin_g, cout_g = x.shape[1] // groups, w.shape[0] // groups
    outs = []
    for g in range(groups):
        xg = win[:, g * cin_g:(g + 1) * cin_g]
        wg = w[g * cout_g:(g + 1) * cout_g]
        outs.append(np.tensordot(xg, wg, axes=([1] + list(range(2 + nd_, 2 + 2 * nd_)),
                                               [1] + list(range(2, 2 + nd_)))))
    out = np.moveaxis(np.concatenate(outs, axis=-1), -1, 1)
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * nd_)
    return out


def _np_deconv_2d(x, w, b, stride, pad, adj):
    """2-d transposed convolution (groups=1), weight (Cin, Cout, kh, kw)."""
    n, _, h, wd = x.shape
    kh, kw = w.shape[2:]
    full = np.zeros((n, w.shape[1], (h - 1) * stride + kh + adj, (wd - 1) * stride + kw + adj))
    for i in range(h):
        for j in range(wd):
            contrib = np.einsum('nc,cokl->nokl', x[:, :, i, j], w)
            full[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += contrib
    out = full[:, :, pad:full.shape[2] - pad, pad:full.shape[3] - pad]
    return out + b.reshape(1, -1, 1, 1)


def _np_pool2d(x, k, s, p, mode, full=False, count_include_pad=True):
    """2-d pooling with MXNet's 'valid' / 'full' conventions."""
    h, w = x.shape[2:]
    rnd = np.ceil if full else np.floor
    oh, ow = (int(rnd((d + 2 * p - k) / s)) + 1 for d in (h, w))
    fill = -np.inf if mode == 'max' else 0.0
    xp = np.full(x.shape[:2] + (h + 2 * p + k, w + 2 * p + k), fill, dtype=np.float64)
    xp[:, :, p:p + h, p:p + w] = x
    ones = np.zeros(xp.shape[2:])
    ones[p:p + h, p:p + w] = 1
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            if mode == 'max':
                out[:, :, i, j] = win.max(axis=(2, 3))
                continue
            if count_include_pad:  # window clipped to the padded input
                cnt = (min(i * s + k, h + 2 * p) - i * s) * (min(j * s + k, w + 2 * p) - j * s)
            else:
                cnt = ones[i * s:i * s + k, j * s:j * s + k].sum()
            out[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return out


def _np_norm(x, axes, eps):
    """(x - mean) / sqrt(var + eps) over `axes`."""
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def _bc(v, ndim, axis=1):
    """Reshape a per-channel vector to broadcast on `axis` of an ndim array."""
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


# ----------------------------------------------------------------- names and reprs

NESTED_PARAMS = [
    ('hybridsequential0_hybridsequential0_conv0_weight', (4, 3, 3, 3), 'write'),
    ('hybridsequential0_hybridsequential0_conv0_bias', (4,), 'write'),
    ('hybridsequential0_hybridsequential0_batchnorm0_gamma', (4,), 'write'),
    ('hybridsequential0_hybridsequential0_batchnorm0_beta', (4,), 'write'),
    ('hybridsequential0_hybridsequential0_batchnorm0_running_mean', (4,), 'null'),
    ('hybridsequential0_hybridsequential0_batchnorm0_running_var', (4,), 'null'),
    ('hybridsequential0_dense0_weight', (5, 36), 'write'),
    ('hybridsequential0_dense0_bias', (5,), 'write'),
    ('hybridsequential0_dense1_weight', (3, 5), 'write'),
]

NESTED_REPR_BEFORE = """HybridSequential(
  (0): HybridSequential(
    (0): Conv2D(None -> 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), Activation(relu))
    (1): BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, \
in_channels=None)
  )
  (1): MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, \
global_pool=False, pool_type=max, layout=NCHW)
  (2): Dense(None -> 5, linear)
  (3): Dense(None -> 3, linear)
)"""


def _nested():
    """The oracle's nested network: HybridSequential(HybridSequential(conv, bn), pool, fc, fc)."""
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            inner = nn.HybridSequential()
            with inner.name_scope():
                inner.add(nn.Conv2D(4, 3, padding=1, activation='relu'), nn.BatchNorm())
            net.add(inner, nn.MaxPool2D(), nn.Dense(5), nn.Dense(3, use_bias=False))
    return net


def test_nested_names_shapes_and_repr():
    net = _nested()
    assert net.prefix == 'hybridsequential0_'
    assert repr(net) == NESTED_REPR_BEFORE
    params = net.collect_params()
    assert params['hybridsequential0_dense0_weight'].shape == (5, 0)  # deferred in_units
    net.initialize()
    out = net(mx.nd.ones((2, 3, 6, 6)))
    assert out.shape == (2, 3)
    got = [(k, p.shape, p.grad_req) for k, p in net.collect_params().items()]
    assert got == NESTED_PARAMS
    after = repr(net)
    assert 'Conv2D(3 -> 4,' in after and 'in_channels=4)' in after
    assert 'Dense(36 -> 5, linear)' in after and 'Dense(5 -> 3, linear)' in after


def test_sequential_container_ops():
    net = _nested()
    assert len(net) == 4
    assert isinstance(net[2], nn.Dense)
    tail = net[1:]
    assert type(tail) is nn.HybridSequential and len(tail) == 3
    assert tail.prefix == 'hybridsequential0_'
    seq = nn.Sequential()
    seq.add(nn.Dense(2), nn.Activation('sigmoid'))
    assert repr(seq) == ('Sequential(\n  (0): Dense(None -> 2, linear)\n'
                         '  (1): Activation(sigmoid)\n)')
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter('always')
        seq.hybridize()
    assert any('Consider using HybridSequential' in str(w.message) for w in rec)


LAYER_REPRS = [
    (lambda: nn.Dropout(0.5), 'dropout', 'Dropout(p = 0.5, axes=())'),
    (lambda: nn.Dropout(0.1, axes=(1,)), 'dropout', 'Dropout(p = 0.1, axes=(1,))'),
    (lambda: nn.Embedding(10, 4), 'embedding', 'Embedding(10 -> 4, float32)'),
    (lambda: nn.Flatten(), 'flatten', 'Flatten'),
    (lambda: nn.InstanceNorm(), 'instancenorm',
     'InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, in_channels=0)'),
    (lambda: nn.LayerNorm(), 'layernorm',
     'LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=0)'),
    (lambda: nn.GroupNorm(2), 'groupnorm',
     'GroupNorm(eps=1e-05, num_groups=2, center=True, scale=True)'),
    (lambda: nn.Lambda('tanh'), 'lambda', 'Lambda(tanh)'),
    (lambda: nn.HybridLambda(lambda F, x: x), 'hybridlambda', 'HybridLambda(<lambda>)'),
    (lambda: nn.Activation('relu'), 'relu', 'Activation(relu)'),
    (lambda: nn.LeakyReLU(0.1), 'leakyrelu', 'LeakyReLU(0.1)'),
    (lambda: nn.ELU(), 'elu', 'ELU(\n\n)'),
    (lambda: nn.Conv1D(3, 2, in_channels=2), 'conv',
     'Conv1D(2 -> 3, kernel_size=(2,), stride=(1,))'),
    (lambda: nn.Conv2D(8, (3, 3), strides=2, padding=1, dilation=2, groups=2, use_bias=False,
                       in_channels=4, activation='tanh'), 'conv',
     'Conv2D(2 -> 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), dilation=(2, 2), '
     'groups=2, bias=False, Activation(tanh))'),
    (lambda: nn.Conv2DTranspose(4, 3, output_padding=1, strides=2, in_channels=2), 'conv',
     'Conv2DTranspose(4 -> 2, kernel_size=(3, 3), stride=(2, 2))'),
    (lambda: nn.Conv1DTranspose(2, 3), 'conv',
     'Conv1DTranspose(2 -> 0, kernel_size=(3,), stride=(1,))'),
    (lambda: nn.MaxPool2D(3, 2, 1, ceil_mode=True), 'pool',
     'MaxPool2D(size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=True, global_pool=False, '
     'pool_type=max, layout=NCHW)'),
    (lambda: nn.GlobalMaxPool1D(), 'pool',
     'GlobalMaxPool1D(size=(1,), stride=(1,), padding=(0,), ceil_mode=True, global_pool=True, '
     'pool_type=max, layout=NCW)'),
    (lambda: nn.BatchNorm(in_channels=3, scale=False), 'batchnorm',
     'BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=True, use_global_stats=False, '
     'in_channels=3)'),
    (lambda: cnn.PixelShuffle2D((2, 3)), 'pixelshuffle2d', 'PixelShuffle2D((2, 3))'),
    (lambda: cnn.PixelShuffle1D(2), 'pixelshuffle1d', 'PixelShuffle1D(2)'),
    (lambda: cnn.SparseEmbedding(5, 3), 'sparseembedding', 'SparseEmbedding(5 -> 3, float32)'),
    (lambda: cnn.SyncBatchNorm(num_devices=1), 'syncbatchnorm',
     "SyncBatchNorm(eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, ndev=1, "
     "key='syncbatchnorm0_', in_channels=None)"),
]


@pytest.mark.parametrize('make,alias,text', LAYER_REPRS)
def test_layer_repr_and_prefix(make, alias, text):
    with mx.name.NameManager():
        block = make()
    assert block.prefix == alias + '0_'
    assert repr(block) == text


def test_param_grad_req_and_shapes():
    bn = nn.BatchNorm(center=False, scale=False)
    assert [p.grad_req for p in bn.collect_params().values()] == ['null'] * 4
    names = [k[len(bn.prefix):] for k in bn.collect_params()]
    assert names == ['gamma', 'beta', 'running_mean', 'running_var']
    prelu = nn.PReLU(in_channels=3)
    assert [(k[len(prelu.prefix):], p.shape) for k, p in prelu.collect_params().items()] \
        == [('alpha', (3,))]
    conv = nn.Conv2D(8, 3, groups=2, in_channels=4, layout='NHWC')
    assert conv.weight.shape == (8, 3, 3, 2)
    deconv = nn.Conv2DTranspose(8, 3, groups=2, in_channels=4)
    assert deconv.weight.shape == (4, 4, 3, 3) and deconv.bias.shape == (8,)


# ----------------------------------------------------------------- layers vs NumPy

@pytest.mark.parametrize('flatten', [True, False])
def test_dense(flatten):
    x = _x(2, 4, 5)
    net = nn.Dense(3, activation='relu', flatten=flatten)
    p = _setup(net, x)
    xs = x.reshape(2, -1) if flatten else x
    expect = np.maximum(xs @ p['weight'].T + p['bias'], 0)
    np.testing.assert_allclose(_run(net, x), expect, RTOL, ATOL)
    assert net.weight.shape == ((3, 20) if flatten else (3, 5))


def test_dense_gradient():
    x = _x(3, 4)
    net = nn.Dense(2, use_bias=False, in_units=4)
    p = _setup(net, x)
    xa = mx.nd.array(x)
    with autograd.record():
        y = net(xa)
    y.backward()
    np.testing.assert_allclose(net.weight.grad().asnumpy(),
                               np.ones((3, 2)).T @ x, RTOL, ATOL)
    assert p['weight'].shape == (2, 4)


CONV_CASES = [
    (lambda: nn.Conv1D(3, 2, strides=2, dilation=2), (2, 2, 7), (2,), (0,), (2,), 1),
    (lambda: nn.Conv2D(4, 3, padding=1, groups=2), (2, 2, 5, 5), (1, 1), (1, 1), (1, 1), 2),
    (lambda: nn.Conv3D(2, 2, strides=(1, 2, 1)), (1, 2, 3, 4, 3), (1, 2, 1), (0, 0, 0),
     (1, 1, 1), 1),
]


@pytest.mark.parametrize('make,shape,stride,pad,dilate,groups', CONV_CASES)
def test_conv(make, shape, stride, pad, dilate, groups):
    x = _x(*shape)
    net = make()
    p = _setup(net, x)
    expect = _np_conv(x, p['weight'], p['bias'], stride, pad, dilate, groups)
    np.testing.assert_allclose(_run(net, x), expect, 1e-4, 1e-4)


def test_conv2d_nhwc():
    x = _x(2, 5, 5, 2)
    net = nn.Conv2D(4, 3, layout='NHWC')
    p = _setup(net, x)
    w = p['weight'].transpose(0, 3, 1, 2)
    expect = _np_conv(x.transpose(0, 3, 1, 2), w, p['bias'], (1, 1), (0, 0), (1, 1), 1)
    np.testing.assert_allclose(_run(net, x), expect.transpose(0, 2, 3, 1), 1e-4, 1e-4)


def test_conv2d_transpose():
    x = _x(2, 2, 4, 4)
    net = nn.Conv2DTranspose(3, 3, strides=2, padding=1, output_padding=1)
    p = _setup(net, x)
    assert p['weight'].shape == (2, 3, 3, 3)
    expect = _np_deconv_2d(x, p['weight'], p['bias'], 2, 1, 1)
    np.testing.assert_allclose(_run(net, x), expect, 1e-4, 1e-4)


def test_conv_transpose_1d_3d_shapes():
    net1 = nn.Conv1DTranspose(3, 2, strides=2)
    _setup(net1, _x(2, 2, 4))
    assert _run(net1, _x(2, 2, 4)).shape == (2, 3, 8)
    net3 = nn.Conv3DTranspose(2, 2)
    _setup(net3, _x(1, 2, 2, 2, 2))
    assert _run(net3, _x(1, 2, 2, 2, 2)).shape == (1, 2, 3, 3, 3)


POOL_CASES = [
    (lambda: nn.MaxPool2D(3, 2, 1, ceil_mode=True), dict(k=3, s=2, p=1, mode='max', full=True)),
    (lambda: nn.MaxPool2D(), dict(k=2, s=2, p=0, mode='max')),
    (lambda: nn.AvgPool2D(3, 2, 1, count_include_pad=False),
     dict(k=3, s=2, p=1, mode='avg', count_include_pad=False)),
    (lambda: nn.AvgPool2D(3, 2, 1, ceil_mode=True), dict(k=3, s=2, p=1, mode='avg', full=True)),
]


@pytest.mark.parametrize('make,kw', POOL_CASES)
def test_pool2d(make, kw):
    x = _x(1, 2, 7, 6)
    np.testing.assert_allclose(_run(make(), x), _np_pool2d(x, **kw), RTOL, ATOL)


def test_pool_1d_3d_global():
    x1 = _x(1, 6, 2)
    np.testing.assert_allclose(_run(nn.AvgPool1D(layout='NWC'), x1),
                               x1.reshape(1, 3, 2, 2).mean(axis=2), RTOL, ATOL)
    x3 = _x(1, 1, 4, 4, 4)
    expect = x3.reshape(1, 1, 2, 2, 2, 2, 2, 2).max(axis=(3, 5, 7))
    np.testing.assert_allclose(_run(nn.MaxPool3D(), x3), expect, RTOL, ATOL)
    x = _x(2, 3, 4, 5)
    np.testing.assert_allclose(_run(nn.GlobalAvgPool2D(), x),
                               x.mean(axis=(2, 3), keepdims=True), RTOL, ATOL)
    np.testing.assert_allclose(_run(nn.GlobalMaxPool1D(), x[:, :, 0]),
                               x[:, :, 0].max(axis=2, keepdims=True), RTOL, ATOL)
    np.testing.assert_allclose(_run(nn.GlobalAvgPool3D(), x3),
                               x3.mean(axis=(2, 3, 4), keepdims=True), RTOL, ATOL)


def test_reflection_pad():
    x = _x(1, 2, 3, 3)
    expect = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)], mode='reflect')
    np.testing.assert_allclose(_run(nn.ReflectionPad2D(1), x), expect)


def test_batchnorm_train_and_inference():
    x = _x(4, 3, 5)
    net = nn.BatchNorm(momentum=0.8)
    p = _setup(net, x, train=True)
    expect = _np_norm(x, (0, 2), 1e-5) * _bc(p['gamma'], 3) + _bc(p['beta'], 3)
    np.testing.assert_allclose(_run(net, x, train=True), expect, 1e-4, 1e-4)
    # MXNet: the running statistics move in the backward pass (biased variance).
    np.testing.assert_allclose(net.running_mean.data().asnumpy(), p['running_mean'])
    with autograd.record():
        out = net(mx.nd.array(x))
    out.backward()
    mean = 0.8 * p['running_mean'] + 0.2 * x.mean(axis=(0, 2))
    var = 0.8 * p['running_var'] + 0.2 * x.var(axis=(0, 2))
    np.testing.assert_allclose(net.running_mean.data().asnumpy(), mean, RTOL, ATOL)
    np.testing.assert_allclose(net.running_var.data().asnumpy(), var, RTOL, ATOL)
    rm, rv = net.running_mean.data().asnumpy(), net.running_var.data().asnumpy()
    expect = (x - _bc(rm, 3)) / np.sqrt(_bc(rv, 3) + 1e-5) * _bc(p['gamma'], 3) \
        + _bc(p['beta'], 3)
    np.testing.assert_allclose(_run(net, x), expect, 1e-4, 1e-4)


def test_batchnorm_last_axis_fixed_gamma():
    x = _x(2, 3, 4)
    net = nn.BatchNorm(axis=-1, scale=False)
    p = _setup(net, x)
    # MXNet: fix_gamma (scale=False) ignores gamma.
    expect = (x - p['running_mean']) / np.sqrt(p['running_var'] + 1e-5) + p['beta']
    np.testing.assert_allclose(_run(net, x), expect, 1e-4, 1e-4)


def test_sync_batchnorm_is_batchnorm():
    x = _x(4, 3, 2, 2)
    sbn = cnn.SyncBatchNorm(num_devices=1)
    p = _setup(sbn, x, train=True)
    expect = _np_norm(x, (0, 2, 3), 1e-5) * _bc(p['gamma'], 4) + _bc(p['beta'], 4)
    np.testing.assert_allclose(_run(sbn, x, train=True), expect, 1e-4, 1e-4)
    assert sorted(k[len(sbn.prefix):] for k in sbn.collect_params()) == \
        ['beta', 'gamma', 'running_mean', 'running_var']


def test_instance_layer_group_norm():
    x = _x(2, 4, 3)
    inorm = nn.InstanceNorm(scale=True)
    p = _setup(inorm, x)
    expect = _np_norm(x, (2,), 1e-5) * _bc(p['gamma'], 3) + _bc(p['beta'], 3)
    np.testing.assert_allclose(_run(inorm, x), expect, 1e-4, 1e-4)
    inorm2 = nn.InstanceNorm(axis=2)
    p = _setup(inorm2, x)
    # MXNet: the InstanceNorm operator always applies gamma (scale=False only freezes it).
    expect = _np_norm(x, (1,), 1e-5) * _bc(p['gamma'], 3, axis=2) + _bc(p['beta'], 3, axis=2)
    np.testing.assert_allclose(_run(inorm2, x), expect, 1e-4, 1e-4)
    ln = nn.LayerNorm()
    p = _setup(ln, x)
    np.testing.assert_allclose(_run(ln, x), _np_norm(x, (-1,), 1e-5) * p['gamma'] + p['beta'],
                               1e-4, 1e-4)
    gn = nn.GroupNorm(2)
    p = _setup(gn, x)
    normed = _np_norm(x.reshape(2, 2, 2, 3), (2, 3), 1e-5)
    expect = (normed * _bc(p['gamma'], 4) + _bc(p['beta'], 4)).reshape(2, 4, 3)
    np.testing.assert_allclose(_run(gn, x), expect, 1e-4, 1e-4)


def test_embedding_flatten_dropout():
    idx = np.array([[0, 2], [1, 2]], dtype=np.float32)
    emb = nn.Embedding(3, 4)
    p = _setup(emb, idx)
    np.testing.assert_allclose(_run(emb, idx), p['weight'][idx.astype(int)])
    x = _x(2, 3, 4)
    np.testing.assert_allclose(_run(nn.Flatten(), x), x.reshape(2, 12))
    np.testing.assert_allclose(_run(nn.Dropout(0.5), x), x)
    mx.random.seed(1)
    out = _run(nn.Dropout(0.5), np.ones((50, 40), np.float32), train=True)
    assert set(np.unique(out)) <= {0.0, 2.0} and 0.3 < (out == 0).mean() < 0.7
    shared = _run(nn.Dropout(0.5, axes=(1,)), np.ones((20, 30), np.float32), train=True)
    assert (shared == shared[:, :1]).all()
    np.testing.assert_allclose(_run(nn.Dropout(0.0), x, train=True), x)


def test_sparse_embedding():
    emb = cnn.SparseEmbedding(5, 3)
    emb.initialize()
    # MXNet: row_sparse_data needs a Trainer holding the parameter.
    mx.gluon.Trainer(emb.collect_params(), 'sgd')
    idx = mx.nd.array([4, 0])
    out = emb(idx).asnumpy()
    full = emb.weight.row_sparse_data(mx.nd.arange(5)).asnumpy()
    np.testing.assert_allclose(out, full[[4, 0]])
    with pytest.raises(RuntimeError, match='storage type is row_sparse'):
        emb.weight.data()


def _np_gelu(x):
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


ALPHA, LAMBDA = 1.6732632423543772, 1.0507009873554805
ACTIVATIONS = [
    (lambda: nn.Activation('relu'), lambda x: np.maximum(x, 0)),
    (lambda: nn.Activation('sigmoid'), lambda x: 1 / (1 + np.exp(-x))),
    (lambda: nn.Activation('tanh'), np.tanh),
    (lambda: nn.Activation('softrelu'), lambda x: np.log1p(np.exp(x))),
    (lambda: nn.Activation('softsign'), lambda x: x / (1 + np.abs(x))),
    (lambda: nn.LeakyReLU(0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    (lambda: nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    (lambda: nn.SELU(), lambda x: LAMBDA * np.where(x > 0, x, ALPHA * (np.exp(x) - 1))),
    (lambda: nn.Swish(2.0), lambda x: x / (1 + np.exp(-2 * x))),
    (lambda: nn.GELU(), _np_gelu),
    (lambda: nn.PReLU(), lambda x: np.where(x > 0, x, 0.25 * x)),
    (lambda: nn.Lambda('tanh'), np.tanh),
    (lambda: nn.Lambda(lambda x: x * 2), lambda x: x * 2),
    (lambda: nn.HybridLambda('sigmoid'), lambda x: 1 / (1 + np.exp(-x))),
    (lambda: nn.HybridLambda(lambda F, x: F.relu(x) * 3), lambda x: np.maximum(x, 0) * 3),
]


@pytest.mark.parametrize('make,ref', ACTIVATIONS)
def test_activations(make, ref):
    x = _x(3, 4, low=-2, high=2)
    net = make()
    net.initialize()
    np.testing.assert_allclose(_run(net, x), ref(x.astype(np.float64)), 1e-5, 1e-6)


def test_prelu_channels():
    x = _x(2, 3, 4)
    net = nn.PReLU(in_channels=3)
    p = _setup(net, x)
    np.testing.assert_allclose(_run(net, x), np.where(x > 0, x, x * _bc(p['alpha'], 3)),
                               RTOL, ATOL)


# ----------------------------------------------------------------- contrib

def test_concurrent_and_identity():
    x = _x(2, 3)
    hc = cnn.HybridConcurrent(axis=1)
    with hc.name_scope():
        hc.add(nn.Dense(2), cnn.Identity())
    p = _setup(hc, x)
    dense = x @ p['dense0_weight'].T + p['dense0_bias']
    np.testing.assert_allclose(_run(hc, x), np.concatenate([dense, x], axis=1), RTOL, ATOL)
    hc.hybridize()
    np.testing.assert_allclose(_run(hc, x), np.concatenate([dense, x], axis=1), RTOL, ATOL)
    c = cnn.Concurrent(axis=0)
    c.add(cnn.Identity(), nn.Lambda(lambda v: v * 2))
    c.initialize()
    np.testing.assert_allclose(_run(c, x), np.concatenate([x, 2 * x], axis=0))


@pytest.mark.parametrize('factors', [(2,), (2, 3), (2, 1, 2)])
def test_pixel_shuffle(factors):
    nd_ = len(factors)
    c, spatial = 2, (2, 3, 2)[:nd_]
    x = _x(1, c * int(np.prod(factors)), *spatial)
    layer = {1: cnn.PixelShuffle1D, 2: cnn.PixelShuffle2D, 3: cnn.PixelShuffle3D}[nd_]
    net = layer(factors[0] if nd_ == 1 else factors)
    # out[n, c, d*f + i, ...] = x[n, c * prod(f) + flat(i...), d, ...]
    y = x.reshape((1, c) + factors + spatial)
    perm = [0, 1] + [v for k in range(nd_) for v in (2 + nd_ + k, 2 + k)]
    expect = y.transpose(perm).reshape((1, c) + tuple(s * f for s, f in zip(spatial, factors)))
    np.testing.assert_allclose(_run(net, x), expect)
    net.hybridize()
    np.testing.assert_allclose(_run(net, x), expect)


# ----------------------------------------------------------------- hybridize

HYBRID_CASES = [
    (lambda: nn.Dense(3, flatten=False, activation='tanh'), (2, 4, 5)),
    (lambda: nn.BatchNorm(), (2, 3, 4)),
    (lambda: nn.InstanceNorm(axis=2), (2, 3, 4)),
    (lambda: nn.LayerNorm(), (2, 3, 4)),
    (lambda: nn.GroupNorm(2), (2, 4, 3)),
    (lambda: nn.Conv2D(4, 3, padding=1, groups=2), (2, 2, 5, 5)),
    (lambda: nn.Conv2DTranspose(3, 3, strides=2), (2, 2, 4, 4)),
    (lambda: nn.AvgPool2D(3, 2, 1, count_include_pad=False), (1, 2, 6, 6)),
    (lambda: nn.GlobalMaxPool2D(), (2, 3, 4, 4)),
    (lambda: nn.ReflectionPad2D(1), (1, 2, 3, 3)),
    (lambda: nn.PReLU(), (2, 3)),
    (lambda: nn.Swish(), (2, 3)),
    (lambda: nn.HybridLambda('tanh'), (2, 3)),
    (lambda: cnn.SyncBatchNorm(num_devices=1), (2, 3, 4)),
    (_nested, (2, 3, 6, 6)),
]


@pytest.mark.parametrize('make,shape', HYBRID_CASES)
def test_hybridize_matches_imperative(make, shape):
    x = _x(*shape)
    net = make()
    _setup(net, x)
    imperative = _run(net, x)
    net.hybridize()
    np.testing.assert_allclose(_run(net, x), imperative, 1e-5, 1e-6)
    np.testing.assert_allclose(_run(net, x), imperative, 1e-5, 1e-6)


def test_hybridized_deferred_init():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, activation='relu'), nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = _x(3, 7)
    assert net(mx.nd.array(x)).shape == (3, 2)
    assert net[0].weight.shape == (4, 7) and net[1].weight.shape == (2, 4)


# ----------------------------------------------------------------- errors

def test_errors():
    with pytest.raises(AssertionError, match="Only supports 'NCHW' and 'NHWC' layout"):
        nn.Conv2D(4, 3, layout='NCW')
    with pytest.raises(AssertionError, match="Only supports 'NCW' layout"):
        nn.Conv1D(4, 3, layout='NWC')
    with pytest.raises(AssertionError, match='kernel_size must be a number or a list of 2'):
        nn.Conv2D(4, (3, 3, 3))
    with pytest.raises(AssertionError, match='output_padding must be a number or a list of 3'):
        nn.Conv3DTranspose(4, 3, output_padding=(1, 1))
    with pytest.raises(AssertionError, match='Only NCDHW and NDHWC layouts are valid for 3D'):
        nn.MaxPool3D(layout='NCHW')
    with pytest.raises(AssertionError, match='pool_size must be a number or a list of 1'):
        nn.AvgPool1D(pool_size=(2, 2))
    with pytest.raises(AssertionError, match='Slope coefficient'):
        nn.LeakyReLU(-0.1)
    with pytest.raises(AssertionError, match='not found in ndarray'):
        nn.Lambda('no_such_op')
    with pytest.raises(ValueError, match='Unrecognized function in lambda'):
        nn.HybridLambda(3)
    with pytest.raises(AssertionError, match='wrong length 3'):
        cnn.PixelShuffle2D((1, 2, 3))
    net = nn.Dense(3, in_units=4)
    net.initialize()
    with pytest.raises(mx.MXNetError):
        net(mx.nd.ones((2, 5)))


def test_symbolic_graph_names():
    """Node names of the traced graph equal MXNet 1.9.1's (oracle output)."""
    import json
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(4, 3, activation='relu'), nn.BatchNorm(), nn.ELU(),
                    nn.Dense(5), nn.Dropout(0.1))
    out = net(mx.sym.var('data'))
    pre = 'hybridsequential0_'
    assert out.list_arguments() == ['data'] + [pre + n for n in (
        'conv0_weight', 'conv0_bias', 'batchnorm0_gamma', 'batchnorm0_beta',
        'dense0_weight', 'dense0_bias')]
    assert out.list_auxiliary_states() == [pre + 'batchnorm0_running_mean',
                                           pre + 'batchnorm0_running_var']
    ops = [n['name'] for n in json.loads(out.tojson())['nodes'] if n['op'] != 'null']
    # MXNet: ELU passes no name='fwd', so its node gets the automatic 'leakyrelu0'.
    assert ops == [pre + n for n in ('conv0_fwd', 'conv0_relu_fwd', 'batchnorm0_fwd',
                                     'elu0_leakyrelu0', 'dense0_fwd', 'dropout0_fwd')]

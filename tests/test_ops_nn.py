"""FullyConnected, Convolution, Deconvolution, Pooling, Activation and LeakyReLU against
NumPy references and values recorded from real MXNet 1.9.1."""
import itertools
import math

import numpy as np
import pytest
import torch

import mxtorch as mx
from helpers import check_op
from mxtorch.base import MXNetError
from mxtorch.ops import registry

RNG = np.random.RandomState(42)
LOWEST = np.finfo(np.float32).min


def rand(*shape):
    return RNG.uniform(-1, 1, size=shape).astype(np.float32)


def nd(a):
    return mx.nd.array(np.asarray(a, dtype=np.float32))


def raises(op, word):
    """pytest.raises(MXNetError) whose message names the operator and ``word``."""
    return pytest.raises(MXNetError, match=rf"(?s)(?=.*\b{op}\b)(?=.*{word})")


def infer(op, attrs, shapes):
    opdef = registry.get(op)
    return opdef.infer_shape(opdef.parse_attrs(attrs), shapes)


# ---------------------------------------------------------------- NumPy references
def np_fc(x, w, b=None, flatten=True):
    x2 = x.reshape(x.shape[0], -1) if flatten else x
    y = x2 @ w.T
    return y if b is None else y + b


def np_conv(x, w, b=None, stride=None, pad=None, dilate=None, groups=1):
    nd_ = x.ndim - 2
    k = w.shape[2:]
    stride, pad, dilate = stride or (1,) * nd_, pad or (0,) * nd_, dilate or (1,) * nd_
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out_sp = [(xp.shape[2 + i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd_)]
    nf, cg = w.shape[0], w.shape[1]
    fg = nf // groups
    out = np.zeros((x.shape[0], nf, *out_sp))
    for off in itertools.product(*[range(kk) for kk in k]):
        sl = tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                   for o, d, s, n in zip(off, dilate, stride, out_sp))
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            out[:, g * fg:(g + 1) * fg] += np.einsum(
                "nc...,fc->nf...", patch[:, g * cg:(g + 1) * cg],
                w[(slice(g * fg, (g + 1) * fg), slice(None)) + off])
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd_)
    return out


def np_deconv(x, w, b=None, stride=None, pad=None, adj=None, dilate=None, groups=1):
    nd_ = x.ndim - 2
    k = w.shape[2:]
    stride, pad = stride or (1,) * nd_, pad or (0,) * nd_
    adj, dilate = adj or (0,) * nd_, dilate or (1,) * nd_
    cg, fg = x.shape[1] // groups, w.shape[1]
    ins = x.shape[2:]
    full = [s * (n - 1) + d * (kk - 1) + 1 for s, n, d, kk in zip(stride, ins, dilate, k)]
    out = np.zeros((x.shape[0], fg * groups, *full))
    for off in itertools.product(*[range(kk) for kk in k]):
        sl = tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                   for o, d, s, n in zip(off, dilate, stride, ins))
        for g in range(groups):
            out[(slice(None), slice(g * fg, (g + 1) * fg)) + sl] += np.einsum(
                "nc...,cf->nf...", x[:, g * cg:(g + 1) * cg],
                w[(slice(g * cg, (g + 1) * cg), slice(None)) + off])
    out = np.pad(out, [(0, 0), (0, 0)] + [(0, a) for a in adj])
    sizes = [f - 2 * p + a for f, p, a in zip(full, pad, adj)]
    out = out[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in zip(pad, sizes))]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * nd_)
    return out


def np_pool(x, kernel, stride=None, pad=None, pool_type="max", convention="valid",
            include_pad=True, p_value=2):
    """MXNet's pool.h loops: windows clipped to [0, H) (and to H+pad for the avg divisor)."""
    nd_ = x.ndim - 2
    stride, pad = stride or (1,) * nd_, pad or (0,) * nd_
    sp = x.shape[2:]
    if convention == "valid":
        out_sp = [1 + (n + 2 * p - k) // s for n, k, s, p in zip(sp, kernel, stride, pad)]
    else:
        out_sp = [1 + math.ceil((n + 2 * p - k) / s) for n, k, s, p in zip(sp, kernel, stride, pad)]
    out = np.zeros(x.shape[:2] + tuple(out_sp))
    for idx in itertools.product(*[range(o) for o in out_sp]):
        starts = [i * s - p for i, s, p in zip(idx, stride, pad)]
        ends = [min(st + k, n + p) for st, k, n, p in zip(starts, kernel, sp, pad)]
        size = math.prod(e - st for st, e in zip(starts, ends))
        lo = [max(st, 0) for st in starts]
        hi = [min(e, n) for e, n in zip(ends, sp)]
        if not include_pad:
            size = math.prod(h - low for low, h in zip(lo, hi))
        win = x[(slice(None), slice(None)) + tuple(slice(low, h) for low, h in zip(lo, hi))]
        win = win.reshape(x.shape[0], x.shape[1], -1)
        if pool_type == "max":
            val = win.max(-1)
        elif pool_type == "sum":
            val = win.sum(-1)
        elif pool_type == "avg":
            val = win.sum(-1) / size
        else:
            s = (win ** p_value).sum(-1)
            val = np.sign(s) * np.abs(s) ** (1.0 / p_value)
        out[(slice(None), slice(None)) + idx] = val
    return out


# ---------------------------------------------------------------- FullyConnected
def test_fc_flatten():
    x, w, b = rand(2, 3, 2), rand(4, 6), rand(4)
    check_op("FullyConnected", [x, w, b], {"num_hidden": 4}, np_fc)


def test_fc_no_bias_no_flatten():
    x, w = rand(2, 3, 4), rand(5, 4)
    check_op("FullyConnected", [x, w], {"num_hidden": 5, "no_bias": True, "flatten": False},
             lambda a, b: np_fc(a, b, flatten=False))


def test_fc_1d_input():
    # MXNet: a 1-D input is (batch, 1) when flattening, a single vector otherwise.
    y = mx.nd.FullyConnected(nd(np.ones(3)), nd(np.ones((2, 1))), nd(np.ones(2)), num_hidden=2)
    assert y.shape == (3, 2)
    y = mx.nd.FullyConnected(nd(np.ones(3)), nd(np.ones((2, 3))), nd(np.ones(2)),
                             num_hidden=2, flatten=False)
    np.testing.assert_allclose(y.asnumpy(), [4, 4])


def test_fc_infer_shape():
    ins, outs = infer("FullyConnected", {"num_hidden": 4}, [(2, 3, 4), None, None])
    assert ins == [(2, 3, 4), (4, 12), (4,)] and outs == [(2, 4)]
    ins, _ = infer("FullyConnected", {"num_hidden": 4, "flatten": False}, [(2, 3, 4), None, None])
    assert ins[1:] == [(4, 4), (4,)]
    ins, _ = infer("FullyConnected", {"num_hidden": 4, "no_bias": True}, [(0, 3, 4), None])
    assert ins == [(0, 3, 4), (4, 12)]
    ins, outs = infer("FullyConnected", {"num_hidden": 4, "flatten": False},
                      [(2, 3, 0), (4, 7), None])
    assert ins == [(2, 3, 7), (4, 7), (4,)] and outs == [(2, 3, 4)]
    ins, _ = infer("FullyConnected", {"num_hidden": 4}, [(2, 0), (4, 7), None])
    assert ins[0] == (2, 7)


def test_fc_errors():
    with raises("FullyConnected", "weight"):
        mx.nd.FullyConnected(nd(rand(3, 4)), nd(rand(2, 3)), nd(rand(2)), num_hidden=2)
    with raises("FullyConnected", "weight"):
        infer("FullyConnected", {"num_hidden": 3}, [(3, 4), (2, 4), None])
    with raises("FullyConnected", "num_hidden"):
        mx.nd.FullyConnected(nd(rand(3, 4)), nd(rand(2, 4)), nd(rand(2)))


# ---------------------------------------------------------------- Convolution
@pytest.mark.parametrize("shape,attrs", [
    ((2, 2, 7), {"kernel": (3,), "stride": (2,), "pad": (1,), "num_filter": 3}),
    ((1, 2, 5, 3), {"kernel": (3, 2), "stride": (2, 1), "pad": (1, 0), "dilate": (2, 1),
                    "num_filter": 2, "num_group": 2}),
    ((1, 1, 3, 3, 4), {"kernel": (2, 3, 3), "pad": (0, 1, 1), "num_filter": 2}),
])
def test_convolution(shape, attrs):
    nd_ = len(attrs["kernel"])
    w = rand(attrs["num_filter"], shape[1] // attrs.get("num_group", 1), *attrs["kernel"])
    x, b = rand(*shape), rand(attrs["num_filter"])
    check_op("Convolution", [x, w, b], attrs,
             lambda a, ww, bb: np_conv(a, ww, bb, attrs.get("stride"), attrs.get("pad"),
                                       attrs.get("dilate"), attrs.get("num_group", 1)),
             rtol=1e-4, atol=1e-5)
    assert nd_ == len(shape) - 2


def test_convolution_no_bias_depthwise():
    x, w = rand(1, 3, 5, 5), rand(3, 1, 3, 3)
    attrs = {"kernel": (3, 3), "num_filter": 3, "num_group": 3, "no_bias": True,
             "pad": (1, 1)}
    check_op("Convolution", [x, w], attrs,
             lambda a, ww: np_conv(a, ww, pad=(1, 1), groups=3), rtol=1e-4, atol=1e-5)


def test_convolution_nhwc():
    x, w, b = rand(1, 5, 5, 4), rand(6, 3, 3, 2), rand(6)
    y = mx.nd.Convolution(nd(x), nd(w), nd(b), kernel=(3, 3), num_filter=6, num_group=2,
                          layout="NHWC")
    ref = np_conv(x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2), b, groups=2)
    np.testing.assert_allclose(y.asnumpy(), ref.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-5)


def test_convolution_infer_shape():
    attrs = {"kernel": (3, 3), "num_filter": 4, "num_group": 2}
    ins, outs = infer("Convolution", attrs, [(2, 6, 8, 8), None, None])
    assert ins == [(2, 6, 8, 8), (4, 3, 3, 3), (4,)] and outs == [(2, 4, 6, 6)]
    ins, _ = infer("Convolution", dict(attrs, no_bias=True), [(0, 6, 8, 8), None])
    assert ins == [(0, 6, 8, 8), (4, 3, 3, 3)]
    _, outs = infer("Convolution", {"kernel": (3,), "num_filter": 2, "stride": (2,),
                                    "pad": (1,)}, [(1, 3, 9), None, None])
    assert outs == [(1, 2, 5)]


def test_convolution_errors():
    x = nd(rand(1, 4, 5, 5))
    with raises("Convolution", "3D"):
        mx.nd.Convolution(x, nd(rand(2, 4, 3)), kernel=(3,), num_filter=2, no_bias=True)
    with raises("Convolution", "stride"):
        mx.nd.Convolution(x, nd(rand(2, 4, 3, 3)), kernel=(3, 3), stride=(2,), num_filter=2,
                          no_bias=True)
    with raises("Convolution", "weight"):
        mx.nd.Convolution(x, nd(rand(6, 4, 3, 3)), kernel=(3, 3), num_filter=6, num_group=2,
                          no_bias=True)
    with raises("Convolution", "exceeds"):
        mx.nd.Convolution(x, nd(rand(2, 4, 7, 7)), kernel=(7, 7), num_filter=2, no_bias=True)
    with raises("Convolution", "weight"):
        infer("Convolution", {"kernel": (3, 3), "num_filter": 2}, [(1, 4, 5, 5), (2, 3, 3, 3),
                                                                    None])
    with raises("Convolution", "4D"):
        infer("Convolution", {"kernel": (1, 1, 1, 1), "num_filter": 2}, [None, None, None])


# ---------------------------------------------------------------- Deconvolution
@pytest.mark.parametrize("shape,attrs", [
    ((1, 2, 4), {"kernel": (3,), "num_filter": 3, "stride": (2,), "pad": (1,), "adj": (1,)}),
    ((1, 4, 3, 3), {"kernel": (3, 3), "num_filter": 2, "num_group": 2, "stride": (2, 2),
                    "pad": (1, 0), "adj": (1, 0), "no_bias": False}),
    ((1, 2, 2, 3, 2), {"kernel": (2, 2, 2), "num_filter": 2, "stride": (2, 1, 2),
                       "dilate": (1, 2, 1), "no_bias": False}),
])
def test_deconvolution(shape, attrs):
    g = attrs.get("num_group", 1)
    w = rand(shape[1], attrs["num_filter"] // g, *attrs["kernel"])
    inputs = [rand(*shape), w]
    if not attrs.get("no_bias", True):
        inputs.append(rand(attrs["num_filter"]))

    def ref(x, ww, bb=None):
        return np_deconv(x, ww, bb, attrs.get("stride"), attrs.get("pad"), attrs.get("adj"),
                         attrs.get("dilate"), g)
    check_op("Deconvolution", inputs, attrs, ref, rtol=1e-4, atol=1e-5)


def test_deconvolution_target_shape():
    # MXNet: total = full - target; pad = (total + 1) // 2, adj = total % 2.
    x, w = rand(1, 2, 3, 3), rand(2, 1, 3, 3)
    attrs = {"kernel": (3, 3), "num_filter": 2, "num_group": 2, "stride": (2, 2),
             "target_shape": (6, 6)}
    check_op("Deconvolution", [x, w], attrs,
             lambda a, ww: np_deconv(a, ww, stride=(2, 2), pad=(1, 1), adj=(1, 1), groups=2),
             rtol=1e-4, atol=1e-5)
    # target_shape of zeros is ignored (pad applies).
    y = mx.nd.Deconvolution(nd(np.ones((1, 1, 3, 3))), nd(np.ones((1, 1, 3, 3))), kernel=(3, 3),
                            num_filter=1, target_shape=(0, 0), pad=(1, 1))
    np.testing.assert_allclose(y.asnumpy().ravel(), [4, 6, 4, 6, 9, 6, 4, 6, 4])


def test_deconvolution_infer_shape():
    attrs = {"kernel": (3, 3), "num_filter": 4, "num_group": 2}
    ins, outs = infer("Deconvolution", attrs, [(2, 6, 8, 8), None])
    assert ins == [(2, 6, 8, 8), (6, 2, 3, 3)] and outs == [(2, 4, 10, 10)]
    ins, outs = infer("Deconvolution", dict(attrs, stride=(2, 2), target_shape=(15, 15),
                                            no_bias=False), [(2, 6, 8, 8), None, None])
    assert ins[1:] == [(6, 2, 3, 3), (4,)] and outs == [(2, 4, 15, 15)]
    assert registry.get("Deconvolution").input_names(
        registry.get("Deconvolution").parse_attrs(attrs)) == ["data", "weight"]


def test_deconvolution_errors():
    x, w = nd(np.ones((1, 1, 3, 3))), nd(np.ones((1, 1, 3, 3)))
    with raises("Deconvolution", "adj"):
        mx.nd.Deconvolution(x, w, kernel=(3, 3), num_filter=1, target_shape=(4, 4))
    with raises("Deconvolution", "adj"):
        mx.nd.Deconvolution(x, w, kernel=(3, 3), num_filter=1, stride=(2, 2), adj=(2, 2))
    with raises("Deconvolution", "target"):
        mx.nd.Deconvolution(x, w, kernel=(3, 3), num_filter=1, stride=(2, 2),
                            target_shape=(9, 9))
    with raises("Deconvolution", "weight"):
        mx.nd.Deconvolution(x, nd(np.ones((1, 2, 2, 2))), kernel=(3, 3), num_filter=1)


# ---------------------------------------------------------------- Pooling
POOL_CASES = [
    ((1, 2, 5, 5), dict(kernel=(3, 3), stride=(2, 2))),
    ((1, 2, 6, 6), dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full")),
    ((1, 2, 5, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")),
    ((1, 2, 5, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                        count_include_pad=False)),
    ((1, 1, 6, 6), dict(kernel=(3, 3), stride=(2, 2), pool_type="avg",
                        pooling_convention="full")),
    ((1, 2, 4, 4), dict(kernel=(2, 2), stride=(2, 2), pool_type="sum")),
    ((1, 2, 5, 5), dict(kernel=(2, 2), stride=(2, 2), pad=(1, 1), pool_type="sum",
                        pooling_convention="full")),
    ((1, 2, 4, 4), dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)),
    ((1, 2, 4, 4), dict(kernel=(2, 2), pool_type="lp", p_value=1, pad=(1, 1))),
    ((2, 2, 7), dict(kernel=(3,), stride=(2,), pool_type="max")),
    ((2, 2, 7), dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="avg",
                     pooling_convention="full", count_include_pad=False)),
    ((1, 1, 3, 4, 4), dict(kernel=(2, 2, 2), stride=(1, 2, 2), pool_type="max")),
    ((1, 1, 3, 4, 4), dict(kernel=(2, 3, 3), pad=(1, 1, 1), pool_type="avg")),
]


@pytest.mark.parametrize("shape,attrs", POOL_CASES)
def test_pooling(shape, attrs):
    def ref(x):
        return np_pool(x, attrs["kernel"], attrs.get("stride"), attrs.get("pad"),
                       attrs.get("pool_type", "max"), attrs.get("pooling_convention", "valid"),
                       attrs.get("count_include_pad", True) is not False,
                       attrs.get("p_value", 2))
    check_op("Pooling", [rand(*shape)], attrs, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
def test_pooling_global(pool_type):
    x = rand(1, 2, 3, 4)
    reduce = {"max": np.max, "avg": np.mean, "sum": np.sum}[pool_type]
    # MXNet: global pooling ignores kernel, stride and pad.
    check_op("Pooling", [x], {"global_pool": True, "pool_type": pool_type, "kernel": (2, 2),
                              "stride": (2, 2), "pad": (1, 1)},
             lambda a: reduce(a, axis=(2, 3), keepdims=True), rtol=1e-5)


def test_pooling_full_convention_quirks():
    # Recorded from MXNet 1.9.1: 'full' keeps windows lying in the padding; an empty max
    # window is the lowest float32, an empty average window is 0.
    x = nd(np.arange(25).reshape(1, 1, 5, 5))
    y = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pad=(1, 1), pooling_convention="full")
    expected = np.array([[0, 2, 4, LOWEST], [10, 12, 14, LOWEST], [20, 22, 24, LOWEST],
                         [LOWEST] * 4], dtype=np.float32)
    np.testing.assert_array_equal(y.asnumpy()[0, 0], expected)
    y = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pad=(1, 1), pool_type="avg",
                      pooling_convention="full")
    np.testing.assert_allclose(y.asnumpy()[0, 0], [[0, 0.75, 1.75, 0], [3.75, 9, 11, 0],
                                                   [8.75, 19, 21, 0], [0, 0, 0, 0]])
    y = mx.nd.Pooling(x, kernel=(1, 1), stride=(3, 3), pool_type="avg", pooling_convention="full")
    np.testing.assert_allclose(y.asnumpy().ravel(), [0, 3, 0, 15, 18, 0, 0, 0, 0])


def test_pooling_large_pad():
    x = nd(np.arange(25).reshape(1, 1, 5, 5))
    y = mx.nd.Pooling(x, kernel=(2, 2), pad=(2, 2), pool_type="avg").asnumpy()[0, 0]
    assert y.shape == (8, 8)
    np.testing.assert_allclose(y[1], [0, 0, 0.25, 0.75, 1.25, 1.75, 1, 0])
    np.testing.assert_allclose(y[6], [0, 5, 10.25, 10.75, 11.25, 11.75, 6, 0])
    y = mx.nd.Pooling(x, kernel=(2, 2), pad=(2, 2), pool_type="avg", count_include_pad=False)
    np.testing.assert_allclose(y.asnumpy()[0, 0, 1, :4], [0, 0, 0.5, 1.5])
    y = mx.nd.Pooling(x, kernel=(2, 2), pad=(2, 2)).asnumpy()[0, 0]
    np.testing.assert_array_equal(y[0], [LOWEST] * 8)
    np.testing.assert_array_equal(y[1], [LOWEST, 0, 1, 2, 3, 4, 4, LOWEST])


def test_pooling_lp_signed():
    # MXNet: p=1 sums x (not |x|); p=3 sums x^3 and takes the signed cube root.
    x = nd([[[[-1, 2], [3, -4]]]])
    got = [mx.nd.Pooling(x, kernel=(2, 2), pool_type="lp", p_value=p).asnumpy().item()
           for p in (1, 2, 3)]
    np.testing.assert_allclose(got, [0.0, 5.477226, -3.1072326], rtol=1e-6)


def test_pooling_layout_nhwc():
    x = rand(1, 4, 4, 3)
    y = mx.nd.Pooling(nd(x), kernel=(2, 2), stride=(2, 2), pool_type="avg", layout="NHWC")
    ref = np_pool(x.transpose(0, 3, 1, 2), (2, 2), (2, 2), pool_type="avg")
    np.testing.assert_allclose(y.asnumpy(), ref.transpose(0, 2, 3, 1), rtol=1e-5)


def test_pooling_same_convention():
    x = np.array([[[3, 1, 4, 1, 5, 9, 2]]], dtype=np.float32)
    y = mx.nd.Pooling(nd(x), kernel=(3,), stride=(2,), pooling_convention="same")
    # 'same': out = ceil(7 / 2) = 4, total padding 2 split 1 left / 1 right.
    np.testing.assert_allclose(y.asnumpy(), [[[3, 4, 9, 9]]])


def _np_max_pool_grad(x, k, s):
    """Gradient of a sum of 'valid' max pooling: one per window, to its first maximum."""
    g = np.zeros_like(x)
    n, c, h, w = x.shape
    for i in range((h - k) // s + 1):
        for j in range((w - k) // s + 1):
            win = x[:, :, i * s:i * s + k, j * s:j * s + k].reshape(n, c, -1)
            first = win.argmax(-1)   # NumPy's argmax is the first maximum too
            for a in range(n):
                for b in range(c):
                    g[a, b, i * s + first[a, b] // k, j * s + first[a, b] % k] += 1
    return g


@pytest.mark.parametrize("kernel,stride", [(2, 2), (3, 2)])
def test_pooling_large_max_via_channels_last(kernel, stride):
    # large NCHW max pooling on CPU runs on a channels-last copy; values, the first-max
    # gradient (ties included: relu zeros) and the layout of the results are NCHW's
    x = np.maximum(rand(4, 25, 13, 13), 0)
    assert x.size >= 1 << 14
    a = nd(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(a, kernel=(kernel, kernel), stride=(stride, stride))
    assert "ChannelsLastMaxPool" in type(y._t.grad_fn).__name__
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), np_pool(x, (kernel,) * 2, (stride,) * 2))
    np.testing.assert_array_equal(a.grad.asnumpy(), _np_max_pool_grad(x, kernel, stride))
    assert y._t.is_contiguous() and a.grad._t.is_contiguous()
    z = mx.nd.Pooling(a, kernel=(kernel, kernel), stride=(stride, stride))  # not recorded
    assert z._t.is_contiguous() and z._t.grad_fn is None
    np.testing.assert_array_equal(z.asnumpy(), y.asnumpy())
    full = mx.nd.Pooling(a, kernel=(2, 2), stride=(2, 2), pooling_convention="full")
    np.testing.assert_array_equal(full.asnumpy(), np_pool(x, (2, 2), (2, 2),
                                                          convention="full"))


def test_pooling_errors():
    x = nd(rand(1, 1, 2, 2))
    with raises("Pooling", "exceeds"):
        mx.nd.Pooling(x, kernel=(3, 3))
    with raises("Pooling", "kernel"):
        mx.nd.Pooling(x, kernel=(3,))
    with raises("Pooling", "stride"):
        mx.nd.Pooling(x, kernel=(1, 1), stride=(1,))
    with raises("Pooling", "p_value"):
        mx.nd.Pooling(x, kernel=(2, 2), pool_type="lp")
    with raises("Pooling", "pool_type"):
        mx.nd.Pooling(x, kernel=(2, 2), pool_type="median")
    with raises("Pooling", "same"):
        mx.nd.Pooling(x, kernel=(2, 2), pooling_convention="same")
    with raises("Pooling", "floating"):
        mx.nd.Pooling(mx.nd.array(np.ones((1, 1, 2, 2)), dtype="int32"), kernel=(2, 2))
    with raises("Pooling", "3D"):
        mx.nd.Pooling(nd(rand(3, 4)), kernel=(2,))


def test_pooling_infer_shape():
    _, outs = infer("Pooling", {"kernel": (3, 3), "stride": (2, 2),
                                "pooling_convention": "full"}, [(1, 2, 6, 6)])
    assert outs == [(1, 2, 3, 3)]
    _, outs = infer("Pooling", {"global_pool": True}, [(1, 2, 6, 7)])
    assert outs == [(1, 2, 1, 1)]


# ---------------------------------------------------------------- Activation
ACTS = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "softrelu": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (1 + np.abs(x)),
}


@pytest.mark.parametrize("act_type", sorted(ACTS))
def test_activation(act_type):
    x = rand(3, 4) * 3
    x[np.abs(x) < 0.05] = 0.5  # keep away from relu's kink
    check_op("Activation", [x], {"act_type": act_type}, ACTS[act_type])


def test_activation_softrelu_large():
    y = mx.nd.Activation(nd([-30, 30, 25, 19]), act_type="softrelu").asnumpy()
    np.testing.assert_allclose(y, [9.357623e-14, 30, 25, 19], rtol=1e-6)


def test_activation_errors():
    with raises("Activation", "act_type"):
        mx.nd.Activation(nd([1.0]), act_type="foo")
    with raises("Activation", "act_type"):
        mx.nd.Activation(nd([1.0]))
    with raises("Activation", "floating"):
        mx.nd.Activation(mx.nd.array([1, 2], dtype="int32"), act_type="relu")


# ---------------------------------------------------------------- LeakyReLU
SELU_L, SELU_A = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717


def np_gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


@pytest.mark.parametrize("attrs,ref", [
    ({}, lambda x: np.where(x > 0, x, 0.25 * x)),
    ({"act_type": "leaky", "slope": 0.1}, lambda x: np.where(x > 0, x, 0.1 * x)),
    ({"act_type": "elu", "slope": 0.7}, lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    ({"act_type": "gelu"}, np_gelu),
    ({"act_type": "rrelu", "lower_bound": 0.1, "upper_bound": 0.3},
     lambda x: np.where(x > 0, x, 0.2 * x)),
])
def test_leaky_relu(attrs, ref):
    x = rand(3, 4) * 2
    x[np.abs(x) < 0.05] = 0.5
    check_op("LeakyReLU", [x], attrs, ref)


def test_selu_mxnet_gradient():
    # MXNet: selu's gradient is lambda * (alpha + y) for y <= 0, y being the output.
    x = rand(3, 4) * 2
    y = np.where(x > 0, SELU_L * x, SELU_L * SELU_A * np.expm1(x.astype(np.float64)))
    check_op("LeakyReLU", [x], {"act_type": "selu"}, lambda a: y, grad=False)
    a = nd(x)
    a.attach_grad()
    with mx.autograd.record():
        out = mx.nd.LeakyReLU(a, act_type="selu")
    out.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), np.where(y > 0, SELU_L, SELU_L * (SELU_A + y)),
                               rtol=1e-5)


def test_prelu():
    x, g = rand(2, 3, 4), rand(3)
    check_op("LeakyReLU", [x, g], {"act_type": "prelu"},
             lambda a, gg: np.where(a > 0, a, a * gg.reshape(1, 3, 1)))
    x[0, 0, 0] = -1
    check_op("LeakyReLU", [x, np.array([0.5], np.float32)], {"act_type": "prelu"},
             lambda a, gg: np.where(a > 0, a, a * 0.5))


def test_prelu_gamma_broadcast_quirks():
    # Recorded from MXNet 1.9.1: gamma aligns with axis 1, else axis 0 (expand_shape).
    y = mx.nd.LeakyReLU(nd(-np.ones((2, 3, 2, 2))), nd([1, 2]), act_type="prelu").asnumpy()
    np.testing.assert_array_equal(y[:, 0, 0, 0], [-1, -2])
    y = mx.nd.LeakyReLU(nd(-np.ones((2, 3))), nd([[1, 2, 3], [4, 5, 6]]), act_type="prelu")
    np.testing.assert_array_equal(y.asnumpy(), [[-1, -2, -3], [-4, -5, -6]])
    with raises("LeakyReLU", "gamma"):
        mx.nd.LeakyReLU(nd(-np.ones((2, 3, 2))), nd(np.ones((3, 2))), act_type="prelu")


def test_leaky_relu_structure_and_infer_shape():
    opdef = registry.get("LeakyReLU")
    prelu = opdef.parse_attrs({"act_type": "prelu"})
    rrelu = opdef.parse_attrs({"act_type": "rrelu"})
    assert opdef.input_names(prelu) == ["data", "gamma"]
    assert opdef.input_names(rrelu) == ["data"]
    assert opdef.num_outputs(rrelu) == 1 and opdef.total_outputs(rrelu) == 2
    assert opdef.parse_attrs({}).upper_bound == pytest.approx(0.334)
    ins, outs = opdef.infer_shape(prelu, [(2, 3, 4, 4), None])
    assert ins == [(2, 3, 4, 4), (3,)] and outs == [(2, 3, 4, 4)]
    with raises("LeakyReLU", "act_type"):
        mx.nd.LeakyReLU(nd([1.0]), act_type="swish")


def test_rrelu_training():
    x = nd(-np.ones((50, 40)))
    with mx.autograd.train_mode():
        y = mx.nd.LeakyReLU(x, act_type="rrelu", lower_bound=0.1, upper_bound=0.3).asnumpy()
    assert ((-y >= 0.1 - 1e-6) & (-y <= 0.3 + 1e-6)).all()
    assert y.std() > 0.03  # the slopes are random per element
    xp = nd(np.ones((3, 3)))
    with mx.autograd.train_mode():
        np.testing.assert_array_equal(mx.nd.LeakyReLU(xp, act_type="rrelu").asnumpy(), 1)


def test_meta_forward_shapes():
    # The computes run on meta tensors (default shape inference).
    opdef = registry.get("Pooling")
    attrs = opdef.parse_attrs({"kernel": (2, 2), "stride": (2, 2), "pad": (1, 1),
                               "pool_type": "avg", "pooling_convention": "full"})
    assert opdef.meta_forward(attrs, [(1, 1, 5, 5)], None)[0] == [(1, 1, 4, 4)]
    t = torch.empty(2, 3, device="meta")
    out = registry.get("LeakyReLU").run(registry.get("LeakyReLU").parse_attrs(
        {"act_type": "rrelu"}), [t], is_train=True)
    assert out.shape == (2, 3)


def test_pooling_same_convention_takes_a_zero_pad_of_any_length():
    x = np.random.RandomState(0).rand(1, 1, 10).astype(np.float32)
    out = mx.nd.Pooling(mx.nd.array(x), kernel=2, stride=2, pad=(0, 0, 0), pool_type="max",
                        pooling_convention="same")
    np.testing.assert_array_equal(out.asnumpy(), x.reshape(1, 1, 5, 2).max(-1))
    with pytest.raises(MXNetError, match="disables the use of pad"):
        mx.nd.Pooling(mx.nd.array(x), kernel=2, stride=2, pad=(1,), pool_type="max",
                      pooling_convention="same")


def test_pooling_and_flatten_shape_inference_matches_the_computes():
    op = registry.get("Pooling")
    for kw, shape in [(dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full"),
                       (2, 3, 7, 9)),
                      (dict(kernel=(2,), pool_type="avg", pad=(1,)), (2, 3, 8)),
                      (dict(kernel=(2, 2, 2), layout="NDHWC"), (1, 4, 4, 4, 3)),
                      (dict(kernel=(1, 1), global_pool=True), (2, 3, 5, 5))]:
        want = mx.nd.Pooling(mx.nd.ones(shape), **kw).shape
        assert op.infer_shape(op.parse_attrs(kw), [shape])[1] == [want]
    flat = mx.sym.Flatten(mx.sym.var("d"))
    assert flat.infer_shape(d=(2, 3, 4))[1] == [(2, 12)]
    assert flat.infer_shape_partial(d=(2, 0, 4))[1] == [(2, 0)]


def test_leaky_relu_inference_is_declared_not_run_on_meta_tensors():
    # torch's meta elu/gelu/selu/leaky_relu are Python refs whose first call imports
    # torch._dynamo (about 1 s); LeakyReLU's shapes and dtypes are declared instead
    import subprocess
    import sys
    code = ("import sys, mxtorch as mx\n"
            "x = mx.sym.Variable('x')\n"
            "for a in ('elu', 'gelu', 'selu', 'rrelu', 'leaky', 'prelu'):\n"
            "    s = mx.sym.LeakyReLU(x, act_type=a)\n"
            "    assert s.infer_shape(x=(3, 4))[1] == [(3, 4)], a\n"
            "    assert s.infer_type(x='float16')[1][0].__name__ == 'float16', a\n"
            "print('torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"

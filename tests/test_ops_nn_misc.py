"""Dropout, softmax family, UpSampling, spatial transformer ops and ROIPooling vs NumPy."""
import math

import numpy as np
import pytest

import mxtorch as mx
from helpers import check_op

RNG = np.random.RandomState(0)


# ---------------------------------------------------------------------------- Dropout
def test_dropout_inference_is_identity():
    x = RNG.randn(3, 4)
    check_op("Dropout", [x], {"p": 0.5}, expected=lambda x: x)


def test_dropout_p1_is_nan():
    # MXNet: p=1 scales the all-zero mask by 1/(1-p) = inf, so every output (and
    # gradient) is NaN in training and with mode='always'
    x = mx.nd.array(np.ones((3, 4), dtype=np.float32))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=1.0)
    y.backward()
    assert np.isnan(y.asnumpy()).all() and np.isnan(x.grad.asnumpy()).all()
    assert np.isnan(mx.nd.Dropout(x, p=1.0, mode="always", axes=(0,)).asnumpy()).all()
    np.testing.assert_array_equal(mx.nd.Dropout(x, p=1.0).asnumpy(), 1)  # inference


def test_dropout_training_mask_and_grad():
    x = mx.nd.array(np.ones((200, 50), dtype=np.float32))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=0.25)
    y.backward()
    out = y.asnumpy()
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.2 < (out == 0).mean() < 0.3
    np.testing.assert_array_equal(x.grad.asnumpy(), out)


def test_dropout_axes_and_mode_always():
    x = mx.nd.array(np.ones((4, 6, 5), dtype=np.float32))
    with mx.autograd.train_mode():
        y = mx.nd.Dropout(x, p=0.5, axes=(1,)).asnumpy()
    # one mask value shared along axis 1
    assert (y == y[:, :1, :]).all()
    assert set(np.unique(y)) <= {0.0, 2.0}
    z = mx.nd.Dropout(x, p=0.5, mode="always").asnumpy()
    assert set(np.unique(z)) == {0.0, 2.0}
    with pytest.raises(mx.base.MXNetError, match="Dropout"):
        mx.nd.Dropout(x, p=1.5, mode="always")


# ---------------------------------------------------------------------------- softmax family
def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("axis,temp", [(-1, None), (1, 2.0), (0, 0.5)])
def test_softmax_family(axis, temp):
    x = RNG.randn(2, 3, 4)
    t = 1.0 if temp is None else temp
    attrs = {"axis": axis, "temperature": temp}
    check_op("softmax", [x], attrs, expected=lambda x: _np_softmax(x / t, axis))
    check_op("log_softmax", [x], attrs, expected=lambda x: np.log(_np_softmax(x / t, axis)))
    check_op("softmin", [x], attrs, expected=lambda x: _np_softmax(-x / t, axis))


def test_softmax_use_length():
    x = np.random.RandomState(0).randn(2, 5).astype(np.float32)
    length = np.array([2, 4], dtype=np.int32)
    # recorded from MXNet 1.9.1: softmax(x, length, use_length=True, temperature=2)
    expected = [[0.66417325, 0.33582678, 0, 0, 0],
                [0.14968447, 0.3923729, 0.2262159, 0.2317268, 0]]
    check_op("softmax", [x, length], {"use_length": True, "temperature": 2.0},
             expected=[np.array(expected)], grad=[0])
    out = mx.nd.softmax(mx.nd.array(x), mx.nd.array([0, 5], dtype="int32"), use_length=True)
    np.testing.assert_allclose(out.asnumpy()[0], np.zeros(5))
    np.testing.assert_allclose(out.asnumpy()[1], _np_softmax(x[1], 0), rtol=1e-6)
    assert mx.sym.softmax(mx.sym.var("d"), use_length=True,
                          name="s").list_arguments() == ["d", "s_length"]
    with pytest.raises(mx.base.MXNetError, match="softmax"):
        mx.nd.softmax(mx.nd.array(x), mx.nd.array([2.0, 4.0]), use_length=True)
    with pytest.raises(mx.base.MXNetError, match="log_softmax"):
        mx.nd.log_softmax(mx.nd.array(x), use_length=True)


def test_softmax_dtype():
    x = mx.nd.array(RNG.randn(2, 3), dtype="float16")
    assert mx.nd.softmax(x, dtype="float32").dtype == np.float32
    assert mx.nd.softmax(x).dtype == np.float16


def test_softmax_activation():
    x = RNG.randn(2, 4, 3)
    # MXNet: 'instance' mode is a softmax over the last axis
    check_op("SoftmaxActivation", [x], {}, expected=lambda x: _np_softmax(x, -1))
    check_op("SoftmaxActivation", [x], {"mode": "channel"},
             expected=lambda x: _np_softmax(x, 1))


# ---------------------------------------------------------------------------- UpSampling
def test_upsampling_nearest():
    a, b = RNG.randn(1, 2, 3, 3), RNG.randn(1, 1, 6, 6)

    def up(x, s):
        return x.repeat(s, axis=2).repeat(s, axis=3)
    check_op("UpSampling", [a], {"scale": 2, "sample_type": "nearest"},
             expected=lambda a: up(a, 2))
    check_op("UpSampling", [a, b], {"scale": 2, "sample_type": "nearest", "num_args": 2},
             expected=lambda a, b: np.concatenate([up(a, 2), b], axis=1))
    c = RNG.randn(1, 2, 1, 1)
    check_op("UpSampling", [a, c], {"scale": 2, "sample_type": "nearest", "num_args": 2,
                                    "multi_input_mode": "sum"},
             expected=lambda a, c: up(a, 2) + up(c, 6))


def _deconv_ref(x, w, stride, pad):
    n, c, h, wd = x.shape
    k = w.shape[2]
    full = np.zeros((n, c, (h - 1) * stride + k, (wd - 1) * stride + k))
    for i in range(h):
        for j in range(wd):
            full[:, :, i * stride:i * stride + k, j * stride:j * stride + k] += \
                x[:, :, i:i + 1, j:j + 1] * w[None, :, 0]
    return full[:, :, pad:full.shape[2] - pad, pad:full.shape[3] - pad]


@pytest.mark.parametrize("scale", [2, 3])
def test_upsampling_bilinear_is_grouped_deconvolution(scale):
    k = 2 * scale - scale % 2
    pad = math.ceil((scale - 1) / 2)
    x, w = RNG.randn(1, 2, 3, 3), RNG.randn(2, 1, k, k)
    check_op("UpSampling", [x, w], {"scale": scale, "sample_type": "bilinear",
                                    "num_filter": 2},
             expected=lambda x, w: _deconv_ref(x, w, scale, pad), rtol=1e-5, atol=1e-5)
    sym = mx.sym.UpSampling(mx.sym.var("data"), mx.sym.var("w"), scale=scale,
                            sample_type="bilinear", num_filter=3)
    args, outs, _ = sym.infer_shape(data=(1, 3, 4, 4))
    assert args[1] == (3, 1, k, k) and outs[0] == (1, 3, 4 * scale, 4 * scale)
    with pytest.raises(mx.base.MXNetError, match="UpSampling"):
        mx.nd.UpSampling(mx.nd.array(x), mx.nd.array(w[:, :, :2]), scale=scale,
                         sample_type="bilinear", num_filter=2)


# ---------------------------------------------------------------------------- spatial transformer
def _bilinear_sample_ref(data, grid):
    n, c, h, w = data.shape
    out = np.zeros((n, c) + grid.shape[2:])
    for b in range(n):
        for i in range(grid.shape[2]):
            for j in range(grid.shape[3]):
                x = (grid[b, 0, i, j] + 1) * (w - 1) / 2
                y = (grid[b, 1, i, j] + 1) * (h - 1) / 2
                x0, y0 = math.floor(x), math.floor(y)
                for yy, xx in ((y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)):
                    if 0 <= yy < h and 0 <= xx < w:
                        wgt = (1 - abs(x - xx)) * (1 - abs(y - yy))
                        out[b, :, i, j] += wgt * data[b, :, yy, xx]
    return out


def test_bilinear_sampler():
    data = RNG.randn(2, 3, 5, 6)
    grid = RNG.uniform(-1.2, 1.2, (2, 2, 4, 3))
    check_op("BilinearSampler", [data, grid], {}, expected=_bilinear_sample_ref,
             grad=[0], rtol=1e-5, atol=1e-5)
    with pytest.raises(mx.base.MXNetError, match="BilinearSampler"):
        mx.nd.BilinearSampler(mx.nd.array(data), mx.nd.array(grid[:, :1]))


def _affine_grid_ref(theta, h, w):
    xs, ys = np.meshgrid(np.linspace(-1, 1, w), np.linspace(-1, 1, h))
    src = np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)])
    return (theta.reshape(-1, 2, 3) @ src).reshape(-1, 2, h, w)


def test_grid_generator():
    theta = np.array([[0.9, 0.1, 0.05, -0.2, 1.1, 0.1], [1.2, -0.3, 0.2, 0.1, 0.8, -0.1]])
    check_op("GridGenerator", [theta], {"transform_type": "affine", "target_shape": (3, 4)},
             expected=lambda t: _affine_grid_ref(t, 3, 4))
    flow = RNG.randn(2, 2, 3, 4)

    def warp(f):
        xs, ys = np.meshgrid(np.arange(4), np.arange(3))
        return np.stack([(f[:, 0] + xs) * 2 / 3 - 1, (f[:, 1] + ys) * 2 / 2 - 1], axis=1)
    check_op("GridGenerator", [flow], {"transform_type": "warp"}, expected=warp)
    with pytest.raises(mx.base.MXNetError, match="GridGenerator"):
        mx.nd.GridGenerator(mx.nd.array(theta), transform_type="affine")


# ---------------------------------------------------------------------------- ROIPooling
def _c_round(v):
    return math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)


def _roi_pool_ref(data, rois, pooled, scale):
    ph, pw = pooled
    h, w = data.shape[2:]
    out = np.zeros((len(rois), data.shape[1], ph, pw))
    for r, roi in enumerate(rois):
        x1, y1, x2, y2 = (_c_round(v * scale) for v in roi[1:])
        bh, bw = max(y2 - y1 + 1, 1) / ph, max(x2 - x1 + 1, 1) / pw
        for i in range(ph):
            hs = min(max(math.floor(i * bh) + y1, 0), h)
            he = min(max(math.ceil((i + 1) * bh) + y1, 0), h)
            for j in range(pw):
                ws = min(max(math.floor(j * bw) + x1, 0), w)
                we = min(max(math.ceil((j + 1) * bw) + x1, 0), w)
                if he > hs and we > ws:
                    out[r, :, i, j] = data[int(roi[0]), :, hs:he, ws:we].max(axis=(1, 2))
    return out


ROIS = np.array([[0, 0, 0, 7, 7], [1, 1.2, 2.6, 5.4, 6.1], [0, 3, 3, 3, 3],
                 [1, -2, -2, 20, 20], [0, 4.4, 1, 2, 6]])


@pytest.mark.parametrize("pooled,scale", [((3, 2), 1.0), ((2, 3), 0.5)])
def test_roi_pooling(pooled, scale):
    data = RNG.randn(2, 3, 8, 8)
    rois = ROIS.copy()
    rois[:, 1:] /= scale
    check_op("ROIPooling", [data, rois], {"pooled_size": pooled, "spatial_scale": scale},
             expected=lambda d, r: _roi_pool_ref(d, r, pooled, scale), grad=[0])


def test_roi_pooling_errors():
    with pytest.raises(mx.base.MXNetError, match="ROIPooling"):
        mx.nd.ROIPooling(mx.nd.array(RNG.randn(1, 2, 4, 4)), mx.nd.array(ROIS[:, :4]),
                         pooled_size=(2, 2), spatial_scale=1.0)


# ---------------------------------------------------------------------------- im2col / col2im
_SLIDE = dict(kernel=(2, 2), stride=(2, 1), dilate=(1, 2), pad=(1, 0))


def test_im2col_values_and_gradient():
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 4, 3)
    # recorded with MXNet 1.9.1
    expected = [[[0, 3, 9], [0, 5, 11], [0, 6, 0], [2, 8, 0], [0, 15, 21], [0, 17, 23],
                 [12, 18, 0], [14, 20, 0]]]
    check_op("im2col", [x], _SLIDE, expected=[np.array(expected)])
    ones = mx.nd.col2im(mx.nd.ones((1, 8, 3)), (4, 3), **_SLIDE).asnumpy()
    np.testing.assert_array_equal(ones[0, 0], [[1, 0, 1]] * 4)
    check_op("col2im", [RNG.randn(2, 8, 3).astype(np.float32)],
             dict(_SLIDE, output_size=(4, 3)))


def test_im2col_is_convolution_and_col2im_its_adjoint():
    x = RNG.rand(2, 3, 7, 6).astype(np.float32)
    w = RNG.rand(4, 3, 3, 3).astype(np.float32)
    kw = dict(kernel=(3, 3), stride=(2, 2), dilate=(2, 1), pad=(1, 1))
    col = mx.nd.im2col(mx.nd.array(x), **kw)
    conv = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), num_filter=4, no_bias=True, **kw)
    got = np.einsum("fk,nkl->nfl", w.reshape(4, -1), col.asnumpy()).reshape(conv.shape)
    np.testing.assert_allclose(got, conv.asnumpy(), rtol=1e-5, atol=1e-5)
    y = RNG.rand(*col.shape).astype(np.float32)
    back = mx.nd.col2im(mx.nd.array(y), (7, 6), **kw).asnumpy()
    np.testing.assert_allclose((col.asnumpy() * y).sum(), (x * back).sum(), rtol=1e-5)
    col1 = mx.nd.im2col(mx.nd.array(x[:, :, 0]), kernel=(3,), pad=(1,))   # 1-D
    np.testing.assert_allclose(col1.asnumpy(), mx.nd.im2col(
        mx.nd.array(x[:, :, :1]), kernel=(1, 3), pad=(0, 1)).asnumpy())


def test_im2col_errors():
    x = mx.nd.ones((1, 1, 3, 3))
    with pytest.raises(mx.base.MXNetError, match="im2col"):
        mx.nd.im2col(x, kernel=(4, 4))
    with pytest.raises(mx.base.MXNetError, match="im2col"):
        mx.nd.im2col(x, kernel=(2, 2), stride=(1,))
    with pytest.raises(mx.base.MXNetError, match="col2im"):
        mx.nd.col2im(mx.nd.ones((1, 4, 5)), (3, 3), kernel=(2, 2))

"""_contrib_BilinearResize2D and _contrib_PSROIPooling against values from MXNet 1.9.1."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from helpers import check_op

SRC = np.random.RandomState(0).rand(1, 1, 5, 7)


@pytest.mark.parametrize("kwargs,shape,row", [
    # MXNet computes scale * size in float32: 0.7 * 5 -> 3 rows, 1.3 * 7 -> 9 columns
    ({"scale_height": 0.7, "scale_width": 1.3}, (1, 1, 3, 9),
     [0.07104, 0.08311, 0.05367, 0.22332, 0.83262, 0.79177, 0.82408, 0.89716, 0.97862]),
    ({"mode": "odd_scale", "scale_height": 0.5, "scale_width": 2.0}, (1, 1, 3, 13),
     [0.07104, 0.07908, 0.08713, 0.05367, 0.02022, 0.42642, 0.83262, 0.80539, 0.77816,
      0.82408, 0.87001, 0.92432, 0.97862]),
    ({"mode": "to_even_up"}, (1, 1, 6, 8),
     [0.82318, 0.901, 0.56635, 0.60733, 0.64185, 0.52949, 0.61853, 0.82799]),
    ({"mode": "to_odd_down", "align_corners": False}, (1, 1, 5, 7),
     [0.89177, 0.96366, 0.38344, 0.79173, 0.52889, 0.56804, 0.9256]),
])
def test_bilinear_resize_modes(kwargs, shape, row):
    out = mx.nd.contrib.BilinearResize2D(mx.nd.array(SRC), **kwargs)
    assert out.shape == shape
    np.testing.assert_allclose(out.asnumpy()[0, 0, 1], row, atol=2e-5)


def test_bilinear_resize_like_align_corners_and_gradient():
    x = np.array([64, 32, 32, 64, 50, 100], np.float32).reshape(1, 1, 3, 2)
    out = mx.nd.contrib.BilinearResize2D(mx.nd.array(x), height=6, width=4,
                                         align_corners=False)
    np.testing.assert_allclose(out.asnumpy()[0, 0, 3], [36.5, 45.625, 63.875, 73.0])
    like = mx.nd.zeros((1, 1, 4, 3))
    assert mx.nd.contrib.BilinearResize2D(mx.nd.array(x), like, mode="like").shape == \
        (1, 1, 4, 3)
    sym = mx.sym.contrib.BilinearResize2D(mx.sym.var("d"), None, mode="to_odd_up")
    assert sym.list_arguments() == ["d"]
    assert sym.infer_shape(d=(2, 2, 20, 21))[1] == [(2, 2, 21, 21)]
    check_op("_contrib_BilinearResize2D", [SRC], {"height": 4, "width": 9}, None)
    with pytest.raises(MXNetError, match="4D"):
        mx.nd.contrib.BilinearResize2D(mx.nd.ones((3, 4)), height=2, width=2)


def test_psroipooling_matches_mxnet():
    rng = np.random.RandomState(0)
    data = mx.nd.array(rng.rand(2, 18, 10, 12))
    rois = mx.nd.array([[0, 10, 22, 161, 173], [1, 20, 15, 90, 100], [0, 3, 3, 3.4, 3.6],
                        [1, -20, 5, 300, 60]])
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.PSROIPooling(data, rois, spatial_scale=0.0625, output_dim=2,
                                         pooled_size=3)
    out.backward(mx.nd.array(rng.rand(*out.shape)))
    # values from MXNet 1.9.1 (empty bins are 0)
    np.testing.assert_allclose(
        out.asnumpy()[:, :, 1].ravel(),
        [0.49147, 0.5445, 0.41807, 0.5214, 0.5053, 0.43473, 0.55858, 0.58217, 0.49608,
         0.46713, 0.56702, 0.58046, 0.18713, 0.07087, 0.17466, 0.48968, 0.64056, 0.67263,
         0.63401, 0.60909, 0.0, 0.3403, 0.56673, 0.0], atol=2e-5)
    assert abs(float(out.sum().asscalar()) - 32.9784) < 1e-3
    assert abs(float((data.grad * data.grad).sum().asscalar()) - 6.5662) < 1e-3
    sym = mx.sym.contrib.PSROIPooling(mx.sym.var("d"), mx.sym.var("r"), spatial_scale=0.1,
                                      output_dim=4, pooled_size=2)
    assert sym.infer_shape(d=(1, 16, 5, 5), r=(7, 5))[1] == [(7, 4, 2, 2)]
    with pytest.raises(MXNetError, match="channels"):
        mx.nd.contrib.PSROIPooling(data, rois, spatial_scale=0.0625, output_dim=3,
                                   pooled_size=3)


def _deform_np(x, off, w, pad, dg):
    """Deformable 3x3 convolution, stride 1, by loops over the definition."""
    n, c, h, wd = x.shape
    f, kh, kw = w.shape[0], w.shape[2], w.shape[3]
    out = np.zeros((n, f, h + 2 * pad - 2, wd + 2 * pad - 2))
    for b in range(n):
        for oy in range(out.shape[2]):
            for ox in range(out.shape[3]):
                col = np.zeros((c, kh * kw))
                for ch in range(c):
                    grp = ch // (c // dg)
                    for k in range(kh * kw):
                        y = oy - pad + k // kw + off[b, grp * 18 + 2 * k, oy, ox]
                        xx = ox - pad + k % kw + off[b, grp * 18 + 2 * k + 1, oy, ox]
                        if not (0 <= y < h and 0 <= xx < wd):
                            continue
                        y0, x0 = int(np.floor(y)), int(np.floor(xx))
                        y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, wd - 1)
                        ly = 0 if y0 >= h - 1 else y - y0
                        lx = 0 if x0 >= wd - 1 else xx - x0
                        col[ch, k] = ((1 - ly) * (1 - lx) * x[b, ch, y0, x0]
                                      + (1 - ly) * lx * x[b, ch, y0, x1]
                                      + ly * (1 - lx) * x[b, ch, y1, x0]
                                      + ly * lx * x[b, ch, y1, x1])
                out[b, :, oy, ox] = w.reshape(f, -1) @ col.reshape(-1)
    return out


def test_deformable_convolution():
    rng = np.random.RandomState(0)
    x = rng.rand(2, 4, 5, 6)
    off = (rng.rand(2, 2 * 9 * 2, 5, 6) - 0.5) * 3
    w = rng.normal(0, 1, (6, 2, 3, 3))
    b = rng.rand(6)
    attrs = {"kernel": (3, 3), "pad": (1, 1), "num_filter": 6, "num_group": 2,
             "num_deformable_group": 2}
    grouped = lambda x_, o_, w_, b_: np.concatenate(  # noqa: E731
        [_deform_np(x_[:, :2], o_[:, :18], w_[:3], 1, 1),
         _deform_np(x_[:, 2:], o_[:, 18:], w_[3:], 1, 1)], 1) + b_.reshape(1, -1, 1, 1)
    check_op("_contrib_DeformableConvolution", [x, off, w, b], attrs, grouped, grad=False,
             rtol=1e-4, atol=1e-5)
    small = [x[:1, :2, :4, :4], off[:1, :18, :4, :4], w[:2], b[:2]]
    check_op("_contrib_DeformableConvolution", small, dict(attrs, num_filter=2, num_group=1,
                                                           num_deformable_group=1), None)
    # values from MXNet 1.9.1: output row and the sums of squares of the four gradients
    xs = [mx.nd.array(a) for a in (x, off, w, b)]
    for a in xs:
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.DeformableConvolution(*xs, **attrs)
    y.backward(mx.nd.array(rng.rand(*y.shape)))
    np.testing.assert_allclose(y.asnumpy()[1, 3, 2], [2.379, -1.3451, -0.4332, 0.5868, 0.3715,
                                                      1.595], atol=1e-4)
    np.testing.assert_allclose([float((a.grad * a.grad).sum().asscalar()) for a in xs],
                               [1304.298, 191.996, 11232.092, 5674.507], rtol=1e-4)
    sym = mx.sym.contrib.DeformableConvolution(mx.sym.var("d"), mx.sym.var("o"), kernel=(3, 3),
                                               num_filter=4, name="dc")
    args, outs, _ = sym.infer_shape(d=(1, 3, 7, 7), o=(1, 18, 5, 5))
    assert sym.list_arguments() == ["d", "o", "dc_weight", "dc_bias"]
    assert args[2:] == [(4, 3, 3, 3), (4,)] and outs == [(1, 4, 5, 5)]
    with pytest.raises(MXNetError, match="offset map"):
        sym.infer_shape(d=(1, 3, 7, 7), o=(1, 18, 4, 5))


RA_DATA = np.random.RandomState(1).rand(2, 8, 9, 11)
RA_ROIS = np.array([[0, 1.5, 2.2, 7.9, 8.8], [1, -3, -2, 4, 3], [1, 9.5, 7, 13, 12],
                    [0, 3, 3, 3.2, 3.1]])


@pytest.mark.parametrize("kwargs,first", [
    # channel 0 of the first two ROIs, from MXNet 1.9.1 (a sample far outside reads 0)
    ({}, [0.5265, 0.437, 0.6037, 0.3937, 0.6137, 0.4741, 0.0854, 0.2729, 0.3065, 0.5543,
          0.3313, 0.3612]),
    ({"sample_ratio": 2}, [0.5611, 0.5103, 0.6663, 0.4543, 0.551, 0.4166, 0.0826, 0.3202,
                           0.3071, 0.5564, 0.3378, 0.3204]),
    ({"aligned": True}, [0.6213, 0.4471, 0.5482, 0.3908, 0.6802, 0.4399, 0.0, 0.0, 0.1121,
                         0.5603, 0.2018, 0.4185]),
])
def test_roi_align_matches_mxnet(kwargs, first):
    out = mx.nd.contrib.ROIAlign(mx.nd.array(RA_DATA), mx.nd.array(RA_ROIS),
                                 pooled_size=(3, 2), spatial_scale=1.0, **kwargs)
    assert out.shape == (4, 8, 3, 2)
    np.testing.assert_allclose(out.asnumpy()[:2, 0].ravel(), first, atol=1e-4)


def test_roi_align_position_sensitive_gradient_and_rotated():
    rng = np.random.RandomState(2)
    data = mx.nd.array(RA_DATA)
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.ROIAlign(data, mx.nd.array(RA_ROIS), pooled_size=(2, 2),
                                     spatial_scale=1.0, position_sensitive=True)
    out.backward(mx.nd.ones(out.shape))
    assert out.shape == (4, 2, 2, 2)
    np.testing.assert_allclose(out.asnumpy()[:2, 0].ravel(), [0.5102, 0.4932, 0.5613, 0.4011,
                                                          0.1214, 0.3848, 0.4123, 0.4775],
                               atol=1e-4)
    assert data.grad.shape == RA_DATA.shape
    check_op("_contrib_ROIAlign", [rng.rand(1, 2, 5, 6), np.array([[0, 0.6, 1.3, 4.1, 3.7]])],
             {"pooled_size": (2, 2), "spatial_scale": 1.0, "sample_ratio": 2}, None, grad=[0])
    rot = mx.nd.contrib.RROIAlign(mx.nd.array(RA_DATA),
                                  mx.nd.array([[0, 5, 4, 6, 3, 30], [1, 2, 7, 4, 5, -60]]),
                                  pooled_size=(2, 3), spatial_scale=1.0)
    np.testing.assert_allclose(rot.asnumpy()[0, 0].ravel(), [0.4692, 0.2987, 0.6086, 0.6698,
                                                             0.1849, 0.6279], atol=1e-4)
    pooled = mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.array(RA_DATA), output_size=(4, 3))
    np.testing.assert_allclose(pooled.asnumpy()[0, 0].ravel(),
                               [0.501, 0.3303, 0.5136, 0.5631, 0.4503, 0.5675, 0.4856, 0.4322,
                                0.47, 0.6473, 0.5383, 0.5478], atol=1e-4)

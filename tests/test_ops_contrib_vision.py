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

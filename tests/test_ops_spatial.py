"""Correlation, SpatialTransformer and Crop against NumPy and values from MXNet 1.9.1."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from helpers import check_op

A = (np.arange(40).reshape(1, 2, 5, 4) % 7 / 7.0).astype(np.float32)
B = (np.arange(40).reshape(1, 2, 5, 4) % 5 / 5.0).astype(np.float32)


def _correlation_np(a, b, k, md, s1, s2, pad, mult):
    """Direct loops of the definition (windows start at i * stride1 + max_displacement)."""
    pa = np.pad(a, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    pb = np.pad(b, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    border = md + (k - 1) // 2
    th = int(np.ceil((pa.shape[2] - 2 * border) / s1))
    tw = int(np.ceil((pa.shape[3] - 2 * border) / s1))
    r = md // s2
    out = np.zeros((a.shape[0], (2 * r + 1) ** 2, th, tw))
    for i in range(th):
        for j in range(tw):
            y1, x1 = i * s1 + md, j * s1 + md
            for c, (dy, dx) in enumerate((dy, dx) for dy in range(-r, r + 1)
                                         for dx in range(-r, r + 1)):
                w1 = pa[:, :, y1:y1 + k, x1:x1 + k]
                w2 = pb[:, :, y1 + dy * s2:y1 + dy * s2 + k, x1 + dx * s2:x1 + dx * s2 + k]
                val = w1 * w2 if mult else np.abs(w1 - w2)
                out[:, c, i, j] = val.mean(axis=(1, 2, 3))
    return out


@pytest.mark.parametrize("k,md,s1,s2,pad,mult", [(3, 1, 2, 1, 1, True), (1, 2, 1, 2, 2, False),
                                                 (3, 2, 1, 1, 2, False), (1, 3, 2, 3, 3, True)])
def test_correlation_vs_numpy(k, md, s1, s2, pad, mult):
    attrs = dict(kernel_size=k, max_displacement=md, stride1=s1, stride2=s2, pad_size=pad,
                 is_multiply=mult)
    check_op("Correlation", [A, B], attrs,
             lambda a, b: _correlation_np(a, b, k, md, s1, s2, pad, mult), grad=mult)


def test_correlation_abs_gradient_and_outputs():
    # values from MXNet 1.9.1: |a - b| takes sign +1 at a == b for data1 (-1 for data2)
    x, y = mx.nd.array(A), mx.nd.array(B)
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        out = mx.nd.Correlation(x, y, kernel_size=1, max_displacement=2, stride2=2,
                                pad_size=2, is_multiply=False)
    out.backward(mx.nd.ones(out.shape))
    assert out.shape == (1, 9, 5, 4)
    np.testing.assert_allclose(x.grad.asnumpy()[0, 1, 2], [0.5, -1.5, 1.5, 1.5])
    np.testing.assert_allclose(y.grad.asnumpy()[0, 0, 2], [3.0, 3.0, -3.0, -2.0])
    np.testing.assert_allclose(out.asnumpy()[0, 1, 2], [0.0714286, 0.0714286, 0.0714286, 0.1],
                               rtol=1e-5)
    sym = mx.sym.Correlation(mx.sym.var("a"), mx.sym.var("b"), name="c")
    assert sym.list_outputs() == ["c_output"]
    assert sym.infer_shape(a=(2, 3, 7, 6))[1] == [(2, 9, 5, 4)]
    assert sym.infer_type(b=np.float16)[0] == [np.float16, np.float16]


def test_correlation_errors():
    x = mx.nd.array(A)
    with pytest.raises(MXNetError, match="kernel size should be odd"):
        mx.nd.Correlation(x, x, kernel_size=2)
    with pytest.raises(MXNetError, match="don't fit"):
        mx.nd.Correlation(x, x, kernel_size=1, max_displacement=2)


def test_spatial_transformer():
    # values from MXNet 1.9.1
    d = mx.nd.array(np.arange(12.0).reshape(1, 1, 3, 4))
    loc = mx.nd.array([[0.5, 0.1, 0.2, -0.1, 0.8, 0.1]])
    d.attach_grad()
    loc.attach_grad()
    with mx.autograd.record():
        out = mx.nd.SpatialTransformer(d, loc, target_shape=(2, 3), transform_type="affine",
                                       sampler_type="bilinear")
    out.backward(mx.nd.ones(out.shape))
    np.testing.assert_allclose(out.asnumpy(), [[[[2.5, 2.85, 3.2], [9.2, 9.55, 9.9]]]],
                               rtol=1e-5)
    np.testing.assert_allclose(d.grad.asnumpy()[0, 0, 2], [0.0, 0.845, 1.295, 0.56], atol=1e-5)
    np.testing.assert_allclose(loc.grad.asnumpy(), [[0, 0, 9, 13.2, -13.2, 10.8]], atol=1e-4)
    # identity transform: the corner pixels are -1 and 1
    check_op("SpatialTransformer", [np.arange(12.0).reshape(1, 1, 3, 4),
                                    np.array([[1.0, 0, 0, 0, 1, 0]])],
             {"target_shape": (3, 4), "transform_type": "affine", "sampler_type": "bilinear"},
             [np.arange(12.0).reshape(1, 1, 3, 4)], grad=False)
    sym = mx.sym.SpatialTransformer(mx.sym.var("data"), mx.sym.var("loc"), target_shape=(5, 6),
                                    transform_type="affine", sampler_type="bilinear")
    args, outs, _ = sym.infer_shape(data=(2, 3, 9, 9))
    assert args == [(2, 3, 9, 9), (2, 6)] and outs == [(2, 3, 5, 6)]
    with pytest.raises(MXNetError, match="target_shape"):
        mx.nd.SpatialTransformer(d, loc, transform_type="affine", sampler_type="bilinear")


def test_crop():
    x = np.arange(60.0).reshape(2, 1, 5, 6)
    check_op("Crop", [x], {"num_args": 1, "h_w": (2, 3), "offset": (1, 2)},
             lambda a: a[:, :, 1:3, 2:5])
    check_op("Crop", [x, np.zeros((1, 1, 2, 3))], {"num_args": 2, "center_crop": True},
             lambda a, b: a[:, :, 1:3, 1:4], grad=[0])
    sym = mx.sym.Crop(mx.sym.var("a"), mx.sym.var("b"), num_args=2)
    assert sym.list_arguments() == ["a", "b"]
    assert sym.infer_shape(a=(2, 3, 8, 8), b=(1, 1, 4, 5))[1] == [(2, 3, 4, 5)]
    with pytest.raises(MXNetError, match="offset"):
        mx.nd.Crop(mx.nd.array(x), num_args=1, h_w=(2, 3), offset=(4, 0))
    with pytest.raises(MXNetError, match="h_w"):
        mx.nd.Crop(mx.nd.array(x), num_args=1, h_w=(6, 3))

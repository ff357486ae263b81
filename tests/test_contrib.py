"""mx.contrib: the ndarray/symbol namespaces, the 1.x-era autograd API and DataLoaderIter."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch import gluon
from mxtorch.contrib import autograd as cag
from mxtorch.contrib.io import DataLoaderIter


def test_namespaces_are_the_contrib_operators():
    assert mx.contrib.nd is mx.contrib.ndarray and mx.contrib.sym is mx.contrib.symbol
    assert mx.contrib.ndarray.isnan is mx.nd.contrib.isnan
    x = mx.nd.array([1.0, np.nan])
    np.testing.assert_array_equal(mx.contrib.ndarray.isnan(x).asnumpy(), [0, 1])
    assert "rand_zipfian" in mx.contrib.symbol.__all__


def test_grad_and_loss():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    y = mx.nd.array([[0.5, 1.0], [2.0, -1.0]])
    grads, loss = cag.grad_and_loss(lambda a, b: a * b + a)(x, y)
    np.testing.assert_array_equal(loss.asnumpy(), (x * y + x).asnumpy())
    np.testing.assert_array_equal(grads[0].asnumpy(), y.asnumpy() + 1)
    np.testing.assert_array_equal(grads[1].asnumpy(), x.asnumpy())
    only_b = cag.grad(lambda a, b, flag: a * b, argnum=[1])(x, y, True)
    assert len(only_b) == 1
    np.testing.assert_array_equal(only_b[0].asnumpy(), x.asnumpy())
    with pytest.raises(AssertionError, match="should NDArray"):
        cag.grad(lambda a: a)(1.0)


def test_train_and_test_sections():
    x = mx.nd.ones((20, 20))
    assert not mx.autograd.is_recording()
    with cag.train_section():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        assert (mx.nd.Dropout(x, p=0.5).asnumpy() == 0).any()
        with cag.test_section():
            assert not mx.autograd.is_training()
            np.testing.assert_array_equal(mx.nd.Dropout(x, p=0.5).asnumpy(), x.asnumpy())
        assert mx.autograd.is_training()
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    # MXNet: the value returned is the previous recording state
    assert cag.set_is_training(True) is False
    assert cag.set_is_training(False) is True


def test_mark_variables_backward_with_out_grads():
    x = mx.nd.ones((3, 2))
    dx = mx.nd.zeros_like(x)
    cag.mark_variables([x], [dx], grad_reqs="add")
    for _ in range(2):
        with cag.train_section():
            a, b, c = mx.nd.split(x, axis=0, num_outputs=3, squeeze_axis=True)
            cag.backward([a, b, c], [None, mx.nd.array([1, 2]), mx.nd.array([5, 4])])
    np.testing.assert_array_equal(dx.asnumpy(), [[2, 2], [2, 4], [10, 8]])
    with pytest.raises(AssertionError, match="list or tuple"):
        cag.backward(a)
    with pytest.raises(AssertionError, match="same length"):
        cag.backward([a, b], [None])


def test_compute_gradient_retain_graph():
    x = mx.nd.array([1.0, 2.0])
    dx = mx.nd.zeros_like(x)
    cag.mark_variables([x], [dx])
    with cag.train_section():
        y = x * x
        cag.backward([y], retain_graph=True)
        cag.compute_gradient([y])
    np.testing.assert_array_equal(dx.asnumpy(), [2.0, 4.0])
    with pytest.raises(mx.MXNetError):
        cag.compute_gradient([y])             # the graph was not retained


@pytest.mark.parametrize("last_batch, batches, pad", [("discard", 3, 0), ("keep", 4, 2),
                                                      ("rollover", 3, 0)])
def test_dataloader_iter(last_batch, batches, pad):
    data = np.arange(10 * 3, dtype=np.float32).reshape(10, 3)
    label = np.arange(10, dtype=np.float32)
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(data, label), 3,
                                   last_batch=last_batch)
    it = DataLoaderIter(loader, data_name="x", label_name="y", dtype="float16")
    assert it.provide_data[0].name == "x" and it.provide_data[0].shape == (3, 3)
    assert it.provide_label[0].shape == (3,)
    seen = list(it)
    assert len(seen) == batches
    assert all(b.data[0].shape == (3, 3) and b.data[0].dtype == np.float16 for b in seen)
    assert seen[-1].pad == pad
    np.testing.assert_array_equal(seen[1].label[0].asnumpy(), [3, 4, 5])
    if pad:
        np.testing.assert_array_equal(seen[-1].data[0].asnumpy()[:1], data[9:])
    it.reset()
    assert len(list(it)) == batches

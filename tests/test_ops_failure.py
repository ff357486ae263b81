"""Operator failures reported where the result is waited for, as MXNet's asynchronous
engine reports them (mxtorch/ops/failure.py). Every expectation here is what real MXNet
1.9.1 does on the same calls."""
import numpy as np
import pytest
import torch

import mxtorch as mx
from mxtorch.base import MXNetError
from mxtorch.ops.failure import FailedTensor

_SCALE = "scale parameter in gaussian has to be positive"


@pytest.fixture(autouse=True)
def _nothing_pending():
    mx.nd.waitall()
    yield
    mx.nd.waitall()


def _failing():
    return mx.nd.random.normal(0, -1, (2, 2))


def test_the_call_returns_and_the_wait_raises_once():
    a = _failing()                         # no error at the call
    assert a.shape == (2, 2) and a.dtype == np.float32
    with pytest.raises(MXNetError, match=_SCALE):
        a.wait_to_read()
    a.wait_to_read()                       # raised once: the array is clean afterwards
    np.testing.assert_array_equal(a.asnumpy(), np.zeros((2, 2)))
    mx.nd.waitall()


def test_operators_on_a_failed_array_share_its_error():
    b = _failing()
    c = mx.nd.dot(b + 1, mx.nd.ones((2, 3)))
    assert c.shape == (2, 3)
    with pytest.raises(MXNetError, match=_SCALE):
        c.asnumpy()
    b.wait_to_read()                       # the same error: reported already
    with pytest.raises(MXNetError, match="shape mismatch"):
        mx.nd.dot(_failing(), mx.nd.ones((3, 3)))   # shape errors: at the call
    with pytest.raises(MXNetError, match=_SCALE):
        mx.nd.waitall()


def test_reads_raise():
    for read in (lambda x: repr(x), lambda x: x.sum().asscalar(), lambda x: x.asnumpy(),
                 lambda x: x.tolist() if hasattr(x, "tolist") else x.asnumpy()):
        with pytest.raises(MXNetError, match=_SCALE):
            read(_failing())
        mx.nd.waitall()


def test_waitall_raises_the_first_pending_error_and_clears_all():
    d = _failing()
    e = mx.nd.Custom(mx.nd.ones((2,)), op_type="h5_failure_test")
    with pytest.raises(MXNetError, match=_SCALE):
        mx.nd.waitall()
    mx.nd.waitall()                        # a waitall after a waitall raises nothing
    d.wait_to_read()
    e.wait_to_read()


def test_slices_of_a_failed_array_share_its_error():
    a, b = _failing().copyto(mx.cpu())
    with pytest.raises(MXNetError, match=_SCALE):
        a.asnumpy()
    np.testing.assert_array_equal(b.asnumpy(), [0, 0])


def test_writes_carry_the_error():
    i = _failing()
    i[:] = 3                               # writing into a failed array keeps the error
    with pytest.raises(MXNetError, match=_SCALE):
        i.asnumpy()
    dst = mx.nd.ones((2, 2))
    assert type((dst + _failing())._t) is FailedTensor
    assert type(dst._t) is torch.Tensor    # only the arrays an operator writes
    dst[:] = _failing()                    # a failed array written into another one
    with pytest.raises(MXNetError, match=_SCALE):
        dst.wait_to_read()
    np.testing.assert_array_equal(dst.asnumpy(), np.zeros((2, 2)))
    assert type(dst._t) is torch.Tensor    # an ordinary tensor again once reported


def test_the_random_generator_fails_with_the_sampler():
    # MXNet: the samplers share the generator, which the failed one leaves failed: later
    # samplers fail with the same error until it is raised
    a = _failing()
    b = mx.nd.random.uniform(0, 1, (2, 2))
    s = mx.nd.sample_normal(mx.nd.ones((2,)), mx.nd.ones((2,)))
    x = mx.nd.ones((2, 2)) + 1
    with pytest.raises(MXNetError, match=_SCALE):
        b.wait_to_read()
    a.wait_to_read()
    s.wait_to_read()
    x.wait_to_read()
    c = mx.nd.random.normal(0, 1, (200,))
    assert type(c._t) is torch.Tensor and c.asnumpy().std() > 0.5
    mx.nd.waitall()


def test_gluon_block_on_a_failed_input():
    net = mx.gluon.nn.Sequential()
    net.add(mx.gluon.nn.Dense(4, activation="tanh", in_units=3),
            mx.gluon.nn.Dropout(0.5), mx.gluon.nn.Dense(2, in_units=4))
    net.initialize()
    z = net(mx.nd.random.normal(10, -10, (5, 3)))
    assert z.shape == (5, 2)
    with pytest.raises(MXNetError, match=_SCALE):
        z.wait_to_read()


def test_failed_outputs_on_meta_tensors_are_plain():
    from mxtorch.ops.failure import failed
    out = failed(MXNetError("never reported"), torch.empty((2,), device="meta"))
    assert type(out) is torch.Tensor
    mx.nd.waitall()


class _Raises(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise RuntimeError("custom failure")


@mx.operator.register("h5_failure_test")
class _RaisesProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Raises()


def test_failed_tensor_class():
    f = _failing()
    assert isinstance(f._t, FailedTensor)
    g = f._t * 2 + torch.ones(2, 2)
    assert isinstance(g, FailedTensor) and g._mx_failure is f._t._mx_failure
    with pytest.raises(MXNetError, match=_SCALE):
        mx.nd.waitall()
    assert type(f._t * 2) is torch.Tensor   # reported: results are ordinary tensors
    assert type(f._t) is torch.Tensor


def test_backward_from_a_failed_array_reports_the_failure():
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="h5_failure_test") * 2
    with pytest.raises(MXNetError, match="custom failure"):
        y.backward()

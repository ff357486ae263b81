"""NDArray API: creation, properties, views, indexing, arithmetic, conversion, repr.
Expected values were checked against real MXNet 1.9.1."""
import pickle

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError


def test_repr_and_properties():
    a = mx.nd.array([[1, 2], [3, 4]])
    assert str(a) == "\n[[1. 2.]\n [3. 4.]]\n<NDArray 2x2 @cpu(0)>"
    assert a.shape == (2, 2) and a.ndim == 2 and a.size == 4
    assert a.dtype is np.float32 and a.stype == "default"
    assert a.context == mx.cpu(0) and a.ctx == mx.cpu(0)
    assert len(a) == 2


def test_array_default_dtypes():
    assert mx.nd.array(np.array([1, 2], dtype=np.float64)).dtype is np.float32
    assert mx.nd.array(mx.nd.array([1, 2], dtype="int32")).dtype is np.int32
    assert mx.nd.array([1, 2], dtype="float16").dtype is np.float16
    assert mx.nd.array(3.0).shape == (1,)


def test_contexts_distinct_but_same_device():
    assert mx.cpu(0) != mx.cpu(1)
    b = mx.nd.array([1, 2]).copyto(mx.cpu(1))
    assert b.context == mx.cpu(1)
    c = b + b
    assert c.context == mx.cpu(1)
    with mx.cpu(1):
        assert mx.nd.array([1]).context == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)


def test_gpu_without_cuda_raises():
    if mx.num_gpus() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(MXNetError, match="gpu"):
        mx.nd.array([1, 2], ctx=mx.gpu(0))


def test_comparisons_return_input_dtype():
    a = mx.nd.array([[1, 2], [3, 4]])
    r = a > 2
    assert r.dtype is np.float32
    np.testing.assert_array_equal(r.asnumpy(), [[0, 0], [1, 1]])


def test_bool_rules():
    with pytest.raises(ValueError, match="multiple elements"):
        bool(mx.nd.array([1, 2]))
    assert not bool(mx.nd.array([0]))
    assert bool(mx.nd.array([2]))


def test_setitem_views_and_copies():
    x = mx.nd.array([[1, 2], [3, 4]])
    x[0] = 9
    np.testing.assert_array_equal(x.asnumpy(), [[9, 9], [3, 4]])
    x[:, 1] = mx.nd.array([7, 8])
    np.testing.assert_array_equal(x.asnumpy(), [[9, 7], [3, 8]])
    x[1, 0] = 5
    y = x.reshape((4,))
    y[0] = -1  # reshape is a view
    np.testing.assert_array_equal(x.asnumpy(), [[-1, 7], [5, 8]])
    row = x[1]  # a contiguous slice is a view (MXNet's _at)
    row[:] = 0
    np.testing.assert_array_equal(x.asnumpy(), [[-1, 7], [0, 0]])
    col = x[:, 1]  # a strided slice is a copy (MXNet's slice op)
    col[:] = 3
    np.testing.assert_array_equal(x.asnumpy(), [[-1, 7], [0, 0]])


def test_getitem_forms():
    a = mx.nd.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(a[mx.nd.array([1, 0])].asnumpy(), [[3, 4], [1, 2]])
    np.testing.assert_array_equal(a[[1, 0]].asnumpy(), [[3, 4], [1, 2]])
    np.testing.assert_array_equal(a[1:, :1].asnumpy(), [[3]])
    assert a[1, 1].shape == (1,)
    assert mx.nd.arange(3)[1].shape == (1,)
    with pytest.raises(IndexError):
        a[5]


def test_arithmetic_and_reflected():
    a = mx.nd.array([1, 2])
    np.testing.assert_array_equal((a ** 2).asnumpy(), [1, 4])
    np.testing.assert_array_equal((2 ** a).asnumpy(), [2, 4])
    np.testing.assert_array_equal((1 - a).asnumpy(), [0, -1])
    np.testing.assert_array_equal((1 / a).asnumpy(), [1, 0.5])
    b = mx.nd.array([[1], [2]])
    np.testing.assert_array_equal((a + b).asnumpy(), [[2, 3], [3, 4]])
    z = mx.nd.array([[0, 0, 0]])
    z += 1
    np.testing.assert_array_equal(z.asnumpy(), [[1, 1, 1]])


def test_integer_semantics():
    i = mx.nd.array([1, 2, 3], dtype="int32")
    np.testing.assert_array_equal((i / 2).asnumpy(), [0, 1, 1])
    assert (i / 2).dtype is np.int32
    np.testing.assert_array_equal((i + 0.5).asnumpy(), [1, 2, 3])


def test_asscalar_astype_copy():
    assert mx.nd.array([3]).asscalar() == np.float32(3)
    assert isinstance(mx.nd.array([3]).asscalar(), np.float32)
    with pytest.raises(ValueError, match="not a scalar"):
        mx.nd.array([1, 2]).asscalar()
    a = mx.nd.array([1.7, 2.2])
    assert a.astype("int32").dtype is np.int32
    c = a.copy()
    c[:] = 0
    assert a.asnumpy()[0] == np.float32(1.7)
    d = mx.nd.zeros((2,))
    a.copyto(d)
    np.testing.assert_array_equal(d.asnumpy(), a.asnumpy())
    with pytest.raises(MXNetError):
        a.copyto(mx.nd.array([1, 2, 3]))


def test_pickle_roundtrip():
    a = mx.nd.array([[1, 2], [3, 4]])
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_iter_and_T():
    a = mx.nd.array([[1, 2], [3, 4]])
    rows = [r.asnumpy().tolist() for r in a]
    assert rows == [[1, 2], [3, 4]]
    np.testing.assert_array_equal(a.T.asnumpy(), [[1, 3], [2, 4]])


def test_reshape_codes():
    a = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    assert a.reshape((0, -1)).shape == (2, 12)
    assert a.reshape((-3, 4)).shape == (6, 4)
    assert a.reshape((-4, 1, 2, -2)).shape == (1, 2, 3, 4)
    assert a.reshape(-1).shape == (24,)
    assert a.reshape(4, 6).shape == (4, 6)
    with pytest.raises(MXNetError, match="Reshape"):
        a.reshape((5, 5))


def test_unknown_attribute_and_bad_value():
    a = mx.nd.array([1, 2])
    # MXNet: an operator without parameters ignores unknown keys; others refuse them.
    np.testing.assert_array_equal(mx.nd.relu(a, foo=1).asnumpy(), [1, 2])
    with pytest.raises(MXNetError, match="unknown attribute 'foo'"):
        mx.nd.clip(a, a_min=0, a_max=1, foo=1)
    with pytest.raises(MXNetError, match="shape"):
        mx.nd.Reshape(a, shape="(x, y)")


def test_fluent_methods():
    a = mx.nd.array([[1, -2], [3, -4]])
    np.testing.assert_array_equal(a.relu().asnumpy(), [[1, 0], [3, 0]])
    np.testing.assert_array_equal(a.abs().asnumpy(), [[1, 2], [3, 4]])
    with pytest.raises(AttributeError):
        a.no_such_method()


def test_negative_step_slices():
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = mx.nd.array(src)
    np.testing.assert_array_equal(a[::-1].asnumpy(), src[::-1])
    np.testing.assert_array_equal(a[:, ::-2].asnumpy(), src[:, ::-2])
    np.testing.assert_array_equal(a[1, ::-1].asnumpy(), src[1, ::-1])
    a[:, ::-1] = mx.nd.array(src)
    np.testing.assert_array_equal(a.asnumpy(), src[:, ::-1])


# Which results share memory with their input, as real MXNet 1.9.1 answers (writing -1 into
# the result and reading the input back): operators return new arrays; NDArray.reshape,
# basic indexing, astype(copy=False) and detach share.
_COPIES = {
    "slice_axis": lambda a: mx.nd.slice_axis(a, axis=1, begin=0, end=2),
    "slice": lambda a: mx.nd.slice(a, begin=(0, 0, 0), end=(1, 2, 2)),
    "crop": lambda a: mx.nd.crop(a, begin=(0, 0, 0), end=(1, 2, 2)),
    "reshape": lambda a: mx.nd.reshape(a, shape=(6, 4)),
    "Flatten": lambda a: mx.nd.Flatten(a),
    "flatten": lambda a: mx.nd.flatten(a),
    "transpose": lambda a: mx.nd.transpose(a),
    "expand_dims": lambda a: mx.nd.expand_dims(a, axis=0),
    "squeeze": lambda a: mx.nd.squeeze(a.expand_dims(0), axis=0),
    "swapaxes": lambda a: mx.nd.swapaxes(a, 0, 1),
    "split": lambda a: mx.nd.split(a, num_outputs=2, axis=0)[0],
    "SliceChannel": lambda a: mx.nd.SliceChannel(a, num_outputs=3, axis=1)[1],
    "split_v2": lambda a: mx.nd.split_v2(a, (1,), axis=0)[1],
    "broadcast_to": lambda a: mx.nd.broadcast_to(a.slice_axis(axis=0, begin=0, end=1),
                                                 shape=(2, 3, 4)),
    "T": lambda a: a.T,
    "method slice": lambda a: a.slice(begin=(0, 0, 0), end=(1, 2, 2)),
    "method flatten": lambda a: a.flatten(),
    "method transpose": lambda a: a.transpose(),
    "method reshape_like": lambda a: a.reshape_like(mx.nd.zeros((6, 4))),
    "diag": lambda a: mx.nd.diag(a[0]),
    "astype": lambda a: a.astype("float32"),
}
_SHARES = {
    "method reshape": lambda a: a.reshape((6, 4)),
    "a[1]": lambda a: a[1],
    "a[0:1]": lambda a: a[0:1],
    "a[0, 1:3]": lambda a: a[0, 1:3],
    "astype copy=False": lambda a: a.astype("float32", copy=False),
    "detach": lambda a: a.detach(),
}


@pytest.mark.parametrize("name", sorted(_COPIES) + sorted(_SHARES))
def test_which_results_share_memory_with_the_input(name):
    a = mx.nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    res = (_COPIES.get(name) or _SHARES[name])(a)
    res[:] = -1
    changed = bool((a.asnumpy() == -1).any())
    assert changed == (name in _SHARES)
    assert (res.asnumpy() == -1).all()


def test_T_is_a_transposed_copy_and_self_below_2d():
    a = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    np.testing.assert_array_equal(a.T.asnumpy(), np.arange(24).reshape(2, 3, 4).T)
    b = mx.nd.array([1.0, 2.0])
    assert b.T is b


def test_split_v2():
    a = mx.nd.arange(12).reshape((6, 2))
    assert [x.shape for x in mx.nd.split_v2(a, 3)] == [(2, 2)] * 3
    parts = mx.nd.split_v2(a, (1, 4))
    assert [x.shape for x in parts] == [(1, 2), (3, 2), (2, 2)]
    np.testing.assert_array_equal(parts[1].asnumpy(), [[2, 3], [4, 5], [6, 7]])
    assert [x.shape for x in mx.nd.split_v2(a, 2, axis=1, squeeze_axis=True)] == [(6,)] * 2
    with pytest.raises(ValueError, match="equal division"):
        mx.nd.split_v2(a, 4)
    with pytest.raises(ValueError, match="int or tuple"):
        mx.nd.split_v2(a, [1, 2])

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
    assert mx.nd.array(3.0).shape == () and mx.nd.array(np.ones(())).asnumpy() == 1


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


# ---------------------------------------------------------------------- namespaces
def test_namespaces_are_importable_modules_filled_from_the_registry():
    import importlib
    for front in ("ndarray", "symbol"):
        for ns in ("op", "_internal", "contrib", "linalg", "random", "image"):
            mod = importlib.import_module(f"mxtorch.{front}.{ns}")
            assert getattr(mx, front).__dict__[ns] is mod
    from mxtorch.ndarray import linalg, op, _internal
    # one function per registry name, whichever namespace shows it
    assert linalg.gemm2 is _internal._linalg_gemm2 and op.sum is mx.nd.sum
    assert mx.nd.image.to_tensor is mx.nd._internal._image_to_tensor
    assert mx.nd.random.uniform_like is mx.nd._internal._random_uniform_like
    assert callable(mx.sym.linalg.potrf) and callable(mx.nd.contrib.ctc_loss)
    assert "_plus_scalar" not in vars(op) and "sum" not in vars(_internal)
    out = mx.nd.linalg.gemm2(mx.nd.array([[1, 2]]), mx.nd.array([[3], [4]]))
    assert out.asnumpy().tolist() == [[11]]


def test_mxnet_ndarray_module_names_resolve():
    from mxtorch.ndarray.ndarray import (add, arange, concatenate, get_oshape_of_gather_nd_op,
                                         get_indexing_dispatch_code, imdecode, onehot_encode,
                                         indexing_key_expand_implicit_axes, zeros)
    assert add(mx.nd.array([1]), 2).asnumpy().tolist() == [3]
    assert zeros((2,)).shape == (2,) and arange(3).asnumpy().tolist() == [0, 1, 2]
    assert concatenate([mx.nd.ones(1), mx.nd.zeros(1)]).asnumpy().tolist() == [1, 0]
    assert callable(onehot_encode) and callable(imdecode)
    assert get_oshape_of_gather_nd_op((3, 4, 5), (2, 7)) == (7, 5)
    assert get_indexing_dispatch_code((0, slice(1), None)) == 0
    assert get_indexing_dispatch_code(([0],)) == 1
    assert get_indexing_dispatch_code(((),)) == 2
    with pytest.raises(ValueError, match="key 1.5 of type"):
        get_indexing_dispatch_code((1.5,))
    full = slice(None)
    assert indexing_key_expand_implicit_axes((0, Ellipsis), (3, 4, 5)) == ((0, full, full), -1)
    assert indexing_key_expand_implicit_axes((slice(2), None, 0), (3, 4, 5)) == \
        ((slice(2), None, 0, full), -1)
    with pytest.raises(IndexError, match="more than one ellipsis"):
        indexing_key_expand_implicit_axes((Ellipsis, Ellipsis), (3,))
    with pytest.raises(ValueError, match="legacy mode"):
        indexing_key_expand_implicit_axes(mx.nd.array([1, 0, 1], dtype="bool"), (3,))
    with pytest.raises(ImportError):
        from mxtorch.ndarray.ndarray import no_such_name  # noqa: F401


# ---------------------------------------------------------------------- contrib
def test_contrib_isinf_isnan_isfinite():
    d = mx.nd.array([1, np.inf, -np.inf, np.nan, 0])
    assert mx.nd.contrib.isinf(d).asnumpy().tolist() == [0, 1, 1, 0, 0]
    assert mx.nd.contrib.isfinite(d).asnumpy().tolist() == [1, 0, 0, 0, 1]
    assert mx.nd.contrib.isnan(d).asnumpy().tolist() == [0, 0, 0, 1, 0]
    assert mx.nd.contrib.isnan(d.astype("float64")).dtype is np.float64


def test_contrib_rand_zipfian():
    mx.random.seed(3)
    sampled, exp_true, exp_sampled = mx.nd.contrib.rand_zipfian(mx.nd.array([3, 0]), 6, 5)
    assert sampled.dtype is np.int64 and sampled.shape == (6,)
    assert exp_true.dtype is np.float64 and sampled.asnumpy().max() < 5
    p = lambda c: (np.log(c + 2.0) - np.log(c + 1.0)) / np.log(6)  # noqa: E731
    np.testing.assert_allclose(exp_true.asnumpy(), p(np.array([3, 0])) * 6)
    np.testing.assert_allclose(exp_sampled.asnumpy(), p(sampled.asnumpy()) * 6)
    s, t, e = mx.sym.contrib.rand_zipfian(mx.sym.var("c"), 4, 5)
    assert s.infer_type()[1] == [np.int64] and e.infer_type()[1] == [np.float64]
    assert t.infer_type(c="float32")[1] == [np.float64]


def test_contrib_imperative_control_flow():
    # values from MXNet 1.9.1
    x = mx.nd.arange(6).reshape((2, 3))
    outs, states = mx.nd.contrib.foreach(lambda d, s: (d + s[0], [s[0] * 2]), x,
                                         [mx.nd.ones(3)])
    assert outs.asnumpy().tolist() == [[1, 2, 3], [5, 6, 7]]
    assert states[0].asnumpy().tolist() == [4, 4, 4]
    outs, vars_ = mx.nd.contrib.while_loop(
        lambda i, s: i <= 3, lambda i, s: ([i + s], [i + 1, s + i]),
        (mx.nd.array([0]), mx.nd.array([1])), max_iterations=6)
    assert outs[0].shape == (6, 1) and outs[0][:4].asnumpy().ravel().tolist() == [1, 2, 4, 7]
    assert [v.asnumpy().tolist() for v in vars_] == [[4], [7]]
    with pytest.raises(ValueError, match="max_iterations"):
        mx.nd.contrib.while_loop(lambda i: i < 1, lambda i: ([], [i]), [mx.nd.zeros(1)])
    pick = mx.nd.contrib.cond(mx.nd.array([0]), lambda: mx.nd.ones(1), lambda: mx.nd.zeros(1))
    assert pick.asnumpy().tolist() == [0]


# ---------------------------------------------------------------------- methods
def test_fluent_methods_are_the_registry_functions():
    assert mx.nd.NDArray.abs is mx.nd.abs and mx.nd.NDArray.flip is mx.nd.flip
    assert mx.sym.Symbol.sum is mx.sym.sum and "reshape" in vars(mx.sym.Symbol)
    x = mx.nd.array([[1, -2, 3], [4, 5, -6]])
    assert x.abs().asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    assert x.reshape_like(rhs=mx.nd.ones((3, 2))).shape == (3, 2)
    assert x.slice_axis(axis=1, begin=1, end=3).asnumpy().tolist() == [[-2, 3], [5, -6]]
    assert x.swapaxes(0, 1).shape == (3, 2) and x.split(num_outputs=3)[1].shape == (2, 1)
    s = mx.sym.var("s")
    assert s.astype("int32").infer_type(s="float32")[1] == [np.int32]
    assert s.flatten().infer_shape(s=(2, 3, 4))[1] == [(2, 12)]
    # MXNet has no method for these operators
    for name in ("erf", "negative", "logical_not", "gamma", "sum_axis"):
        assert not hasattr(x, name) and not hasattr(s, name)
    # mx.np.ndarray keeps its NumPy methods and does not inherit the legacy ones
    a = mx.np.array([[1.0, 2.0], [3.0, 4.0]])
    assert a.sum().item() == 10 and a.sum(axis=0).tolist() == [4, 6]
    assert not hasattr(a, "softmax") and not hasattr(a, "one_hot")
    assert a.to_dlpack_for_read() is not None


def test_inplace_shape_methods_share_memory():
    x = mx.nd.arange(6).reshape((2, 1, 3))
    for view in (x.flatten(inplace=True), x.expand_dims(1, inplace=True),
                 x.expand_dims(-1, inplace=True), x.squeeze(inplace=True),
                 x.squeeze(axis=1, inplace=True)):
        view[:] = view + 1
    assert x.asnumpy().ravel().tolist() == [5, 6, 7, 8, 9, 10]
    assert x.flatten(inplace=True).shape == (2, 3) and x.expand_dims(-1, inplace=True).shape \
        == (2, 1, 3, 1)
    copy = x.squeeze(axis=1)
    copy[:] = 0
    assert x.asnumpy().sum() == 45
    assert mx.nd.ones((1, 1)).squeeze(inplace=True).shape == (1,)
    with pytest.raises(AssertionError, match="must be size 1"):
        x.squeeze(axis=0, inplace=True)
    with pytest.raises(AssertionError, match="out of range"):
        x.expand_dims(4, inplace=True)


def test_broadcast_to_and_like_methods():
    x = mx.nd.arange(3).reshape((1, 3))
    assert x.broadcast_to(np.array([2, 3])).asnumpy().tolist() == [[0, 1, 2]] * 2
    assert x.broadcast_to((4, 2, 3)).shape == (4, 2, 3)
    assert x.broadcast_like(mx.nd.ones((2, 2, 3))).shape == (2, 2, 3)
    with pytest.raises(ValueError, match=r"\(1, 3\) and requested shape \(2, 4\)"):
        x.broadcast_to((2, 4))
    with pytest.raises(ValueError, match="requested shape"):
        x.broadcast_to((3,))


def test_slice_assign_split_v2_and_dlpack_methods():
    x = mx.nd.arange(6).reshape((2, 3))
    assert x.split_v2(3, axis=1)[2].asnumpy().tolist() == [[2], [5]]
    y = x.copy()
    assert y.slice_assign(mx.nd.ones((1, 2)), (0, 1), (1, 3), (None, None)) is y
    y.slice_assign_scalar(7, (1, 0), (2, 2), (None, None))
    assert y.asnumpy().tolist() == [[0, 1, 1], [7, 7, 5]]
    back = mx.nd.from_dlpack(x.to_dlpack_for_write())
    back[:] = 2
    assert x.asnumpy().sum() == 12 and mx.nd.from_dlpack(x.to_dlpack_for_read()).shape == (2, 3)


def test_basic_indexing_slice_is_contiguous():
    f = mx.nd.NDArray._basic_indexing_slice_is_contiguous
    shape = (3, 4, 5)
    assert f((slice(1, 2), slice(None), slice(None)), shape)
    assert not f((slice(1, 2), slice(None, None, 2), slice(None)), shape)
    assert not f((slice(1, 3), slice(0, 1), slice(None)), shape)
    assert f((slice(1, 2), slice(0, 1), slice(2, 4)), shape)
    assert f((slice(0, 0), slice(None, None, -1), slice(None)), shape)
    assert not f((slice(None), slice(None), slice(None, None, -1)), shape)


def test_empty_array_is_false():
    assert not bool(mx.nd.array([])) and not mx.nd.zeros((1,)) and mx.nd.ones((1,))
    with pytest.raises(ValueError, match="multiple elements"):
        bool(mx.nd.ones((2,)))


def test_imdecode_channels_first_in_opencv_order():
    import io
    from PIL import Image
    img = (np.arange(18, dtype=np.uint8).reshape(2, 3, 3) * 10)
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    data = buf.getvalue()
    out = mx.nd.imdecode(data)
    assert out.shape == (3, 2, 3) and out.dtype is np.float32
    np.testing.assert_array_equal(out.asnumpy(), img[:, :, ::-1].transpose(2, 0, 1))
    clip = mx.nd.imdecode(data, clip_rect=(1, 0, 3, 1), mean=mx.nd.ones((3, 1, 2)))
    np.testing.assert_array_equal(clip.asnumpy(), img[:1, 1:3, ::-1].transpose(2, 0, 1) - 1)
    buf4 = mx.nd.zeros((2, 3, 2, 3))
    assert mx.nd.imdecode(data, out=buf4, index=1) is buf4
    assert buf4[0].asnumpy().sum() == 0 and buf4[1].asnumpy().sum() == img.sum()
    with pytest.raises(MXNetError, match="rectangle"):
        mx.nd.imdecode(data, clip_rect=(0, 0, 4, 2))


def test_numpy_namespaces_under_mxnet_paths():
    import importlib
    assert importlib.import_module("mxtorch.ndarray.numpy") is mx.np is mx.nd.numpy
    assert importlib.import_module("mxtorch.ndarray.numpy.linalg") is mx.np.linalg
    assert importlib.import_module("mxtorch.ndarray.numpy_extension.random") is mx.npx.random
    assert importlib.import_module("mxtorch.symbol.numpy") is mx.sym.np is mx.sym.numpy
    assert mx.nd.numpy_extension is mx.npx and mx.sym.numpy_extension is mx.sym.npx
    from mxtorch.ndarray.utils import empty
    assert empty((2,)).shape == (2,) and mx.nd.get_oshape_of_gather_nd_op((2, 3), (1, 4)) == (4, 3)
    img = mx.np.array(np.arange(12).reshape(2, 2, 3), dtype="uint8")
    t = importlib.import_module("mxtorch.ndarray.numpy_extension.image").to_tensor(img)
    assert isinstance(t, mx.np.ndarray) and t.shape == (3, 2, 2)
    np.testing.assert_allclose(t.asnumpy(), np.arange(12).reshape(2, 2, 3).transpose(2, 0, 1)
                               / 255.0, rtol=1e-6)


def test_setitem_numpy_scalars():
    b = mx.nd.zeros(3)
    b[0] = np.float32(47.844944)
    b[1:] = np.int64(3)
    assert b.asnumpy().tolist() == [np.float32(47.844944), 3, 3]
    c = mx.nd.zeros(2, dtype="int32")
    c[0] = np.float64(2.7)
    assert c.asnumpy().tolist() == [2, 0]


def test_moveaxis_several_axes():
    x = mx.nd.arange(24).reshape((4, 1, 2, 3))
    for src, dst, shape in (([0, 1], [2, 3], (2, 3, 4, 1)), ([3, 0], [1, 0], (4, 3, 1, 2)),
                            (range(4), range(4), (4, 1, 2, 3)), (0, -1, (1, 2, 3, 4))):
        res = mx.nd.moveaxis(x, src, dst)
        assert res.shape == shape
        np.testing.assert_array_equal(res.asnumpy(), np.moveaxis(x.asnumpy(), src, dst))
    for src, dst in ((4, 0), (-5, 0), ([0, 0], [0, 1]), (0, [0, 1]), ([0, 1], [0])):
        with pytest.raises(ValueError):
            mx.nd.moveaxis(x, src, dst)


def test_choose_and_fill_element_0index():
    a = mx.nd.array(np.arange(6).reshape(2, 3))
    assert mx.nd.choose_element_0index(a, mx.nd.array([2, 1])).asnumpy().tolist() == [2, 4]
    out = mx.nd.fill_element_0index(a, mx.nd.array([9, 8]), mx.nd.array([2, 0]))
    assert out.asnumpy().tolist() == [[0, 1, 9], [8, 4, 5]]
    assert a.asnumpy().sum() == 15
    with pytest.raises(MXNetError, match="fill_element_0index"):
        mx.nd.fill_element_0index(a, mx.nd.array([1]), mx.nd.array([0]))


def test_reshape_to_another_size_raises_value_error():
    t = mx.nd.arange(30).reshape(2, 3, 5)
    with pytest.raises(ValueError, match="cannot reshape array of size 30"):
        t.reshape((2, 3))
    with pytest.raises(MXNetError):
        t.reshape((2, 3))
    assert t.reshape(-1, 0, reverse=True).shape == (6, 5)


def test_from_numpy_zero_copy_hands_the_array_over():
    a = np.array([[1, 2], [3, 4], [5, 6]], dtype="float32")
    m = mx.nd.from_numpy(a)
    with pytest.raises(ValueError):
        a[2, 1] = 0
    m2 = mx.nd.from_numpy(a)   # a second hand-over still shares
    m2[2, 1] = 100
    assert a[2, 1] == 100 and m.asnumpy()[2, 1] == 100
    copy = mx.nd.from_numpy(np.arange(3.0), zero_copy=False)
    assert copy.dtype is np.float64
    with pytest.raises(ValueError, match="c-contiguous"):
        mx.nd.from_numpy(np.ones((2, 3)).T)
    assert mx.nd.from_numpy(np.ones(())).shape == ()
    assert mx.nd.from_numpy(np.ones((1, 0, 2))).shape == (1, 0, 2)


def test_save_load_follow_the_shape_semantics(tmp_path):
    legacy, np_file = str(tmp_path / "legacy"), str(tmp_path / "np")
    mx.nd.save(legacy, [mx.nd.array(np.zeros((0, 4))), mx.nd.ones((2, 1))])
    with mx.np_shape():
        mx.nd.save(np_file, [mx.nd.ones(()), mx.nd.array(np.zeros((3, 0)))])
        loaded = mx.nd.load(np_file)
        assert [x.shape for x in loaded] == [(), (3, 0)]
        with pytest.raises(MXNetError, match="not saved with numpy shape semantics"):
            mx.nd.load(legacy)
    assert [x.shape for x in mx.nd.load(legacy)] == [(0, 4), (2, 1)]
    with pytest.raises(MXNetError, match="saved with numpy shape semantics"):
        mx.nd.load(np_file)


def _hammer(fn, threads=4, reps=200):
    import threading
    workers = [threading.Thread(target=lambda: [fn() for _ in range(reps)])
               for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


@pytest.mark.parametrize("kind", ["slice", "iadd", "out", "part"])
def test_concurrent_inplace_writes_are_ordered(kind):
    # MXNet's engine orders writes to one array: 4 threads x 200 increments give 800
    # (torch's kernels, run concurrently on one tensor, lost most of them)
    x = mx.nd.zeros((1000000,))
    one = mx.nd.ones((1000000,))

    def step():
        nonlocal x
        if kind == "slice":
            x[:] += 1
        elif kind == "iadd":
            x += 1
        elif kind == "out":
            mx.nd.elemwise_add(x, one, out=x)
        else:
            x[10:500000] += 1
    _hammer(step)
    a = x.asnumpy()
    if kind == "part":
        assert (a[10:500000] == 800).all() and (a[:10] == 0).all() and (a[500000:] == 0).all()
    else:
        assert (a == 800).all()


def test_concurrent_updates_and_pulls_are_ordered():
    # optimizer updates of one weight and kvstore pushes to one key from several threads
    w = mx.nd.zeros((200000,))
    g = mx.nd.ones((200000,))
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=1.0, wd=0.0,
                                                        rescale_grad=1.0))
    _hammer(lambda: updater(0, g, w), reps=100)
    assert (w.asnumpy() == -400).all()
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.zeros((200000,)))
    kv._set_updater(lambda key, grad, stored: stored.__iadd__(grad))
    _hammer(lambda: kv.push(3, mx.nd.ones((200000,))), reps=50)
    out = mx.nd.empty((200000,))
    kv.pull(3, out=out)
    assert (out.asnumpy() == 200).all()

"""Indexing operators vs NumPy (values from real MXNet 1.9.1 where noted)."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from mxtorch.ops import registry
from helpers import check_op

RNG = np.random.RandomState(0)
W = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
X = RNG.uniform(-1, 1, (3, 4, 2)).astype(np.float32)


def f32(*v):
    return np.array(v, np.float32)


def test_take():
    # MXNet 1.9.1: default mode 'clip' (negative -> 0); float indices truncate
    check_op("take", [W, f32(0, 2, 5, -1)], {}, [W[[0, 2, 2, 0]]], grad=[0])
    check_op("take", [W, f32(0, 4, -1)], {"mode": "wrap"}, [W[[0, 1, 2]]], grad=[0])
    check_op("take", [W, f32(0.7, 1.5)], {}, [W[[0, 1]]], grad=[0])
    check_op("take", [W, f32(1, 0).reshape(1, 2)], {"axis": -1},
             [W[:, [1, 0]].reshape(3, 1, 2)], grad=[0])
    idx = RNG.randint(0, 4, (2, 3)).astype(np.float32)
    check_op("take", [X, idx], {"axis": 1},
             lambda x, i: np.take(x, i.astype(int), axis=1), grad=[0])
    out = mx.nd.take(mx.nd.array(W, dtype="int32"), mx.nd.array([1], dtype="int32"))
    assert out.dtype == np.int32 and out.asnumpy().tolist() == [[3, 4]]
    # MXNet: the kernel's bound check is reported where the result is waited for
    bad = mx.nd.take(mx.nd.array(W), mx.nd.array([0, 5]), mode="raise")
    with pytest.raises(MXNetError, match="take"):
        bad.asnumpy()


def test_take_gradient_accumulates():
    a = mx.nd.array(W)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.take(a, mx.nd.array([0, 0, 2, 7]))
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [[2, 2], [0, 0], [2, 2]])  # MXNet


def test_embedding():
    data = f32(0, 2, 5, -1, 1.7)
    check_op("Embedding", [data, W], {"input_dim": 3, "output_dim": 2},
             [W[[0, 2, 2, 0, 1]]], grad=[1])
    weight = RNG.uniform(-1, 1, (10, 4)).astype(np.float32)
    idx = RNG.randint(0, 10, (2, 3)).astype(np.float32)
    check_op("Embedding", [idx, weight], {"input_dim": 10, "output_dim": 4},
             lambda i, w: w[i.astype(int)], grad=[1])
    op = registry.get("Embedding")
    attrs = op.parse_attrs({"input_dim": 10, "output_dim": 4})
    assert op.infer_shape(attrs, [(2, 3), None]) == ([(2, 3), (10, 4)], [(2, 3, 4)])
    assert op.infer_type(attrs, ["float32", None]) == (["float32", "float32"], ["float32"])
    attrs16 = op.parse_attrs({"input_dim": 10, "output_dim": 4, "dtype": "float16"})
    assert op.infer_type(attrs16, ["float32", None])[1] == ["float16"]
    with pytest.raises(MXNetError, match="Embedding"):
        mx.nd.Embedding(mx.nd.array([0]), mx.nd.array(W), input_dim=4, output_dim=2)


def test_one_hot():
    exp = np.full((5, 4), -1.0)
    exp[0, 0] = exp[1, 2] = exp[4, 1] = 3
    check_op("one_hot", [f32(0, 2, 5, -1, 1.7)],
             {"depth": 4, "on_value": 3, "off_value": -1}, [exp], grad=False)
    check_op("one_hot", [f32(0, 1).reshape(1, 2)], {"depth": 3},
             [np.eye(3)[[0, 1]].reshape(1, 2, 3)], grad=False, dtype_out=np.float32)
    assert mx.nd.one_hot(mx.nd.array([1]), 3, dtype="int32").dtype == np.int32


def test_gather_scatter_nd():
    d = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    # integer indices: a numeric gradient would push float ones out of bounds
    idx = np.array([0, 1, 2, 0], np.int32).reshape(2, 2)
    check_op("gather_nd", [d, idx], {}, [d[[0, 1], [2, 0]]], grad=[0])
    check_op("gather_nd", [d, np.array([[-1], [1]], np.int32)], {}, [d[[1], [1]]], grad=[0])
    a = mx.nd.array(d)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.gather_nd(a, mx.nd.array([[0, 0], [1, 1]]))
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy().sum(axis=2), [[0, 8, 0], [0, 0, 0]])
    # duplicated coordinates: the value lands once (MXNet leaves the winner unspecified)
    out = mx.nd.scatter_nd(mx.nd.array(f32(1, 2, 3)),
                           mx.nd.array(f32(0, 1, 1, 1, 0, 0).reshape(2, 3)), shape=(2, 2))
    assert out.asnumpy()[0].tolist() == [0, 1] and out.asnumpy()[1, 0] in (2, 3)
    check_op("scatter_nd", [f32(1, 2, 3), f32(0, 1, 1, 0, 1, 0).reshape(2, 3)],
             {"shape": (2, 2)}, [[[1, 0], [3, 2]]], grad=[0])
    with pytest.raises(MXNetError, match="gather_nd"):
        mx.nd.gather_nd(mx.nd.array(d), mx.nd.array([1]))


def test_gather_nd_bounds():
    data = mx.nd.array([[0, 1, 2], [3, 4, 5]])
    # values and messages recorded with MXNet 1.9.1: the first bad axis, its last bad index
    for idx, msg in (([[0, 1, 0], [0, 1, 3]], "index 3 is out of bounds for axis 1 with size 3"),
                     ([[0, 1, 0], [0, 1, -5]], "index -5 .* axis 1 with size 3"),
                     ([[0, 5, -7], [0, 1, 4]], "index -7 .* axis 0 with size 2"),
                     ([[0, 1, 0], [0, 1, 2.5]], "index 2.5 .* axis 1")):
        with pytest.raises(IndexError, match=msg):
            mx.nd.gather_nd(data, mx.nd.array(idx))
    with pytest.raises(MXNetError):   # it is an MXNetError too
        mx.nd.gather_nd(data, mx.nd.array([[2], [0]]))
    # negative indices wrap once; a float index i is taken as int(i + size)
    out = mx.nd.gather_nd(data, mx.nd.array([[0, 1, -1], [0, 1, -1.5]]))
    assert out.asnumpy().tolist() == [0, 4, 4]
    out = mx.nd.gather_nd(data, mx.nd.array([[0, -1], [-1, -3]], dtype="int32"))
    assert out.asnumpy().tolist() == [2, 3]


def test_batch_take():
    check_op("batch_take", [W, f32(0, 1, 5)], {}, [[1, 4, 6]], grad=[0])
    check_op("batch_take", [W, np.array([0, -1, 0], np.int32)], {}, [[1, 3, 5]])


S = np.arange(1, 13, dtype=np.float32).reshape(3, 2, 2)


def test_sequence_mask():
    exp = S.copy()
    exp[1:, 0] = -1
    check_op("SequenceMask", [S, f32(1, 3)], {"use_sequence_length": True, "value": -1},
             [exp], grad=[0])
    exp = S.copy()
    exp[0, 1] = exp[2, :] = 0
    check_op("SequenceMask", [S, f32(1, 2, 0)], {"use_sequence_length": True, "axis": 1},
             [exp], grad=[0])
    check_op("SequenceMask", [S], {}, [S])
    # MXNet: float lengths truncate
    out = mx.nd.SequenceMask(mx.nd.array(S), mx.nd.array([1.7, 2.2]), use_sequence_length=True)
    assert out.asnumpy()[:, :, 0].tolist() == [[1, 3], [0, 7], [0, 0]]
    op = registry.get("SequenceMask")
    assert op.input_names(op.parse_attrs({})) == ["data"]
    on = op.parse_attrs({"use_sequence_length": True})
    assert op.input_names(on) == ["data", "sequence_length"]
    assert op.infer_shape(on, [(3, 2, 2), None]) == ([(3, 2, 2), (2,)], [(3, 2, 2)])


def test_sequence_last_reverse():
    check_op("SequenceLast", [S, f32(1, 3)], {"use_sequence_length": True},
             [[[1, 2], [11, 12]]], grad=[0])
    check_op("SequenceLast", [S], {}, [S[-1]])
    check_op("SequenceLast", [S, f32(1, 2, 1)], {"use_sequence_length": True, "axis": 1},
             [[[1, 2], [7, 8], [9, 10]]], grad=[0])
    check_op("SequenceReverse", [S, f32(1, 2)], {"use_sequence_length": True},
             [[[[1, 2], [7, 8]], [[5, 6], [3, 4]], [[9, 10], [11, 12]]]], grad=[0])
    check_op("SequenceReverse", [S], {}, [S[::-1]])
    with pytest.raises(MXNetError, match="SequenceReverse"):
        mx.nd.SequenceReverse(mx.nd.array(S), axis=1)


def test_dtype_attributes_given_as_numpy_types():
    # MXNet's front end accepts np.float32 / np.dtype wherever an operator takes a dtype
    idx = mx.nd.array([2, 0])
    out = mx.nd.one_hot(idx, 3, dtype=np.int32)
    assert out.dtype is np.int32 and out.asnumpy().tolist() == [[0, 0, 1], [1, 0, 0]]
    assert mx.nd.one_hot(idx, 3, dtype=np.dtype("float64")).dtype is np.float64
    a = mx.nd.array([[3, 1, 2]])
    top = mx.nd.topk(a, k=2, dtype=np.float64)
    assert top.dtype is np.float64 and top.asnumpy().tolist() == [[0, 2]]
    assert mx.nd.argsort(a, dtype=np.int64).asnumpy().tolist() == [[1, 2, 0]]
    assert mx.nd.softmax(a, dtype=np.float64).dtype is np.float64
    emb = mx.nd.Embedding(idx, mx.nd.array(W), input_dim=3, output_dim=2, dtype=np.float32)
    assert emb.asnumpy().tolist() == [[5, 6], [1, 2]]
    sym = mx.sym.one_hot(mx.sym.var("x"), depth=3, dtype=np.int32)
    assert sym.list_attr()["dtype"] == "int32"
    with pytest.raises(MXNetError, match="topk"):
        mx.nd.topk(a, dtype=np.int8)


# ---------------------------------------------------------------------- ravel / unravel
def test_ravel_multi_index():
    multi = np.array([[3, 6, 6], [4, 5, 1]], np.float32)
    flat = np.ravel_multi_index(multi.astype(int), (7, 6)).astype(np.float32)
    check_op("ravel_multi_index", [multi], {"shape": (7, 6)}, [flat], grad=False)
    check_op("_ravel_multi_index", [multi], {"shape": (-1, 6)}, [flat], grad=False)
    check_op("unravel_index", [flat], {"shape": (7, 6)}, [multi], grad=False)
    check_op("_unravel_index", [flat], {"shape": (-1, 6)}, [multi], grad=False)
    out = mx.nd.ravel_multi_index(mx.nd.array(multi, dtype="int32"), shape=(7, 6))
    assert out.dtype == np.int32 and out.asnumpy().tolist() == [22, 41, 37]
    # MXNet: C++ integer division, negative flat indices stay negative (oracle values)
    out = mx.nd.unravel_index(mx.nd.array([-5, 50]), shape=(7, 6))
    assert out.asnumpy().tolist() == [[0, 8], [-5, 2]]
    sym = mx.sym.ravel_multi_index(mx.sym.var("a"), shape=(7, 6))
    assert sym.infer_shape(a=(2, 5))[1] == [(5,)]
    assert sym.tojson().count('"op": "_ravel_multi_index"') == 1


def test_ravel_errors():
    with pytest.raises(MXNetError, match="does not match|first dimension"):
        mx.nd.ravel_multi_index(mx.nd.ones((2, 3)), shape=(7, 6, 2))
    with pytest.raises(MXNetError, match="Empty shape"):
        mx.nd.ravel_multi_index(mx.nd.ones((2, 3)))
    with pytest.raises(MXNetError, match="Empty shape"):
        mx.nd.unravel_index(mx.nd.ones((3,)))


def test_contrib_sparse_embedding_is_embedding():
    """_contrib_SparseEmbedding (MXNet's deprecated Embedding with a row_sparse weight
    gradient): Embedding's values, shapes and gradient."""
    weight = mx.nd.array(np.arange(12).reshape(4, 3))
    idx = mx.nd.array([[1, 3], [0, 1]])
    out = mx.nd.contrib.SparseEmbedding(idx, weight, input_dim=4, output_dim=3)
    np.testing.assert_array_equal(out.asnumpy(), np.arange(12).reshape(4, 3)[[[1, 3], [0, 1]]])
    w = mx.sym.Variable("embed_weight", stype="row_sparse")
    sym = mx.sym.contrib.SparseEmbedding(data=mx.sym.Variable("data"), weight=w, input_dim=4,
                                         output_dim=3, name="embed")
    assert sym.infer_shape(data=(2, 2)) == ([(2, 2), (4, 3)], [(2, 2, 3)], [])
    exe = sym.simple_bind(mx.cpu(), data=(2, 2), grad_req={"data": "null",
                                                           "embed_weight": "write"})
    exe.forward(is_train=True, data=idx, embed_weight=weight)
    exe.backward(mx.nd.ones((2, 2, 3)))
    np.testing.assert_array_equal(exe.grad_dict["embed_weight"].asnumpy()[:, 0], [1, 2, 0, 1])


def test_take_raise_names_the_bad_index():
    # MXNet 1.9.1: "take operator contains indices out of bound"; here the index is named
    with pytest.raises(mx.base.MXNetError, match=r"index 5 for axis 0 of size 2"):
        mx.nd.take(mx.nd.ones((2, 3)), mx.nd.array([1, 5]), mode="raise").asnumpy()

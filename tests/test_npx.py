"""mx.npx: NN operators vs NumPy, npx.reshape codes, npx.save/load (V3 fixtures byte for
byte), the numpy-mode operators (_npi_*, _np_*, _npx_*) and mx.sym.np / mx.sym.npx."""
import json
import os

import numpy as onp
import pytest

import mxtorch as mx
from helpers import FIXTURES
from mxtorch import numpy_extension as npx
from mxtorch.base import MXNetError
from mxtorch.ndarray.ndarray import invoke
from mxtorch.numpy.multiarray import array as np_array
from mxtorch.numpy.multiarray import ndarray as np_ndarray

FIX = FIXTURES
NDFIX = os.path.join(FIX, "ndarray")


@pytest.fixture(autouse=True)
def _np_mode():
    npx.set_np()
    yield
    npx.reset_np()


def _a(x, dtype="float32"):
    return np_array(onp.asarray(x, dtype=dtype))


def _rand(*shape, seed=0):
    return onp.random.RandomState(seed).uniform(-1, 1, shape).astype("float32")


# ---------------------------------------------------------------------- NN operators
def test_fully_connected_and_flatten():
    x, w, b = _rand(2, 3, 2), _rand(4, 6, seed=1), _rand(4, seed=2)
    y = npx.fully_connected(_a(x), _a(w), _a(b), num_hidden=4)
    assert isinstance(y, np_ndarray)
    onp.testing.assert_allclose(y.asnumpy(), x.reshape(2, 6) @ w.T + b, rtol=1e-5)
    y2 = npx.fully_connected(_a(x), _a(w[:, :2]), num_hidden=4, no_bias=True, flatten=False)
    onp.testing.assert_allclose(y2.asnumpy(), x @ w[:, :2].T, rtol=1e-5)
    assert npx.batch_flatten(_a(onp.ones((2, 3, 4)))).shape == (2, 12)


def test_convolution_and_pooling():
    x, w = _rand(1, 2, 4, 4), _rand(3, 2, 3, 3, seed=1)
    y = npx.convolution(_a(x), _a(w), kernel=(3, 3), num_filter=3, no_bias=True)
    ref = onp.zeros((1, 3, 2, 2), "float32")
    for i in range(2):
        for j in range(2):
            ref[0, :, i, j] = onp.tensordot(w, x[0, :, i:i + 3, j:j + 3], axes=3)
    onp.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-4, atol=1e-6)
    p = npx.pooling(_a(x), kernel=(2, 2), stride=(2, 2), pool_type="max")
    onp.testing.assert_allclose(p.asnumpy(), x.reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5)))
    d = npx.deconvolution(_a(x), _a(_rand(2, 3, 3, 3)), kernel=(3, 3), num_filter=3,
                          no_bias=True)
    assert d.shape == (1, 3, 6, 6) and isinstance(d, np_ndarray)


def test_activations():
    x = _rand(3, 4)
    onp.testing.assert_allclose(npx.relu(_a(x)).asnumpy(), onp.maximum(x, 0))
    onp.testing.assert_allclose(npx.sigmoid(_a(x)).asnumpy(), 1 / (1 + onp.exp(-x)),
                                rtol=1e-6)
    onp.testing.assert_allclose(npx.activation(_a(x), act_type="tanh").asnumpy(),
                                onp.tanh(x), rtol=1e-6)
    e = onp.exp(x - x.max(-1, keepdims=True))
    onp.testing.assert_allclose(npx.softmax(_a(x)).asnumpy(), e / e.sum(-1, keepdims=True),
                                rtol=1e-5)
    onp.testing.assert_allclose(npx.log_softmax(_a(x), axis=0).asnumpy(),
                                x - onp.log(onp.exp(x).sum(0, keepdims=True)), rtol=1e-5)
    lr = npx.leaky_relu(_a(x), act_type="leaky", slope=0.1).asnumpy()
    onp.testing.assert_allclose(lr, onp.where(x > 0, x, 0.1 * x), rtol=1e-6)


def test_normalization_and_dropout():
    x, g, b = _rand(4, 3), _rand(3, seed=1), _rand(3, seed=2)
    mean, var = onp.zeros(3, "float32"), onp.ones(3, "float32")
    y = npx.batch_norm(_a(x), _a(g), _a(b), _a(mean), _a(var), fix_gamma=False)
    onp.testing.assert_allclose(y.asnumpy(), x / onp.sqrt(1 + 1e-3) * g + b, rtol=1e-5)
    ln = npx.layer_norm(_a(x), _a(g), _a(b)).asnumpy()
    mu, sd = x.mean(-1, keepdims=True), onp.sqrt(x.var(-1, keepdims=True) + 1e-5)
    onp.testing.assert_allclose(ln, (x - mu) / sd * g + b, rtol=1e-4, atol=1e-5)
    onp.testing.assert_array_equal(npx.dropout(_a(x), p=0.5).asnumpy(), x)  # not training


def test_indexing_ops():
    x = _a([[3., 1., 2.], [0., 5., 4.]])
    t = npx.topk(x, k=2)  # oracle: float32 indices
    assert t.dtype == onp.float32 and t.asnumpy().tolist() == [[0.0, 2.0], [1.0, 2.0]]
    o = npx.one_hot(_a([0, 2]), depth=3)
    assert o.dtype == onp.float32 and o.asnumpy().tolist() == [[1, 0, 0], [0, 0, 1]]
    assert npx.pick(x, _a([2, 1])).asnumpy().tolist() == [2.0, 5.0]
    nz = npx.nonzero(x)
    assert nz.dtype == onp.int64
    assert nz.asnumpy().tolist() == [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2]]
    emb = npx.embedding(_a([1, 0]), _a(onp.arange(6).reshape(3, 2)), input_dim=3,
                        output_dim=2)
    assert emb.asnumpy().tolist() == [[2, 3], [0, 1]]
    gn = npx.gather_nd(x, _a([[1, 0], [1, 2]], "int64"))
    assert gn.asnumpy().tolist() == [5.0, 2.0]
    assert npx.shape_array(x).asnumpy().tolist() == [2, 3]


def test_sequence_and_batch_ops():
    x = _rand(3, 2, 2)
    m = npx.sequence_mask(_a(x), _a([1, 2]), use_sequence_length=True, value=-1.0)
    ref = x.copy()
    ref[1:, 0] = -1
    ref[2:, 1] = -1
    onp.testing.assert_array_equal(m.asnumpy(), ref)
    a, b = _rand(2, 3, 4), _rand(2, 4, 5, seed=1)
    onp.testing.assert_allclose(npx.batch_dot(_a(a), _a(b)).asnumpy(), a @ b, rtol=1e-5)


def test_special_functions():
    x = onp.array([0.5, 1.5, 3.0], "float32")
    onp.testing.assert_allclose(npx.gamma(_a(x)).asnumpy(), [1.7724539, 0.8862269, 2.0],
                                rtol=1e-5)
    onp.testing.assert_allclose(npx.gammaln(_a(x)).asnumpy(),
                                onp.log([1.7724539, 0.8862269, 2.0]), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(npx.erf(_a(x)).asnumpy(), [0.5204999, 0.9661051, 0.9999779],
                                rtol=1e-5)


# Oracle: mx.npx.reshape(np.ones((2, 3, 1, 4)), codes).shape in MXNet 1.9.1
RESHAPE_CASES = [
    ((-2, -2, -3, -2), False, (2, 3, 4)), ((-5, -3, -2), False, (6, 4)),
    ((-2, -6, 1, 3, -3, -2), False, (2, 1, 3, 4)), ((-4,), False, (2, 3, 1, 4)),
    ((6, -1), False, (6, 4)), ((-5, -5), False, (6, 4)),
    ((-6, -1, 1, -4), False, (2, 1, 3, 1, 4)), ((4, -1), True, (4, 6)),
]


@pytest.mark.parametrize("codes,reverse,expected", RESHAPE_CASES)
def test_reshape_codes(codes, reverse, expected):
    x = onp.arange(24, dtype="float32").reshape(2, 3, 1, 4)
    y = npx.reshape(_a(x), codes, reverse=reverse)
    assert y.shape == expected and isinstance(y, np_ndarray)
    onp.testing.assert_array_equal(y.asnumpy().ravel(), x.ravel())


def test_reshape_doc_examples_and_errors():
    assert npx.reshape(_a(onp.ones((8, 3, 3, 3, 4, 4))), (-6, 2, -1, -4)).shape == \
        (2, 4, 3, 3, 3, 4, 4)
    assert npx.reshape(_a(onp.ones((8, 3, 2, 4, 8))), (-4, -1, 2, -6), reverse=True).shape \
        == (8, 3, 2, 4, 4, 2)
    with pytest.raises(MXNetError, match="-3 can only skip"):
        npx.reshape(_a(onp.ones((2, 3))), (-3, -2))
    with pytest.raises(MXNetError, match="cannot reshape"):
        npx.reshape(_a(onp.ones((2, 3))), (4, -2))


def test_bad_attribute_names_the_operator():
    with pytest.raises(MXNetError, match="FullyConnected"):
        npx.fully_connected(_a(onp.ones((2, 3))), _a(onp.ones((4, 3))), num_hidden=4,
                            no_bias=True, bogus=1)


# ---------------------------------------------------------------------- save / load
@pytest.mark.parametrize("fname", ["np_list.params", "np_dict.params"])
def test_fixture_loads_and_resaves_byte_for_byte(fname, tmp_path):
    path = os.path.join(NDFIX, fname)
    manifest = json.load(open(os.path.join(NDFIX, "manifest.json")))
    entry = next(f for f in manifest["files"] if f["file"] == fname)
    expected = onp.load(os.path.join(NDFIX, "expected.npz"))
    data = npx.load(path)
    values = list(data.values()) if isinstance(data, dict) else data
    if isinstance(data, dict):
        assert list(data) == entry["names_in_file_order"]
    for arr, meta in zip(values, entry["arrays"]):
        assert isinstance(arr, np_ndarray)
        assert arr.shape == tuple(meta["shape"]) and arr.dtype == onp.dtype(meta["dtype"])
        onp.testing.assert_array_equal(arr.asnumpy(), expected[meta["expected"]])
    out = tmp_path / fname
    npx.save(str(out), data)
    assert out.read_bytes() == open(path, "rb").read()


def test_save_load_scalar_and_zero_size(tmp_path):
    f = str(tmp_path / "a.params")
    arrs = [np_array(3.5), _a(onp.zeros((0, 4))), _a(onp.arange(3), "int32")]
    npx.save(f, arrs)
    back = npx.load(f)
    assert [b.shape for b in back] == [(), (0, 4), (3,)]
    assert back[0].item() == 3.5 and back[2].dtype == onp.int32
    npx.save(f, arrs[0])  # a single array is saved as a one-element list
    assert len(npx.load(f)) == 1


def test_save_load_errors(tmp_path):
    f = str(tmp_path / "b.params")
    with pytest.raises(TypeError):
        npx.save(f, {"a": mx.nd.ones((2,))})
    with pytest.raises(ValueError):
        npx.save(f, 3)
    npx.reset_np()
    with pytest.raises(ValueError, match="legacy mode"):
        npx.save(f, [_a([1.0])])
    with pytest.raises(ValueError, match="legacy mode"):
        npx.load(f)


def test_namespace_helpers():
    assert npx.is_np_array() and npx.is_np_shape()
    assert npx.cpu() == mx.cpu() and npx.current_context() == mx.current_context()
    assert npx.num_gpus() >= 0
    npx.waitall()


# ---------------------------------------------------------------------- numpy-mode ops
def test_np_registry_ops_against_numpy():
    x, y = _rand(2, 3), _rand(3, seed=1)
    xi = np_array(onp.arange(6, dtype="int32").reshape(2, 3))
    cases = [
        ("_npi_add", [_a(x), _a(y)], {}, x + y),
        ("_npi_true_divide", [xi, xi + 1], {}, onp.arange(6).reshape(2, 3) /
         (onp.arange(6).reshape(2, 3) + 1)),
        ("_npi_rsubtract_scalar", [_a(x)], {"scalar": 1.0, "is_int": False}, 1 - x),
        ("_npi_square", [_a(x)], {}, x * x),
        ("_np_sum", [_a(x)], {"axis": 1}, x.sum(1)),
        ("_npi_mean", [_a(x)], {}, onp.float32(x.mean())),
        ("_np_max", [_a(x)], {"axis": 0, "keepdims": True}, x.max(0, keepdims=True)),
        ("_np_reshape", [_a(x)], {"newshape": (3, -1)}, x.reshape(3, -1)),
        ("_np_transpose", [_a(x)], {}, x.T),
        ("_npi_concatenate", [_a(x), _a(x)], {"num_args": 2, "axis": 1},
         onp.concatenate([x, x], 1)),
        ("_np_dot", [_a(x), _a(y)], {}, x @ y),
        ("_npi_where", [_a(x > 0), _a(x), _a(-x)], {}, onp.abs(x)),
    ]
    for op, ins, attrs, ref in cases:
        out = invoke(op, ins, attrs)
        assert out.shape == onp.shape(ref), op
        onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, err_msg=op)
    assert invoke("_npi_true_divide", [xi, xi + 1], {}).dtype == onp.float32
    assert invoke("_npi_greater", [_a(x), _a(y)], {}).dtype == onp.bool_
    assert invoke("_np_sum", [_a(x)], {}).shape == ()  # NumPy shapes: 0-d result
    assert invoke("_npi_argmax", [_a(x)], {"axis": 1}).dtype == onp.int64
    with pytest.raises(MXNetError, match="broadcast"):
        invoke("_npi_add", [_a(x), _a(_rand(2))], {})


# ---------------------------------------------------------------------- npx.random
def test_npx_random_shapes_dtypes_and_moments():
    npx.random.seed(11)
    b = npx.random.bernoulli(0.3, size=(4000,))
    assert isinstance(b, np_ndarray) and b.dtype == onp.float32 and b.shape == (4000,)
    vals = b.asnumpy()
    assert set(onp.unique(vals)) <= {0.0, 1.0} and abs(vals.mean() - 0.3) < 0.03
    bl = npx.random.bernoulli(logit=_a(onp.full((2, 2000), 2.0)))
    assert bl.shape == (2, 2000) and abs(bl.asnumpy().mean() - 1 / (1 + onp.exp(-2))) < 0.03
    assert npx.random.bernoulli(0.5).shape == ()
    bi = npx.random.bernoulli(prob=_a([0.0, 1.0]), dtype="int32")
    assert bi.dtype == onp.int32 and bi.asnumpy().tolist() == [0, 1]
    u = npx.random.uniform_n(_a([0.0, 10.0, 20.0]), _a([1.0, 11.0, 21.0]), batch_shape=(500,))
    assert u.shape == (500, 3) and u.dtype == onp.float32
    onp.testing.assert_allclose(u.asnumpy().mean(0), [0.5, 10.5, 20.5], atol=0.05)
    assert (u.asnumpy() >= [0, 10, 20]).all() and (u.asnumpy() < [1, 11, 21]).all()
    n = npx.random.normal_n(2.0, _a([1.0, 3.0]), batch_shape=3000, dtype="float64")
    assert n.shape == (3000, 2) and n.dtype == onp.float64
    onp.testing.assert_allclose(n.asnumpy().std(0), [1.0, 3.0], rtol=0.06)
    onp.testing.assert_allclose(n.asnumpy().mean(0), [2.0, 2.0], atol=0.15)
    assert npx.random.normal_n().shape == () and npx.random.uniform_n(batch_shape=2).shape == (2,)
    npx.random.seed(5)
    first = npx.random.uniform_n(batch_shape=(4,)).asnumpy()
    npx.random.seed(5)
    onp.testing.assert_array_equal(npx.random.uniform_n(batch_shape=(4,)).asnumpy(), first)
    with pytest.raises(ValueError, match="prob.*logit"):
        npx.random.bernoulli(0.5, logit=0.0)


def test_new_np_registry_ops_on_meta_and_values():
    x = _rand(3, 4)
    cases = [
        ("_npi_arcsinh", [_a(x)], {}, onp.arcsinh(x)),
        ("_npi_arctan2_scalar", [_a(x)], {"scalar": 2.0, "is_int": False},
         onp.arctan2(x, 2.0)),
        ("_npi_rldexp_scalar", [_a(x)], {"scalar": 3.0, "is_int": False}, 3.0 * 2.0 ** x),
        ("_npi_var", [_a(x)], {"axis": 1, "ddof": 1}, x.var(1, ddof=1)),
        ("_np_moveaxis", [_a(x)], {"source": 0, "destination": 1}, x.T),
        ("_npi_norm", [_a(x)], {"flag": -2}, onp.float32(onp.linalg.norm(x))),
        ("_npi_eye", [], {"N": 2, "M": 3, "k": 1}, onp.eye(2, 3, 1, dtype="float32")),
    ]
    for op, ins, attrs, ref in cases:
        out = invoke(op, ins, attrs)
        assert out.shape == onp.shape(ref), op
        onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, err_msg=op)
    from mxtorch.ops import registry
    opdef = registry.get("_npi_uniform")
    parsed = opdef.parse_attrs({"low": None, "high": 1.0, "size": (2, 3)})
    assert opdef.input_names(parsed) == ["input1"]
    assert invoke("_npi_uniform", [], {"low": 0, "high": 1, "size": (2, 3)}).shape == (2, 3)
    with pytest.raises(MXNetError, match="broadcast"):
        invoke("_npi_arctan2", [_a(x), _a(_rand(2))], {})

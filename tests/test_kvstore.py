"""mx.kv: in-process KVStore semantics of MXNet 1.9.1 (values checked with the oracle)."""
import os
import pickle

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import kvstore, optimizer
from mxtorch.base import MXNetError

from helpers import fixture_path

FIXTURES = fixture_path("models", "mlp_module")
SHAPE = (2, 3)


def _ones(value=1.0, ctx=None, shape=SHAPE):
    return mx.nd.ones(shape, ctx=ctx or mx.cpu(0)) * value


def test_create_types_and_properties():
    for name in ["local", "device", "nccl", "local_allreduce_cpu", "local_allreduce_device"]:
        kv = kvstore.create(name)
        assert isinstance(kv, kvstore.KVStore)
        assert (kv.type, kv.rank, kv.num_workers) == (name, 0, 1)
        assert kv.is_capable("optimizer") and kv.is_capable("OPTIMIZER")
    assert kvstore.create("LOCAL").type == "local"
    assert kvstore.create().type == "local"
    with pytest.raises(ValueError, match="Unknown capability"):
        kvstore.create().is_capable("foo")
    with pytest.raises(TypeError, match="name must be a string"):
        kvstore.create(3)
    assert isinstance(kvstore.create("teststore"), kvstore.TestStore)


def test_push_pull_aggregates_across_contexts():
    kv = kvstore.create("local")
    kv.init(3, _ones())
    out = mx.nd.zeros(SHAPE)
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.ones(SHAPE))
    vals = [_ones(i + 1, mx.cpu(i)) for i in range(3)]
    kv.push(3, vals)
    kv.pull(3, out=vals)
    for i, v in enumerate(vals):
        np.testing.assert_array_equal(v.asnumpy(), np.full(SHAPE, 6.0))
        assert v.context == mx.cpu(i)
    # without an updater the last push replaces the stored value
    kv.push(3, _ones(1))
    kv.push(3, _ones(4))
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 4.0))


def test_list_keys_str_keys_and_dtype_cast():
    kv = kvstore.create("device")
    kv.init(["a", "b"], [_ones(5), _ones(6)])
    outs = [[mx.nd.zeros(SHAPE, ctx=mx.cpu(i)) for i in range(2)] for _ in range(2)]
    kv.pull(["a", "b"], out=outs)
    assert [[o.asnumpy()[0, 0] for o in row] for row in outs] == [[5, 5], [6, 6]]
    kv.push(["a", "b"], [[_ones(1), _ones(2, mx.cpu(1))], [_ones(3), _ones(4, mx.cpu(1))]])
    kv.pull(["b", "a"], out=[outs[0][0], outs[1][0]])
    assert (outs[0][0].asnumpy()[0, 0], outs[1][0].asnumpy()[0, 0]) == (7, 3)
    half = mx.nd.zeros(SHAPE, dtype="float16")
    kv.push("a", mx.nd.ones(SHAPE, dtype="float16") * 3)
    kv.pull("a", out=half)
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half.asnumpy(), np.full(SHAPE, 3, np.float16))


def test_error_paths():
    kv = kvstore.create("local")
    kv.init(3, _ones())
    with pytest.raises(MXNetError, match="duplicate init of key 3"):
        kv.init(3, _ones())
    with pytest.raises(AssertionError, match="inconsistent types of keys"):
        kvstore.create().init(["a", 4], [_ones(), _ones()])
    with pytest.raises(MXNetError, match="Mixed key types"):
        kv.init("s", _ones())
    with pytest.raises(AssertionError, match="unexpected type for keys"):
        kv.init(3.0, _ones())
    with pytest.raises(MXNetError, match="key 98 has not been inited"):
        kv.pull(98, out=_ones())
    with pytest.raises(MXNetError, match="key 99 has not been inited"):
        kv.push(99, _ones())
    with pytest.raises(MXNetError, match="shape mismatch"):
        kv.push(3, [_ones(), _ones(shape=(3, 3))])
    with pytest.raises(MXNetError, match="shape mismatch"):
        kv.pull(3, out=_ones(shape=(3, 2)))
    with pytest.raises(AssertionError):
        kv.pull(3)


def test_updater_runs_on_push_with_mxnet_keys():
    calls = []

    def update(key, merged, stored):
        calls.append((key, merged.asnumpy()[0, 0], stored.asnumpy()[0, 0]))
        stored += merged * 2

    kv = kvstore.create("local")
    kv.init(3, _ones())
    kv._set_updater(update)
    kv.push(3, [_ones(1), _ones(2, mx.cpu(1))])
    out = mx.nd.zeros(SHAPE)
    kv.pull(3, out=out)
    assert calls == [(3, 3.0, 1.0)]
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 7.0))
    kv_s = kvstore.create("local")
    kv_s.init("w", _ones())
    kv_s._set_updater(update)
    kv_s.pushpull("w", [_ones(1)], out=out)
    assert calls[-1][0] == b"w"  # MXNet: str keys reach the updater as bytes
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 3.0))


def test_set_optimizer_sgd_matches_numpy():
    kv = kvstore.create("local")
    w0 = np.arange(4, dtype=np.float32).reshape(2, 2) / 4
    kv.init(3, mx.nd.array(w0))
    kv.set_optimizer(optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01,
                                      rescale_grad=0.5))
    g = [np.full((2, 2), 2, np.float32), np.full((2, 2), 4, np.float32)]
    w, mom = w0.copy(), np.zeros_like(w0)
    for _ in range(2):
        kv.push(3, [mx.nd.array(g[0]), mx.nd.array(g[1], ctx=mx.cpu(1))])
        grad = (g[0] + g[1]) * 0.5
        mom = 0.9 * mom - 0.1 * (grad + 0.01 * w)
        w = w + mom
    out = mx.nd.zeros((2, 2))
    kv.pull(3, out=out)
    np.testing.assert_allclose(out.asnumpy(), w, rtol=1e-6, atol=1e-7)
    # oracle value for w0 = ones: 0.127401 (see MXNet's set_optimizer example)
    kv1 = kvstore.create("local")
    kv1.init(0, mx.nd.ones((2, 2)))
    kv1.set_optimizer(optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01,
                                       rescale_grad=0.5))
    for _ in range(2):
        kv1.push(0, [mx.nd.ones((2, 2)) * 2, mx.nd.ones((2, 2), ctx=mx.cpu(1)) * 4])
    kv1.pull(0, out=out)
    np.testing.assert_allclose(out.asnumpy(), np.full((2, 2), 0.127401), rtol=1e-6)


def test_optimizer_states_round_trip(tmp_path):
    kv = kvstore.create("local")
    kv.init(3, mx.nd.ones((2, 2)))
    kv.set_optimizer(optimizer.SGD(learning_rate=0.1, momentum=0.9))
    kv.push(3, mx.nd.ones((2, 2)))
    fname = str(tmp_path / "kv.states")
    kv.save_optimizer_states(fname)
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]
    mom = kv._updater.states[3].asnumpy()
    np.testing.assert_allclose(mom, np.full((2, 2), -0.1), rtol=1e-6)
    kv._updater.states[3][:] = 0
    kv.load_optimizer_states(fname)
    np.testing.assert_allclose(kv._updater.states[3].asnumpy(), mom)
    kv.save_optimizer_states(fname, dump_optimizer=True)
    with open(fname, "rb") as f:
        assert b"mxnet.optimizer.optimizer" in f.read()
    kv.load_optimizer_states(fname)
    assert isinstance(kv._updater.optimizer, optimizer.SGD)
    kv.push(3, mx.nd.ones((2, 2)))  # momentum continues: -0.9 * 0.1 - 0.1
    np.testing.assert_allclose(kv._updater.states[3].asnumpy(), np.full((2, 2), -0.19), rtol=1e-6)
    with pytest.raises(AssertionError, match="Cannot save states"):
        kvstore.create().save_optimizer_states(fname)
    bad = tmp_path / "bad.states"
    bad.write_bytes(pickle.dumps(os.system))
    with pytest.raises(MXNetError, match="bad.states"):
        kv.load_optimizer_states(str(bad))


def test_load_states_written_by_mxnet():
    kv = kvstore.create("local")
    kv.set_optimizer(optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=1e-4))
    kv.load_optimizer_states(os.path.join(FIXTURES, "mlp-0001.states"))
    expected = np.load(os.path.join(FIXTURES, "states_expected.npz"))
    for i in range(6):
        np.testing.assert_array_equal(kv._updater.states[i].asnumpy(), expected[f"momentum.{i}"])


def test_pushpull_broadcast_row_sparse_pull():
    kv = kvstore.create("device")
    kv.init("w", mx.nd.zeros((2, 2)))
    outs = [mx.nd.zeros((2, 2), ctx=mx.cpu(i)) for i in range(2)]
    kv.pushpull("w", [mx.nd.ones((2, 2), ctx=mx.cpu(i)) for i in range(2)], out=outs)
    assert [o.asnumpy()[0, 0] for o in outs] == [2, 2]
    vals = [mx.nd.ones((2, 2), ctx=mx.cpu(i)) * 3 for i in range(2)]
    kv.pushpull("w", vals)
    assert [v.asnumpy()[0, 0] for v in vals] == [6, 6]
    kv.broadcast("b", mx.nd.ones((2, 2)) * 7, out=outs)
    assert [o.asnumpy()[0, 0] for o in outs] == [7, 7]
    with pytest.raises(MXNetError, match="duplicate init of key b"):
        kv.broadcast("b", mx.nd.ones((2, 2)), out=outs)
    kv.init("r", mx.nd.array(np.arange(12).reshape(4, 3)))
    rows = [mx.nd.ones((4, 3), ctx=mx.cpu(i)) for i in range(2)]
    kv.row_sparse_pull("r", out=rows, row_ids=mx.nd.array([2, 0, 2]))
    expected = np.arange(12, dtype=np.float32).reshape(4, 3)
    expected[[1, 3]] = 0
    for r in rows:
        np.testing.assert_array_equal(r.asnumpy(), expected)
    with pytest.raises(AssertionError, match="number of row_ids"):
        kv.row_sparse_pull("r", out=rows, row_ids=[mx.nd.array([0])] * 3)


def _numpy_2bit(grads_per_step, threshold):
    """NumPy model of MXNet's 2-bit compression: residual per device, summed."""
    residual = [np.zeros_like(g) for g in grads_per_step[0]]
    results = []
    for grads in grads_per_step:
        total = np.zeros_like(grads[0])
        for dev, g in enumerate(grads):
            residual[dev] += g
            q = np.where(residual[dev] >= threshold, threshold,
                         np.where(residual[dev] <= -threshold, -threshold, 0)).astype(np.float32)
            residual[dev] -= q
            total += q
        results.append(total)
    return results


def test_gradient_compression_2bit():
    rng = np.random.RandomState(0)
    shape = (2, 9)
    g = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(2)]
    kv = kvstore.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init("k", mx.nd.zeros(shape))
    out = mx.nd.zeros(shape)
    got = []
    for _ in range(3):
        kv.push("k", [mx.nd.array(g[i], ctx=mx.cpu(i)) for i in range(2)])
        kv.pull("k", out=out)
        got.append(out.asnumpy())
    for a, b in zip(got, _numpy_2bit([g] * 3, np.float32(0.5))):
        np.testing.assert_array_equal(a, b)
    # oracle (MXNet 1.9.1, same seed): first step's first row
    np.testing.assert_array_equal(got[0][0], [0.5, 0.5, 0.5, 0.5, 0, 0.5, -0.5, 0.5, 0])
    # exactly the threshold is sent; a single device is compressed too
    kv.init("e", mx.nd.zeros((4,)))
    kv.push("e", mx.nd.array([0.5, -0.5, 0.4999, -0.7]))
    kv.pull("e", out=out[0, :4])
    np.testing.assert_array_equal(out[0, :4].asnumpy(), [0.5, -0.5, 0, -0.5])


def test_gradient_compression_errors():
    with pytest.raises(Exception, match="not supported for this type"):
        kvstore.create("local").set_gradient_compression({"type": "2bit"})
    kv = kvstore.create("device")
    with pytest.raises(MXNetError, match="Unknown type for gradient compression 1bit"):
        kv.set_gradient_compression({"type": "1bit"})
    with pytest.raises(MXNetError, match="Required parameter type"):
        kv.set_gradient_compression({"threshold": 0.5})
    with pytest.raises(MXNetError, match="threshold must be greater than 0"):
        kv.set_gradient_compression({"type": "2bit", "threshold": -1})
    with pytest.raises(MXNetError, match="expect float"):
        kv.set_gradient_compression({"type": "2bit", "threshold": "abc"})
    with pytest.raises(AssertionError, match="param_dict"):
        kv.set_gradient_compression("2bit")
    kv.set_gradient_compression({"type": "2bit", "threshold": "0.25", "other": 1})
    kv.init(0, mx.nd.zeros((2,), dtype="float16"))
    with pytest.raises(MXNetError, match="float32"):
        kv.push(0, mx.nd.ones((2,), dtype="float16"))


def test_teststore_and_register():
    ts = kvstore.create("teststore")
    out = [mx.nd.zeros((2,)), mx.nd.zeros((2,), ctx=mx.cpu(1))]
    ts.pushpull(0, [mx.nd.ones((2,)), mx.nd.ones((2,), ctx=mx.cpu(1)) * 2], out=out)
    assert [o.asnumpy()[0] for o in out] == [3, 3]
    assert not ts.is_capable("optimizer")

    @kvstore.KVStoreBase.register
    class MyKVStoreForTest(kvstore.KVStoreBase):
        pass
    assert isinstance(kvstore.create("mykvstorefortest"), MyKVStoreForTest)
    del kvstore.KVStoreBase.kv_registry["mykvstorefortest"]

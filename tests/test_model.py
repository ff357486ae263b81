"""mx.model: checkpoints (ours and real MXNet 1.9.1 files) and Module's kvstore helpers."""
import json
import os
import shutil

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import kvstore, model, optimizer
from mxtorch.base import MXNetError

from helpers import fixture_path

MODELS = fixture_path("models")


def _mlp():
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc1")
    bn = mx.sym.BatchNorm(fc, name="bn1")
    return mx.sym.SoftmaxOutput(bn, name="softmax")


def test_save_load_checkpoint_round_trip(tmp_path):
    prefix = str(tmp_path / "net")
    arg = {"fc1_weight": mx.nd.array(np.arange(12).reshape(3, 4), ctx=mx.cpu(1)),
           "fc1_bias": mx.nd.array([1, 2, 3]), "bn1_gamma": mx.nd.ones((3,)),
           "bn1_beta": mx.nd.zeros((3,))}
    aux = {"bn1_moving_mean": mx.nd.array([0.5, 0.25, 0]), "bn1_moving_var": mx.nd.ones((3,))}
    model.save_checkpoint(prefix, 7, _mlp(), arg, aux)
    # the two files and the manifest that records them as one set (no temporaries left)
    assert sorted(os.listdir(tmp_path)) == ["net-0007.manifest", "net-0007.params",
                                            "net-symbol.json"]
    raw = mx.nd.load(prefix + "-0007.params")
    assert sorted(raw) == sorted([f"arg:{k}" for k in arg] + [f"aux:{k}" for k in aux])
    assert all(v.context == mx.cpu(0) for v in raw.values())
    sym, arg2, aux2 = model.load_checkpoint(prefix, 7)
    assert sym.list_arguments() == _mlp().list_arguments()
    assert sym.list_auxiliary_states() == ["bn1_moving_mean", "bn1_moving_var"]
    for src, dst in [(arg, arg2), (aux, aux2)]:
        assert sorted(src) == sorted(dst)
        for k in src:
            np.testing.assert_array_equal(src[k].asnumpy(), dst[k].asnumpy())
    arg3, aux3 = model.load_params(prefix, 7)
    assert sorted(arg3) == sorted(arg) and sorted(aux3) == sorted(aux)
    model.save_checkpoint(prefix, 8, None, arg, {})
    assert os.path.exists(prefix + "-0008.params")


def test_load_params_key_rules(tmp_path, caplog):
    prefix = str(tmp_path / "k")
    mx.nd.save(prefix + "-0001.params", {"arg:a:b": mx.nd.ones((1,)), "other:x": mx.nd.ones((1,)),
                                         "aux:m": mx.nd.zeros((2,))})
    arg, aux = model.load_params(prefix, 1)
    assert list(arg) == ["a:b"] and list(aux) == ["m"]  # split at the first ':'
    mx.nd.save(prefix + "-0002.params", {"nocolon": mx.nd.ones((1,))})
    with pytest.raises(ValueError, match="nocolon"):
        model.load_params(prefix, 2)
    with pytest.raises(MXNetError, match="k-0002.params"):
        model.load_params(prefix, 2)
    mx.nd.save(prefix + "-0003.params", {})
    assert model.load_params(prefix, 3) == ({}, {})
    assert "is empty" in caplog.text


def test_missing_and_truncated_files(tmp_path):
    with pytest.raises(MXNetError, match="nothere-symbol.json"):
        model.load_checkpoint(str(tmp_path / "nothere"), 0)
    with pytest.raises(MXNetError, match="nothere-0000.params"):
        model.load_params(str(tmp_path / "nothere"), 0)
    src = os.path.join(MODELS, "mlp_module")
    prefix = str(tmp_path / "mlp")
    shutil.copy(os.path.join(src, "mlp-symbol.json"), prefix + "-symbol.json")
    with open(os.path.join(src, "mlp-0001.params"), "rb") as f:
        blob = f.read()
    with open(prefix + "-0001.params", "wb") as f:
        f.write(blob[: len(blob) // 2])
    with pytest.raises(MXNetError, match="mlp-0001.params"):
        model.load_checkpoint(prefix, 1)


@pytest.mark.parametrize("name,prefix,epoch", [("mlp_module", "mlp", 1),
                                               ("cnn_bn_module", "cnn_bn", 0)])
def test_load_real_mxnet_checkpoints(name, prefix, epoch):
    folder = os.path.join(MODELS, name)
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    sym, arg, aux = model.load_checkpoint(os.path.join(folder, prefix), epoch)
    assert {k: list(v.shape) for k, v in arg.items()} == manifest["arg_params"]
    assert {k: list(v.shape) for k, v in aux.items()} == manifest["aux_params"]
    assert sorted(sym.list_auxiliary_states()) == sorted(manifest["aux_params"])
    names = manifest["data_names"] + manifest.get("label_names", [])
    assert sorted(sym.list_arguments()) == sorted(list(manifest["arg_params"]) + names)


def test_real_mlp_checkpoint_runs():
    folder = os.path.join(MODELS, "mlp_module")
    sym, arg, aux = model.load_checkpoint(os.path.join(folder, "mlp"), 1)
    data = np.load(os.path.join(folder, "input_data.npy"))
    exe = sym.simple_bind(mx.cpu(), data=data.shape, grad_req="null")
    exe.copy_params_from(arg, aux)
    out = exe.forward(is_train=False, data=mx.nd.array(data))[0]
    np.testing.assert_allclose(out.asnumpy(), np.load(os.path.join(folder, "output_infer_0.npy")),
                               rtol=1e-5, atol=1e-6)


def test_create_kvstore(monkeypatch):
    small = {"w": mx.nd.zeros((4, 4))}
    assert model._create_kvstore(None, 2, small) == (None, False)
    assert model._create_kvstore("local", 1, small) == (None, False)
    kv, upd = model._create_kvstore("local", 2, small)
    assert kv.type == "local" and upd is True
    kv, upd = model._create_kvstore("device", 2, small)
    assert kv.type == "device" and upd is True
    mine = kvstore.create("device")
    assert model._create_kvstore(mine, 1, small) == (mine, True)
    assert model._create_kvstore(kvstore.create("teststore"), 2, small)[1] is False
    big = {"w": mx.nd.zeros((1, 1))}
    big["w"] = type("Shape", (), {"shape": (4097, 4097)})()  # only .shape is read
    assert model._create_kvstore("local", 2, big)[1] is False
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")
    assert model._create_kvstore("device", 2, small)[1] is False
    with pytest.raises(TypeError, match="kvstore must be KVStore, str or None"):
        model._create_kvstore(3, 2, small)


def _two_device_params():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    params = [[mx.nd.zeros((2,), ctx=c) for c in ctxs], [mx.nd.zeros((3,), ctx=c) for c in ctxs]]
    grads = [[mx.nd.ones((2,), ctx=c) * (i + 1) for i, c in enumerate(ctxs)], [None, None]]
    arg_params = {"a": mx.nd.array([1, 2]), "b": mx.nd.array([3, 4, 5])}
    return params, grads, arg_params


def test_update_on_kvstore_helpers():
    params, grads, arg_params = _two_device_params()
    kv = kvstore.create("local")
    model._initialize_kvstore(kv, params, arg_params, ["a", "b"], True)
    for dev_arrays, name in zip(params, ["a", "b"]):
        for p in dev_arrays:
            np.testing.assert_array_equal(p.asnumpy(), arg_params[name].asnumpy())
    kv.set_optimizer(optimizer.SGD(learning_rate=0.5))
    model._update_params_on_kvstore(params, grads, kv, ["a", "b"])
    for p in params[0]:  # w - lr * (1 + 2)
        np.testing.assert_allclose(p.asnumpy(), [1 - 1.5, 2 - 1.5])
    np.testing.assert_array_equal(params[1][1].asnumpy(), [3, 4, 5])  # no gradient: untouched
    params, grads, arg_params = _two_device_params()
    kv = kvstore.create("nccl")
    model._initialize_kvstore(kv, params, arg_params, ["a", "b"], True)
    kv._set_updater(lambda key, g, w: w.__isub__(g))
    model._update_params_on_kvstore_nccl(params, grads, kv, ["a", "b"])
    np.testing.assert_array_equal(params[0][1].asnumpy(), [-2, -1])


def test_update_params_local_updater():
    params, grads, arg_params = _two_device_params()
    kv = kvstore.create("local")
    model._initialize_kvstore(kv, params, arg_params, ["a", "b"], False)
    np.testing.assert_array_equal(params[0][0].asnumpy(), [0, 0])  # init only, no broadcast
    calls = []

    def updater(index, grad, weight):
        calls.append(list(index))
        for g, w in zip(grad, weight):
            w -= g
    model._update_params(params, grads, updater, 2, kvstore=kv, param_names=["a", "b"])
    assert calls == [[0], [1]]  # MXNet: index * num_device + k
    for p in params[0]:
        np.testing.assert_array_equal(p.asnumpy(), [-3, -3])  # gradients summed on kvstore
    model._update_params(params, grads, updater, 2)
    np.testing.assert_array_equal(params[0][0].asnumpy(), [-6, -6])


def test_multiple_callbacks_and_batch_end_param():
    seen = []
    model._multiple_callbacks(None, 1)
    model._multiple_callbacks(lambda p: seen.append(("one", p)), 1)
    model._multiple_callbacks([lambda p: seen.append(("a", p)), lambda p: seen.append(("b", p))],
                              2)
    assert seen == [("one", 1), ("a", 2), ("b", 2)]
    param = model.BatchEndParam(epoch=1, nbatch=2, eval_metric=None, locals=None)
    assert type(param).__name__ == "BatchEndParams" and param.nbatch == 2


def test_model_namespace_holds_feedforward_and_its_names():
    """MXNet's mx.model defines FeedForward with the names it imports for it."""
    assert mx.model.FeedForward.__name__ == "FeedForward"
    assert mx.model.DataDesc is mx.io.DataDesc and mx.model.Uniform is mx.init.Uniform
    assert mx.model.get_updater is mx.optimizer.get_updater and mx.model.opt is mx.optimizer
    assert mx.model.DataParallelExecutorManager is \
        mx.executor_manager.DataParallelExecutorManager
    with pytest.raises(AttributeError):
        mx.model.NoSuchName  # noqa: B018 - the lookup is what raises

"""The ``mxtorch`` command: the training demo, ``run`` with the ``mxnet`` alias, ``info``
and ``convert`` (both directions). Subprocesses use ``python -m mxtorch``."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.cli import main
from mxtorch.cli.run import install_alias, remove_alias
from mxtorch.demo import parse_ctx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _mxtorch(*args, cwd=None, timeout=120):
    """Run ``python -m mxtorch ARGS`` and return the completed process (text output)."""
    env = dict(os.environ, OMP_WAIT_POLICY="passive",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "mxtorch", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _accuracy(stdout):
    m = re.search(r"Final held-out accuracy: ([0-9.]+)", stdout)
    assert m, stdout
    return float(m.group(1))


def test_train_demo_module_reaches_accuracy_and_writes_checkpoint(tmp_path):
    """The README's first command, shortened: ``python -m mxtorch train --epochs 3``."""
    pytest.importorskip("sklearn")  # the `demo` / `test` extras install scikit-learn
    out = tmp_path / "ckpt"
    proc = _mxtorch("train", "--epochs", "3", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "api=module" in proc.stdout
    assert "Epoch[2] Train-accuracy=" in proc.stdout
    assert "Epoch[2] Validation-accuracy=" in proc.stdout
    assert _accuracy(proc.stdout) >= 0.9
    assert f"Checkpoint written to {out / 'digits-module-symbol.json'}" in proc.stdout
    _check_checkpoint(str(out / "digits-module"), 3, _accuracy(proc.stdout))


def _check_checkpoint(prefix, epoch, reported):
    """The checkpoint is a real MXNet one that predicts with the reported accuracy."""
    from mxtorch.demo.data import load_split
    split = load_split(0)
    sym, args, aux = mx.model.load_checkpoint(prefix, epoch)
    mod = mx.mod.Module(sym, label_names=["softmax_label"] if "softmax_label" in
                        sym.list_arguments() else None)
    n = len(split.y_val)
    mod.bind([("data", (n, 64))], [("softmax_label", (n,))] if mod.label_names else None,
             for_training=False)
    mod.set_params(args, aux)
    mod.forward(mx.io.DataBatch([mx.nd.array(split.x_val)]), is_train=False)
    pred = mod.get_outputs()[0].asnumpy().argmax(axis=1)
    assert abs((pred == split.y_val).mean() - reported) < 1e-3


def test_train_demo_gluon_data_parallel(tmp_path):
    pytest.importorskip("sklearn")
    from mxtorch.demo import DemoConfig, run_demo
    cfg = DemoConfig(api="gluon", epochs=3, ctx="cpu:0,1", out=str(tmp_path), progress=False)
    np.random.seed(1)   # the demo seeds the sampler's NumPy generator itself
    first = run_demo(cfg).accuracy
    np.random.seed(2)
    result = run_demo(cfg)
    assert result.accuracy == first
    assert result.accuracy >= 0.9
    assert os.path.basename(result.params_file) == "digits-gluon-0003.params"
    _check_checkpoint(str(tmp_path / "digits-gluon"), 3, result.accuracy)


def test_train_demo_amp_bf16(tmp_path):
    """``mxtorch train --amp bf16``: FullyConnected in bfloat16 with loss scaling reaches the
    float32 runs' accuracy; the exported checkpoint is plain float32."""
    pytest.importorskip("sklearn")
    out = tmp_path / "amp"
    proc = _mxtorch("train", "--api", "gluon", "--amp", "bf16", "--epochs", "3",
                    "--no-progress", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "amp=bfloat16" in proc.stdout and "Epoch[2] Train-accuracy=" in proc.stdout
    assert _accuracy(proc.stdout) >= 0.9
    symbol = (out / "digits-gluon-symbol.json").read_text()
    assert "amp_cast" not in symbol and "FullyConnected" in symbol
    sym, args, _ = mx.model.load_checkpoint(str(out / "digits-gluon"), 3)
    assert all(v.dtype == np.float32 for v in args.values())
    assert "invalid choice: 'int8'" in _mxtorch("train", "--amp", "int8").stderr


def test_train_reports_missing_scikit_learn(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import fails as on a bare install
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    assert main(["train", "--epochs", "1", "--out", str(tmp_path / "o")]) == 1
    assert "pip install 'mxtorch[demo]'" in capsys.readouterr().out


def test_parse_ctx():
    assert parse_ctx("cpu") == [mx.cpu(0)]
    assert parse_ctx("cpu:0,1") == [mx.cpu(0), mx.cpu(1)]
    with pytest.raises(ValueError, match="--ctx"):
        parse_ctx("tpu")
    if mx.context.num_gpus() == 0:
        with pytest.raises(ValueError, match="not available"):
            parse_ctx("gpu:0,1")


def test_run_executes_unmodified_mxnet_script(tmp_path):
    script = tmp_path / "train_mxnet.py"
    script.write_text(
        "import sys\n"
        "import mxnet as mx\n"
        "from mxnet.gluon import nn\n"
        "from mxnet import nd, autograd\n"
        "import mxnet.ndarray.ndarray\n"
        "assert __name__ == '__main__'\n"
        "net = nn.Dense(3, in_units=4)\n"
        "net.initialize(mx.init.One())\n"
        "x = nd.ones((2, 4))\n"
        "x.attach_grad()\n"
        "with autograd.record():\n"
        "    y = net(x).sum()\n"
        "y.backward()\n"
        "print('argv', sys.argv[1:])\n"
        "print('sum', y.asscalar(), 'grad', x.grad.sum().asscalar())\n"
        "print('module', mx.__name__, nn.Dense.__module__)\n")
    proc = _mxtorch("run", str(script), "--lr", "0.1", "-x", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "argv ['--lr', '0.1', '-x']" in proc.stdout
    # MXNet: Dense biases use their own "zeros" initializer, not the global One().
    assert "sum 24.0 grad 24.0" in proc.stdout
    assert "module mxtorch mxtorch.gluon.nn" in proc.stdout


def test_run_propagates_script_failure(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import mxnet as mx\nraise SystemExit(3)\n")
    with pytest.raises(SystemExit) as err:
        main(["run", str(script)])
    assert err.value.code == 3
    assert "mxnet" not in sys.modules  # the alias is gone after the run
    assert main(["run", str(tmp_path / "missing.py")]) == 2


def test_alias_in_process_is_removed_afterwards():
    install_alias()
    try:
        import mxnet
        import mxnet.gluon.nn as nn2
        assert mxnet is mx and nn2 is mx.gluon.nn
        assert mx.gluon.nn.__spec__.name == "mxtorch.gluon.nn"
    finally:
        remove_alias()
    assert "mxnet" not in sys.modules
    with pytest.raises(ImportError):
        import mxnet


def test_info_lists_versions_devices_and_extras(capsys):
    import torch
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert f"mxtorch  {mx.__mxtorch_version__} (MXNet API 1.9.1)" in out
    assert f"torch    {torch.__version__}" in out
    assert f"numpy    {np.__version__}" in out
    assert "cpu(0):" in out
    for extra in ("scikit-learn", "tqdm", "pillow", "graphviz"):
        assert extra in out


def _small_checkpoint(prefix):
    """A conv + BatchNorm + fc checkpoint (with aux states), written by save_checkpoint."""
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv")
    net = mx.sym.BatchNorm(net, name="bn")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.bind([("data", (2, 1, 5, 5))], [("softmax_label", (2,))], for_training=False)
    mod.init_params(mx.init.Normal(0.5))
    args, aux = mod.get_params()
    aux["bn_moving_mean"][:] = 0.25
    mx.model.save_checkpoint(prefix, 7, net, args, aux)
    return net, args, aux


def test_convert_round_trip_and_loader(tmp_path):
    import torch
    prefix = str(tmp_path / "net")
    net, args, aux = _small_checkpoint(prefix)
    out = str(tmp_path / "torch" / "net.pt")
    assert main(["convert", prefix, "7", out]) == 0
    state = torch.load(out, weights_only=True)
    assert set(state) == set(args) | set(aux)
    np.testing.assert_array_equal(state["conv_weight"].numpy(), args["conv_weight"].asnumpy())
    np.testing.assert_array_equal(state["bn_moving_mean"].numpy(), 0.25)
    # The generated loader rebuilds a torch.nn.Module giving MXNet's outputs.
    sys.path.insert(0, str(tmp_path / "torch"))
    try:
        from net_loader import load
        model = load()
    finally:
        sys.path.pop(0)
        sys.modules.pop("net_loader", None)
    assert isinstance(model, torch.nn.Module)
    x = np.random.RandomState(0).rand(2, 1, 5, 5).astype(np.float32)
    ex = net.bind(mx.cpu(), dict(args, data=mx.nd.array(x), softmax_label=mx.nd.zeros(2)),
                  aux_states=aux)
    expected = ex.forward(is_train=False)[0].asnumpy()
    with torch.no_grad():
        got = model(torch.from_numpy(x))[0].numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    # Reverse: back to a .params file with the same arg:/aux: keys and values.
    assert main(["convert", "--reverse", out, str(tmp_path / "back"), "3"]) == 0
    back = mx.nd.load(str(tmp_path / "back-0003.params"))
    orig = mx.nd.load(prefix + "-0007.params")
    assert sorted(back) == sorted(orig)
    for k in orig:
        np.testing.assert_array_equal(back[k].asnumpy(), orig[k].asnumpy())


def test_convert_reverse_with_symbol_and_bad_input(tmp_path):
    import torch
    torch.save({"w": torch.ones(2), "stats": torch.zeros(2)}, tmp_path / "s.pt")
    sym = mx.sym.BatchNorm(mx.sym.var("data"), name="bn")
    sym.save(str(tmp_path / "bn-symbol.json"))
    assert main(["convert", "--reverse", str(tmp_path / "s.pt"), str(tmp_path / "o"), "1"]) == 0
    assert sorted(mx.nd.load(str(tmp_path / "o-0001.params"))) == ["arg:stats", "arg:w"]
    torch.save({"bn_moving_var": torch.ones(2)}, tmp_path / "t.pt")
    main(["convert", "--reverse", str(tmp_path / "t.pt"), str(tmp_path / "p"), "1",
          "--symbol", str(tmp_path / "bn-symbol.json")])
    assert list(mx.nd.load(str(tmp_path / "p-0001.params"))) == ["aux:bn_moving_var"]
    torch.save([torch.ones(1)], tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="state dict"):
        main(["convert", "--reverse", str(tmp_path / "bad.pt"), str(tmp_path / "q"), "1"])


def test_help_and_no_command(capsys):
    assert main([]) == 0
    assert "train" in capsys.readouterr().out


_GLUONCV_INIT = """
from .check import _require_pytorch_version
_found_pytorch = False
try:
    _require_pytorch_version('1.4.0', '2.0.0')
    _found_pytorch = True
except ImportError as err:
    skipped = str(err)
import mxnet as mx
from mxnet.symbol.contrib import SyncBatchNorm
"""

_GLUONCV_CHECK = """
def _require_pytorch_version(torch_version, max_torch_version='2.0.0'):
    import torch
    if int(torch.__version__.split('.')[0]) >= int(max_torch_version.split('.')[0]):
        raise RuntimeError('Legacy torch==%s detected' % torch.__version__)
"""


def test_run_takes_gluoncv_past_its_pytorch_probe(tmp_path):
    """GluonCV 0.10's optional PyTorch half raises RuntimeError for torch >= 2 (shaped like
    its check here); under the alias it reads as "no PyTorch half" and the import goes on."""
    pkg = tmp_path / "gluoncv"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(_GLUONCV_INIT)
    (pkg / "check.py").write_text(_GLUONCV_CHECK)
    script = tmp_path / "use_gluoncv.py"
    script.write_text("import gluoncv, mxnet\n"
                      "print('found_pytorch', gluoncv._found_pytorch)\n"
                      "print(gluoncv.skipped)\n"
                      "print(gluoncv.SyncBatchNorm is mxnet.sym.contrib.SyncBatchNorm)\n")
    proc = _mxtorch("run", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "found_pytorch False" in proc.stdout
    assert "gluoncv's PyTorch half is not used: Legacy torch==" in proc.stdout
    assert "True" in proc.stdout.splitlines()[-1]
    # Without the alias GluonCV's own check runs unchanged.
    plain = subprocess.run([sys.executable, "-c", "import gluoncv"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert "RuntimeError: Legacy torch==" in plain.stderr


# MXNet 1.9.1's python/mxnet modules that mxtorch provides (its C-interop ones: _ctypes,
# _ffi, cython, library, tvmop, onnx, and the features it lacks are not listed).
_MXNET_MODULES = """
attribute autograd base callback context contrib contrib.amp contrib.autograd contrib.io
contrib.ndarray contrib.symbol contrib.svrg_optimization engine executor executor_manager
gluon gluon.contrib gluon.contrib.nn gluon.data gluon.data.vision gluon.data.vision.transforms
gluon.loss gluon.model_zoo gluon.model_zoo.vision gluon.nn gluon.rnn gluon.utils image
initializer io kvstore log lr_scheduler metric model module monitor name ndarray
ndarray.contrib ndarray.image ndarray.linalg ndarray.numpy ndarray.numpy.linalg
ndarray.numpy.random ndarray.numpy_extension ndarray.numpy_extension._op
ndarray.numpy_extension.image ndarray.numpy_extension.random ndarray.op ndarray.random
ndarray.sparse ndarray._internal notebook numpy numpy.linalg numpy.random numpy_extension
operator optimizer profiler random recordio rnn rtc symbol symbol.contrib symbol.image
symbol.linalg symbol.numpy symbol.numpy.linalg symbol.numpy.random symbol.numpy_extension
symbol.op symbol.random symbol._internal test_utils util visualization
""".split()


@pytest.mark.parametrize("alias", [False, True])
def test_mxnet_namespaces_are_importable_modules(alias):
    """``from mxnet.symbol.contrib import SyncBatchNorm``, ``import mxnet.ndarray.linalg``...:
    each namespace MXNet makes importable is a module under mxtorch. and mxnet. alike, the
    same object as the attribute path."""
    import importlib
    root = "mxnet" if alias else "mxtorch"
    if alias:
        install_alias()
    try:
        for name in _MXNET_MODULES:
            module = importlib.import_module(f"{root}.{name}")
            attr = mx
            for part in name.split("."):
                attr = getattr(attr, part)
            assert module is attr, name
        contrib = importlib.import_module(f"{root}.symbol.contrib")
        assert contrib.SyncBatchNorm is mx.sym.contrib.SyncBatchNorm
        assert importlib.import_module(f"{root}.ndarray.contrib").SyncBatchNorm \
            is mx.nd.contrib.SyncBatchNorm
        assert importlib.import_module(f"{root}.gluon.contrib.nn").SyncBatchNorm \
            is mx.gluon.contrib.nn.SyncBatchNorm
    finally:
        if alias:
            remove_alias()


_LEGACY_NUMPY_SCRIPT = """
import numpy as np
import mxnet as mx
a = np.zeros(3, dtype=np.float) + np.NaN
b = np.asfarray([1, 2], dtype=np.int)
print(a.dtype, np.isnan(a).all(), b.dtype, np.product([2, 3]), np.float_ is np.float64)
"""


def test_run_puts_back_numpy_names_mxnet_era_code_uses(tmp_path, capsys):
    # np.float & co. (removed in NumPy 1.24) and np.NaN, np.float_, np.product,
    # np.asfarray (removed in 2.0) exist while the script runs, and are gone afterwards
    from mxtorch.cli.run import run_script
    script = tmp_path / "legacy.py"
    script.write_text(_LEGACY_NUMPY_SCRIPT)
    run_script(str(script), [])
    assert capsys.readouterr().out.split() == ["float64", "True", "float64", "6", "True"]
    for name in ("float", "NaN", "float_", "product", "asfarray"):
        assert name not in np.__dict__
    with pytest.raises(AttributeError):
        run_script(str(script), [], numpy_aliases=False)


def test_numpy_compat_never_replaces_what_numpy_defines():
    from mxtorch.cli import numpy_compat
    prod, bool_ = np.prod, np.bool
    added = numpy_compat.install()
    try:
        assert "bool" not in added and np.bool is bool_   # NumPy 2 defines np.bool again
        assert np.prod is prod and np.product is np.prod and np.int is int
    finally:
        numpy_compat.remove()
    assert "int" not in np.__dict__

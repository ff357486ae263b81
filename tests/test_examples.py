"""Every script in examples/ runs (shortened by its own CLI flags) and reports its metric."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def _run(name, *args, tmp_path=None):
    env = dict(os.environ, OMP_WAIT_POLICY="passive",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout + proc.stderr


def _metric(out, name):
    m = re.search(r"^%s=([0-9.]+)$" % re.escape(name), out, re.M)
    assert m, out[-3000:]
    return float(m.group(1))


def test_quickstart(tmp_path):
    out = _run("quickstart.py", tmp_path=tmp_path)
    assert "dy/dx" in out


def test_module_mlp(tmp_path):
    out = _run("module_mlp.py", "--epochs", "4", tmp_path=tmp_path)
    assert "Epoch[3] Validation-accuracy=" in out
    assert _metric(out, "final-accuracy") >= 0.85


def test_module_cnn_checkpoint_resumes(tmp_path):
    pytest.importorskip("sklearn")
    out = _run("module_cnn_checkpoint.py", "--epochs", "2", "--out", str(tmp_path / "ck"),
               tmp_path=tmp_path)
    files = set(os.listdir(tmp_path / "ck"))
    # epoch 1 written with optimizer state, epoch 2 written by the resumed module
    assert {"digits-cnn-symbol.json", "digits-cnn-0001.params", "digits-cnn-0001.states",
            "digits-cnn-0002.params"} <= files
    assert "Epoch[1] Train-accuracy=" in out  # the resumed run starts at epoch 1
    assert _metric(out, "final-accuracy") >= 0.8


def test_gluon_lenet_export_reimport(tmp_path):
    pytest.importorskip("sklearn")
    out = _run("gluon_lenet_export.py", "--epochs", "2", "--out", str(tmp_path / "ex"),
               tmp_path=tmp_path)
    assert "re-imported network gives the same outputs: True" in out
    assert {"lenet-symbol.json", "lenet-0002.params"} <= set(os.listdir(tmp_path / "ex"))
    assert _metric(out, "final-accuracy") >= 0.75


def test_custom_op(tmp_path):
    out = _run("custom_op.py", "--epochs", "3", tmp_path=tmp_path)
    assert "row sums of the custom softmax: [1. 1. 1.]" in out
    assert _metric(out, "final-accuracy") >= 0.9


def test_multi_context(tmp_path):
    out = _run("multi_context.py", "--epochs", "2", tmp_path=tmp_path)
    assert "weights identical on all contexts: True" in out
    assert _metric(out, "module accuracy") >= 0.8
    assert _metric(out, "gluon accuracy") >= 0.8


def test_bucketing_lstm_lm(tmp_path):
    out = _run("bucketing_lstm_lm.py", "--epochs", "3", tmp_path=tmp_path)
    vocab = _metric(out, "vocabulary-size")
    assert _metric(out, "final-train-perplexity") < 0.6 * vocab  # learned, not uniform
    assert _metric(out, "final-perplexity") < vocab


def _mxtorch_run(name, *args, tmp_path=None):
    """``python -m mxtorch run examples/NAME ARGS``: the script imports mxnet, unchanged."""
    env = dict(os.environ, OMP_WAIT_POLICY="passive",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "mxtorch", "run",
                           os.path.join(EXAMPLES, name), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout, proc.stderr


def test_mnist_iter_late_logging_prints_fit_lines(tmp_path):
    out, err = _mxtorch_run("mnist_iter_late_logging.py", "--epochs", "2", tmp_path=tmp_path)
    # MXNet's Module.fit lines, on the root logger, through the script's late basicConfig.
    assert "INFO:root:Epoch[0] Train-accuracy=" in err
    assert "INFO:root:Epoch[1] Time cost=" in err
    assert _metric(out, "final-accuracy") >= 0.8


def test_unseeded_example_repeats_in_fresh_processes(tmp_path):
    first, _ = _mxtorch_run("unseeded_reproducible.py", "--steps", "6", tmp_path=tmp_path)
    second, _ = _mxtorch_run("unseeded_reproducible.py", "--steps", "6", tmp_path=tmp_path)
    assert first == second
    assert "step 5 loss=" in first and _metric(first, "final-accuracy") > 0.5

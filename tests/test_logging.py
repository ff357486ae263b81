"""Library logging: mxtorch logs through named module loggers and never configures the root
logger, so a script's own ``logging.basicConfig`` works whenever it runs (issue 34, item 1)."""
import logging
import os
import struct
import subprocess
import sys

import numpy as np

import mxtorch as mx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _write_mnist(folder, n=20):
    """Tiny MNIST-format image/label files (idx3/idx1, big-endian headers)."""
    rng = np.random.RandomState(0)
    image, label = os.path.join(folder, "img"), os.path.join(folder, "lab")
    with open(image, "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28))
        f.write(rng.randint(0, 255, (n, 28, 28)).astype(np.uint8).tobytes())
    with open(label, "wb") as f:
        f.write(struct.pack(">II", 2049, n))
        f.write((np.arange(n) % 10).astype(np.uint8).tobytes())
    return image, label


_SCRIPT = r"""
import logging, pkgutil, importlib, sys
import mxtorch as mx
for info in pkgutil.walk_packages(mx.__path__, "mxtorch."):
    if not info.name.startswith(("mxtorch.demo", "mxtorch.cli")):
        importlib.import_module(info.name)
assert logging.getLogger().handlers == [], ("import", logging.getLogger().handlers)

it = mx.io.MNISTIter(image=sys.argv[1], label=sys.argv[2], batch_size=5, flat=True,
                     silent=False)
mx.io.MNISTIter(image=sys.argv[1], label=sys.argv[2], batch_size=5).debug_skip_load()
data = mx.sym.var("data")
net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=10), name="softmax")
mod = mx.mod.Module(net)
sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5)
mod.fit(it, num_epoch=1, optimizer_params={"lr_scheduler": sched},
        batch_end_callback=mx.callback.Speedometer(5, 1),
        epoch_end_callback=mx.callback.do_checkpoint(sys.argv[3]))
mx.init.Uniform(0.1).set_verbosity(True)(mx.init.InitDesc("fc_weight"), mx.nd.zeros((2,)))
assert logging.getLogger().handlers == [], ("calls", logging.getLogger().handlers)

# The user configures logging only now, after creating an iterator and a fit.
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout)
mx.io.MNISTIter(image=sys.argv[1], label=sys.argv[2], batch_size=5, flat=True,
                silent=False)
it.reset()
mx.mod.Module(net).fit(it, num_epoch=1)
"""


def test_no_root_handler_and_late_basic_config_shows_fit_lines(tmp_path):
    image, label = _write_mnist(str(tmp_path))
    env = dict(os.environ, OMP_WAIT_POLICY="passive",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, image, label,
                           str(tmp_path / "ckpt")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # MXNet: Module.fit logs on the root logger ("INFO:root:..."), as MXNet 1.9.1 prints.
    assert "INFO:root:Epoch[0] Train-accuracy=" in out
    assert "INFO:root:Epoch[0] Time cost=" in out
    assert "INFO:mxtorch.io.native:MNISTIter: load 20 images, shuffle=1, shape=(5,784)" in out
    # Nothing logged before basicConfig reached a handler.
    assert "Speed" not in out and "Saved checkpoint" not in out
    assert out.count("Train-accuracy=") == 1


def test_library_messages_go_to_named_loggers(caplog, tmp_path):
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, stop_factor_lr=1e-9)
    sched.base_lr = 1.0
    with caplog.at_level(logging.INFO):
        sched(2)
        data = mx.sym.var("data")
        mx.model.save_checkpoint(str(tmp_path / "m"), 1, data, {}, {})
    names = {r.name for r in caplog.records}
    assert names == {"mxtorch.lr_scheduler", "mxtorch.model"}, names
    mod = mx.mod.Module(mx.sym.var("data"), label_names=None)
    assert mod.logger is logging.getLogger()
    own = logging.getLogger("mine")
    assert mx.mod.Module(mx.sym.var("data"), label_names=None, logger=own).logger is own

"""Run mxtorch's file loaders on untrusted inputs in a child process under a memory cap.

Used by tests/test_fuzz_loaders.py and the hostile-file regressions of
tests/test_format.py. The parent calls :func:`run_loaders` with ``(loader, name, blob)``
cases; a child process imports mxtorch, caps its address space (``RLIMIT_AS``: what it
holds after the imports plus ``cap_mb``), then feeds every case to its loader and
reports, per case, the exception type and message (or ``None``), whether it is an
``MXNetError``, the seconds taken and
the peak bytes ``tracemalloc`` saw allocated while the case ran (NumPy buffers, the
unpickler's memo and stack, every Python object).

Loaders: ``states`` (``pickle_safe.load_states``), ``updater`` (``Updater.set_states``),
``trainer`` (``gluon.Trainer.load_states`` from a file), ``ndload`` (``mx.nd.load``
from a file named after the case), ``gluon`` (``SymbolBlock.load_parameters`` on the
mlp fixture network).
"""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MLP = os.path.join(HERE, "fixtures", "mxnet-1.9.1", "models", "mlp_module")


def run_loaders(cases, cap_mb: int = 512, timeout: float = 120.0) -> list[dict]:
    """Run ``cases`` (``(loader, name, blob)``) in a capped child; one dict per case."""
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_NUM_THREADS="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), str(cap_mb)],
                          input=pickle.dumps(list(cases)), capture_output=True,
                          timeout=timeout, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise AssertionError(f"loader child failed (rc {proc.returncode}):\n"
                             f"{proc.stderr.decode(errors='replace')[-3000:]}")
    return [json.loads(line) for line in proc.stdout.decode().splitlines()
            if line.startswith("{")]


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


class _Loaders:
    """The entry points, set up once in the child."""

    def __init__(self, workdir: str) -> None:
        import warnings

        import mxtorch as mx
        warnings.simplefilter("ignore")
        self.mx = mx
        from mxtorch.format.pickle_safe import load_states
        self.load_states = load_states
        self.workdir = workdir
        self.updater = mx.optimizer.get_updater(mx.optimizer.create("adam"))
        self.net = mx.gluon.nn.SymbolBlock.imports(
            os.path.join(MLP, "mlp-symbol.json"), ["data", "softmax_label"],
            os.path.join(MLP, "mlp-0001.params"))
        self.trainer = mx.gluon.Trainer(self.net.collect_params(), "adam",
                                        update_on_kvstore=False)

    def _file(self, name: str, blob: bytes) -> str:
        path = os.path.join(self.workdir, os.path.basename(name))
        with open(path, "wb") as f:
            f.write(blob)
        return path

    def run(self, loader: str, name: str, blob: bytes) -> None:
        if loader == "states":
            self.load_states(blob, name)
        elif loader == "updater":
            self.updater.set_states(blob)
        elif loader == "trainer":
            self.trainer.load_states(self._file(name, blob))
        elif loader == "ndload":
            self.mx.nd.load(self._file(name, blob))
        elif loader == "gluon":
            self.net.load_parameters(self._file(name, blob))
        else:
            raise ValueError(f"unknown loader {loader!r}")


def _child(cap_mb: int) -> None:
    import resource
    import time
    import tracemalloc
    cases = pickle.loads(sys.stdin.buffer.read())
    from mxtorch.base import MXNetError
    with tempfile.TemporaryDirectory() as workdir:
        loaders = _Loaders(workdir)
        cap = _vm_size() + (cap_mb << 20)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        tracemalloc.start()
        for loader, name, blob in cases:
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            start = time.perf_counter()
            err = msg = None
            mxnet_error = False
            try:
                loaders.run(loader, name, blob)
            except BaseException as exc:  # noqa: BLE001 - reported, judged by the parent
                err, msg = type(exc).__name__, str(exc)[:300]
                mxnet_error = isinstance(exc, MXNetError)
            peak = tracemalloc.get_traced_memory()[1] - base
            print(json.dumps({"loader": loader, "name": name, "size": len(blob),
                              "error": err, "message": msg, "peak": peak,
                              "mxnet_error": mxnet_error,
                              "seconds": time.perf_counter() - start}), flush=True)


if __name__ == "__main__":
    _child(int(sys.argv[1]))

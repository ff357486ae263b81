"""Seeded fuzzing of every file loader: mutated MXNet fixtures and hand-made hostile pickles.

Loaders: ``mx.nd.load`` on ``.params`` / ``.npy`` / ``.npz``, ``load_parameters`` on a
SymbolBlock, ``.states`` through ``load_states``, ``Updater.set_states`` and
``gluon.Trainer.load_states``. All inputs run in one child process whose address space
is capped (tests/memcap.py). For every input the test asserts that only ``MXNetError``
(or, for ``load_parameters``, the ``AssertionError`` MXNet raises on mismatched names and
shapes) escapes, that ``tracemalloc`` saw no more than :data:`ALLOC_PER_BYTE` bytes per
input byte plus :data:`ALLOC_BASE` allocated, that no input took over a second, and that
no payload ran code (each would create a marker file).

``python -m pytest -s tests/test_fuzz_loaders.py`` prints the figures: inputs per
loader, clean errors, loads, and the largest allocation any input caused.
"""
import os
import pickle
import random
import sys

import numpy as np
import pytest

from helpers import FIXTURES
from memcap import run_loaders

SEED = 20261125
ALLOC_PER_BYTE = 32
ALLOC_BASE = 8 << 20
MODELS = os.path.join(FIXTURES, "models")
ND = os.path.join(FIXTURES, "ndarray")
# the exceptions MXNet 1.9.1 itself raises on a bad file, per loader: load_parameters
# asserts names and shapes, and calls .keys() on what nd.load returned (a list file)
ALLOWED = {"gluon": ("AssertionError", "AttributeError")}


def _read(*parts):
    with open(os.path.join(*parts), "rb") as f:
        return f.read()


_INTERESTING = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 2**31 - 1, 2**31, 2**32 - 1,
                2**40, 2**62, 2**63 - 1, 2**64 - 1]
_PICKLE_OPCODES = bytes(sorted({op.code.encode("latin-1")[0]
                                for op in __import__("pickletools").opcodes}))


def _mutate(rng: random.Random, blob: bytes, others: list, pickle_ops: bool) -> bytes:
    """One to three random edits of ``blob``."""
    data = bytearray(blob)
    for _ in range(rng.choice((1, 1, 2, 3))):
        if not data:
            data = bytearray(rng.choice(others)[:64])
        pos = rng.randrange(len(data))
        kind = rng.randrange(9 if pickle_ops else 8)
        if kind == 0:
            data[pos] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data[pos] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        elif kind in (2, 3):
            width = 4 if kind == 2 else 8
            value = rng.choice(_INTERESTING) & ((1 << 8 * width) - 1)
            data[pos:pos + width] = value.to_bytes(width, "little")
        elif kind == 4:
            del data[rng.randrange(len(data) + 1):]
        elif kind == 5:
            del data[pos:pos + rng.randrange(1, 64)]
        elif kind == 6:
            chunk = data[pos:pos + rng.randrange(1, 64)]
            at = rng.randrange(len(data) + 1)
            data[at:at] = chunk * rng.choice((1, 2, 16))
        elif kind == 7:
            src = rng.choice(others)
            start = rng.randrange(len(src))
            data[pos:pos + 32] = src[start:start + 32]
        else:
            data[pos] = rng.choice(_PICKLE_OPCODES)
    return bytes(data)


def _fuzz_cases(rng, loader, seeds, count, suffix, pickle_ops=False):
    out = []
    blobs = [b for _, b in seeds]
    for i in range(count):
        name, blob = seeds[i % len(seeds)]
        out.append((loader, f"{loader}_{i}_{os.path.splitext(name)[0]}{suffix}",
                    _mutate(rng, blob, blobs, pickle_ops)))
    return out


class _Reduce:
    """Pickles as ``fn(*args)``: what a hostile file would make ``pickle.loads`` call."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _hostile_pickles(marker: str, states: bytes) -> list:
    """Payloads that would create ``marker`` if any code from them ran."""
    import builtins
    import io
    import pathlib
    import shutil
    import subprocess
    touch = f"touch {marker}"
    calls = [
        _Reduce(os.system, (touch,)),
        _Reduce(subprocess.Popen, (["touch", marker],)),
        _Reduce(subprocess.check_call, (["touch", marker],)),
        _Reduce(builtins.exec, (f"open({marker!r}, 'w').close()",)),
        _Reduce(builtins.eval, (f"__import__('os').system({touch!r})",)),
        _Reduce(builtins.open, (marker, "w")),
        _Reduce(io.open, (marker, "w")),
        _Reduce(shutil.copyfile, (__file__, marker)),
        _Reduce(pathlib.Path.touch, (pathlib.Path(marker),)),
        _Reduce(np.save, (marker, np.zeros(1))),
        _Reduce(os.mkdir, (marker,)),
    ]
    out = []
    for proto in range(6):
        for call in calls:
            out.append(pickle.dumps(call, protocol=proto))
            out.append(pickle.dumps({0: np.arange(3.0), 1: (call, call)}, protocol=proto))
    # hand-written opcode forms: INST, OBJ, NEWOBJ on a code-running global
    out.append(b"(S'" + touch.encode() + b"'\nios\nsystem\n.")
    out.append(b"(cos\nsystem\nS'" + touch.encode() + b"'\no.")
    out.append(b"\x80\x02cos\nsystem\nS'" + touch.encode() + b"'\n\x85\x81.")
    # inside a real .states: the first NDArray's constructor replaced by os.system
    glob = b"\x8c\x15mxnet.ndarray.ndarray\x94\x8c\x07NDArray\x94"
    if glob in states:
        cmd = touch.encode()
        out.append(states.replace(glob, b"\x8c\x05posix\x94\x8c\x06system\x94", 1)
                   .replace(b"N\x85", b"\x8c" + bytes([len(cmd)]) + cmd + b"\x85", 1))
    return out


@pytest.fixture(scope="module")
def fuzz_runs(tmp_path_factory):
    rng = random.Random(SEED)
    params = [(n, _read(MODELS, d, n)) for d, n in (
        ("mlp_module", "mlp-0001.params"), ("lstm_gluon", "lstm-0000.params"),
        ("cnn_bn_module", "cnn_bn-0000.params"))]
    params += [(n, _read(ND, n)) for n in ("sparse_list.params", "sparse_dict.params",
                                           "legacy_v0_handmade.params", "np_dict.params",
                                           "bfloat16_list.params")]
    mlp_states = _read(MODELS, "mlp_module", "mlp-0001.states")
    assert mlp_states[2:3] == b"\x95"  # FRAME: the unframed copy reaches past truncations
    states = [("mlp-0001.states", mlp_states),
              ("unframed.states", mlp_states[:2] + mlp_states[11:]),
              ("pickled_ndarray.pkl", _read(ND, "pickled_ndarray.pkl"))]
    big_states = [("lenet.states", _read(MODELS, "lenet_gluon", "lenet.states"))]
    npy = [(n, _read(MODELS, "mlp_module", n)) for n in (
        "input_softmax_label.npy", "grad_train_fc3_bias.npy", "input_data.npy")]
    tmp = tmp_path_factory.mktemp("fuzz")
    arrays = dict(np.load(os.path.join(MODELS, "mlp_module", "states_expected.npz")))
    np.savez_compressed(tmp / "c.npz", **arrays)
    npz = [("states_expected.npz", _read(MODELS, "mlp_module", "states_expected.npz")),
           ("compressed.npz", (tmp / "c.npz").read_bytes())]
    gluon = [("mlp-0001.params", params[0][1])]
    cases = (_fuzz_cases(rng, "ndload", params, 3000, ".params")
             + _fuzz_cases(rng, "gluon", gluon, 1500, ".params")
             + _fuzz_cases(rng, "states", states, 3000, ".states", pickle_ops=True)
             + _fuzz_cases(rng, "states", big_states, 150, ".states", pickle_ops=True)
             + _fuzz_cases(rng, "updater", states[:2], 1000, ".states", pickle_ops=True)
             + _fuzz_cases(rng, "trainer", states[:2], 500, ".states", pickle_ops=True)
             + _fuzz_cases(rng, "ndload", npy, 1500, ".npy")
             + _fuzz_cases(rng, "ndload", npz, 1500, ".npz"))
    marker = str(tmp / "MARKER")
    hostile = _hostile_pickles(marker, states[0][1])
    cases += [(loader, f"hostile_{i}.states", blob) for i, blob in enumerate(hostile)
              for loader in ("states", "updater", "trainer")]
    runs = run_loaders(cases, cap_mb=512, timeout=300)
    assert len(runs) == len(cases)
    return runs, marker, len(hostile)


def _kind(run):
    if run["name"].startswith("hostile_"):
        return f"hostile/{run['loader']}"
    return f"{run['loader']}{os.path.splitext(run['name'])[1]}"


def test_only_clean_errors_escape(fuzz_runs):
    runs, _, _ = fuzz_runs
    bad = [r for r in runs if r["error"] is not None and not r["mxnet_error"]
           and r["error"] not in ALLOWED.get(r["loader"], ())]
    assert not bad, bad[:5]


def test_allocation_bounded_by_input_size(fuzz_runs):
    runs, _, _ = fuzz_runs
    over = [r for r in runs if r["peak"] > ALLOC_PER_BYTE * r["size"] + ALLOC_BASE]
    assert not over, over[:5]
    slow = [r for r in runs if r["seconds"] > 1.0]
    assert not slow, slow[:5]


def test_no_code_runs(fuzz_runs):
    runs, marker, n_hostile = fuzz_runs
    assert not os.path.exists(marker)
    hostile = [r for r in runs if r["name"].startswith("hostile_")]
    assert len(hostile) == 3 * n_hostile
    assert all(r["mxnet_error"] for r in hostile), [r for r in hostile if not r["mxnet_error"]]


def test_report_figures(fuzz_runs):
    runs, _, _ = fuzz_runs
    kinds = sorted({_kind(r) for r in runs})
    lines = [f"{'loader':18s} {'inputs':>7s} {'clean errors':>12s} {'loaded':>7s} "
             f"{'max peak':>10s} {'(input size)':>12s}"]
    for kind in kinds:
        sel = [r for r in runs if _kind(r) == kind]
        errors = sum(r["error"] is not None for r in sel)
        worst = max(sel, key=lambda r: r["peak"])
        lines.append(f"{kind:18s} {len(sel):7d} {errors:12d} {len(sel) - errors:7d} "
                     f"{worst['peak'] / 2**20:8.3f}MB {worst['size']:12d}")
        assert len(sel) >= 100
    print("\n" + "\n".join(lines), file=sys.stderr)
    # each loader met inputs it refused and inputs it loaded (the mutations reach both)
    for kind in kinds:
        if not kind.startswith("hostile"):
            sel = [r for r in runs if _kind(r) == kind]
            assert 0 < sum(r["error"] is not None for r in sel) < len(sel), kind

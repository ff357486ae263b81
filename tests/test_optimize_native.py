"""The run-time C build (cpu_tuned/native.py): its cache, and fallbacks without a compiler."""
import ctypes
import os
import shutil
import warnings

import numpy as np
import pytest
import torch

from mxtorch.graph.backends.cpu_tuned import winograd
from mxtorch.graph.backends.cpu_tuned import native
from optimize_helpers import (RTOL, ATOL, _x, needs_onednn, _plain_and_compiled,
                               _conv_ref, _wide_net,
                               _kernel_names)


_ADD_SOURCE = "int mxt_add(int a, int b) { return a + b; }\n"
_ADD_SIG = {"mxt_add": (ctypes.c_int, [ctypes.c_int, ctypes.c_int])}


needs_cc = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc").split()[0]) is None,
                              reason="no C compiler")


def _block_cache_folder(root, monkeypatch, tmp):
    """Point the cache folder below a plain file (unusable); ``tmp``: the temp folder."""
    blocker = root / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MXTORCH_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(native.tempfile, "tempdir", str(tmp(blocker)))


@pytest.fixture
def fresh_native(monkeypatch, tmp_path):
    """native.load with an empty registry, warning state and cache folder."""
    monkeypatch.setattr(native, "_loaded", {})
    monkeypatch.setattr(native, "_warned", False)
    monkeypatch.setenv("MXTORCH_CACHE_DIR", str(tmp_path))
    return tmp_path


@needs_cc
def test_native_builds_once_and_reuses_the_cache(fresh_native, monkeypatch):
    lib = native.load("addtest", _ADD_SOURCE, _ADD_SIG)
    assert lib.mxt_add(2, 3) == 5
    built = [p.name for p in fresh_native.iterdir()]
    assert len(built) == 1 and built[0].startswith("addtest-") and built[0].endswith(".so")
    assert native.load("addtest", _ADD_SOURCE, _ADD_SIG) is lib     # same process
    monkeypatch.setattr(native, "_loaded", {})                       # a new process
    monkeypatch.setattr(native, "_build", lambda *a: pytest.fail("rebuilt"))
    assert native.load("addtest", _ADD_SOURCE, _ADD_SIG).mxt_add(4, 5) == 9


@needs_cc
def test_native_rebuilds_a_truncated_cache_file(fresh_native, monkeypatch):
    native.load("addtest", _ADD_SOURCE, _ADD_SIG)
    (built,) = fresh_native.iterdir()
    # another process died writing it (a loaded library is never truncated in place)
    other = fresh_native / "other"
    other.mkdir()
    (other / built.name).write_bytes(built.read_bytes()[:100])
    monkeypatch.setenv("MXTORCH_CACHE_DIR", str(other))
    monkeypatch.setattr(native, "_loaded", {})
    assert native.load("addtest", _ADD_SOURCE, _ADD_SIG).mxt_add(1, 1) == 2
    assert (other / built.name).stat().st_size > 100                # rebuilt whole
    assert [p.name for p in other.iterdir()] == [built.name]   # no temporary left


@needs_cc
def test_native_unusable_cache_folder_builds_in_the_temp_folder(fresh_native, monkeypatch):
    (fresh_native / "tmp").mkdir()
    _block_cache_folder(fresh_native, monkeypatch, lambda blocker: fresh_native / "tmp")
    assert native.load("addtest", _ADD_SOURCE, _ADD_SIG).mxt_add(20, 22) == 42
    (sub,) = (fresh_native / "tmp").iterdir()
    assert [p.suffix for p in sub.iterdir()] == [".so"]


@needs_cc
def test_native_no_writable_folder_warns_and_returns_none(fresh_native, monkeypatch):
    _block_cache_folder(fresh_native, monkeypatch, lambda blocker: blocker / "tmp")
    with pytest.warns(RuntimeWarning, match="'addtest' kernels could not be built"):
        assert native.load("addtest", _ADD_SOURCE, _ADD_SIG) is None


def test_native_without_compiler_warns_once_and_returns_none(fresh_native, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.warns(RuntimeWarning, match="no C compiler.*'addtest'"):
        assert native.load("addtest", _ADD_SOURCE, _ADD_SIG) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert native.load("other", _ADD_SOURCE, _ADD_SIG) is None


@needs_cc
def test_native_compile_error_warns_with_the_compiler_message(fresh_native):
    with pytest.warns(RuntimeWarning, match="compiling the 'broken' kernels failed.*error"):
        assert native.load("broken", "int f( {", {}) is None
    assert list(fresh_native.iterdir()) == []                        # nothing half-written


def test_native_switched_off_uses_torch_transforms(fresh_native, monkeypatch):
    monkeypatch.setenv("MXTORCH_NATIVE", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert winograd.native_transforms() is None
        with pytest.raises(RuntimeError, match="native transforms are not available"):
            winograd.winograd_conv(torch.zeros(32, 32, 3, 3), None, (1, 32, 4, 4), False,
                                   winograd.Workspace(), "native")
        rng = torch.Generator().manual_seed(3)
        x = torch.randn(1, 32, 6, 6, generator=rng)
        w = torch.randn(32, 32, 3, 3, generator=rng)
        fn = winograd.winograd_conv(w, None, x.shape, False, winograd.Workspace())
        ref = _conv_ref(x, w, None, None, False)
        assert float((fn(x).double() - ref).abs().max()) < 1e-5 * float(ref.abs().max())



@needs_onednn
def test_winograd_without_compiler_warns_once_and_equals_plain(fresh_native, monkeypatch):
    """The torch-product transforms run; the missing compiler is reported, not hidden
    by the compile step."""
    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setenv("MXTORCH_WINOGRAD", "1")
    net = _wide_net()
    ref, out = _plain_and_compiled(net, _x(2, 8), "no C compiler")
    np.testing.assert_allclose(out, ref, rtol=RTOL, atol=ATOL)
    (entry,) = net._cached_op._optimizer._cache.values()
    assert len(_kernel_names(entry, "_winograd")) == 2

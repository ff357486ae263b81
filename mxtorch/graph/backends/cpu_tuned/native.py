"""Small C kernels compiled on the user's machine.

torch has no kernel for some loops mxtorch needs: the Winograd tile transforms of the
inference fusion (:mod:`.winograd`), which as torch operations take several
passes over memory, and the thread pool that runs MKL's single-threaded GEMM in parts
(:mod:`.gemm`). A kernel here is C source held in this package. :func:`load` compiles it
once per machine with the system C compiler (``$CC``, else ``cc``) into a shared
library under the cache folder (``$MXTORCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/mxtorch``,
else ``~/.cache/mxtorch``), named by a hash of the source, the flags, the compiler and the
CPU, and loads it with :mod:`ctypes`. The library is written to a temporary name and renamed, so
a crash or a concurrent process never leaves a half-written file under the final name, and
a cached file that fails to load is rebuilt.

Without a compiler, when compilation fails or with ``MXTORCH_NATIVE=0``, :func:`load`
returns ``None`` (after one warning per process, except when switched off) and the
callers use their torch form.
"""
from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
import threading
import warnings
from typing import Any, Mapping, Sequence

__all__ = ["load", "enabled", "switched_on", "cache_dir"]

_LOG = logging.getLogger(__name__)
_FLAGS = ("-O3", "-shared", "-fPIC", "-pthread", "-fno-math-errno")
_NATIVE_ARCH = ("-march=native",)
_lock = threading.Lock()
_loaded: dict[str, ctypes.CDLL | None] = {}
_warned = False


def switched_on(variable: str) -> bool:
    """False when the environment ``variable`` says ``0``, ``off`` or ``false``."""
    return os.environ.get(variable, "1").strip().lower() not in ("0", "off", "false")


def enabled() -> bool:
    """False when ``MXTORCH_NATIVE`` switches the compiled kernels off."""
    return switched_on("MXTORCH_NATIVE")


def cache_dir() -> str:
    """Where compiled libraries are kept."""
    explicit = os.environ.get("MXTORCH_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mxtorch")


def _compiler() -> list[str]:
    return shlex.split(os.environ.get("CC") or "cc")


def _cpu_id() -> str:
    """The CPU's model and feature flags (``-march=native`` code is only valid on them)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags", "Features"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.processor()


def _build(cc: list[str], flags: tuple[str, ...], src_path: str, out_path: str) -> str | None:
    """Compile; the compiler's error text, or None on success."""
    try:
        res = subprocess.run([*cc, *flags, "-o", out_path, src_path], capture_output=True,
                             text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as err:
        return str(err)
    return None if res.returncode == 0 else (res.stderr or res.stdout).strip()[-500:]


def _warn_once(msg: str) -> None:
    global _warned
    _LOG.debug(msg)
    if not _warned:
        _warned = True
        warnings.warn(msg, RuntimeWarning, stacklevel=3)


# A C function's ctypes (restype, argtypes); restype None for void.
Signature = tuple[type[Any] | None, Sequence[type[Any]]]


def load(name: str, source: str, signatures: Mapping[str, Signature]) -> ctypes.CDLL | None:
    """The compiled library of ``source`` with ``signatures`` (function name ->
    ``(restype, [argtypes])``) applied, or ``None`` when it cannot be built."""
    if not enabled():
        return None
    with _lock:
        if name in _loaded:
            return _loaded[name]
        try:
            lib = _load_locked(name, source)
        except OSError as err:   # no usable folder, or a library the system will not map
            _warn_once(f"mxtorch: the '{name}' kernels could not be built or loaded; they "
                       f"run as slower torch operations ({err})")
            lib = None
        if lib is not None:
            for fn, (restype, argtypes) in signatures.items():
                f = getattr(lib, fn)
                f.restype, f.argtypes = restype, list(argtypes)
        _loaded[name] = lib
        return lib


def _load_locked(name: str, source: str) -> ctypes.CDLL | None:
    cc = _compiler()
    if shutil.which(cc[0]) is None:
        _warn_once(f"mxtorch: no C compiler ({cc[0]!r} not found; set CC); the '{name}' "
                   "kernels run as slower torch operations")
        return None
    folder = cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=folder, delete=True)
        probe.close()
    except OSError as err:
        user = os.getuid() if hasattr(os, "getuid") else os.getpid()
        _LOG.debug("native: cache folder %s unusable (%s)", folder, err)
        folder = os.path.join(tempfile.gettempdir(), f"mxtorch-{user}")
        os.makedirs(folder, exist_ok=True)
    errors = []
    machine = _cpu_id() + platform.machine()
    for flags in (_FLAGS + _NATIVE_ARCH, _FLAGS):
        key = hashlib.sha256("\0".join([source, " ".join(flags), " ".join(cc),
                                        machine]).encode()).hexdigest()[:20]
        path = os.path.join(folder, f"{name}-{key}.so")
        if os.path.exists(path):
            try:
                return ctypes.CDLL(path)
            except OSError as err:   # truncated or foreign file: build it again
                _LOG.debug("native: rebuilding %s (%s)", path, err)
        fd, src_path = tempfile.mkstemp(suffix=".c", dir=folder)
        tmp_lib = src_path[:-2] + ".so"
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(source)
            build_err = _build(cc, flags, src_path, tmp_lib)
            if build_err is None:
                os.replace(tmp_lib, path)
                _LOG.debug("native: built %s with %s", path, " ".join(flags))
                return ctypes.CDLL(path)
            errors.append(build_err)
        except OSError as err2:
            errors.append(str(err2))
        finally:
            for p in (src_path, tmp_lib):
                if os.path.exists(p):
                    os.remove(p)
    _warn_once(f"mxtorch: compiling the '{name}' kernels failed; they run as slower torch "
               f"operations ({errors[-1][:300]})")
    return None

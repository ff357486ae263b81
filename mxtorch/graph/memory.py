"""What ``static_alloc`` means for host memory: freed buffers stay in the process for reuse.

MXNet's ``static_alloc`` allocates a graph's memory once and reuses it on every call. On
CPU torch takes each buffer from ``malloc`` and gives it back after use; glibc serves
large requests (above a threshold that starts at 128 KiB) with fresh ``mmap`` pages and
returns them to the kernel on ``free``, so every call of a large model page-faults (and
zero-fills) its activations again — on this project's test machine that was 22 000
faults, about 90 MiB, per resnet18 batch of 16. ``retain_freed_memory`` asks glibc to serve
large blocks from its heap too (the mmap threshold at its 32 MiB maximum, and no mmap at
all above it: resnet18's first activation at batch 16 is 49 MiB, and faulting it in again
doubled that convolution's time) and not to trim the heap's top, so the next call reuses
the same memory, as MXNet's pooled storage did. The cost is MXNet's too: the process keeps
its peak host memory.

It is applied once per process, the first time a static_alloc graph or an Executor (whose
memory MXNet always took from its pool) is built; setting
``MXTORCH_RETAIN_FREED_MEMORY=0`` turns it off. Elsewhere than glibc it does nothing.
"""
from __future__ import annotations

import ctypes
import logging
import os
import platform

__all__ = ["retain_freed_memory"]

_LOG = logging.getLogger(__name__)

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_MMAP_MAX = -4
MMAP_THRESHOLD = 32 * 1024 * 1024     # glibc's maximum on 64-bit systems
TRIM_THRESHOLD = 2**31 - 1            # keep up to 2 GiB of free heap top (mallopt takes an int)

_applied: bool | None = None


def retain_freed_memory() -> bool:
    """Keep freed host buffers for reuse (once per process); whether it is in effect."""
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    if os.environ.get("MXTORCH_RETAIN_FREED_MEMORY", "1").strip() in ("0", "false", "False"):
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)
        ok = (libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
              and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
              and libc.mallopt(_M_MMAP_MAX, 0) == 1)
    except (OSError, AttributeError) as err:
        _LOG.debug("host memory: mallopt unavailable (%s)", err)
        return False
    _applied = bool(ok)
    _LOG.debug("host memory: freed buffers are kept for reuse: %s", _applied)
    return _applied

"""MXNet's ordering of writes to arrays shared between threads.

MXNet's engine runs every operation that writes an array after the operations before it
that read or write that array, so four threads each doing ``x += 1`` 200 times on one
array always end at 800. torch runs a kernel as soon as it is called and releases the
GIL inside it: two threads updating one tensor in place interleave their reads and
writes and lose updates. Every in-place write of mxtorch (``+=`` and the other augmented
operators, ``out=``, ``x[key] = v``, ``copyto``, optimizer updates, kvstore pushes and
pulls) therefore holds :data:`WRITES` from the read of its inputs to the write of its
result. One lock for all arrays keeps views and their bases ordered together, as
MXNet's per-chunk variables do; calls that only read run unlocked.
"""
from __future__ import annotations

import threading

__all__ = ["WRITES"]

#: held by each in-place write, re-entrant (an update that calls operators with out=)
WRITES = threading.RLock()

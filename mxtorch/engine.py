"""``mx.engine``: the bulk-execution setting of MXNet's engine.

MXNet's engine can bundle up to ``size`` consecutive operators into one scheduling unit.
mxtorch runs every operator eagerly through torch, so bundling changes nothing that a
program can observe; the setting is kept (per thread, as MXNet keeps it) so code that
reads it back, or restores it, behaves as it did.
"""
from __future__ import annotations

import threading

__all__ = ["set_bulk_size", "bulk"]

_DEFAULT_BULK_SIZE = 15  # MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD's default


class _BulkState(threading.local):
    def __init__(self) -> None:
        self.size = _DEFAULT_BULK_SIZE


_STATE = _BulkState()


def set_bulk_size(size: int) -> int:
    """Set size limit on bulk execution; return the previous size.

    Parameters
    ----------
    size : int
        Maximum number of operators that can be bundled in a bulk.

    Returns
    -------
    int
        Previous bulk size.
    """
    prev = _STATE.size
    _STATE.size = int(size)
    return prev


class _BulkScope:
    """Scope that sets the bulk size and restores the previous one on exit."""

    def __init__(self, size: int):
        self._size = size
        self._old_size: int | None = None

    def __enter__(self) -> "_BulkScope":
        self._old_size = set_bulk_size(self._size)
        return self

    def __exit__(self, ptype, value, trace) -> None:
        set_bulk_size(self._old_size)


def bulk(size: int) -> _BulkScope:
    """Return a scope that bundles up to ``size`` operators per bulk::

        with mx.engine.bulk(10):
            x = mx.nd.zeros((1,))
            for i in range(100):
                x += 1
    """
    return _BulkScope(size)

"""Attach the numpy namespaces where MXNet 1.9.1 has them: ``mx.nd.np``, ``mx.nd.npx``,
``mx.sym.np``, ``mx.sym.npx`` (what ``F.np`` / ``F.npx`` resolve to in ``hybrid_forward``)."""
from __future__ import annotations

import importlib
import sys

__all__ = ["install"]


def install() -> None:
    """Set the four attributes (idempotent; the lead may replace this by plain imports)."""
    from .. import ndarray as _nd
    from .. import symbol as _sym
    from ..symbol import numpy as _sym_np
    npx = sys.modules[__package__]
    _nd.npx = npx
    _sym.np = _sym_np
    _sym.npx = _sym_np._npx
    try:
        _nd.np = importlib.import_module("mxtorch.numpy")
    except ImportError:  # pragma: no cover - mx.np is being written alongside
        pass

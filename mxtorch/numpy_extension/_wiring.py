"""Attach the NumPy-mode namespaces where MXNet 1.9.1 has them: ``mx.nd.np`` (also
``mx.nd.numpy``) is ``mx.np``, ``mx.nd.npx`` (``mx.nd.numpy_extension``) is ``mx.npx``,
``mx.sym.np`` / ``mx.sym.npx`` are the symbol ones (what ``F.np`` / ``F.npx`` resolve to in
``hybrid_forward``). Each is importable under MXNet's module path too
(``import mxnet.ndarray.numpy.linalg``): the same module object, registered under that name."""
from __future__ import annotations

import sys

__all__ = ["install"]


def _alias(path: str, module) -> None:
    """``module`` and its submodules (linalg/random/image attributes and every loaded
    ``module.<sub>``, e.g. ``mx.npx._op``) also importable under ``path``."""
    sys.modules.setdefault(path, module)
    for sub in ("linalg", "random", "image"):
        child = getattr(module, sub, None)
        if child is not None and type(child) is type(sys):
            sys.modules.setdefault(f"{path}.{sub}", child)
    prefix = module.__name__ + "."
    for name, child in list(sys.modules.items()):
        if name.startswith(prefix) and child is not None:
            sys.modules.setdefault(path + "." + name[len(prefix):], child)


def install() -> None:
    """Set the attributes and module names (idempotent)."""
    from .. import ndarray as _nd
    from .. import numpy as _np
    from .. import symbol as _sym
    from ..symbol import numpy as _sym_np
    from . import image  # noqa: F401  (mx.npx.image)
    npx = sys.modules[__package__]
    for front, np_mod, npx_mod in ((_nd, _np, npx), (_sym, _sym_np, _sym_np._npx)):
        front.np = front.numpy = np_mod
        front.npx = front.numpy_extension = npx_mod
        _alias(f"{front.__name__}.numpy", np_mod)
        _alias(f"{front.__name__}.numpy_extension", npx_mod)

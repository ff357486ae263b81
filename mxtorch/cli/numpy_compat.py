"""NumPy's names that MXNet-era code still uses, for the length of ``mxtorch run``.

MXNet 1.x and the packages built on it (GluonCV, GluonTS, GluonNLP...) were written for
NumPy < 1.24 and use names NumPy has since removed: the builtin aliases ``np.float``,
``np.int``, ``np.object``, ``np.str``, ``np.complex`` (gone in 1.24) and the NumPy 2
removals ``np.float_``, ``np.NaN``, ``np.product``, ``np.asfarray``... Such code stops at
``AttributeError: module 'numpy' has no attribute 'float'`` before MXNet is involved.

``mxtorch run`` therefore puts those names back on the ``numpy`` module while the script
runs, each bound to what it meant (``np.float`` is ``float``, ``np.float_`` is
``np.float64``, ``np.product`` is ``np.prod``), and removes them afterwards. Only names
NumPy no longer has are added; nothing NumPy defines is replaced. ``import mxtorch`` alone
never changes NumPy; ``mxtorch run --no-numpy-aliases`` turns this off.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["LEGACY_NAMES", "install", "remove"]


def _asfarray(a: Any, dtype: Any = np.float64) -> np.ndarray:
    """NumPy < 2's ``asfarray``: an array of ``dtype``, float64 for a non-float one."""
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    return np.asarray(a, dtype=dtype)


def _legacy_names() -> dict[str, Any]:
    table: dict[str, Callable[[], Any]] = {
        # removed in NumPy 1.24 (deprecated aliases of the builtins)
        "float": lambda: float, "int": lambda: int, "bool": lambda: bool,
        "object": lambda: object, "str": lambda: str, "complex": lambda: complex,
        # removed in NumPy 2.0
        "float_": lambda: np.float64, "complex_": lambda: np.complex128,
        "unicode_": lambda: np.str_, "string_": lambda: np.bytes_, "unicode": lambda: str,
        "NaN": lambda: np.nan, "Inf": lambda: np.inf, "infty": lambda: np.inf,
        "PINF": lambda: np.inf, "NINF": lambda: -np.inf,
        "product": lambda: np.prod, "cumproduct": lambda: np.cumprod,
        "sometrue": lambda: np.any, "alltrue": lambda: np.all, "round_": lambda: np.round,
        "asfarray": lambda: _asfarray,
    }
    return {name: make() for name, make in table.items()}


#: the names put back, and what each stands for
LEGACY_NAMES: dict[str, Any] = _legacy_names()

_ADDED: list[str] = []


def _defined(name: str) -> bool:
    """Whether NumPy itself has ``name`` (its module __getattr__ raises for removed ones,
    and warns for some it will define again)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            getattr(np, name)
        except AttributeError:
            return False
    return True


def install() -> list[str]:
    """Add every legacy name NumPy lacks to the ``numpy`` module; returns the ones added."""
    for name, value in LEGACY_NAMES.items():
        if name not in _ADDED and not _defined(name):
            setattr(np, name, value)
            _ADDED.append(name)
    return list(_ADDED)


def remove() -> None:
    """Take the names :func:`install` added off the ``numpy`` module again."""
    while _ADDED:
        name = _ADDED.pop()
        if name in np.__dict__:
            delattr(np, name)

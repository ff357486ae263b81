"""``mx.name``: automatic naming of symbols (``fullyconnected0``) and name prefixes."""
from __future__ import annotations

import threading

from .base import _MXClassPropertyMetaClass, classproperty

__all__ = ["NameManager", "Prefix"]


class NameManager(metaclass=_MXClassPropertyMetaClass):
    """Assigns unique names to symbols created without one.

    ``with mx.name.NameManager():`` opens a fresh counter scope; ``current`` is the manager
    in effect for the calling thread, and assigning ``NameManager.current`` sets it for
    that thread only, as in MXNet.
    """

    _current = threading.local()

    def __init__(self):
        self._counter: dict[str, int] = {}
        self._old_manager = None

    def get(self, name: str | None, hint: str) -> str:
        """Return ``name`` if given, else ``hint`` followed by a per-hint counter."""
        if name:
            return name
        hint = hint.lower()
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self):
        if not hasattr(NameManager._current, "value"):
            NameManager._current.value = NameManager()
        self._old_manager = NameManager._current.value
        NameManager._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        NameManager._current.value = self._old_manager

    @classproperty
    def current(cls) -> "NameManager":
        """The calling thread's name manager."""
        if not hasattr(NameManager._current, "value"):
            NameManager._current.value = NameManager()
        return NameManager._current.value

    @current.setter
    def current(cls, val: "NameManager") -> None:  # noqa: N805 - a classproperty's setter
        NameManager._current.value = val

    @classmethod
    def current_manager(cls) -> "NameManager":
        return NameManager.current


class Prefix(NameManager):
    """A name manager that prepends ``prefix`` to every name it assigns."""

    def __init__(self, prefix: str):
        super().__init__()
        self._prefix = prefix

    def get(self, name: str | None, hint: str) -> str:
        return self._prefix + super().get(name, hint)

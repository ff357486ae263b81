"""``mx.AttrScope``: attributes attached to every symbol created inside a scope."""
from __future__ import annotations

import threading

from .base import _MXClassPropertyMetaClass, classproperty

__all__ = ["AttrScope"]


class AttrScope(metaclass=_MXClassPropertyMetaClass):
    """``with mx.AttrScope(ctx_group='dev1'):`` attaches attributes to new symbols.

    Keys are kept as given; the symbol stores MXNet's hidden keys (``ctx_group``,
    ``lr_mult``, ...) in their ``__key__`` form. Values must be strings. ``current`` is
    the calling thread's scope, and assigning ``AttrScope.current`` sets it for that
    thread only, as in MXNet.
    """

    _current = threading.local()

    def __init__(self, **kwargs):
        self._old_scope = None
        for value in kwargs.values():
            if not isinstance(value, str):
                raise ValueError("Attributes need to be string")
        self._attr = kwargs

    def get(self, attr: dict | None) -> dict:
        """Merge the scope's attributes with ``attr`` (``attr`` wins)."""
        if self._attr:
            ret = dict(self._attr)
            if attr:
                ret.update(attr)
            return ret
        return dict(attr) if attr else {}

    def __enter__(self):
        if not hasattr(AttrScope._current, "value"):
            AttrScope._current.value = AttrScope()
        self._old_scope = AttrScope._current.value
        merged = dict(AttrScope._current.value._attr)
        merged.update(self._attr)
        self._attr = merged
        AttrScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        AttrScope._current.value = self._old_scope

    @classproperty
    def current(cls) -> "AttrScope":
        """The calling thread's attribute scope."""
        if not hasattr(cls._current, "value"):
            cls._current.value = AttrScope()
        return cls._current.value

    @current.setter
    def current(cls, val: "AttrScope") -> None:  # noqa: N805 - a classproperty's setter
        cls._current.value = val

    @classmethod
    def current_scope(cls) -> "AttrScope":
        return cls.current

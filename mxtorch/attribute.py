"""``mx.AttrScope``: attributes attached to every symbol created inside a scope."""
from __future__ import annotations

import threading

__all__ = ["AttrScope"]


class AttrScope:
    """``with mx.AttrScope(ctx_group='dev1'):`` attaches attributes to new symbols.

    Keys are stored in MXNet's hidden form (``__ctx_group__``); values must be strings.
    """

    _current = threading.local()

    def __init__(self, **kwargs):
        self._old_scope = None
        for value in kwargs.values():
            if not isinstance(value, str):
                raise ValueError("Attributes need to be string")
        self._attr = {f"__{k}__" if not k.startswith("__") else k: v for k, v in kwargs.items()}

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

    @classmethod
    def current_scope(cls) -> "AttrScope":
        if not hasattr(cls._current, "value"):
            cls._current.value = AttrScope()
        return cls._current.value


class _CurrentDescriptor:
    def __get__(self, obj, owner):
        return owner.current_scope()


AttrScope.current = _CurrentDescriptor()

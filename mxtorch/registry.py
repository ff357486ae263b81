"""MXNet's small registry for pluggable classes: ``register``, ``alias``, ``create``.

One registry per base class (optimizers, initializers, metrics, lr schedulers, ...).
Names are case-insensitive. ``create`` accepts a name, an instance (returned as is), a
dict of constructor arguments with the nickname key, or the JSON strings that
``Initializer.dumps()`` writes (``'["xavier", {...}]'`` or ``'{"name": ...}'``).
"""
from __future__ import annotations

import json
import warnings
from typing import Any, Callable

__all__ = ["get_registry", "get_register_func", "get_alias_func", "get_create_func"]

_REGISTRY: dict[type, dict[str, type]] = {}


def _table(base_class: type) -> dict[str, type]:
    """The (mutable) name -> class table of ``base_class``."""
    return _REGISTRY.setdefault(base_class, {})


def get_registry(base_class: type) -> dict[str, type]:
    """Return a copy of the registry of ``base_class`` (lower-case name -> class).

    Parameters
    ----------
    base_class : type
        Base class of the registered classes.
    """
    return _table(base_class).copy()


def get_register_func(base_class: type, nickname: str) -> Callable:
    """Return ``register(klass, name=None)`` that adds a subclass of ``base_class``.

    Parameters
    ----------
    base_class : type
        Base class of the classes that will be registered.
    nickname : str
        Nickname of ``base_class`` used in messages (``'optimizer'``, ``'initializer'``).
    """
    registry = _table(base_class)

    def register(klass: type, name: str | None = None) -> type:
        assert issubclass(klass, base_class), \
            f"Can only register subclass of {base_class.__name__}"
        key = (klass.__name__ if name is None else name).lower()
        if key in registry:
            old = registry[key]
            warnings.warn(f"New {nickname} {klass.__module__}.{klass.__name__} registered with "
                          f"name {key} is overriding existing {nickname} "
                          f"{old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
        registry[key] = klass
        return klass

    register.__doc__ = f"Register {nickname} to the {nickname} factory"
    return register


def get_alias_func(base_class: type, nickname: str) -> Callable:
    """Return ``alias(*names)``, a class decorator registering the class under each name."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases: str) -> Callable[[type], type]:
        def reg(klass: type) -> type:
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class: type, nickname: str) -> Callable:
    """Return ``create(name_or_instance, *args, **kwargs)`` for ``base_class``.

    Parameters
    ----------
    base_class : type
        Base class of the registered classes.
    nickname : str
        Nickname of ``base_class``; also the keyword holding the name in dict configs.
    """
    registry = _table(base_class)

    def create(*args: Any, **kwargs: Any) -> Any:
        if args:
            name, args = args[0], args[1:]
        else:
            name = kwargs.pop(nickname)
        if isinstance(name, base_class):
            assert not args and not kwargs, \
                f"{nickname} is already an instance. Additional arguments are invalid"
            return name
        if isinstance(name, dict):
            return create(**name)
        assert isinstance(name, str), f"{nickname} must be of string type"
        if name.startswith("["):
            assert not args and not kwargs
            name, kwargs = json.loads(name)
            return create(name, **kwargs)
        if name.startswith("{"):
            assert not args and not kwargs
            return create(**json.loads(name))
        key = name.lower()
        assert key in registry, \
            f"{key} is not registered. Please register with {nickname}.register first"
        return registry[key](*args, **kwargs)

    create.__doc__ = (f"Create a {nickname} instance from config.\n\nParameters\n----------\n"
                      f"{nickname} : str or {base_class.__name__} instance\n    class name of "
                      "desired instance. If is a instance, it will be returned directly.\n"
                      "**kwargs : dict\n    arguments to be passed to constructor")
    return create

"""NumPy-shape and NumPy-array semantics switches (``mx.util``), as in MXNet 1.9.1.

Both flags are thread-local, as MXNet's are (the shape flag lives in the C++ engine's
thread-local state, the array flag in a ``threading.local`` scope).
"""
from __future__ import annotations

import functools
import inspect
import os
import threading

from .context import get_cuda_compute_capability, gpu_memory_info, num_gpus

__all__ = ["is_np_shape", "set_np_shape", "np_shape", "use_np_shape", "is_np_array",
           "set_np", "reset_np", "np_array", "use_np_array", "use_np", "getenv", "setenv",
           "get_gpu_count", "get_gpu_memory", "set_module", "wrap_np_unary_func",
           "wrap_np_binary_func", "get_cuda_compute_capability", "np_ufunc_legal_option"]


class _NpState(threading.local):
    """Per-thread NumPy semantics flags."""

    def __init__(self) -> None:
        self.shape = False
        self.array = False


_STATE = _NpState()


# ---------------------------------------------------------------------------- shape
def set_np_shape(active):
    """Turn NumPy shape semantics (``()`` scalars, zero-size dims) on or off.

    Parameters
    ----------
    active : bool
        Whether to turn NumPy shape semantics on.

    Returns
    -------
    bool
        The previous state.
    """
    if not active and is_np_array():
        raise ValueError('Deactivating NumPy shape semantics while NumPy array semantics is '
                         'still active is not allowed. Please consider calling '
                         '`npx.reset_np()` to deactivate both of them.')
    prev = _STATE.shape
    _STATE.shape = bool(active)
    return prev


def is_np_shape():
    """Return whether NumPy shape semantics is on in this thread."""
    return _STATE.shape


class _NumpyShapeScope:
    """``with`` scope setting NumPy shape semantics and restoring it on exit."""

    def __init__(self, is_np_shape):  # MXNet's signature
        self._enter_is_np_shape = is_np_shape
        self._prev_is_np_shape = None

    def __enter__(self):
        if self._enter_is_np_shape is not None:
            self._prev_is_np_shape = set_np_shape(self._enter_is_np_shape)

    def __exit__(self, ptype, value, trace):
        if (self._enter_is_np_shape is not None
                and self._prev_is_np_shape != self._enter_is_np_shape):
            set_np_shape(self._prev_is_np_shape)


def np_shape(active=True):
    """Return a ``with`` scope with NumPy shape semantics turned on (or off).

    Parameters
    ----------
    active : bool
        Whether to activate NumPy shape semantics inside the scope.
    """
    return _NumpyShapeScope(active)


def _scoped(func, scope_factory, decorator_name):
    """Wrap a function, or every method/property of a class, in a semantics scope."""
    if inspect.isclass(func):
        members = inspect.getmembers(
            func, predicate=lambda f: (inspect.isfunction(f) or inspect.ismethod(f)
                                       or isinstance(f, property)))
        for name, method in members:
            if isinstance(method, property):
                setattr(func, name, property(_scoped(method.__get__, scope_factory,
                                                     decorator_name),
                                             method.__set__, method.__delattr__,
                                             method.__doc__))
            else:
                setattr(func, name, _scoped(method, scope_factory, decorator_name))
        return func
    if callable(func):
        @functools.wraps(func)
        def _wrapped(*args, **kwargs):
            with scope_factory(True):
                return func(*args, **kwargs)
        return _wrapped
    raise TypeError(f'{decorator_name} can only decorate classes and callable objects, '
                    f'while received a {type(func)}')


def use_np_shape(func):
    """Decorate a function or class so that it runs with NumPy shape semantics.

    Parameters
    ----------
    func : callable or class
        A function, or a class whose methods, static functions and properties are wrapped.
    """
    return _scoped(func, np_shape, "use_np_shape")


# ---------------------------------------------------------------------------- array
class _NumpyArrayScope:
    """``with`` scope setting NumPy array semantics and restoring it on exit."""

    def __init__(self, is_np_array):  # MXNet's signature
        self._is_np_array = is_np_array
        self._old_scope = None

    def __enter__(self):
        self._old_scope = _STATE.array
        _STATE.array = bool(self._is_np_array)
        return self

    def __exit__(self, ptype, value, trace):
        _STATE.array = self._old_scope


def np_array(active=True):
    """Return a ``with`` scope in which ``mx.np.ndarray`` is created instead of NDArray.

    Parameters
    ----------
    active : bool
        Whether to activate NumPy array semantics inside the scope.
    """
    return _NumpyArrayScope(active)


def is_np_array():
    """Return whether NumPy array semantics is on in this thread."""
    return _STATE.array


def use_np_array(func):
    """Decorate a function or class so that it runs with NumPy array semantics.

    Parameters
    ----------
    func : callable or class
        A function, or a class (e.g. a Gluon ``Block``) whose members are wrapped.
    """
    return _scoped(func, np_array, "use_np_array")


def use_np(func):
    """Decorate a function or class with both NumPy shape and NumPy array semantics.

    Parameters
    ----------
    func : callable or class
        The function or class to wrap.
    """
    return use_np_shape(use_np_array(func))


def _set_np_array(active):
    """Set NumPy array semantics for this thread; return the previous state."""
    prev = _STATE.array
    _STATE.array = bool(active)
    return prev


def set_np(shape=True, array=True):
    """Turn NumPy shape and NumPy array semantics on (or off) at the same time.

    Parameters
    ----------
    shape : bool
        NumPy shape semantics (scalar and zero-size shapes are valid).
    array : bool
        NumPy array semantics (Gluon creates ``mx.np.ndarray``); requires ``shape``.
    """
    if not shape and array:
        raise ValueError('NumPy Shape semantics is required in using NumPy array semantics.')
    _set_np_array(array)
    set_np_shape(shape)


def reset_np():
    """Deactivate NumPy shape and array semantics at the same time."""
    set_np(shape=False, array=False)


# ---------------------------------------------------------------------------- misc
def getenv(name):
    """Return the value of an environment variable, or None if it is not set."""
    return os.environ.get(name)


def setenv(name, value):
    """Set (or, with ``value=None``, unset) an environment variable."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def get_gpu_count():
    """Return the number of visible GPUs."""
    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    """Return ``(free, total)`` bytes of memory on a GPU."""
    return gpu_memory_info(gpu_dev_id)


def set_module(module):
    """Decorator overriding ``__module__`` on a function or class (MXNet's helper)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


def wrap_np_unary_func(func):
    """Return ``func`` unchanged after checking NumPy ufunc keyword options."""
    @functools.wraps(func)
    def _wrap(x, out=None, **kwargs):
        _check_ufunc_kwargs(func.__name__, kwargs)
        return func(x, out=out)
    return _wrap


def wrap_np_binary_func(func):
    """Return ``func`` unchanged after checking NumPy ufunc keyword options."""
    @functools.wraps(func)
    def _wrap(x1, x2, out=None, **kwargs):
        _check_ufunc_kwargs(func.__name__, kwargs)
        return func(x1, x2, out=out)
    return _wrap


_UFUNC_LEGAL = {"where": (True,), "casting": ("same_kind",), "order": ("K",),
                "dtype": (None,), "subok": (True,)}


def _check_ufunc_kwargs(name, kwargs):
    """Raise for ufunc options MXNet does not support (only the defaults are legal)."""
    for key, value in kwargs.items():
        legal = _UFUNC_LEGAL.get(key)
        if legal is None:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if value not in legal:
            raise TypeError(f"{key}={value} not implemented yet for {name}")


_UFUNC_DTYPES = frozenset(["int8", "uint8", "int32", "int64", "float16", "float32", "float64"])


def np_ufunc_legal_option(key, value):
    """Whether ``key=value`` is a ufunc argument MXNet's NumPy functions accept.

    Parameters
    ----------
    key : str
        The ufunc argument ('where', 'casting', 'order', 'dtype' or 'subok').
    value : object
        Its value.

    Returns
    -------
    bool
    """
    if key == "where":
        return True
    if key == "casting":
        return value in ("no", "equiv", "safe", "same_kind", "unsafe")
    if key == "order":
        return isinstance(value, str)
    if key == "dtype":
        import numpy as _np
        if isinstance(value, str):
            return value in _UFUNC_DTYPES
        try:
            return _np.dtype(value).name in _UFUNC_DTYPES and isinstance(value, type)
        except TypeError:
            return False
    if key == "subok":
        return isinstance(value, bool)
    return False

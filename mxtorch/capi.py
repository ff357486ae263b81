"""MXNet's C API entry points, as Python callables (``mxtorch.base._LIB``).

MXNet code, its own tests and packages built on it call the C library through ctypes:
``check_call(_LIB.MXSomething(c_str(name), mx_uint(n), ctypes.byref(handle)))``. mxtorch
has no C library; :data:`LIB` offers the same entry points, taking the same ctypes
arguments (``c_char_p`` strings, ``mx_uint`` counts, ``c_str_array`` arrays,
``ctypes.byref`` outputs, ``c_void_p`` handles of NDArrays and Symbols) and returning 0,
or -1 after recording the error that ``MXGetLastError`` gives and ``check_call`` raises.
An entry point mxtorch does not offer raises AttributeError naming it, as ctypes does
for a symbol the library lacks.
"""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Callable

import numpy as np

from . import random as _random
from .base import DTYPE_NP_TO_MX, MXNetError, handle_address, py_str
from .graph import partition as _partition
from .ndarray import ndarray as _nd
from .symbol import symbol as _sym

__all__ = ["LIB", "MXNET_VERSION"]

MXNET_VERSION = 10901
_STATE = threading.local()   # MXNet's last error and returned buffers are per thread
_ENTRIES: dict[str, Callable[..., Any]] = {}


class _Library:
    """The C library's entry points by name (``_LIB.MXGetVersion``...)."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        try:
            return _ENTRIES[name]
        except KeyError:
            raise AttributeError(f"mxtorch C API: undefined symbol: {name}") from None

    def __dir__(self) -> list[str]:
        return sorted(_ENTRIES)


LIB = _Library()


def _entry(fn: Callable[..., None]) -> Callable[..., int]:
    """Register ``fn`` as an entry point: 0 when it returns, -1 (and the error recorded
    for MXGetLastError) when it raises."""
    def call(*args):
        try:
            fn(*args)
        except Exception as err:  # noqa: BLE001 - every error becomes the C status
            _STATE.last_error = f"{type(err).__name__}: {err}"
            return -1
        return 0
    call.__name__ = call.__qualname__ = fn.__name__
    call.__doc__ = fn.__doc__
    _ENTRIES[fn.__name__] = call
    return call


def MXGetLastError() -> bytes:
    """The message of this thread's last failed call (``'<ErrorType>: <message>'``)."""
    return getattr(_STATE, "last_error", "").encode("utf-8")


_ENTRIES["MXGetLastError"] = MXGetLastError


# ---------------------------------------------------------------------- arguments
def _str(value: Any) -> str:
    if isinstance(value, ctypes.c_char_p):
        value = value.value
    if value is None:
        raise MXNetError("a string argument is NULL")
    return py_str(value)


def _int(value: Any) -> int:
    return int(getattr(value, "value", value))


def _pointer(value: Any) -> int:
    """The address a pointer argument holds (0 for NULL: a ``c_void_p()`` or None)."""
    value = getattr(value, "value", value)
    return 0 if value is None else int(value)


def _strs(count: Any, array: Any) -> list[str]:
    return [py_str(array[i]) for i in range(_int(count))]


def _target(ref: Any) -> Any:
    """The ctypes object an output argument (``byref(x)``, ``pointer(x)``) points to."""
    obj = getattr(ref, "_obj", None)   # ctypes.byref's CArgObject
    if obj is not None:
        return obj
    if isinstance(ref, ctypes._Pointer):
        return ref.contents
    raise MXNetError(f"output argument {ref!r} is not ctypes.byref(...) or a pointer")


def _set_address(ref: Any, address: int | None) -> None:
    """Store ``address`` in the pointer-sized output ``ref`` (a handle or a C pointer)."""
    ctypes.c_void_p.from_address(ctypes.addressof(_target(ref))).value = address


def _keep(kind: str, obj: Any) -> Any:
    """Keep a buffer handed out until this thread's next call that returns one of its
    kind (MXNet's thread-local return buffers)."""
    if not hasattr(_STATE, "returned"):
        _STATE.returned = {}
    _STATE.returned[kind] = obj
    return obj


def _ndarray(handle: Any) -> "_nd.NDArray":
    """The array an NDArray argument names: the array itself, its C handle, or what
    ``NDArray.handle`` gives (MXNet code passes ``arr.handle``; here that is the
    array's tensor, wrapped again)."""
    if isinstance(handle, _nd.NDArray):
        return handle
    if handle_address(handle) is None and handle is not None:
        return _nd.NDArray(handle)   # a tensor; anything else fails in the handle table
    return _nd._HANDLES.get(handle)


def _symbol(handle: Any) -> "_sym.Symbol":
    return handle if isinstance(handle, _sym.Symbol) else _sym._HANDLES.get(handle)


def _give_symbol(ref: Any, sym: "_sym.Symbol") -> None:
    _set_address(ref, _sym._HANDLES.give(sym))


def _give_ndarray(ref: Any, arr: "_nd.NDArray") -> None:
    _set_address(ref, _nd._HANDLES.give(arr))


# ---------------------------------------------------------------------- library
@_entry
def MXGetVersion(out: Any) -> None:
    """The MXNet version mxtorch reproduces (10901 for 1.9.1)."""
    _target(out).value = MXNET_VERSION


@_entry
def MXGetEnv(name: Any, out: Any) -> None:
    """An environment variable's value as the library sees it (NULL when unset)."""
    value = os.environ.get(_str(name))
    _set_address(out, None if value is None else
                 ctypes.addressof(_keep("env", ctypes.create_string_buffer(value.encode()))))


@_entry
def MXSetEnv(name: Any, value: Any) -> None:
    """Set an environment variable for the library (the process)."""
    os.environ[_str(name)] = _str(value)


@_entry
def MXRandomSeed(seed: Any) -> None:
    """Seed every random generator (``mx.random.seed``)."""
    _random.seed(_int(seed))


# ---------------------------------------------------------------------- NDArray
@_entry
def MXNDArrayFree(handle: Any) -> None:
    """Release a handle the C API returned (the array lives on while others hold it)."""
    _nd._HANDLES.free(handle)


@_entry
def MXNDArrayWaitToRead(handle: Any) -> None:
    _ndarray(handle).wait_to_read()


@_entry
def MXNDArrayWaitAll() -> None:
    _nd.waitall()


@_entry
def MXNDArrayGetShapeEx(handle: Any, out_dim: Any, out_pdata: Any) -> None:
    """The array's number of dimensions and a pointer to its dimensions."""
    shape = _ndarray(handle).shape
    dims = _keep("shape", (ctypes.c_int * max(len(shape), 1))(*shape))
    _target(out_dim).value = len(shape)
    _set_address(out_pdata, ctypes.addressof(dims))


@_entry
def MXNDArrayGetDType(handle: Any, out: Any) -> None:
    """The array's MXNet type flag (0 float32, 1 float64, ...)."""
    _target(out).value = DTYPE_NP_TO_MX[np.dtype(_ndarray(handle).dtype)]


# DLPack: the C structures torch hands out and takes (dlpack.h, version 0.x)
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLManagedTensor._fields_ = [
    ("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor)))]

# the capsule functions, with prototypes of our own (the shared ctypes.pythonapi ones
# are MXNet's to configure)
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_rename = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", ctypes.pythonapi))


@_entry
def MXNDArrayFromDLPack(dlpack: Any, out: Any) -> None:
    """An array over the memory of a ``DLManagedTensor*``; the array takes it over (its
    deleter is called when the array's memory is freed)."""
    address = _pointer(dlpack)
    if not address:
        raise MXNetError("MXNDArrayFromDLPack: the DLManagedTensor pointer is NULL")
    capsule = _capsule_new(address, b"dltensor", None)
    _give_ndarray(out, _nd.from_dlpack(capsule))


@_entry
def MXNDArrayToDLPack(handle: Any, out: Any) -> None:
    """A ``DLManagedTensor*`` sharing the array's memory; the caller owns it and gives
    it back with MXNDArrayCallDLPackDeleter (or to a consumer that does)."""
    capsule = _nd.to_dlpack_for_write(_ndarray(handle))
    address = _capsule_pointer(capsule, b"dltensor")
    _capsule_rename(capsule, b"used_dltensor")   # the capsule no longer deletes it
    _set_address(out, address)


@_entry
def MXNDArrayCallDLPackDeleter(dlpack: Any) -> None:
    """Call a ``DLManagedTensor*``'s deleter (releases what MXNDArrayToDLPack gave)."""
    address = _pointer(dlpack)
    if address:
        managed = _DLManagedTensor.from_address(address)
        if managed.deleter:
            managed.deleter(ctypes.cast(address, ctypes.POINTER(_DLManagedTensor)))


# ---------------------------------------------------------------------- Symbol
@_entry
def MXSymbolFree(handle: Any) -> None:
    """Release a handle the C API returned (the symbol lives on while others hold it)."""
    _sym._HANDLES.free(handle)


@_entry
def MXSymbolCopy(handle: Any, out: Any) -> None:
    _give_symbol(out, _symbol(handle).__copy__())


@_entry
def MXSymbolCreateFromJSON(json: Any, out: Any) -> None:
    _give_symbol(out, _sym.load_json(_str(json)))


@_entry
def MXSymbolSaveToJSON(handle: Any, out: Any) -> None:
    text = _keep("json", ctypes.create_string_buffer(_symbol(handle).tojson().encode()))
    _set_address(out, ctypes.addressof(text))


# ---------------------------------------------------------------------- partitioning
@_entry
def MXSetSubgraphPropertyOpNames(prop_name: Any, num_ops: Any, op_names: Any) -> None:
    """The operators backend ``prop_name`` groups when an executor is bound with
    ``MXNET_SUBGRAPH_BACKEND`` naming it."""
    _partition.set_op_names(_str(prop_name), _strs(num_ops, op_names), for_bind=True)


@_entry
def MXSetSubgraphPropertyOpNamesV2(prop_name: Any, num_ops: Any, op_names: Any) -> None:
    """The operators backend ``prop_name`` groups (its properties' ``op_names``), for
    ``optimize_for``, ``get_backend_symbol`` and ``hybridize(backend=...)``."""
    _partition.set_op_names(_str(prop_name), _strs(num_ops, op_names), for_bind=False)


@_entry
def MXRemoveSubgraphPropertyOpNames(prop_name: Any) -> None:
    _partition.remove_op_names(_str(prop_name), for_bind=True)


@_entry
def MXRemoveSubgraphPropertyOpNamesV2(prop_name: Any) -> None:
    _partition.remove_op_names(_str(prop_name), for_bind=False)


@_entry
def MXBuildSubgraphByOpNames(handle: Any, prop_name: Any, num_ops: Any, op_names: Any,
                             out: Any) -> None:
    """The symbol partitioned by backend ``prop_name`` grouping the operators named
    (a copy of the symbol when none are)."""
    sym = _symbol(handle)
    names = _strs(num_ops, op_names)
    if not names:
        _give_symbol(out, sym.__copy__())
        return
    heads = _partition.partition(sym._outputs, _str(prop_name), op_names=names)
    _give_symbol(out, _sym.Symbol(heads))


@_entry
def MXGenBackendSubgraph(handle: Any, backend: Any, out: Any) -> None:
    """``Symbol.get_backend_symbol``: the symbol partitioned by ``backend``."""
    _give_symbol(out, _symbol(handle).get_backend_symbol(_str(backend)))

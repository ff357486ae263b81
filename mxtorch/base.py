"""Errors, dtype tables and attribute-string helpers shared by every layer.

NumPy and the standard library only: this module never imports torch.
"""
from __future__ import annotations

import ast
import ctypes
import os
import platform
import weakref
from typing import Any

import numpy as np

__all__ = ["MXNetError", "NotSupportedForSparseNDArray", "NotImplementedForSymbol",
           "string_types", "numeric_types", "integer_types", "mx_real_t", "dtype_np",
           "dtype_name", "DTYPE_NP_TO_MX", "DTYPE_MX_TO_NP", "attr_to_str", "parse_attr_value",
           "py_str", "data_dir", "data_dir_default", "register_error", "error_types",
           "MXCallbackList", "classproperty", "with_metaclass", "check_call", "c_str",
           "c_str_array", "c_array", "c_array_buf", "c_handle_array", "ctypes2buffer",
           "ctypes2numpy_shared", "build_param_doc", "add_fileline_to_docstring",
           "mx_int", "mx_uint", "mx_float", "mx_float_p", "NDArrayHandle", "FunctionHandle",
           "OpHandle", "CachedOpHandle", "SymbolHandle", "ExecutorHandle",
           "DataIterCreatorHandle", "DataIterHandle", "KVStoreHandle", "RecordIOHandle",
           "RtcHandle", "CudaModuleHandle", "CudaKernelHandle", "ProfileHandle",
           "DLPackHandle", "HandleTable", "get_last_ffi_error", "c2pyerror"]

# MXNet: names of C++ error types mapped to the Python classes raised for them
# (``mxnet.error.register``); filled by register_error.
error_types: dict[str, type] = {}


def register_error(func_name: Any = None, cls: type | None = None):
    """Register an error class under a name (``mx.error.register``).

    Used as ``@register_error`` on a class, ``register_error("Name", cls)`` or
    ``@register_error("Name")``.
    """
    if callable(func_name):
        cls = func_name
        func_name = cls.__name__

    def register(mycls: type) -> type:
        name = func_name if isinstance(func_name, str) else mycls.__name__
        error_types[name] = mycls
        return mycls
    if cls is None:
        return register
    return register(cls)


class MXNetError(RuntimeError):
    """Error raised by mxtorch where MXNet raises ``mxnet.base.MXNetError``."""


class NotSupportedForSparseNDArray(MXNetError):
    """Raised for operations that sparse arrays do not support."""

    def __init__(self, function: Any, alias: Any = None, *args: Any):
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args_ = args
        super().__init__(self.function)

    def __str__(self) -> str:
        msg = f"Function {self.function}"
        if self.alias:
            msg += f" (namely operator \"{self.alias}\")"
        return msg + " is not supported for SparseNDArray and only available in NDArray."


class NotImplementedForSymbol(MXNetError):
    """An NDArray operation that Symbol does not support (``+=`` on a Symbol, ...)."""

    def __init__(self, function: Any, alias: Any = None, *args: Any):
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args_ = [str(type(a)) for a in args]
        super().__init__(self.function)

    def __str__(self) -> str:
        msg = f"Function {self.function}"
        if self.alias:
            msg += f" (namely operator \"{self.alias}\")"
        if self.args_:
            msg += " with arguments (" + ", ".join(self.args_) + ")"
        return msg + " is not implemented for Symbol and only available in NDArray."


string_types = (str,)
numeric_types = (float, int, np.generic)
integer_types = (int, np.integer)
mx_real_t = np.float32


def py_str(x: Any) -> str:
    """A C string (bytes) as a Python string; strings pass through."""
    return x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else str(x)


def data_dir_default() -> str:
    """The default folder for downloaded data: ``%APPDATA%/mxnet`` or ``~/.mxnet``."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """The folder for downloaded data and models: ``$MXNET_HOME``, else the default."""
    return os.getenv("MXNET_HOME", data_dir_default())


class MXCallbackList(ctypes.Structure):
    """A C-compatible list of callbacks, as MXNet's custom-operator interface lays it out."""

    _fields_ = [("num_callbacks", ctypes.c_int),
                ("callbacks", ctypes.POINTER(ctypes.CFUNCTYPE(ctypes.c_int))),
                ("contexts", ctypes.POINTER(ctypes.c_void_p))]


class _MXClassPropertyDescriptor:
    def __init__(self, fget, fset=None):
        self.fget = fget
        self.fset = fset

    def __get__(self, obj, clas=None):
        if clas is None:
            clas = type(obj)
        return self.fget.__get__(obj, clas)()

    def __set__(self, obj, value):
        if not self.fset:
            raise MXNetError("cannot use the setter: %s to set attribute" % obj.__name__)
        if isinstance(obj, type):
            return self.fset.__get__(obj, obj)(value)
        return self.fset.__get__(obj, type(obj))(value)

    def setter(self, func):
        if not isinstance(func, (classmethod, staticmethod)):
            func = classmethod(func)
        self.fset = func
        return self


class _MXClassPropertyMetaClass(type):
    def __setattr__(cls, key, value):
        obj = cls.__dict__.get(key)
        if obj and isinstance(obj, _MXClassPropertyDescriptor):
            return obj.__set__(cls, value)
        return super().__setattr__(key, value)


def with_metaclass(meta: type, *bases: type) -> type:
    """Create a base class with a metaclass (the ``six`` idiom MXNet uses)."""
    class Metaclass(type):
        def __new__(mcs, name, this_bases, d):
            return meta(name, bases, d)

        @classmethod
        def __prepare__(cls, name, this_bases):
            return meta.__prepare__(name, bases)
    return type.__new__(Metaclass, "temporary_class", (), {})


def classproperty(func):
    """A read-only (or, with ``.setter``, writable) property of the class itself."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _MXClassPropertyDescriptor(func)


# ---------------------------------------------------------------- ctypes conventions
# MXNet's C API types. mxtorch has no C library of its own; these are the plain ctypes
# types and converters that MXNet code uses around handles and buffers.
mx_int = ctypes.c_int
mx_uint = ctypes.c_uint
mx_float = ctypes.c_float
mx_float_p = ctypes.POINTER(mx_float)
NDArrayHandle = FunctionHandle = OpHandle = CachedOpHandle = ctypes.c_void_p
SymbolHandle = ExecutorHandle = DataIterCreatorHandle = DataIterHandle = ctypes.c_void_p
KVStoreHandle = RecordIOHandle = RtcHandle = CudaModuleHandle = ctypes.c_void_p
CudaKernelHandle = ProfileHandle = DLPackHandle = ctypes.c_void_p


# MXNet: importing mxnet.base sets these restypes for everyone (code written for MXNet
# reads capsule pointers through ctypes.pythonapi without setting them)
ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p


def __getattr__(name: str) -> Any:
    """``_LIB``: MXNet's C library, as the entry points of :mod:`mxtorch.capi` (loaded
    when first asked for, so this module stays below the layers it calls)."""
    if name == "_LIB":
        from .capi import LIB
        return LIB
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def c2pyerror(err_msg: str) -> tuple[str, str | None]:
    """Split a C API error message into the Python message and the error type its first
    line names (``'ValueError: ...'``); the stack trace lines are moved up front."""
    lines = err_msg.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    first = lines[0] if lines else ""
    err_type = first[:first.find(":")] if ":" in first else None
    # MXNet: a type name is made of letters, digits, '_' and '.' (it may be empty)
    if err_type is not None and not all(c.isalnum() or c in "_." for c in err_type):
        err_type = None
    trace, message, in_trace = [], [], False
    for line in lines:
        if in_trace and line.startswith("  "):
            trace.append(line)
            continue
        in_trace = line.startswith("Stack trace")
        if not in_trace:
            message.append(line)
    out = ""
    if trace:
        out = "Traceback (most recent call last):\n" + "\n".join(reversed(trace)) + "\n"
    return out + "\n".join(message), err_type


def get_last_ffi_error() -> Exception:
    """The exception for the last failed C API call of this thread (``MXGetLastError``),
    of the class registered for the type its message names (else MXNetError)."""
    message, err_type = c2pyerror(py_str(__getattr__("_LIB").MXGetLastError() or b""))
    if err_type is not None and err_type.startswith("mxnet.error."):
        err_type = err_type[len("mxnet.error."):]
    cls = error_types.get(err_type, MXNetError)
    try:
        return cls(message)
    except TypeError:   # a class whose constructor wants more than a message
        return MXNetError(message)


def check_call(ret: int) -> None:
    """Raise the error of the last C API call when it returned a non-zero status."""
    if ret != 0:
        err = get_last_ffi_error()
        if not str(err):
            err = MXNetError(f"C API call failed with status {ret}")
        raise err


def c_str(string: str) -> ctypes.c_char_p:
    """A Python string as a C string (UTF-8)."""
    return ctypes.c_char_p(string.encode("utf-8"))


def c_str_array(strings: Any) -> Any:
    """A list of Python strings as a C array of C strings."""
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [s.encode("utf-8") for s in strings]
    return arr


def c_array(ctype: Any, values: Any) -> Any:
    """A C array of ``ctype`` holding ``values``."""
    out = (ctype * len(values))()
    out[:] = values
    return out


def c_array_buf(ctype: Any, buf: Any) -> Any:
    """A C array of ``ctype`` over the memory of a buffer (``array.array``, bytes...)."""
    return (ctype * len(buf)).from_buffer(buf)


def c_handle_array(objs: Any) -> Any:
    """A C array of the handles of the objects (their ``_as_parameter_`` where they have
    one, as ctypes passes them, else their ``handle``)."""
    arr = (ctypes.c_void_p * len(objs))()
    arr[:] = [getattr(o, "_as_parameter_", None) or o.handle for o in objs]
    return arr


class HandleTable:
    """The live objects behind the C handles handed out for them.

    MXNet code moves arrays and symbols through ctypes as opaque handles
    (``NDArray(handle)``, ``Symbol(handle)``, ``ctypes.cast(arr, NDArrayHandle)``); here a
    handle is the address (``id``) of a live object. :meth:`lend` hands one out for an
    object its owner keeps alive; :meth:`give` one the receiver owns (a C API result): it
    is kept until a wrapper :meth:`adopt` s it (then as long as that wrapper lives) or
    :meth:`free` lets it go, as MXNet's ``MXNDArrayFree``/``MXSymbolFree`` do.
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._owned: dict[int, Any] = {}

    def lend(self, obj: Any) -> int:
        """The handle of ``obj``, valid while ``obj`` lives."""
        self._live[id(obj)] = obj
        return id(obj)

    def give(self, obj: Any) -> int:
        """The handle of ``obj``, owned by the receiver (kept alive until adopted or
        freed)."""
        self._owned[id(obj)] = obj
        return self.lend(obj)

    def get(self, handle: Any) -> Any:
        """The object behind ``handle`` (a ``c_void_p``, an int or an object passed as
        its ``_as_parameter_``); MXNetError when none is alive there."""
        address = handle_address(handle)
        obj = self._live.get(address) if address else None
        if obj is None:
            raise MXNetError(f"{self.kind}: {handle!r} is not the handle of a live "
                             f"{self.kind}")
        return obj

    def adopt(self, handle: Any, wrapper: Any) -> Any:
        """The object behind ``handle``; an owned one is kept as long as ``wrapper``."""
        obj = self.get(handle)
        address = id(obj)
        if address in self._owned:
            weakref.finalize(wrapper, self._owned.pop, address, None)
        return obj

    def free(self, handle: Any) -> None:
        """Let an owned handle go (the object lives on while others hold it)."""
        self._owned.pop(handle_address(handle), None)


def handle_address(handle: Any) -> int | None:
    """The address a handle holds: a ``c_void_p``'s value, an int, or the value of an
    object's ``_as_parameter_``."""
    param = getattr(handle, "_as_parameter_", None)
    if param is not None:
        handle = param
    if isinstance(handle, ctypes.c_void_p):
        return handle.value
    if isinstance(handle, int) and not isinstance(handle, bool):
        return handle
    return None


def ctypes2buffer(cptr: Any, length: int) -> bytearray:
    """Copy ``length`` bytes from a C char pointer into a bytearray."""
    if not isinstance(cptr, ctypes.POINTER(ctypes.c_char)):
        raise TypeError("expected char pointer")
    res = bytearray(length)
    rptr = (ctypes.c_char * length).from_buffer(res)
    if not ctypes.memmove(rptr, cptr, length):
        raise RuntimeError("memmove failed")
    return res


def ctypes2numpy_shared(cptr: Any, shape: tuple) -> np.ndarray:
    """A NumPy float32 array sharing memory with a C float pointer."""
    if not isinstance(cptr, ctypes.POINTER(mx_float)):
        raise RuntimeError("expected float pointer")
    size = 1
    for s in shape:
        size *= s
    dbuffer = (mx_float * size).from_address(ctypes.addressof(cptr.contents))
    return np.frombuffer(dbuffer, dtype=np.float32).reshape(shape)


def build_param_doc(arg_names: Any, arg_types: Any, arg_descs: Any,
                    remove_dup: bool = True) -> str:
    """The numpy-style ``Parameters`` section of an operator's docstring."""
    param_keys = set()
    param_str = []
    for key, type_info, desc in zip(arg_names, arg_types, arg_descs):
        if key in param_keys and remove_dup:
            continue
        if key == "num_args":
            continue
        param_keys.add(key)
        ret = "%s : %s" % (key, type_info)
        if len(desc) != 0:
            ret += "\n    " + desc
        param_str.append(ret)
    return "Parameters\n----------\n%s\n" % ("\n".join(param_str))


def add_fileline_to_docstring(module: Any, incursive: bool = True) -> None:
    """Append ``From:file:line`` to the docstrings of a module's functions and classes."""
    import inspect

    def _add_fileline(obj):
        if obj.__doc__ is None or "From:" in obj.__doc__:
            return
        fname = inspect.getsourcefile(obj)
        if fname is None:
            return
        try:
            line = inspect.getsourcelines(obj)[-1]
        except IOError:
            return
        obj.__doc__ += "\n\nFrom:%s:%d" % (fname, line)

    if isinstance(module, str):
        import sys
        module = sys.modules[module]
    for _, obj in inspect.getmembers(module):
        if inspect.isbuiltin(obj):
            continue
        if inspect.isfunction(obj):
            _add_fileline(obj)
        if inspect.ismethod(obj):
            _add_fileline(obj.__func__)
        if inspect.isclass(obj) and incursive:
            add_fileline_to_docstring(obj, False)


def _as_list(obj: Any) -> list:
    """A list as is, anything else as a one-element list (tuples too, as in MXNet)."""
    if isinstance(obj, list):
        return obj
    return [obj]


class _NullType:
    """Placeholder for arguments not given."""

    def __repr__(self) -> str:
        return "_Null"


_Null = _NullType()

# MXNet's type flags (mshadow's enum), as stored in files and `__dtype__` attributes.
_BFLOAT16 = np.dtype([("bfloat16", np.uint16)])
DTYPE_MX_TO_NP: dict[int, np.dtype] = {
    0: np.dtype(np.float32), 1: np.dtype(np.float64), 2: np.dtype(np.float16),
    3: np.dtype(np.uint8), 4: np.dtype(np.int32), 5: np.dtype(np.int8),
    6: np.dtype(np.int64), 7: np.dtype(np.bool_), 8: np.dtype(np.int16),
    9: np.dtype(np.uint16), 10: np.dtype(np.uint32), 11: np.dtype(np.uint64),
    12: _BFLOAT16,
}
DTYPE_NP_TO_MX: dict[np.dtype, int] = {v: k for k, v in DTYPE_MX_TO_NP.items()}

_DTYPE_ALIASES = {"bfloat16": _BFLOAT16, "bool": np.dtype(np.bool_)}


def dtype_np(dtype: Any) -> np.dtype:
    """Normalize a dtype given as a NumPy type, a name, a type flag or a torch dtype."""
    if dtype is None:
        return np.dtype(np.float32)
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, str) and dtype in _DTYPE_ALIASES:
        return _DTYPE_ALIASES[dtype]
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        if int(dtype) not in DTYPE_MX_TO_NP:
            raise MXNetError(f"unknown MXNet type flag {dtype}")
        return DTYPE_MX_TO_NP[int(dtype)]
    torch_name = getattr(dtype, "is_floating_point", None)
    if torch_name is not None:  # a torch.dtype, compared by name to keep torch out of here
        name = str(dtype).replace("torch.", "")
        return _DTYPE_ALIASES.get(name) or np.dtype(name)
    try:
        return np.dtype(dtype)
    except TypeError as err:
        raise MXNetError(f"unknown dtype {dtype!r}") from err


def dtype_name(dtype: Any) -> str:
    """The name MXNet prints and stores for a dtype ('float32', 'bfloat16', ...)."""
    dt = dtype_np(dtype)
    if dt == _BFLOAT16:
        return "bfloat16"
    return dt.name


def attr_to_str(value: Any) -> str:
    """Render an attribute value the way MXNet's Python front end does (``str(value)``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return dtype_name(value)
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


def parse_attr_value(text: str) -> Any:
    """Best-effort parse of an attribute string into a Python literal (tuples, numbers, None)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text

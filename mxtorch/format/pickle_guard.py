"""Guards of the ``.states`` unpickler: what a pickle may make the loader allocate.

A whitelist of globals (``pickle_safe``) stops code from running, but not a few bytes
from asking for gigabytes: ``bytearray(2**30)``, a memo index of 2**32, a length
prefix beyond the data, ``numpy.ndarray((2**40,))``. This module refuses those
*before* anything is allocated:

* :func:`scan_opcodes` walks the opcodes (``pickletools.genops``) without building any
  object, and refuses malformed opcodes, declared lengths beyond the data and memo
  indices beyond the number of opcodes (the C unpickler sizes its memo table by the
  largest index it sees).
* :class:`Budget` caps what the whitelisted constructors may allocate in proportion to
  the file size; each constructor also checks that its arguments are what a real
  ``.states`` file carries (``bytearray(bytes)``, ``list(list)``, never
  ``bytearray(int)``).
* NumPy dtypes and arrays go through stand-ins whose ``__setstate__`` accepts only plain
  (non-object, unstructured) dtypes and data that is exactly as long as the shape says.
"""
from __future__ import annotations

import builtins
import collections
import pickletools
from typing import Any, Callable

import numpy as np

from ..base import MXNetError

__all__ = ["scan_opcodes", "Budget", "guarded_builtins", "guarded_numpy", "GuardedArray",
           "Refused"]

# bytes a file may make the whitelisted constructors allocate, per byte of the file
# (a real .states allocates about 1x: one bytearray copy of each array record)
BUDGET_PER_BYTE = 8
BUDGET_BASE = 1 << 20
_MEMO_OPS = frozenset({"PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET", "LONG_BINGET"})
_PTR = 8  # bytes per element of a list/tuple
_SET_SLOT = 64  # bytes per element of a set/dict, rounded up


class Refused(MXNetError):
    """The pickle asks for something a ``.states`` file never holds."""


def scan_opcodes(blob: bytes, source: str) -> int:
    """Walk the opcodes of ``blob`` without unpickling; return how many there are.

    Raises
    ------
    Refused
        On a malformed opcode, a length beyond the data, or a memo index beyond the
        number of opcodes.
    """
    count = 0
    largest_index = -1
    try:
        for op, arg, pos in pickletools.genops(blob):
            count += 1
            if op.name in _MEMO_OPS:
                largest_index = max(largest_index, arg)
            elif op.name == "FRAME" and arg > len(blob) - pos:
                raise Refused(f"{source}: frame of {arg} bytes at offset {pos} is longer "
                              f"than the {len(blob) - pos} bytes left in the file")
    except Refused:
        raise
    except Exception as err:  # noqa: BLE001 - any malformed opcode stream
        raise Refused(f"{source}: malformed pickle ({type(err).__name__}: {err})") from None
    if largest_index >= count:
        raise Refused(f"{source}: memo index {largest_index} is beyond the {count} "
                      "opcodes of the file")
    return count


class Budget:
    """What the constructors called by one pickle may still allocate, in bytes."""

    def __init__(self, blob_size: int, source: str) -> None:
        self.left = BUDGET_PER_BYTE * blob_size + BUDGET_BASE
        self.source = source

    def charge(self, nbytes: int, what: str) -> None:
        """Account for ``nbytes`` about to be allocated by ``what``; refuse past the cap."""
        if nbytes > self.left:
            raise Refused(f"{self.source}: {what} would allocate {nbytes} bytes, more than "
                          "a .states file of this size can hold")
        self.left -= nbytes

    def refuse(self, what: str, args: tuple) -> Refused:
        """The error for a constructor called with arguments no ``.states`` holds."""
        kinds = ", ".join(type(a).__name__ for a in args)
        return Refused(f"{self.source}: refusing {what}({kinds}): not an argument a "
                       ".states file holds")


_SEQUENCES = (list, tuple, set, frozenset)


def _copying(budget: Budget, ctor: Callable, name: str, per_item: int) -> Callable:
    """``ctor()`` or ``ctor(container)`` with the copy charged to ``budget``."""
    def build(*args):
        if not args:
            return ctor()
        if len(args) != 1 or not isinstance(args[0], _SEQUENCES + (dict,)):
            raise budget.refuse(name, args)
        budget.charge(per_item * len(args[0]) + 64, name)
        return ctor(args[0])
    return build


def _byte_string(budget: Budget, ctor: type) -> Callable:
    """``bytes``/``bytearray`` of bytes, or of a latin-1 str (protocol 2): never of an int."""
    name = ctor.__name__

    def build(*args):
        if not args:
            return ctor()
        if len(args) == 1 and isinstance(args[0], (bytes, bytearray)):
            src = args[0]
        elif (len(args) == 2 and isinstance(args[0], str)
              and args[1] in ("latin-1", "latin1", "iso8859-1")):
            src = args[0].encode("latin-1")  # raises on non-latin-1: one char, one byte
        else:
            raise budget.refuse(name, args)
        budget.charge(len(src), name)
        return ctor(src)
    return build


def _plain(budget: Budget, ctor: Callable, name: str, kinds: tuple, most: int) -> Callable:
    """``ctor(*args)`` for at most ``most`` arguments of ``kinds`` (no allocation)."""
    def build(*args):
        if len(args) > most or not all(isinstance(a, kinds) for a in args):
            raise budget.refuse(name, args)
        return ctor(*args)
    return build


def guarded_builtins(budget: Budget) -> dict[str, Callable]:
    """The builtins a ``.states`` pickle may call, each checking its arguments."""
    number = (int, float)
    return {
        "list": _copying(budget, list, "list", _PTR),
        "tuple": _copying(budget, tuple, "tuple", _PTR),
        "set": _copying(budget, set, "set", _SET_SLOT),
        "frozenset": _copying(budget, frozenset, "frozenset", _SET_SLOT),
        "dict": _copying(budget, dict, "dict", _SET_SLOT),
        "OrderedDict": _copying(budget, collections.OrderedDict, "OrderedDict", 2 * _SET_SLOT),
        "bytes": _byte_string(budget, bytes),
        "bytearray": _byte_string(budget, bytearray),
        "slice": _plain(budget, builtins.slice, "slice", number + (type(None),), 3),
        "complex": _plain(budget, builtins.complex, "complex", number, 2),
        "object": _plain(budget, builtins.object, "object", (), 0),
    }


# ---------------------------------------------------------------------------- NumPy
class _DTypeSpec:
    """Stands for ``numpy.dtype(spec)`` until a scalar or array resolves it."""

    def __init__(self, spec: str) -> None:
        self.dtype = np.dtype(spec)
        if self.dtype.hasobject or self.dtype.names is not None or self.dtype.subdtype:
            raise Refused(f"numpy dtype {spec!r} is not allowed in a .states file")

    def __setstate__(self, state: Any) -> None:
        # (version, byte order, subarray, names, fields, elsize, alignment, flags)
        if (not isinstance(state, tuple) or len(state) not in (8, 9)
                or state[1] not in ("<", ">", "|", "=")
                or any(s is not None for s in state[2:5])):
            raise Refused("only plain numpy dtypes are allowed in a .states file")
        if state[1] in "<>":
            self.dtype = self.dtype.newbyteorder(state[1])


def _dtype_of(obj: Any) -> np.dtype:
    if isinstance(obj, _DTypeSpec):
        return obj.dtype
    if isinstance(obj, (str, bytes)):
        return _DTypeSpec(obj.decode("latin-1") if isinstance(obj, bytes) else obj).dtype
    raise Refused(f"a numpy dtype was expected, got {type(obj).__name__}")


def _shape_of(shape: Any) -> tuple[int, ...]:
    if (not isinstance(shape, tuple) or len(shape) > 32
            or not all(isinstance(d, int) and d >= 0 for d in shape)):
        raise Refused(f"invalid numpy shape {shape!r} in a .states file")
    return shape


class GuardedArray(np.ndarray):
    """A NumPy array read from a ``.states`` file; its state is checked before it is set."""

    def __setstate__(self, state: Any) -> None:
        if not isinstance(state, tuple) or len(state) != 5:
            raise Refused("a pickled numpy array must have a 5-item state")
        version, shape, dtype, fortran, data = state
        shape, dtype = _shape_of(shape), _dtype_of(dtype)
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if not isinstance(data, (bytes, bytearray)) or len(data) != nbytes:
            raise Refused(f"pickled numpy array of shape {shape} and dtype {dtype} needs "
                          f"{nbytes} bytes of data")
        super().__setstate__((version, shape, dtype, bool(fortran), data))

    def __reduce__(self):
        return np.asarray(self).__reduce__()


class _NDArrayGlobal:
    """What the global ``numpy.ndarray`` stands for: only ``_reconstruct``'s first argument."""

    def __call__(self, *args, **kwargs):
        raise Refused("refusing numpy.ndarray(...): arrays in a .states file are rebuilt "
                      "by numpy's _reconstruct only")


_NDARRAY = _NDArrayGlobal()


def guarded_numpy(budget: Budget) -> dict[str, Any]:
    """The NumPy internals array/scalar pickles reference, each checking its arguments."""
    def dtype(spec, align=False, copy=False):
        if not isinstance(spec, str) or len(spec) > 16:
            raise budget.refuse("numpy.dtype", (spec,))
        return _DTypeSpec(spec)

    def reconstruct(subtype, shape, typecode):
        if subtype is not _NDARRAY:
            raise budget.refuse("numpy _reconstruct", (subtype,))
        shape, dt = _shape_of(shape), _dtype_of(typecode)
        budget.charge(int(np.prod(shape, dtype=object)) * dt.itemsize, "numpy _reconstruct")
        return np.ndarray.__new__(GuardedArray, shape, dt)

    def scalar(dt, data=None):
        dt = _dtype_of(dt)
        if not isinstance(data, bytes) or len(data) != dt.itemsize:
            raise Refused(f"pickled numpy scalar of dtype {dt} needs {dt.itemsize} bytes")
        return np.frombuffer(data, dt)[0]

    def frombuffer(buf, dt, shape, order):
        shape, dt = _shape_of(shape), _dtype_of(dt)
        raw = bytes(memoryview(buf)) if not isinstance(buf, (bytes, bytearray)) else buf
        if len(raw) != int(np.prod(shape, dtype=object)) * dt.itemsize:
            raise Refused(f"pickled numpy buffer does not match shape {shape}, dtype {dt}")
        return np.frombuffer(raw, dt).reshape(shape, order="F" if order == "F" else "C")

    return {"dtype": dtype, "_reconstruct": reconstruct, "scalar": scalar,
            "_frombuffer": frombuffer, "ndarray": _NDARRAY}

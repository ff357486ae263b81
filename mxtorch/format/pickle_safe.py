"""Optimizer ``.states`` files: a restricted unpickler and an MXNet-compatible pickler.

A ``.states`` file (``Module.save_optimizer_states``, ``gluon.Trainer.save_states``) is a
Python pickle that references ``mxnet.ndarray.ndarray.NDArray`` (state
``{'handle': bytearray(<one array record>)}``) and, for a Trainer, the optimizer class
``mxnet.optimizer.optimizer.<Name>`` (``shared/formats/MXNET_FORMATS.md`` section 3.5).

:func:`load_states` never runs code from the file: its ``find_class`` admits only the
MXNet NDArray classes (rebuilt as mxtorch NDArrays), MXNet optimizer and lr-scheduler
classes (rebuilt as inert :class:`OptimizerState` / :class:`LRSchedulerState` stubs that
keep the pickled attribute dict), plain containers and NumPy arrays/scalars. Every other
global is refused with :class:`~mxtorch.base.MXNetError`.

:func:`dump_states` writes pickles that real MXNet 1.9.1 reads with ``pickle.loads``:
NDArrays are emitted as the global ``mxnet.ndarray.ndarray.NDArray`` called with
``None`` and set from ``{'handle': bytearray(V2 record)}``, exactly as MXNet does.
"""
from __future__ import annotations

import codecs
import copyreg
import io
import pickle
from typing import Any

import numpy as np

from ..base import MXNetError
from .params import dump_record
from .pickle_guard import (Budget, GuardedArray, Refused, guarded_builtins, guarded_numpy,
                           scan_opcodes)

__all__ = ["load_states", "dump_states", "OptimizerState", "LRSchedulerState"]

_NDARRAY_CLASSES = {
    ("mxnet.ndarray.ndarray", "NDArray"), ("mxnet.ndarray", "NDArray"),
    ("mxnet.ndarray.sparse", "RowSparseNDArray"), ("mxnet.ndarray.sparse", "CSRNDArray"),
    ("mxnet.numpy.multiarray", "ndarray"), ("mxtorch.ndarray.ndarray", "NDArray"),
}
_OPTIMIZER_MODULES = ("mxnet.optimizer.optimizer", "mxnet.optimizer", "mxtorch.optimizer",
                      "mxtorch.optimizer.optimizer")
_SCHEDULER_MODULES = ("mxnet.lr_scheduler", "mxtorch.lr_scheduler")
_NUMPY_CORE = ("numpy.core.multiarray", "numpy._core.multiarray")
_NUMPY_NUMERIC = ("numpy.core.numeric", "numpy._core.numeric")


class _PickledObjectStub:
    """Base of the inert stand-ins for pickled MXNet Python objects."""

    class_name: str = ""
    module: str = ""

    def __init__(self, *args: Any) -> None:
        self.state: dict = {}

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple) and len(state) == 2:  # (dict, slots) form
            state = {**(state[0] or {}), **(state[1] or {})}
        if not isinstance(state, dict):
            raise MXNetError(f"pickled {self.class_name} state must be a dict")
        self.state = dict(state)

    def __getattr__(self, name: str) -> Any:
        state = self.__dict__.get("state", {})
        if name in state:
            return state[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"<{type(self).__bases__[0].__name__} {self.module}.{self.class_name}>"


class OptimizerState(_PickledObjectStub):
    """A pickled MXNet optimizer (``mxnet.optimizer.optimizer.<Name>``), kept inert.

    Attributes
    ----------
    class_name : str
        The MXNet class name (``'Adam'``, ``'SGD'``, ...).
    state : dict
        The pickled attribute dict (``lr``, ``wd``, ``num_update``, ``beta1``, ...).
        Attributes are also readable directly (``stub.lr``).
    """

    module = "mxnet.optimizer.optimizer"


class LRSchedulerState(_PickledObjectStub):
    """A pickled MXNet learning-rate scheduler (``mxnet.lr_scheduler.<Name>``), kept inert."""

    module = "mxnet.lr_scheduler"


_STUB_CACHE: dict[tuple[type, str], type] = {}


def _stub_class(base: type, name: str) -> type:
    """The (cached) stub subclass standing for the MXNet class ``name``."""
    key = (base, name)
    if key not in _STUB_CACHE:
        _STUB_CACHE[key] = type(name, (base,), {"class_name": name, "__module__": __name__})
    return _STUB_CACHE[key]


def _new_ndarray(*args: Any):
    """``NDArray(None)`` as a pickle calls it; BUILD then sets the record."""
    from ..ndarray.ndarray import NDArray
    if args not in ((), (None,)):
        raise MXNetError("a pickled NDArray must be constructed with None")
    return NDArray(None)


def _unpickle_record(record: Any):
    """mxtorch's own NDArray pickles: rebuild from the record bytes."""
    from ..ndarray.ndarray import _unpickle_ndarray
    if not isinstance(record, (bytes, bytearray)):
        raise MXNetError("a pickled NDArray record must be bytes")
    return _unpickle_ndarray(bytes(record))


def _latin1_encode(text: Any, encoding: str = "latin1") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for bytes; latin-1 only."""
    if codecs.lookup(encoding).name != "iso8859-1" or not isinstance(text, str):
        raise MXNetError(f"_codecs.encode with encoding {encoding!r} is not allowed")
    return text.encode("latin1")


def _safe_reconstructor(cls: type, base: type, state: Any):
    """``copyreg._reconstructor`` (protocol 0/1 objects), for the stub classes only."""
    if base is not object or not issubclass(cls, _PickledObjectStub):
        raise MXNetError(f"copyreg._reconstructor of {cls!r} is not allowed")
    return object.__new__(cls)


def _numpy_attr(module: str, name: str, table: dict) -> Any:
    """The few NumPy internals array and scalar pickles reference (guarded stand-ins)."""
    if module in _NUMPY_CORE and name in ("_reconstruct", "scalar"):
        return table[name]
    if module in _NUMPY_NUMERIC and name == "_frombuffer":
        return table[name]
    if module == "numpy" and name in ("ndarray", "dtype"):
        return table[name]
    return None


def _allowed_global(module: str, name: str, builtin: dict, numpy: dict) -> Any:
    """The object a whitelisted global maps to, or None when the global is refused.

    ``builtin`` and ``numpy`` are the argument-checking constructors of one load
    (:func:`~mxtorch.format.pickle_guard.guarded_builtins`, ``guarded_numpy``).
    """
    if (module, name) in _NDARRAY_CLASSES:
        return _new_ndarray
    if (module, name) == ("mxtorch.ndarray.ndarray", "_unpickle_ndarray"):
        return _unpickle_record
    if module in ("builtins", "__builtin__"):
        return builtin.get(name) if name != "OrderedDict" else None
    if (module, name) == ("collections", "OrderedDict"):
        return builtin["OrderedDict"]
    if (module, name) == ("_codecs", "encode"):
        return _latin1_encode
    if (module, name) in (("copyreg", "_reconstructor"), ("copy_reg", "_reconstructor")):
        return _safe_reconstructor
    if module.startswith("numpy"):
        return _numpy_attr(module, name, numpy)
    if name.isidentifier() and not name.startswith("_"):
        if module in _OPTIMIZER_MODULES:
            return _stub_class(OptimizerState, name)
        if module in _SCHEDULER_MODULES:
            return _stub_class(LRSchedulerState, name)
    return None


class _SafeUnpickler(pickle.Unpickler):
    """An unpickler whose ``find_class`` admits only the whitelist above."""

    def __init__(self, file: io.BytesIO, source: str, size: int) -> None:
        super().__init__(file)
        self.source = source
        budget = Budget(size, source)
        self._builtins = guarded_builtins(budget)
        self._numpy = guarded_numpy(budget)

    def find_class(self, module: str, name: str) -> Any:
        obj = _allowed_global(module, name, self._builtins, self._numpy)
        if obj is None:
            raise Refused(f"{self.source}: refusing to load global '{module}.{name}' from "
                           "the pickle (only MXNet NDArrays, optimizer states, containers "
                           "and NumPy arrays are allowed in a .states file)")
        return obj

    def persistent_load(self, pid: Any) -> Any:
        raise Refused(f"{self.source}: persistent ids are not allowed in a .states file")


def load_states(blob: bytes, source: str = "<buffer>") -> Any:
    """Unpickle an optimizer ``.states`` blob without running code from it.

    Parameters
    ----------
    blob : bytes
        The file content.
    source : str
        File name used in error messages.

    Returns
    -------
    object
        The pickled object: ``{index: state}`` for a Module file, ``(states, optimizer)``
        for a Trainer file. NDArrays come back as mxtorch NDArrays on ``cpu(0)``;
        optimizers as :class:`OptimizerState` stubs.

    Raises
    ------
    MXNetError
        If the pickle references a global outside the whitelist, or is malformed.
    """
    blob = bytes(blob)
    try:
        scan_opcodes(blob, source)  # refuses lengths and memo indices before allocating
        return _SafeUnpickler(io.BytesIO(blob), source, len(blob)).load()
    except Refused as err:
        raise MXNetError(str(err)) from None
    except MXNetError as err:
        raise MXNetError(f"{source}: invalid optimizer states: {err}") from err
    except Exception as err:  # any pickle failure becomes one clear error
        raise MXNetError(f"{source}: cannot read optimizer states "
                         f"({type(err).__name__}: {err})") from err


# ---------------------------------------------------------------------------- writing
class _MXNetNDArray:
    """Stands for the global ``mxnet.ndarray.ndarray.NDArray`` in written pickles."""


def _foreign_global(obj: Any) -> tuple[str, str] | None:
    """The (module, name) under which MXNet knows a class we write, if any."""
    if obj is _MXNetNDArray:
        return "mxnet.ndarray.ndarray", "NDArray"
    if isinstance(obj, type) and issubclass(obj, _PickledObjectStub) and obj.class_name:
        return obj.module, obj.class_name
    module = getattr(obj, "__module__", "") or ""
    name = getattr(obj, "__qualname__", None)
    if isinstance(obj, type) and name:
        if module.startswith("mxtorch.optimizer"):
            return "mxnet.optimizer.optimizer", name
        if module.startswith("mxtorch.lr_scheduler"):
            return "mxnet.lr_scheduler", name
    if module.startswith("numpy._core") and name:  # readable by NumPy 1.x (MXNet's)
        return module.replace("numpy._core", "numpy.core", 1), name
    return None


class _MXNetPickler(pickle._Pickler):  # type: ignore[name-defined]
    """A pickler that emits MXNet's global names for NDArrays and optimizers."""

    def reducer_override(self, obj: Any) -> Any:
        from ..ndarray.ndarray import NDArray
        if isinstance(obj, NDArray):
            record = dump_record(obj.asnumpy())
            return _MXNetNDArray, (None,), {"handle": bytearray(record)}
        if isinstance(obj, GuardedArray):  # written as the plain NumPy array it holds
            return np.asarray(obj).__reduce__()
        if isinstance(obj, _PickledObjectStub):
            return copyreg.__newobj__, (type(obj),), dict(obj.state)
        module = type(obj).__module__ or ""
        if module.startswith(("mxtorch.optimizer", "mxtorch.lr_scheduler")):
            return copyreg.__newobj__, (type(obj),), obj.__getstate__()
        return NotImplemented

    def save_global(self, obj: Any, name: str | None = None) -> None:
        foreign = _foreign_global(obj)
        if foreign is None:
            super().save_global(obj, name)
            return
        module, qualname = foreign
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode("utf-8"))
        self.memoize(obj)


def dump_states(obj: Any, protocol: int = 4) -> bytes:
    """Pickle optimizer states so that real MXNet 1.9.1 can ``pickle.loads`` them.

    Parameters
    ----------
    obj : object
        ``{index: state}`` or ``(states, optimizer)``, states being NDArrays, tuples of
        NDArrays or None.
    protocol : int, default 4
        Pickle protocol (MXNet 1.9.1 on Python 3.8+ writes 4).

    Returns
    -------
    bytes
    """
    buf = io.BytesIO()
    _MXNetPickler(buf, protocol=protocol).dump(obj)
    return buf.getvalue()

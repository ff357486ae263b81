"""NDArray: MXNet's mutable n-dimensional array over one ``torch.Tensor``.

Basic slicing, ``reshape`` and ``a[:] = b`` share memory, as in MXNet, so an executor's
argument array, a module's parameter and a kvstore buffer can be the same storage.
"""
from __future__ import annotations

import ctypes
import numbers
from typing import Sequence

import numpy as np
import torch

from .. import autograd as _ag
from ..base import DTYPE_NP_TO_MX, HandleTable, MXNetError, dtype_np
from ..context import Context, context_of_device, current_context
from ..ops import registry as _reg
from ..ops import failure as _failure
from ..ops import intgrad as _intgrad
from ..ops import tuning as _tuning
from ..ops.registry import OpDef as _OpDef
from ..ops.tensor_util import torch_dtype, torch_to_np_dtype, unshared
from .ordering import WRITES as _WRITES

__all__ = ["NDArray", "array", "empty", "invoke", "waitall", "from_numpy", "from_dlpack",
           "to_dlpack_for_read", "to_dlpack_for_write"]

# MXNet's storage-type ids and names, grad_req codes and dtype tables (by type object)
_STORAGE_TYPE_UNDEFINED = -1
_STORAGE_TYPE_DEFAULT = 0
_STORAGE_TYPE_ROW_SPARSE = 1
_STORAGE_TYPE_CSR = 2
_STORAGE_TYPE_STR_TO_ID = {"undefined": _STORAGE_TYPE_UNDEFINED,
                           "default": _STORAGE_TYPE_DEFAULT,
                           "row_sparse": _STORAGE_TYPE_ROW_SPARSE, "csr": _STORAGE_TYPE_CSR}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}
_GRAD_REQ_MAP = {"null": 0, "write": 1, "add": 3}
_DTYPE_NP_TO_MX = {None: -1, **{dt.type: flag for dt, flag in DTYPE_NP_TO_MX.items()
                                if dt.names is None}}
_DTYPE_MX_TO_NP = {-1: None, **{flag: dt.type for dt, flag in DTYPE_NP_TO_MX.items()
                                if dt.names is None}}
py_slice = slice   # MXNet's name for the builtin, which its ``slice`` operator shadows

_STATE = _ag._STATE
_note = _ag.note
_NO_ATTRS: dict = {}   # the keywords recorded for a call without any (read, never written)
_FailedTensor = _failure.FailedTensor
_int_involved = _intgrad.involved
_recorded_result = _tuning.recorded_result
_SHADOW = _intgrad.SHADOW
_grad_enabled = torch.is_grad_enabled
_set_grad_enabled = torch._C._set_grad_enabled


class _GradInfo:
    """Gradient buffer, grad_req and hook state of an array with an attached gradient."""

    __slots__ = ("grad", "req", "hook_tensor", "fresh")

    def __init__(self):
        self.grad = None
        self.req = "null"
        self.hook_tensor = None
        self.fresh = False


class NDArray:
    """An array on a device context, backed by a ``torch.Tensor``."""

    __slots__ = ("_t", "_ctx", "_ag", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, handle=None, ctx: Context | None = None, writable: bool = True):
        if handle is None:
            handle = torch.empty(0)
        elif not isinstance(handle, torch.Tensor):
            src = _HANDLES.adopt(handle, self)   # MXNet: the new array owns the handle
            handle, ctx = src._t, ctx if ctx is not None else src._ctx
        self._t = handle
        self._ctx = ctx if ctx is not None else context_of_device(handle.device)
        self._ag = None

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        """The array as a C handle, for MXNet code that casts what a monitor callback gets
        (``NDArray(ctypes.cast(arr, NDArrayHandle))`` gives the same array back)."""
        return ctypes.c_void_p(_HANDLES.lend(self))

    # ------------------------------------------------------------------ properties
    @property
    def handle(self) -> torch.Tensor:
        """The underlying torch tensor (MXNet exposes a C handle here)."""
        return self._t

    @property
    def shape(self) -> tuple:
        return tuple(self._t.shape)

    @property
    def ndim(self) -> int:
        return self._t.dim()

    @property
    def size(self) -> int:
        return self._t.numel()

    @property
    def dtype(self):
        """The NumPy scalar type (``numpy.float32``), as MXNet returns it."""
        dt = torch_to_np_dtype(self._t.dtype)
        return dt.type if dt.names is None else dt

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def stype(self) -> str:
        return "default"

    @property
    def grad(self):
        ag = self._ag
        return None if ag is None else ag.grad

    # Autograd bookkeeping lives in one optional record (most arrays never need it).
    def _ag_get(name, default):  # noqa: N805 - descriptor factory
        def get(self):
            ag = self._ag
            return default if ag is None else getattr(ag, name)

        def put(self, value):
            if self._ag is None:
                self._ag = _GradInfo()
            setattr(self._ag, name, value)
        return property(get, put)

    _grad = _ag_get("grad", None)
    _grad_req = _ag_get("req", "null")
    _hook_tensor = _ag_get("hook_tensor", None)
    _fresh_grad = _ag_get("fresh", False)
    del _ag_get

    @property
    def T(self):
        """A transposed copy (``mx.nd.transpose``); the array itself when ``ndim < 2``."""
        if self.ndim < 2:
            return self
        return invoke("transpose", [self], {})

    @property
    def writable(self) -> bool:
        return True

    # ------------------------------------------------------------------ conversion
    def asnumpy(self) -> np.ndarray:
        """Return a NumPy copy of the array."""
        t = self._t.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(np.uint16).copy().view(dtype_np("bfloat16"))
        return t.numpy().copy()

    def asscalar(self):
        """Return the value of a size-1 array as a NumPy scalar."""
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(-1)[0]

    def item(self):
        return self.asscalar().item()

    def astype(self, dtype, copy: bool = True) -> "NDArray":
        """Return a copy (or ``self`` when ``copy=False`` and the dtype matches)."""
        td = torch_dtype(dtype)
        if not copy and td == self._t.dtype:
            return self
        res = copied(self._t, dtype=td)
        if _STATE.recording:   # recorded as MXNet's Cast (copied() detaches outside)
            res = _settle(_ENTRIES.get("Cast") or _entry("Cast"), {"dtype": dtype},
                          (self._t,), res)
        return _wrap(res, self._ctx)

    def copy(self) -> "NDArray":
        res = copied(self._t)
        if _STATE.recording:   # recorded as MXNet's _copy
            res = _settle(_ENTRIES.get("_copy") or _entry("_copy"), _NO_ATTRS, (self._t,),
                          res)
        return _wrap(res, self._ctx)

    def copyto(self, other):
        """Copy into another NDArray (same shape) or onto a context (a new array)."""
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.shape != self.shape:
                raise MXNetError(f"copyto: shape mismatch {self.shape} vs {other.shape}")
            with _WRITES:
                dst = other._t
                # MXNet records the copy: the target's value depends on self. torch cannot
                # record a write into an attached array or a view of one: not recorded.
                if _STATE.recording and self._t.requires_grad and (
                        not dst.requires_grad or not (dst.is_leaf or dst._is_view())):
                    dst.copy_(self._t)
                else:
                    with torch.no_grad():
                        dst.copy_(self._t)
                return other
        if isinstance(other, Context):
            return _wrap(copied(self._t, device=other.torch_device), other)
        raise TypeError(f"copyto does not support type {type(other)}")

    def as_in_context(self, context: Context) -> "NDArray":
        if context == self._ctx:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def to_device(self, device):
        return self.as_in_context(device)

    def tostype(self, stype: str) -> "NDArray":
        if stype != "default":
            raise MXNetError(f"tostype('{stype}'): mxtorch stores every array densely")
        return self

    def detach(self) -> "NDArray":
        return _wrap(self._t.detach(), self._ctx)

    def as_nd_ndarray(self):
        return self

    def as_np_ndarray(self):
        """Return an ``mx.np.ndarray`` sharing memory (and gradient) with this array."""
        from ..numpy.multiarray import as_np_ndarray
        return as_np_ndarray(self)

    def asnumpy_bool(self):
        return self.asnumpy().astype(bool)

    def wait_to_read(self) -> None:
        """Wait until the array can be read; raise the error of the operator that
        computed it if that operator failed (see ``mxtorch/ops/failure.py``)."""
        t = self._t
        if t.__class__ is _FailedTensor:
            _failure.raise_failure(t)
        if t.is_cuda:
            torch.cuda.current_stream(t.device).synchronize()

    wait_to_write = wait_to_read

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype)

    def __dlpack__(self, stream=None):
        return self._t.detach().__dlpack__()

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()

    # ------------------------------------------------------------------ autograd
    def attach_grad(self, grad_req: str = "write", stype: str | None = None) -> None:
        """Attach a zero gradient buffer; ``backward`` fills it per ``grad_req``."""
        buf = _wrap(torch.zeros_like(self._t.detach()), self._ctx)
        _ag._attach(self, buf, grad_req)

    def backward(self, out_grad=None, retain_graph: bool = False, train_mode: bool = True):
        _ag.backward([self], None if out_grad is None else [out_grad],
                     retain_graph=retain_graph, train_mode=train_mode)

    # ------------------------------------------------------------------ shape
    def reshape(self, *shape, **kwargs) -> "NDArray":
        """Reshape as a view; accepts MXNet's special codes 0, -1, -2, -3, -4."""
        reverse = kwargs.pop("reverse", False)
        if "shape" in kwargs:
            shape = kwargs.pop("shape")
        elif len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        if kwargs:
            raise TypeError(f"reshape: unexpected arguments {sorted(kwargs)}")
        from ..ops.shape import reshape_target
        target = reshape_target(self.shape, tuple(shape), reverse)
        res = self._t.reshape(target)
        if res.requires_grad:
            if _STATE.recording:
                _note(_reg.get("Reshape"), {"shape": shape, "reverse": True} if reverse
                      else {"shape": shape}, (self._t,), res)
        elif _STATE.recording and _int_involved((self._t,), res.is_floating_point()):
            res = int_followed(lambda t: t.reshape(target), _reg.get("Reshape"),
                               {"shape": shape, "reverse": True} if reverse
                               else {"shape": shape}, (self._t,), res)
        return _wrap(res, self._ctx)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]

    def __bool__(self) -> bool:
        n = self.size
        if n == 0:
            return False  # MXNet: an empty array is False
        if n > 1:
            raise ValueError("The truth value of an NDArray with multiple elements is "
                             "ambiguous.")
        return bool(self._t.item())

    __nonzero__ = __bool__

    def __hash__(self):
        return id(self)

    def __repr__(self) -> str:
        shape_info = "x".join(str(x) for x in self.shape)
        return f"\n{self.asnumpy()!s}\n<{type(self).__name__} {shape_info} @{self._ctx}>"

    __str__ = __repr__

    def __reduce__(self):
        # MXNet: NDArray(None) then __setstate__({'handle': bytearray(record)}).
        return (NDArray, (None,), self.__getstate__())

    def __getstate__(self):
        from ..format.params import dump_record
        return {"handle": bytearray(dump_record(self.asnumpy()))}

    def __setstate__(self, state):
        from ..format.params import load_record
        # MXNet: reads state['handle'] and fails at load when it is missing or not bytes
        if not isinstance(state, dict) or "handle" not in state:
            keys = sorted(map(repr, state)) if isinstance(state, dict) else type(state).__name__
            raise MXNetError(f"pickled NDArray state must be a dict with a 'handle' entry, "
                             f"got {keys}")
        handle = state["handle"]
        if handle is not None and not isinstance(handle, (bytes, bytearray)):
            raise MXNetError(f"pickled NDArray 'handle' must be bytes, got "
                             f"{type(handle).__name__}")
        t = torch.empty(0) if handle is None else _from_numpy(load_record(bytes(handle)))
        self._t = t
        self._ctx = Context("cpu", 0)
        self._ag = None

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, key) -> "NDArray":
        from .indexing import getitem
        return getitem(self, key)

    def __setitem__(self, key, value) -> None:
        from .indexing import setitem
        with _WRITES:
            setitem(self, key, value)

    # ------------------------------------------------------------------ arithmetic
    # The binary operators are made by _binary_method (below the class): each is one
    # flat function, the hottest path of imperative code.
    def __neg__(self):
        return invoke("negative", [self], {})

    def __abs__(self):
        return invoke("abs", [self], {})

    def __pos__(self):
        return self

    def __eq__(self, other):
        if other is None:
            return False
        return _equal(self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return _not_equal(self, other)

    def __iadd__(self, other):
        with _WRITES:   # MXNet: writes to one array are ordered (ordering.py)
            return _inplace(self, self + other)

    def __isub__(self, other):
        with _WRITES:
            return _inplace(self, self - other)

    def __imul__(self, other):
        with _WRITES:
            return _inplace(self, self * other)

    def __itruediv__(self, other):
        with _WRITES:
            return _inplace(self, self / other)

    __idiv__ = __itruediv__

    def __imod__(self, other):
        with _WRITES:
            return _inplace(self, self % other)

    def __ipow__(self, other):
        with _WRITES:
            return _inplace(self, self ** other)

    def __matmul__(self, other):
        return invoke("dot", [self, other], {})

    # The operator methods (x.sum(), x.softmax(), x.flatten(inplace=True), ...) are
    # installed on the class by methods.py when mx.nd is imported.


def _unpickle_ndarray(record: bytes) -> NDArray:
    from ..format.params import load_record
    return _wrap(_from_numpy(load_record(record)), Context("cpu", 0))


_new = object.__new__
_F32, _F64 = torch.float32, torch.float64
_PY_SCALARS = frozenset({int, float})


# the arrays behind the handles ``_as_parameter_`` and the C API handed out
_HANDLES = HandleTable("NDArray")


def _from_handle(handle) -> "NDArray":
    """The live array behind a handle (MXNet's NDArrayHandle)."""
    return _HANDLES.get(handle)


def _wrap(t: torch.Tensor, ctx: Context | None) -> NDArray:
    arr = _new(NDArray)
    arr._t = t
    arr._ctx = ctx if ctx is not None else context_of_device(t.device)
    arr._ag = None
    return arr


def _inplace(dst: NDArray, result: NDArray) -> NDArray:
    if result.shape != dst.shape:
        raise MXNetError(f"in-place operation would change the shape {dst.shape} to "
                         f"{result.shape}")
    if dst._t.requires_grad and not _STATE.recording:
        with torch.no_grad():
            dst._t.copy_(result._t)
    elif _STATE.recording and not dst._t.is_floating_point():
        _int_write(dst._t, result._t, _intgrad.INPLACE)
        dst._t.copy_(result._t)
    else:
        dst._t.copy_(result._t)
    return dst


# ---------------------------------------------------------------------- dispatch
# Every call of an operator on NDArrays goes through :func:`invoke`, or through one of
# its two short forms that run the compute directly and hand anything unusual to it:
# :func:`call_plain` (``mx.nd.<op>`` of a parameter-free operator) and the operator
# methods (``a + b``, ``2 - a``, ``a > b``: :func:`_binary_method`). All three meet
# autograd in :func:`_settle` (:func:`_settle_all` for several outputs), the one place
# calls are recorded.
class _Entry:
    """What dispatch needs of one operator, resolved once (by name and by OpDef)."""

    __slots__ = ("opdef", "plain", "attrs", "work", "same_dtype", "tensor_scalar",
                 "scalars")

    def __init__(self, opdef: _OpDef):
        self.opdef = opdef
        self.plain = opdef.plain   # the compute takes no runtime keywords
        try:
            self.attrs = opdef.default_attrs()   # the attributes of a call without any
        except MXNetError:
            self.attrs = None  # a required attribute: parse_attrs names it
        self.work = opdef.work   # the cost estimate of operator tuning (ops/tuning.py)
        # the torch function of the compute for two inputs of one dtype, and for a
        # float32/float64 input and the scalar as a 0-dim tensor of its dtype
        self.same_dtype = opdef.same_dtype_fn
        self.tensor_scalar = opdef.tensor_scalar_fn
        self.scalars: dict = {}   # (scalar, its class) -> parsed attributes (scalar ops)


_ENTRIES: dict = {}   # operator name or OpDef -> its _Entry


def _entry(op) -> _Entry:
    """The :class:`_Entry` of an operator name or OpDef, made once per OpDef."""
    opdef = op if op.__class__ is _OpDef else _reg.get(op)
    ent = _ENTRIES.get(opdef) or _Entry(opdef)
    _ENTRIES[opdef] = _ENTRIES[op] = ent
    return ent


def invoke(op, inputs: Sequence[NDArray], kwargs: dict, out=None, ctx: Context | None = None,
           _held: bool = False):
    """Run a registered operator imperatively on NDArrays.

    This is the path from ``mx.nd`` to the registry: parse attributes (cached), call the
    torch compute (under ``no_grad`` when nothing is recorded), record it
    (:func:`_settle`), wrap outputs. It is the hot path of imperative code, so it is kept
    flat. A call with ``out=`` holds the write lock from reading its inputs to writing
    ``out`` (ordering.py).
    """
    if out is not None and not _held:
        with _WRITES:
            return invoke(op, inputs, kwargs, out, ctx, True)
    ent = _ENTRIES.get(op) or _entry(op)  # keyed by name or by OpDef
    opdef = ent.opdef
    attrs = ent.attrs
    if kwargs or attrs is None:
        attrs = opdef.parse_attrs(kwargs)
    try:
        tensors = [x._t for x in inputs]
    except AttributeError:
        bad = next(x for x in inputs if not isinstance(x, NDArray))
        raise MXNetError(f"Operator {opdef.name}: expected NDArray inputs, got "
                         f"{type(bad).__name__}") from None
    if ctx is None:
        ctx = inputs[0]._ctx if inputs else current_context()
    state = _STATE
    threads = 0
    work = ent.work
    if work is not None and tensors:
        # operator tuning: a small call of a kernel that starts OpenMP at any size
        estimate = work(attrs, *tensors)
        if state.recording:
            _tuning.recorded(state, estimate)
        threads = _tuning.single(estimate)
    try:
        if not state.recording:
            for t in tensors:
                if t.requires_grad:
                    # torch.no_grad() without its Python context manager (2 us -> 0.3 us)
                    grad_was = _grad_enabled()
                    _set_grad_enabled(False)
                    try:
                        res = _run(opdef, attrs, tensors, state.training, ctx)
                    finally:
                        _set_grad_enabled(grad_was)
                    break
            else:
                res = (opdef.compute(attrs, *tensors) if ent.plain
                       else _run(opdef, attrs, tensors, state.training, ctx))
        else:
            res = _run(opdef, attrs, tensors, state.training, ctx)
            if res.__class__ is torch.Tensor:
                res = _settle(ent, kwargs, tensors, unshared(res, tensors), attrs, ctx)
            elif not isinstance(res, torch.Tensor):   # several outputs (not failed ones)
                res = _settle_all(ent, kwargs, tensors,
                                  [unshared(r, tensors) for r in res], attrs, ctx)
    except MXNetError:
        raise
    except (RuntimeError, ValueError, IndexError, TypeError) as err:
        shapes = [tuple(t.shape) for t in tensors]
        raise MXNetError(f"Operator {opdef.name}: {err} (input shapes {shapes}, "
                         f"attributes {dict(kwargs)})") from None
    finally:
        _tuning.restore(threads)
    if res.__class__ is torch.Tensor or isinstance(res, torch.Tensor):   # FailedTensor
        if out is not None:
            return _write_out(out, res)
        arr = _new(NDArray)
        arr._t = unshared(res, tensors)
        arr._ctx = ctx
        arr._ag = None
        return arr
    outs = [_wrap(unshared(r, tensors), ctx) for r in res]
    if out is not None:
        for o, r in zip(out if isinstance(out, (list, tuple)) else [out], outs):
            _write_out(o, r._t)
        return out
    return outs


def _settle(ent: _Entry, kwargs: dict, tensors, res, attrs=None, ctx=None):
    """Where every dispatch path meets autograd, once ``res`` (one tensor, sharing no
    memory with the inputs ``tensors``) is computed: called under ``record()``, and
    outside it for a result torch recorded (``requires_grad``).

    Outside ``record()`` MXNet records nothing: torch's record of a call on attached
    arrays is dropped. Under it, a result on torch's tape is noted for mx.autograd (the
    tape ``get_symbol`` reads); one that is not but carries an integer array's gradient
    (ops/intgrad.py) is put on that gradient path. Returns ``res`` as recorded.
    """
    state = _STATE
    if not state.recording:
        return res.detach()
    if ent.work is None:
        _recorded_result(state, res)
    if res.requires_grad:
        _note(ent.opdef, kwargs, tensors, res)
        return res
    if _int_involved(tensors, res.is_floating_point()):
        res = _int_recorded(ent.opdef, kwargs, tensors, res, attrs, state.training,
                            ctx.torch_device if ent.opdef.creates else None)
    return res


def _settle_all(ent: _Entry, kwargs: dict, tensors, res: list, attrs, ctx):
    """:func:`_settle` for the outputs ``res`` of an operator with several (under
    ``record()``)."""
    if any(r.requires_grad for r in res):
        _note(ent.opdef, kwargs, tensors, res)
    elif _int_involved(tensors, all(r.is_floating_point() for r in res)):
        res = _int_recorded(ent.opdef, kwargs, tensors, res, attrs, _STATE.training,
                            ctx.torch_device if ent.opdef.creates else None)
    return res


def _int_recorded(opdef, kwargs: dict, tensors, res, attrs=None, is_train: bool = False,
                  device=None):
    """A recorded call whose results are not on torch's tape but carry an integer array's
    gradient (ops/intgrad.py): ``res`` on the operator's gradient path, recorded."""
    if attrs is None:
        attrs = opdef.parse_attrs(kwargs)
    res = _intgrad.run_op(opdef, attrs, tensors, res, is_train, device)
    _note_followed(opdef, kwargs, tensors, res)
    return res


def int_followed(fn, opdef, kwargs: dict, tensors, res):
    """:func:`_int_recorded` for a computation ``fn`` of the tensors that stands for
    ``opdef`` (reshape; None: nothing recorded, as for indexing): ``res = fn(*tensors)``
    on its gradient path."""
    res = _intgrad.follow(fn, tensors, res)
    if opdef is not None:
        _note_followed(opdef, kwargs, tensors, res)
    return res


def _note_followed(opdef, kwargs: dict, tensors, res) -> None:
    outs = res if isinstance(res, (list, tuple)) else (res,)
    if any(o.requires_grad or getattr(o, _intgrad.SHADOW, None) is not None for o in outs):
        _note(opdef, kwargs, tensors, list(res) if isinstance(res, (list, tuple)) else res)


def _run(opdef, attrs, tensors, is_train, ctx):
    if opdef.plain:
        return opdef.compute(attrs, *tensors)
    return opdef.run(attrs, tensors, is_train, ctx.torch_device if opdef.creates else None)


def plain_entry(opdef: _OpDef) -> _Entry | None:
    """The entry of an operator :func:`call_plain` can run (plain, without parameters or
    a tuning estimate), else None."""
    if not opdef.plain or opdef.params or opdef.key_var_num_args or opdef.work is not None:
        return None
    return _ENTRIES.get(opdef) or _entry(opdef)


def call_plain(ent: _Entry, inputs):
    """:func:`invoke`'s short form for an operator of :func:`plain_entry` on one or two
    NDArrays: the compute runs directly (torch records it; :func:`_settle` keeps or drops
    that record). One and two inputs avoid building a list: at this scale every Python
    step shows. Returns ``None`` when the full :func:`invoke` is needed (an error to
    explain, several or failed outputs, more inputs).
    """
    try:
        if len(inputs) == 2:
            ta, tb = inputs[0]._t, inputs[1]._t
            res = ent.opdef.compute(ent.attrs, ta, tb)
            tensors = (ta, tb)
            if res is ta or res is tb or res._is_view():
                res = unshared(res, tensors)
        elif len(inputs) == 1:
            t = inputs[0]._t
            res = ent.opdef.compute(ent.attrs, t)
            tensors = (t,)
            if res is t or res._is_view():
                res = unshared(res, tensors)
        else:
            return None
    except Exception:  # noqa: BLE001 - invoke re-runs it and explains in MXNet's terms
        return None
    if res.__class__ is not torch.Tensor:
        return None
    if res.requires_grad or _STATE.recording:
        res = _settle(ent, _NO_ATTRS, tensors, res, ent.attrs)
    arr = _new(NDArray)
    arr._t = res
    arr._ctx = inputs[0]._ctx
    arr._ag = None
    return arr


def _scalar_attrs(ent: _Entry, scalar):
    """The parsed attributes of a scalar operator for ``scalar`` (cached per scalar)."""
    cache = ent.scalars
    key = (scalar, scalar.__class__)
    attrs = cache.get(key)
    if attrs is None:
        attrs = ent.opdef.parse_attrs({"scalar": scalar})
        if len(cache) < 256:
            cache[key] = attrs
    return attrs


def _scalar_const(ent: _Entry, scalar, t: torch.Tensor) -> torch.Tensor | None:
    """``scalar`` as the 0-dim tensor of t's dtype and device that the scalar operator
    ``ent`` computes with; None when it does not fit the dtype (the compute explains)."""
    try:
        return torch.tensor(_scalar_attrs(ent, scalar).scalar, dtype=t.dtype,
                            device=t.device)
    except Exception:  # noqa: BLE001
        return None


def _binary_method(array_op: str, scalar_op: str, reflected: bool = False):
    """An NDArray operator method (``__add__``, ``__rsub__`` ...): :func:`invoke`'s short
    form for ``array_op`` (another NDArray) or ``scalar_op`` (a number).

    Attributes are cached per operator (per scalar for the scalar forms). The compute runs
    directly, and :func:`_settle` records it. An error re-runs the call through
    :func:`invoke`, which explains it in MXNet's terms. The method computes itself rather
    than calling invoke: at 2-3 us per call, one more Python call is a tenth of the cost.
    """
    entry = scalar_entry = None   # each operator's _Entry, resolved on first use
    consts: dict = {}   # (scalar, its class, dtype, device) -> the scalar as a 0-dim tensor

    def method(lhs: NDArray, rhs):
        nonlocal entry, scalar_entry
        if isinstance(rhs, NDArray):
            ent = entry
            if ent is None:
                ent = entry = _ENTRIES.get(array_op) or _entry(array_op)
            ta, tb = (rhs._t, lhs._t) if reflected else (lhs._t, rhs._t)
            try:
                same = ent.same_dtype
                if same is not None and ta.dtype is tb.dtype:
                    res = same(ta, tb)
                else:
                    res = ent.opdef.compute(ent.attrs, ta, tb)
            except Exception:  # noqa: BLE001 - re-run through invoke for MXNet's message
                return invoke(ent.opdef, [rhs, lhs] if reflected else [lhs, rhs], {})
            if res.requires_grad or _STATE.recording:
                res = _settle(ent, _NO_ATTRS, (ta, tb), res, ent.attrs)
        elif rhs.__class__ in _PY_SCALARS or isinstance(rhs, (numbers.Number, np.generic)):
            ent = scalar_entry
            if ent is None:
                ent = scalar_entry = _ENTRIES.get(scalar_op) or _entry(scalar_op)
            t = lhs._t
            dtype = t.dtype
            const = None
            if ent.tensor_scalar is not None and (dtype is _F32 or dtype is _F64):
                # the scalar as a 0-dim tensor of t's dtype, made once
                const_key = (rhs, rhs.__class__, dtype, t.get_device())
                const = consts.get(const_key)
                if const is None:
                    const = _scalar_const(ent, rhs, t)
                    if const is not None and len(consts) < 256:
                        consts[const_key] = const
            try:
                if const is not None:
                    res = ent.tensor_scalar(t, const)
                else:
                    res = ent.opdef.compute(_scalar_attrs(ent, rhs), t)
            except Exception:  # noqa: BLE001
                return invoke(ent.opdef, [lhs], {"scalar": rhs})
            if res.requires_grad or _STATE.recording:
                res = _settle(ent, {"scalar": rhs}, (t,), res)
        elif isinstance(rhs, np.ndarray):
            other = array(rhs, ctx=lhs._ctx, dtype=lhs.dtype)
            return invoke(array_op, [other, lhs] if reflected else [lhs, other], {})
        else:
            return NotImplemented
        arr = _new(NDArray)
        arr._t = res
        arr._ctx = lhs._ctx
        arr._ag = None
        return arr
    return method


_equal = _binary_method("broadcast_equal", "_equal_scalar")
_not_equal = _binary_method("broadcast_not_equal", "_not_equal_scalar")
for _name, _array_op, _scalar_op, _reflected in (
        ("__add__", "broadcast_add", "_plus_scalar", False),
        ("__radd__", "broadcast_add", "_plus_scalar", False),
        ("__sub__", "broadcast_sub", "_minus_scalar", False),
        ("__rsub__", "broadcast_sub", "_rminus_scalar", True),
        ("__mul__", "broadcast_mul", "_mul_scalar", False),
        ("__rmul__", "broadcast_mul", "_mul_scalar", False),
        ("__truediv__", "broadcast_div", "_div_scalar", False),
        ("__rtruediv__", "broadcast_div", "_rdiv_scalar", True),
        ("__div__", "broadcast_div", "_div_scalar", False),
        ("__rdiv__", "broadcast_div", "_rdiv_scalar", True),
        ("__mod__", "broadcast_mod", "_mod_scalar", False),
        ("__rmod__", "broadcast_mod", "_rmod_scalar", True),
        ("__pow__", "broadcast_power", "_power_scalar", False),
        ("__rpow__", "broadcast_power", "_rpower_scalar", True),
        ("__gt__", "broadcast_greater", "_greater_scalar", False),
        ("__ge__", "broadcast_greater_equal", "_greater_equal_scalar", False),
        ("__lt__", "broadcast_lesser", "_lesser_scalar", False),
        ("__le__", "broadcast_lesser_equal", "_lesser_equal_scalar", False)):
    _method = _binary_method(_array_op, _scalar_op, _reflected)
    _method.__name__, _method.__qualname__ = _name, f"NDArray.{_name}"
    setattr(NDArray, _name, _method)
del _name, _array_op, _scalar_op, _reflected, _method


def _write_out(out: NDArray, res: torch.Tensor) -> NDArray:
    if tuple(out._t.shape) != tuple(res.shape):
        raise MXNetError(f"out= array has shape {out.shape} but the result has shape "
                         f"{tuple(res.shape)}")
    if out._t is res:
        return out
    if _STATE.recording:
        if not out._t.is_floating_point():
            _int_write(out._t, res)
        if res.requires_grad or getattr(res, _SHADOW, None) is not None:
            out._t = res.to(out._t.dtype)   # recorded: out= holds the result itself
            return out
    with torch.no_grad():
        out._t.copy_(res)
    return out


def _int_write(t: torch.Tensor, res: torch.Tensor, shadowed_msg: str | None = None) -> None:
    """MXNet's errors for a write under record() into the integer tensor ``t``, whose
    shadow would go stale (ops/intgrad.py): ``t`` in the graph, or (``shadowed_msg``)
    the recorded ``res`` written in place."""
    if getattr(t, _SHADOW, None) is not None:
        raise MXNetError(_intgrad.IN_GRAPH)
    if shadowed_msg is not None and (res.requires_grad
                                     or getattr(res, _SHADOW, None) is not None):
        raise MXNetError(shadowed_msg)


# ---------------------------------------------------------------------- creation
def copied(t: torch.Tensor, device=None, dtype=None) -> torch.Tensor:
    """A copy of ``t`` in new memory (on ``device``, as ``dtype``).

    While recording, MXNet records copies and casts (``astype``, ``copy``, ``copyto``,
    ``as_in_context``, ``array(x)``): the gradient flows through them to ``t``. Outside
    recording the copy is detached. # torch: casts to integer types carry no gradient.
    """
    if not (_STATE.recording and t.requires_grad):
        t = t.detach()
    return t.to(device=t.device if device is None else device,
                dtype=t.dtype if dtype is None else dtype, copy=True)


def _from_numpy(a: np.ndarray) -> torch.Tensor:
    if a.dtype == dtype_np("bfloat16"):
        return torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).view(torch.bfloat16)
    if a.dtype.byteorder == ">" or not a.flags.c_contiguous or not a.flags.writeable:
        a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("=")).copy()
    return torch.from_numpy(a)


def array(source_array, ctx: Context | None = None, dtype=None) -> NDArray:
    """Create an NDArray from a list, NumPy array, scalar or NDArray (float32 default)."""
    ctx = ctx or current_context()
    if isinstance(source_array, NDArray):
        dt = torch_dtype(dtype) if dtype is not None else source_array._t.dtype
        return _wrap(copied(source_array._t, ctx.torch_device, dt), ctx)
    if isinstance(source_array, torch.Tensor):
        dt = torch_dtype(dtype) if dtype is not None else source_array.dtype
        return _wrap(source_array.detach().to(ctx.torch_device, dt, copy=True), ctx)
    # MXNet: the default dtype is float32 for every non-NDArray source.
    np_dtype = dtype_np(dtype) if dtype is not None else np.dtype(np.float32)
    try:
        a = np.array(source_array, dtype=np_dtype)
    except (ValueError, TypeError) as err:
        raise TypeError(f"source_array must be array like object: {err}") from None
    # MXNet: a scalar source gives a 0-d array (shape ()), NumPy shape semantics or not
    t = _from_numpy(a)
    if ctx.torch_device.type != "cpu":
        t = t.to(ctx.torch_device)
    else:
        t = t.clone() if not t.is_contiguous() else t
    return _wrap(t, ctx)


def from_numpy(ndarray: np.ndarray, zero_copy: bool = True, array_cls=NDArray) -> NDArray:
    """An array over a NumPy array's memory (``zero_copy``) or over a copy of it.

    Parameters
    ----------
    ndarray : numpy.ndarray
        The source; with ``zero_copy`` it must be C-contiguous and becomes read-only on
        the NumPy side (writes go through the returned array, as in MXNet).
    zero_copy : bool, default True
        Share the memory instead of copying.
    array_cls : type, default NDArray
        The class of the result (``mx.np.ndarray`` for NumPy mode).
    """
    if not zero_copy:
        t = _from_numpy(np.array(ndarray, copy=True, order="C"))
    else:
        if not ndarray.flags["C_CONTIGUOUS"]:
            raise ValueError("Only c-contiguous arrays are supported for zero-copy")
        # MXNet: the NumPy array is handed over (read-only from then on, even when it was
        # handed over before); read-only memory itself raises ValueError here
        ndarray.flags["WRITEABLE"] = True
        t = _from_numpy(ndarray)
        ndarray.flags["WRITEABLE"] = False
    arr = _new(array_cls)
    arr._t = t
    arr._ctx = Context("cpu", 0)
    arr._ag = None
    return arr


def empty(shape, ctx: Context | None = None, dtype=None, stype=None) -> NDArray:
    """An uninitialized array (zero-filled here, which MXNet also allows)."""
    ctx = ctx or current_context()
    if isinstance(shape, int):
        shape = (shape,)
    return _wrap(torch.zeros(tuple(shape), dtype=torch_dtype(dtype or "float32"),
                             device=ctx.torch_device), ctx)


def waitall() -> None:
    """Wait for all pending device work (CUDA synchronize); raise the first error of an
    operator that failed since the last ``waitall``, as MXNet's engine does."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    _failure.raise_pending()


def from_dlpack(dlpack) -> NDArray:
    return _wrap(torch.from_dlpack(dlpack), None)


def to_dlpack_for_read(data: NDArray):
    return torch.utils.dlpack.to_dlpack(data._t.detach())


def to_dlpack_for_write(data: NDArray):
    return torch.utils.dlpack.to_dlpack(data._t.detach())


# MXNet defines these in ndarray.py; here they live beside the helpers they use
_ELSEWHERE = {
    "indexing": ("get_indexing_dispatch_code", "indexing_key_expand_implicit_axes",
                 "get_oshape_of_gather_nd_op"),
    "utils": ("add", "subtract", "multiply", "divide", "true_divide", "modulo", "power",
              "maximum", "minimum", "equal", "not_equal", "greater", "greater_equal", "lesser",
              "lesser_equal", "logical_and", "logical_or", "logical_xor", "onehot_encode",
              "ones", "zeros", "full", "arange", "linspace", "eye", "concatenate", "moveaxis",
              "histogram", "split_v2", "imdecode"),
}


def __getattr__(name: str):
    """``from mxtorch.ndarray.ndarray import add`` as from MXNet's module (imported on use:
    those modules import this one)."""
    for module, names in _ELSEWHERE.items():
        if name in names:
            import importlib
            return getattr(importlib.import_module(f"{__package__}.{module}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

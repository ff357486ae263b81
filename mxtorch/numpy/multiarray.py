"""``mx.np.ndarray``: an array with NumPy semantics over one ``torch.Tensor``.

Wrapping API (for other mxtorch modules)
----------------------------------------
- ``ndarray`` subclasses the legacy ``mx.nd.NDArray`` and shares its slots
  (``_t`` the torch tensor, ``_ctx`` the Context, ``_ag`` autograd record), so autograd,
  ``copyto``, ``as_in_context``, ``wait_to_read`` ... work unchanged.
- ``wrap(tensor, ctx=None) -> ndarray``: wrap a torch tensor without copying
  (``ctx=None`` takes the tensor's device context).
- ``as_np_ndarray(nd_array) -> ndarray``: view a legacy NDArray as an np ndarray (same
  memory); ``arr.as_nd_ndarray()`` goes back.
- ``to_tensor(x, ctx=None, dtype=None) -> torch.Tensor``: any array-like to a tensor
  (np/nd arrays pass through, Python data defaults to float32, NumPy arrays keep dtype).
- ``ndarray(shape_or_tensor, dtype=..., ctx=...)``: like MXNet, ``np.ndarray((2, 3))``
  allocates (zeros); passing a torch tensor wraps it.
- ``np_op`` decorator: runs a torch-level function under ``no_grad`` unless autograd is
  recording (MXNet records only inside ``autograd.record()``).
"""
from __future__ import annotations

import functools
import numbers

import numpy as onp
import torch

from .. import autograd as _ag
from ..context import Context, context_of_device, current_context
from ..ndarray.ndarray import NDArray, copied
from ..ndarray.ordering import WRITES
from ..ops.tensor_util import torch_dtype, torch_to_np_dtype, unshared

__all__ = ["ndarray", "wrap", "as_np_ndarray", "to_tensor", "np_op", "empty", "array",
           "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "empty_like",
           "arange", "linspace", "logspace", "eye", "identity", "meshgrid", "tril", "triu",
           "shape", "tri", "indices", "copy", "real"]

_STATE = _ag._STATE
_new = object.__new__


def np_op(fn):
    """Run ``fn`` under ``torch.no_grad()`` unless autograd is recording; its results never
    share memory with its array arguments (MXNet's ``mx.np`` functions return copies, even
    ``reshape`` and ``transpose``; only basic indexing shares)."""
    @functools.wraps(fn)
    def _run(*args, **kwargs):
        if _STATE.recording:
            res = fn(*args, **kwargs)
        else:
            with torch.no_grad():
                res = fn(*args, **kwargs)
        return _unshare(res, args)
    return _run


def _input_tensors(args) -> list:
    out = []
    for a in args:
        if isinstance(a, NDArray):
            out.append(a._t)
        elif isinstance(a, (list, tuple)):
            out.extend(x._t for x in a if isinstance(x, NDArray))
    return out


def _unshare_one(r, tensors):
    if not isinstance(r, NDArray):
        return r
    t = unshared(r._t, tensors)
    return r if t is r._t else wrap(t, r._ctx)


def _unshare(res, args):
    if isinstance(res, NDArray):
        return _unshare_one(res, _input_tensors(args))
    if type(res) in (list, tuple):
        tensors = _input_tensors(args)
        return type(res)(_unshare_one(r, tensors) for r in res)
    return res


def wrap(t: torch.Tensor, ctx: Context | None = None) -> "ndarray":
    """Wrap a torch tensor as an ``mx.np.ndarray`` (no copy)."""
    arr = _new(ndarray)
    arr._t = t
    arr._ctx = ctx if ctx is not None else context_of_device(t.device)
    arr._ag = None
    return arr


def as_np_ndarray(arr: NDArray) -> "ndarray":
    """Return an ``mx.np.ndarray`` sharing memory with a legacy NDArray.

    The lead attaches this as ``NDArray.as_np_ndarray``.
    """
    if isinstance(arr, ndarray):
        return arr
    out = wrap(arr._t, arr._ctx)
    out._ag = arr._ag
    return out


def _default_float() -> torch.dtype:
    return torch.float32


def to_tensor(x, ctx: Context | None = None, dtype=None) -> torch.Tensor:
    """Convert an array-like to a torch tensor on ``ctx`` (float32 default for Python data)."""
    dev = ctx.torch_device if ctx is not None else None
    td = torch_dtype(dtype) if dtype is not None else None
    if isinstance(x, NDArray):
        t = x._t
    elif isinstance(x, torch.Tensor):
        t = x
    elif isinstance(x, onp.ndarray):
        t = torch.from_numpy(onp.ascontiguousarray(x).copy())
    else:
        try:
            a = onp.array(x, dtype=onp.float32 if dtype is None else onp.dtype(dtype))
        except (TypeError, ValueError) as err:
            raise TypeError(f"source_array must be array like object: {err}") from None
        t = torch.from_numpy(a)
    if td is not None and t.dtype != td or dev is not None and t.device != dev:
        t = t.to(device=dev, dtype=td)
    return t


def _ctx_of(*xs) -> Context:
    for x in xs:
        if isinstance(x, NDArray):
            return x._ctx
    return current_context()


def _key_part(k):
    """One index component -> what torch indexing accepts."""
    if isinstance(k, NDArray):
        t = k._t
        return t if t.dtype == torch.bool else t.long()
    if isinstance(k, onp.ndarray):
        t = torch.from_numpy(onp.ascontiguousarray(k))
        return t if t.dtype == torch.bool else t.long()
    if isinstance(k, list):
        return _key_part(onp.array(k))
    if isinstance(k, onp.integer):
        return int(k)
    return k


def _normalize_key(key, shape):
    """Torch-indexable key plus the output dims to flip (NumPy negative-step slices)."""
    parts = list(key) if isinstance(key, tuple) else [key]
    parts = [_key_part(k) for k in parts]
    if not any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in parts):
        return (tuple(parts) if isinstance(key, tuple) else parts[0]), []
    n_used = sum(1 for k in parts if k is not None and k is not Ellipsis
                 and not (isinstance(k, torch.Tensor) and k.dtype == torch.bool))
    if Ellipsis in parts:
        i = parts.index(Ellipsis)
        parts[i:i + 1] = [slice(None)] * (len(shape) - n_used)
    advanced = any(isinstance(k, torch.Tensor) for k in parts)
    out, flips, dim, odim = [], [], 0, 0
    for k in parts:
        if k is None:
            out.append(k)
            odim += 1
            continue
        if isinstance(k, slice) and k.step is not None and k.step < 0:
            idx = range(*k.indices(shape[dim]))
            if advanced:
                k = torch.tensor(list(idx), dtype=torch.long)
            elif len(idx) == 0:
                k = slice(0, 0)
            else:
                k = slice(idx[-1], idx[0] + 1, -k.step)
                flips.append(odim)
        out.append(k)
        dim += 1
        odim += 0 if isinstance(k, int) else 1
    return tuple(out), flips


class ndarray(NDArray):  # MXNet's name
    """An n-dimensional array with NumPy semantics (``mxnet.numpy.ndarray``)."""

    __slots__ = ()

    def __init__(self, shape=None, dtype=None, ctx: Context | None = None, **kwargs):
        if isinstance(shape, torch.Tensor):
            NDArray.__init__(self, shape, ctx)
            return
        ctx = ctx or kwargs.get("device") or current_context()
        shape = () if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
        t = torch.zeros(shape, dtype=torch_dtype(dtype or "float32"), device=ctx.torch_device)
        NDArray.__init__(self, t, ctx)

    # ------------------------------------------------------------------ properties
    @property
    def dtype(self):
        """The NumPy dtype object (``dtype('float32')``)."""
        return torch_to_np_dtype(self._t.dtype)

    @property
    def device(self) -> Context:
        return self._ctx

    @property
    def T(self):
        return self.transpose()

    @property
    def itemsize(self) -> int:
        return self._t.element_size()

    @property
    def nbytes(self) -> int:
        return self._t.element_size() * self._t.numel()

    # ------------------------------------------------------------------ conversion
    def as_nd_ndarray(self) -> NDArray:
        """Return a legacy NDArray sharing memory with this array."""
        arr = _new(NDArray)
        arr._t = self._t
        arr._ctx = self._ctx
        arr._ag = self._ag
        return arr

    def as_np_ndarray(self) -> "ndarray":
        return self

    def item(self, *args):
        """Return the element as a Python scalar."""
        if args:
            return self.asnumpy().item(*args)
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self._t.detach().reshape(()).item()

    def tolist(self):
        return self.asnumpy().tolist()

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """Return the array cast to ``dtype`` (``self`` if ``copy=False`` and it matches).

        MXNet supports ``order`` 'C'/'K', ``casting='unsafe'`` and ``subok=True`` only.
        """
        if order is not None and order not in ("K", "C"):
            raise ValueError("order must be either 'K' or 'C'")
        if casting != "unsafe":
            raise ValueError("casting must be equal to 'unsafe'")
        if not subok:
            raise ValueError("subok must be equal to True")
        td = torch_dtype(dtype if dtype is not None else "float32")
        if not copy and td == self._t.dtype:
            return self
        return wrap(copied(self._t, dtype=td), self._ctx)

    def copy(self, order="C") -> "ndarray":
        return wrap(copied(self._t), self._ctx)

    def copyto(self, other):
        res = NDArray.copyto(self, other)
        return as_np_ndarray(res) if isinstance(other, Context) else res

    def as_in_context(self, context: Context) -> "ndarray":
        return self if context == self._ctx else self.copyto(context)

    as_in_ctx = as_in_context
    to_device = as_in_context

    def detach(self) -> "ndarray":
        return wrap(self._t.detach(), self._ctx)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._t.is_floating_point() or self.size != 1:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def __bool__(self):
        if self.size == 0:
            return False  # MXNet (as NumPy < 1.24): an empty array is False
        if self.size > 1:
            raise ValueError("The truth value of an ndarray with multiple elements is "
                             "ambiguous.")
        return bool(self.item())

    def __hash__(self):
        raise NotImplementedError

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype)

    # ------------------------------------------------------------------ printing
    def __repr__(self) -> str:
        array_str = repr(self.asnumpy())
        dtype = self.dtype
        if "dtype=" in array_str:
            if dtype == onp.float32:
                array_str = array_str[:array_str.rindex(",")] + ")"
        elif dtype not in (onp.float32, onp.bool_):
            array_str = array_str[:-1] + f", dtype={dtype})"
        if self._ctx.device_type == "cpu":
            return array_str
        return array_str[:-1] + f", ctx={self._ctx})"

    def __str__(self) -> str:
        array_str = str(self.asnumpy())
        if self._ctx.device_type == "cpu" or self.ndim == 0:
            return array_str
        return f"{array_str} @{self._ctx}"

    def __format__(self, fmt):
        if self.ndim == 0:
            return self.item().__format__(fmt)
        if not fmt:
            return str(self)
        raise TypeError("Cannot format mxnet.numpy.ndarray with format_spec")

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(),))

    # ------------------------------------------------------------------ autograd
    def attach_grad(self, grad_req: str = "write", stype=None) -> None:
        """Attach a zero gradient buffer (an ``mx.np.ndarray``) to this array."""
        buf = wrap(torch.zeros_like(self._t.detach()), self._ctx)
        _ag._attach(self, buf, grad_req)

    # ------------------------------------------------------------------ indexing
    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._t.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._t.shape[0]):
            yield self[i]

    def __getitem__(self, key) -> "ndarray":
        key, flips = _normalize_key(key, self._t.shape)
        with _grad_scope():
            t = self._t[key]
            if flips:
                t = t.flip(flips)
        return wrap(t, self._ctx)

    def __setitem__(self, key, value) -> None:
        with WRITES:   # MXNet: writes to one array are ordered (ndarray/ordering.py)
            self._setitem(key, value)

    def _setitem(self, key, value) -> None:
        key, flips = _normalize_key(key, self._t.shape)
        t = self._t
        v = value._t if isinstance(value, NDArray) else (
            value if isinstance(value, numbers.Number) else to_tensor(value, dtype=t.dtype))
        with _grad_scope():
            if flips:
                view = t[key]
                if isinstance(v, torch.Tensor):
                    v = torch.broadcast_to(v.to(t.dtype), view.shape).flip(flips)
                view.copy_(v) if isinstance(v, torch.Tensor) else view.fill_(v)
            elif isinstance(v, torch.Tensor):
                t[key] = v.to(device=t.device, dtype=t.dtype)
            else:
                t[key] = v

    # ------------------------------------------------------------------ methods
    def reshape(self, *shape, order="C", **kwargs):
        """Reshape (a view when possible); NumPy semantics, ``-1`` infers one dim."""
        if "newshape" in kwargs:
            shape = kwargs.pop("newshape")
        elif len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        elif not shape:
            raise TypeError("reshape() takes exactly 1 argument (0 given)")
        if kwargs:
            raise TypeError(f"{next(iter(kwargs))} is an invalid keyword argument for this "
                            "function")
        return _m().reshape(self, tuple(shape), order=order)

    def reshape_view(self, *shape, **kwargs) -> "ndarray":
        """The legacy reshape (MXNet's special codes ``0``, ``-2``...; shares memory)."""
        return as_np_ndarray(NDArray.reshape(self.as_nd_ndarray(), *shape, **kwargs))

    def transpose(self, *axes) -> "ndarray":
        """Permute the axes: ``x.transpose()``, ``x.transpose(1, 0, 2)`` or a tuple."""
        if not axes or (len(axes) == 1 and axes[0] is None):
            axes = None
        elif len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return _m().transpose(self, axes)

    def clip(self, min=None, max=None, out=None) -> "ndarray":  # noqa: A002 - MXNet's names
        """Limit the values to ``[min, max]`` (either may be None, not both)."""
        if min is None and max is None:
            raise ValueError("array_clip: must set either max or min")
        return _m().clip(self, min, max, out=out)

    def flatten(self, order="C") -> "ndarray":
        """A one-dimensional copy, in row-major order ('C'; 'A' and 'K' as 'C' since arrays
        are row-major) or column-major ('F')."""
        if order not in ("C", "F", "A", "K"):
            raise ValueError("order must be one of 'C', 'F', 'A', or 'K' (got "
                             f"'{order}')")
        src = self.transpose() if order == "F" else self
        return _m().ravel(src).copy()

    def __round__(self, n=0) -> "ndarray":
        return _m().round(self, n)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        fn = _METHODS.get(name)
        if fn is None:
            raise AttributeError(f"'ndarray' object has no attribute '{name}'")
        return functools.partial(fn, self)


def _rebuild(a):
    return wrap(torch.from_numpy(a.copy()), None)


class _grad_scope:  # used like a context manager function
    """``torch.no_grad()`` unless autograd is recording."""

    __slots__ = ("_ng",)

    def __enter__(self):
        self._ng = None if _STATE.recording else torch.no_grad()
        if self._ng is not None:
            self._ng.__enter__()

    def __exit__(self, *exc):
        if self._ng is not None:
            self._ng.__exit__(*exc)


def _m():
    from . import _module_namespace
    return _module_namespace()


# Array methods resolved by name from the np namespace (filled by numpy/__init__.py).
_METHODS: dict = {}


class _NotInherited:
    """A legacy NDArray operator method (``x.softmax()``) that ``mx.np.ndarray`` does not
    have: looking it up raises AttributeError, so ``__getattr__`` decides."""

    def __get__(self, obj, cls=None):
        raise AttributeError("mxnet.numpy.ndarray object has no such attribute")


def install_methods(methods: dict, legacy: list) -> None:
    """Make the NumPy-style ``methods`` (name -> np function) methods of ``ndarray`` and
    hide the ``legacy`` operator methods it would inherit from NDArray."""
    _METHODS.update(methods)
    for name in legacy:
        if name not in vars(ndarray):
            setattr(ndarray, name, _NotInherited())
    for name, fn in methods.items():
        if name not in vars(ndarray) or isinstance(vars(ndarray)[name], _NotInherited):
            setattr(ndarray, name, fn)


def _install_operators(ns) -> None:
    """Attach arithmetic/comparison dunders that dispatch to np functions in ``ns``."""
    def binop(fname, reflected=False):
        fn = getattr(ns, fname)
        if reflected:
            return lambda self, other: fn(other, self)
        return lambda self, other: fn(self, other)

    def iop(fname):
        fn = getattr(ns, fname)

        def op(self, other):
            res = fn(self, other)
            with _grad_scope():
                if tuple(res.shape) != tuple(self._t.shape):
                    raise ValueError(f"non-broadcastable output operand with shape "
                                     f"{self.shape} doesn't match the broadcast shape "
                                     f"{res.shape}")
                self._t.copy_(res._t)
            return self
        return op

    table = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
             "floordiv": "floor_divide", "mod": "mod", "pow": "power", "matmul": "matmul",
             "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
             "lshift": "left_shift", "rshift": "right_shift"}
    for short, fname in table.items():
        setattr(ndarray, f"__{short}__", binop(fname))
        setattr(ndarray, f"__r{short}__", binop(fname, reflected=True))
        setattr(ndarray, f"__i{short}__", iop(fname))
    for short, fname in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                         "gt": "greater", "ge": "greater_equal"}.items():
        setattr(ndarray, f"__{short}__", binop(fname))
    for short, fname in {"neg": "negative", "pos": "positive", "abs": "absolute",
                         "invert": "invert"}.items():
        fn = getattr(ns, fname)
        setattr(ndarray, f"__{short}__", lambda self, _fn=fn: _fn(self))


# ---------------------------------------------------------------------- creation
def _shape(shape) -> tuple:
    if shape is None:
        return ()
    if isinstance(shape, (int, onp.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _dev(ctx, device=None) -> Context:
    return ctx or device or current_context()


def empty(shape, dtype=None, order="C", ctx=None, device=None):
    """Return a new array of the given shape (zero-filled; float32 default)."""
    ctx = _dev(ctx, device)
    return wrap(torch.zeros(_shape(shape), dtype=torch_dtype(dtype or "float32"),
                            device=ctx.torch_device), ctx)


def array(object, dtype=None, ctx=None, device=None):  # noqa: A002 - MXNet's name
    """Create an array from array-like data (a copy).

    Python data becomes float32 unless ``dtype`` is given, as in MXNet; NumPy arrays and
    mx arrays keep their dtype.
    """
    ctx = _dev(ctx, device)
    if isinstance(object, NDArray) and not isinstance(object, ndarray):
        raise ValueError("If you're trying to create a mxnet.numpy.ndarray from "
                         "mx.nd.NDArray, please use the zero-copy as_np_ndarray function.")
    if isinstance(object, NDArray):
        return wrap(copied(object._t, ctx.torch_device, torch_dtype(dtype) if dtype else None),
                    ctx)
    if dtype is None and hasattr(object, "dtype"):
        dtype = object.dtype
    t = to_tensor(object, None, dtype)
    if t.device != ctx.torch_device:
        t = t.to(ctx.torch_device)
    return wrap(t, ctx)


def _creator(fill):
    def create(shape, dtype=None, order="C", ctx=None, device=None):
        ctx = _dev(ctx, device)
        td = torch_dtype(dtype if dtype is not None else "float32")
        return wrap(torch.full(_shape(shape), fill, dtype=td, device=ctx.torch_device), ctx)
    return create


zeros = _creator(0)
zeros.__name__, zeros.__doc__ = "zeros", "Return a new array filled with zeros (float32)."
ones = _creator(1)
ones.__name__, ones.__doc__ = "ones", "Return a new array filled with ones (float32)."


def full(shape, fill_value, dtype=None, order="C", ctx=None, out=None, device=None):
    """Return a new array filled with ``fill_value`` (float32 unless ``dtype``)."""
    ctx = _dev(ctx, device)
    if isinstance(fill_value, NDArray):
        td = torch_dtype(dtype) if dtype else fill_value._t.dtype
        t = torch.broadcast_to(fill_value._t.to(td), _shape(shape)).clone()
    else:
        td = torch_dtype(dtype if dtype is not None else "float32")
        t = torch.full(_shape(shape), fill_value, dtype=td, device=ctx.torch_device)
    return _out(t, ctx, out)


def _out(t, ctx, out):
    if out is None:
        return wrap(t, ctx)
    with _grad_scope():
        out._t.copy_(t)
    return out


def _like(fill):
    def create(prototype, dtype=None, order="C", subok=False, shape=None, ctx=None,
               out=None, device=None):
        t = prototype._t if isinstance(prototype, NDArray) else to_tensor(prototype)
        ctx = ctx or device or _ctx_of(prototype)
        td = torch_dtype(dtype) if dtype is not None else t.dtype
        res = torch.full(tuple(t.shape) if shape is None else _shape(shape), fill,
                         dtype=td, device=ctx.torch_device)
        return _out(res, ctx, out)
    return create


zeros_like = _like(0)
zeros_like.__name__ = "zeros_like"
ones_like = _like(1)
ones_like.__name__ = "ones_like"
empty_like = _like(0)
empty_like.__name__ = "empty_like"


def full_like(a, fill_value, dtype=None, order="C", subok=False, shape=None, ctx=None,
              out=None, device=None):
    """Return an array of ``a``'s shape and dtype filled with ``fill_value``."""
    return _like(fill_value)(a, dtype, order, subok, shape, ctx, out, device)


def arange(start, stop=None, step=1, dtype=None, ctx=None, device=None):
    """Evenly spaced values in ``[start, stop)`` (float32 by default, as in MXNet)."""
    ctx = _dev(ctx, device)
    if stop is None:
        start, stop = 0, start
    td = torch_dtype(dtype if dtype is not None else "float32")
    n = max(int(onp.ceil((stop - start) / step)), 0)
    t = (torch.arange(n, dtype=torch.float64) * step + start).to(td)
    return wrap(t.to(ctx.torch_device), ctx)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             ctx=None, device=None):
    """``num`` evenly spaced samples over ``[start, stop]``."""
    ctx = _dev(ctx, device)
    a = onp.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, axis=axis)
    vals, step = (a if retstep else (a, None))
    vals = onp.asarray(vals).astype(onp.dtype(dtype) if dtype is not None else onp.float32)
    res = wrap(torch.from_numpy(vals).to(ctx.torch_device), ctx)
    return (res, step) if retstep else res


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None,
             device=None):
    """``num`` samples evenly spaced on a log scale."""
    ctx = _dev(ctx, device)
    a = onp.logspace(start, stop, num, endpoint=endpoint, base=base, axis=axis)
    a = a.astype(onp.dtype(dtype) if dtype is not None else onp.float32)
    return wrap(torch.from_numpy(a).to(ctx.torch_device), ctx)


def eye(N, M=None, k=0, dtype=None, ctx=None, device=None):
    """A 2-D array with ones on the ``k``-th diagonal."""
    ctx = _dev(ctx, device)
    a = onp.eye(N, M, k, dtype=onp.dtype(dtype) if dtype is not None else onp.float32)
    return wrap(torch.from_numpy(a).to(ctx.torch_device), ctx)


def identity(n, dtype=None, ctx=None, device=None):
    """The ``n x n`` identity matrix."""
    return eye(n, dtype=dtype, ctx=ctx, device=device)


def tri(N, M=None, k=0, dtype=None, ctx=None, device=None):
    """An array with ones at and below the ``k``-th diagonal."""
    ctx = _dev(ctx, device)
    a = onp.tri(N, M, k, dtype=onp.dtype(dtype) if dtype is not None else onp.float32)
    return wrap(torch.from_numpy(a).to(ctx.torch_device), ctx)


def indices(dimensions, dtype=None, ctx=None, device=None):
    """An array representing the indices of a grid (int64 default)."""
    ctx = _dev(ctx, device)
    a = onp.indices(dimensions, dtype=onp.dtype(dtype) if dtype is not None else onp.int64)
    return wrap(torch.from_numpy(a).to(ctx.torch_device), ctx)


@np_op
def meshgrid(*xi, indexing="xy", sparse=False, copy=True):
    """Coordinate matrices from coordinate vectors."""
    ts = [x._t.reshape(-1) for x in xi]
    ctx = _ctx_of(*xi)
    grids = torch.meshgrid(*ts, indexing=indexing)
    if sparse:
        shapes = [[1] * len(ts) for _ in ts]
        out = []
        for i, t in enumerate(ts):
            shp = shapes[i]
            pos = (1 - i if i < 2 else i) if indexing == "xy" and len(ts) > 1 else i
            shp[pos] = t.numel()
            out.append(wrap(t.reshape(shp).clone(), ctx))
        return out
    return [wrap(g.clone(), ctx) for g in grids]


@np_op
def tril(m, k=0):
    """Lower triangle of an array."""
    return wrap(torch.tril(m._t, k), m._ctx)


@np_op
def triu(m, k=0):
    """Upper triangle of an array."""
    return wrap(torch.triu(m._t, k), m._ctx)


def shape(a):
    """Return the shape of an array."""
    return a.shape


def real(val):
    """The real part of the elements.

    MXNet 1.9.1 answers with NumPy's ``real``: an mx array (never complex) gives a new
    array of its dtype; a list or scalar gives what NumPy gives.
    """
    return copy(val) if isinstance(val, NDArray) else onp.real(val)


def copy(a):
    """Return an array copy of the given object (differentiable, like MXNet's)."""
    if not isinstance(a, NDArray):
        return array(a)
    return wrap(copied(a._t), a._ctx)

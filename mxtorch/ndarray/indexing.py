"""NDArray ``__getitem__`` / ``__setitem__`` with MXNet 1.x semantics.

Basic indexing that selects a contiguous block (ints and unit-step slices on the leading
axes) returns a view sharing memory, as MXNet's ``_at``/``_slice`` do; other basic
indexing returns a copy, as MXNet's ``slice`` operator does. Legacy arrays are never 0-d:
an index that selects one element gives shape ``(1,)``.
"""
from __future__ import annotations

import numbers

import numpy as np
import torch

from .. import autograd as _ag
from ..base import MXNetError
from ..ops import intgrad as _intgrad
from .ndarray import NDArray, _wrap, array, int_followed

__all__ = ["getitem", "setitem", "slice_is_contiguous", "get_indexing_dispatch_code",
           "indexing_key_expand_implicit_axes", "get_oshape_of_gather_nd_op"]

# MXNet's dispatch codes and 0-d boolean index markers
_NDARRAY_UNSUPPORTED_INDEXING = -1
_NDARRAY_BASIC_INDEXING = 0
_NDARRAY_ADVANCED_INDEXING = 1
_NDARRAY_EMPTY_TUPLE_INDEXING = 2
_NDARRAY_NO_ZERO_DIM_BOOL_ARRAY = -1
_NDARRAY_ZERO_DIM_BOOL_ARRAY_FALSE = 0
_NDARRAY_ZERO_DIM_BOOL_ARRAY_TRUE = 1


def _convert_key(key, device):
    """Translate an MXNet index into a torch index (NDArray/list -> int64 tensor)."""
    if isinstance(key, tuple):
        return tuple(_convert_one(k, device) for k in key), any(
            _is_advanced(k) for k in key)
    return _convert_one(key, device), _is_advanced(key)


def _is_advanced(k) -> bool:
    return isinstance(k, (NDArray, list, np.ndarray, torch.Tensor)) and not isinstance(k, bool)


def _convert_one(k, device):
    if isinstance(k, NDArray):
        t = k._t.detach()
        return t if t.dtype == torch.bool else t.to(torch.int64)
    if isinstance(k, (list, np.ndarray)):
        a = np.asarray(k)
        if a.dtype == np.bool_:
            return torch.from_numpy(a).to(device)
        return torch.as_tensor(a.astype(np.int64), device=device)
    if isinstance(k, np.integer):
        return int(k)
    return k


def _check_bounds(arr: NDArray, key) -> None:
    keys = key if isinstance(key, tuple) else (key,)
    shape = arr.shape
    axis = 0
    for k in keys:
        if k is None:
            continue
        if k is Ellipsis:
            axis = len(shape) - (len([x for x in keys if x is not None]) - 1 - axis)
            continue
        if axis >= len(shape):
            raise IndexError(f"too many indices ({len(keys)}) for an array of shape {shape}")
        if isinstance(k, numbers.Integral) and not isinstance(k, bool):
            if not -shape[axis] <= k < shape[axis]:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size "
                                 f"{shape[axis]}")
        axis += 1


def _positive_steps(shape: tuple, key) -> tuple | None:
    """Rewrite negative-step slices as positive ones plus output axes to flip.

    Returns ``(key, flip_axes)`` or ``None`` when the key has no negative step.
    """
    keys = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in keys):
        return None
    if Ellipsis in keys:
        i = keys.index(Ellipsis)
        used = len([k for k in keys if k is not None and k is not Ellipsis])
        keys = keys[:i] + (slice(None),) * (len(shape) - used) + keys[i + 1:]
    out, flips, axis, out_axis = [], [], 0, 0
    for k in keys:
        if k is None:
            out.append(k)
            out_axis += 1
            continue
        if isinstance(k, slice) and k.step is not None and k.step < 0:
            r = range(*k.indices(shape[axis]))
            k = slice(r[-1], r[0] + 1, -k.step) if len(r) else slice(0, 0)
            flips.append(out_axis)
        out.append(k)
        axis += 1
        if not isinstance(k, numbers.Integral):
            out_axis += 1
    return tuple(out), flips


def getitem(arr: NDArray, key) -> NDArray:
    if isinstance(key, slice) and key.step is None and key.start is None and key.stop is None:
        return arr
    t = arr._t
    tkey, advanced = _convert_key(key, t.device)
    pos = None
    if not advanced:
        _check_bounds(arr, key)
        pos = _positive_steps(arr.shape, tkey)
    try:
        res = _indexed(t, tkey, advanced, pos)
    except (IndexError, RuntimeError) as err:
        raise IndexError(f"index {key!r} is invalid for an array of shape {arr.shape}: "
                         f"{err}") from None
    if not res.requires_grad and _ag._STATE.recording and \
            _intgrad.involved((t,), res.is_floating_point()):
        # an integer array's gradient (ops/intgrad.py): the same indexing of its shadow
        res = int_followed(lambda s: _indexed(s, tkey, advanced, pos), None, {}, (t,), res)
    return _wrap(res, arr._ctx)


def _indexed(t: torch.Tensor, tkey, advanced: bool, pos) -> torch.Tensor:
    """``t[tkey]`` as MXNet indexes: basic contiguous keys give views, other basic keys
    copies (negative steps read backwards, ``pos`` from :func:`_positive_steps`), and one
    selected element has shape ``(1,)``."""
    if pos is not None:  # MXNet's slice op: a copy, read backwards
        res = t[pos[0]].flip(pos[1]) if pos[1] else t[pos[0]]
        return res.reshape(1) if res.dim() == 0 else res
    if advanced:
        flipped = _flipped_steps(t.shape, tkey)
        if flipped is not None:
            tkey, axes = flipped
            t = t.flip(axes)
    res = t[tkey]
    if res.dim() == 0:
        return res.reshape(1)
    if not advanced and not res.is_contiguous():
        return res.clone()
    return res


def _flipped_steps(shape: tuple, key) -> tuple | None:
    """For a key with index arrays (torch cannot take a negative step next to them):
    ``(key, axes)`` such that ``t.flip(axes)[key]`` is ``t[original key]``, each
    negative-step slice rewritten over the flipped axis; None without negative steps."""
    keys = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in keys):
        return None

    def width(k) -> int:   # the input axes an index consumes
        if k is None:
            return 0
        if isinstance(k, torch.Tensor) and k.dtype == torch.bool:
            return max(k.dim(), 1)
        return 1

    if Ellipsis in keys:
        i = keys.index(Ellipsis)
        used = sum(width(k) for k in keys if k is not Ellipsis)
        keys = keys[:i] + (slice(None),) * (len(shape) - used) + keys[i + 1:]
    out, axes, axis = [], [], 0
    for k in keys:
        if isinstance(k, slice) and k.step is not None and k.step < 0:
            n = shape[axis]
            r = range(*k.indices(n))
            k = slice(n - 1 - r[0], n - r[-1], -k.step) if len(r) else slice(0, 0)
            axes.append(axis)
        out.append(k)
        axis += width(k)
    return tuple(out), axes


def setitem(arr: NDArray, key, value) -> None:
    t = arr._t
    if isinstance(value, NDArray):
        v = value._t
    elif isinstance(value, (numbers.Number, np.generic)):
        v = value.item() if isinstance(value, np.generic) else value  # torch takes no np scalar
    else:
        v = torch.as_tensor(np.asarray(value), dtype=t.dtype, device=t.device)
    recorded = False
    if _ag._STATE.recording:
        if not t.is_floating_point() and _recorded(t):
            # MXNet: an array in the graph takes no writes under record() (torch records
            # writes into float arrays; an integer array's shadow would go stale)
            raise MXNetError(_intgrad.IN_GRAPH)
        # a recorded value written into an array outside the graph
        recorded = isinstance(v, torch.Tensor) and _recorded(v) and not _recorded(t)
    if isinstance(key, slice) and key.start is None and key.stop is None and key.step is None:
        tkey = slice(None)
        advanced = False
    else:
        tkey, advanced = _convert_key(key, t.device)
        if not advanced:
            _check_bounds(arr, key)
        if recorded and (advanced or not _whole(t, tkey)):
            # MXNet: writing a recorded value into part of an array is an in-place operation
            raise MXNetError(_intgrad.INPLACE)
        if not advanced:
            pos = _positive_steps(arr.shape, tkey)
            if pos is not None:
                view = t[pos[0]]
                tkey = pos[0]
                if isinstance(v, torch.Tensor):
                    v = torch.broadcast_to(_fit_dims(v.to(t.dtype), view.dim()),
                                           view.shape).flip(pos[1])
    if recorded and _recorded_write(t, tkey, v):
        return
    flipped = _flipped_steps(t.shape, tkey) if advanced else None
    if flipped is not None:   # write into the flipped copy, then copy it back
        tkey, axes = flipped
        target = t.detach().flip(axes)
        try:
            _assign(target, tkey, v)
        except RuntimeError as err:
            raise MXNetError(f"cannot assign to index {key!r} of an array of shape "
                             f"{arr.shape}: {err}") from None
        with torch.no_grad():
            t.copy_(target.flip(axes))
        return
    no_grad = t.requires_grad and not _ag._STATE.recording
    try:
        if no_grad:
            with torch.no_grad():
                _assign(t, tkey, v)
        else:
            _assign(t, tkey, v)
    except RuntimeError as err:
        tgt = tuple(t[tkey].shape) if not advanced else "indexed"
        vshape = tuple(v.shape) if isinstance(v, torch.Tensor) else ()
        raise MXNetError(f"cannot assign a value of shape {vshape} to {tgt} of an array of "
                         f"shape {arr.shape}: {err}") from None


def _whole(t: torch.Tensor, tkey) -> bool:
    """Whether the basic key ``tkey`` selects all of ``t`` with positive steps (MXNet then
    copies the value over the array instead of assigning into a slice)."""
    keys = tkey if isinstance(tkey, tuple) else (tkey,)
    if any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in keys):
        return False
    return t[tkey].numel() == t.numel()


def _fit_dims(v: torch.Tensor, ndim: int) -> torch.Tensor:
    """``v`` without the leading length-1 axes beyond ``ndim`` (NumPy assigns a (1, 1, 4)
    value to a (8, 4) target)."""
    while v.dim() > ndim and v.shape[0] == 1:
        v = v[0]
    return v


def _recorded_write(t: torch.Tensor, tkey, v: torch.Tensor) -> bool:
    """Write the recorded value ``v`` over the whole array ``t`` under ``record()``: an
    integer array takes the values and, as MXNet records the copy, the gradient path of
    a cast (ops/intgrad.py). False where torch records the write itself (float arrays)."""
    if t.is_floating_point():
        return False
    with torch.no_grad():
        _assign(t, tkey, v)
    _intgrad.follow(lambda s: torch.broadcast_to(s, t[tkey].shape).reshape(t.shape), (v,), t)
    return True


def _recorded(t: torch.Tensor) -> bool:
    """Whether ``t`` is on the recorded graph (an integer tensor through its shadow)."""
    return t.requires_grad or (not t.is_floating_point()
                               and getattr(t, _intgrad.SHADOW, None) is not None)


def _assign(t: torch.Tensor, tkey, v) -> None:
    if isinstance(v, torch.Tensor):
        v = v.to(t.dtype) if v.dtype != t.dtype else v
        if isinstance(tkey, slice) and tkey == slice(None):
            t.copy_(v.reshape(t.shape) if v.numel() == t.numel() and v.dim() != t.dim()
                    and v.shape != torch.Size([]) and not _broadcastable(v.shape, t.shape)
                    else v)
            return
        t[tkey] = v
    else:
        t[tkey] = v


def _broadcastable(src, dst) -> bool:
    try:
        torch.broadcast_shapes(tuple(src), tuple(dst))
        return True
    except RuntimeError:
        return False



# ---------------------------------------------------------------------- MXNet's key helpers
def slice_is_contiguous(slc_key: tuple, shape: tuple) -> bool:
    """Whether basic indexing with ``slc_key`` (one slice per axis) selects a contiguous
    block: reading axes from the last one, once a slice takes a proper part of its axis
    every slice before it may take at most one element, and a slice of several elements
    must have step 1.
    """
    if len(slc_key) != len(shape):
        raise AssertionError(f"{len(slc_key)} slices for a shape of {len(shape)} axes")
    counts = [len(range(*k.indices(n))) for k, n in zip(slc_key, shape)]
    if int(np.prod(counts)) in (0, 1):
        return True
    partial = False
    for k, n, count in zip(reversed(slc_key), reversed(shape), reversed(counts)):
        step = k.indices(n)[2]
        if count == 0:
            return True
        if count > 1 and (step != 1 or partial):
            return False
        partial = partial or count < n
    return True


def get_indexing_dispatch_code(key: tuple) -> int:
    """0 for basic indexing (ints, slices, None), 1 for advanced indexing (arrays, lists,
    tuples, ranges), 2 for an empty tuple inside the key; ValueError for other types."""
    if not isinstance(key, tuple):
        raise AssertionError(f"key must be a tuple, got {type(key).__name__}")
    for k in key:
        if isinstance(k, (NDArray, np.ndarray, list, tuple, range)):
            if isinstance(k, tuple) and not k:
                return _NDARRAY_EMPTY_TUPLE_INDEXING
            return _NDARRAY_ADVANCED_INDEXING
        if not (k is None or isinstance(k, (slice, numbers.Integral))):
            raise ValueError(f"NDArray does not support slicing with key {k} of type "
                             f"{type(k)}.")
    return _NDARRAY_BASIC_INDEXING


def indexing_key_expand_implicit_axes(key, shape: tuple) -> tuple:
    """Make implicit axes explicit: the ellipsis (or the missing trailing axes) becomes
    ``slice(None)`` per axis it stands for; a 0-d integer array becomes an int and a
    boolean array its ``nonzero()`` indices (NumPy mode only).

    Returns ``(expanded key, prepend)``; ``prepend`` is -1 without a 0-d boolean index,
    else 1 (True: a new axis) or 0 (False: a new axis of size 0).
    """
    from ..util import is_np_array
    keys = key if isinstance(key, tuple) else (key,)
    ell_idx = None
    num_none = 0
    prepend = _NDARRAY_NO_ZERO_DIM_BOOL_ARRAY
    flat: list = []
    axis = 0
    for i, k in enumerate(keys):
        if k is Ellipsis:
            if ell_idx is not None:
                raise IndexError("Cannot use more than one ellipsis (`...`) for indexing")
            ell_idx = i
            continue
        if isinstance(k, bool):
            k = array(k, dtype=np.bool_)
        if k is None:
            num_none += 1
        is_bool = isinstance(k, NDArray) and k.dtype in (np.bool_, np.dtype(np.bool_))
        if isinstance(k, NDArray) and k.ndim == 0 and is_bool:
            if prepend != _NDARRAY_ZERO_DIM_BOOL_ARRAY_FALSE:   # False wins
                prepend = int(bool(k.item()))
        elif isinstance(k, NDArray) and k.ndim == 0:
            flat.append(int(k.item()))
            axis += 1
        elif is_bool:
            for j, size in enumerate(k.shape):
                if shape[axis + j] != size:
                    raise IndexError(f"boolean index did not match indexed array along axis "
                                     f"{axis + j}; size is {shape[axis + j]} but "
                                     f"corresponding boolean size is {size}")
            if not is_np_array():
                raise ValueError("Cannot perform boolean indexing in legacy mode. Please "
                                 "activate numpy semantics by calling `npx.set_np()` in the "
                                 "global scope before calling this function.")
            flat.extend(k.nonzero())
            axis += k.ndim
        else:
            flat.append(k)
            axis += 1
    if ell_idx is None:
        ell_idx = len(flat)
    fill = (slice(None),) * (len(shape) + num_none - len(flat))
    return tuple(flat[:ell_idx]) + fill + tuple(flat[ell_idx:]), prepend


def get_oshape_of_gather_nd_op(dshape: tuple, ishape: tuple) -> tuple:
    """The output shape of ``gather_nd`` for data shape ``dshape`` and indices shape
    ``ishape``: ``ishape[1:] + dshape[ishape[0]:]``."""
    if not (dshape and ishape):
        raise AssertionError("gather_nd needs non-empty data and index shapes")
    return tuple(ishape[1:]) + tuple(dshape[ishape[0]:])

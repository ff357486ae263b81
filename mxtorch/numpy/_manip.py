"""Array-manipulation functions of ``mx.np`` (NumPy semantics, straight torch calls)."""
from __future__ import annotations

import numpy as onp
import torch

from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from ._math import _promote
from .multiarray import _ctx_of, np_op, to_tensor, wrap


def _t(x):
    return x._t if isinstance(x, NDArray) else to_tensor(x)


def _w(t, like):
    return wrap(t, _ctx_of(like) if not isinstance(like, (list, tuple)) else _ctx_of(*like))


def _cat_dtype(ts):
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = _promote(dt, t.dtype)
    return dt


@np_op
def reshape(a, newshape, order="C"):
    """Give a new shape to an array without changing its data (a view when possible)."""
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    shape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    t = _t(a)
    _check_reshape(t.numel(), shape)
    return _w(t.reshape(shape), a)


def _check_reshape(size: int, shape: tuple) -> None:
    """MXNet's errors for a shape the array cannot take (one -1 at most, sizes agree)."""
    unknown = [d for d in shape if d < 0]
    if len(unknown) > 1 or any(d != -1 for d in unknown):
        raise MXNetError(f"reshape: Can only specify one unknown dimension (-1), got shape "
                         f"{list(shape)}")
    known = int(onp.prod([d for d in shape if d >= 0], dtype=onp.int64))
    if (size != known) if not unknown else (known == 0 or size % known):
        raise MXNetError(f"reshape: Cannot reshape array of size {size} into shape "
                         f"{list(shape)}")


@np_op
def transpose(a, axes=None):
    """Permute the dimensions of an array (reverse them by default)."""
    t = _t(a)
    axes = tuple(reversed(range(t.dim()))) if axes is None else tuple(axes)
    return _w(t.permute(axes), a)


@np_op
def swapaxes(a, axis1, axis2):
    """Interchange two axes."""
    return _w(_t(a).transpose(axis1, axis2), a)


@np_op
def moveaxis(a, source, destination):
    """Move axes to new positions."""
    return _w(_t(a).movedim(source, destination), a)


@np_op
def expand_dims(a, axis):
    """Insert new axes of length one."""
    t = _t(a)
    axes = (int(axis),) if isinstance(axis, (int, onp.integer)) else tuple(axis)
    nd = t.dim() + len(axes)
    for ax in sorted(ax % nd for ax in axes):
        t = t.unsqueeze(ax)
    return _w(t, a)


@np_op
def squeeze(a, axis=None):
    """Remove axes of length one."""
    t = _t(a)
    if axis is None:
        return _w(t.squeeze(), a)
    axes = (int(axis),) if isinstance(axis, (int, onp.integer)) else tuple(axis)
    for ax in axes:
        if t.shape[ax] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not "
                             "equal to one")
    return _w(t.squeeze(axes), a)


@np_op
def concatenate(seq, axis=0, out=None):
    """Join arrays along an existing axis (``axis=None`` flattens first)."""
    ts = [_t(x) for x in seq]
    dt = _cat_dtype(ts)
    if axis is None:
        ts, axis = [t.reshape(-1) for t in ts], 0
    res = torch.cat([t.to(dt) for t in ts], dim=axis)
    if out is not None:
        out._t.copy_(res)
        return out
    return _w(res, list(seq))


concat = concatenate


@np_op
def stack(arrays, axis=0, out=None):
    """Join arrays along a new axis."""
    ts = [_t(x) for x in arrays]
    dt = _cat_dtype(ts)
    return _w(torch.stack([t.to(dt) for t in ts], dim=axis), list(arrays))


def _atleast(n):
    def fn(*arys):
        res = []
        for x in arys:
            t = _t(x)
            if n == 1:
                t = t.reshape(1) if t.dim() == 0 else t
            elif n == 2:
                t = torch.atleast_2d(t)
            else:
                t = t.reshape(1, -1, 1) if t.dim() == 1 else torch.atleast_3d(t)
            res.append(_w(t, x))
        return res[0] if len(res) == 1 else res
    fn.__name__ = f"atleast_{n}d"
    fn.__doc__ = f"View inputs as arrays with at least {n} dimensions."
    return np_op(fn)


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def vstack(arrays, out=None):
    """Stack arrays vertically (row-wise)."""
    return concatenate(atleast_2d(*arrays) if len(arrays) > 1 else [atleast_2d(*arrays)], 0)


row_stack = vstack


def hstack(arrays):
    """Stack arrays horizontally (column-wise)."""
    arrs = atleast_1d(*arrays) if len(arrays) > 1 else [atleast_1d(*arrays)]
    return concatenate(arrs, 0 if arrs[0].ndim == 1 else 1)


def dstack(arrays):
    """Stack arrays along the third axis."""
    return concatenate(atleast_3d(*arrays) if len(arrays) > 1 else [atleast_3d(*arrays)], 2)


def column_stack(tup):
    """Stack 1-D arrays as columns of a 2-D array."""
    cols = [x.reshape(-1, 1) if x.ndim < 2 else x for x in tup]
    return concatenate(cols, 1)


@np_op
def array_split(ary, indices_or_sections, axis=0):
    """Split into sub-arrays (sections need not divide the axis evenly)."""
    t = _t(ary)
    if isinstance(indices_or_sections, int):
        return [_w(p, ary) for p in torch.tensor_split(t, indices_or_sections, dim=axis)]
    return [_w(p, ary) for p in torch.tensor_split(t, list(indices_or_sections), dim=axis)]


def split(ary, indices_or_sections, axis=0):
    """Split into equal sub-arrays (or at the given indices)."""
    if isinstance(indices_or_sections, int) and ary.shape[axis] % indices_or_sections:
        raise ValueError("array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """Split horizontally (column-wise)."""
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """Split vertically (row-wise)."""
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """Split along the third axis."""
    return split(ary, indices_or_sections, 2)


@np_op
def tile(A, reps):
    """Repeat an array ``reps`` times."""
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    return _w(torch.tile(_t(A), reps), A)


@np_op
def repeat(a, repeats, axis=None):
    """Repeat each element of an array."""
    t = _t(a)
    if axis is None:
        t, axis = t.reshape(-1), 0
    reps = repeats._t if isinstance(repeats, NDArray) else repeats
    return _w(torch.repeat_interleave(t, reps, dim=axis), a)


@np_op
def flip(m, axis=None):
    """Reverse the order of elements along the given axes."""
    t = _t(m)
    axes = tuple(range(t.dim())) if axis is None else (
        (int(axis),) if isinstance(axis, (int, onp.integer)) else tuple(axis))
    return _w(torch.flip(t, axes), m)


def fliplr(m):
    """Flip left/right (axis 1)."""
    return flip(m, 1)


def flipud(m):
    """Flip up/down (axis 0)."""
    return flip(m, 0)


@np_op
def roll(a, shift, axis=None):
    """Roll elements along an axis."""
    t = _t(a)
    if axis is None:
        return _w(torch.roll(t.reshape(-1), shift).reshape(t.shape), a)
    return _w(torch.roll(t, shift, axis), a)


@np_op
def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees in the plane of ``axes``."""
    return _w(torch.rot90(_t(m), k, tuple(axes)), m)


@np_op
def broadcast_to(array, shape):  # NumPy's name
    """Broadcast an array to a new shape."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return _w(torch.broadcast_to(_t(array), shape), array)


@np_op
def broadcast_arrays(*args):
    """Broadcast arrays against each other."""
    return [_w(t, x) for t, x in zip(torch.broadcast_tensors(*[_t(x) for x in args]), args)]


@np_op
def ravel(x, order="C"):
    """Return a flattened array."""
    return _w(_t(x).reshape(-1), x)


@np_op
def clip(a, a_min, a_max, out=None):
    """Limit the values in an array (bounds cast to the array's dtype)."""
    t = _t(a)
    lo = a_min._t if isinstance(a_min, NDArray) else a_min
    hi = a_max._t if isinstance(a_max, NDArray) else a_max
    res = torch.clamp(t, lo, hi).to(t.dtype)
    if out is not None:
        out._t.copy_(res)
        return out
    return _w(res, a)


@np_op
def where(condition, x=None, y=None):
    """Elements from ``x`` or ``y`` by ``condition``; ``nonzero`` with one argument."""
    if x is None and y is None:
        return nonzero(condition)
    c = _t(condition).to(torch.bool)
    tx = _t(x) if isinstance(x, NDArray) else None
    ty = _t(y) if isinstance(y, NDArray) else None
    dt = tx.dtype if tx is not None else (ty.dtype if ty is not None else torch.float32)
    if tx is not None and ty is not None:
        dt = _promote(tx.dtype, ty.dtype)
    tx = tx.to(dt) if tx is not None else torch.tensor(x, dtype=dt, device=c.device)
    ty = ty.to(dt) if ty is not None else torch.tensor(y, dtype=dt, device=c.device)
    return _w(torch.where(c, tx, ty), condition)


@np_op
def nonzero(a):
    """Indices of the non-zero elements, one int64 array per dimension."""
    t = _t(a)
    if t.dim() == 0:
        t = t.reshape(1)
    return tuple(_w(i, a) for i in torch.nonzero(t, as_tuple=True))


@np_op
def argwhere(a):
    """Indices of the non-zero elements, grouped by element."""
    return _w(torch.argwhere(_t(a)), a)


@np_op
def flatnonzero(a):
    """Indices of the non-zero elements of the flattened array."""
    return _w(torch.nonzero(_t(a).reshape(-1)).reshape(-1), a)


def pad(x, pad_width, mode="constant", **kwargs):
    """Pad an array (all NumPy modes, computed on the host)."""
    a = onp.pad(x.asnumpy(), pad_width, mode=mode, **kwargs)
    return wrap(torch.from_numpy(a).to(x._t.device), x._ctx)


@np_op
def take(a, indices, axis=None, mode="raise", out=None):
    """Take elements along an axis (``mode`` raise/wrap/clip)."""
    t = _t(a)
    idx = (indices._t if isinstance(indices, NDArray) else torch.as_tensor(indices)).long()
    if axis is None:
        t, axis = t.reshape(-1), 0
    n = t.shape[axis]
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = idx.clamp(0, n - 1)
    elif mode == "raise" and idx.numel() and (int(idx.max()) >= n or int(idx.min()) < -n):
        raise IndexError(f"take: index out of bounds for axis {axis} with size {n}")
    res = torch.index_select(t, axis, (idx % n if n else idx).reshape(-1))
    shape = t.shape[:axis] + idx.shape + t.shape[axis + 1:]
    return _w(res.reshape(shape), a)


@np_op
def diag(v, k=0):
    """Extract a diagonal or construct a diagonal array."""
    return _w(torch.diag(_t(v), k), v)


@np_op
def diagonal(a, offset=0, axis1=0, axis2=1):
    """Return specified diagonals."""
    return _w(torch.diagonal(_t(a), offset, axis1, axis2), a)


@np_op
def diagflat(v, k=0):
    """2-D array with the flattened input on the diagonal."""
    return _w(torch.diagflat(_t(v), k), v)


def _host(fn_name):
    def fn(arr, *args, **kwargs):
        a = getattr(onp, fn_name)(arr.asnumpy(), *[x.asnumpy() if isinstance(x, NDArray)
                                                    else x for x in args], **kwargs)
        return wrap(torch.from_numpy(onp.ascontiguousarray(a)).to(arr._t.device), arr._ctx)
    fn.__name__ = fn_name
    fn.__doc__ = f"NumPy's ``{fn_name}`` (data-dependent shape, computed on the host)."
    return fn


append = _host("append")
insert = _host("insert")
delete = _host("delete")
resize = _host("resize")


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """Sorted unique elements; index/inverse/counts arrays are int64."""
    res = onp.unique(ar.asnumpy(), return_index, return_inverse, return_counts, axis)
    if not isinstance(res, tuple):
        return wrap(torch.from_numpy(res).to(ar._t.device), ar._ctx)
    outs = [wrap(torch.from_numpy(onp.ascontiguousarray(r)).to(ar._t.device), ar._ctx)
            for r in res]
    return tuple(outs)


@np_op
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """n-th discrete difference along an axis."""
    pre = _t(prepend) if prepend is not None else None
    app = _t(append) if append is not None else None
    return _w(torch.diff(_t(a), n, axis, pre, app), a)


@np_op
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened array."""
    t = torch.diff(_t(ary).reshape(-1))
    parts = [_t(to_begin).reshape(-1).to(t.dtype)] if to_begin is not None else []
    parts.append(t)
    if to_end is not None:
        parts.append(_t(to_end).reshape(-1).to(t.dtype))
    return _w(torch.cat(parts), ary)

"""NDArray's operator methods, installed on the class when ``mx.nd`` is imported.

Every operator the registry marks ``fluent`` becomes a method that *is* its ``mx.nd``
function (``x.sum(axis=1)`` calls ``mx.nd.sum(x, axis=1)`` with no wrapper in between).
The methods MXNet writes in Python over the operators (``flatten``, ``expand_dims`` and
``squeeze`` with ``inplace``, ``broadcast_to``'s shape check, ``split_v2``, ...) are here
too; a method the class defines itself (``reshape``, ``astype``) is kept.
"""
from __future__ import annotations

from .indexing import slice_is_contiguous
from .ndarray import NDArray, invoke, to_dlpack_for_read, to_dlpack_for_write
from .register import fluent_functions

__all__ = ["install"]


def flatten(self, inplace=False):
    """Collapse every axis but the first: ``(d1, d2*...*dk)``.

    Parameters
    ----------
    inplace : bool, default False
        True: a view sharing memory with this array; False: a copy.
    """
    return self.reshape((0, -1)) if inplace else invoke("Flatten", [self], {})


def expand_dims(self, axis, inplace=False):
    """Insert an axis of size 1 at ``axis`` (in ``[-ndim-1, ndim]``).

    Parameters
    ----------
    axis : int
        Where the new axis goes.
    inplace : bool, default False
        True: a view sharing memory with this array; False: a copy.
    """
    if not inplace:
        return invoke("expand_dims", [self], {"axis": axis})
    shape = list(self.shape)
    if not -len(shape) - 1 <= axis <= len(shape):
        raise AssertionError(f"axis {axis} is out of range for {len(shape)}d array")
    shape.insert(axis + len(shape) + 1 if axis < 0 else axis, 1)
    return self.reshape(shape)


def squeeze(self, axis=None, inplace=False):
    """Remove axes of size 1 (all of them, or those in ``axis``).

    Parameters
    ----------
    axis : int, tuple of int or None
        The axes to remove; each must have size 1.
    inplace : bool, default False
        True: a view sharing memory with this array; False: a copy.
    """
    if not inplace:
        return invoke("squeeze", [self], {"axis": axis})
    shape = list(self.shape)
    axes = [axis] if isinstance(axis, int) else axis
    if axes:
        if len(axes) != len(set(axes)):
            raise AssertionError(f"axis {axes} contains duplicate which is not allowed.")
        for a in axes:
            if not -len(shape) <= a < len(shape):
                raise AssertionError(f"axis {a} is out of range for {len(shape)}d array")
            if shape[a] != 1:
                raise AssertionError(f"Squeeze target axis {a} must be size 1, got "
                                     f"{shape[a]}.")
        drop = {a % len(shape) for a in axes}
    else:
        drop = {i for i, d in enumerate(shape) if d == 1}
    # MXNet: a legacy array keeps at least one axis
    return self.reshape([d for i, d in enumerate(shape) if i not in drop] or [1])


def broadcast_to(self, shape):
    """Broadcast size-1 axes (and missing leading ones) to ``shape``; a copy.

    Parameters
    ----------
    shape : tuple of int
        The target shape (a list or a NumPy array of ints also works).
    """
    shape = tuple(int(d) for d in shape)
    cur = self.shape
    err = (f"operands could not be broadcast together with remapped shapes"
           f"[original->remapped]: {cur} and requested shape {shape}")
    if len(shape) < len(cur):
        raise ValueError(err)
    padded = (1,) * (len(shape) - len(cur)) + cur
    if any(c != 1 and c != s for c, s in zip(padded, shape)):
        raise ValueError(err)
    data = self.reshape(padded) if padded != cur else self
    return invoke("broadcast_to", [data], {"shape": shape})


def broadcast_like(self, other):
    """Broadcast to ``other``'s shape (see :meth:`broadcast_to`)."""
    return self.broadcast_to(other.shape)


def split_v2(self, *args, **kwargs):
    """Split into sections or at indices (:func:`mxnet.ndarray.split_v2` on this array)."""
    from .utils import split_v2 as _split_v2
    return _split_v2(self, *args, **kwargs)


def slice_assign(self, rhs, begin, end, step):
    """Write ``rhs`` into the slice ``begin:end:step`` of this array; returns this array."""
    return invoke("_slice_assign", [self, rhs], {"begin": begin, "end": end, "step": step},
                  out=self)


def slice_assign_scalar(self, value, begin, end, step):
    """Write the scalar ``value`` into the slice ``begin:end:step``; returns this array."""
    return invoke("_slice_assign_scalar", [self], {"scalar": value, "begin": begin,
                                                   "end": end, "step": step}, out=self)


def _to_dlpack_for_read(self):
    """A DLPack capsule of this array, for reading (see ``mx.nd.to_dlpack_for_read``)."""
    return to_dlpack_for_read(self)


def _to_dlpack_for_write(self):
    """A DLPack capsule of this array, for writing (see ``mx.nd.to_dlpack_for_write``)."""
    return to_dlpack_for_write(self)


# MXNet's Python methods over the shape operators (mx.np.ndarray has its own or none)
_OPERATOR_METHODS = {"flatten": flatten, "expand_dims": expand_dims, "squeeze": squeeze,
                     "broadcast_to": broadcast_to, "broadcast_like": broadcast_like,
                     "split_v2": split_v2}
# ... and the array methods every NDArray kind shares
_ARRAY_METHODS = {"slice_assign": slice_assign, "slice_assign_scalar": slice_assign_scalar,
                  "to_dlpack_for_read": _to_dlpack_for_read,
                  "to_dlpack_for_write": _to_dlpack_for_write,
                  "_basic_indexing_slice_is_contiguous": staticmethod(slice_is_contiguous)}

OPERATOR_METHODS: list[str] = []   # the operator methods install() gave NDArray


def install(cls: type = NDArray) -> None:
    """Give ``cls`` the methods above and a method per fluent operator (names the class
    defines itself are kept)."""
    operator_methods = dict(fluent_functions())
    operator_methods.update(_OPERATOR_METHODS)
    for name, fn in operator_methods.items():
        if name not in cls.__dict__:
            setattr(cls, name, fn)
            OPERATOR_METHODS.append(name)
    for name, fn in _ARRAY_METHODS.items():
        if name not in cls.__dict__:
            setattr(cls, name, fn)

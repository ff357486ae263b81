"""``mx.nd`` Python-level helpers: creation wrappers, scalar-aware binary functions,
and ``save``/``load`` in MXNet's binary format."""
from __future__ import annotations

import numbers
import os
import warnings

import numpy as np

from ..base import MXNetError
from ..context import Context, current_context
from ..format import image_codec as _codec
from ..format.fileset import write_file
from ..format.npy import NPY_MAGIC, read_npy, read_npz
from ..format.params import dumps, loads
from ..util import is_np_shape
from .ndarray import NDArray, _from_numpy, _wrap, array, empty, invoke  # noqa: F401

__all__ = ["zeros", "ones", "full", "arange", "linspace", "eye", "save", "load",
           "load_frombuffer", "add", "subtract", "multiply", "divide", "true_divide",
           "modulo", "power", "maximum", "minimum", "equal", "not_equal", "greater",
           "greater_equal", "lesser", "lesser_equal", "logical_and", "logical_or",
           "logical_xor", "hypot", "moveaxis", "concatenate", "onehot_encode", "histogram",
           "split_v2", "imdecode", "fill_element_0index"]


def _ctx(ctx) -> Context:
    if ctx is None:
        return current_context()
    if isinstance(ctx, str):
        kind, _, rest = ctx.partition("(")
        return Context(kind, int(rest.rstrip(")") or 0))
    return ctx


def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, numbers.Integral) else tuple(shape)


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs) -> NDArray:
    """An array of zeros (float32 by default)."""
    return invoke("_zeros", [], {"shape": _shape(shape), "dtype": dtype or "float32"},
                  ctx=_ctx(ctx), out=kwargs.get("out"))


def ones(shape, ctx=None, dtype=None, **kwargs) -> NDArray:
    """An array of ones (float32 by default)."""
    return invoke("_ones", [], {"shape": _shape(shape), "dtype": dtype or "float32"},
                  ctx=_ctx(ctx), out=kwargs.get("out"))


def full(shape, val, ctx=None, dtype=np.float32, out=None) -> NDArray:
    """An array filled with ``val``."""
    return invoke("_full", [], {"shape": _shape(shape), "value": val,
                                "dtype": dtype or "float32"}, ctx=_ctx(ctx), out=out)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None,
           dtype=np.float32) -> NDArray:
    """Evenly spaced values in ``[start, stop)``; each value repeated ``repeat`` times."""
    return invoke("_arange", [], {"start": start, "stop": stop, "step": step,
                                  "repeat": repeat, "dtype": dtype or "float32"}, ctx=_ctx(ctx))


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=np.float32) -> NDArray:
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    return invoke("_linspace", [], {"start": start, "stop": stop, "num": num,
                                    "endpoint": endpoint, "dtype": dtype or "float32"},
                  ctx=_ctx(ctx))


def eye(N, M=0, k=0, ctx=None, dtype=None, **kwargs) -> NDArray:
    """A 2-D array with ones on the ``k``-th diagonal."""
    return invoke("_eye", [], {"N": N, "M": M, "k": k, "dtype": dtype or "float32"},
                  ctx=_ctx(ctx))


# ------------------------------------------------------------------ binary helpers
def _ufunc(lhs, rhs, array_op, lscalar_op, rscalar_op, np_fn):
    """MXNet's ``_ufunc_helper``: dispatch on NDArray / scalar operands."""
    if isinstance(lhs, numbers.Number) and isinstance(rhs, numbers.Number):
        return np_fn(lhs, rhs)
    if isinstance(rhs, numbers.Number) or isinstance(rhs, np.generic):
        return invoke(lscalar_op, [lhs], {"scalar": rhs})
    if isinstance(lhs, numbers.Number) or isinstance(lhs, np.generic):
        return invoke(rscalar_op, [rhs], {"scalar": lhs})
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
        return invoke(array_op, [lhs, rhs], {})
    raise TypeError(f"type {type(lhs)} and {type(rhs)} not supported")


def add(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_add", "_plus_scalar", "_plus_scalar", lambda a, b: a + b)


def subtract(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_sub", "_minus_scalar", "_rminus_scalar",
                  lambda a, b: a - b)


def multiply(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_mul", "_mul_scalar", "_mul_scalar", lambda a, b: a * b)


def divide(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_div", "_div_scalar", "_rdiv_scalar", lambda a, b: a / b)


true_divide = divide


def modulo(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_mod", "_mod_scalar", "_rmod_scalar", lambda a, b: a % b)


def power(base, exp):
    return _ufunc(base, exp, "broadcast_power", "_power_scalar", "_rpower_scalar",
                  lambda a, b: a ** b)


def maximum(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_maximum", "_maximum_scalar", "_maximum_scalar",
                  lambda a, b: a if a > b else b)


def minimum(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_minimum", "_minimum_scalar", "_minimum_scalar",
                  lambda a, b: a if a < b else b)


def hypot(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_hypot", "_hypot_scalar", "_hypot_scalar",
                  lambda a, b: float(np.hypot(a, b)))


def _cmp(name, sname, rname, fn):
    def f(lhs, rhs):
        return _ufunc(lhs, rhs, name, sname, rname, lambda a, b: 1 if fn(a, b) else 0)
    f.__name__ = name.replace("broadcast_", "")
    return f


equal = _cmp("broadcast_equal", "_equal_scalar", "_equal_scalar", lambda a, b: a == b)
not_equal = _cmp("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar",
                 lambda a, b: a != b)
greater = _cmp("broadcast_greater", "_greater_scalar", "_lesser_scalar", lambda a, b: a > b)
greater_equal = _cmp("broadcast_greater_equal", "_greater_equal_scalar",
                     "_lesser_equal_scalar", lambda a, b: a >= b)
lesser = _cmp("broadcast_lesser", "_lesser_scalar", "_greater_scalar", lambda a, b: a < b)
lesser_equal = _cmp("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar",
                    lambda a, b: a <= b)
logical_and = _cmp("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar",
                   lambda a, b: a and b)
logical_or = _cmp("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar",
                  lambda a, b: a or b)
logical_xor = _cmp("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar",
                   lambda a, b: bool(a) != bool(b))


def _axis_tuple(axes, ndim: int, what: str) -> tuple:
    """Axes (an int or a sequence) as non-negative ints; ValueError if out of range or
    repeated."""
    axes = (axes,) if isinstance(axes, numbers.Integral) else tuple(axes)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"{what} should verify 0 <= {what.lower()} < tensor.ndim "
                             f"({ndim}). Got {a}")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in `{what.lower()}` argument")
    return tuple(out)


def moveaxis(tensor: NDArray, source, destination) -> NDArray:
    """Move axes to new positions; the other axes keep their order.

    Parameters
    ----------
    tensor : NDArray
        The array.
    source : int or sequence of int
        The axes to move.
    destination : int or sequence of int
        Their new positions (as many as ``source``).
    """
    src = _axis_tuple(source, tensor.ndim, "Source")
    dst = _axis_tuple(destination, tensor.ndim, "Destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [n for n in range(tensor.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return invoke("transpose", [tensor], {"axes": tuple(order)})


def split_v2(ary: NDArray, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` into equal sections (an int) or at the given indices (a tuple)."""
    if isinstance(indices_or_sections, int):
        size = ary.shape[axis]
        if size % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
        step = size // indices_or_sections
        indices = [i * step for i in range(indices_or_sections)]
    elif isinstance(indices_or_sections, tuple):
        indices = [0] + list(indices_or_sections)
    else:
        raise ValueError("indices_or_sections must either int or tuple of ints")
    return invoke("_split_v2", [ary], {"indices": tuple(indices), "axis": axis,
                                       "squeeze_axis": squeeze_axis})


def concatenate(arrays, axis=0, always_copy=True) -> NDArray:
    """Concatenate a list of arrays along ``axis``."""
    if not arrays:
        raise MXNetError("concatenate: need at least one array")
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    return invoke("Concat", list(arrays), {"dim": axis, "num_args": len(arrays)})


def fill_element_0index(lhs: NDArray, mhs: NDArray, rhs: NDArray, out=None) -> NDArray:
    """A copy of the 2-D ``lhs`` with, in each row ``i``, the element at column ``rhs[i]``
    replaced by ``mhs[i]`` (MXNet's legacy NDArray function).

    Parameters
    ----------
    lhs : NDArray
        ``(n, m)`` input.
    mhs : NDArray
        ``(n,)`` values.
    rhs : NDArray
        ``(n,)`` column indices (0-based).
    out : NDArray, optional
        Where to write the result.
    """
    if lhs.ndim != 2 or mhs.shape != (lhs.shape[0],) or rhs.shape != (lhs.shape[0],):
        raise MXNetError(f"fill_element_0index: expects a 2-D lhs and 1-D values and indices "
                         f"of its row count, got {lhs.shape}, {mhs.shape} and {rhs.shape}")
    hit = invoke("one_hot", [rhs], {"depth": lhs.shape[1]})
    values = invoke("broadcast_to", [mhs.reshape((-1, 1)).astype(lhs.dtype, copy=False)],
                    {"shape": lhs.shape})
    return invoke("where", [hit, values, lhs], {}, out=out)


def onehot_encode(indices: NDArray, out: NDArray) -> NDArray:
    """One-hot encode ``indices`` into ``out`` (legacy helper)."""
    return invoke("one_hot", [indices], {"depth": out.shape[1], "dtype": out.dtype}, out=out)


def histogram(a: NDArray, bins=10, range=None):  # noqa: A002 - MXNet's name
    """Compute the histogram of the flattened input.

    Parameters
    ----------
    a : NDArray
        Input data.
    bins : int or NDArray
        The number of equal-width bins over ``range``, or the bin edges (rightmost
        included).
    range : (float, float), optional
        The range of the equal-width bins; without it NumPy computes the histogram over
        the data's range (with a warning), as in MXNet.

    Returns
    -------
    (NDArray, NDArray)
        The counts (int64) and the bin edges.
    """
    if isinstance(bins, NDArray):
        return invoke("_histogram", [a, bins], {})
    if isinstance(bins, int) and not isinstance(bins, bool):
        if range is None:
            warnings.warn("range is not specified, using numpy's result to ensure "
                          "consistency with numpy")
            res, edges = np.histogram(a.asnumpy(), bins=bins)
            return array(res), array(edges)
        return invoke("_histogram", [a], {"bin_cnt": bins, "range": range})
    raise ValueError("bins argument should be either an integer or an NDArray")


# ------------------------------------------------------------------ files
def save(fname: str, data) -> None:
    """Save an NDArray, a list or a dict of NDArrays in MXNet's binary format.

    The file is written to a temporary name and renamed, so a failure never leaves a
    truncated file behind.
    """
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, dict):
        names = list(data.keys())
        arrays = list(data.values())
        if not all(isinstance(k, str) for k in names):
            raise MXNetError("save: dict keys must be strings")
    elif isinstance(data, (list, tuple)):
        names, arrays = None, list(data)
    else:
        raise ValueError("data needs to either be a NDArray, dict of str, NDArray pairs or a "
                         "list of NDarrays.")
    for a in arrays:
        if not isinstance(a, NDArray):
            raise TypeError(f"save: only NDArrays can be saved, got {type(a).__name__}")
    # MXNet: V3 records under NumPy shape semantics, V2 otherwise
    blob = dumps([a.asnumpy() for a in arrays], names, np_semantics=is_np_shape())
    atomic_write(fname, blob)


def atomic_write(fname: str, blob: bytes) -> None:
    """Write ``blob`` to ``fname`` through a fsynced temporary and an atomic rename.

    Temporaries that killed writers left beside ``fname`` are removed first.
    """
    write_file(os.fspath(fname), blob)


def _to_ndarrays(arrays, names, ctx=None):
    ctx = ctx or Context("cpu", 0)
    out = [_wrap(_from_numpy(a), ctx) for a in arrays]
    if names is None:
        return out
    return dict(zip(names, out))


def load(fname: str, ctx=None):
    """Load a list or dict of NDArrays saved by ``save`` (or by MXNet).

    ``.npy`` and ``.npz`` files are also accepted. A truncated or malformed file raises
    :class:`MXNetError` naming the file.
    """
    fname = os.fspath(fname)
    if not os.path.exists(fname):
        raise MXNetError(f"load: file {fname!r} does not exist")
    try:
        with open(fname, "rb") as f:
            blob = f.read()
    except OSError as err:
        raise MXNetError(f"load: cannot read {fname!r}: {err}") from None
    if blob[:6] == NPY_MAGIC:  # sizes checked against the file before allocating
        return _to_ndarrays([read_npy(blob, fname)], None, ctx)[0]
    if blob[:4] == b"PK\x03\x04":
        arrays = read_npz(blob, fname)
        return _to_ndarrays(list(arrays.values()), list(arrays), ctx)
    np_on = is_np_shape()  # MXNet: a record must match the current shape semantics
    arrays, names = loads(blob, source=fname, np_semantics=np_on, refuse_legacy=np_on)
    return _to_ndarrays(arrays, names, ctx)


def load_frombuffer(buf: bytes, ctx=None):
    """Load NDArrays from the bytes of a file written by ``save``."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError("load_frombuffer: buf must be bytes")
    np_on = is_np_shape()
    arrays, names = loads(bytes(buf), source="<buffer>", np_semantics=np_on,
                          refuse_legacy=np_on)
    return _to_ndarrays(arrays, names, ctx)


# ------------------------------------------------------------------ images
def imdecode(str_img: bytes, clip_rect=(0, 0, 0, 0), out=None, index=0, channels=3, mean=None):
    """Decode an image into a ``(channels, height, width)`` array (deprecated in MXNet:
    ``mx.image.imdecode`` is the current API).

    Channels are in OpenCV's order (BGR), grayscale when ``channels`` is 1.

    Parameters
    ----------
    str_img : bytes
        The encoded image.
    clip_rect : (x0, y0, x1, y1), optional
        The part of the image to keep; the whole image when ``y1 == y0``.
    out : NDArray, optional
        Where to write: ``(c, h, w)``, or ``(n, c, h, w)`` written at ``index``.
    index : int
        The slot of a 4-D ``out``.
    channels : int
        How many channels to keep (the first ones of the decoded image).
    mean : NDArray, optional
        ``(c, h, w)``, subtracted from the result, whose dtype it gives (else float32).
    """
    img = _codec.decode_bgr(bytes(str_img), 0 if channels == 1 else -1, "imdecode")
    img = img.reshape(img.shape[0], img.shape[1], -1)
    x0, y0, x1, y1 = (int(v) for v in clip_rect)
    if y1 == y0:
        x0, y0, x1, y1 = 0, 0, img.shape[1], img.shape[0]
    if channels > img.shape[2] or x1 > img.shape[1] or y1 > img.shape[0]:
        raise MXNetError(f"imdecode: cannot take {channels} channels and the rectangle "
                         f"{(x0, y0, x1, y1)} from an image of shape {img.shape}")
    data = np.ascontiguousarray(img[y0:y1, x0:x1, :channels].transpose(2, 0, 1))
    dtype = np.float32 if mean is None else mean.dtype
    if out is None:
        out = array(np.zeros(data.shape), dtype=dtype)
    slot = out.reshape((1,) + out.shape) if out.ndim == 3 else out[index:index + 1]
    if slot.shape[1:] != data.shape:
        raise MXNetError(f"imdecode: the decoded image {data.shape} does not fit the output "
                         f"{out.shape}")
    value = data.astype(dtype)
    if mean is not None:
        value = value - mean.asnumpy()
    slot[:] = value.reshape(slot.shape)
    return out

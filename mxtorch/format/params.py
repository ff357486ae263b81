"""MXNet's NDArray list file (``mx.nd.save``, ``mx.npx.save``, every ``.params`` file).

Pure NumPy + ``struct``; layout in ``shared/formats/MXNET_FORMATS.md`` section 1::

    u64 0x112 | u64 reserved | u64 N | N records | u64 name count (0 or N) | names

Writing reproduces MXNet 1.9.1's bytes exactly (V2 records for legacy semantics, V3 for
numpy semantics). Reading accepts every record version MXNet ever wrote (pre-V1, V1, V2,
V3) and V2 ``row_sparse``/``csr`` records, which are returned as dense arrays.

Every size read from the blob is checked against the bytes that remain *before*
anything is allocated, so a truncated, malformed or hostile blob raises
:class:`~mxtorch.base.MXNetError` naming the source and the offset, never a crash, a
hang or a huge allocation.

Semantics choice (``np_semantics`` argument of :func:`loads`):

* ``None`` (default) accepts every record version.
* ``False`` mirrors MXNet's legacy ``mx.nd.load``: a V3 (numpy-semantics) record is
  refused with an error that says so.
* ``True`` mirrors numpy shape semantics switched on globally: every version is accepted
  (MXNet refuses legacy records only under the thread-local ``npx.set_np()``, and
  ``Block.load_parameters`` works around that anyway).
"""
from __future__ import annotations

import struct
from typing import Any
from dataclasses import dataclass

import numpy as np

from ..base import DTYPE_MX_TO_NP, DTYPE_NP_TO_MX, MXNetError

__all__ = ["dumps", "loads", "dump_record", "load_record", "LIST_MAGIC",
           "V1_MAGIC", "V2_MAGIC", "V3_MAGIC"]

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
_MAX_NDIM = 32  # larger ndim values are garbage (MXNet's kernels stop far below this)
_STYPE_DEFAULT, _STYPE_ROW_SPARSE, _STYPE_CSR = 0, 1, 2
_NUM_AUX = {_STYPE_ROW_SPARSE: 1, _STYPE_CSR: 2}
_BFLOAT16 = DTYPE_MX_TO_NP[12]
# MXNet: type flags 8-11 (int16, uint16, uint32, uint64) exist in mshadow's enum but
# 1.9.1's NDArray files refuse them at load ("Unknown type enum 8"); only pickled
# records (mxtorch's own NDArray pickles) carry them.
_FILE_UNSUPPORTED_FLAGS = frozenset({8, 9, 10, 11})
# a sparse record is made dense: at most this many bytes, or 256x the blob
_DENSE_FLOOR = 64 << 20
_DENSE_PER_BYTE = 256


# ---------------------------------------------------------------------------- writing
def _type_flag(dtype: np.dtype) -> int:
    """MXNet type flag of a NumPy dtype (byte order ignored)."""
    key = dtype if dtype.names is not None else dtype.newbyteorder("=")
    flag = DTYPE_NP_TO_MX.get(key)
    if flag is None:
        raise MXNetError(f"cannot save arrays of dtype {dtype}: MXNet has no type flag for it")
    return flag


def _le_bytes(a: np.ndarray) -> bytes:
    """Raw little-endian C-order bytes of ``a``."""
    if a.dtype == _BFLOAT16:
        return np.ascontiguousarray(a).view(np.uint16).astype("<u2", copy=False).tobytes()
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()


def _shape_bytes(shape: tuple[int, ...]) -> bytes:
    """A TShape: ``i32 ndim`` then ``ndim`` x ``i64``."""
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def dump_record(a: np.ndarray, np_semantics: bool = False) -> bytes:
    """Encode one dense array as a V2 record (V3 with ``np_semantics``).

    V2 cannot represent 0-d arrays (MXNet reads an empty shape as "none" and drops the
    values), so they are always written as V3 records rather than lost; zero-size arrays
    are V2 records with a 0 dimension, as MXNet writes them.
    """
    a = np.asarray(a)
    flag = _type_flag(a.dtype)
    v3 = np_semantics or a.ndim == 0
    head = struct.pack("<Ii", V3_MAGIC if v3 else V2_MAGIC, _STYPE_DEFAULT)
    ctx_and_type = struct.pack("<iii", 1, 0, flag)  # cpu(0), as MXNet's checkpoints say
    return b"".join((head, _shape_bytes(a.shape), ctx_and_type, _le_bytes(a)))


def _string_bytes(name: str) -> bytes:
    raw = name.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def dumps(arrays: list[np.ndarray], names: list[str] | None,
          np_semantics: bool = False) -> bytes:
    """Encode a whole NDArray list file, byte-identical to MXNet 1.9.1's ``save``.

    Parameters
    ----------
    arrays : list of numpy.ndarray
        The arrays, in file order. bfloat16 arrays use ``np.dtype([('bfloat16', np.uint16)])``.
    names : list of str or None
        The dict keys (same length as ``arrays``), or None for a list file.
    np_semantics : bool, default False
        Write V3 records (``npx.save``) instead of V2 (``nd.save``).

    Returns
    -------
    bytes
        The file content.
    """
    if names is not None and len(names) != len(arrays):
        raise MXNetError(f"save: {len(names)} names for {len(arrays)} arrays")
    for a in arrays:
        if _type_flag(np.asarray(a).dtype) in _FILE_UNSUPPORTED_FLAGS:
            raise MXNetError(f"cannot save arrays of dtype {np.asarray(a).dtype}: MXNet "
                             "1.9.1 cannot load that type from a file")
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))]
    parts.extend(dump_record(a, np_semantics) for a in arrays)
    names = list(names or [])
    parts.append(struct.pack("<Q", len(names)))
    parts.extend(_string_bytes(str(n)) for n in names)
    return b"".join(parts)


# ---------------------------------------------------------------------------- reading
@dataclass
class _Reader:
    """A bounds-checked cursor over the blob being parsed."""

    blob: bytes
    source: str
    pos: int = 0
    what: str = "header"
    file_flags: bool = False  # refuse the type flags MXNet's file loader refuses

    def fail(self, msg: str) -> MXNetError:
        """An error naming the source, the item being read and the offset."""
        return MXNetError(f"cannot load {self.source}: {msg} ({self.what}, offset {self.pos})")

    def take(self, n: int) -> bytes:
        """The next ``n`` bytes; raise if fewer remain."""
        left = len(self.blob) - self.pos
        if n < 0 or n > left:
            raise self.fail(f"truncated file: need {n} bytes, {left} left")
        out = self.blob[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        """Unpack little-endian ``fmt`` at the cursor."""
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))

    def u32(self) -> int:
        return int(self.unpack("I")[0])

    def i32(self) -> int:
        return int(self.unpack("i")[0])

    def u64(self) -> int:
        return int(self.unpack("Q")[0])

    def remaining(self) -> int:
        return len(self.blob) - self.pos


def _read_ndim(r: _Reader, ndim: int, allow_unknown: bool) -> int:
    """Validate an ndim read from the file."""
    if ndim == -1 and allow_unknown:
        return ndim
    if ndim < 0 or ndim > _MAX_NDIM:
        raise r.fail(f"invalid ndim {ndim}")
    return ndim


def _read_shape(r: _Reader, allow_unknown: bool = False) -> tuple[int, ...] | None:
    """A TShape (``i32 ndim`` + ``i64`` dims); None for ndim -1 (unknown)."""
    ndim = _read_ndim(r, r.i32(), allow_unknown)
    if ndim == -1:
        return None
    dims = r.unpack(f"{ndim}q")
    if any(d < 0 for d in dims):
        raise r.fail(f"negative dimension in shape {dims}")
    return tuple(dims)


def _read_dtype(r: _Reader) -> np.dtype:
    flag = r.i32()
    dt = DTYPE_MX_TO_NP.get(flag)
    if dt is None or (r.file_flags and flag in _FILE_UNSUPPORTED_FLAGS):
        raise r.fail(f"Unknown type enum {flag}")
    return dt


def _read_values(r: _Reader, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """Raw little-endian values; the byte count is checked before any allocation."""
    count = int(np.prod(shape, dtype=object)) if shape else 1
    raw = r.take(count * dtype.itemsize)
    if dtype == _BFLOAT16:
        flat = np.frombuffer(raw, "<u2").astype(np.uint16).view(_BFLOAT16)
    elif dtype == np.bool_:
        flat = np.frombuffer(raw, np.uint8).astype(np.bool_)
    else:
        flat = np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype)
    try:
        return flat.reshape(shape)
    except ValueError as err:  # a zero-size shape whose other dims overflow NumPy
        raise r.fail(f"shape {shape} cannot be represented ({err})") from None


def _empty_record(r: _Reader) -> MXNetError:
    # MXNet: the C++ loader accepts a "none" record, but 1.9.1's Python nd.load then fails
    # with "unknown storage type: -1"; we refuse it up front.
    return r.fail("record holds an empty (none) NDArray, which MXNet cannot load either")


def _read_legacy(r: _Reader, magic: int) -> np.ndarray:
    """A V1 record (int64 dims) or a pre-V1 record (the magic is ``ndim``, uint32 dims)."""
    if magic == V1_MAGIC:
        shape = _read_shape(r)
    else:
        if magic > _MAX_NDIM:
            raise r.fail(f"unknown record magic 0x{magic:08X}")
        shape = tuple(r.unpack(f"{magic}I"))
    if not shape:
        raise _empty_record(r)
    r.unpack("ii")  # context: arrays always load on cpu(0) (MXNet without a GPU does too)
    return _read_values(r, _read_dtype(r), shape)


def _read_aux(r: _Reader, n: int) -> list[tuple[np.dtype, tuple[int, ...]]]:
    """The (dtype, shape) headers of ``n`` sparse aux arrays."""
    out = []
    for _ in range(n):
        dt = _read_dtype(r)
        out.append((dt, _read_shape(r) or ()))
    return out


def _index_array(r: _Reader, arr: np.ndarray, limit: int, what: str) -> np.ndarray:
    """Check that a sparse index array is integral and within ``[0, limit)``."""
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise r.fail(f"{what} must be a 1-D integer array, got {arr.dtype} {arr.shape}")
    idx = arr.astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= limit):
        raise r.fail(f"{what} out of range [0, {limit})")
    return idx


def _zeros(r: _Reader, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The dense buffer of a sparse record, refused past a bound proportional to the blob."""
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    limit = max(_DENSE_FLOOR, _DENSE_PER_BYTE * len(r.blob))
    if nbytes > limit:
        raise r.fail(f"sparse array of shape {shape} is too large to densify: {nbytes} "
                     f"bytes, more than {limit} for a file of {len(r.blob)} bytes")
    try:
        return np.zeros(shape, dtype=dtype)
    except (MemoryError, ValueError) as err:
        raise r.fail(f"sparse array of shape {shape} is too large to densify") from err


def _row_sparse_dense(r: _Reader, shape: tuple[int, ...], data: np.ndarray[Any, Any],
                      aux: list[np.ndarray[Any, Any]]) -> np.ndarray:
    """Dense view of a row_sparse array: ``dense[indices[k]] = data[k]``."""
    idx = _index_array(r, aux[0], shape[0], "row_sparse indices")
    if data.shape != (idx.size, *shape[1:]):
        raise r.fail(f"row_sparse data shape {data.shape} does not match shape {shape}")
    dense = _zeros(r, shape, data.dtype)
    dense[idx] = data
    return dense


def _csr_dense(r: _Reader, shape: tuple[int, ...], data: np.ndarray[Any, Any],
               aux: list[np.ndarray[Any, Any]]) -> np.ndarray:
    """Dense view of a csr matrix from ``indptr`` (aux 0) and column ``indices`` (aux 1)."""
    if len(shape) != 2:
        raise r.fail(f"csr array must be 2-D, got shape {shape}")
    rows, cols = shape
    indptr = _index_array(r, aux[0], data.size + 1, "csr indptr")
    indices = _index_array(r, aux[1], max(cols, 1), "csr indices")
    if (indptr.size != rows + 1 or indices.size != data.size or indptr[0] != 0
            or indptr[-1] != data.size or np.any(np.diff(indptr) < 0)):
        raise r.fail(f"inconsistent csr indptr/indices for shape {shape}")
    dense = _zeros(r, shape, data.dtype)
    row_ids = np.repeat(np.arange(rows), np.diff(indptr))
    dense[row_ids, indices] = data
    return dense


def _read_sparse_rest(r: _Reader, stype: int, storage_shape: tuple[int, ...],
                      shape: tuple[int, ...]) -> np.ndarray:
    """Context, dtype, aux headers, values and aux values of a sparse V2 record."""
    r.unpack("ii")
    dtype = _read_dtype(r)
    aux_headers = _read_aux(r, _NUM_AUX[stype])
    data = _read_values(r, dtype, storage_shape)
    aux = [_read_values(r, dt, s) for dt, s in aux_headers]
    if stype == _STYPE_ROW_SPARSE:
        return _row_sparse_dense(r, shape, data, aux)
    return _csr_dense(r, shape, data, aux)


def _read_v2_v3(r: _Reader, magic: int) -> np.ndarray:
    """A V2 (legacy) or V3 (numpy semantics) record, sparse records made dense."""
    v3 = magic == V3_MAGIC
    stype = r.i32()
    if stype not in (_STYPE_DEFAULT, _STYPE_ROW_SPARSE, _STYPE_CSR):
        raise r.fail(f"unknown storage type {stype}")
    if v3 and stype != _STYPE_DEFAULT:
        raise r.fail("V3 (numpy semantics) records must have default storage")
    storage_shape = _read_shape(r) if stype != _STYPE_DEFAULT else None
    shape = _read_shape(r, allow_unknown=v3)
    if shape is None or (not v3 and not shape):
        raise _empty_record(r)
    if stype != _STYPE_DEFAULT:
        assert storage_shape is not None  # read above for every sparse stype
        return _read_sparse_rest(r, stype, storage_shape, shape)
    r.unpack("ii")  # context: arrays always load on cpu(0)
    return _read_values(r, _read_dtype(r), shape)


def _read_record(r: _Reader, np_semantics: bool | None,
                 refuse_legacy: bool = False) -> np.ndarray:
    """One array record of any version."""
    magic = r.u32()
    if magic == V3_MAGIC and np_semantics is False:
        # MXNet: legacy nd.load refuses V3 records ("ndarray was saved in np shape semantics").
        raise r.fail("the array was saved with numpy shape semantics (npx.save, V3 record); "
                     "load it with numpy semantics on")
    if magic != V3_MAGIC and refuse_legacy:
        # MXNet: with numpy shape semantics on in this thread, legacy records are refused
        raise r.fail("the array was not saved with numpy shape semantics (a V2 or older "
                     "record) but is loaded with them on; load it within "
                     "mx.np_shape(False)")
    if magic in (V2_MAGIC, V3_MAGIC):
        return _read_v2_v3(r, magic)
    return _read_legacy(r, magic)


def load_record(blob: bytes, source: str = "<record>") -> np.ndarray:
    """Decode one array record (what a pickled NDArray's ``handle`` holds)."""
    r = _Reader(bytes(blob), source, what="record")
    return _read_record(r, None)


def _read_names(r: _Reader, count: int) -> list[str] | None:
    """The trailing name vector: empty for a list file, ``count`` strings for a dict."""
    r.what = "name count"
    num = r.u64()
    if num == 0:
        return None
    if num != count:
        raise r.fail(f"name count mismatch: {num} names for {count} arrays")
    names = []
    for i in range(num):
        r.what = f"name {i}"
        raw = r.take(r.u64())
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError as err:
            raise r.fail("name is not valid UTF-8") from err
    return names


def loads(blob: bytes, source: str = "<buffer>", np_semantics: bool | None = None,
          refuse_legacy: bool = False) -> tuple[list[np.ndarray], list[str] | None]:
    """Decode an NDArray list file.

    Parameters
    ----------
    blob : bytes
        The whole file content.
    source : str
        File name (or ``'<buffer>'``) used in error messages.
    np_semantics : bool or None, default None
        None accepts every record version; False refuses V3 records like MXNet's legacy
        ``mx.nd.load``; True accepts every version (numpy shape semantics on globally).
    refuse_legacy : bool, default False
        Refuse every record but V3, as ``mx.nd.load`` does with numpy shape semantics on
        in the thread (``with mx.np_shape()``).

    Returns
    -------
    (list of numpy.ndarray, list of str or None)
        The arrays in file order, and the names (None for a list file). Sparse records
        come back dense; bfloat16 arrays use ``np.dtype([('bfloat16', np.uint16)])``.
    """
    r = _Reader(bytes(blob), source, file_flags=True)
    header, _reserved, count = r.unpack("QQQ")
    if header != LIST_MAGIC:
        r.pos = 0
        raise r.fail(f"bad header 0x{header:X} (expected 0x112): not an MXNet NDArray file")
    if count > r.remaining() // 4:  # every record takes at least 4 bytes
        raise r.fail(f"array count {count} is larger than the file can hold")
    arrays = []
    for i in range(count):
        r.what = f"record {i}"
        arrays.append(_read_record(r, np_semantics, refuse_legacy))
    return arrays, _read_names(r, count)

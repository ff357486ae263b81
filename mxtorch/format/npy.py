"""``.npy`` and ``.npz`` files read by ``mx.nd.load``, with every size checked first.

``numpy.load`` trusts the header: a 100-byte ``.npy`` whose header asks for a 4 TiB
array fails in the allocator (``MemoryError``), and an ``.npz`` member allocates the
whole array its header declares before reading the compressed data. Here the header is
parsed (``ast.literal_eval`` of a bounded string, never a pickle), the array size it
declares is compared with the bytes the file (or the zip member) holds, and an ``.npz``
may not declare more than :data:`NPZ_MAX_RATIO` times its own size (at least
:data:`NPZ_FLOOR` bytes) uncompressed. Only then is anything allocated.
"""
from __future__ import annotations

import ast
import io
import struct
import zipfile
from typing import Any, Callable

import numpy as np

from ..base import MXNetError

__all__ = ["NPY_MAGIC", "read_npy", "read_npz", "NPZ_MAX_RATIO", "NPZ_FLOOR"]

NPY_MAGIC = b"\x93NUMPY"
_MAX_HEADER = 1 << 16  # NumPy writes a few hundred bytes; it refuses more than 10000
_MAX_NDIM = 32
# an .npz may declare at most this many times its size uncompressed (deflate reaches
# about 1000x only on constant data), or NPZ_FLOOR bytes, whichever is larger
NPZ_MAX_RATIO = 100
NPZ_FLOOR = 64 << 20


def _fail(source: str, msg: str) -> MXNetError:
    return MXNetError(f"cannot load {source}: {msg}")


def _header_start(head: bytes, source: str) -> tuple[int, int, str]:
    """(header length, offset of the header text, its encoding) from the first 12 bytes."""
    if len(head) < 10 or head[:6] != NPY_MAGIC:
        raise _fail(source, "truncated or invalid .npy header")
    major = head[6]
    if major == 1:
        return struct.unpack("<H", head[8:10])[0], 10, "latin-1"
    if major in (2, 3) and len(head) >= 12:
        return struct.unpack("<I", head[8:12])[0], 12, "latin-1" if major == 2 else "utf-8"
    raise _fail(source, f"unsupported .npy format version {major}.{head[7]}")


def _parse_header(text: bytes, encoding: str,
                  source: str) -> tuple[np.dtype[Any], tuple[int, ...], bool]:
    """(dtype, shape, fortran_order) from the header dict, validated."""
    try:
        d = ast.literal_eval(text.decode(encoding))
    except Exception as err:  # noqa: BLE001 - SyntaxError, ValueError, MemoryError...
        raise _fail(source, f"invalid .npy header ({type(err).__name__})") from None
    if not isinstance(d, dict) or set(d) != {"descr", "fortran_order", "shape"}:
        raise _fail(source, ".npy header must hold exactly descr, fortran_order and shape")
    shape, fortran = d["shape"], d["fortran_order"]
    if (not isinstance(shape, tuple) or len(shape) > _MAX_NDIM
            or not all(type(s) is int and s >= 0 for s in shape)):
        raise _fail(source, f"invalid shape {shape!r} in the .npy header")
    if not isinstance(fortran, bool):
        raise _fail(source, "fortran_order in the .npy header must be a bool")
    try:
        dtype = np.lib.format.descr_to_dtype(d["descr"])
    except Exception as err:  # any malformed descr
        raise _fail(source, f"invalid dtype {d['descr']!r} in the .npy header") from err
    if dtype.hasobject:
        raise _fail(source, "object arrays (pickles) are not loaded from .npy files")
    return dtype, shape, fortran


def _read_header(read: Callable[[int], bytes],
                 source: str) -> tuple[np.dtype[Any], tuple[int, ...], bool, int, int]:
    """Parse the header via ``read(n)``: (dtype, shape, fortran, data bytes, data offset)."""
    head = read(12)
    hlen, start, encoding = _header_start(head, source)
    if hlen > _MAX_HEADER:
        raise _fail(source, f".npy header of {hlen} bytes is too long")
    text = head[start:] + read(hlen - (len(head) - start))
    if len(text) < hlen:
        raise _fail(source, "truncated .npy header")
    dtype, shape, fortran = _parse_header(text[:hlen], encoding, source)
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    return dtype, shape, fortran, nbytes, start + hlen


def _array(raw: bytes | memoryview, dtype: np.dtype[Any], shape: tuple[int, ...],
           fortran: bool) -> np.ndarray[Any, Any]:
    flat: np.ndarray[Any, Any] = np.frombuffer(raw, dtype, int(np.prod(shape, dtype=object)))
    out: np.ndarray[Any, Any]
    if fortran:
        out = flat.reshape(shape[::-1]).transpose().copy()
    else:
        out = flat.reshape(shape).copy()
    return out


def read_npy(blob: bytes, source: str) -> np.ndarray:
    """One array from the bytes of a ``.npy`` file; its size is checked before allocating."""
    stream = io.BytesIO(blob)
    dtype, shape, fortran, nbytes, offset = _read_header(stream.read, source)
    held = len(blob) - offset
    if nbytes > held:
        raise _fail(source, f"the .npy header asks for shape {shape} of {dtype} "
                            f"({nbytes} bytes) but the file holds {held} bytes of data")
    return _array(memoryview(blob)[offset:offset + nbytes], dtype, shape, fortran)


def _npz_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> np.ndarray:
    where = f"{source}[{info.filename}]"
    with zf.open(info) as f:
        dtype, shape, fortran, nbytes, offset = _read_header(f.read, where)
        if nbytes > info.file_size - offset:
            raise _fail(where, f"the .npy header asks for shape {shape} of {dtype} "
                               f"({nbytes} bytes) but the member holds "
                               f"{max(info.file_size - offset, 0)} bytes")
        raw = f.read(nbytes)
        f.read(info.file_size - offset - nbytes)  # the rest, so that the CRC is checked
    if len(raw) != nbytes:
        raise _fail(where, f"truncated data: {len(raw)} of {nbytes} bytes")
    return _array(raw, dtype, shape, fortran)


def read_npz(blob: bytes, source: str) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file (key: member name without ``.npy``)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(blob))
        infos = zf.infolist()
        declared = sum(i.file_size for i in infos)
        limit = max(NPZ_FLOOR, NPZ_MAX_RATIO * len(blob))
        if declared > limit:
            raise _fail(source, f"the archive declares {declared} bytes uncompressed, more "
                                f"than {NPZ_MAX_RATIO} times its {len(blob)} bytes")
        out = {}
        for info in infos:
            if not info.filename.endswith(".npy"):
                raise _fail(source, f"member {info.filename!r} is not an .npy array")
            out[info.filename[:-4]] = _npz_member(zf, info, source)
        return out
    except MXNetError:
        raise
    except Exception as err:  # noqa: BLE001 - BadZipFile, zlib.error, EOFError, CRC...
        raise _fail(source, f"invalid .npz archive ({type(err).__name__}: {err})") from None

"""Read and write MXNet's RecordIO data format (``mx.recordio``).

Pure Python over a binary file object, byte-compatible with dmlc-core's RecordIO: every
record is ``[magic 0xced7230a][lrec][payload][zero padding to 4 bytes]`` with
``lrec = cflag << 29 | length``. A payload containing the magic word at a 4-byte aligned
offset is split into parts (cflag 1 = first, 2 = middle, 3 = last) and the magic words are
dropped from the stream; the reader puts them back. The ``.idx`` file is text,
``key\\tbyte_offset`` per line.
"""
from __future__ import annotations

import numbers
import struct
from collections import namedtuple
from multiprocessing import current_process

import numpy as np

from .base import MXNetError
from .format import image_codec as _codec

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img"]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_MAX_RECORD = 1 << 29


class RecordHeaderError(MXNetError, struct.error):
    """A record shorter than its ``IRHeader`` (MXNet's Python ``unpack`` raises struct.error)."""


class RecordFormatError(MXNetError, ValueError):
    """A record or ``.idx`` line that is not what it claims (MXNet raises ValueError)."""


def _encode_lrec(cflag: int, length: int) -> bytes:
    """The 8-byte record head: magic word and ``cflag << 29 | length``."""
    return _MAGIC_BYTES + struct.pack("<I", (cflag << 29) | length)


def _write_record(stream, buf: bytes) -> None:
    """Write one record the way dmlc::RecordIOWriter::WriteRecord does."""
    size = len(buf)
    if size >= _MAX_RECORD:
        raise MXNetError("RecordIO only accept record less than 2^29 bytes")
    lower_align = (size >> 2) << 2
    upper_align = ((size + 3) >> 2) << 2
    parts = []
    dptr = 0
    pos = buf.find(_MAGIC_BYTES)
    while 0 <= pos < lower_align:
        if pos % 4 == 0:  # MXNet: only 4-byte aligned magic words split a record
            parts.append(_encode_lrec(1 if dptr == 0 else 2, pos - dptr))
            parts.append(buf[dptr:pos])
            dptr = pos + 4
        pos = buf.find(_MAGIC_BYTES, pos + 1)
    parts.append(_encode_lrec(3 if dptr != 0 else 0, size - dptr))
    parts.append(buf[dptr:])
    parts.append(b"\x00" * (upper_align - size))
    stream.write(b"".join(parts))


def _read_record(stream) -> bytes | None:
    """Read one (possibly multi-part) record; None at the end of the file."""
    out = []
    while True:
        head = stream.read(8)
        if not head:
            if out:
                raise MXNetError("Invalid RecordIO File: truncated multi-part record")
            return None
        if len(head) != 8:
            raise MXNetError("Check failed: nread == sizeof(header): Invalid RecordIO File")
        magic, lrec = struct.unpack("<II", head)
        if magic != _MAGIC:
            raise MXNetError("Check failed: header[0] == RecordIOWriter::kMagic: "
                             "Invalid RecordIO File")
        cflag, length = lrec >> 29, lrec & (_MAX_RECORD - 1)
        upper_align = ((length + 3) >> 2) << 2
        data = stream.read(upper_align)
        if len(data) != upper_align:
            raise MXNetError("Invalid RecordIO File upper_align=%d" % upper_align)
        out.append(data[:length])
        if cflag in (0, 3):
            return _MAGIC_BYTES.join(out)


def _open_file(uri: str, mode: str):
    """Open ``uri`` in binary mode, with MXNet's message when it is missing."""
    try:
        return open(uri, mode)
    except OSError as err:
        raise MXNetError('LocalFileSystem: Check failed: allow_null: :Open "%s": %s'
                         % (uri, err.strerror)) from err


class MXRecordIO:
    """Reads/writes `RecordIO` data format, supporting sequential read and write.

    Parameters
    ----------
    uri : string
        Path to the record file.
    flag : string
        'w' for write or 'r' for read.

    Examples
    --------
    >>> record = mx.recordio.MXRecordIO('tmp.rec', 'w')
    >>> for i in range(5):
    ...    record.write(b'record_%d' % i)
    >>> record.close()
    """

    def __init__(self, uri, flag):
        self.uri = str(uri)
        self.flag = flag
        self.pid = None
        self.is_open = False
        self.writable = False
        self._stream = None
        self.open()

    def open(self):
        """Opens the record file."""
        if self.flag == "w":
            self._stream = _open_file(self.uri, "wb")
            self.writable = True
        elif self.flag == "r":
            self._stream = _open_file(self.uri, "rb")
            self.writable = False
        else:
            raise ValueError("Invalid flag %s" % self.flag)
        self.pid = current_process().pid
        self.is_open = True

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __getstate__(self):
        """Override pickling behavior."""
        is_open = self.is_open
        self.close()
        state = dict(self.__dict__)
        state["is_open"] = is_open
        state.pop("_stream", None)
        return state

    def __setstate__(self, state):
        """Restore from pickled."""
        self.__dict__ = state
        is_open = state["is_open"]
        self.is_open = False
        self._stream = None
        if is_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """Check process id to ensure integrity, reset if in new process."""
        if self.pid != current_process().pid:
            if allow_reset:
                self.reset()
            else:
                raise RuntimeError("Forbidden operation in multiple processes")

    def close(self):
        """Closes the record file."""
        if not self.is_open:
            return
        self._stream.close()
        self._stream = None
        self.is_open = False
        self.pid = None

    def reset(self):
        """Resets the pointer to first item.

        If the record is opened with 'w', this function will truncate the file to empty.
        """
        self.close()
        self.open()

    def write(self, buf):
        """Inserts a string buffer as a record.

        Parameters
        ----------
        buf : bytes
            Buffer to write.
        """
        assert self.writable
        self._check_pid(allow_reset=False)
        if not isinstance(buf, (bytes, bytearray, memoryview)):
            raise TypeError("bytes or integer address expected instead of %s instance"
                            % type(buf).__name__)
        _write_record(self._stream, bytes(buf))

    def read(self):
        """Returns record as a string (bytes), or None at the end of the file.

        Returns
        -------
        buf : bytes
            Buffer read.
        """
        assert not self.writable
        self._check_pid(allow_reset=False)
        start = self._stream.tell()
        try:
            return _read_record(self._stream)
        except MXNetError as err:
            raise MXNetError("%s: the record at byte %d: %s" % (self.uri, start, err)) from None


class MXIndexedRecordIO(MXRecordIO):
    """Reads/writes `RecordIO` data format, supporting random access.

    Parameters
    ----------
    idx_path : str
        Path to the index file.
    uri : str
        Path to the record file. Only supports seekable file types.
    flag : str
        'w' for write or 'r' for read.
    key_type : type
        Data type for keys.

    Examples
    --------
    >>> record = mx.recordio.MXIndexedRecordIO('tmp.idx', 'tmp.rec', 'w')
    >>> for i in range(5):
    ...     record.write_idx(i, b'record_%d' % i)
    >>> record.close()
    >>> record = mx.recordio.MXIndexedRecordIO('tmp.idx', 'tmp.rec', 'r')
    >>> record.read_idx(3)
    b'record_3'
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = idx_path
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        self.fidx = open(self.idx_path, self.flag)
        if not self.writable:
            for lineno, line in enumerate(iter(self.fidx.readline, ""), 1):
                key, pos = self._parse_idx_line(line, lineno)
                self.idx[key] = pos
                self.keys.append(key)

    def _parse_idx_line(self, line, lineno):
        """``(key, byte offset)`` of one ``key\\toffset`` line of the index file."""
        fields = line.strip().split("\t")
        try:
            key, pos = self.key_type(fields[0]), int(fields[1])
        except (IndexError, ValueError, TypeError) as err:
            raise RecordFormatError("%s, line %d: expected 'key<TAB>offset', got %r (%s)"
                                    % (self.idx_path, lineno, line[:80], err)) from None
        if pos < 0:
            raise RecordFormatError("%s, line %d: negative record offset %d"
                                    % (self.idx_path, lineno, pos))
        return key, pos

    def close(self):
        """Closes the record file."""
        if not self.is_open:
            return
        super().close()
        self.fidx.close()

    def __getstate__(self):
        """Override pickling behavior."""
        state = super().__getstate__()
        state["fidx"] = None
        return state

    def seek(self, idx):
        """Sets the current read pointer position to the record with key ``idx``."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        self._stream.seek(self.idx[idx])

    def tell(self):
        """Returns the current position of write head."""
        assert self.writable
        return self._stream.tell()

    def read_idx(self, idx):
        """Returns the record at given index."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Inserts input record at given index.

        Parameters
        ----------
        idx : int
            Index of a file.
        buf :
            Record to write.
        """
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write("%s\t%d\n" % (str(key), pos))
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
"""An alias for HEADER. Used to store metadata (e.g. labels) accompanying a record.

Parameters
----------
flag : int
    Available for convenience, can be set arbitrarily.
label : float or an array of float
    Typically used to store label(s) for a record.
id: int
    Usually a unique id representing record.
id2: int
    Higher order bits of the unique id, should be set to 0 (in most cases).
"""

_IR_FORMAT = "IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """Pack a string into MXImageRecord.

    Parameters
    ----------
    header : IRHeader
        Header of the image record. ``header.label`` can be a number or an array.
    s : bytes
        Raw image string to be packed.

    Returns
    -------
    s : bytes
        The packed string.
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    return struct.pack(_IR_FORMAT, *header) + s


def unpack(s):
    """Unpack a MXImageRecord to string.

    Parameters
    ----------
    s : bytes
        String buffer from ``MXRecordIO.read``.

    Returns
    -------
    header : IRHeader
        Header of the image record.
    s : bytes
        Unpacked string.
    """
    if len(s) < _IR_SIZE:
        raise RecordHeaderError("unpack: a record of %d bytes is shorter than its %d-byte "
                                "header (Check failed: size >= sizeof(header))"
                                % (len(s), _IR_SIZE))
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if len(s) < 4 * header.flag:
            raise RecordFormatError("unpack: the header announces %d float labels (%d bytes) "
                                    "but %d bytes follow it (Check failed: content_size >= "
                                    "sizeof(float)*header.flag)"
                                    % (header.flag, 4 * header.flag, len(s)))
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def unpack_img(s, iscolor=-1):
    """Unpack a MXImageRecord to image.

    Parameters
    ----------
    s : bytes
        String buffer from ``MXRecordIO.read``.
    iscolor : int
        Image format option for ``cv2.imdecode`` (-1 unchanged, 0 gray, 1 color).

    Returns
    -------
    header : IRHeader
        Header of the image record.
    img : numpy.ndarray
        Unpacked image, channels in BGR order as OpenCV returns them.
    """
    header, s = unpack(s)
    return header, _codec.decode_bgr(s, iscolor)


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """Pack an image into ``MXImageRecord``.

    Parameters
    ----------
    header : IRHeader
        Header of the image record.
    img : numpy.ndarray
        Image to be packed, channels in BGR order (as ``cv2.imread`` gives them).
    quality : int
        Quality for JPEG encoding in range 1-100, or compression for PNG encoding in range 1-9.
    img_fmt : str
        Encoding of the image (.jpg for JPEG, .png for PNG).

    Returns
    -------
    s : bytes
        The packed string.
    """
    return pack(header, _codec.encode_bgr(img, quality, img_fmt))

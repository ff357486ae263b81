"""MXNet's built-in (C++ in MXNet) file iterators: CSVIter, MNISTIter, LibSVMIter.

Each reads its whole file with NumPy, then a `_BatchLoader` reproduces MXNet's batch loader
(``round_batch`` wrap-around that carries into the next epoch, stale padding otherwise) and
`MXDataIter` reproduces the Python wrapper (the first batch is read at construction).
"""
from __future__ import annotations

import logging
import os
import struct

import numpy as np

from ..base import MXNetError
from ..ndarray import array
from .base import DataBatch, DataDesc, DataIter

_LOG = logging.getLogger(__name__)

__all__ = ["MXDataIter", "CSVIter", "MNISTIter", "LibSVMIter"]


def _shape_arg(value, what: str) -> tuple:
    """Parse a shape given as a tuple, an int or an MXNet string like '(3, 2)'."""
    if isinstance(value, str):
        value = value.strip().strip("()[]")
        value = tuple(int(v) for v in value.split(",") if v.strip())
    elif isinstance(value, int):
        value = (value,)
    value = tuple(int(v) for v in value)
    if not value:
        raise MXNetError("Invalid Parameter format for %s expect Shape but value='%s'"
                         % (what, value))
    return value


def _check_file(path: str, iter_name: str) -> None:
    """Raise MXNetError naming ``path`` when it cannot be opened."""
    if not os.path.isfile(path):
        raise MXNetError('%s: Check failed: allow_null: :Open "%s": No such file or directory'
                         % (iter_name, path))


class _BatchLoader:
    """Batches samples as MXNet's BatchLoader does (a Python 'handle' for MXDataIter)."""

    def __init__(self, data: np.ndarray, label: np.ndarray, batch_size: int,
                 round_batch: bool, index: np.ndarray | None = None):
        self.data, self.label = data, label
        self.batch_size, self.round_batch = int(batch_size), bool(round_batch)
        self.inst_index = np.arange(len(data), dtype=np.uint64) if index is None else index
        self._pos = 0
        self._num_overflow = 0
        self._buf_data = np.zeros((self.batch_size,) + data.shape[1:], data.dtype)
        self._buf_label = np.zeros((self.batch_size,) + label.shape[1:], label.dtype)
        self._buf_index = np.zeros(self.batch_size, np.uint64)
        self.pad = 0

    def before_first(self) -> None:
        """Rewind, except after a round_batch wrap (the next epoch continues from there)."""
        if not self.round_batch or self._num_overflow == 0:
            self._pos = 0
        else:
            self._num_overflow = 0

    def _copy(self, top: int) -> None:
        """Copy the sample at the cursor into row ``top`` of the buffers."""
        self._buf_data[top] = self.data[self._pos]
        self._buf_label[top] = self.label[self._pos]
        self._buf_index[top] = self.inst_index[self._pos]
        self._pos += 1

    def next(self) -> bool:
        """Fill the next batch; return False at the end of the epoch."""
        self.pad = 0
        if self._num_overflow != 0:
            return False
        top = 0
        n = len(self.data)
        while self._pos < n:
            self._copy(top)
            top += 1
            if top >= self.batch_size:
                return True
        if top == 0:
            return False
        if self.round_batch:
            self._pos = 0
            for row in range(top, self.batch_size):
                if self._pos >= n:
                    raise MXNetError("Check failed: base_->Next(): number of input must be "
                                     "bigger than batch size")
                self._copy(row)
                self._num_overflow += 1
            self.pad = self._num_overflow
        else:
            # MXNet: the padded rows keep whatever the previous batch left in the buffer.
            self.pad = self.batch_size - top
        return True

    def batch(self):
        """(data, label, index) copies of the current batch."""
        return self._buf_data.copy(), self._buf_label.copy(), self._buf_index.copy()


class MXDataIter(DataIter):
    """A data iterator over a native batch loader (MXNet's wrapper of C++ iterators).

    Parameters
    ----------
    handle : _BatchLoader
        The loader.
    data_name : str, optional
        Data name. Default to "data".
    label_name : str, optional
        Label name. Default to "softmax_label".
    """

    def __init__(self, handle, data_name="data", label_name="softmax_label", **_):
        super().__init__()
        self.handle = handle
        self._debug_skip_load = False
        self._debug_at_begin = True
        self._current = None
        self.first_batch = None
        self.first_batch = self.next()
        data = self.first_batch.data[0]
        label = self.first_batch.label[0]
        self.provide_data = [DataDesc(data_name, data.shape, data.dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, label.dtype)]
        self.batch_size = data.shape[0]

    def debug_skip_load(self):
        """Always return the first batch (for debugging the speed of the rest)."""
        self._debug_skip_load = True
        _LOG.info("Set debug_skip_load to be true, will simply return first batch")

    def reset(self):
        self._debug_at_begin = True
        self.first_batch = None
        self.handle.before_first()

    def _make_batch(self) -> DataBatch:
        """Wrap the loader's current batch."""
        data, label, index = self.handle.batch()
        self._current = DataBatch(data=[array(data, dtype=data.dtype)],
                                  label=[array(label, dtype=label.dtype)],
                                  pad=self.handle.pad, index=index)
        return self._current

    def next(self):
        if self._debug_skip_load and not self._debug_at_begin:
            return self._current
        if self.first_batch is not None:
            batch = self.first_batch
            self.first_batch = None
            return batch
        self._debug_at_begin = False
        if self.handle.next():
            return self._make_batch()
        raise StopIteration

    def iter_next(self):
        if self.first_batch is not None:
            return True
        if self.handle.next():
            self._make_batch()
            return True
        return False

    def getdata(self):
        return (self.first_batch or self._current).data[0]

    def getlabel(self):
        return (self.first_batch or self._current).label[0]

    def getindex(self):
        return (self.first_batch or self._current).index

    def getpad(self):
        return (self.first_batch or self._current).pad


def _batch_label_shape(label_shape: tuple) -> tuple:
    """MXNet: a label of shape (1,) is batched as (batch,)."""
    return () if label_shape == (1,) else label_shape


def _read_csv(path: str, shape: tuple, dtype, iter_name: str) -> np.ndarray:
    """Read a CSV file (or every file of a directory, by name) into ``(rows,) + shape``."""
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path)
                       if os.path.isfile(os.path.join(path, f)))
    else:
        _check_file(path, iter_name)
        files = [path]
    values = np.concatenate([np.loadtxt(f, delimiter=",", dtype=np.float64, ndmin=2)
                             for f in files]) if files else np.zeros((0, 1))
    width = int(np.prod(shape))
    if values.shape[1] != width:
        raise MXNetError("%s: Check failed: row width %d of %s does not match shape %s"
                         % (iter_name, values.shape[1], path, shape))
    return values.astype(dtype).reshape((-1,) + shape)


def CSVIter(data_csv, data_shape, label_csv="NULL", label_shape=(1,), batch_size=None,
            round_batch=True, dtype="float32", data_name="data", label_name="softmax_label",
            **kwargs):
    """Returns the CSV file iterator.

    Parameters
    ----------
    data_csv : str
        The input CSV file or a directory path.
    data_shape : Shape(tuple)
        The shape of one example.
    label_csv : str, optional, default 'NULL'
        The input CSV file for the labels; labels are zeros when 'NULL'.
    label_shape : Shape(tuple), optional, default [1]
        The shape of one label.
    batch_size : int
        Batch size.
    round_batch : boolean, optional, default=1
        Whether to use round robin to handle overflow batch or not.
    dtype : {'float32', 'int32', 'int64'}, optional
        Output data type.

    Returns
    -------
    MXDataIter
        The result iterator.
    """
    if batch_size is None:
        raise MXNetError("Required parameter batch_size of int is not presented")
    dshape, lshape = _shape_arg(data_shape, "data_shape"), _shape_arg(label_shape, "label_shape")
    data = _read_csv(data_csv, dshape, dtype, "CSVIter")
    if label_csv in (None, "NULL"):
        label = np.zeros((len(data),) + lshape, dtype)
    else:
        label = _read_csv(label_csv, lshape, dtype, "CSVIter")
        if len(label) != len(data):
            raise MXNetError("CSVIter: %s has %d rows but %s has %d"
                             % (label_csv, len(label), data_csv, len(data)))
    label = label.reshape((len(label),) + _batch_label_shape(lshape))
    loader = _BatchLoader(data, label, int(batch_size), bool(int(round_batch)))
    return MXDataIter(loader, data_name=data_name, label_name=label_name)


def _read_idx(path: str, magic: int, ndim: int) -> np.ndarray:
    """Read a big-endian MNIST idx file of ``ndim`` dimensions (uint8 payload)."""
    _check_file(path, "MNISTIter")
    with open(path, "rb") as f:
        blob = f.read()
    head = 4 * (ndim + 1)
    if len(blob) < head:
        raise MXNetError("MNISTIter: %s is truncated (no idx header)" % path)
    fields = struct.unpack(">%dI" % (ndim + 1), blob[:head])
    if fields[0] != magic:
        raise MXNetError("MNISTIter: %s is not an MNIST idx file (magic %d, expected %d)"
                         % (path, fields[0], magic))
    dims = fields[1:]
    count = int(np.prod(dims))
    if len(blob) - head < count:
        raise MXNetError("MNISTIter: %s is truncated: expected %d bytes of data, got %d"
                         % (path, count, len(blob) - head))
    return np.frombuffer(blob, np.uint8, count, head).reshape(dims)


def _mnist_arrays(image: str, label: str, num_parts: int, part_index: int, shuffle: bool,
                  seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Load this part of the MNIST files as float32 images (N, H, W) and labels (N,)."""
    images = _read_idx(image, 2051, 3)
    labels = _read_idx(label, 2049, 1)
    n = len(images)
    start, end = n * part_index // num_parts, n * (part_index + 1) // num_parts
    # MXNet: pixels are scaled by 1/256, not 1/255.
    images = images[start:end].astype(np.float32) / np.float32(256.0)
    labels = labels[start:end].astype(np.float32)
    if shuffle:
        # MXNet shuffles once with its own generator; the order differs from MXNet's.
        perm = np.random.RandomState(seed).permutation(len(images))
        images, labels = images[perm], labels[perm]
    return images, labels


def MNISTIter(image="./train-images-idx3-ubyte", label="./train-labels-idx1-ubyte",
              batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
              part_index=0, data_name="data", label_name="softmax_label", **kwargs):
    """Iterating on the MNIST dataset (idx files).

    Parameters
    ----------
    image : str, optional, default='./train-images-idx3-ubyte'
        Dataset Param: Mnist image path.
    label : str, optional, default='./train-labels-idx1-ubyte'
        Dataset Param: Mnist label path.
    batch_size : int, optional, default='128'
        Batch Param: Batch Size. The incomplete last batch is dropped.
    shuffle : boolean, optional, default=1
        Augmentation Param: Whether to shuffle data (once, at load time).
    flat : boolean, optional, default=0
        Augmentation Param: Whether to flat the data into 1D.
    seed : int, optional, default='0'
        Augmentation Param: Random Seed.
    silent : boolean, optional, default=0
        Auxiliary Param: Whether to print out data info.
    num_parts : int, optional, default='1'
        partition the data into multiple parts
    part_index : int, optional, default='0'
        the index of the part will read

    Returns
    -------
    MXDataIter
        The result iterator.
    """
    images, labels = _mnist_arrays(image, label, int(num_parts), int(part_index),
                                   bool(int(shuffle)), int(seed))
    rows, cols = images.shape[1:]
    batch_size = int(batch_size)
    if int(flat):
        images = images.reshape(len(images), rows * cols)
        shape = "(%d,%d)" % (batch_size, rows * cols)
    else:
        images = images.reshape(len(images), 1, rows, cols)
        shape = "[%d,1,%d,%d]" % (batch_size, rows, cols)
    if not int(silent):
        # MXNet: the C++ iterator writes this through dmlc's log, never through Python's
        # logging; here it goes to this module's logger, so the root logger stays untouched.
        _LOG.info("MNISTIter: load %d images, shuffle=%d, shape=%s",
                  len(images), int(shuffle), shape)
    keep = len(images) // batch_size * batch_size   # MXNet: the last partial batch is dropped
    # MXNet: MNISTIter reports a zero index for every example.
    loader = _BatchLoader(images[:keep], labels[:keep], batch_size, False,
                          index=np.zeros(keep, np.uint64))
    return MXDataIter(loader, data_name=data_name, label_name=label_name)


def _read_libsvm(path: str, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Read a LibSVM file: (first-column labels, dense features of ``width`` columns)."""
    _check_file(path, "LibSVMIter")
    labels, rows = [], []
    with open(path) as f:
        for line in f:
            tokens = line.split()
            if not tokens:
                continue
            labels.append(float(tokens[0]))
            row = np.zeros(width, np.float32)
            for tok in tokens[1:]:
                key, _, val = tok.partition(":")
                col = int(key)
                if not 0 <= col < width:
                    raise MXNetError("LibSVMIter: feature index %d in %s is out of range for "
                                     "shape (%d,)" % (col, path, width))
                row[col] = float(val)
            rows.append(row)
    return np.asarray(labels, np.float32), np.asarray(rows, np.float32).reshape(-1, width)


def LibSVMIter(data_libsvm, data_shape, label_libsvm="NULL", label_shape=(1,), batch_size=None,
               round_batch=True, num_parts=1, part_index=0, data_name="data",
               label_name="softmax_label", **kwargs):
    """Returns the LibSVM iterator (mxtorch returns dense batches, not CSRNDArray).

    Parameters
    ----------
    data_libsvm : str
        The input LibSVM file (zero-based feature indices, the first column is the label).
    data_shape : Shape(tuple)
        The shape of one example.
    label_libsvm : str, optional, default 'NULL'
        The input LibSVM file for multi-dimensional labels.
    label_shape : Shape(tuple), optional, default [1]
        The shape of one label.
    batch_size : int
        Batch size.
    round_batch : boolean, optional, default=1
        Must be true (MXNet's sparse batch loader supports nothing else).
    num_parts : int, optional, default='1'
        partition the data into multiple parts
    part_index : int, optional, default='0'
        the index of the part will read

    Returns
    -------
    MXDataIter
        The result iterator.
    """
    if batch_size is None:
        raise MXNetError("Required parameter batch_size of int is not presented")
    if not int(round_batch):
        raise MXNetError("sparse batch loader doesn't support round_batch == false yet")
    dshape, lshape = _shape_arg(data_shape, "data_shape"), _shape_arg(label_shape, "label_shape")
    label, data = _read_libsvm(data_libsvm, int(np.prod(dshape)))
    if label_libsvm not in (None, "NULL"):
        _, label = _read_libsvm(label_libsvm, int(np.prod(lshape)))
    n = len(data)
    start, end = n * int(part_index) // int(num_parts), n * (int(part_index) + 1) // int(num_parts)
    data = data[start:end].reshape((-1,) + dshape)
    label = label[start:end].reshape((-1,) + _batch_label_shape(lshape))
    loader = _BatchLoader(data, label, int(batch_size), True)
    return MXDataIter(loader, data_name=data_name, label_name=label_name)

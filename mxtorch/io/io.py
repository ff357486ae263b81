"""``mx.io.io``: every data iterator.

The pure-Python ones (NDArrayIter, ResizeIter, PrefetchingIter) are defined here; the ones
MXNet implements in C++ (CSVIter, MNISTIter, LibSVMIter, the ImageRecord iterators) are
rebuilt in ``native.py`` and ``image_record.py`` and gathered here as in MXNet's module.
"""
from __future__ import annotations

import threading

import numpy as np

# MXNet: mxnet.io.io has the C API helpers in its namespace (from .base import ...)
from ..base import c_str_array, check_call, py_str  # noqa: F401
from ..ndarray import NDArray, array, concat, tile
from .base import DataBatch, DataDesc, DataIter
from .det_record import ImageDetRecordIter
from .image_record import (ImageRecordInt8Iter, ImageRecordIter, ImageRecordIter_v1,
                           ImageRecordUInt8Iter, ImageRecordUInt8Iter_v1)
from .native import CSVIter, LibSVMIter, MNISTIter, MXDataIter
from .utils import _getdata_by_idx, _init_data, _slice_along_batch_axis

__all__ = ["DataDesc", "DataBatch", "DataIter", "ResizeIter", "PrefetchingIter", "NDArrayIter",
           "MXDataIter", "CSVIter", "MNISTIter", "LibSVMIter", "ImageRecordIter",
           "ImageRecordIter_v1", "ImageRecordUInt8Iter", "ImageRecordUInt8Iter_v1",
           "ImageRecordInt8Iter", "ImageDetRecordIter"]


class ResizeIter(DataIter):
    """Resize a data iterator to a given number of batches.

    Parameters
    ----------
    data_iter : DataIter
        The data iterator to be resized.
    size : int
        The number of batches per epoch to resize to.
    reset_internal : bool
        Whether to reset internal iterator on ResizeIter.reset.
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


def _renamed(descs, mapping):
    """Rename a list of DataDesc / (name, shape) with ``mapping``."""
    return [DataDesc(mapping[x.name], x.shape, x.dtype) if isinstance(x, DataDesc)
            else DataDesc(*x) for x in descs]


class _PrefetchError:
    """An exception a prefetching thread caught, for the consumer to raise."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


class PrefetchingIter(DataIter):
    """Perform pre-fetching in another thread.

    Parameters
    ----------
    iters : DataIter or list of DataIter
        The data iterators to be pre-fetched (their batches are concatenated).
    rename_data : None or list of dict
        The i-th element is a renaming map for the i-th iter's data names.
    rename_label : None or list of dict
        Similar to ``rename_data``.
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, list):
            iters = [iters]
        self.n_iter = len(iters)
        assert self.n_iter > 0
        self.iters = iters
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.data_ready = [threading.Event() for _ in range(self.n_iter)]
        self.data_taken = [threading.Event() for _ in range(self.n_iter)]
        for event in self.data_taken:
            event.set()
        self.started = True
        self.current_batch = [None for _ in range(self.n_iter)]
        self.next_batch = [None for _ in range(self.n_iter)]
        self.prefetch_threads = [threading.Thread(target=self._prefetch, args=(i,), daemon=True)
                                 for i in range(self.n_iter)]
        for thread in self.prefetch_threads:
            thread.start()

    def _prefetch(self, i: int) -> None:
        """Worker loop: fetch the next batch of iterator ``i`` whenever the last was taken."""
        while True:
            self.data_taken[i].wait()
            if not self.started:
                break
            try:
                self.next_batch[i] = self.iters[i].next()
            except StopIteration:
                self.next_batch[i] = None
            except BaseException as err:  # noqa: BLE001 - handed to the consumer
                # the consumer re-raises it (MXNet's thread would die and iter_next wait
                # forever)
                self.next_batch[i] = _PrefetchError(err)
            self.data_taken[i].clear()
            self.data_ready[i].set()

    def __del__(self):
        self.started = False
        for event in getattr(self, "data_taken", []):
            event.set()
        for thread in getattr(self, "prefetch_threads", []):
            thread.join()

    @property
    def provide_data(self):
        if self.rename_data is None:
            return sum([i.provide_data for i in self.iters], [])
        return sum([_renamed(i.provide_data, r) for r, i in zip(self.rename_data, self.iters)],
                   [])

    @property
    def provide_label(self):
        if self.rename_label is None:
            return sum([i.provide_label for i in self.iters], [])
        return sum([_renamed(i.provide_label, r)
                    for r, i in zip(self.rename_label, self.iters)], [])

    def reset(self):
        for event in self.data_ready:
            event.wait()
        for it in self.iters:
            it.reset()
        for event in self.data_ready:
            event.clear()
        for event in self.data_taken:
            event.set()

    def iter_next(self):
        for event in self.data_ready:
            event.wait()
        failed = [b for b in self.next_batch if isinstance(b, _PrefetchError)]
        if failed:   # drop this step's batches; the threads carry on with the next ones
            for ready, taken in zip(self.data_ready, self.data_taken):
                ready.clear()
                taken.set()
            raise failed[0].error
        if self.next_batch[0] is None:
            for batch in self.next_batch:
                assert batch is None, "Number of entry mismatches between iterators"
            return False
        for batch in self.next_batch:
            assert batch.pad == self.next_batch[0].pad, \
                "Number of entry mismatches between iterators"
        self.current_batch = DataBatch(sum([batch.data for batch in self.next_batch], []),
                                       sum([batch.label for batch in self.next_batch], []),
                                       self.next_batch[0].pad, self.next_batch[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for event in self.data_ready:
            event.clear()
        for event in self.data_taken:
            event.set()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class NDArrayIter(DataIter):
    """Returns an iterator for ``mx.nd.NDArray``, ``numpy.ndarray`` or ``h5py.Dataset``.

    Parameters
    ----------
    data : array or list of array or dict of string to array
        The input data (a dict's sources are ordered by name).
    label : array or list of array or dict of string to array, optional
        The input label.
    batch_size : int
        Batch size of data.
    shuffle : bool, optional
        Whether to shuffle the data (with ``numpy.random``) at every reset.
    last_batch_handle : str, optional
        How to handle the last batch: 'pad' (fill from the start, report ``pad``),
        'discard' (drop it) or 'roll_over' (carry it into the first batch of the next epoch).
    data_name : str, optional
        The data name.
    label_name : str, optional
        The label name.
    layout : str, optional
        The data layout (the batch axis is the position of 'N').
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label", layout="NCHW"):
        super().__init__(batch_size)
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        self.idx = np.arange(self.data[0][1].shape[0])
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.cursor = -self.batch_size
        self.num_data = self.idx.shape[0]
        self.reset()
        self.data_list = [x[1] for x in self.data] + [x[1] for x in self.label]
        self.num_source = len(self.data_list)
        self._cache_data = None
        self._cache_label = None
        self.layout = layout

    def _descs(self, sources):
        """DataDesc of each source with the batch axis set to batch_size."""
        axis = self.layout.find("N")
        return [DataDesc(k, tuple(list(v.shape[:axis]) + [self.batch_size]
                                  + list(v.shape[axis + 1:])), v.dtype, layout=self.layout)
                for k, v in sources]

    @property
    def provide_data(self):
        """The name and shape of data provided by this iterator."""
        return self._descs(self.data)

    @property
    def provide_label(self):
        """The name and shape of label provided by this iterator."""
        return self._descs(self.label)

    def hard_reset(self):
        """Ignore roll over data and set to start."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        """Reset the iterator; with 'roll_over' the cached tail opens the next epoch."""
        if self.shuffle:
            self._shuffle_data()
        # MXNet: roll_over moves the cursor so that the cached tail fills the first batch.
        if self.last_batch_handle == "roll_over" and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        # 'discard' and 'roll_over' keep an incomplete last batch for the next epoch.
        if data[0].shape[self.layout.find("N")] != self.batch_size:
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _getdata(self, data_source, start=None, end=None):
        """Slice every source along the batch axis."""
        assert start is not None or end is not None, "should at least specify start or end"
        start = start if start is not None else 0
        if end is None:
            end = data_source[0][1].shape[0] if data_source else 0
        s = slice(start, end)
        axis = self.layout.find("N")
        out = []
        for _, src in data_source:
            if isinstance(src, (np.ndarray, NDArray)):
                out.append(_slice_along_batch_axis(src, s, axis))
            else:  # h5py.Dataset: needs increasing indices
                idx = self.idx[s]
                order = sorted(idx)
                out.append(array(src[order][[list(idx).index(i) for i in order]]))
        return out

    def _concat(self, first_data, second_data):
        """Concatenate two lists of batches along the batch axis."""
        if not first_data or not second_data:
            return first_data if first_data else second_data
        assert len(first_data) == len(second_data), "data source should contain the same size"
        return [concat(a, b, dim=self.layout.find("N")) for a, b in zip(first_data, second_data)]

    def _tile(self, data, repeats):
        """Repeat each array ``repeats`` times along axis 0."""
        return [tile(d, reps=[repeats] + [1] * (len(d.shape) - 1)) for d in data]

    def _batchify(self, data_source):
        """Load the current batch of ``data_source``, padding or rolling over as configured."""
        assert self.cursor < self.num_data, "DataIter needs reset."
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            assert self._cache_data is not None or self._cache_label is not None, \
                "next epoch should have cached data"
            cache_data = self._cache_data if self._cache_data is not None else self._cache_label
            second_data = self._getdata(data_source, end=self.cursor + self.batch_size)
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return self._concat(cache_data, second_data)
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            pad = self.batch_size - self.num_data + self.cursor
            first_data = self._getdata(data_source, start=self.cursor)
            if pad > self.num_data:
                repeats = pad // self.num_data
                second_data = self._tile(self._getdata(data_source, end=self.num_data), repeats)
                if pad % self.num_data != 0:
                    second_data = self._concat(
                        second_data, self._getdata(data_source, end=pad % self.num_data))
            else:
                second_data = self._getdata(data_source, end=pad)
            return self._concat(first_data, second_data)
        end_idx = min(self.cursor + self.batch_size, self.num_data)
        return self._getdata(data_source, self.cursor, end_idx)

    def getdata(self):
        """Get data of the current batch."""
        return self._batchify(self.data)

    def getlabel(self):
        """Get label of the current batch."""
        return self._batchify(self.label)

    def getpad(self):
        """Get the number of padding examples in the current batch."""
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        """Shuffle the index and every source with ``numpy.random.shuffle``."""
        np.random.shuffle(self.idx)
        self.data = _getdata_by_idx(self.data, self.idx)
        self.label = _getdata_by_idx(self.label, self.idx)

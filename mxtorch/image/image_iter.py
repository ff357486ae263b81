"""``mx.image.ImageIter``: image batches from a RecordIO file or an image list."""
from __future__ import annotations

import os
import random

from .. import ndarray as nd
from .. import recordio
from ..base import numeric_types
from ..io import DataBatch, DataIter
from . import image as _img
from .augmenters import CreateAugmenter

__all__ = ["ImageIter"]


def _load_imglist(path_imglist, imglist, dtype):
    """(dict key -> (label NDArray, filename), ordered keys) from a .lst file or a list."""
    result, keys = {}, []
    if path_imglist:
        with open(path_imglist) as fin:
            for line in iter(fin.readline, ""):
                fields = line.strip().split("\t")
                key = int(fields[0])
                result[key] = (nd.array([float(v) for v in fields[1:-1]], dtype=dtype),
                               fields[-1])
                keys.append(key)
        return result, keys
    for index, img in enumerate(imglist, start=1):
        key = str(index)
        if len(img) > 2:
            label = nd.array(img[:-1], dtype=dtype)
        elif isinstance(img[0], numeric_types):
            label = nd.array([img[0]], dtype=dtype)
        else:
            label = nd.array(img[0], dtype=dtype)
        result[key] = (label, img[-1])
        keys.append(key)
    return result, keys


class ImageIter(DataIter):
    """Image data iterator with a large number of augmentation choices.

    Parameters
    ----------
    batch_size : int
        Number of examples per batch.
    data_shape : tuple
        Data shape in (channels, height, width) format. Only 3 channels are supported.
    label_width : int, optional
        Number of labels per example. The default label width is 1.
    path_imgrec : str
        Path to image record file (.rec).
    path_imglist : str
        Path to image list (.lst): ``index\\tlabel(s)\\tfilename`` per line.
    path_root : str
        Root folder of image files.
    path_imgidx : str
        Path to image index file. Needed for partition and shuffling when using .rec source.
    shuffle : bool
        Whether to shuffle all images at the start of each iteration or not.
    part_index, num_parts : int
        Partition of the data to read.
    aug_list : list or None
        Augmenter list; by default ``CreateAugmenter(data_shape, **kwargs)``.
    imglist : list
        A list of images with the label(s): ``[[label, filename], ...]``.
    data_name, label_name : str
        Names of the data and label.
    dtype : str
        Label data type: 'int32', 'float32', 'int64' or 'float64'.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        How to handle the last batch.
    """

    def __init__(self, batch_size, data_shape, label_width=1,
                 path_imgrec=None, path_imglist=None, path_root=None, path_imgidx=None,
                 shuffle=False, part_index=0, num_parts=1, aug_list=None, imglist=None,
                 data_name="data", label_name="softmax_label", dtype="float32",
                 last_batch_handle="pad", **kwargs):
        super().__init__()
        assert path_imgrec or path_imglist or (isinstance(imglist, list))
        assert dtype in ["int32", "float32", "int64", "float64"], dtype + " label not supported"
        self.imgrec, self.imgidx = None, None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
        imgkeys = None
        self.imglist = None
        if path_imglist or isinstance(imglist, list):
            self.imglist, imgkeys = _load_imglist(path_imglist, imglist, dtype)
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.provide_data = [(data_name, (batch_size,) + tuple(data_shape))]
        if label_width > 1:
            self.provide_label = [(label_name, (batch_size, label_width))]
        else:
            self.provide_label = [(label_name, (batch_size,))]
        self.batch_size = batch_size
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.shuffle = shuffle
        if self.imgrec is None:
            self.seq = imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            assert self.imgidx is not None
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            assert part_index < num_parts
            part = len(self.seq) // num_parts
            self.seq = self.seq[part_index * part:(part_index + 1) * part]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = None
        self._cache_label = None
        self._cache_idx = None
        self.reset()

    def reset(self):
        """Resets the iterator to the beginning of the data."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Resets the iterator and ignore roll over data"""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    def next_sample(self):
        """Helper function for reading in next sample."""
        if self._allow_read is False:
            raise StopIteration
        if self.seq is None:
            s = self.imgrec.read()
            if s is None:
                if self.last_batch_handle != "discard":
                    self.imgrec.reset()
                raise StopIteration
            header, img = recordio.unpack(s)
            return header.label, img
        if self.cur >= self.num_image:
            if self.last_batch_handle != "discard":
                self.cur = 0
            raise StopIteration
        idx = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is not None:
            header, img = recordio.unpack(self.imgrec.read_idx(idx))
            return (header.label if self.imglist is None else self.imglist[idx][0]), img
        label, fname = self.imglist[idx]
        return label, self.read_image(fname)

    def _batchify(self, batch_data, batch_label, start=0):
        """Helper function for batchifying data"""
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.augmentation_transform(self.imdecode(s))
                batch_data[i] = self.postprocess_data(data)
                batch_label[i] = label
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_batch(self):
        """The (data, label) arrays a fresh batch is read into."""
        c, h, w = self.data_shape
        return (nd.zeros((self.batch_size, c, h, w)),
                nd.empty(self.provide_label[0][1]))

    def next(self):
        """Returns the next batch of data."""
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data, batch_label = self._new_batch()
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad != 0:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return DataBatch([batch_data], [batch_label], pad=pad)

    def check_data_shape(self, data_shape):
        """Checks if the input data shape is valid"""
        if not len(data_shape) == 3:
            raise ValueError("data_shape should have length 3, with dimensions CxHxW")
        if not data_shape[0] == 3:
            raise ValueError("This iterator expects inputs to have 3 channels.")

    def check_valid_image(self, data):
        """Raise RuntimeError when the first decoded image of ``data`` has no shape."""
        if len(data[0].shape) == 0:
            raise RuntimeError("Data shape is wrong")

    def imdecode(self, s):
        """Decodes a string or byte string to an NDArray."""
        try:
            return _img.imdecode(s)
        except Exception as err:  # MXNet wraps every decode failure
            raise RuntimeError("Broken image index: {}, {}".format(self.cur, err)) from err

    def read_image(self, fname):
        """Reads an input image `fname` and returns the decoded raw bytes."""
        with open(os.path.join(self.path_root or "", fname), "rb") as fin:
            return fin.read()

    def augmentation_transform(self, data):
        """Transforms input data with specified augmentation."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """Final postprocessing step before image is loaded into the batch."""
        return nd.transpose(datum, axes=(2, 0, 1))

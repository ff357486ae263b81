"""``mx.io.ImageDetRecordIter``: object-detection batches from a .rec file.

MXNet's C++ detection iterator, rebuilt over ``mx.recordio`` and ``mx.image``. Each
record's label is the raw detection label ``[header_width, object_width, (header...),
objects...]`` (see ``mx.image.ImageDetIter``). An image is decoded, its shorter edge
optionally resized to ``resize``, fitted to ``data_shape`` (``resize_mode``), mirrored with
probability ``rand_mirror_prob`` (boxes mirrored with it) and normalized as
``(pixel - mean_c) * scale / std_c`` (a ``std_c`` of 0 divides by 1). Its label row is
``[channels, height, width, raw_size, raw label..., label_pad_value...]``: the size of the
image content in the batch, the raw label's length and the raw label, padded to the
batch's label width ``4 + max(label_pad_width, largest raw label)``.
"""
from __future__ import annotations

import numpy as np

from .. import ndarray as nd
from .. import recordio
from ..base import MXNetError
from .base import DataBatch, DataDesc, DataIter
from .image_record import _shape3

__all__ = ["ImageDetRecordIter"]

_EXTRA = 4   # channels, height, width, raw label size
_RESIZE_MODES = ("force", "shrink", "fit")
# C++ augmenters mxtorch does not reproduce: parameter -> its "disabled" value
_UNSUPPORTED = {"rand_crop_prob": 0.0, "rand_pad_prob": 0.0, "random_hue_prob": 0.0,
                "random_saturation_prob": 0.0, "random_illumination_prob": 0.0,
                "random_contrast_prob": 0.0, "mean_img": ""}
# performance and sampler knobs of the C++ iterator that do not change the batches here
_ACCEPTED = ("preprocess_threads", "verbose", "prefetch_buffer", "ctx", "shuffle_chunk_size",
             "shuffle_chunk_seed", "aug_seq", "min_crop_scales", "max_crop_scales",
             "min_crop_aspect_ratios", "max_crop_aspect_ratios", "min_crop_overlaps",
             "max_crop_overlaps", "min_crop_sample_coverages", "max_crop_sample_coverages",
             "min_crop_object_coverages", "max_crop_object_coverages", "num_crop_sampler",
             "crop_emit_mode", "emit_overlap_thresh", "max_crop_trials", "max_pad_scale",
             "max_random_hue", "max_random_saturation", "max_random_illumination",
             "max_random_contrast", "fill_value")


def _check_kwargs(kwargs: dict) -> None:
    """Raise MXNetError for an unknown parameter or an augmentation not reproduced."""
    for key, value in kwargs.items():
        if key in _UNSUPPORTED:
            if value != _UNSUPPORTED[key]:
                raise MXNetError("ImageDetRecordIter: %s=%r is not supported by mxtorch (the "
                                 "C++ random crop, pad and HSL color augmenters are not "
                                 "reproduced); use mx.image.ImageDetIter with "
                                 "CreateDetAugmenter instead" % (key, value))
        elif key not in _ACCEPTED:
            raise MXNetError("ImageDetRecordIter: Cannot find argument '%s'" % key)


class ImageDetRecordIter(DataIter):
    """Iterates on image detection RecordIO files.

    Parameters
    ----------
    path_imgrec : str
        Path to the image RecordIO (.rec) file.
    data_shape : tuple
        Shape of one image (channels, height, width); 1 channel decodes to grayscale.
    batch_size : int
        Batch size.
    label_width : int, default -1
        The raw label size every record must have; -1 for variable sizes.
    label_pad_width : int, default 0
        Raw label width of the batch when above 0 (it must not be smaller than the
        largest raw label); 0 or -1 estimate it from the records.
    label_pad_value : float, default -1
        Value after each image's label.
    shuffle : bool, default False
        Shuffle the records at every epoch (``seed`` seeds the order).
    seed : int, default 0
        Seed of the shuffling and the random mirroring.
    round_batch : bool, default True
        Fill the last batch with records from the start (the next epoch then starts after
        them); without it the rows past the data keep the previous batch's content.
        ``pad`` reports the rows that are not new data either way.
    num_parts, part_index : int
        Read the ``part_index``-th of ``num_parts`` contiguous parts of the records.
    resize : int, default -1
        Resize the shorter edge to this size (integer arithmetic on the longer) first.
    resize_mode : {'force', 'shrink', 'fit'}, default 'force'
        'force' resizes to ``data_shape`` whatever the aspect ratio; 'shrink' scales
        images larger than ``data_shape`` down to fit in it and 'fit' scales every image
        to fit, keeping the aspect ratio (the rest of the batch row is 0).
    rand_mirror_prob : float, default 0
        Probability to flip an image and its boxes horizontally.
    inter_method : int, default 1
        Interpolation of the resizes (see ``mx.image.imresize``).
    mean_r, mean_g, mean_b, mean_a : float, default 0
        Per-channel mean subtracted.
    std_r, std_g, std_b, std_a : float, default 0
        Per-channel standard deviation divided by (0: not divided).
    scale : float, default 1
        Multiplier applied after the mean subtraction.
    data_name, label_name : str
        Names in ``provide_data`` / ``provide_label``.
    dtype : {None, 'float32'}
        Output data type (MXNet's iterator fails on any other).

    Raises
    ------
    MXNetError
        For a missing file, a bad ``data_shape``, a record whose label is not
        ``label_width`` long, a ``label_pad_width`` below the largest label, or a random
        crop, pad or color augmentation (``rand_crop_prob``, ``rand_pad_prob``,
        ``random_*_prob`` above 0; not reproduced).
    """

    def __init__(self, path_imgrec, data_shape, batch_size, label_width=-1,
                 label_pad_width=0, label_pad_value=-1.0, shuffle=False, seed=0,
                 round_batch=True, num_parts=1, part_index=0, resize=-1,
                 resize_mode="force", rand_mirror_prob=0.0, inter_method=1, mean_r=0.0,
                 mean_g=0.0, mean_b=0.0, mean_a=0.0, std_r=0.0, std_g=0.0, std_b=0.0,
                 std_a=0.0, scale=1.0, data_name="data", label_name="softmax_label",
                 dtype=None, path_imglist="", **kwargs):
        super().__init__(batch_size)
        _check_kwargs(kwargs)
        if dtype not in (None, "float32", np.float32):
            raise MXNetError("ImageDetRecordIter: dtype %s is not supported (MXNet's "
                             "iterator produces float32 only)" % (dtype,))
        if resize_mode not in _RESIZE_MODES:
            raise MXNetError("ImageDetRecordIter: resize_mode must be one of %s, got %r"
                             % (_RESIZE_MODES, resize_mode))
        self.data_shape = _shape3(data_shape)
        self.resize, self.resize_mode = int(resize), resize_mode
        self.inter_method, self.rand_mirror_prob = int(inter_method), float(rand_mirror_prob)
        self.shuffle, self.round_batch = shuffle, round_batch
        c = self.data_shape[0]
        self._mean = np.array([mean_r, mean_g, mean_b, mean_a][:c], np.float32).reshape(c, 1, 1)
        std = np.array([std_r, std_g, std_b, std_a][:c], np.float32)
        self._std = np.where(std == 0, 1, std).reshape(c, 1, 1)
        self._scale = float(scale)
        self._rng = np.random.RandomState(seed)
        records = self._read_all(path_imgrec)
        part = len(records) // num_parts
        self._records = records[part_index * part:(part_index + 1) * part] \
            if num_parts > 1 else records
        self._pad_value = float(label_pad_value)
        self._label_width = self._estimate_width(int(label_width), int(label_pad_width))
        self.provide_data = [DataDesc(data_name, (batch_size,) + self.data_shape, np.float32)]
        self.provide_label = [DataDesc(label_name, (batch_size, self._label_width),
                                       np.float32)]
        self._order = np.arange(len(self._records))
        self._start = 0          # MXNet: records a round batch took from the start
        self._buffer = (np.zeros((batch_size,) + self.data_shape, np.float32),
                        np.full((batch_size, self._label_width), self._pad_value, np.float32))
        self.reset()

    @staticmethod
    def _read_all(path: str) -> list:
        """Every (raw label, image bytes) of the record file."""
        try:
            reader = recordio.MXRecordIO(path, "r")
        except (OSError, MXNetError) as err:
            raise MXNetError("ImageDetRecordIter: cannot open %s: %s" % (path, err)) from None
        records = []
        while True:
            item = reader.read()
            if item is None:
                break
            header, buf = recordio.unpack(item)
            records.append((np.asarray(header.label, np.float32).reshape(-1), buf))
        reader.close()
        if not records:
            raise MXNetError("ImageDetRecordIter: no records in %s" % path)
        return records

    def _estimate_width(self, label_width: int, label_pad_width: int) -> int:
        """The batch's label width, checking every record's label size."""
        sizes = [label.size for label, _ in self._records]
        if label_width > 0:
            for size in sizes:
                if size != label_width:
                    raise MXNetError("ImageDetRecordIter: rec file provide %d-dimensional "
                                     "label but label_width is set to %d"
                                     % (size, label_width))
        widest = max(sizes)
        if label_pad_width > 0:
            if label_pad_width < widest:
                raise MXNetError("ImageDetRecordIOParser: label_pad_width: %d smaller than "
                                 "estimated width: %d" % (label_pad_width, widest))
            widest = label_pad_width
        return _EXTRA + widest

    def reset(self):
        if self.shuffle:
            self._rng.shuffle(self._order)
        self._cursor = self._start
        self._start = 0

    def _fitted(self, img):
        """The decoded image resized as ``resize`` and ``resize_mode`` ask."""
        from .. import image
        _, h, w = self.data_shape
        ih, iw = img.shape[0], img.shape[1]
        if self.resize > 0:
            if ih > iw:
                img = image.imresize(img, self.resize, self.resize * ih // iw, self.inter_method)
            else:
                img = image.imresize(img, self.resize * iw // ih, self.resize, self.inter_method)
            ih, iw = img.shape[0], img.shape[1]
        if self.resize_mode == "force":
            return image.imresize(img, w, h, self.inter_method)
        ratio = min(float(h) / ih, float(w) / iw)
        if self.resize_mode == "shrink" and ratio >= 1:
            return img
        return image.imresize(img, int(iw * ratio), int(ih * ratio), self.inter_method)

    def _sample(self, label: np.ndarray, buf: bytes) -> tuple[np.ndarray, np.ndarray]:
        """One (CHW data, label row) of the batch."""
        from .. import image
        c, h, w = self.data_shape
        img = self._fitted(image.imdecode(buf, 1 if c == 3 else 0)).asnumpy()
        label = label.copy()
        if self.rand_mirror_prob > 0 and self._rng.rand() < self.rand_mirror_prob:
            img = img[:, ::-1]
            header, width = int(label[0]), int(label[1])
            boxes = label[header:].reshape(-1, width)
            boxes[:, (1, 3)] = 1 - boxes[:, (3, 1)]
        data = np.zeros(self.data_shape, np.float32)
        ih, iw = img.shape[0], img.shape[1]
        data[:, :ih, :iw] = (img.transpose(2, 0, 1).astype(np.float32) - self._mean) \
            * self._scale / self._std
        row = np.full(self._label_width, self._pad_value, np.float32)
        row[:_EXTRA] = (c, ih, iw, label.size)
        row[_EXTRA:_EXTRA + label.size] = label
        return data, row

    def next(self):
        n = len(self._records)
        if self._cursor >= n:
            raise StopIteration
        take = list(self._order[self._cursor:self._cursor + self.batch_size])
        pad = self.batch_size - len(take)
        self._cursor += self.batch_size
        if pad and self.round_batch:
            take += [self._order[i % n] for i in range(pad)]
            self._start = pad % n
        data, label = self._buffer
        for i, rec in enumerate(take):
            data[i], label[i] = self._sample(*self._records[rec])
        return DataBatch([nd.array(data)], [nd.array(label)], pad=pad,
                         provide_data=self.provide_data, provide_label=self.provide_label)

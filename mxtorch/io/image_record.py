"""``mx.io.ImageRecordIter`` and its dtype variants: batches of decoded, resized, cropped,
normalized images from a .rec file.

MXNet's C++ iterators, rebuilt over ``mx.recordio`` and ``mx.image``: images are decoded,
their shorter edge optionally resized to ``resize``, enlarged (keeping the aspect ratio) when
smaller than ``data_shape``, cropped to ``data_shape`` (center, or random with
``rand_crop``), mirrored (``mirror``, or at random with ``rand_mirror``) and, for float
output, normalized as ``(pixel - mean_c) * scale / std_c``. ``uint8`` output keeps the raw
pixels; ``int8`` output is ``pixel - round(mean_c)`` saturated to [-128, 127].
"""
from __future__ import annotations

import numpy as np

from .. import ndarray as nd
from .. import recordio
from ..base import MXNetError
from .base import DataBatch, DataDesc, DataIter

__all__ = ["ImageRecordIter", "ImageRecordIter_v1", "ImageRecordUInt8Iter",
           "ImageRecordUInt8Iter_v1", "ImageRecordInt8Iter"]


def _shape3(data_shape) -> tuple:
    """data_shape as a (C, H, W) tuple of ints."""
    if isinstance(data_shape, str):
        data_shape = [int(v) for v in data_shape.strip("()[] ").split(",") if v.strip()]
    data_shape = tuple(int(v) for v in data_shape)
    if len(data_shape) != 3:
        raise MXNetError("ImageRecordIter: data_shape must be (channels, height, width), got %s"
                         % (data_shape,))
    return data_shape


class ImageRecordIter(DataIter):
    """Iterates on image RecordIO files.

    Parameters
    ----------
    path_imgrec : str
        Path to the image RecordIO (.rec) file.
    data_shape : tuple
        Shape of one image (channels, height, width).
    batch_size : int
        Batch size.
    shuffle : bool, default False
        Shuffle the records at every epoch (NumPy's global generator).
    label_width : int, default 1
        Number of labels per image.
    mean_r, mean_g, mean_b, mean_a : float, default 0
        Per-channel mean subtracted.
    std_r, std_g, std_b, std_a : float, default 1
        Per-channel standard deviation divided by.
    scale : float, default 1
        Multiplier applied after the mean subtraction.
    max_random_contrast, max_random_illumination : float, default 0
        Random contrast factor ``1 + U(-c, c)`` and offset ``U(-i, i)`` (times ``scale``,
        divided by ``std_c``) applied in the normalization of float output.
    resize : int, default -1
        Resize the shorter edge to this size (bilinear) before cropping; -1 for none.
    rand_crop : bool, default False
        Random instead of center crop.
    mirror : bool, default False
        Flip every image horizontally.
    rand_mirror : bool, default False
        Flip horizontally with probability 0.5.
    round_batch : bool, default True
        Fill the last batch with images from the start (``pad`` reports how many).
    data_name, label_name : str
        Names in ``provide_data`` / ``provide_label``.
    dtype : {'float32', 'uint8', 'int8'}, default 'float32'
        Output data type (see the module docstring for the normalization of each).
    """

    def __init__(self, path_imgrec, data_shape, batch_size, shuffle=False, label_width=1,
                 mean_r=0.0, mean_g=0.0, mean_b=0.0, mean_a=0.0, std_r=1.0, std_g=1.0,
                 std_b=1.0, std_a=1.0, scale=1.0, rand_crop=False, rand_mirror=False,
                 round_batch=True, data_name="data", label_name="softmax_label",
                 dtype="float32", std=None, resize=-1, mirror=False, max_random_contrast=0.0,
                 max_random_illumination=0.0, **kwargs):
        super().__init__(batch_size)
        self.data_shape = _shape3(data_shape)
        self.label_width = int(label_width)
        self.shuffle, self.rand_crop, self.rand_mirror = shuffle, rand_crop, rand_mirror
        self.mirror, self.resize = bool(mirror), int(resize)
        self.round_batch = round_batch
        c = self.data_shape[0]
        self._mean = np.array([mean_r, mean_g, mean_b, mean_a][:c], np.float32).reshape(c, 1, 1)
        stds = [std] * 4 if std is not None else [std_r, std_g, std_b, std_a]
        self._std = np.array(stds[:c], np.float32).reshape(c, 1, 1)
        self._scale = float(scale)
        self._contrast, self._illumination = float(max_random_contrast), \
            float(max_random_illumination)
        self._dtype = np.dtype(dtype)
        if self._dtype not in (np.float32, np.uint8, np.int8):
            raise MXNetError("ImageRecordIter: dtype must be float32, uint8 or int8, got %s"
                             % self._dtype)
        self._path_imgrec = path_imgrec
        self._records = self._read_all(path_imgrec)
        label_shape = (batch_size,) if self.label_width == 1 else (batch_size, self.label_width)
        self.provide_data = [DataDesc(data_name, (batch_size,) + self.data_shape, self._dtype)]
        self.provide_label = [DataDesc(label_name, label_shape, np.float32)]
        self._order = np.arange(len(self._records))
        self._cursor = 0
        self.reset()

    @staticmethod
    def _read_all(path: str) -> list:
        """Every (header, image bytes) of the record file."""
        reader = recordio.MXRecordIO(path, "r")
        records = []
        try:
            while True:
                item = reader.read()
                if item is None:
                    break
                try:
                    records.append(recordio.unpack(item))
                except MXNetError as err:
                    raise MXNetError("ImageRecordIter: %s, record %d: %s"
                                     % (path, len(records), err)) from None
        finally:
            reader.close()
        if not records:
            raise MXNetError("ImageRecordIter: no records in %s" % path)
        return records

    def reset(self):
        if self.shuffle:
            np.random.shuffle(self._order)
        self._cursor = 0

    def _label(self, header) -> np.ndarray:
        label = np.asarray(header.label, np.float32).reshape(-1)
        if label.size < self.label_width:
            raise MXNetError("ImageRecordIter: label_width=%d but a record has %d label(s)"
                             % (self.label_width, label.size))
        return label[:self.label_width]

    def _resized(self, img):
        """The decoded image with its shorter edge resized to ``resize`` (when set), then
        enlarged, keeping the aspect ratio, until it covers ``data_shape``."""
        from .. import image
        _, h, w = self.data_shape
        ih, iw = img.shape[0], img.shape[1]
        if self.resize > 0:
            # MXNet: integer arithmetic on the longer edge
            if ih > iw:
                img = image.imresize(img, self.resize, self.resize * ih // iw)
            else:
                img = image.imresize(img, self.resize * iw // ih, self.resize)
            ih, iw = img.shape[0], img.shape[1]
        if ih < h:
            img = image.imresize(img, int(float(h) / ih * iw), h)
            ih, iw = img.shape[0], img.shape[1]
        if iw < w:
            img = image.imresize(img, w, int(float(w) / iw * ih))
        return img

    def _image(self, buf: bytes) -> np.ndarray:
        """Decode, resize, crop, mirror and normalize one image to CHW."""
        from .. import image
        c, h, w = self.data_shape
        img = self._resized(image.imdecode(buf, 1 if c == 3 else 0))
        ih, iw = img.shape[0], img.shape[1]
        if self.rand_crop:
            y0, x0 = np.random.randint(0, ih - h + 1), np.random.randint(0, iw - w + 1)
        else:
            y0, x0 = (ih - h) // 2, (iw - w) // 2
        arr = img.asnumpy()[y0:y0 + h, x0:x0 + w]
        if self.mirror or (self.rand_mirror and np.random.rand() < 0.5):
            arr = arr[:, ::-1]
        return self._normalized(arr.transpose(2, 0, 1))

    def _normalized(self, arr: np.ndarray) -> np.ndarray:
        """CHW uint8 pixels in the output dtype, normalized as MXNet does for it."""
        if self._dtype == np.uint8:
            return arr
        if self._dtype == np.int8:
            # MXNet: the mean is rounded, the difference saturated, no std or scale
            return np.clip(arr.astype(np.int16) - np.round(self._mean).astype(np.int16),
                           -128, 127).astype(np.int8)
        contrast, illumination = self._scale, 0.0
        if self._contrast or self._illumination:
            contrast *= np.random.uniform(-1, 1) * self._contrast + 1
            illumination = np.random.uniform(-1, 1) * self._illumination * self._scale
        return ((arr.astype(np.float32) - self._mean) * contrast + illumination) / self._std

    def next(self):
        n = len(self._records)
        if self._cursor >= n:
            raise StopIteration
        take = list(self._order[self._cursor:self._cursor + self.batch_size])
        pad = self.batch_size - len(take)
        self._cursor += self.batch_size
        data = np.zeros((self.batch_size,) + self.data_shape, self._dtype)
        label = np.zeros((self.batch_size, self.label_width), np.float32)
        if pad and self.round_batch:
            take += [self._order[i % n] for i in range(pad)]
        for i, rec in enumerate(take):
            header, buf = self._records[rec]
            try:
                data[i] = self._image(buf)
            except MXNetError as err:
                raise MXNetError("ImageRecordIter: %s, record %d (id %d): %s"
                                 % (self._path_imgrec, rec, header.id, err)) from None
            label[i] = self._label(header)
        if pad and not self.round_batch:
            pad = 0  # MXNet 1.9.1: zero-filled tail, reported with pad=0
        if self.label_width == 1:
            label = label[:, 0]
        return DataBatch([nd.array(data, dtype=self._dtype)], [nd.array(label)], pad=pad,
                         provide_data=self.provide_data, provide_label=self.provide_label)


def ImageRecordUInt8Iter(*args, **kwargs):
    """``ImageRecordIter`` with ``uint8`` output: the raw cropped pixels, not normalized.

    Deprecated in MXNet 1.9.1 in favour of ``ImageRecordIter(dtype='uint8')``.
    """
    kwargs["dtype"] = "uint8"
    return ImageRecordIter(*args, **kwargs)


def ImageRecordInt8Iter(*args, **kwargs):
    """``ImageRecordIter`` with ``int8`` output: ``pixel - round(mean_c)``, saturated.

    Deprecated in MXNet 1.9.1 in favour of ``ImageRecordIter(dtype='int8')``.
    """
    kwargs["dtype"] = "int8"
    return ImageRecordIter(*args, **kwargs)


def ImageRecordIter_v1(*args, **kwargs):
    """MXNet's first ImageRecordIter implementation; the same batches as ``ImageRecordIter``
    (float32 output)."""
    kwargs["dtype"] = "float32"
    return ImageRecordIter(*args, **kwargs)


def ImageRecordUInt8Iter_v1(*args, **kwargs):
    """MXNet's first ImageRecordUInt8Iter implementation; the same as ``ImageRecordUInt8Iter``."""
    return ImageRecordUInt8Iter(*args, **kwargs)

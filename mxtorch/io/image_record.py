"""``mx.io.ImageRecordIter``: batches of decoded, cropped, normalized images from a .rec file.

MXNet's C++ iterator, rebuilt over ``mx.recordio`` and ``mx.image``: images are decoded
(OpenCV or Pillow), cropped to ``data_shape`` (center, or random with ``rand_crop``),
optionally mirrored, then normalized as ``(pixel - mean_c) * scale / std_c``.
"""
from __future__ import annotations

import numpy as np

from .. import ndarray as nd
from .. import recordio
from ..base import MXNetError
from .io import DataBatch, DataDesc, DataIter

__all__ = ["ImageRecordIter"]


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
    rand_crop : bool, default False
        Random instead of center crop.
    rand_mirror : bool, default False
        Flip horizontally with probability 0.5.
    round_batch : bool, default True
        Fill the last batch with images from the start (``pad`` reports how many).
    data_name, label_name : str
        Names in ``provide_data`` / ``provide_label``.
    """

    def __init__(self, path_imgrec, data_shape, batch_size, shuffle=False, label_width=1,
                 mean_r=0.0, mean_g=0.0, mean_b=0.0, mean_a=0.0, std_r=1.0, std_g=1.0,
                 std_b=1.0, std_a=1.0, scale=1.0, rand_crop=False, rand_mirror=False,
                 round_batch=True, data_name="data", label_name="softmax_label",
                 dtype="float32", std=None, **kwargs):
        super().__init__(batch_size)
        self.data_shape = _shape3(data_shape)
        self.label_width = int(label_width)
        self.shuffle, self.rand_crop, self.rand_mirror = shuffle, rand_crop, rand_mirror
        self.round_batch = round_batch
        c = self.data_shape[0]
        self._mean = np.array([mean_r, mean_g, mean_b, mean_a][:c], np.float32).reshape(c, 1, 1)
        stds = [std] * 4 if std is not None else [std_r, std_g, std_b, std_a]
        self._std = np.array(stds[:c], np.float32).reshape(c, 1, 1)
        self._scale = float(scale)
        self._dtype = np.dtype(dtype)
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
        while True:
            item = reader.read()
            if item is None:
                break
            records.append(recordio.unpack(item))
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

    def _image(self, buf: bytes) -> np.ndarray:
        """Decode, crop/resize, mirror and normalize one image to CHW float."""
        from .. import image
        c, h, w = self.data_shape
        img = image.imdecode(buf, 1 if c == 3 else 0)
        ih, iw = img.shape[0], img.shape[1]
        if ih < h or iw < w:
            img = image.imresize(img, max(w, iw), max(h, ih))
            ih, iw = img.shape[0], img.shape[1]
        if self.rand_crop:
            y0, x0 = np.random.randint(0, ih - h + 1), np.random.randint(0, iw - w + 1)
        else:
            y0, x0 = (ih - h) // 2, (iw - w) // 2
        arr = img.asnumpy()[y0:y0 + h, x0:x0 + w].astype(np.float32)
        if self.rand_mirror and np.random.rand() < 0.5:
            arr = arr[:, ::-1]
        arr = arr.transpose(2, 0, 1)
        return (arr - self._mean) * self._scale / self._std

    def next(self):
        n = len(self._records)
        if self._cursor >= n:
            raise StopIteration
        take = list(self._order[self._cursor:self._cursor + self.batch_size])
        pad = self.batch_size - len(take)
        self._cursor += self.batch_size
        data = np.zeros((self.batch_size,) + self.data_shape, np.float32)
        label = np.zeros((self.batch_size, self.label_width), np.float32)
        if pad and self.round_batch:
            take += [self._order[i % n] for i in range(pad)]
        for i, rec in enumerate(take):
            header, buf = self._records[rec]
            data[i] = self._image(buf)
            label[i] = self._label(header)
        if pad and not self.round_batch:
            pad = 0  # MXNet 1.9.1: zero-filled tail, reported with pad=0
        if self.label_width == 1:
            label = label[:, 0]
        return DataBatch([nd.array(data, dtype=self._dtype)], [nd.array(label)], pad=pad,
                         provide_data=self.provide_data, provide_label=self.provide_label)

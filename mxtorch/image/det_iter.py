"""``mx.image.ImageDetIter``: detection batches (images and padded box labels) from a
RecordIO file or an image list."""
from __future__ import annotations

import logging

import numpy as np

from .. import ndarray as nd
from ..util import is_np_array
from ..format import image_codec as _codec
from .detection import CreateDetAugmenter
from .image_iter import ImageIter

_LOG = logging.getLogger(__name__)

__all__ = ["ImageDetIter"]

_MEAN = np.array([123.68, 116.28, 103.53])
_STD = np.array([58.395, 57.12, 57.375])


def _display_image(image, mean, std, clip):
    """A float HWC RGB image with its normalization undone, as BGR uint8."""
    image = image.astype(np.float64)
    if std is not None:
        image *= _STD if std is True else std
    if mean is not None:
        image += _MEAN if mean is True else mean
    image = image[:, :, (2, 1, 0)]
    if clip:
        image = np.clip(image, 0, 255)
    return np.ascontiguousarray(image.astype(np.uint8))


def _draw_boxes(image, label, color, thickness, id2labels):
    """Draw each object's box (a random color without ``color``) into ``image``; class
    names need OpenCV (skipped without it)."""
    height, width, _ = image.shape
    cv2 = _codec._cv2()
    for row in label:
        x1 = int(row[1] * width)
        if x1 < 0:
            continue  # a padding row
        y1, x2, y2 = int(row[2] * height), int(row[3] * width), int(row[4] * height)
        bc = np.random.rand(3) * 255 if not color else np.asarray(color)
        t = max(1, thickness)
        x2, y2 = min(max(x2, x1), width - 1), min(max(y2, y1), height - 1)
        for (ya, yb, xa, xb) in ((y1, y1 + t, x1, x2 + 1), (y2 - t + 1, y2 + 1, x1, x2 + 1),
                                 (y1, y2 + 1, x1, x1 + t), (y1, y2 + 1, x2 - t + 1, x2 + 1)):
            image[max(ya, 0):max(yb, 0), max(xa, 0):max(xb, 0)] = bc
        if id2labels is not None and cv2 is not None and int(row[0]) in id2labels:
            text = "{:s}".format(id2labels[int(row[0])])
            font = cv2.FONT_HERSHEY_SIMPLEX
            text_height = cv2.getTextSize(text, font, 0.5, 2)[0][1]
            cv2.putText(image, text, (x1 + 5, y1 + text_height + 5), font, 0.5,
                        (255, 255, 255), 2)


def _array_fns():
    """(array, zeros, empty) of the active front end (``mx.np`` under ``npx.set_np``)."""
    if is_np_array():
        from ..numpy import array, empty, zeros
        return array, zeros, empty
    return nd.array, nd.zeros, nd.empty


class ImageDetIter(ImageIter):
    """Image iterator with a large number of augmentation choices for detection.

    A batch's label has shape ``(batch_size, max_objects, object_width)``: each image's
    objects (``[id, xmin, ymin, xmax, ymax, ...]``, normalized coordinates) and rows of -1
    after them. ``max_objects`` is the largest object count among the valid objects of the
    data set, counted once at creation.

    Parameters
    ----------
    batch_size : int
        Number of examples per batch.
    data_shape : tuple
        Data shape in (channels, height, width) format; 3 channels only.
    path_imgrec : str
        Path to image record file (.rec).
    path_imglist : str
        Path to image list (.lst): ``index\\tlabel...\\tpath`` per line, the label being
        ``header_width, object_width, (header...), objects...``.
    path_root : str
        Root folder of image files.
    path_imgidx : str
        Path to image index file. Needed for partition and shuffling when using .rec source.
    shuffle : bool
        Whether to shuffle all images at the start of each iteration or not.
    part_index, num_parts : int
        Partition of the data to read.
    aug_list : list of DetAugmenter or None
        Augmenters; by default ``CreateDetAugmenter(data_shape, **kwargs)``.
    imglist : list
        ``[[label, path], ...]`` with labels in the raw format above.
    data_name, label_name : str
        Names of the data and label.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        How to handle the last batch.
    kwargs : ...
        Arguments of :func:`~mxtorch.image.CreateDetAugmenter`.
    """

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name="data", label_name="label",
                 last_batch_handle="pad", **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape,
                         path_imgrec=path_imgrec, path_imglist=path_imglist,
                         path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[],
                         imglist=imglist, data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None \
            else aug_list
        label_shape = self._estimate_label_shape()
        self.provide_label = [(label_name, (self.batch_size,) + label_shape)]
        self.label_shape = label_shape

    def _check_valid_label(self, label):
        """Raise RuntimeError unless ``label`` is (objects, 5+) with a valid object."""
        if len(label.shape) != 2 or label.shape[1] < 5:
            raise RuntimeError("Label with shape (1+, 5+) required, %s received." % str(label))
        valid = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not valid.any():
            raise RuntimeError("Invalid label occurs.")

    def _estimate_label_shape(self):
        """(max objects, object width) over the whole data set (one pass, no decoding)."""
        max_count, width = 0, None
        self.reset()
        try:
            while True:
                label, _ = self.next_sample()
                label = self._parse_label(label)
                max_count = max(max_count, label.shape[0])
                width = label.shape[1]
        except StopIteration:
            pass
        self.reset()
        if width is None:
            raise RuntimeError("ImageDetIter: the data set has no sample to estimate the "
                               "label shape from")
        return (max_count, width)

    def _parse_label(self, label):
        """The (objects, object_width) array of a raw label ``[header_width, object_width,
        (header...), objects...]``, objects with an empty box dropped."""
        if isinstance(label, nd.NDArray):
            label = label.asnumpy()
        raw = np.asarray(label).ravel()
        if raw.size < 7:
            raise RuntimeError("Label shape is invalid: " + str(raw.shape))
        header_width, obj_width = int(raw[0]), int(raw[1])
        if obj_width < 1 or (raw.size - header_width) % obj_width != 0:
            raise RuntimeError("Label shape %s inconsistent with annotation width %d."
                               % (str(raw.shape), obj_width))
        out = np.reshape(raw[header_width:], (-1, obj_width))
        valid = np.where((out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]))[0]
        if valid.size < 1:
            raise RuntimeError("Encounter sample with no valid label.")
        return out[valid, :]

    def reshape(self, data_shape=None, label_shape=None):
        """Change the data shape (C, H, W) and/or the label shape (objects, width).

        Parameters
        ----------
        data_shape : tuple or None
            Reshape the data_shape to the new shape if not None
        label_shape : tuple or None
            Reshape label shape to new shape if not None
        """
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [(self.provide_data[0][0], (self.batch_size,) + data_shape)]
            self.data_shape = data_shape
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [(self.provide_label[0][0], (self.batch_size,) + label_shape)]
            self.label_shape = label_shape

    def check_label_shape(self, label_shape):
        """Raise ValueError unless ``label_shape`` is (objects, width) with no fewer
        objects and the same width as now."""
        if len(label_shape) != 2:
            raise ValueError("label_shape should have length 2")
        if label_shape[0] < self.label_shape[0]:
            raise ValueError("Attempts to reduce label count from %d to %d, not allowed."
                             % (self.label_shape[0], label_shape[0]))
        if label_shape[1] != self.provide_label[0][1][2]:
            raise ValueError("label_shape object width inconsistent: %d vs %d."
                             % (self.provide_label[0][1][2], label_shape[1]))

    def _batchify(self, batch_data, batch_label, start=0):
        """Fill rows ``start..`` of the batch; samples whose image or label is invalid
        (after augmentation) are skipped. Returns the number of rows filled."""
        i = start
        array_fn = _array_fns()[0]
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(label)
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as err:
                    _LOG.debug("Invalid image, skipping:  %s", str(err))
                    continue
                batch_data[i] = self.postprocess_data(data)
                num_object = label.shape[0]
                batch_label[i][0:num_object] = array_fn(label)
                if num_object < batch_label[i].shape[0]:
                    batch_label[i][num_object:] = -1
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_batch(self):
        """The (data, label) arrays of a fresh batch, in the active front end; label rows
        not filled stay -1."""
        c, h, w = self.data_shape
        _, zeros_fn, empty_fn = _array_fns()
        batch_label = empty_fn(self.provide_label[0][1])
        batch_label[:] = -1
        return zeros_fn((self.batch_size, c, h, w)), batch_label

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        """Apply each detection augmenter to ``(data, label)``."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return (data, label)

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True,
                  waitKey=None, window_name="draw_next", id2labels=None):
        """Yield the next images (HWC uint8, BGR) with their boxes drawn (needs OpenCV).

        Parameters
        ----------
        color : tuple
            Bounding box color in RGB, use None for random color
        thickness : int
            Bounding box border thickness
        mean, std : True or numpy.ndarray
            Undo the normalization (True: ImageNet's values) for display.
        clip : bool
            If true, clip to [0, 255] for better visual effect
        waitKey : None or int
            Show each image in a window for ``waitKey`` ms when set.
        window_name : str
            Plot window name if waitKey is set.
        id2labels : dict
            Class names by id, written beside the boxes.
        """
        count = 0
        try:
            while True:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(label)
                except RuntimeError as err:
                    _LOG.debug("Invalid image, skipping:  %s", str(err))
                    continue
                count += 1
                data, label = self.augmentation_transform(data, label)
                image = _display_image(data.asnumpy(), mean, std, clip)
                _draw_boxes(image, label, color[::-1] if color else None, thickness,
                            id2labels)
                if waitKey is not None:
                    cv2 = _codec._cv2()
                    if cv2 is None:
                        raise ImportError("draw_next(waitKey=...) shows the images with "
                                          "OpenCV, which is not installed")
                    cv2.imshow(window_name, image)
                    cv2.waitKey(waitKey)
                yield image
        except StopIteration:
            if not count:
                return

    def sync_label_shape(self, it, verbose=False):
        """Give this iterator and ``it`` the same (larger) object count.

        Parameters
        ----------
        it : ImageDetIter
            The other iterator to synchronize
        verbose : bool
            Print verbose log if true

        Returns
        -------
        ImageDetIter
            ``it``, reshaped when it had fewer objects.
        """
        assert isinstance(it, ImageDetIter), "Synchronize with invalid iterator."
        train_shape, val_shape = self.label_shape, it.label_shape
        assert train_shape[1] == val_shape[1], "object width mismatch."
        max_count = max(train_shape[0], val_shape[0])
        if max_count > train_shape[0]:
            self.reshape(None, (max_count, train_shape[1]))
        if max_count > val_shape[0]:
            it.reshape(None, (max_count, val_shape[1]))
        if verbose and max_count > min(train_shape[0], val_shape[0]):
            _LOG.info("Resized label_shape to (%d, %d).", max_count, train_shape[1])
        return it

"""Read images and augment them for object detection (``mx.image.detection``).

A detection label is a NumPy array with one row per object: ``[id, xmin, ymin, xmax,
ymax, extra...]``, coordinates normalized to [0, 1]. A detection augmenter takes and
returns ``(image, label)``: the geometric ones (crop, pad, flip) move the boxes with the
pixels, and :class:`DetBorrowAug` wraps a classification augmenter that leaves the boxes
alone. The raw label of a record or list entry is ``[header_width, object_width,
(more header...), objects...]`` (see :meth:`ImageDetIter._parse_label`); a batch's label
is ``(batch, max_objects, object_width)``, the rows past an image's objects set to -1.

Random choices come from Python's ``random`` module (NumPy's for the lighting noise), as
in MXNet: after ``random.seed(s)`` an augmenter makes MXNet's choices.
"""
from __future__ import annotations

import json
import logging
import random
import warnings
from math import sqrt

import numpy as np

from .. import ndarray as nd
from ..base import numeric_types
from .augmenters import (Augmenter, CastAug, ColorJitterAug, ColorNormalizeAug,
                         ForceResizeAug, HueJitterAug, LightingAug, RandomGrayAug,
                         ResizeAug)
from .augmenters import RandomOrderAug  # noqa: F401 - in MXNet's image.detection namespace
from .image import copyMakeBorder, fixed_crop
from .image_iter import ImageIter  # noqa: F401 - in MXNet's image.detection namespace

_LOG = logging.getLogger(__name__)

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug",
           "DetRandomCropAug", "DetRandomPadAug", "CreateMultiRandCropAugmenter",
           "CreateDetAugmenter", "ImageDetIter"]

_BORDER_ISOLATED = 16   # OpenCV's flag: a constant border, as MXNet pads


class DetAugmenter:
    """Detection base augmenter: ``aug(src, label)`` returns the augmented
    ``(src, label)``; subclasses define ``__call__``."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for k, v in self._kwargs.items():
            if isinstance(v, nd.NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self):
        """Saves the Augmenter to string.

        Returns
        -------
        str
            JSON formatted string that describes the Augmenter.
        """
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, src, label):
        raise TypeError("%s is a DetAugmenter base class without an augmentation; "
                        "subclasses define __call__(src, label)" % type(self).__name__)


class DetBorrowAug(DetAugmenter):
    """Apply a classification augmenter (one that does not move pixels, so the label
    stays valid) to a detection sample.

    Parameters
    ----------
    augmenter : mx.image.Augmenter
        The borrowed augmenter.
    """

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError("Borrowing from invalid Augmenter")
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        """The name and the borrowed augmenter's dump (not JSON-encoded twice)."""
        return [self.__class__.__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return (self.augmenter(src), label)


class DetRandomSelectAug(DetAugmenter):
    """Apply one augmenter picked at random from a list, or, with probability
    ``skip_prob``, none.

    Parameters
    ----------
    aug_list : list of DetAugmenter
        The candidates (an empty list always skips).
    skip_prob : float
        The probability to skip all augmenters and return input directly.
    """

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError("Allow DetAugmenter in list only")
        if not aug_list:
            skip_prob = 1
        self.aug_list = aug_list
        self.skip_prob = skip_prob

    def dumps(self):
        """The name and the dumps of the candidates."""
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return (src, label)
        # MXNet: the list itself is shuffled and its first augmenter applied
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Flip the image and its boxes left-right with probability ``p``.

    Parameters
    ----------
    p : float
        Chance [0, 1] to flip.
    """

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            self._flip_label(label)
        return (src, label)

    def _flip_label(self, label):
        """Mirror the boxes in place: xmin, xmax = 1 - xmax, 1 - xmin."""
        xmin = 1.0 - label[:, 3]
        label[:, 3] = 1.0 - label[:, 1]
        label[:, 1] = xmin


def _as_range(value, what: str, aug: str) -> tuple:
    """A (low, high) range from a range or one number (a fixed value)."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    assert isinstance(value, numeric_types)
    _LOG.info("Using fixed %s: %s in %s", what, value, aug)
    return (value, value)


def _box_areas(boxes: np.ndarray) -> np.ndarray:
    """Areas of (xmin, ymin, xmax, ymax) rows; empty boxes have area 0."""
    return np.maximum(0, boxes[:, 3] - boxes[:, 1]) * np.maximum(0, boxes[:, 2] - boxes[:, 0])


def _proposal_size(ratio: float, min_area: float, max_area: float, width: int,
                   height: int, cropping: bool) -> tuple[int, int] | None:
    """A random (w, h) of aspect ``ratio`` with area in [min_area, max_area] that fits in
    (cropping) or covers (padding) the width x height image, or None."""
    h = int(round(sqrt(min_area / ratio)))
    max_h = int(round(sqrt(max_area / ratio)))
    if cropping:
        if round(max_h * ratio) > width:
            max_h = int((width + 0.4999999) / ratio)  # largest h with round(h*ratio) <= width
        max_h = min(max_h, height)
        h = min(h, max_h)
    else:
        if round(h * ratio) < width:
            h = int((width + 0.499999) / ratio)
        h = min(max(h, height), max_h)
    if h < max_h:
        h = random.randint(h, max_h)
    return int(round(h * ratio)), h


class DetRandomCropAug(DetAugmenter):
    """Random cropping with constraints on the objects kept.

    Parameters
    ----------
    min_object_covered : float, default=0.1
        Every object kept must have at least this fraction of its area in the crop (0:
        the crop need not overlap any object).
    aspect_ratio_range : tuple of floats, default=(0.75, 1.33)
        The range of the crop's aspect ratio width / height.
    area_range : tuple of floats, default=(0.05, 1.0)
        The range of the crop's area as a fraction of the image's.
    min_eject_coverage : float, default=0.3
        An object with less than this fraction of its area left after cropping is
        dropped.
    max_attempts : int, default=50
        Attempts at a crop that satisfies the constraints; the image is kept as it is
        when all fail.
    """

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        aspect_ratio_range = _as_range(aspect_ratio_range, "aspect ratio", "DetRandomCropAug")
        area_range = _as_range(area_range, "area range", "DetRandomCropAug")
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = False
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warnings.warn("Skip DetRandomCropAug due to invalid area_range: %s" % (area_range,))
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn("Skip DetRandomCropAug due to invalid aspect_ratio_range: %s"
                          % (aspect_ratio_range,))
        else:
            self.enabled = True

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return (src, label)

    def _calculate_areas(self, label):
        """Areas of (xmin, ymin, xmax, ymax) rows."""
        return _box_areas(label)

    def _intersect(self, label, xmin, ymin, xmax, ymax):
        """The boxes clipped to (xmin, ymin, xmax, ymax); rows left empty become 0."""
        out = label.copy()
        out[:, 0] = np.maximum(label[:, 0], xmin)
        out[:, 1] = np.maximum(label[:, 1], ymin)
        out[:, 2] = np.minimum(label[:, 2], xmax)
        out[:, 3] = np.minimum(label[:, 3], ymax)
        empty = np.logical_or(out[:, 0] >= out[:, 2], out[:, 1] >= out[:, 3])
        out[empty, :] = 0
        return out

    def _check_satisfy_constraints(self, label, xmin, ymin, xmax, ymax, width, height):
        """True when every object the pixel box overlaps keeps more than
        ``min_object_covered`` of its area (and the crop has more than one pixel)."""
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False
        box = (float(xmin) / width, float(ymin) / height,
               float(xmax) / width, float(ymax) / height)
        areas = self._calculate_areas(label[:, 1:])
        valid = np.where(areas * width * height > 2)[0]
        if valid.size < 1:
            return False
        clipped = self._intersect(label[valid, 1:], *box)
        coverages = self._calculate_areas(clipped) / areas[valid]
        coverages = coverages[coverages > 0]
        return coverages.size > 0 and np.amin(coverages) > self.min_object_covered

    def _update_labels(self, label, crop_box, height, width):
        """The labels in the crop's coordinates, without the objects it ejects; None when
        none is left."""
        x0, y0 = float(crop_box[0]) / width, float(crop_box[1]) / height
        w, h = float(crop_box[2]) / width, float(crop_box[3]) / height
        out = label.copy()
        out[:, (1, 3)] -= x0
        out[:, (2, 4)] -= y0
        out[:, (1, 3)] /= w
        out[:, (2, 4)] /= h
        out[:, 1:5] = np.minimum(1, np.maximum(0, out[:, 1:5]))
        coverage = self._calculate_areas(out[:, 1:]) * w * h / self._calculate_areas(label[:, 1:])
        keep = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & \
            (coverage > self.min_eject_coverage)
        if not keep.any():
            return None
        return out[np.where(keep)[0], :]

    def _random_crop_proposal(self, label, height, width):
        """(x, y, w, h, new label) of a crop meeting the constraints, or ()."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            w, h = _proposal_size(ratio, min_area, max_area, width, height, True)
            assert w <= width
            area = w * h   # rounding may leave the area just outside the range
            if area < min_area:
                h += 1
                w = int(round(h * ratio))
                area = w * h
            if area > max_area:
                h -= 1
                w = int(round(h * ratio))
                area = w * h
            if not (min_area <= area <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._check_satisfy_constraints(label, x, y, x + w, y + h, width, height):
                new_label = self._update_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return (x, y, w, h, new_label)
        return ()


class DetRandomPadAug(DetAugmenter):
    """Random padding: the image is placed at a random position of a larger canvas filled
    with ``pad_val``.

    Parameters
    ----------
    aspect_ratio_range : tuple of floats, default=(0.75, 1.33)
        The range of the canvas's aspect ratio width / height.
    area_range : tuple of floats, default=(1.0, 3.0)
        The range of the canvas's area as a multiple of the image's (above 1).
    max_attempts : int, default=50
        Attempts at a canvas at least 2 pixels larger each way; the image is kept when
        all fail.
    pad_val : float or tuple of float, default=(128, 128, 128)
        The canvas color.
    """

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple)):
            assert isinstance(pad_val, numeric_types)
        aspect_ratio_range = _as_range(aspect_ratio_range, "aspect ratio", "DetRandomPadAug")
        area_range = _as_range(area_range, "area range", "DetRandomPadAug")
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn("Skip DetRandomPadAug due to invalid parameters: %s" % (area_range,))
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn("Skip DetRandomPadAug due to invalid aspect_ratio_range: %s"
                          % (aspect_ratio_range,))
        else:
            self.enabled = True

    def __call__(self, src, label):
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            # MXNet: a scalar pad_val fills the first channel only (OpenCV reads a
            # one-value tuple as (v, 0, 0, 0))
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, _BORDER_ISOLATED,
                                 values=self.pad_val)
        return (src, label)

    def _update_labels(self, label, pad_box, height, width):
        """The labels in the canvas's coordinates."""
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + pad_box[0]) / pad_box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + pad_box[1]) / pad_box[3]
        return out

    def _random_pad_proposal(self, label, height, width):
        """(x, y, w, h, new label) of a canvas, or ()."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            w, h = _proposal_size(ratio, min_area, max_area, width, height, False)
            if (h - height) < 2 or (w - width) < 2:
                continue  # marginal padding is not helpful
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return (x, y, w, h, self._update_labels(label, (x, y, w, h), height, width))
        return ()


def _aligned(params: list) -> list[list]:
    """Each parameter as a list, single values repeated to the longest list's length."""
    lists = [p if isinstance(p, list) else [p] for p in params]
    num = max([1] + [len(p) for p in lists])
    for k, p in enumerate(lists):
        if len(p) != num:
            assert len(p) == 1
            lists[k] = p * num
    return lists


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """Several random crop augmenters, one picked at random for each image.

    Each parameter is that of :class:`DetRandomCropAug`, or a list of them (one per
    augmenter; single values are shared by all).

    Parameters
    ----------
    min_object_covered : float or list of float, default=0.1
    aspect_ratio_range : tuple of floats or list of tuple of floats, default=(0.75, 1.33)
    area_range : tuple of floats or list of tuple of floats, default=(0.05, 1.0)
    min_eject_coverage : float or list of float, default=0.3
    max_attempts : int or list of int, default=50
    skip_prob : float, default=0
        The probability to crop nothing.

    Returns
    -------
    DetRandomSelectAug

    Examples
    --------
    >>> aug = mx.image.det.CreateMultiRandCropAugmenter(
    ...     min_object_covered=[0.1, 0.5, 0.9], area_range=[(0.1, 1.0), (0.3, 1.0), (0.5, 1.0)])
    >>> len(aug.aug_list)
    3
    """
    params = _aligned([min_object_covered, aspect_ratio_range, area_range,
                       min_eject_coverage, max_attempts])
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


_PCA_EIGVAL = np.array([55.46, 4.794, 1.148])
_PCA_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                        [-0.5836, -0.6948, 0.4203]])


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2, min_object_covered=0.1,
                       aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 3.0),
                       min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    """Create the augmenter list for detection, in MXNet's order: resize the shorter
    edge, random crop, mirror, random pad, force-resize to ``data_shape``, cast to
    float32, color jitter, hue, PCA lighting noise, gray, normalize.

    Parameters
    ----------
    data_shape : tuple of int
        (channels, height, width) of the output.
    resize : int
        Resize the shorter edge to this size first when above 0.
    rand_crop : float
        [0, 1], probability to apply random cropping.
    rand_pad : float
        [0, 1], probability to apply random padding.
    rand_gray : float
        [0, 1], probability to convert to grayscale for all channels.
    rand_mirror : bool
        Whether to apply horizontal flip to image with probability 0.5.
    mean, std : np.ndarray, True or None
        Per-channel mean and standard deviation ([r, g, b]); True for ImageNet's.
    brightness, contrast, saturation, hue, pca_noise : float
        Jitter ranges (fractions) and the PCA noise level.
    inter_method : int, default=2
        Interpolation of every resize (see ``mx.image.imresize``; 9 auto, 10 random).
    min_object_covered, aspect_ratio_range, area_range, min_eject_coverage, max_attempts
        The random crop's constraints (see :func:`CreateMultiRandCropAugmenter`); the
        padding uses ``aspect_ratio_range``, ``(1.0, area_range[1])`` and ``max_attempts``.
    pad_val : float or tuple of float
        Canvas color of the padding.

    Returns
    -------
    list of DetAugmenter
    """
    auglist = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(
            min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
            max_attempts, skip_prob=(1 - rand_crop)))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:  # as late as possible: the canvas is larger
        pad_aug = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts,
                                  pad_val)
        auglist.append(DetRandomSelectAug([pad_aug], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        auglist.append(DetBorrowAug(LightingAug(pca_noise, _PCA_EIGVAL, _PCA_EIGVEC)))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    if mean is True:
        mean = np.array([123.68, 116.28, 103.53])
    elif mean is not None:
        assert isinstance(mean, np.ndarray) and mean.shape[0] in [1, 3]
    if std is True:
        std = np.array([58.395, 57.12, 57.375])
    elif std is not None:
        assert isinstance(std, np.ndarray) and std.shape[0] in [1, 3]
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist


from .det_iter import ImageDetIter  # noqa: E402

"""Read, decode, resize, crop and augment images (``mx.image``), and ``ImageIter``.

Decoding goes through OpenCV or Pillow (optional; see ``_codec``); resizing is the
``_cvimresize`` operator. Images are HWC NDArrays, RGB by default.
"""
from __future__ import annotations

import os
import random
from numbers import Number

import numpy as np

from .. import ndarray as nd
from ..base import numeric_types
from ..format import image_codec as _codec
from ..util import is_np_array

__all__ = ["imread", "imdecode", "imresize", "copyMakeBorder", "scale_down", "resize_short",
           "fixed_crop", "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "imrotate", "random_rotate", "Augmenter", "SequentialAug", "ResizeAug",
           "ForceResizeAug", "RandomCropAug", "RandomSizedCropAug", "CenterCropAug",
           "RandomOrderAug", "BrightnessJitterAug", "ContrastJitterAug", "SaturationJitterAug",
           "HueJitterAug", "ColorJitterAug", "LightingAug", "ColorNormalizeAug",
           "RandomGrayAug", "HorizontalFlipAug", "CastAug", "CreateAugmenter", "ImageIter"]


def imread(filename, flag=1, to_rgb=True, out=None):
    """Read and decode an image to an NDArray (HWC, uint8).

    Parameters
    ----------
    filename : str
        Name of the image file to be loaded.
    flag : {0, 1}, default 1
        1 for three channel color output. 0 for grayscale output.
    to_rgb : bool, default True
        True for RGB formatted output (MXNet default). False for BGR (OpenCV default).
    out : NDArray, optional
        Output buffer.
    """
    if not os.path.isfile(filename):
        from ..base import MXNetError
        raise MXNetError("Imread: Check failed: file.is_open(): Imread: '%s' couldn't open file"
                         % filename)
    with open(filename, "rb") as fin:
        return imdecode(fin.read(), flag, to_rgb, out)


def imdecode(buf, flag=1, to_rgb=1, out=None):
    """Decode an image to an NDArray (HWC, uint8; HxWx1 when ``flag`` is 0).

    Parameters
    ----------
    buf : bytes, bytearray, numpy.ndarray or NDArray
        Binary image data.
    flag : int, default 1
        1 for three channel color output. 0 for grayscale output.
    to_rgb : int, default 1
        1 for RGB formatted output (MXNet default). 0 for BGR formatted output.
    out : NDArray, optional
        Output buffer.
    """
    if isinstance(buf, nd.NDArray):
        buf = buf.asnumpy().astype(np.uint8).tobytes()
    elif not isinstance(buf, (bytes, bytearray, np.ndarray)):
        raise ValueError("buf must be of type bytes, bytearray or numpy.ndarray,"
                         "if you would like to input type str, please convert to bytes")
    elif isinstance(buf, np.ndarray):
        buf = buf.astype(np.uint8).tobytes()
    img = _codec.decode(bytes(buf), flag, bool(to_rgb))
    if out is not None:
        out[:] = nd.array(img, dtype=np.uint8)
        return out
    return _as_front_end(nd.array(img, dtype=np.uint8))


def _as_front_end(arr):
    """``arr`` as an ``mx.np.ndarray`` under NumPy array semantics (as MXNet's _npi image
    operators return), else as given."""
    return arr.as_np_ndarray() if is_np_array() else arr


def imresize(src, w, h, interp=1, out=None):
    """Resize image with OpenCV's interpolation methods.

    Parameters
    ----------
    src : NDArray
        source image (HWC)
    w : int, required
        Width of resized image.
    h : int, required
        Height of resized image.
    interp : int, optional, default=1
        0 nearest, 1 bilinear, 2 area, 3 bicubic, 4 Lanczos (approximated by bicubic).
    """
    res = nd._internal._cvimresize(src, w=w, h=h, interp=interp, out=out)
    return res if out is not None else _as_front_end(res)


def copyMakeBorder(src, top, bot, left, right, *args, **kwargs):
    """Pad an image's borders as OpenCV's ``cv2.copyMakeBorder`` does.

    Parameters
    ----------
    src : NDArray
        Image (H, W, C).
    top, bot, left, right : int
        Rows / columns added on each side.
    type : int, default 0
        Border type: 0 constant, 1 replicate, 2 reflect, 3 wrap, 4 reflect_101.
    value : float, default 0
        The constant border's value on the first three channels.
    values : tuple of float
        The constant border's value per channel (up to 4), in place of ``value``.
    out : NDArray, optional
        The output NDArray to hold the result.

    Returns
    -------
    NDArray
        The (H + top + bot, W + left + right, C) image.

    Examples
    --------
    >>> img = mx.nd.ones((2, 3, 3), dtype='uint8')
    >>> mx.image.copyMakeBorder(img, 1, 2, 3, 4, type=0).shape
    (5, 10, 3)
    """
    return nd._internal._cvcopyMakeBorder(src, top, bot, left, right, *args, **kwargs)


def scale_down(src_size, size):
    """Scales down crop size if it's larger than image size.

    Examples
    --------
    >>> scale_down((640, 480), (720, 120))
    (640, 106)
    """
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def _get_interp_method(interp, sizes=()):
    """Get the interpolation method for resize functions (9: auto, 10: random)."""
    if interp == 9:
        if sizes:
            assert len(sizes) == 4
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError("Unknown interp method %d" % interp)
    return interp


def resize_short(src, size, interp=2):
    """Resizes shorter edge to size."""
    h, w, _ = src.shape
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """Crop src at fixed location, and (optionally) resize it to size."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != size:
        sizes = (h, w, size[1], size[0])
        out = imresize(out, *size, interp=_get_interp_method(interp, sizes))
    return out


def random_crop(src, size, interp=2):
    """Randomly crop `src` with `size` (width, height); upsample if src is smaller."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """Crops the image `src` to the given `size` (width, height) by trimming on all four sides."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """Normalize src with mean and std (in place, as MXNet does)."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """Randomly crop src with size. Randomize area and aspect ratio."""
    h, w, _ = src.shape
    src_area = h * w
    if "min_area" in kwargs:
        area = kwargs.pop("min_area")
    assert not kwargs, "unexpected keyword arguments for `random_size_crop`."
    if isinstance(area, numeric_types):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * src_area
        log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
        new_ratio = np.exp(random.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
            return out, (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def _rotation_scale(h: int, w: int, rad: np.ndarray, zoom_in: bool) -> np.ndarray:
    """Per-image grid scale that zooms in (no padding shows) or out (nothing is cut)."""
    rho, corner = np.hypot(h, w), np.arctan(h / w)
    turn = np.abs(rad)
    max_x = np.maximum(np.abs(rho * np.cos(corner + turn)), np.abs(rho * np.cos(corner - turn)))
    max_y = np.maximum(np.abs(rho * np.sin(corner + turn)), np.abs(rho * np.sin(corner - turn)))
    if zoom_in:
        return np.minimum(w / max_x, h / max_y)
    return np.maximum(max_x / w, max_y / h)


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotate image(s) by the given angle(s) in degrees, about their centre.

    Parameters
    ----------
    src : NDArray
        A CHW image or an NCHW batch, float32.
    rotation_degrees : scalar or NDArray
        One angle (counter-clockwise), or for a batch one angle per image.
    zoom_in : bool
        Zoom so that no padding shows in the output.
    zoom_out : bool
        Zoom so that the whole input stays in the output.

    Returns
    -------
    NDArray
        The rotated image(s), bilinear samples, zeros outside the input.
    """
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if src.dtype is not np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    single = src.ndim == 3
    if single:
        if not isinstance(rotation_degrees, Number):
            raise TypeError("When a single image is passed the rotation angle is "
                            "required to be a scalar.")
        src = src.expand_dims(axis=0)
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    n, _, h, w = src.shape
    if isinstance(rotation_degrees, Number):
        degrees = np.full(n, float(rotation_degrees))
    else:
        degrees = np.asarray(rotation_degrees.asnumpy(), dtype=np.float64).reshape(-1)
    if len(degrees) != n:
        raise ValueError("The number of images must be equal to the number of rotation "
                         "angles")
    rad = (np.pi * degrees / 180).astype(np.float32)[:, None, None]
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    ys = np.arange(h, dtype=np.float32)[None, :, None] - hs
    xs = np.arange(w, dtype=np.float32)[None, None, :] - ws
    # MXNet: rotate pixel offsets from the centre, then normalize each axis to [-1, 1]
    gx = (xs * np.cos(rad) - ys * np.sin(rad)) / ws
    gy = (xs * np.sin(rad) + ys * np.cos(rad)) / hs
    grid = np.stack([gx, gy], axis=1)
    if zoom_in or zoom_out:
        grid = grid * _rotation_scale(h, w, rad[:, 0, 0], zoom_in)[:, None, None, None]
    out = nd.BilinearSampler(src, nd.array(grid.astype(np.float32), ctx=src.context))
    return out[0] if single else out


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """Rotate image(s) by angle(s) drawn uniformly from ``angle_limits`` (degrees).

    Parameters
    ----------
    src : NDArray
        A CHW image or an NCHW batch, float32.
    angle_limits : tuple of float
        (lower, upper) limits of the angle.
    zoom_in, zoom_out : bool
        As in :func:`imrotate`.

    Returns
    -------
    NDArray
    """
    if src.ndim == 3:
        degrees = np.random.uniform(*angle_limits)
    else:
        degrees = nd.array(np.random.uniform(*angle_limits, size=src.shape[0]))
    return imrotate(src, degrees, zoom_in=zoom_in, zoom_out=zoom_out)


from .augmenters import *  # noqa: E402, F403
from .augmenters import CreateAugmenter  # noqa: E402
from .image_iter import ImageIter  # noqa: E402

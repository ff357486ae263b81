"""Image transforms (``gluon.data.vision.transforms``), Blocks over ``F.image.*`` operators."""
from __future__ import annotations

import random

import numpy as np

from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential
from .... import image
from ....base import numeric_types

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "RandomResizedCrop", "CropResize",
           "CenterCrop", "Resize", "RandomFlipLeftRight", "RandomFlipTopBottom",
           "RandomBrightness", "RandomContrast", "RandomSaturation", "RandomHue",
           "RandomColorJitter", "RandomLighting", "RandomApply", "Rotate", "RandomRotation"]


class Compose(Sequential):
    """Sequentially composes multiple transforms (consecutive HybridBlocks are hybridized).

    Parameters
    ----------
    transforms : list of transform Blocks
        The list of transforms to be composed.
    """

    def __init__(self, transforms):
        super().__init__()
        transforms = list(transforms) + [None]
        hybrid = []
        for i in transforms:
            if isinstance(i, HybridBlock):
                hybrid.append(i)
                continue
            if len(hybrid) == 1:
                self.add(hybrid[0])
                hybrid = []
            elif len(hybrid) > 1:
                hblock = HybridSequential()
                for j in hybrid:
                    hblock.add(j)
                hblock.hybridize()
                self.add(hblock)
                hybrid = []
            if i is not None:
                self.add(i)


class Cast(HybridBlock):
    """Cast inputs to a specific data type.

    Parameters
    ----------
    dtype : str, default 'float32'
        The target data type, in string or `numpy.dtype`.
    """

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """Converts an image NDArray (H x W x C, [0, 255]) to a float32 tensor (C x H x W, [0, 1))."""

    def __init__(self):
        super().__init__()

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """Normalize a tensor of shape (C x H x W) or (N x C x H x W) with mean and std.

    Parameters
    ----------
    mean : float or tuple of floats
        The mean values.
    std : float or tuple of floats
        The standard deviation values.
    """

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, self._mean, self._std)


class RandomResizedCrop(Block):
    """Crop the input image with random scale and aspect ratio, then resize it to `size`.

    Parameters
    ----------
    size : int or tuple of (W, H)
        Size of the final output.
    scale : tuple of two floats
        Range of the cropped area over the original area.
    ratio : tuple of two floats
        Range of the aspect ratio of the crop.
    interpolation : int
        Interpolation method for resizing.
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        if isinstance(size, numeric_types):
            size = (size, size)
        self._args = (size, scale, ratio, interpolation)

    def forward(self, x):
        return image.random_size_crop(x, *self._args)[0]


class CropResize(HybridBlock):
    """Crop the input image at (x, y) with (width, height), optionally resize to `size`."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._x, self._y = x, y
        self._width, self._height = width, height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            interp = 1 if self._interpolation is None else self._interpolation
            out = F.image.resize(out, self._size, False, interp)
        return out


class CenterCrop(Block):
    """Crops the image `src` to the given `size` (W, H) by trimming on all four sides."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        if isinstance(size, numeric_types):
            size = (size, size)
        self._args = (size, interpolation)

    def forward(self, x):
        return image.center_crop(x, *self._args)[0]


class Resize(HybridBlock):
    """Resize an image or a batch of image NDArray to the given size (W, H) or short side."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, self._size, self._keep, self._interpolation)


def _simple(name: str, op: str, doc: str):
    """A parameterless HybridBlock calling ``F.image.<op>(x)``."""
    def hybrid_forward(self, F, x):
        return getattr(F.image, op)(x)
    return type(name, (HybridBlock,), {"__doc__": doc, "hybrid_forward": hybrid_forward})


RandomFlipLeftRight = _simple("RandomFlipLeftRight", "random_flip_left_right",
                              "Randomly flip the input image left to right with probability 0.5.")
RandomFlipTopBottom = _simple("RandomFlipTopBottom", "random_flip_top_bottom",
                              "Randomly flip the input image top to bottom with probability 0.5.")


def _jitter(name: str, op: str):
    """A HybridBlock drawing a factor from [max(0, 1-v), 1+v] for ``F.image.<op>``."""
    def __init__(self, value):  # noqa: N807 - becomes the class's __init__
        HybridBlock.__init__(self)
        self._args = (max(0, 1 - value), 1 + value)

    def hybrid_forward(self, F, x):
        return getattr(F.image, op)(x, *self._args)
    doc = "Randomly jitters image %s with a factor from [max(0, 1 - %s), 1 + %s]." % (
        op.split("_")[1], op.split("_")[1], op.split("_")[1])
    return type(name, (HybridBlock,), {"__doc__": doc, "__init__": __init__,
                                       "hybrid_forward": hybrid_forward})


RandomBrightness = _jitter("RandomBrightness", "random_brightness")
RandomContrast = _jitter("RandomContrast", "random_contrast")
RandomSaturation = _jitter("RandomSaturation", "random_saturation")
RandomHue = _jitter("RandomHue", "random_hue")


class RandomColorJitter(HybridBlock):
    """Randomly jitters the brightness, contrast, saturation, and hue of an image."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """Add AlexNet-style PCA-based noise to an image.

    Parameters
    ----------
    alpha : float
        Intensity of the image.
    """

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, self._alpha)


class Rotate(Block):
    """Rotate the input image(s) by a fixed angle, keeping their shape.

    Parameters
    ----------
    rotation_degrees : float
        The angle in degrees.
    zoom_in : bool
        Zoom in so that no padding shows in the output.
    zoom_out : bool
        Zoom out so that the whole input stays in the output.

    Inputs: a float32 CHW image or NCHW batch. Outputs: the same shape.
    """

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. "
                            "Consider calling it after ToTensor")
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """Rotate the input image(s) by an angle drawn uniformly from ``angle_limits``.

    Parameters
    ----------
    angle_limits : tuple of float
        (lower, upper) angles in degrees, lower < upper.
    zoom_in, zoom_out : bool
        As in :class:`Rotate`.
    rotate_with_proba : float
        Probability of rotating at all (the input is returned unchanged otherwise).
    """

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        # MXNet: the draw comes from NumPy's global generator
        if np.random.random() > self._rotate_with_proba:
            return x
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. "
                            "Consider calling it after ToTensor")
        return image.random_rotate(x, *self._args)


class RandomApply(Sequential):
    """Apply a list of transformations randomly given probability `p`."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)

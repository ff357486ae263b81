"""Image utilities and iterators (``mx.image``)."""
from .image import *  # noqa: F403
from .image import __all__ as _image_all

from . import detection
from . import detection as det
from .detection import *  # noqa: F403
from .detection import __all__ as _detection_all

__all__ = list(_image_all) + list(_detection_all)

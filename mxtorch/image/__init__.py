"""Image utilities and iterators (``mx.image``)."""
from .image import *  # noqa: F401,F403
from .image import __all__ as _image_all

__all__ = list(_image_all)

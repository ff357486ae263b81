"""``mx.nd.image``: the image operators (``_image_resize`` is ``image.resize``)."""
from .register import populate as _populate

__all__ = _populate(globals(), "image")

"""Dataset utilities (``gluon.data``)."""
from .dataset import *  # noqa: F403
from .dataset import __all__ as _dataset_all
from .sampler import *  # noqa: F403
from .sampler import __all__ as _sampler_all
from .dataloader import *  # noqa: F403
from .dataloader import __all__ as _loader_all
from . import vision

__all__ = list(_dataset_all) + list(_sampler_all) + list(_loader_all) + ["vision"]

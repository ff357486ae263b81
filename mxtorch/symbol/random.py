"""``mx.sym.random``: sampling. The wrappers of ``random_api`` (``uniform``, ``normal``, ...)
choose between the ``_random_*`` and ``_sample_*`` operators; the other sampling operators
(``uniform_like``, ``pdf_normal``, ...) come from the registry."""
from .random_api import *  # noqa: F403
from .random_api import __all__ as _wrappers
from .register import populate as _populate

__all__ = list(_wrappers) + _populate(globals(), "random")

"""NDArray namespace used to register contrib functions: ``mx.contrib.ndarray`` is
``mx.nd.contrib`` (the registry's ``_contrib_*`` operators and MXNet's Python helpers)."""
from ..ndarray.contrib import *  # noqa: F403
from ..ndarray.contrib import __all__  # noqa: F401

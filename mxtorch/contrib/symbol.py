"""Symbol namespace used to register contrib functions: ``mx.contrib.symbol`` is
``mx.sym.contrib`` (the registry's ``_contrib_*`` operators and MXNet's Python helpers)."""
from ..symbol.contrib import *  # noqa: F403
from ..symbol.contrib import __all__  # noqa: F401

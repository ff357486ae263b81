"""``mx.sym`` / ``mx.symbol``: symbolic graphs, generated from the operator registry.

The registry's operators fill the namespace modules ``op`` (public names, all exported
here), ``_internal``, ``contrib``, ``linalg``, ``random`` and ``image``; Python-level
helpers (``zeros``, ``maximum``, ...) win over operator names.
"""
from .. import ops as _ops  # registers every operator
from .op import *  # noqa: F403
from . import _internal, contrib, image, linalg, op, random
from .symbol import Symbol, var, Variable, Group, load, load_json, fromjson
from .helpers import *  # noqa: F403
from .register import install_methods as _install_methods


def _split_v2(self, *args, **kwargs):
    """Split this symbol into sections or at indices (see :func:`split_v2`)."""
    return split_v2(self, *args, **kwargs)  # noqa: F405 - from .helpers


_install_methods(Symbol)
Symbol.split_v2 = _split_v2

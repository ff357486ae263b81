"""``mx.nd``: imperative NDArray operators, generated from the operator registry.

The registry's operators fill the namespace modules ``op`` (public names, all exported
here), ``_internal``, ``contrib``, ``linalg``, ``random`` and ``image``; Python-level
helpers (``zeros``, ``save``, ``concatenate``, ...) win over operator names.
"""
from .. import ops as _ops  # registers every operator
from .op import *  # noqa: F403
from . import _internal, contrib, image, linalg, op, random
from .ndarray import (NDArray, array, empty, invoke, waitall, from_numpy, from_dlpack,
                      to_dlpack_for_read, to_dlpack_for_write)
from .indexing import (get_indexing_dispatch_code, get_oshape_of_gather_nd_op,
                       indexing_key_expand_implicit_axes)
from .utils import *  # noqa: F403
from . import sparse, utils
from .methods import install as _install_methods
from .cached_op import CachedOp

_install_methods(NDArray)

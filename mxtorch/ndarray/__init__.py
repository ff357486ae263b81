"""``mx.nd``: imperative NDArray operators, generated from the operator registry."""
from types import ModuleType as _ModuleType

from .. import ops as _ops  # noqa: F401  (registers every operator)
from .ndarray import (NDArray, array, empty, invoke, waitall, from_numpy, from_dlpack,  # noqa: F401
                      to_dlpack_for_read, to_dlpack_for_write)
from . import register as _register

contrib = _ModuleType("mxtorch.ndarray.contrib", "Contrib operators (mx.nd.contrib).")
linalg = _ModuleType("mxtorch.ndarray.linalg", "Linear algebra operators (mx.nd.linalg).")
random = _ModuleType("mxtorch.ndarray.random", "Random sampling (mx.nd.random).")
image = _ModuleType("mxtorch.ndarray.image", "Image operators (mx.nd.image).")
_internal = _ModuleType("mxtorch.ndarray._internal", "Internal operators.")
op = _ModuleType("mxtorch.ndarray.op", "All operators.")

_register.populate(globals(), {"contrib": contrib.__dict__, "linalg": linalg.__dict__,
                               "random": random.__dict__, "image": image.__dict__},
                   _internal.__dict__)
op.__dict__.update({k: v for k, v in globals().items() if callable(v) and not k.startswith("_")})
op.__dict__.update(_internal.__dict__)

from .utils import *  # noqa: E402,F401,F403
from .utils import __all__ as _utils_all  # noqa: E402
from . import sparse  # noqa: E402,F401
from .random_api import install as _install_random  # noqa: E402

_install_random(random)

"""``mx.sym`` / ``mx.symbol``: symbolic graphs, generated from the operator registry."""
from types import ModuleType as _ModuleType

from .. import ops as _ops  # noqa: F401  (registers every operator)
from .symbol import Symbol, var, Variable, Group, load, load_json, fromjson  # noqa: F401
from . import register as _register

contrib = _ModuleType("mxtorch.symbol.contrib", "Contrib operators (mx.sym.contrib).")
linalg = _ModuleType("mxtorch.symbol.linalg", "Linear algebra operators (mx.sym.linalg).")
random = _ModuleType("mxtorch.symbol.random", "Random sampling (mx.sym.random).")
image = _ModuleType("mxtorch.symbol.image", "Image operators (mx.sym.image).")
_internal = _ModuleType("mxtorch.symbol._internal", "Internal operators.")
op = _ModuleType("mxtorch.symbol.op", "All operators.")

_register.populate(globals(), {"contrib": contrib.__dict__, "linalg": linalg.__dict__,
                               "random": random.__dict__, "image": image.__dict__},
                   _internal.__dict__)
op.__dict__.update({k: v for k, v in globals().items() if callable(v) and not k.startswith("_")})
op.__dict__.update(_internal.__dict__)

from .helpers import *  # noqa: E402,F401,F403  (Python-level helpers win over op names)
from .random_api import install as _install_random  # noqa: E402

_install_random(random)

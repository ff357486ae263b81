"""``mx.nd.op``: every operator of the registry under its public name, as a function over
NDArrays (``mx.nd`` exports them all)."""
from .register import populate as _populate

__all__ = _populate(globals(), "op")

"""``mx.nd._internal``: the operators whose registry name starts with ``_`` (``_plus_scalar``,
``_random_uniform``, ``_linalg_gemm``, ...), as functions over NDArrays."""
from .register import populate as _populate

__all__ = _populate(globals(), "_internal")

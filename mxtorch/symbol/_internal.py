"""``mx.sym._internal``: the operators whose registry name starts with ``_`` (``_Plus``,
``_random_uniform``, ``_linalg_gemm``, ...), as functions building Symbols."""
from .register import populate as _populate

__all__ = _populate(globals(), "_internal")

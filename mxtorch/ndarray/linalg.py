"""``mx.nd.linalg``: the linear-algebra operators (``_linalg_gemm`` is ``linalg.gemm``)."""
from .register import populate as _populate

__all__ = _populate(globals(), "linalg")

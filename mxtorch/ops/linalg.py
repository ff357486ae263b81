"""Linear algebra operators: dot, batch_dot, linalg_gemm2, khatri_rao, ..."""
from __future__ import annotations

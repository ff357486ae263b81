"""``mx.sym.np.linalg``: symbolic linear algebra in NumPy mode (MXNet 1.9.1's node names)."""
from __future__ import annotations

import numpy as _onp

from ._symbol import make_np

__all__ = ["norm", "inv", "det", "slogdet", "cholesky", "solve", "pinv", "eigvalsh", "svd"]


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's name
    """Vector or matrix norm (``_npi_norm``; ``flag`` encodes the kind of ``ord``)."""
    if isinstance(axis, int):
        axis = (axis,)
    if ord is None or ord == "fro":
        flag, value = (-2 if axis is None and ord is None else 1), 2
    elif ord == "nuc":
        flag, value = 2, 2
    else:
        flag = 0 if axis is not None and len(axis) == 2 else -1
        value = float(ord) if not isinstance(ord, int) else ord
    value = "inf" if value == _onp.inf else "-inf" if value == -_onp.inf else value
    return make_np("_npi_norm", [x], {"ord": value, "axis": axis, "keepdims": keepdims,
                                      "flag": flag})


def inv(a):
    """Matrix inverse (MXNet emits ``_linalg_inverse``)."""
    return make_np("_linalg_inverse", [a], {})


def det(a):
    """Determinant (``_linalg_det``)."""
    return make_np("_linalg_det", [a], {})


def slogdet(a):
    """(sign, log|det|) as a two-output symbol (``_linalg_slogdet``)."""
    return make_np("_linalg_slogdet", [a], {})


def cholesky(a):
    """Lower Cholesky factor (``_npi_cholesky``)."""
    return make_np("_npi_cholesky", [a], {})


def solve(a, b):
    """Solve ``a x = b`` (``_npi_solve``)."""
    return make_np("_npi_solve", [a, b], {})


def pinv(a, rcond=1e-15, hermitian=False):
    """Pseudo-inverse with a scalar ``rcond`` (``_npi_pinv_scalar_rcond``)."""
    return make_np("_npi_pinv_scalar_rcond", [a], {"rcond": rcond, "hermitian": hermitian})


def eigvalsh(a, UPLO="L"):
    """Eigenvalues of a symmetric matrix (``_npi_eigvalsh``)."""
    return make_np("_npi_eigvalsh", [a], {"UPLO": UPLO})


def svd(a):
    """(ut, l, v) with ``a = ut @ diag(l) @ v`` as a three-output symbol (``_npi_svd``)."""
    return make_np("_npi_svd", [a], {})

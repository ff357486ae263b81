"""``mx.np.linalg``: linear algebra on ``mx.np.ndarray`` (torch.linalg underneath)."""
from __future__ import annotations

import torch

from .multiarray import _ctx_of, np_op, wrap

__all__ = ["norm", "svd", "cholesky", "qr", "inv", "pinv", "det", "slogdet", "solve",
           "lstsq", "matrix_rank", "eig", "eigh", "eigvals", "eigvalsh", "tensorinv",
           "tensorsolve", "matrix_power", "multi_dot"]


def _f(x):
    t = x._t
    return t if t.is_floating_point() else t.to(torch.float32)


def _w(t, *like):
    return wrap(t, _ctx_of(*like))


@np_op
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's name
    """Matrix or vector norm (NumPy's ``ord`` conventions)."""
    t = _f(x)
    if axis is None and ord is None:
        res = torch.linalg.vector_norm(t.reshape(-1), 2)
        if keepdims:
            res = res.reshape((1,) * t.dim())
        return _w(res, x)
    if isinstance(axis, int) or (axis is None and t.dim() == 1):
        ax = 0 if axis is None else axis
        o = 2 if ord is None else ord
        return _w(torch.linalg.vector_norm(t, o, dim=ax, keepdim=keepdims), x)
    axis = (t.dim() - 2, t.dim() - 1) if axis is None else tuple(axis)
    o = "fro" if ord is None else ord
    return _w(torch.linalg.matrix_norm(t, o, dim=axis, keepdim=keepdims), x)


@np_op
def svd(a):
    """Singular value decomposition ``(u, s, vh)`` with reduced matrices."""
    u, s, vh = torch.linalg.svd(_f(a), full_matrices=False)
    return _w(u, a), _w(s, a), _w(vh, a)


@np_op
def cholesky(a):
    """Lower-triangular Cholesky factor."""
    return _w(torch.linalg.cholesky(_f(a)), a)


@np_op
def qr(a, mode="reduced"):
    """QR decomposition ``(q, r)``."""
    q, r = torch.linalg.qr(_f(a), mode=mode)
    return _w(q, a), _w(r, a)


@np_op
def inv(a):
    """Matrix inverse."""
    return _w(torch.linalg.inv(_f(a)), a)


@np_op
def pinv(a, rcond=1e-15, hermitian=False):
    """Moore-Penrose pseudo-inverse."""
    t = _f(a)
    rc = rcond._t if hasattr(rcond, "_t") else rcond
    return _w(torch.linalg.pinv(t, rtol=rc, hermitian=hermitian), a)


@np_op
def det(a):
    """Determinant."""
    return _w(torch.linalg.det(_f(a)), a)


@np_op
def slogdet(a):
    """Sign and natural log of the absolute determinant."""
    sign, logabs = torch.linalg.slogdet(_f(a))
    return _w(sign, a), _w(logabs, a)


@np_op
def solve(a, b):
    """Solve ``a x = b``."""
    tb = _f(b)
    ta = _f(a)
    if tb.dim() == ta.dim() - 1:
        return _w(torch.linalg.solve(ta, tb.unsqueeze(-1)).squeeze(-1), a, b)
    return _w(torch.linalg.solve(ta, tb), a, b)


@np_op
def lstsq(a, b, rcond="warn"):
    """Least-squares solution ``(x, residuals, rank, s)``."""
    ta, tb = _f(a), _f(b)
    vec = tb.dim() == 1
    rc = None if rcond in ("warn", None) else rcond
    res = torch.linalg.lstsq(ta.cpu(), (tb.unsqueeze(-1) if vec else tb).cpu(), rcond=rc,
                             driver="gelsd")
    x = res.solution.squeeze(-1) if vec else res.solution
    m, n = ta.shape
    rank = int(res.rank)
    if rank == n and m > n:
        r = tb.cpu() - (ta.cpu() @ (x if not vec else x.unsqueeze(-1))).reshape(tb.shape)
        resid = (r * r).sum(0)
        resid = resid.reshape(1) if vec else resid
    else:
        resid = torch.zeros((0,), dtype=ta.dtype)
    dev = ta.device
    return (_w(x.to(dev), a), _w(resid.to(dev), a), rank,
            _w(res.singular_values.to(dev), a))


@np_op
def matrix_rank(M, tol=None, hermitian=False):
    """Rank by SVD (int64)."""
    t = _f(M)
    if t.dim() < 2:
        return _w(torch.tensor(int(bool(torch.any(t != 0))), device=t.device), M)
    return _w(torch.linalg.matrix_rank(t, atol=tol, rtol=None if tol is None else 0.0,
                                       hermitian=hermitian), M)


@np_op
def eig(a):
    """Eigenvalues and right eigenvectors of a general matrix (real part)."""
    w, v = torch.linalg.eig(_f(a))
    return _w(w.real.contiguous(), a), _w(v.real.contiguous(), a)


@np_op
def eigvals(a):
    """Eigenvalues of a general matrix (real part)."""
    return _w(torch.linalg.eigvals(_f(a)).real.contiguous(), a)


@np_op
def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix."""
    w, v = torch.linalg.eigh(_f(a), UPLO=UPLO)
    return _w(w, a), _w(v, a)


@np_op
def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of a symmetric matrix."""
    return _w(torch.linalg.eigvalsh(_f(a), UPLO=UPLO), a)


@np_op
def tensorinv(a, ind=2):
    """Inverse of an N-d array with respect to ``tensordot``."""
    return _w(torch.linalg.tensorinv(_f(a), ind=ind), a)


@np_op
def tensorsolve(a, b, axes=None):
    """Solve the tensor equation ``tensordot(a, x, b.ndim) = b``."""
    return _w(torch.linalg.tensorsolve(_f(a), _f(b), dims=axes), a, b)


@np_op
def matrix_power(a, n):
    """Raise a square matrix to the integer power ``n``."""
    return _w(torch.linalg.matrix_power(a._t, n), a)


@np_op
def multi_dot(arrays, out=None):
    """Dot product of a chain of matrices (first/last may be 1-D)."""
    ts = [x._t for x in arrays]
    first_vec, last_vec = ts[0].dim() == 1, ts[-1].dim() == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    res = torch.linalg.multi_dot(ts)
    if first_vec:
        res = res.squeeze(0)
    if last_vec:
        res = res.squeeze(-1)
    return _w(res, *arrays)

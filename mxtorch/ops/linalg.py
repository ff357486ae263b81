"""Linear algebra operators: dot, batch_dot, linalg_gemm2, khatri_rao, ...

The ``_linalg_*`` operators appear in ``mx.nd.linalg`` through their prefix and as
``linalg_*`` aliases in ``mx.nd``, as in MXNet.
"""
from __future__ import annotations

import math
from functools import lru_cache

import torch

from ..base import MXNetError
from . import tuning
from .params import Bool, Enum, Float, Int
from .registry import OpDef, register

__all__ = ["dot_shape"]

_STYPES = ("csr", "default", "row_sparse")


# ---------------------------------------------------------------------- dot
def dot_shape(lshape: tuple, rshape: tuple, ta: bool, tb: bool) -> tuple[int, tuple]:
    """(contracted size, output shape) of MXNet's dot, or raise MXNetError.

    MXNet views an N-d ``lhs`` as the matrix (prod(shape[:-1]), shape[-1]) -- or, with
    ``transpose_a``, as (shape[0], prod(shape[1:])) transposed -- and ``rhs`` as
    (shape[0], prod(shape[1:])) -- or (prod(shape[:-1]), shape[-1]) transposed.
    """
    if (len(lshape) == 1 or len(rshape) == 1) and (ta or tb):
        raise MXNetError(f"Operator dot: cannot transpose vectors, shapes {tuple(lshape)} "
                         f"X {tuple(rshape)}")
    if not lshape or not rshape:
        raise MXNetError(f"Operator dot: 0-d inputs are not supported: {lshape} X {rshape}")
    lk, lfree = (lshape[0], lshape[1:]) if ta else (lshape[-1], lshape[:-1])
    rk, rfree = (rshape[-1], rshape[:-1]) if tb else (rshape[0], rshape[1:])
    if lk != rk:
        raise MXNetError(f"Operator dot: shape mismatch, lhs {tuple(lshape)} X rhs "
                         f"{tuple(rshape)} (transpose_a={ta}, transpose_b={tb}): "
                         f"{lk} != {rk}")
    out = tuple(lfree) + tuple(rfree)
    return lk, out if out else (1,)  # MXNet: vector . vector has shape (1,)


def _check_same_dtype(op: str, a: torch.Tensor, b: torch.Tensor) -> None:
    if a.dtype != b.dtype:
        raise MXNetError(f"Operator {op}: inputs must have the same dtype, got {a.dtype} "
                         f"and {b.dtype}")


def _dot_compute(attrs, lhs, rhs):
    _check_same_dtype("dot", lhs, rhs)
    ta, tb = attrs.transpose_a, attrs.transpose_b
    k, out_shape = dot_shape(tuple(lhs.shape), tuple(rhs.shape), ta, tb)
    if lhs.dim() == 2 and rhs.dim() == 2:
        return torch.matmul(lhs.t() if ta else lhs, rhs.t() if tb else rhs)
    left = lhs.reshape(k, -1).t() if ta else lhs.reshape(-1, k)
    right = rhs.reshape(-1, k).t() if tb else rhs.reshape(k, -1)
    return torch.matmul(left, right).reshape(out_shape)


_DOT_PARAMS = [Bool("transpose_a", False), Bool("transpose_b", False),
               Enum("forward_stype", _STYPES, None, optional=True)]

register(OpDef(
    "dot", _dot_compute, inputs=("lhs", "rhs"), params=_DOT_PARAMS, work=tuning.dot,
    doc="Dot product of two arrays; N-d inputs contract the last axis of ``lhs`` (the "
        "first with transpose_a) with the first axis of ``rhs`` (the last with "
        "transpose_b).\n\nParameters\n----------\nlhs : NDArray\nrhs : NDArray\n"
        "transpose_a : bool, optional\ntranspose_b : bool, optional\n"
        "forward_stype : str, optional\n    Accepted for compatibility; output is dense."))


def _batch_dot_compute(attrs, lhs, rhs):
    _check_same_dtype("batch_dot", lhs, rhs)
    ta, tb = attrs.transpose_a, attrs.transpose_b
    ls, rs = tuple(lhs.shape), tuple(rhs.shape)
    if lhs.dim() < 3 or lhs.dim() != rhs.dim():
        raise MXNetError(f"Operator batch_dot: only N-D x N-D arrays (N >= 3) are "
                         f"supported, got {ls} X {rs}")
    if ls[:-2] != rs[:-2]:
        raise MXNetError(f"Operator batch_dot: the leading batch dimensions must be equal: "
                         f"{ls} X {rs} (transpose_a={ta}, transpose_b={tb})")
    lk = ls[-2] if ta else ls[-1]
    rk = rs[-1] if tb else rs[-2]
    if lk != rk:
        raise MXNetError(f"Operator batch_dot: shape mismatch {ls} X {rs} "
                         f"(transpose_a={ta}, transpose_b={tb}): {lk} != {rk}")
    return torch.matmul(lhs.transpose(-1, -2) if ta else lhs,
                        rhs.transpose(-1, -2) if tb else rhs)


register(OpDef(
    "batch_dot", _batch_dot_compute, inputs=("lhs", "rhs"), params=_DOT_PARAMS,
    work=tuning.batch_dot,
    doc="Batched matrix product over the leading dimensions of two N-d arrays (N >= 3)."
        "\n\nParameters\n----------\nlhs : NDArray\nrhs : NDArray\n"
        "transpose_a : bool, optional\ntranspose_b : bool, optional"))


# ---------------------------------------------------------------------- gemm
def _gemm_product(op: str, attrs, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """alpha * op(A) op(B) with matrix rows on ``attrs.axis`` and columns last."""
    if a.dim() < 2 or a.dim() != b.dim():
        raise MXNetError(f"Operator {op}: A and B must have the same rank >= 2, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    axis = attrs.axis % a.dim()
    if axis == a.dim() - 1:
        raise MXNetError(f"Operator {op}: axis {attrs.axis} must not be the last axis")
    a2, b2 = a.transpose(axis, -2), b.transpose(axis, -2)
    a2 = a2.transpose(-1, -2) if attrs.transpose_a else a2
    b2 = b2.transpose(-1, -2) if attrs.transpose_b else b2
    _check_float(op, a, b)
    if a2.shape[-1] != b2.shape[-2] or a2.shape[:-2] != b2.shape[:-2]:
        raise MXNetError(f"Operator {op}: incompatible matrix dimensions for "
                         f"multiplication: A {tuple(a.shape)} X B {tuple(b.shape)} "
                         f"(transpose_a={attrs.transpose_a}, "
                         f"transpose_b={attrs.transpose_b}, axis={attrs.axis})")
    out = torch.matmul(a2, b2)
    if attrs.alpha != 1.0:
        out = out * attrs.alpha
    return out.transpose(axis, -2)


def _gemm2_compute(attrs, a, b):
    return _gemm_product("_linalg_gemm2", attrs, a, b)


def _gemm_compute(attrs, a, b, c):
    prod = _gemm_product("_linalg_gemm", attrs, a, b)
    if tuple(c.shape) != tuple(prod.shape):
        raise MXNetError(f"Operator _linalg_gemm: C has shape {tuple(c.shape)}, expected "
                         f"{tuple(prod.shape)}")
    return prod + attrs.beta * c


_GEMM_PARAMS = [Bool("transpose_a", False), Bool("transpose_b", False), Float("alpha", 1.0)]

register(OpDef(
    "_linalg_gemm2", _gemm2_compute, inputs=("A", "B"), aliases=("linalg_gemm2",),
    params=_GEMM_PARAMS + [Int("axis", -2)],
    doc="alpha * op(A) * op(B) over batches of matrices.\n\nParameters\n----------\n"
        "A : NDArray\nB : NDArray\ntranspose_a : bool\ntranspose_b : bool\nalpha : float\n"
        "axis : int\n    Axis of the matrix rows (default -2)."))
register(OpDef(
    "_linalg_gemm", _gemm_compute, inputs=("A", "B", "C"), aliases=("linalg_gemm",),
    params=_GEMM_PARAMS + [Float("beta", 1.0), Int("axis", -2)],
    doc="alpha * op(A) * op(B) + beta * C over batches of matrices.\n\nParameters\n"
        "----------\nA : NDArray\nB : NDArray\nC : NDArray\ntranspose_a : bool\n"
        "transpose_b : bool\nalpha : float\nbeta : float\naxis : int"))


# ---------------------------------------------------------------------- khatri_rao
def _khatri_rao_compute(attrs, *mats):
    ncol = mats[0].shape[-1]
    for m in mats:
        if m.dim() != 2 or m.shape[1] != ncol:
            raise MXNetError(f"Operator khatri_rao: inputs must be matrices with the same "
                             f"number of columns, got {[tuple(x.shape) for x in mats]}")
    out = mats[0]
    for m in mats[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, ncol)
    return out


register(OpDef(
    "khatri_rao", _khatri_rao_compute, params=[Int("num_args", lower=1)],
    inputs=lambda a: [f"arg{i}" for i in range(a.num_args)], key_var_num_args="num_args",
    doc="Column-wise Khatri-Rao product of matrices (M_i, N) -> (prod M_i, N).\n\n"
        "Parameters\n----------\n*args : NDArray\n    Input matrices."))


# ---------------------------------------------------------------------- la_op helpers
def _check_float(op: str, *tensors: torch.Tensor) -> None:
    """MXNet's linalg kernels are float32/float64 only."""
    for t in tensors:
        if t.dtype not in (torch.float32, torch.float64):
            raise MXNetError(f"Operator {op}: this operation only supports 32-bit and 64-bit "
                             f"floating point, got {str(t.dtype).replace('torch.', '')}")


def _check_matrices(op: str, a: torch.Tensor, square: bool = True) -> None:
    _check_float(op, a)
    if a.dim() < 2 or (square and a.shape[-1] != a.shape[-2]):
        kind = "square matrices" if square else "matrices"
        raise MXNetError(f"Operator {op}: input must be a tensor of {kind} (dimension >= 2), "
                         f"got shape {tuple(a.shape)}")


def _check_pair(op: str, a: torch.Tensor, b: torch.Tensor) -> None:
    """A (square) and B share their leading (batch) axes, as in MXNet's la_op shape checks."""
    _check_matrices(op, a)
    _check_float(op, b)
    if b.dim() != a.dim() or a.shape[:-2] != b.shape[:-2]:
        raise MXNetError(f"Operator {op}: shapes of inputs 0, 1 must be the same except on the "
                         f"last two dimensions, got {tuple(a.shape)} and {tuple(b.shape)}")


def _legacy(out: torch.Tensor) -> torch.Tensor:
    # MXNet: a single matrix's scalar result has shape (1,), never 0-d.
    return out.reshape(1) if out.dim() == 0 else out


def _tri(a: torch.Tensor, lower: bool) -> torch.Tensor:
    return torch.tril(a) if lower else torch.triu(a)


def _lapack_error(op: str, err: Exception, what: str) -> MXNetError:
    return MXNetError(f"Operator {op}: {what} failed in lapack on cpu ({err}). This may happen "
                      "when the input matrix is either not symmetric or not positive definite.")


# ---------------------------------------------------------------------- Cholesky, triangular
def _potrf(attrs, a):
    _check_matrices("_linalg_potrf", a)
    # MXNet: only the triangle named by `lower` is read.
    try:
        return torch.linalg.cholesky(a, upper=not attrs.lower)
    except torch.linalg.LinAlgError as err:
        raise _lapack_error("_linalg_potrf", err, "potrf") from None


def _potri(attrs, a):
    _check_matrices("_linalg_potri", a)
    # MXNet: (A A^T)^-1 from the lower factor (A^T A from the upper); only that triangle of
    # A is read, so the gradient is zero on the other one.
    tri = _tri(a, attrs.lower)
    return torch.cholesky_inverse(tri, upper=not attrs.lower)


def _trsm(attrs, a, b):
    _check_pair("_linalg_trsm", a, b)
    tri = _tri(a, attrs.lower)
    tri = tri.transpose(-1, -2) if attrs.transpose else tri
    upper = attrs.lower == attrs.transpose  # a transposed lower matrix is upper
    rhs = b * attrs.alpha if attrs.alpha != 1.0 else b
    return torch.linalg.solve_triangular(tri, rhs, upper=upper, left=not attrs.rightside)


def _trmm(attrs, a, b):
    _check_pair("_linalg_trmm", a, b)
    tri = _tri(a, attrs.lower)
    tri = tri.transpose(-1, -2) if attrs.transpose else tri
    out = torch.matmul(b, tri) if attrs.rightside else torch.matmul(tri, b)
    return out * attrs.alpha if attrs.alpha != 1.0 else out


def _syrk(attrs, a):
    _check_matrices("_linalg_syrk", a, square=False)
    at = a.transpose(-1, -2)
    out = torch.matmul(at, a) if attrs.transpose else torch.matmul(a, at)
    return out * attrs.alpha if attrs.alpha != 1.0 else out


def _sumlogdiag(attrs, a):
    _check_matrices("_linalg_sumlogdiag", a)
    return _legacy(torch.log(torch.diagonal(a, dim1=-2, dim2=-1)).sum(-1))


# ---------------------------------------------------------------------- LQ, eigen
def _gelqf(attrs, a):
    _check_matrices("_linalg_gelqf", a, square=False)
    if a.shape[-2] > a.shape[-1]:
        raise MXNetError(f"Operator _linalg_gelqf: input A shape wrong: last dimension must be "
                         f">= than second to last, got {tuple(a.shape)}")
    # MXNet: LAPACK gelqf + orglq. A = L Q is the transpose of A^T = Q^T L^T, and geqrf's
    # Householder convention (the signs of L's diagonal) is the same as gelqf's.
    q, r = torch.linalg.qr(a.transpose(-1, -2))
    return q.transpose(-1, -2), r.transpose(-1, -2)


class _Syevd(torch.autograd.Function):
    """(U, L) with A = U^T diag(L) U and MXNet's backward (eigenvalue gaps clamped)."""

    @staticmethod
    def forward(ctx, a):
        lam, vec = torch.linalg.eigh(a)  # lower triangle only, as MXNet's syevd
        u = vec.transpose(-1, -2)
        # MXNet: each eigenvector's largest entry (first one on ties) is made positive.
        idx = u.abs().argmax(-1, keepdim=True)
        sign = torch.where(torch.gather(u, -1, idx) < 0, -1.0, 1.0).to(u.dtype)
        u = (u * sign).contiguous()
        ctx.save_for_backward(u, lam)
        return u, lam

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, du, dlam):
        u, lam = ctx.saved_tensors
        du = torch.zeros_like(u) if du is None else du
        dlam = torch.zeros_like(lam) if dlam is None else dlam
        x = du @ u.transpose(-1, -2)
        eps = 1e-100 if u.dtype == torch.float64 else 1e-30
        gap = (lam.unsqueeze(-1) - lam.unsqueeze(-2)).clamp_min(eps) * 2.0
        low = torch.tril((x - x.transpose(-1, -2)) / gap, -1)
        y = low + low.transpose(-1, -2) + torch.diag_embed(dlam)
        return u.transpose(-1, -2) @ y @ u


def _syevd(attrs, a):
    _check_matrices("_linalg_syevd", a)
    return _Syevd.apply(a)


# ---------------------------------------------------------------------- inverse, det
def _inverse(attrs, a):
    _check_matrices("_linalg_inverse", a)
    return torch.linalg.inv(a)


class _Det(torch.autograd.Function):
    """det(A); MXNet's gradient det * inv(A)^T, zero for a singular matrix."""

    @staticmethod
    def forward(ctx, a):
        det = torch.linalg.det(a)
        ctx.save_for_backward(a, det)
        return det

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, ddet):
        a, det = ctx.saved_tensors
        inv = torch.linalg.inv_ex(a)[0].transpose(-1, -2)
        scale = torch.where(det == 0, 0.0, det * ddet).to(a.dtype)
        return torch.nan_to_num(inv) * scale[..., None, None]


class _SlogDet(torch.autograd.Function):
    """(sign, log|det A|); MXNet's gradient inv(A)^T for the log, none for the sign."""

    @staticmethod
    def forward(ctx, a):
        sign, logabs = torch.linalg.slogdet(a)
        ctx.save_for_backward(a, logabs)
        ctx.mark_non_differentiable(sign)
        return sign, logabs

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dsign, dlog):
        a, logabs = ctx.saved_tensors
        if dlog is None:
            return torch.zeros_like(a)
        inv = torch.linalg.inv_ex(a)[0].transpose(-1, -2)
        scale = torch.where(torch.isneginf(logabs), 0.0, dlog).to(a.dtype)
        return torch.nan_to_num(inv) * scale[..., None, None]


def _det(attrs, a):
    _check_matrices("_linalg_det", a)
    return _legacy(_Det.apply(a))


def _slogdet(attrs, a):
    _check_matrices("_linalg_slogdet", a)
    sign, logabs = _SlogDet.apply(a)
    return _legacy(sign), _legacy(logabs)


# ---------------------------------------------------------------------- diagonal, triangle
def _extractdiag(attrs, a):
    _check_matrices("_linalg_extractdiag", a)
    n, k = a.shape[-1], attrs.offset
    if n - abs(k) <= 0:
        raise MXNetError(f"Operator _linalg_extractdiag: illegal offset {k} for diag "
                         f"extraction of matrices of shape {tuple(a.shape)}")
    return torch.diagonal(a, k, -2, -1)


def _makediag(attrs, a):
    _check_float("_linalg_makediag", a)
    if a.dim() < 1:
        raise MXNetError("Operator _linalg_makediag: input must have at least one dimension")
    return torch.diag_embed(a, attrs.offset)


@lru_cache(maxsize=256)
def _trian_index_cpu(n: int, offset: int, lower: bool) -> torch.Tensor:
    m = n - abs(offset)
    rows, cols = torch.tril_indices(m, m)
    rows = rows + abs(offset)
    if offset > 0 or (offset == 0 and not lower):
        rows, cols = cols, rows
    return rows * n + cols


def _trian_index(n: int, offset: int, lower: bool, device) -> torch.Tensor:
    """Flat (row * n + col) positions of the packed triangle, in MXNet's packing order.

    The lower triangle (offset < 0, or 0 with ``lower``) is packed row by row, the upper
    one column by column (MXNet packs the lower triangle of the transpose).
    """
    return _trian_index_cpu(n, offset, lower).to(device)


def _extracttrian(attrs, a):
    _check_matrices("_linalg_extracttrian", a)
    n, k = a.shape[-1], attrs.offset
    if n - abs(k) <= 0:
        raise MXNetError(f"Operator _linalg_extracttrian: illegal offset {k} for trian "
                         f"extraction of matrices of shape {tuple(a.shape)}")
    idx = _trian_index(n, k, attrs.lower, a.device)
    return a.reshape(*a.shape[:-2], n * n)[..., idx]


def _maketrian(attrs, a):
    _check_float("_linalg_maketrian", a)
    size = a.shape[-1] if a.dim() else 0
    m = int(math.floor(0.5 + (math.sqrt(8 * size + 1) - 1.0) * 0.5))
    if a.dim() < 1 or m * (m + 1) // 2 != size:
        raise MXNetError(f"Operator _linalg_maketrian: input tensor of maketrian has an invalid "
                         f"dimension for the last axis: shape {tuple(a.shape)}")
    n = m + abs(attrs.offset)
    out = a.new_zeros(*a.shape[:-1], n * n)
    out = out.index_copy(-1, _trian_index(n, attrs.offset, attrs.lower, a.device), a)
    return out.reshape(*a.shape[:-1], n, n)


# ---------------------------------------------------------------------- registration
_LOWER = Bool("lower", True)
_TRI_PARAMS = [Bool("transpose", False), Bool("rightside", False), _LOWER, Float("alpha", 1.0)]
_OFFSET = Int("offset", 0)

# (name without "_linalg_", compute, inputs, params, outputs, doc)
_LINALG = [
    ("potrf", _potrf, ("A",), [_LOWER], 1,
     "Cholesky factor of a symmetric positive-definite A: A = B B^T (B lower) or\n"
     "A = B^T B (B upper, with lower=False)."),
    ("potri", _potri, ("A",), [_LOWER], 1,
     "Inverse of B from its Cholesky factor A: A^-T A^-1 (lower) or A^-1 A^-T (upper)."),
    ("trsm", _trsm, ("A", "B"), _TRI_PARAMS, 1,
     "Solve op(A) X = alpha B (or X op(A) = alpha B with rightside) for triangular A."),
    ("trmm", _trmm, ("A", "B"), _TRI_PARAMS, 1,
     "alpha op(A) B (or alpha B op(A) with rightside) with the triangular part of A."),
    ("syrk", _syrk, ("A",), [Bool("transpose", False), Float("alpha", 1.0)], 1,
     "alpha A A^T (or alpha A^T A with transpose)."),
    ("sumlogdiag", _sumlogdiag, ("A",), [], 1, "Sum of the log of the diagonal."),
    ("gelqf", _gelqf, ("A",), [], 2,
     "LQ factorization A = L Q of an (x, y) matrix with x <= y: Q (x, y) has orthonormal\n"
     "rows, L (x, x) is lower triangular. Returns (Q, L)."),
    ("syevd", _syevd, ("A",), [], 2,
     "Eigendecomposition of a symmetric A = U^T diag(L) U (lower triangle read): U holds\n"
     "the eigenvectors as rows (largest entry positive), L the ascending eigenvalues."),
    ("inverse", _inverse, ("A",), [], 1, "Matrix inverse."),
    ("det", _det, ("A",), [], 1, "Matrix determinant."),
    ("slogdet", _slogdet, ("A",), [], 2, "Sign and log of the absolute determinant."),
    ("extractdiag", _extractdiag, ("A",), [_OFFSET], 1,
     "The diagonal at ``offset`` (0 main, > 0 above, < 0 below) as a vector."),
    ("makediag", _makediag, ("A",), [_OFFSET], 1,
     "Square matrices with the input vectors on the diagonal at ``offset``."),
    ("extracttrian", _extracttrian, ("A",), [_OFFSET, _LOWER], 1,
     "The triangle at ``offset`` as a vector: the lower one (offset < 0, or 0 with lower)\n"
     "packed row by row, the upper one column by column."),
    ("maketrian", _maketrian, ("A",), [_OFFSET, _LOWER], 1,
     "Square matrices whose triangle at ``offset`` holds the packed input vectors (the\n"
     "inverse of extracttrian); the rest is zero."),
]

# MXNet: det and slogdet keep hidden LU and pivot outputs (hence "output0" names).
_HIDDEN = {"det": 2, "slogdet": 2}
# MXNet: syevd has no linalg_syevd alias in mx.nd / mx.sym.
_NO_ALIAS = {"syevd"}

for _name, _fn, _inputs, _params, _nout, _doc in _LINALG:
    _total = _nout + _HIDDEN.get(_name, 0)
    register(OpDef(f"_linalg_{_name}", _fn, inputs=_inputs, params=_params,
                   num_outputs=_nout, total_outputs=_total,
                   aliases=() if _name in _NO_ALIAS else (f"linalg_{_name}",),
                   output_names=None if _total == 1 else [f"output{i}" for i in range(_total)],
                   doc=_doc + "\nWorks on the last two axes; leading axes are batches.\n"
                   "Supports float32 and float64."))

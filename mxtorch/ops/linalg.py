"""Linear algebra operators: dot, batch_dot, linalg_gemm2, khatri_rao, ...

The ``_linalg_*`` operators appear in ``mx.nd.linalg`` through their prefix and as
``linalg_*`` aliases in ``mx.nd``, as in MXNet.
"""
from __future__ import annotations

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
    "khatri_rao", _khatri_rao_compute, params=[Int("num_args")],
    inputs=lambda a: [f"arg{i}" for i in range(a.num_args)], key_var_num_args="num_args",
    doc="Column-wise Khatri-Rao product of matrices (M_i, N) -> (prod M_i, N).\n\n"
        "Parameters\n----------\n*args : NDArray\n    Input matrices."))


# ---------------------------------------------------------------------- factorizations
def _check_square(op: str, a: torch.Tensor) -> None:
    if a.dim() < 2 or a.shape[-1] != a.shape[-2]:
        raise MXNetError(f"Operator {op}: expected (batches of) square matrices, got shape "
                         f"{tuple(a.shape)}")


def _legacy(out: torch.Tensor) -> torch.Tensor:
    # MXNet: a single matrix's scalar result has shape (1,), never 0-d.
    return out.reshape(1) if out.dim() == 0 else out


def _tri(a: torch.Tensor, lower: bool) -> torch.Tensor:
    return torch.tril(a) if lower else torch.triu(a)


def _potrf(attrs, a):
    _check_square("_linalg_potrf", a)
    return torch.linalg.cholesky(a)


def _trsm(attrs, a, b):
    _check_square("_linalg_trsm", a)
    tri = a.transpose(-1, -2) if attrs.transpose else a
    upper = attrs.lower == attrs.transpose  # a transposed lower matrix is upper
    out = torch.linalg.solve_triangular(tri, b, upper=upper, left=not attrs.rightside)
    return out * attrs.alpha if attrs.alpha != 1.0 else out


def _trmm(attrs, a, b):
    _check_square("_linalg_trmm", a)
    tri = _tri(a, attrs.lower)
    tri = tri.transpose(-1, -2) if attrs.transpose else tri
    out = torch.matmul(b, tri) if attrs.rightside else torch.matmul(tri, b)
    return out * attrs.alpha if attrs.alpha != 1.0 else out


def _syrk(attrs, a):
    at = a.transpose(-1, -2)
    out = torch.matmul(at, a) if attrs.transpose else torch.matmul(a, at)
    return out * attrs.alpha if attrs.alpha != 1.0 else out


def _sumlogdiag(attrs, a):
    _check_square("_linalg_sumlogdiag", a)
    return _legacy(torch.log(torch.diagonal(a, dim1=-2, dim2=-1)).sum(-1))


def _inverse(attrs, a):
    _check_square("_linalg_inverse", a)
    return torch.linalg.inv(a)


def _det(attrs, a):
    _check_square("_linalg_det", a)
    return _legacy(torch.linalg.det(a))


def _slogdet(attrs, a):
    _check_square("_linalg_slogdet", a)
    sign, logabs = torch.linalg.slogdet(a)
    return _legacy(sign), _legacy(logabs)


_TRI_PARAMS = [Bool("transpose", False), Bool("rightside", False), Bool("lower", True),
               Float("alpha", 1.0)]

# (name without "_linalg_", compute, inputs, params, outputs, doc)
_LINALG = [
    ("potrf", _potrf, ("A",), [], 1, "Cholesky factor L (lower) of A = L L^T."),
    ("trsm", _trsm, ("A", "B"), _TRI_PARAMS, 1,
     "Solve op(A) X = alpha B (or X op(A) = alpha B) for triangular A."),
    ("trmm", _trmm, ("A", "B"), _TRI_PARAMS, 1,
     "alpha op(A) B (or alpha B op(A)) with the triangular part of A."),
    ("syrk", _syrk, ("A",), [Bool("transpose", False), Float("alpha", 1.0)], 1,
     "alpha A A^T (or alpha A^T A with transpose)."),
    ("sumlogdiag", _sumlogdiag, ("A",), [], 1, "Sum of the log of the diagonal."),
    ("inverse", _inverse, ("A",), [], 1, "Matrix inverse."),
    ("det", _det, ("A",), [], 1, "Matrix determinant."),
    ("slogdet", _slogdet, ("A",), [], 2, "Sign and log of the absolute determinant."),
]

# MXNet: det and slogdet keep hidden LU and pivot outputs (hence "output0" names).
_HIDDEN = {"det": 2, "slogdet": 2}

for _name, _fn, _inputs, _params, _nout, _doc in _LINALG:
    _total = _nout + _HIDDEN.get(_name, 0)
    register(OpDef(f"_linalg_{_name}", _fn, inputs=_inputs, params=_params,
                   num_outputs=_nout, aliases=(f"linalg_{_name}",), total_outputs=_total,
                   output_names=None if _total == 1 else [f"output{i}" for i in range(_total)],
                   doc=_doc + " Works on the last two axes; leading axes are batches."))

"""Linear algebra operators vs NumPy (N-d dot semantics from real MXNet 1.9.1)."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from helpers import check_op

RNG = np.random.RandomState(0)


def r(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def test_dot_2d():
    a, b = r(2, 3), r(3, 4)
    check_op("dot", [a, b], {}, lambda x, y: x @ y)
    check_op("dot", [r(3, 2), b], {"transpose_a": True}, lambda x, y: x.T @ y)
    check_op("dot", [a, r(4, 3)], {"transpose_b": True}, lambda x, y: x @ y.T)
    check_op("dot", [r(3, 2), r(4, 3)], {"transpose_a": True, "transpose_b": True},
             lambda x, y: x.T @ y.T)


def test_dot_vectors():
    check_op("dot", [r(3), r(3)], {}, lambda x, y: np.array([x @ y]))  # shape (1,)
    check_op("dot", [r(3), r(3, 4)], {}, lambda x, y: x @ y)
    check_op("dot", [r(2, 3), r(3)], {}, lambda x, y: x @ y)
    with pytest.raises(MXNetError, match="transpose vectors"):
        mx.nd.dot(mx.nd.array(r(3, 2)), mx.nd.array(r(3)), transpose_a=True)


def test_dot_nd():
    # MXNet: lhs (a..., k) . rhs (k, b...) -> (a..., b...)
    check_op("dot", [r(2, 3, 4), r(4, 5)], {}, lambda x, y: np.tensordot(x, y, 1))
    check_op("dot", [r(2, 3), r(3, 2, 2)], {}, lambda x, y: np.tensordot(x, y, 1),
             grad=False)
    # MXNet: transpose_a contracts the FIRST axis of lhs; transpose_b the LAST of rhs
    check_op("dot", [r(4, 2, 3), r(4, 5)], {"transpose_a": True},
             lambda x, y: np.tensordot(x, y, axes=([0], [0])))
    check_op("dot", [r(2, 3, 4), r(5, 2, 4)], {"transpose_b": True},
             lambda x, y: np.tensordot(x, y, axes=([2], [2])))
    check_op("dot", [r(4, 2, 3), r(5, 2, 4)], {"transpose_a": True, "transpose_b": True},
             lambda x, y: np.tensordot(x, y, axes=([0], [2])), grad=False)


def test_dot_errors_and_dtype():
    with pytest.raises(MXNetError, match=r"dot.*\(2, 3\).*\(4, 5\)"):
        mx.nd.dot(mx.nd.array(r(2, 3)), mx.nd.array(r(4, 5)))
    with pytest.raises(MXNetError, match="dot.*dtype"):
        mx.nd.dot(mx.nd.array(r(2, 3)), mx.nd.array(r(3, 2), dtype="float64"))
    out = mx.nd.dot(mx.nd.array(r(2, 3), dtype="float64"), mx.nd.array(r(3, 2), dtype="float64"))
    assert out.dtype == np.float64
    with pytest.raises(MXNetError, match="batch_dot.*leading batch"):
        mx.nd.batch_dot(mx.nd.array(r(2, 3, 4)), mx.nd.array(r(3, 4, 5)))
    with pytest.raises(MXNetError, match="batch_dot"):
        mx.nd.batch_dot(mx.nd.array(r(3, 4)), mx.nd.array(r(4, 5)))
    with pytest.raises(MXNetError, match="gemm2"):
        mx.nd.linalg.gemm2(mx.nd.array(r(2, 3)), mx.nd.array(r(4, 4)))


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_dot(ta, tb):
    a = r(2, 4, 3) if ta else r(2, 3, 4)
    b = r(2, 5, 4) if tb else r(2, 4, 5)

    def exp(x, y):
        x = np.swapaxes(x, 1, 2) if ta else x
        y = np.swapaxes(y, 1, 2) if tb else y
        return x @ y
    check_op("batch_dot", [a, b], {"transpose_a": ta, "transpose_b": tb}, exp)


def test_batch_dot_4d():
    check_op("batch_dot", [r(2, 2, 3, 2), r(2, 2, 2, 3)], {}, lambda x, y: x @ y, grad=False)


def test_gemm2_gemm():
    check_op("_linalg_gemm2", [r(2, 3), r(3, 4)], {"alpha": 2.0}, lambda a, b: 2 * a @ b)
    check_op("linalg_gemm2", [r(2, 3, 2), r(2, 4, 3)],
             {"transpose_a": True, "transpose_b": True},
             lambda a, b: np.swapaxes(a, 1, 2) @ np.swapaxes(b, 1, 2))
    sw = np.swapaxes
    check_op("_linalg_gemm2", [r(2, 3, 2, 2), r(2, 2, 2, 3)], {"axis": 1},
             lambda a, b: sw(sw(a, 1, 2) @ sw(b, 1, 2), 1, 2), grad=False)
    check_op("_linalg_gemm", [r(2, 3), r(3, 4), r(2, 4)], {"alpha": 2.0, "beta": 0.5},
             lambda a, b, c: 2 * a @ b + 0.5 * c)
    assert mx.nd.linalg.gemm2 is not None and mx.nd.linalg_gemm is not None


def test_khatri_rao():
    check_op("khatri_rao", [r(2, 3), r(4, 3)], {"num_args": 2},
             lambda a, b: np.einsum("ik,jk->ijk", a, b).reshape(8, 3))
    check_op("khatri_rao", [r(2, 2), r(1, 2), r(3, 2)], {"num_args": 3},
             lambda a, b, c: np.einsum("ik,jk,lk->ijlk", a, b, c).reshape(6, 2), grad=False)
    check_op("khatri_rao", [r(2, 3)], {"num_args": 1}, lambda a: a, grad=False)
    with pytest.raises(MXNetError, match="khatri_rao"):
        mx.nd.khatri_rao(mx.nd.array(r(2, 3)), mx.nd.array(r(2, 4)))


SPD = np.array([[4.0, 2.0], [2.0, 3.0]], np.float32)
L = np.array([[2.0, 0.0], [1.0, 3.0]], np.float32)
B = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)


def test_potrf_inverse_det():
    check_op("_linalg_potrf", [SPD], {}, [np.linalg.cholesky(SPD)], grad=False)
    check_op("_linalg_inverse", [SPD], {}, lambda a: np.linalg.inv(a), rtol=1e-5)
    check_op("_linalg_det", [SPD], {}, [[8.0]])
    check_op("_linalg_det", [np.stack([SPD, L])], {}, lambda a: np.linalg.det(a))
    check_op("_linalg_slogdet", [-SPD], {}, [[1.0], [np.log(8.0)]], grad=False)
    check_op("_linalg_sumlogdiag", [SPD], {}, [[np.log(12.0)]])
    check_op("_linalg_sumlogdiag", [np.stack([SPD, SPD])], {}, [[np.log(12.0)] * 2])
    with pytest.raises(MXNetError, match="_linalg_det"):
        mx.nd.linalg.det(mx.nd.array(B))


def test_trsm_trmm_syrk():
    check_op("_linalg_trsm", [L, B], {"alpha": 2.0}, lambda a, b: 2 * np.linalg.solve(a, b),
             rtol=1e-5)
    check_op("_linalg_trsm", [L, np.ascontiguousarray(B.T)], {"rightside": True, "transpose": True},
             lambda a, b: b @ np.linalg.inv(a.T), rtol=1e-5)
    check_op("_linalg_trsm", [np.ascontiguousarray(L.T), B], {"lower": False},
             lambda a, b: np.linalg.solve(a, b), rtol=1e-5)
    upper_junk = np.array([[2.0, 5.0], [1.0, 3.0]], np.float32)
    # MXNet: only the triangle named by `lower` is read
    check_op("_linalg_trmm", [upper_junk, B], {}, [L @ B])
    check_op("_linalg_trmm", [upper_junk, B], {"lower": False}, [[[22, 29, 36], [12, 15, 18]]])
    check_op("_linalg_trmm", [L, np.ascontiguousarray(B.T)],
             {"rightside": True, "transpose": True, "alpha": 2.0}, lambda a, b: 2 * b @ a.T)
    check_op("_linalg_syrk", [B], {"alpha": 2.0}, lambda a: 2 * a @ a.T)
    check_op("_linalg_syrk", [B], {"transpose": True}, lambda a: a.T @ a)


def test_hidden_output_names():
    # MXNet 1.9.1: det/slogdet keep hidden LU and pivot outputs
    a = mx.sym.var("a")
    assert mx.sym.linalg.det(a, name="d").list_outputs() == ["d_output0"]
    assert mx.sym.linalg.slogdet(a, name="d").list_outputs() == ["d_output0", "d_output1"]
    assert mx.sym.linalg.inverse(a, name="d").list_outputs() == ["d_output"]


def _grad(op, inputs, head, **attrs):
    """Outputs and input gradients of sum(op(*inputs) * head) through mx.autograd."""
    arrs = [mx.nd.array(x, dtype="float64") for x in inputs]
    for a in arrs:
        a.attach_grad()
    with mx.autograd.record():
        outs = getattr(mx.nd.linalg, op)(*arrs, **attrs)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        loss = sum((o * mx.nd.array(h, dtype="float64")).sum() for o, h in zip(outs, head))
    loss.backward()
    return [o.asnumpy() for o in outs], [a.grad.asnumpy() for a in arrs]


def test_potrf_upper_and_potri():
    # MXNet: lower=False gives U with A = U^T U, reading A's upper triangle only
    junk_lower = np.array([[4.0, 1.0], [-5.0, 4.25]])
    check_op("_linalg_potrf", [junk_lower], {"lower": False}, [[[2.0, 0.5], [0.0, 2.0]]],
             grad=False)
    check_op("_linalg_potri", [L], {}, lambda a: np.linalg.inv(a @ a.T), rtol=1e-5)
    # values and gradient from MXNet 1.9.1: only the upper triangle of A is read
    outs, grads = _grad("potri", [[[2.0, 0.0], [1.0, 3.0]]], [[[1, 2], [3, 4]]], lower=False)
    np.testing.assert_allclose(outs[0], [[0.25, 0.0], [0.0, 1 / 9]])
    np.testing.assert_allclose(grads[0], [[-0.25, -0.27777778], [0.0, -0.2962963]], rtol=1e-6)
    with pytest.raises(MXNetError, match="potrf"):
        mx.nd.linalg.potrf(mx.nd.array([[1.0, 2.0], [2.0, 1.0]])).asnumpy()


def test_trsm_gradient_is_triangular():
    # values from MXNet 1.9.1: the gradient of A is zero outside its lower triangle
    outs, grads = _grad("trsm", [[[2.0, 5.0], [1.0, 3.0]], [[1.0, 2, 3], [4, 5, 6]]],
                        [[[1.0, -1, 2], [0.5, 1, 1]]], alpha=2.0)
    np.testing.assert_allclose(outs[0], [[1, 2, 3], [7 / 3, 8 / 3, 3]])
    np.testing.assert_allclose(grads[0], [[-1.58333333, 0.0], [-1.83333333, -2.27777778]])
    np.testing.assert_allclose(grads[1], [[0.83333333, -1.33333333, 1.66666667],
                                          [0.33333333, 0.66666667, 0.66666667]])


def test_gelqf():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]])
    outs, grads = _grad("gelqf", [a], [[[1, 2, 3], [4, 5, 6]], [[1, -1], [2, 3]]])
    q, l_ = outs
    # values from MXNet 1.9.1 (LAPACK's sign convention: L's diagonal may be negative)
    np.testing.assert_allclose(q, [[-0.267261242, -0.534522484, -0.801783726],
                                   [0.948683298, 0.0, -0.316227766]], atol=1e-8)
    np.testing.assert_allclose(l_, [[-3.74165739, 0.0], [-9.35414347, 1.58113883]])
    np.testing.assert_allclose(grads[0], [[-10.21706248, -1.21215341, 2.96657064],
                                          [2.25731694, -0.7979926, -2.71488217]])
    check_op("_linalg_gelqf", [r(2, 3, 5)], {}, None, grad=False)
    with pytest.raises(MXNetError, match="gelqf.*second to last"):
        mx.nd.linalg.gelqf(mx.nd.array(r(3, 2)))


def test_syevd():
    s = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 1.0], [0.5, 1.0, 5.0]])
    outs, grads = _grad("syevd", [s], [np.arange(1, 10).reshape(3, 3), [1, -2, 3]])
    # values from MXNet 1.9.1: rows are eigenvectors, each with its largest entry positive
    np.testing.assert_allclose(outs[0], [[0.84153233, -0.53921561, 0.03270891],
                                         [0.48507125, 0.72760688, -0.48507125],
                                         [0.23775876, 0.42406929, 0.87386269]], rtol=1e-6)
    np.testing.assert_allclose(outs[1], [1.37867966, 3.0, 5.62132034])
    np.testing.assert_allclose(grads[0], [[0.26417151, -1.11562293, 0.71061788],
                                          [-1.11562293, -0.6295882, 1.6483034],
                                          [0.71061788, 1.6483034, 2.36541669]], rtol=1e-6)
    # only the lower triangle is read
    junk = np.tril(s) + np.triu(np.full((3, 3), 9.0), 1)
    np.testing.assert_allclose(mx.nd.linalg.syevd(mx.nd.array(junk))[1].asnumpy(),
                               outs[1], rtol=1e-5)
    assert not hasattr(mx.nd, "linalg_syevd") and hasattr(mx.nd, "linalg_gelqf")
    u, lam = mx.sym.linalg.syevd(mx.sym.var("a")).infer_shape(a=(4, 3, 3))[1]
    assert (u, lam) == ((4, 3, 3), (4, 3))


def test_det_gradient_of_singular_matrix_is_zero():
    # MXNet: no gradient flows from det / slogdet of a singular matrix
    _, grads = _grad("det", [[[1.0, 2.0], [2.0, 4.0]]], [[1.0]])
    np.testing.assert_array_equal(grads[0], np.zeros((2, 2)))
    outs, grads = _grad("slogdet", [[[1.0, 2.0], [2.0, 4.0]]], [[0.0], [1.0]])
    assert outs[1][0] == -np.inf
    np.testing.assert_array_equal(grads[0], np.zeros((2, 2)))
    outs, grads = _grad("slogdet", [[[1.0, 2.0], [3.0, 4.0]]], [[0.0], [1.0]])
    np.testing.assert_allclose(outs[0], [-1.0])
    np.testing.assert_allclose(grads[0], [[-2.0, 1.5], [1.0, -0.5]])


@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_extract_make_diag(offset):
    a = r(2, 3, 3)
    check_op("_linalg_extractdiag", [a], {"offset": offset},
             lambda x: np.diagonal(x, offset, 1, 2))
    d = r(2, 3)
    check_op("_linalg_makediag", [d], {"offset": offset},
             lambda x: np.stack([np.diagflat(v, offset) for v in x]))


def test_extract_make_trian():
    a = np.arange(9.0).reshape(3, 3)
    # packing orders from MXNet 1.9.1: lower row by row, upper column by column
    check_op("_linalg_extracttrian", [a], {}, [[0, 3, 4, 6, 7, 8]])
    check_op("_linalg_extracttrian", [a], {"lower": False}, [[0, 1, 4, 2, 5, 8]])
    check_op("_linalg_extracttrian", [a], {"offset": 1}, [[1, 2, 5]])
    check_op("_linalg_extracttrian", [a], {"offset": -1}, [[3, 6, 7]])
    v = np.arange(6.0)
    check_op("_linalg_maketrian", [v], {"offset": 1, "lower": False},
             [[[0, 0, 1, 3], [0, 0, 2, 4], [0, 0, 0, 5], [0, 0, 0, 0]]])
    check_op("_linalg_maketrian", [v], {"offset": -1},
             [[[0, 0, 0, 0], [0, 0, 0, 0], [1, 2, 0, 0], [3, 4, 5, 0]]])
    check_op("_linalg_maketrian", [np.stack([v, v])], {"lower": False},
             [[[[0, 1, 3], [0, 2, 4], [0, 0, 5]]] * 2])
    with pytest.raises(MXNetError, match="maketrian.*invalid"):
        mx.nd.linalg.maketrian(mx.nd.array(r(2, 4)))
    with pytest.raises(MXNetError, match="extractdiag.*offset"):
        mx.nd.linalg.extractdiag(mx.nd.array(r(2, 2)), offset=2)


def test_linalg_float_only():
    with pytest.raises(MXNetError, match="32-bit and 64-bit floating point"):
        mx.nd.linalg.extractdiag(mx.nd.array([[1, 2], [3, 4]], dtype="int32"))
    with pytest.raises(MXNetError, match="32-bit and 64-bit floating point"):
        mx.nd.linalg.gemm2(mx.nd.array(B, dtype="float16"), mx.nd.array(B.T, dtype="float16"))

"""mx.test_utils: comparison helpers, tolerances and random data, as MXNet 1.9.1 has them."""
import os

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import test_utils as tu
from mxtorch.base import MXNetError

A = np.array([[1., 2., 3.], [4., 5., 6.]], dtype=np.float32)


def test_default_context_roundtrip():
    old = tu.default_context()
    try:
        tu.set_default_context(mx.cpu(3))
        assert tu.default_context() == mx.cpu(3)
        assert mx.current_context() == mx.cpu(3)
    finally:
        tu.set_default_context(old)
    assert tu.default_context() == old


def test_assert_almost_equal_message_matches_mxnet(capsys):
    b = A.copy()
    b[1, 2] = 7
    b[0, 0] = 1.01
    with pytest.raises(AssertionError) as info:
        tu.assert_almost_equal(mx.nd.array(A), b, names=("x", "y"))
    # exact text real MXNet 1.9.1 produces for the same call
    assert str(info.value) == (
        "\nItems are not equal:\nError 588.235291 exceeds tolerance rtol=1.000000e-04, "
        "atol=1.000000e-03 (mismatch 33.333333%).\nLocation of maximum error: (1, 2), "
        "x=6.00000000, y=7.00000000\n ACTUAL: array([[1., 2., 3.],\n       [4., 5., 6.]], "
        "dtype=float32)\n DESIRED: array([[1.01, 2.  , 3.  ],\n       [4.  , 5.  , 7.  ]], "
        "dtype=float32)")
    out = capsys.readouterr().out
    assert "1: Error 588.235291  Location of error: (1, 2), x=6.00000000, y=7.00000000" in out
    assert np.get_printoptions()["threshold"] == 1000  # no global print-option leak


def test_assert_almost_equal_passes_and_tolerances():
    tu.assert_almost_equal(mx.nd.array(A), A + 5e-4)  # float32 default atol 1e-3
    tu.assert_almost_equal(mx.nd.array(A), mx.nd.array(A))
    tu.assert_almost_equal(np.array([1.0, np.nan]), np.array([1.0, np.nan]), equal_nan=True)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
    with pytest.raises(AssertionError, match="rtol=0.000000e"):
        tu.assert_almost_equal(np.arange(3), np.array([0, 1, 3]))
    tu.assert_almost_equal(A, A + 0.05, rtol=0, atol=0.1)
    tu.assert_almost_equal(3.0, np.float32(3.0))
    tu.assert_almost_equal(np.array([True, False]), mx.nd.array([1, 0], dtype="bool"))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(A, A[:1], use_broadcast=False)


def test_get_tols_match_mxnet():
    assert tu.get_tols(mx.nd.array(A, dtype="float16"), A, None, None) == (0.01, 0.1)
    assert tu.get_tols(1.0, np.float64(2), None, None) == (1e-05, 1e-20)
    assert tu.get_tols(A, A, {np.dtype(np.float32): 0.5}, 0.2) == (0.5, 0.2)
    assert tu.get_atol() == 1e-20 and tu.get_rtol(0.3) == 0.3


def test_almost_equal_same():
    assert not tu.almost_equal(A, A + 1e-4)  # float64 defaults, as in MXNet
    assert tu.almost_equal(A, A + 1e-4, rtol=1e-3, atol=1e-3)
    assert tu.same(mx.nd.array(A), A) and not tu.same(A, A + 1)


def test_assert_exception():
    tu.assert_exception(lambda: mx.nd.array(A).reshape((7,)), MXNetError)
    with pytest.raises(AssertionError, match="did not raise"):
        tu.assert_exception(lambda x: x, ValueError, 1)
    tu.assert_exception(int, ValueError, "x")


def test_random_helpers_match_mxnet_streams():
    np.random.seed(0)
    assert (tu.rand_shape_2d(), tu.rand_shape_3d(), tu.rand_shape_nd(4)) == \
        ((6, 1), (4, 4, 8), (10, 4, 6, 3))
    np.random.seed(0)
    np.testing.assert_allclose(tu.random_arrays((2, 3)),
                               [[1.7640524, 0.4001572, 0.978738],
                                [2.2408931, 1.867558, -0.9772779]], rtol=1e-6)
    x, y = tu.random_arrays((2,), ())
    assert x.shape == (2,) and y.shape == () and y.dtype == np.float32
    assert all(1 <= d <= 3 for d in tu.rand_shape_nd(5, dim=3))


def test_rand_ndarray_dense_and_sparse():
    arr = tu.rand_ndarray((3, 4))
    assert isinstance(arr, mx.nd.NDArray) and arr.shape == (3, 4) and arr.dtype == np.float32
    assert tu.rand_ndarray((2, 2), dtype="float64").dtype == np.float64
    np.random.seed(1)
    rsp, (val, idx) = tu.rand_sparse_ndarray((6, 3), "row_sparse", density=0.5)
    dense = rsp.asnumpy()
    np.testing.assert_array_equal(dense[idx], val)
    assert np.all(np.delete(dense, idx, axis=0) == 0)
    csr, (indptr, indices, data) = tu.rand_sparse_ndarray((4, 5), "csr", density=0.4)
    dense = csr.asnumpy()
    rows = np.repeat(np.arange(4), np.diff(indptr.asnumpy()))
    np.testing.assert_array_equal(dense[rows, indices.asnumpy()], data.asnumpy())
    assert np.count_nonzero(dense) == data.shape[0]
    assert tu.rand_ndarray((5, 2), "row_sparse", density=0.0).asnumpy().sum() == 0


def test_np_reduce():
    x = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.np_reduce(x, (0, 2), True, np.sum),
                                  [[[60], [92], [124]]])
    np.testing.assert_array_equal(tu.np_reduce(x, 1, False, np.max), x.max(axis=1))
    assert tu.np_reduce(x, None, False, np.sum) == x.sum()


def test_misc_helpers():
    a = np.ones((2, 3, 4))
    np.testing.assert_array_equal(tu.collapse_sum_like(a, (3, 1)), np.full((3, 1), 8.0))
    with tu.environment("MXTORCH_TEST_ENV_VAR", "1"):
        assert os.environ["MXTORCH_TEST_ENV_VAR"] == "1"
    assert "MXTORCH_TEST_ENV_VAR" not in os.environ
    base = mx.nd.array(A)
    assert tu.same_array(base, base[:])  # basic slicing is a view, as in MXNet
    assert not tu.same_array(base, mx.nd.array(A))
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 2
    flaky()
    assert len(calls) == 2
    tu.compare_ndarray_tuple((mx.nd.array(A), None), (A, None))
    tu.assert_almost_equal_ignore_nan(np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    tu.assert_almost_equal_with_err(np.array([1.0, 2.0, 3.0, 4.0]),
                                    np.array([1.0, 2.0, 3.0, 5.0]), etol=0.3)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_with_err(np.array([1.0, 2.0]), np.array([1.0, 5.0]), etol=0.3)


def test_compare_optimizer_detects_a_different_update():
    tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                         mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), (3, 4), np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1),
                             mx.optimizer.SGD(learning_rate=0.2), (3, 4), np.float32)


def test_statistical_checks():
    import scipy.stats as ss
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda x: ss.norm.ppf(x, 0, 1), 5)
    assert len(buckets) == 5 and probs == [0.2] * 5
    rng = np.random.RandomState(0)
    ps = tu.verify_generator(lambda n: rng.normal(0, 1, n), buckets, probs, nsamples=20000)
    assert len(ps) == 5
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: rng.normal(1, 1, n), buckets, probs, nsamples=20000)
    assert tu.mean_check(lambda n: rng.normal(2, 1, n), 2, 1, nsamples=20000)
    assert not tu.mean_check(lambda n: rng.normal(2.5, 1, n), 2, 1, nsamples=20000)
    assert tu.var_check(lambda n: rng.normal(0, 2, n), 2, nsamples=20000)


def test_matrix_helpers():
    m = tu.new_sym_matrix_with_real_eigvals_nd((2, 4, 4))
    assert m.shape == (2, 4, 4)
    np.testing.assert_allclose(m, np.swapaxes(m, -1, -2), atol=1e-10)
    q = tu.new_orthonormal_matrix_2d(5)
    np.testing.assert_allclose(q @ q.T, np.eye(5), atol=1e-10)
    r = tu.new_matrix_with_real_eigvals_2d(4)
    assert np.all(np.isreal(np.linalg.eigvals(r)))


def test_check_consistency_float32_against_float64():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc")
    ctx_list = [{"ctx": mx.cpu(0), "data": (2, 3), "type_dict": {"data": np.float64}},
                {"ctx": mx.cpu(0), "data": (2, 3), "type_dict": {"data": np.float32}}]
    gt = tu.check_consistency(sym, ctx_list)
    assert set(gt) >= {"fc_output", "data", "fc_weight", "fc_bias"}
    assert gt["fc_output"].dtype == np.float64


def test_download_from_a_local_server(tmp_path):
    import functools
    import http.server
    import threading
    served = tmp_path / "srv"
    served.mkdir()
    (served / "f.bin").write_bytes(b"payload")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = "http://127.0.0.1:%d/f.bin" % server.server_address[1]
        out = tu.download(url, dirname=str(tmp_path / "dl"))
        assert open(out, "rb").read() == b"payload"
        assert os.listdir(tmp_path / "dl") == ["f.bin"]   # no temporary file left
        with pytest.raises(OSError):
            tu.download(url.replace("f.bin", "missing"), dirname=str(tmp_path / "dl"),
                        retries=1)
        assert os.listdir(tmp_path / "dl") == ["f.bin"]
    finally:
        server.shutdown()


def test_dummy_iter_repeats_the_first_batch():
    it = mx.io.NDArrayIter(np.arange(12).reshape(6, 2), batch_size=2)
    dummy = tu.DummyIter(it)
    first = dummy.next()
    assert dummy.next() is first and next(iter(dummy)) is first
    assert dummy.provide_data == it.provide_data


def test_same_symbol_structure_and_check_speed():
    a = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2)
    b = mx.sym.FullyConnected(mx.sym.var("y"), num_hidden=3)
    c = mx.sym.Activation(mx.sym.var("x"), act_type="relu")
    assert tu.same_symbol_structure(a, b)
    assert not tu.same_symbol_structure(a, c)
    assert tu.check_speed(a, N=2, x=(2, 3)) > 0
    with pytest.raises(ValueError):
        tu.check_speed(a, N=1, typ="backward", x=(2, 3))


def test_check_numeric_gradient_with_grad_req_per_node():
    # MXNet's test_roipooling: {'data': 'write'|'add', 'rois': 'null'} checks data only
    # (the finite difference of a non-differentiable input is never compared)
    from mxtorch.test_utils import check_numeric_gradient
    x, idx = mx.sym.var("x"), mx.sym.var("idx")
    out = mx.sym.take(x, mx.sym.round(idx))
    loc = [np.array([1.0, 2.0, 3.0]), np.array([0.49, 1.5002])]
    for req in ("write", "add"):
        check_numeric_gradient(out, loc, grad_nodes={"x": req, "idx": "null"})
    with pytest.raises(AssertionError):  # round()'s jump at 1.5 is within eps: compared
        check_numeric_gradient(out, loc)

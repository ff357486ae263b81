"""``mx.test_utils``: helpers MXNet users and their tests call.

Same names, signatures, defaults and messages as MXNet 1.9.1's ``mxnet.test_utils``. As in
MXNet the module has no ``__all__``: ``from mxnet.test_utils import *`` also gives the
modules it imports (``mx``, ``np``, ``npt``, ``rnd``, ``sys``, ``os``, ...), which MXNet's
own tests rely on. The symbolic checkers, the data helpers and the statistical checks
live in ``test_utils_symbol``, ``test_utils_data`` and ``test_utils_stats``.
"""
import bz2  # noqa: F401 - MXNet's test_utils exports these modules
import errno  # noqa: F401
import gzip  # noqa: F401
import json  # noqa: F401
import logging  # noqa: F401
import numbers
import os
import platform
import struct  # noqa: F401
import sys
import time  # noqa: F401
import traceback  # noqa: F401
import zipfile  # noqa: F401
from collections import OrderedDict  # noqa: F401
from contextlib import contextmanager
from typing import Any, Callable

import numpy as np
import numpy.random as rnd
import numpy.testing as npt

import mxtorch as mx

from .base import dtype_np
from .context import Context, current_context, get_cuda_compute_capability, num_gpus
from .ndarray.ndarray import _STORAGE_TYPE_STR_TO_ID, array  # noqa: F401
from .runtime import Features
from .symbol import Symbol  # noqa: F401
from .symbol.numpy import _Symbol as np_symbol  # noqa: F401
from .util import getenv, setenv, use_np  # noqa: F401

_BFLOAT16 = dtype_np("bfloat16")


# ---------------------------------------------------------------------------- defaults
def default_context() -> Context:
    """Get default context for regression test."""
    return current_context()


def set_default_context(ctx: Context) -> None:
    """Set default context."""
    Context._default_ctx.value = ctx


def default_dtype():
    """Get default data type for regression test."""
    return np.float32


def _exact_tols(value: float) -> dict:
    """Tolerance ``value`` for every integer and bool dtype."""
    kinds = (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
             np.int64, np.uint64)
    return {np.dtype(t): value for t in kinds}


def default_rtols() -> dict:
    """Get default relative tolerances for data comparisons involving each data type."""
    return {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4,
            np.dtype(np.float64): 1e-5, _BFLOAT16: 1e-2, **_exact_tols(0)}


def default_atols() -> dict:
    """Get default absolute tolerances for data comparisons involving each data type."""
    return {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3,
            np.dtype(np.float64): 1e-20, _BFLOAT16: 1e-1, **_exact_tols(0)}


def default_numeric_eps() -> dict:
    """Get default epsilon for finite difference gradient calculations with data type."""
    return {np.dtype(np.float16): 1.0 / 2**6, np.dtype(np.float32): 1.0 / 2**9,
            np.dtype(np.float64): 1.0 / 2**14}


def effective_dtype(dat) -> np.dtype:
    """The dtype that decides the default tolerance for comparing ``dat``.

    (MXNet maps float32 to float16 on TF32 GPUs; mxtorch keeps float32 exact, because
    torch's TF32 matmul switch is off by default.)
    """
    return np.dtype(dat.dtype)


def get_tolerance(dat, tol, default_tol: dict):
    """The tolerance for ``dat``: ``tol`` if a number, else by dtype from ``tol`` or defaults."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    return tol.get(dtype, default_tol[dtype])


def get_tols(x, y, rtol, atol) -> tuple:
    """The (rtol, atol) to compare ``x`` and ``y``: the larger default of the two dtypes."""
    if isinstance(x, numbers.Number):
        x = np.array(x)
    if isinstance(y, numbers.Number):
        y = np.array(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """Get default numerical threshold for regression test."""
    return default_atols()[dtype] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """Get default numerical threshold for regression test."""
    return default_rtols()[dtype] if rtol is None else rtol


def get_etol(etol=None):
    """Get default error-rate threshold for regression test."""
    return 0 if etol is None else etol


# ---------------------------------------------------------------------------- random data
def random_arrays(*shapes):
    """Generate some random numpy arrays (float32, standard normal).

    Returns one array for one shape, else a list.
    """
    arrays = [np.array(np.random.randn(), dtype=default_dtype())
              if len(s) == 0 else np.random.randn(*s).astype(default_dtype())
              for s in shapes]
    if len(arrays) == 1:
        return arrays[0]
    return arrays


def random_uniform_arrays(*shapes, **kwargs):
    """Generate some random numpy arrays, uniform in ``[low, high)``."""
    low = kwargs.pop("low", 0.0)
    high = kwargs.pop("high", 1.0)
    dtype = kwargs.pop("dtype", default_dtype())
    if len(kwargs) > 0:
        raise TypeError("Got unexpected argument/s : " + str(kwargs.keys()))
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """Return a k length list of the elements chosen from the population sequence."""
    assert 0 <= k <= len(population)
    population_copy = population[:]
    np.random.shuffle(population_copy)
    return population_copy[0:k]


def assign_each(the_input, function):
    """Return ``function`` applied to each element of ``the_input`` (a NumPy array)."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function, otypes=[np.asarray(the_input).dtype])(the_input)


def assign_each2(input1, input2, function):
    """Return ``function`` applied pairwise to two same-shape NumPy arrays."""
    if function is None:
        return np.array(input1)
    return np.vectorize(function, otypes=[np.asarray(input1).dtype])(input1, input2)


def _rand_row_sparse(shape, density, dtype, ctx, data_init, rsp_indices, modifier_func):
    """A random row_sparse-style array and its ``(values, row indices)``."""
    from . import ndarray as nd
    if rsp_indices is not None:
        indices = np.asarray(rsp_indices)
        assert len(indices) <= shape[0]
    else:
        indices = np.argwhere(rnd.rand(shape[0]) < density).flatten()
    if indices.shape[0] == 0:
        empty = nd.array(np.zeros(shape, dtype=dtype), ctx=ctx, dtype=dtype)
        return empty, (np.array([], dtype=dtype), np.array([]))
    val = rnd.rand(indices.shape[0], *shape[1:]).astype(dtype)
    if data_init is not None:
        val.fill(data_init)
    if modifier_func is not None:
        val = assign_each(val, modifier_func)
    arr = nd.sparse.row_sparse_array((val, indices), shape=shape, dtype=dtype, ctx=ctx)
    return arr, (val, indices)


def _rand_csr(shape, density, dtype, ctx, data_init):
    """A random csr-style array and its ``(indptr, indices, data)`` as NDArrays."""
    from . import ndarray as nd
    assert len(shape) == 2
    mask = rnd.rand(*shape) < density
    dense = np.where(mask, rnd.rand(*shape), 0).astype(dtype)
    if data_init is not None:
        dense[mask] = data_init
    rows, cols = np.nonzero(mask)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=shape[0]))])
    arr = nd.array(dense, ctx=ctx, dtype=dtype)
    return arr, (nd.array(indptr, ctx=ctx, dtype=np.int64),
                 nd.array(cols, ctx=ctx, dtype=np.int64),
                 nd.array(dense[mask], ctx=ctx, dtype=dtype))


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """Generate a random sparse-pattern ndarray and its components.

    Parameters
    ----------
    shape : tuple
    stype : {'csr', 'row_sparse'}
    density : float, optional
        Fraction of non-zero rows (row_sparse) or entries (csr); random if None.
    dtype : numpy dtype, optional
        float32 by default.
    distribution : {'uniform'}, optional

    Returns
    -------
    (NDArray, tuple)
        The (dense-backed) array, with ``(values, indices)`` for row_sparse or
        ``(indptr, indices, data)`` for csr.
    """
    ctx = ctx if ctx else default_context()
    density = rnd.rand() if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    distribution = "uniform" if distribution is None else distribution
    assert distribution == "uniform", f"Distribution {distribution} not supported"
    if stype == "row_sparse":
        return _rand_row_sparse(shape, density, dtype, ctx, data_init, rsp_indices,
                                modifier_func)
    if stype == "csr":
        return _rand_csr(shape, density, dtype, ctx, data_init)
    raise AssertionError("unknown storage type")


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """Generate a random NDArray (standard normal for ``'default'`` storage).

    Parameters
    ----------
    shape : tuple
    stype : {'default', 'row_sparse', 'csr'}
    density : float, optional
        For the sparse storage types.
    dtype : numpy dtype, optional
        float32 by default.
    ctx : Context, optional

    Returns
    -------
    NDArray
    """
    from . import ndarray as nd
    ctx = ctx if ctx else default_context()
    if stype == "default":
        return nd.array(random_arrays(shape), dtype=dtype, ctx=ctx)
    arr, _ = rand_sparse_ndarray(shape, stype, density=density, modifier_func=modifier_func,
                                 dtype=dtype, distribution=distribution, ctx=ctx)
    return arr


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """Create a random sparse-pattern array (row_sparse indices sorted)."""
    if stype not in ("row_sparse", "csr"):
        raise AssertionError("Unknown storage type: " + stype)
    if rsp_indices is not None:
        rsp_indices = np.sort(np.asarray(rsp_indices))
    arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                 rsp_indices=rsp_indices, dtype=dtype,
                                 modifier_func=modifier_func)
    return arr


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-D shape with dims in ``[1, dim]`` (``[0, dim]`` if allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-D shape."""
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1), rnd.randint(low, dim2 + 1)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random ``num_dim``-D shape."""
    low = 0 if allow_zero_size else 1
    return tuple(rnd.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random integer coordinate pair."""
    x = np.random.randint(x_low, x_high, dtype=np.int64)
    y = np.random.randint(y_low, y_high, dtype=np.int64)
    return x, y


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` (int, list or None) one axis at a time.

    Parameters
    ----------
    dat : np.ndarray
    axis : None or int or list-like
    keepdims : bool
    numpy_reduce_func : function
        A NumPy reducing function like ``np.sum`` or ``np.max``.
    """
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        keepdims_shape = list(dat.shape)
        for i in axis:
            keepdims_shape[i] = 1
        ret = ret.reshape(tuple(keepdims_shape))
    return ret


# ---------------------------------------------------------------------------- comparison
def _as_numpy(a):
    """NumPy view of an NDArray (bfloat16 widened to float32), numbers and arrays as is."""
    if hasattr(a, "asnumpy"):
        a = a.asnumpy()
    if isinstance(a, np.ndarray) and a.dtype == _BFLOAT16:
        a = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a


def _find_max_violation(a, b, rtol, atol):
    """Finds and returns the location of maximum violation."""
    absdiff = np.where(np.equal(a, b), 0, np.abs(a - b))  # inf == inf, as np.allclose
    tol = atol + rtol * np.abs(b)
    violation = absdiff / (tol + 1e-20)
    loc = np.argmax(violation)
    idx = tuple(int(i) for i in np.unravel_index(loc, violation.shape))  # NumPy 1 repr
    return idx, np.max(violation)


def same(a, b) -> bool:
    """Test if two NumPy arrays are the same."""
    return np.array_equal(_as_numpy(a), _as_numpy(b))


def checkShapes(a, b) -> None:  # MXNet's name
    """Raise AssertionError if ``a`` and ``b`` have different shapes."""
    if a.shape != b.shape:
        msg = npt.build_err_msg([a, b], err_msg=f"a.shape = {a.shape} and b.shape = "
                                                f"{b.shape} are not equal")
        raise AssertionError(msg)


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True) -> bool:
    """Test if two numpy arrays are almost equal (``np.allclose``)."""
    a, b = _as_numpy(a), _as_numpy(b)
    if not use_broadcast:
        checkShapes(a, b)
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol),
                            equal_nan=equal_nan))


def locationError(a, b, index, names, maxError=False) -> str:
    """Create element mismatch comment."""
    maximum = "maximum " if maxError else ""
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" \
        % (maximum, str(index), names[0], a[index], names[1], b[index])


def _mismatch_report(a, b, rtol, atol, names, equal_nan, mismatches) -> str:
    """MXNet's message: the worst position, and how many elements mismatch."""
    a, b = (np.array(x) for x in np.broadcast_arrays(a, b))
    index, rel = _find_max_violation(a, b, rtol, atol)
    if index == ():
        return "Error %f exceeds tolerance rtol=%e, atol=%e.\n" % (rel, rtol, atol)
    index_err, rel_err = index, rel
    print(f"\n*** Maximum errors for vector of size {a.size}:  rtol={rtol}, atol={atol}\n")
    a_tmp, b_tmp = a.copy(), b.copy()
    i = 1
    while i <= a.size:
        if i <= mismatches[0]:
            print("%3d: Error %f  %s" % (i, rel, locationError(a, b, index, names)))
        a_tmp[index] = b_tmp[index] = 0
        if almost_equal(a_tmp, b_tmp, rtol, atol, equal_nan=equal_nan):
            break
        i += 1
        if i <= mismatches[1] or mismatches[1] <= 0:
            index, rel = _find_max_violation(a_tmp, b_tmp, rtol, atol)
        else:
            break
    degree = "at least " if mismatches[1] > 0 and i > mismatches[1] else ""
    return "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %s%f%%).\n%s" % (
        rel_err, rtol, atol, degree, 100 * i / a.size,
        locationError(a, b, index_err, names, maxError=True))


def _raise_mismatch(a, b, err_msg: str) -> None:
    """Raise MXNet's AssertionError (printed with few digits, as MXNet does)."""
    opts: dict = {"threshold": 4, "suppress": True}
    if np.lib.NumpyVersion(np.__version__) >= "2.2.0":
        opts["legacy"] = "2.1"  # NumPy 2.2 adds "shape=(...)" to summarized reprs
    with np.printoptions(**opts):
        msg = npt.build_err_msg([a, b], err_msg=err_msg)
    raise AssertionError(msg)


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Test that two arrays are almost equal. Raise exception message if not.

    Parameters
    ----------
    a : np.ndarray or NDArray or number
    b : np.ndarray or NDArray or number
    rtol : None or float or dict of dtype -> float
        The relative threshold. The dtype default is used if set to ``None``.
    atol : None or float or dict of dtype -> float
        The absolute threshold. The dtype default is used if set to ``None``.
    names : tuple of names, optional
        The names used in the error message.
    equal_nan : boolean, optional
        Whether NaNs at the same position compare equal.
    use_broadcast : boolean, optional
        If False, the shapes must be equal.
    mismatches : tuple of int
        How many mismatches to print (``mismatches[0]``) and to count (``mismatches[1]``).
    """
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _as_numpy(a), _as_numpy(b)
    if getattr(a, "dtype", None) == np.bool_ and getattr(b, "dtype", None) == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
        return
    a, b = np.asarray(a), np.asarray(b)
    _raise_mismatch(a, b, _mismatch_report(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """``assert_almost_equal`` with NumPy's ``assert_allclose`` defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """Like ``assert_almost_equal`` but passes while the mismatch rate is at most ``etol``."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.asarray(_as_numpy(a)), np.asarray(_as_numpy(b))
    equals = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if 1 - np.count_nonzero(equals) / equals.size > etol:
        _raise_mismatch(a, b, _mismatch_report(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """``assert_almost_equal`` ignoring positions where either array is NaN."""
    a = np.copy(_as_numpy(a))
    b = np.copy(_as_numpy(b))
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f: Callable, exception_type, *args, **kwargs) -> None:
    """Test that ``f(*args, **kwargs)`` raises an exception of type ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise "
                         f"{getattr(exception_type, '__name__', exception_type)}")


def retry(n: int):
    """Retry a stochastic test up to ``n`` times before failing."""
    assert n > 0

    def decorate(f):
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError:
                    if i == n - 1:
                        raise
        return wrapper
    return decorate


def same_array(array1, array2) -> bool:
    """Whether two NDArrays share the same memory (checked by writing through one)."""
    array1[:] += 1
    if not same(array1.asnumpy(), array2.asnumpy()):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1.asnumpy(), array2.asnumpy())


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None) -> None:
    """Compare (nested tuples of) arrays with ``assert_almost_equal``."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def collapse_sum_like(a, shape):
    """Sum ``a`` over the axes that were broadcast from ``shape``."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    ndim_diff = len(a.shape) - len(shape)
    axes = list(range(ndim_diff))
    for i, s in enumerate(shape):
        if s != a.shape[i + ndim_diff]:
            assert s == 1
            axes.append(i + ndim_diff)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def list_gpus() -> list:
    """The ids of the visible GPUs."""
    return list(range(num_gpus()))


@contextmanager
def environment(*args: Any):
    """Set environment variables for the ``with`` body, then restore them.

    Takes ``(name, value)`` or one dict ``{name: value}``; a None value unsets.
    """
    if len(args) == 1 and isinstance(args[0], dict):
        env_vars = args[0]
    else:
        assert len(args) == 2, "Expecting one dict arg or two args: env var name and value"
        env_vars = {args[0]: args[1]}
    snapshot = {x: os.environ.get(x) for x in env_vars}

    def set_environ(values: dict) -> None:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    set_environ(env_vars)
    try:
        yield
    finally:
        set_environ(snapshot)


def create_2d_tensor(rows, columns, dtype=np.int64):
    """A ``(rows, columns)`` array whose row ``i`` is all ``i`` (large-tensor tests)."""
    a = mx.nd.arange(0, rows, dtype=dtype).reshape(rows, 1)
    return mx.nd.broadcast_to(a, shape=(a.shape[0], columns))


def create_vector(size, dtype=np.int64):
    """``arange(size)`` (large-vector tests)."""
    return mx.nd.arange(0, size, dtype=dtype)


def get_identity_mat(size):
    """A ``size x size`` identity matrix, written element by element."""
    mat = mx.nd.zeros((size, size))
    for i in range(size):
        mat[i, i] = 1
    return mat


def get_identity_mat_batch(size):
    """A batch of two identity matrices."""
    mat = get_identity_mat(size).asnumpy()
    return mx.nd.array([mat, mat])


def shuffle_csr_column_indices(csr):
    """Shuffle the column indices within each row of a CSR matrix, in place; the
    ``(data, indices, indptr)`` components are those of ``csr.asscipy()``-style arrays."""
    row_count = len(csr.indptr) - 1
    for i in range(row_count):
        start, end = csr.indptr[i], csr.indptr[i + 1]
        sub = np.array(csr.indices[start:end])
        np.random.shuffle(sub)
        csr.indices[start:end] = sub
    return csr


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None,
                           dtype=None, modifier_func=None, shuffle_csr_indices=False):
    """``create_sparse_array`` that also allows zero density (an all-zero array)."""
    if stype == "row_sparse":
        if rsp_indices is not None:
            assert len(rsp_indices) <= shape[0]
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


@contextmanager
def discard_stderr():
    """Discard what the body writes to the stderr file descriptor::

        with discard_stderr():
            ...
    """
    with open(os.devnull, "w") as bit_bucket:
        try:
            stderr_fileno = sys.stderr.fileno()
            old_stderr = os.dup(stderr_fileno)
        except (AttributeError, OSError, ValueError):
            # stderr is not a file descriptor (a virtual pipe, pytest's capture)
            yield
            return
        try:
            sys.stderr.flush()
            os.dup2(bit_bucket.fileno(), stderr_fileno)
            yield
        finally:
            sys.stderr.flush()
            os.dup2(old_stderr, stderr_fileno)
            os.close(old_stderr)


def is_cd_run():
    """Whether the tests run as part of a Continuous Delivery run (``CD_JOB=1``)."""
    return os.environ.get("CD_JOB", 0) == "1"


def is_aarch64_run():
    """Whether the tests run on an aarch64 machine."""
    return platform.machine() == "aarch64"


_features = Features()


def has_tvm_ops():
    """Whether operators generated by TVM are available (never in mxtorch: its
    operators are torch's)."""
    built_with_tvm_op = _features.is_enabled("TVM_OP")
    ctx = current_context()
    if ctx.device_type == "gpu" and built_with_tvm_op:
        return get_cuda_compute_capability(ctx) >= 53
    return built_with_tvm_op


def is_op_runnable():
    """True on CPU; on GPU, True unless TVM operators need a compute capability >= 53."""
    ctx = current_context()
    if ctx.device_type == "gpu" and _features.is_enabled("TVM_OP"):
        return get_cuda_compute_capability(ctx) >= 53
    return True


# Symbol, data and statistics helpers live in their own modules and are part of
# mx.test_utils as in MXNet.
from .test_utils_symbol import *  # noqa: E402, F403
from .test_utils_data import *  # noqa: E402, F403
from .test_utils_stats import *  # noqa: E402, F403

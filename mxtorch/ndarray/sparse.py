"""``mx.nd.sparse``: mxtorch stores every array densely; these helpers accept sparse-style
constructors and return dense NDArrays with the same values."""
from __future__ import annotations

import numpy as np

from .ndarray import NDArray, array

__all__ = ["csr_matrix", "row_sparse_array", "zeros", "array"]


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """Build a dense array from ``(data, indices, indptr)`` or a dense source."""
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = (np.asarray(a.asnumpy() if isinstance(a, NDArray) else a)
                                 for a in arg1)
        rows = len(indptr) - 1
        cols = shape[1] if shape else int(indices.max()) + 1
        dense = np.zeros((rows, cols), dtype=dtype or data.dtype)
        for r in range(rows):
            dense[r, indices[indptr[r]:indptr[r + 1]]] = data[indptr[r]:indptr[r + 1]]
        return array(dense, ctx=ctx, dtype=dtype or data.dtype)
    return array(arg1, ctx=ctx, dtype=dtype)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """Build a dense array from ``(data, indices)`` or a dense source."""
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, indices = (np.asarray(a.asnumpy() if isinstance(a, NDArray) else a) for a in arg1)
        dense = np.zeros(shape, dtype=dtype or data.dtype)
        dense[indices.astype(np.int64)] = data
        return array(dense, ctx=ctx, dtype=dtype or data.dtype)
    return array(arg1, ctx=ctx, dtype=dtype)


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    from .utils import zeros as _zeros
    return _zeros(shape, ctx=ctx, dtype=dtype)

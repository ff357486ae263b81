"""Helpers shared by the data iterators (``mx.io.utils``)."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..ndarray import NDArray, array

try:
    import h5py
except ImportError:  # h5py is optional, as in MXNet
    h5py = None

__all__ = ["_init_data", "_has_instance", "_getdata_by_idx", "_slice_along_batch_axis"]


def _array_types() -> tuple:
    """Types accepted as a single data source."""
    return (np.ndarray, NDArray, h5py.Dataset) if h5py else (np.ndarray, NDArray)


def _init_data(data, allow_empty, default_name):
    """Convert data into the canonical form: a list of (name, NDArray) sorted by name."""
    assert data is not None or allow_empty
    if data is None:
        data = []
    if isinstance(data, _array_types()):
        data = [data]
    if isinstance(data, list):
        if not allow_empty:
            assert len(data) > 0
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([("_%d_%s" % (i, default_name), d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError("Input must be NDArray, numpy.ndarray, h5py.Dataset "
                        "a list of them or dict with them as values")
    keep = (NDArray, h5py.Dataset) if h5py else NDArray
    for k, v in data.items():
        if not isinstance(v, keep):
            try:
                data[k] = array(v)
            except Exception:  # noqa: BLE001 - MXNet reports any unconvertible value as this TypeError
                raise TypeError("Invalid type '%s' for %s, " % (type(v), k)
                                + "should be NDArray, numpy.ndarray or h5py.Dataset") from None
    # MXNet: sources are ordered by name ('_10_data' sorts before '_1_data').
    return list(sorted(data.items()))


def _has_instance(data, dtype):
    """Return True if any array in ``data`` (list of (name, array)) is a ``dtype``."""
    return any(isinstance(arr, dtype) for _, arr in data)


def _getdata_by_idx(data, idx):
    """Shuffle every source of ``data`` by the index array ``idx``."""
    shuffle_data = []
    for k, v in data:
        if h5py is not None and isinstance(v, h5py.Dataset):
            shuffle_data.append((k, v))
        else:
            # MXNet: re-created with nd.array's default dtype (float32).
            shuffle_data.append((k, array(v.asnumpy()[idx], v.context)))
    return shuffle_data


def _slice_along_batch_axis(data, s, batch_axis):
    """Apply slice ``s`` along ``batch_axis`` of ``data``."""
    return data.slice_axis(axis=batch_axis, begin=s.start, end=s.stop)

"""``npx.save`` / ``npx.load``: MXNet's NDArray list file with V3 (numpy-shape) records."""
from __future__ import annotations

import os

from ..base import MXNetError
from ..context import Context
from ..ndarray.ndarray import NDArray, _from_numpy
from ..ndarray.utils import atomic_write
from ..numpy.multiarray import ndarray, wrap
from ..util import is_np_array, is_np_shape

__all__ = ["save", "load"]


def _check_np_mode(what: str) -> None:
    if not (is_np_shape() and is_np_array()):
        raise ValueError(f'Cannot {what} `mxnet.numpy.ndarray` in legacy mode. Please '
                         'activate numpy semantics by calling `npx.set_np()` in the global '
                         'scope before calling this function.')


def save(file, arr):
    """Saves a list of `ndarray`s or a dict of `str`->`ndarray` to file (V3 records).

    Parameters
    ----------
    file : str
        Filename to which the data is saved.
    arr : `ndarray` or list of `ndarray`s or dict of `str` to `ndarray`
        The data to be saved.

    Notes
    -----
    This function can only be called within numpy semantics, i.e., `npx.is_np_shape()`
    and `npx.is_np_array()` must both return true.
    """
    from ..format.params import dumps
    _check_np_mode("save")
    if isinstance(arr, ndarray):
        arr = [arr]
    if isinstance(arr, dict):
        names, values = list(arr.keys()), list(arr.values())
        if any(not isinstance(k, str) for k in names) or \
                any(not isinstance(v, ndarray) for v in values):
            raise TypeError('Only accepts dict str->ndarray or list of ndarrays')
    elif isinstance(arr, list):
        names, values = None, arr
        if any(not isinstance(v, ndarray) for v in values):
            raise TypeError('Only accepts dict str->ndarray or list of ndarrays')
    else:
        raise ValueError("data needs to either be a ndarray, dict of (str, ndarray) pairs "
                         "or a list of ndarrays.")
    blob = dumps([v.asnumpy() for v in values], names, np_semantics=True)
    atomic_write(file, blob)


def load(file):
    """Loads arrays saved by :func:`save` (or by ``mx.nd.save``) as ``mx.np.ndarray``.

    Parameters
    ----------
    file : str
        The filename.

    Returns
    -------
    result : list of ndarrays or dict of str -> ndarray
        Data stored in the file.

    Notes
    -----
    This function can only be called within numpy semantics, i.e., `npx.is_np_shape()`
    and `npx.is_np_array()` must both return true.
    """
    from ..format.params import loads
    _check_np_mode("load")
    if not isinstance(file, (str, os.PathLike)):
        raise TypeError('file required to be a string')
    fname = os.fspath(file)
    try:
        with open(fname, "rb") as f:
            blob = f.read()
    except OSError as err:
        raise MXNetError(f"npx.load: cannot read {fname!r}: {err}") from None
    arrays, names = loads(blob, source=fname, np_semantics=True)
    cpu0 = Context("cpu", 0)
    out = [wrap(_from_numpy(a), cpu0) for a in arrays]
    return out if names is None else dict(zip(names, out))


del NDArray

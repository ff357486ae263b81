"""Contrib data iterators for common data formats."""
from __future__ import annotations

from .. import ndarray as nd
from ..io import DataDesc, DataIter

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """Returns an iterator for ``mx.gluon.data.Dataloader`` so gluon dataloader
    can be used in symbolic module.

    Parameters
    ----------
    loader : mxnet.gluon.data.Dataloader
        Gluon dataloader instance
    data_name : str, optional
        The data name.
    label_name : str, optional
        The label name.
    dtype : str, optional
        The dtype specifier, can be float32 or float16

    Examples
    --------
    >>> train_data = mx.gluon.data.DataLoader(dataset, 32, shuffle=True)
    >>> dataiter = mx.contrib.io.DataLoaderIter(train_data)
    >>> for batch in dataiter:
    ...     batch.data[0].shape
    (32, 28, 28, 1)
    """
    def __init__(self, loader, data_name='data', label_name='softmax_label', dtype='float32'):
        super().__init__()
        self._loader = loader
        self._iter = iter(self._loader)
        data, label = next(self._iter)
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current_batch = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        try:
            self._current_batch = next(self._iter)
        except StopIteration:
            self._current_batch = None
        return self._current_batch is not None

    def _padded(self, arr):
        """``arr`` in ``dtype``; a short last batch is padded to ``batch_size`` rows (the
        padding is left uninitialized, as MXNet's)."""
        if not self.getpad():
            return arr.astype(self.dtype)
        ret = nd.empty(shape=[self.batch_size] + list(arr.shape[1:]), dtype=self.dtype)
        ret[:arr.shape[0]] = arr.astype(self.dtype)
        return ret

    def getdata(self):
        return [self._padded(self._current_batch[0])]

    def getlabel(self):
        return [self._padded(self._current_batch[1])]

    def getpad(self):
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        return None

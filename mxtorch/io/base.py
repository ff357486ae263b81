"""The data containers every iterator shares: DataDesc, DataBatch and the DataIter base."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

__all__ = ["DataDesc", "DataBatch", "DataIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Data description: name, shape, type and layout of an input or a label.

    Parameters
    ----------
    name : str
        Data name.
    shape : tuple of int
        Data shape.
    dtype : np.dtype, optional
        Data type (default float32).
    layout : str, optional
        Data layout (default 'NCHW').
    """

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        ret = super(cls, DataDesc).__new__(cls, name, shape)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return "DataDesc[%s,%s,%s,%s]" % (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout):
        """Get the dimension that corresponds to the batch size ('N' in ``layout``, 0 if None).

        Parameters
        ----------
        layout : str
            layout string. For example, "NCHW".
        """
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """Get a list of DataDesc from lists of (name, shape) and (name, type).

        Parameters
        ----------
        shapes : list of (str, tuple)
            A list of (name, shape) pairs.
        types : list of (str, numpy.dtype)
            A list of (name, type) pairs (or None).
        """
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch:
    """A data batch.

    Parameters
    ----------
    data : list of `NDArray`
        A list of input data.
    label : list of `NDArray`, optional
        A list of input labels.
    pad : int, optional
        The number of examples padded at the end of a batch.
    index : numpy.array, optional
        The example indices in this batch.
    bucket_key : int, optional
        The bucket key, used for bucketing module.
    provide_data : list of `DataDesc`, optional
        A list of `DataDesc` objects. `DataDesc` is used to store name, shape, type and
        layout information of the data.
    provide_label : list of `DataDesc`, optional
        A list of `DataDesc` objects for the labels.
    """

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None:
            assert isinstance(data, (list, tuple)), "Data must be list of NDArrays"
        if label is not None:
            assert isinstance(label, (list, tuple)), "Label must be list of NDArrays"
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lbl.shape for lbl in self.label] if self.label else None
        return "{}: data shapes: {} label shapes: {}".format(
            self.__class__.__name__, data_shapes, label_shapes)


class DataIter:
    """The base class for an MXNet data iterator.

    Parameters
    ----------
    batch_size : int, optional
        The batch size, namely the number of items in the batch.
    """

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Reset the iterator to the begin of the data."""

    def next(self):
        """Get next data batch from iterator (raises StopIteration at the end)."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(),
                             pad=self.getpad(), index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; return whether there is one."""

    def getdata(self):
        """Get data of current batch."""

    def getlabel(self):
        """Get label of the current batch."""

    def getindex(self):
        """Get index of the current batch."""
        return None

    def getpad(self):
        """Get the number of padding examples in the current batch."""

"""Data iterators for common data formats and utility functions (``mx.io``)."""
from . import io
from .io import DataBatch, DataDesc, DataIter, NDArrayIter, PrefetchingIter, ResizeIter
from .native import CSVIter, LibSVMIter, MNISTIter, MXDataIter
from .image_record import ImageRecordIter
from . import utils
from .utils import _init_data, _getdata_by_idx, _has_instance

__all__ = ["DataBatch", "DataDesc", "DataIter", "NDArrayIter", "PrefetchingIter", "ResizeIter",
           "CSVIter", "LibSVMIter", "MNISTIter", "MXDataIter", "ImageRecordIter"]

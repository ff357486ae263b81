"""Docstrings of the ``mx.nd`` operator functions (``mx.ndarray_doc``).

Every ``mx.nd.<op>`` docstring is built by :func:`_build_doc` from the operator's
registry entry: its description, a numpy-style ``Parameters`` section (inputs typed
``NDArray``, attributes with type and default), the ``out`` argument and ``Returns``.
Python-specific examples for an operator ``XXX`` live in a class ``XXXDoc`` deriving from
:class:`NDArrayDoc` here, as its docstring; ``_build_doc`` appends it. The examples are
doctests, run by mxtorch's tests with ``mx`` and ``np`` in scope.
"""
from __future__ import annotations

from .base import build_param_doc as _build_param_doc
from .symbol_doc import _extra_doc

__all__ = ["NDArrayDoc"]


class NDArrayDoc:
    """The base class for attaching doc to ``mx.nd`` operators."""


class ReshapeDoc(NDArrayDoc):
    """
    Examples
    --------
    ``-1`` infers a dimension, ``0`` copies one from the input, ``-3`` merges two:

    >>> x = mx.nd.ones((2, 3, 4))
    >>> mx.nd.reshape(x, shape=(4, -1)).shape
    (4, 6)
    >>> mx.nd.reshape(x, shape=(0, -1)).shape
    (2, 12)
    >>> mx.nd.reshape(x, shape=(-3, 0)).shape
    (6, 4)
    """


class broadcast_toDoc(NDArrayDoc):
    """
    Examples
    --------
    Axes of length 1 are repeated to the target shape (0 keeps an axis):

    >>> a = mx.nd.array([[1], [2]])
    >>> mx.nd.broadcast_to(a, shape=(2, 3)).asnumpy()
    array([[1., 1., 1.],
           [2., 2., 2.]], dtype=float32)
    >>> mx.nd.broadcast_to(a, shape=(0, 2)).shape
    (2, 2)
    """


class stackDoc(NDArrayDoc):
    """
    Examples
    --------
    Arrays of one shape are joined along a new axis:

    >>> a, b = mx.nd.array([1, 2]), mx.nd.array([3, 4])
    >>> mx.nd.stack(a, b).asnumpy()
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    >>> mx.nd.stack(a, b, axis=1).asnumpy()
    array([[1., 3.],
           [2., 4.]], dtype=float32)
    """


class elemwise_addDoc(NDArrayDoc):
    """
    Examples
    --------
    The shapes must be equal (``broadcast_add`` broadcasts):

    >>> mx.nd.elemwise_add(mx.nd.array([1, 2]), mx.nd.array([0.5, 0.25])).asnumpy()
    array([1.5 , 2.25], dtype=float32)
    """


def _build_doc(func_name, desc, arg_names, arg_types, arg_desc, key_var_num_args=None,
               ret_type=None):
    """Build docstring for imperative functions."""
    param_str = _build_param_doc(arg_names, arg_types, arg_desc)
    doc_str = ("%s\n\n%s\nout : NDArray, optional\n    The output NDArray to hold the "
               "result.\n\nReturns\n-------\nout : NDArray or list of NDArrays\n    The "
               "output of this function." % (desc, param_str))
    doc_str += _extra_doc(NDArrayDoc, func_name)
    return doc_str.replace("NDArray-or-Symbol", "NDArray")

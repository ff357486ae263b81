"""``mx.npx`` neural-network and utility operators: thin wrappers over the registry.

Each function runs the registered operator MXNet 1.9.1's ``npx`` function runs (the
table :data:`mxtorch.ops.np_ops.NPX_FUNCTIONS`) and returns ``mx.np.ndarray`` results.
Array inputs are given positionally in the operator's input order (``data, weight,
bias``) or by input name; attributes are keywords, as in MXNet's generated wrappers.
"""
from __future__ import annotations

from typing import Any, Callable

from ..base import MXNetError
from ..ndarray.ndarray import NDArray, invoke
from ..numpy.multiarray import ndarray, wrap
from ..ops import registry as _reg
from ..ops.np_ops import NPX_FUNCTIONS

__all__ = list(NPX_FUNCTIONS) + ["split_op_arguments"]


def split_op_arguments(opdef: _reg.OpDef, fname: str, args: tuple, kwargs: dict,
                       is_input: Callable[[Any], bool]):
    """Split a generated wrapper's arguments into (input list, attribute dict).

    Positional arguments are inputs in the operator's input order (``None`` skips an
    optional one); keywords naming an input are inputs; other keywords are attributes.
    """
    attrs = {k: v for k, v in kwargs.items() if not is_input(v) and
             not (v is None and k not in opdef.params)}
    try:
        names = opdef.input_names(opdef.parse_attrs(attrs))
    except MXNetError as err:
        raise MXNetError(f"npx.{fname}: {err}") from None
    slots: dict[str, Any] = {}
    if len(args) > len(names):
        raise MXNetError(f"npx.{fname}: {len(args)} positional inputs given but the "
                         f"operator takes {len(names)}: {names}")
    for n, a in zip(names, args):
        slots[n] = a
    for k, v in kwargs.items():
        if is_input(v):
            if k not in names:
                raise MXNetError(f"npx.{fname}: unknown input '{k}'; inputs are {names}")
            slots[k] = v
    inputs = []
    for n in names:
        v = slots.get(n)
        if v is None:
            continue  # an optional input left out (MXNet's wrappers skip None)
        if not is_input(v):
            raise TypeError(f"npx.{fname}: input '{n}' must be an ndarray, got "
                            f"{type(v).__name__}")
        inputs.append(v)
    return inputs, attrs


def _is_array(v) -> bool:
    return isinstance(v, NDArray)


def _to_np(res):
    """Legacy result(s) of ``invoke`` -> ``mx.np.ndarray`` (same memory)."""
    if isinstance(res, (list, tuple)):
        return [_to_np(r) for r in res]
    if isinstance(res, ndarray):
        return res
    out = wrap(res._t, res._ctx)
    out._ag = res._ag
    return out


def _make(fname: str, opname: str) -> Callable:
    opdef = _reg.get(opname)

    def fn(*args, out=None, name=None, **kwargs):
        inputs, attrs = split_op_arguments(opdef, fname, args, kwargs, _is_array)
        res = invoke(opdef, inputs, attrs, out=out)
        return res if out is not None else _to_np(res)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = (f"``npx.{fname}``: runs the ``{opname}`` operator with NumPy-array "
                  f"outputs.\n\n{opdef.doc}")
    return fn


for _fname, _opname in NPX_FUNCTIONS.items():
    globals()[_fname] = _make(_fname, _opname)


def reshape(a, newshape, reverse=False, order='C'):
    """Reshape ``a`` with MXNet's codes (a copy, as in MXNet).

    Parameters
    ----------
    a : ndarray
        Array to be reshaped.
    newshape : int or tuple of ints
        The new shape. -1 infers a dimension; -2 copies this input dimension; -3 skips
        an input dimension of size one; -4 copies all remaining input dimensions; -5
        merges two consecutive input dimensions; -6 splits one input dimension into
        the two values that follow it.
    reverse : bool, optional
        Read the codes from right to left.
    order : {'C'}, optional
        Only C order is supported.

    Returns
    -------
    ndarray
        The reshaped array.
    """
    if order != 'C':
        raise NotImplementedError("npx.reshape only supports order='C'")
    shape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    return _to_np(invoke("_npx_reshape", [a], {"newshape": shape, "reverse": reverse}))


def nonzero(a):
    """Return the indices (int64, shape ``(N, a.ndim)``) of the non-zero elements of ``a``.

    Parameters
    ----------
    a : ndarray
        Input array.

    Returns
    -------
    ndarray
        One row of indices per non-zero element.
    """
    return _to_np(invoke("_npx_nonzero", [a], {}))

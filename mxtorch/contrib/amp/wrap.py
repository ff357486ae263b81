"""What ``amp.init()`` does to ``mx.nd`` and ``mx.sym``: every listed operator function is
replaced by one that casts its inputs (``amp_cast``/``amp_multicast``) before it runs, as
MXNet 1.9.1 does, so imperative code, symbols and hybridized Gluon blocks all get the casts.
"""
from __future__ import annotations

import functools
import logging

import numpy as np

from ... import ndarray, symbol
from ...base import dtype_np
from ...ndarray import NDArray
from ...symbol import Symbol

_LOG = logging.getLogger(__name__)

__all__ = ["wrap_module", "wrap_loss_outputs", "route_operators"]

BFLOAT16 = dtype_np("bfloat16")
_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)
# MXNet: the dtypes an NDArray is cast from; float16 arrays on CPU (and bfloat16 ones on GPU)
# are left as they are.
_CASTABLE = {"cpu": (BFLOAT16, _F32), "gpu": (_F16, _F32)}
# registry-name prefix -> the sub-namespace of mx.nd / mx.sym holding the function
_PREFIXES = (("_contrib_", "contrib"), ("_linalg_", "linalg"), ("_sparse_", "sparse"),
             ("_image_", "image"), ("_random_", "random"))


def cast_array(x, dtype: np.dtype):
    """``x`` cast to ``dtype`` with ``amp_cast`` (a Symbol always; an NDArray when its dtype
    is one AMP converts on its device); anything else as it is."""
    if isinstance(x, Symbol):
        return symbol.amp_cast(x, dtype=dtype)
    if isinstance(x, NDArray):
        have = np.dtype(x.dtype)
        kind = "cpu" if x.context.device_type in ("cpu", "cpu_pinned", "cpu_shared") else "gpu"
        if have != dtype and have in _CASTABLE[kind]:
            return ndarray.amp_cast(x, dtype=dtype)
    return x


def _copy_meta(new, f):
    return functools.update_wrapper(new, f, assigned=("__name__", "__qualname__", "__doc__",
                                                      "__module__"), updated=())


def _applies(cond, kwargs) -> bool:
    """Whether a conditional-float32 wrapper casts this call (``cond`` = (attr, values))."""
    return cond is None or (cond[0] in kwargs and kwargs[cond[0]] in cond[1])


def _ndarray_wrapper(f, dtype, fp32_param=None, cond=None):
    """``f`` with its NDArray inputs cast to ``dtype`` (those named in ``fp32_param`` kept)."""
    def wrapped(*args, **kwargs):
        if not _applies(cond, kwargs):
            return f(*args, **kwargs)
        args = [x if fp32_param and i < len(fp32_param) and fp32_param[i]
                else cast_array(x, dtype) for i, x in enumerate(args)]
        # the output buffer is not an input: it keeps its dtype
        kwargs = {k: v if k == "out" or (fp32_param and k in fp32_param)
                  else cast_array(v, dtype) for k, v in kwargs.items()}
        return f(*args, **kwargs)
    return _copy_meta(wrapped, f)


def _symbol_wrapper(f, dtype, fp32_param=None, cond=None):
    """``f`` whose new node reads its inputs through ``amp_cast`` nodes (auxiliary states
    and the inputs named in ``fp32_param`` excepted)."""
    def wrapped(*args, **kwargs):
        if not _applies(cond, kwargs):
            return f(*args, **kwargs)
        sym = f(*args, **kwargs)
        node = sym._outputs[0].node
        if node.is_variable:
            return sym
        aux = set(node.aux_positions())
        inputs = []
        for i, e in enumerate(node.inputs):
            if i in aux or (fp32_param and i < len(fp32_param) and fp32_param[i]):
                inputs.append(e)
            else:
                inputs.append(symbol.amp_cast(Symbol([e]), dtype=dtype)._outputs[0])
        node.inputs = inputs
        return sym
    return _copy_meta(wrapped, f)


def _widest_wrapper(f, target_dtype):
    """``f`` with its array inputs brought to one dtype: ``amp_multicast`` for Symbols; for
    NDArrays, inputs in ``target_dtype`` are cast to float32 when any input is float32."""
    def wrapped(*args, **kwargs):
        args = list(args)
        found = [(args, i, a) for i, a in enumerate(args) if isinstance(a, (Symbol, NDArray))]
        found += [(kwargs, k, a) for k, a in kwargs.items() if isinstance(a, (Symbol, NDArray))]
        if any(isinstance(a, Symbol) for _, _, a in found):
            cast = symbol.amp_multicast(*[a for _, _, a in found], num_outputs=len(found))
            for (holder, key, _), c in zip(found, cast):
                holder[key] = c
        else:
            dtypes = [np.dtype(a.dtype) for _, _, a in found]
            widest = _F32 if _F32 in dtypes else target_dtype
            for (holder, key, a), have in zip(found, dtypes):
                if have != widest and have == target_dtype:
                    holder[key] = ndarray.amp_cast(a, dtype=widest)
        return f(*args, **kwargs)
    return _copy_meta(wrapped, f)


def _locate(module, name: str):
    """(namespace, function name) where ``module`` (mx.nd or mx.sym) keeps operator ``name``."""
    for prefix, sub in _PREFIXES:
        if name.startswith(prefix):
            if prefix == "_random_" and not name.endswith("_like"):
                return module._internal, name
            return getattr(module, sub, None), name[len(prefix):]
    if name.startswith("_"):
        return module._internal, name
    return module, name


def _replace(module, name: str, make) -> None:
    """Replace operator ``name``'s function in ``module`` (and ``module.op``) by ``make(f)``;
    an operator the front end does not expose there is left alone."""
    space, fname = _locate(module, name)
    f = getattr(space, fname, None) if space is not None else None
    if f is None:
        return
    setattr(space, fname, make(f))
    if space is module and hasattr(module, "op"):
        setattr(module.op, fname, make(f))


def wrap_module(module, target_dtype: np.dtype, lp16_ops, fp32_ops, conditional_fp32_ops,
                widest_ops, fp32_params) -> None:
    """Wrap every listed operator function of ``module`` (``mx.nd`` or ``mx.sym``)."""
    make = _symbol_wrapper if module is symbol else _ndarray_wrapper
    for name in lp16_ops:
        _, fname = _locate(module, name)
        keep = (fp32_params or {}).get(fname)
        _replace(module, name, lambda f, k=keep: make(f, target_dtype, fp32_param=k))
    for name in fp32_ops:
        _replace(module, name, lambda f: make(f, _F32))
    for name, attr, values in conditional_fp32_ops:
        _replace(module, name, lambda f, c=(attr, values): make(f, _F32, cond=c))
    for name in widest_ops:
        _replace(module, name, lambda f: _widest_wrapper(f, target_dtype))


def wrap_loss_outputs(module, scaler, names) -> None:
    """Loss-output operators of ``mx.nd`` multiply ``grad_scale`` by the current loss scale;
    those of ``mx.sym`` warn that a symbol cannot follow a dynamic scale."""
    for name in names:
        f = getattr(module, name, None)
        if f is None:
            continue
        if module is ndarray:
            def wrapped(*args, _f=f, **kwargs):
                kwargs["grad_scale"] = kwargs.get("grad_scale", 1.0) * scaler.loss_scale
                return _f(*args, **kwargs)
        else:
            def wrapped(*args, _f=f, **kwargs):
                _LOG.warning("%s does not support dynamic loss scaling in symbolic and "
                             "hybridized execution.", _f.__name__)
                return _f(*args, **kwargs)
        setattr(module, name, _copy_meta(wrapped, f))


# MXNet: NDArray and Symbol arithmetic between two arrays calls these module functions, so
# after init() it goes through their wrappers (mixed bfloat16/float32 sums get float32).
_NDARRAY_OPERATORS = {
    "__add__": "broadcast_add", "__sub__": "broadcast_sub", "__mul__": "broadcast_mul",
    "__truediv__": "broadcast_div", "__mod__": "broadcast_mod", "__pow__": "broadcast_power",
    "__eq__": "broadcast_equal", "__ne__": "broadcast_not_equal",
    "__gt__": "broadcast_greater", "__ge__": "broadcast_greater_equal",
    "__lt__": "broadcast_lesser", "__le__": "broadcast_lesser_equal"}
_SYMBOL_OPERATORS = {
    "__add__": "_Plus", "__sub__": "_Minus", "__mul__": "_Mul", "__truediv__": "_Div",
    "__mod__": "_Mod", "__pow__": "_Power", "__eq__": "_equal", "__ne__": "_not_equal",
    "__gt__": "_greater", "__ge__": "_greater_equal", "__lt__": "_lesser",
    "__le__": "_lesser_equal"}


def _routed(method, cls, namespace, fname):
    """``method`` that sends a ``cls`` right operand through ``namespace.fname``."""
    def operator(self, other):
        if isinstance(other, cls):
            return getattr(namespace, fname)(self, other)
        return method(self, other)
    return _copy_meta(operator, method)


def route_operators(wrapped_names: set[str]) -> None:
    """Make the array-array operators of NDArray and Symbol whose operator AMP wraps call
    the (wrapped) module function."""
    for cls, table, namespace in ((NDArray, _NDARRAY_OPERATORS, ndarray.op),
                                  (Symbol, _SYMBOL_OPERATORS, symbol._internal)):
        for dunder, fname in table.items():
            if fname in wrapped_names:
                setattr(cls, dunder, _routed(getattr(cls, dunder), cls, namespace, fname))

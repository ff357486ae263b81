"""Generate ``mx.nd.<op>`` functions from the operator registry."""
from __future__ import annotations

from typing import Any, Callable

from ..base import MXNetError
from ..context import Context
from ..ndarray_doc import _build_doc
from ..ops import registry as _reg
from .ndarray import NDArray, call_plain, invoke, plain_entry

__all__ = ["make_function", "populate", "fluent_functions"]


def _split_args(opdef: _reg.OpDef, args: tuple, kwargs: dict):
    """Split a call into (positional arrays, named arrays, attribute kwargs)."""
    pos_arrays: list = []
    attr_kwargs: dict[str, Any] = {}
    named_arrays: dict[str, Any] = {}
    extra_pos: list = []
    for a in args:
        if isinstance(a, NDArray) or (a is None and not extra_pos):
            pos_arrays.append(a)
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, NDArray) for x in a) \
                and opdef.key_var_num_args:
            pos_arrays.extend(a)
        else:
            extra_pos.append(a)
    params = opdef.param_order
    for i, v in enumerate(extra_pos):
        if i >= len(params):
            raise MXNetError(f"Operator {opdef.name}: too many positional arguments")
        attr_kwargs[params[i]] = v
    for k, v in kwargs.items():
        if k in opdef.params:
            attr_kwargs[k] = v
        elif isinstance(v, NDArray) or v is None:
            named_arrays[k] = v
        else:
            attr_kwargs[k] = v  # unknown attribute: parse_attrs raises with a clear message
    return pos_arrays, named_arrays, attr_kwargs


def _order_inputs(opdef, attrs, pos_arrays, named_arrays):
    names = opdef.input_names(attrs)
    if not named_arrays:
        inputs = [a for a in pos_arrays if a is not None]
        if len(inputs) > len(names):
            raise MXNetError(f"Operator {opdef.name}: expected at most {len(names)} inputs "
                             f"{names}, got {len(inputs)}")
        return inputs
    slots = dict(zip(names, pos_arrays))
    for k, v in named_arrays.items():
        if k not in names:
            raise MXNetError(f"Operator {opdef.name}: unknown input '{k}'; inputs are "
                             f"{names}")
        slots[k] = v
    inputs = []
    for n in names:
        v = slots.get(n)
        if v is None:
            break
        inputs.append(v)
    return inputs


def make_function(opdef: _reg.OpDef, fname: str) -> Callable:
    """Build the imperative function for one operator."""
    nvar = opdef.key_var_num_args

    params = opdef.params
    # Parameter-free plain operators: attributes fixed once, the shortest call path.
    plain = plain_entry(opdef)

    def fn(*args, out=None, name=None, ctx=None, **kwargs):
        if plain is not None and not kwargs and out is None and ctx is None and args:
            res = call_plain(plain, args)
            if res is not None:
                return res
        if ctx is None and not nvar:
            for a in args:  # fast path: NDArray inputs, attribute keywords
                if not isinstance(a, NDArray):
                    break
            else:
                if kwargs.keys() <= params.keys():   # attribute keywords only
                    return invoke(opdef, args, kwargs, out=out)
        if ctx is not None and isinstance(ctx, str):
            ctx = Context(ctx.split("(")[0], int(ctx.split("(")[1].rstrip(")")))
        pos, named, attr_kwargs = _split_args(opdef, args, kwargs)
        if nvar and nvar not in attr_kwargs:
            attr_kwargs[nvar] = len([a for a in pos if a is not None]) + len(named)
        attrs = opdef.parse_attrs(attr_kwargs)
        inputs = _order_inputs(opdef, attrs, pos, named)
        return invoke(opdef, inputs, attr_kwargs, out=out, ctx=ctx)

    fn.__name__ = fname
    fn.__qualname__ = fname
    fn.__doc__ = _reg.function_doc(opdef, _build_doc)
    return fn


def populate(module_dict: dict, namespace: str) -> list[str]:
    """Fill one ``mx.nd`` namespace module (``op``, ``_internal``, ``contrib``, ``linalg``,
    ``random``, ``image``) from the registry; returns the names added."""
    return _reg.populate(make_function, module_dict, namespace)


def fluent_functions() -> dict[str, Callable]:
    """Method name -> the ``mx.nd`` function of every operator with a fluent method."""
    return {method: _reg.made_function(make_function, nm)
            for method, nm in _reg.fluent_methods().items()}

"""NDArray functions executed by the Torch backend (``mx.th``, also ``mx.torch``).

MXNet 1.x exposed the Lua Torch7 functions of a ``USE_TORCH=1`` build here. mxtorch's
backend *is* PyTorch, so every public function of the ``torch`` namespace is available:
``mx.th.<name>(*args, **kwargs)`` calls ``torch.<name>`` with each NDArray argument
(positional, keyword, or inside a list or tuple) passed as its tensor, and returns each
tensor result as an NDArray (tuples of results, ``torch.max(x, dim)``'s named tuple
included, element by element). A result stays on the context of the first NDArray
argument when it lives on that device, else on the context of its own device::

    >>> x = mx.nd.array([[1, 2], [3, 4]])
    >>> mx.th.mm(x, x)
    [[ 7. 10.]
     [15. 22.]]
    <NDArray 2x2 @cpu(0)>
    >>> values, indices = mx.th.max(x, dim=1)

``out=`` takes an NDArray and writes into it (that NDArray is returned), as MXNet's
output-buffer form did. A name that is not a public torch function (a class, a dtype, a
submodule, a private name) raises ``AttributeError``, as MXNet's module does for a
function its build does not have; a failure inside torch raises
:class:`~mxtorch.base.MXNetError` naming the function and the NDArrays' shapes. The
functions bypass mxtorch's operator registry: they are recorded by neither
``mx.autograd`` nor a Symbol.
"""
from __future__ import annotations

import types
from typing import Any, Callable

import torch

from .base import MXNetError
from .context import Context, current_context, context_of_device
from .ndarray.ndarray import NDArray

__all__: list[str] = []


def _unwrap(value: Any) -> Any:
    """NDArrays (also inside lists and tuples) as their tensors."""
    if isinstance(value, NDArray):
        return value.handle
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_unwrap(v) for v in value)
    return value


def _context_for(t: torch.Tensor, ctx: Context) -> Context:
    """``ctx`` when ``t`` lives on its device, else the context of ``t``'s device."""
    on_gpu = t.device.type == "cuda"
    if (ctx.device_type == "gpu") == on_gpu and (not on_gpu or t.device.index == ctx.device_id):
        return ctx
    return context_of_device(t.device)


def _wrap(value: Any, ctx: Context, out: NDArray | None) -> Any:
    """Tensors (also inside tuples and lists) as NDArrays; ``out``'s tensor as ``out``."""
    if isinstance(value, torch.Tensor):
        if out is not None and value is out.handle:
            return out
        return NDArray(value, _context_for(value, ctx))
    if isinstance(value, tuple) and type(value) is not tuple:  # torch.return_types.*
        return type(value)([_wrap(v, ctx, out) for v in value])
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap(v, ctx, out) for v in value)
    return value


def _first_context(args: tuple, kwargs: dict) -> Context:
    """The context of the first NDArray argument, else the current context."""
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, (list, tuple)):
            for v in value:
                if isinstance(v, NDArray):
                    return v.context
        if isinstance(value, NDArray):
            return value.context
    return current_context()


def _is_torch_function(obj: Any) -> bool:
    """A callable of the torch namespace that is neither a class nor a module."""
    return callable(obj) and not isinstance(obj, (type, types.ModuleType))


def _make_function(name: str, fn: Callable) -> Callable:
    """The NDArray-in, NDArray-out function for ``torch.<name>``."""
    def generic_torch_function(*args, **kwargs):
        ctx = _first_context(args, kwargs)
        out = kwargs.get("out")
        try:
            res = fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        except RuntimeError as err:
            shapes = [a.shape for a in list(args) + list(kwargs.values())
                      if isinstance(a, NDArray)]
            raise MXNetError(f"mx.th.{name} on NDArrays of shapes {shapes}: {err}") from None
        return _wrap(res, ctx, out if isinstance(out, NDArray) else None)

    generic_torch_function.__name__ = name
    generic_torch_function.__qualname__ = name
    generic_torch_function.__doc__ = (
        f"Interface for torch function {name}.\n\nInvoke with\n"
        f"res = mxnet.th.{name}(Parameters)\nor\nmxnet.th.{name}(Parameters, out=res).\n\n"
        f"NDArray arguments are passed to torch.{name} as their tensors; tensor results "
        f"are returned as NDArrays. torch's documentation follows.\n\n{fn.__doc__ or ''}")
    return generic_torch_function


def __getattr__(name: str) -> Callable:
    fn = None if name.startswith("_") else getattr(torch, name, None)
    if fn is None or not _is_torch_function(fn):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    function = _make_function(name, fn)
    globals()[name] = function
    return function


def __dir__() -> list[str]:
    names = {n for n in dir(torch) if not n.startswith("_")
             and _is_torch_function(getattr(torch, n, None))}
    return sorted(names | set(globals()))

"""``mx.operator``: custom operators written in Python (CustomOp / CustomOpProp)."""
from __future__ import annotations

from .base import MXNetError
from .ops.custom import CUSTOM_PROPS

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators"]


class CustomOp:
    """Base class for the computation of a custom operator."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute ``out_data`` from ``in_data``; write with :meth:`assign`."""
        raise MXNetError(f"{type(self).__name__} must implement forward")

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute ``in_grad`` from ``out_grad``; write with :meth:`assign`."""
        raise MXNetError(f"{type(self).__name__} must implement backward")

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` according to ``req`` (write/inplace/add/null)."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] = dst + src
        else:
            raise MXNetError(f"assign: unknown req {req!r}")


class CustomOpProp:
    """Base class for the properties of a custom operator (arguments, shapes, types).

    Parameters
    ----------
    need_top_grad : bool, default True
        Whether backward needs the gradient of the outputs.
    """

    def __init__(self, need_top_grad: bool = True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        return (in_stype, ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def list_outputs(self):
        return ["output"]

    def list_arguments(self):
        return ["data"]

    def list_auxiliary_states(self):
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return CustomOp()


def register(reg_name: str):
    """Register a CustomOpProp subclass under ``reg_name`` (use as a decorator)."""
    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise MXNetError("mx.operator.register expects a CustomOpProp subclass")
        CUSTOM_PROPS[reg_name] = prop_cls
        return prop_cls
    return do_register


def get_all_registered_operators():
    """Names of every registered operator (built-in and custom)."""
    from .ops.registry import all_ops
    return sorted(set(all_ops()) | set(CUSTOM_PROPS))

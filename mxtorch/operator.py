"""``mx.operator``: operators written in Python.

``CustomOp`` / ``CustomOpProp`` with :func:`register` (run by the ``Custom`` operator),
the legacy ``NumpyOp`` and ``NDArrayOp`` (the ``_Native`` and ``_NDArray`` operators),
and the registry queries :func:`get_all_registered_operators` and
:func:`get_operator_arguments`. Like MXNet's module, it has no ``__all__``: ``from
mxnet.operator import *`` also gives the helpers it imports (``symbol``, ``context``,
``NDArray``, the ctypes helpers).
"""
from __future__ import annotations

import collections
import ctypes  # noqa: F401 - MXNet's module exports it (tests cast monitor handles with it)
import warnings

import numpy as _np

from . import context, symbol  # noqa: F401 - MXNet's module exports them
from .base import (MXCallbackList, MXNetError, NDArrayHandle, OpHandle, c_array,  # noqa: F401
                   c_array_buf, c_str, check_call, ctypes2numpy_shared, mx_float, mx_int,
                   mx_uint, py_str)
from .ndarray import NDArray  # noqa: F401 - MXNet's module exports it
from .ops import registry as _registry
from .ops.custom import CUSTOM_PROPS as _CUSTOM_PROPS
from .ops.custom import add_python_op as _add_python_op
from .ops.params import REQUIRED as _REQUIRED
from .util import is_np_array

_DEFAULT_STYPE = "default"
_UNDEFINED_STYPE = "undefined"


# ---------------------------------------------------------------------- legacy operators
class PythonOp:
    """Base class for operators implemented in Python (deprecated: use CustomOp).

    Parameters
    ----------
    need_top_grad : bool
        the default need_top_grad() function returns this value.
    """

    _ref_holder: list = []

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        warnings.warn("PythonOp has been deprecated. Please use CustomOp")

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """Create a symbol from this operator (defined by NumpyOp and NDArrayOp)."""
        raise NotImplementedError("Must override this")

    def forward(self, in_data, out_data):
        """Forward interface: the default copies the first input to the first output."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Backward interface: the default sets the first input's gradient to ones."""
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        """Return ``(in_shapes, out_shapes)``; the default: one output like input 0."""
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        """Names of the outputs."""
        return ["output"]

    def list_arguments(self):
        """Names of the inputs."""
        return ["data"]

    def need_top_grad(self):
        """Whether backward needs the gradient of the outputs (False for loss layers)."""
        return self.need_top_grad_

    def _register(self) -> str:
        PythonOp._ref_holder.append(self)
        self.info_ = _add_python_op(self)
        return self.info_


class NumpyOp(PythonOp):
    """Base class for operators computed on NumPy arrays (deprecated: use CustomOp).

    ``forward(in_data, out_data)`` and ``backward(out_grad, in_data, out_data, in_grad)``
    receive NumPy arrays and write the outputs in place.
    """

    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        warnings.warn("NumpyOp has been deprecated. Please use CustomOp")

    def get_symbol(self, *args, **kwargs):
        """Create the ``_Native`` symbol that runs this operator on ``args``."""
        return symbol._internal._Native(*args, info=self._register(),
                                        need_top_grad=self.need_top_grad(), **kwargs)


class NDArrayOp(PythonOp):
    """Base class for operators computed on NDArrays (deprecated: use CustomOp).

    ``forward(in_data, out_data)`` and ``backward(out_grad, in_data, out_data, in_grad)``
    receive NDArrays and write the outputs in place.
    """

    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        warnings.warn("NDArrayOp has been deprecated. Please use CustomOp")

    def get_symbol(self, *args, **kwargs):
        """Create the ``_NDArray`` symbol that runs this operator on ``args``."""
        return symbol._internal._NDArray(*args, info=self._register(), **kwargs)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the blobs backward needs (out_grad only when need_top_grad())."""
        deps = []
        if self.need_top_grad():
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps


# ---------------------------------------------------------------------- custom operators
class CustomOp:
    """Base class for the computation of a custom operator."""

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute ``out_data`` from ``in_data`` (write with :meth:`assign`). The base
        computes nothing: the outputs stay zero."""

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute ``in_grad`` from ``out_grad`` (write with :meth:`assign`). The base
        computes nothing: the gradients stay zero."""

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` according to ``req`` (write/inplace/add/null)."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            if is_np_array():
                dst[()] = src
            else:
                dst[:] = src
        elif req == "add":
            if is_np_array():
                dst[()] += src
            else:
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
        """Return ``(in_shapes, out_shapes, aux_shapes)``; the default: every output
        like input 0, no auxiliary states."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """Return ``(in_types, out_types, aux_types)``; the default: input 0's type."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        """Return ``(in_stypes, out_stypes, aux_stypes)``; the default accepts dense
        inputs only and makes every output and auxiliary state dense."""
        for i, stype in enumerate(in_stype):
            if stype != _DEFAULT_STYPE:
                raise MXNetError(
                    "Default infer_storage_type implementation doesnt allow non default "
                    f"stypes: found non default stype '{stype}' for in_stype[{i}]. Please "
                    "implement infer_storage_type and infer_storage_type_backward "
                    "interface in your custom operator if you have non-default "
                    "input/output stypes")
        return (in_stype, [_DEFAULT_STYPE] * len(self.list_outputs()),
                [_DEFAULT_STYPE] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        """Return the storage types of the backward pass: ``(ograd, in, out, igrad,
        aux)`` stypes. The default accepts dense output gradients only and makes every
        list dense (an undefined input gradient stype counts as dense)."""
        for what, stypes in (("ograd_stype", ograd_stype), ("igrad_stype", igrad_stype)):
            for i, stype in enumerate(stypes):
                if stype not in (_DEFAULT_STYPE,) + \
                        ((_UNDEFINED_STYPE,) if what == "igrad_stype" else ()):
                    raise MXNetError(
                        "Default infer_storage_type_backward implementation doesnt allow "
                        f"non default stypes: found non default stype '{stype}' for "
                        f"{what}[{i}]. Please implement infer_storage_type and "
                        "infer_storage_type_backward interface in your custom operator "
                        "if you have non-default gradient stypes")
        lists = [ograd_stype, in_stype, out_stype, igrad_stype, aux_stype]
        for stypes in lists:
            stypes[:] = [_DEFAULT_STYPE] * len(stypes)
        return tuple(lists)

    def list_outputs(self):
        """Names of the outputs."""
        return ["output"]

    def list_arguments(self):
        """Names of the arguments."""
        return ["data"]

    def list_auxiliary_states(self):
        """Names of the auxiliary states."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the blobs backward needs (out_grad only when need_top_grad)."""
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """Create the CustomOp that computes for these input shapes and dtypes."""
        return CustomOp()


def register(reg_name: str):
    """Register a CustomOpProp subclass under ``reg_name`` (use as a decorator)."""
    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise MXNetError("mx.operator.register expects a CustomOpProp subclass")
        _CUSTOM_PROPS[reg_name] = prop_cls
        return prop_cls
    return do_register


register("custom_op")(CustomOpProp)   # MXNet registers the base class under this name


# ---------------------------------------------------------------------- the registry
def get_all_registered_operators():
    """Get all registered MXNet operator names (aliases included).

    Returns
    -------
    operator_names : list of string
    """
    return sorted(_registry.all_ops())


OperatorArguments = collections.namedtuple("OperatorArguments", ["narg", "names", "types"])

# MXNet's dtype enumeration, for dtype attributes whose choices the definition leaves open
_DTYPES = ("bfloat16", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")


def get_operator_arguments(op_name):
    """Given operator name, fetch operator arguments - number of arguments,
    argument names, argument types.

    Parameters
    ----------
    op_name: str
        Handle for the operator

    Returns
    -------
    operator_arguments : OperatorArguments, namedtuple with number of arguments, names and types
    """
    opdef = _registry.find(op_name)
    if opdef is None:
        raise MXNetError(f"Check failed: op != nullptr: Operator {op_name} is not registered")
    names, types = _input_arguments(opdef)
    for name, param in opdef.params.items():
        names.append(name)
        types.append(_type_string(param))
    return OperatorArguments(len(names), names, types)


def _input_arguments(opdef) -> tuple[list, list]:
    """The array arguments MXNet lists first: every input the operator can take (with
    the attribute defaults), or one list argument where their number varies."""
    if opdef.key_var_num_args:
        return ["data"], ["NDArray-or-Symbol[]"]
    if opdef.static_inputs is not None:
        names = list(opdef.static_inputs)
    else:
        loose = opdef.Attrs(**{n: (None if p.default is _REQUIRED else p.default)
                               for n, p in opdef.params.items()},
                            **({"extra": ()} if opdef.allow_extra else {}))
        try:
            names = list(opdef.input_names(loose))
        except Exception:  # noqa: BLE001 - the inputs depend on a required attribute
            return ["data"], ["NDArray-or-Symbol[]"]
    return names, ["NDArray-or-Symbol"] * len(names)


def _type_string(param) -> str:
    """An attribute's type as MXNet's parameter documentation prints it, e.g.
    ``"{'relu', 'tanh'}, required"`` or ``"float, optional, default=0.5"``."""
    kind, default = param.type_name, param.default
    choices = param.choices
    if kind in ("dtype", "dtype or None"):
        kind, choices = "enum", _DTYPES
        if param.type_name == "dtype or None":
            default = "None" if default is None else default
    if kind == "enum":
        names = [f"'{c}'" for c in sorted(c for c in choices if c is not None)]
        if default is None or default == "None":
            names.insert(0, "None")
            default = "None"
        body = "{" + ", ".join(names) + "}"
        return f"{body}, required" if default is _REQUIRED else \
            f"{body},optional, default='{default}'"
    kind = {"any": "string", "tuple of float": "tuple of <float>"}.get(kind, kind)
    if default is _REQUIRED:
        return f"{kind}, required"
    return f"{kind}, optional, default={_default_string(kind, default)}"


def _default_string(kind: str, value) -> str:
    """A default value as MXNet prints it (ints quoted, floats with float precision,
    booleans as 0/1, shapes as [a,b])."""
    if value is None:
        return "'None'" if kind == "int or None" else "None"
    if isinstance(value, bool):
        return str(int(value))
    if kind in ("int", "int or None"):
        return f"'{value}'"
    if isinstance(value, float):
        return _float_string(value)
    if isinstance(value, (tuple, list)):
        return "[" + ",".join(_float_string(v) if isinstance(v, float) else str(v)
                              for v in value) + "]"
    if kind == "string":
        return f"'{value}'"
    return str(value)


def _float_string(value: float) -> str:
    """A float attribute's default as MXNet prints its float32 value (0.9 ->
    0.899999976)."""
    return format(float(_np.float32(value)), ".9g")

"""Typed operator attributes: parsed from Python values and from MXNet's JSON strings.

Each parser accepts what MXNet's C++ parameter parser accepts (see MXNET_FORMATS.md
2.4): tuples as ``"(3, 3)"``, ``"[3,3]"`` or a bare ``"3"``; booleans as
``True/False/true/false/1/0``; optional values as ``"None"``; enums by name.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..base import MXNetError, dtype_name, dtype_np

__all__ = ["Param", "REQUIRED", "Int", "Float", "Bool", "Str", "Enum", "Shape", "IntOrShape",
           "OptInt", "OptFloat", "OptBool", "OptShape", "Dtype", "OptDtype", "Any_",
           "FloatOrShape", "OptFloatTuple"]


class _Required:
    def __repr__(self):
        return "REQUIRED"


REQUIRED = _Required()


class _AttrError(ValueError):
    pass


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError) as err:
        raise _AttrError(f"cannot parse {text!r}") from err


def _to_int(value: Any) -> int:
    if isinstance(value, str):
        value = _literal(value)
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    raise _AttrError(f"expected an integer, got {value!r}")


def _to_float(value: Any) -> float:
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("inf", "+inf", "infinity"):
            return float("inf")
        if text in ("-inf", "-infinity"):
            return float("-inf")
        if text == "nan":
            return float("nan")
        value = _literal(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    raise _AttrError(f"expected a number, got {value!r}")


def _to_bool(value: Any) -> bool:
    if isinstance(value, str):
        text = value.strip()
        if text in ("True", "true", "1"):
            return True
        if text in ("False", "false", "0"):
            return False
        raise _AttrError(f"expected a boolean, got {value!r}")
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return bool(value)
    raise _AttrError(f"expected a boolean, got {value!r}")


def _to_shape(value: Any, allow_none: bool = True) -> tuple:
    if isinstance(value, str):
        value = _literal(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            if v is None and allow_none:
                out.append(None)
            elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                out.append(int(v))
            elif isinstance(v, (float, np.floating)) and float(v).is_integer():
                out.append(int(v))
            else:
                raise _AttrError(f"expected a tuple of integers, got {value!r}")
        return tuple(out)
    raise _AttrError(f"expected a tuple of integers, got {value!r}")


def _to_float_tuple(value: Any) -> tuple:
    if isinstance(value, str):
        value = _literal(value)
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return (float(value),)
    if isinstance(value, (tuple, list)):
        return tuple(float(v) for v in value)
    raise _AttrError(f"expected a tuple of numbers, got {value!r}")


def _is_none(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "None")


@dataclass(frozen=True)
class Param:
    """One typed attribute of an operator."""

    name: str
    parse: Callable[[Any], Any]
    default: Any = REQUIRED
    doc: str = ""
    type_name: str = ""
    choices: tuple = field(default=())

    def convert(self, op_name: str, value: Any) -> Any:
        try:
            return self.parse(value)
        except (_AttrError, TypeError, ValueError) as err:
            extra = f" (expected one of {list(self.choices)})" if self.choices else ""
            raise MXNetError(f"Invalid value {value!r} for attribute '{self.name}' of operator "
                             f"{op_name}: {err}{extra}") from None


def _optional(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def parse_opt(value: Any) -> Any:
        return None if _is_none(value) else parse(value)
    return parse_opt


def Int(name: str, default: Any = REQUIRED, doc: str = "") -> Param:
    return Param(name, _to_int, default, doc, "int")


def Float(name: str, default: Any = REQUIRED, doc: str = "") -> Param:
    return Param(name, _to_float, default, doc, "float")


def Bool(name: str, default: Any = REQUIRED, doc: str = "") -> Param:
    return Param(name, _to_bool, default, doc, "boolean")


def Str(name: str, default: Any = REQUIRED, doc: str = "") -> Param:
    return Param(name, lambda v: v if isinstance(v, str) else str(v), default, doc, "string")


def Any_(name: str, default: Any = REQUIRED, doc: str = "") -> Param:
    """An attribute kept as given (strings are literal-evaluated when possible)."""
    def parse(value: Any) -> Any:
        if isinstance(value, str):
            try:
                return ast.literal_eval(value)
            except (ValueError, SyntaxError):
                return value
        return value
    return Param(name, parse, default, doc, "any")


def Enum(name: str, choices: tuple, default: Any = REQUIRED, doc: str = "",
         optional: bool = False) -> Param:
    def parse(value: Any) -> Any:
        if optional and _is_none(value):
            return None
        text = value.strip() if isinstance(value, str) else value
        if text not in choices:
            raise _AttrError(f"{value!r} is not a valid choice")
        return text
    return Param(name, parse, default, doc, "enum", tuple(choices))


def Shape(name: str, default: Any = REQUIRED, doc: str = "") -> Param:
    return Param(name, _to_shape, default, doc, "Shape(tuple)")


def IntOrShape(name: str, default: Any = REQUIRED, doc: str = "") -> Param:
    """An int or a tuple of ints (e.g. reduce ``axis``); kept as given (int or tuple)."""
    def parse(value: Any) -> Any:
        if isinstance(value, str):
            value = _literal(value)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
        return _to_shape(value)
    return Param(name, _optional(parse), default, doc, "Shape or None")


def FloatOrShape(name: str, default: Any = REQUIRED, doc: str = "") -> Param:
    return Param(name, _to_float_tuple, default, doc, "tuple of float")


def OptFloatTuple(name: str, default: Any = None, doc: str = "") -> Param:
    """A tuple of floats or None (``"None"`` in JSON), e.g. histogram's ``range``."""
    return Param(name, _optional(_to_float_tuple), default, doc, "tuple of float or None")


def OptInt(name: str, default: Any = None, doc: str = "") -> Param:
    return Param(name, _optional(_to_int), default, doc, "int or None")


def OptFloat(name: str, default: Any = None, doc: str = "") -> Param:
    return Param(name, _optional(_to_float), default, doc, "float or None")


def OptBool(name: str, default: Any = None, doc: str = "") -> Param:
    return Param(name, _optional(_to_bool), default, doc, "boolean or None")


def OptShape(name: str, default: Any = None, doc: str = "") -> Param:
    return Param(name, _optional(_to_shape), default, doc, "Shape or None")


def _to_dtype_name(value: Any) -> str:
    try:
        return dtype_name(dtype_np(value))
    except (MXNetError, TypeError) as err:
        raise _AttrError(str(err)) from None


def _dtype_parser(choices: tuple) -> Callable[[Any], str]:
    """Parse a dtype given as a name, a NumPy type or dtype, or a type flag; when
    ``choices`` is given, the name must be one of them (MXNet's dtype enums)."""
    if not choices:
        return _to_dtype_name

    def parse(value: Any) -> str:
        name = _to_dtype_name(value)
        if name not in choices:
            raise _AttrError(f"dtype '{name}' is not supported")
        return name
    return parse


def Dtype(name: str = "dtype", default: Any = "float32", doc: str = "",
          choices: tuple = ()) -> Param:
    """A dtype attribute, normalized to its NumPy name ('float32', 'int64', 'bfloat16').

    ``np.float32``, ``np.dtype('float32')``, ``'float32'`` and MXNet's type flag all parse;
    ``choices`` restricts it to the dtypes the operator supports.
    """
    return Param(name, _dtype_parser(tuple(choices)), default, doc, "dtype", tuple(choices))


def OptDtype(name: str = "dtype", default: Any = None, doc: str = "",
             choices: tuple = ()) -> Param:
    """A :func:`Dtype` attribute that may be ``None``."""
    return Param(name, _optional(_dtype_parser(tuple(choices))), default, doc, "dtype or None",
                 tuple(choices))

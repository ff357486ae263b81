"""Typed operator attributes: parsed from Python values and from MXNet's JSON strings.

Each parser accepts what MXNet's C++ parameter parser accepts (see MXNET_FORMATS.md
2.4): tuples as ``"(3, 3)"``, ``"[3,3]"`` or a bare ``"3"``; booleans as
``True/False/true/false/1/0``; optional values as ``"None"``; enums by name.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..base import MXNetError, attr_to_str, dtype_name, dtype_np

__all__ = ["Param", "REQUIRED", "Int", "Float", "Bool", "Str", "Enum", "Shape", "IntOrShape",
           "OptInt", "OptFloat", "OptBool", "OptShape", "Dtype", "OptDtype", "Any_",
           "FloatOrShape", "OptFloatTuple"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()


class _AttrError(ValueError):
    """A value the attribute's type cannot parse (MXNet's "Invalid Parameter format")."""


class _ValueError(_AttrError):
    """A value refused with its own message: ``describe(name, text)`` writes it."""

    def __init__(self, describe: Callable[[str, str], str]):
        super().__init__()
        self.describe = describe


# MXNet: C++ ``int`` attributes (index_t too: 1.9.1 builds without 64-bit indices)
_INT32 = (-2 ** 31, 2 ** 31 - 1)
_INT64 = (-2 ** 63, 2 ** 64 - 1)   # int64_t and uint64_t fields (``workspace``)
_INT_TEXT = re.compile(r"\s*[+-]?\d+\s*\Z")
_FLOAT_TEXT = re.compile(r"\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf(inity)?|nan)",
                         re.IGNORECASE)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError) as err:
        raise _AttrError(f"cannot parse {text!r}") from err


def _int_parser(limits: tuple[int, int]) -> Callable[[Any], int]:
    """MXNet's integer parse: decimal digits only (no ``4.0``, ``1e3``, ``True``), in range."""
    def parse(value: Any) -> int:
        if isinstance(value, str):
            if len(value) > 64 or not _INT_TEXT.match(value):
                raise _AttrError()
            number = int(value)
        elif isinstance(value, (int, np.integer, bool, np.bool_)):
            number = int(value)
        elif isinstance(value, (float, np.floating)) and float(value).is_integer():
            # MXNet: str(4.0) and str(True) fail its parser; here a Python 4.0 or True is
            # taken as 4 or 1, since attribute sets are cached by value (4.0 == 4 == ...)
            number = int(value)
        else:
            raise _AttrError()
        if not limits[0] <= number <= limits[1]:
            raise _AttrError()
        return number
    return parse


_to_int = _int_parser(_INT32)


def _to_float(value: Any) -> float:
    if isinstance(value, str):
        match = _FLOAT_TEXT.match(value)
        if match is None:
            raise _AttrError()
        rest = value[match.end():].strip()
        if rest:
            raise _ValueError(lambda name, text: "Some trailing characters could not be "
                              f"parsed: '{rest}'")
        out = float(match.group(0))
        if out in (float("inf"), float("-inf")) and "inf" not in value.lower():
            raise _ValueError(lambda name, text: f"Out of range value for {name}, "
                              f"value='{text}'")
        return out
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    raise _AttrError()


def _to_bool(value: Any) -> bool:
    if isinstance(value, str):
        text = value.strip()
        if text in ("True", "true", "1"):
            return True
        if text in ("False", "false", "0"):
            return False
        raise _AttrError(f"expected a boolean, got {value!r}")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise _AttrError()


def _to_shape(value: Any, allow_none: bool = True) -> tuple[int | None, ...]:
    if isinstance(value, str):
        value = _literal(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (tuple, list)):
        out: list[int | None] = []
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


def _to_float_tuple(value: Any) -> tuple[float, ...]:
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
    """One typed attribute of an operator.

    ``lower``/``upper`` are MXNet's bounds on the value (``set_lower_bound``,
    ``set_range``), checked after parsing; None is no bound.
    """

    name: str
    parse: Callable[[Any], Any]
    default: Any = REQUIRED
    doc: str = ""
    type_name: str = ""
    choices: tuple[str, ...] = field(default=())
    lower: Any = None
    upper: Any = None

    def convert(self, op_name: str, value: Any) -> Any:
        """Parse ``value`` (a Python value or MXNet's string), refusing as MXNet does."""
        if isinstance(value, np.ndarray):
            # MXNet: the front end passes str(value): a 0-d array reads as its element
            # ('20', 'True'), a one-element array as a tuple ('[3]'); several elements
            # print without commas ('[ 1  2  9 10]'), which MXNet's parser refuses
            value = str(value)
        try:
            out = self.parse(value)
        except (_AttrError, TypeError, ValueError, OverflowError) as err:
            raise MXNetError(f"{self._refusal(err, value)}, in operator {op_name}") from None
        if out is not None and (self.lower is not None or self.upper is not None):
            self._check_bounds(op_name, out)
        return out

    def _refusal(self, err: Exception, value: Any) -> str:
        text = attr_to_str(value)
        if isinstance(err, _ValueError):
            return err.describe(self.name, text)
        if self.choices and self.type_name == "enum":
            valid = ", ".join(f"'{c}'" for c in sorted(self.choices))
            return f"Invalid Input: '{text}' for {self.name}, valid values are: {{{valid}}}"
        return (f"Invalid Parameter format for {self.name} expect {self.type_name} but "
                f"value='{text}'")

    def _check_bounds(self, op_name: str, out: Any) -> None:
        lo, hi = self.lower, self.upper
        if not ((lo is not None and out < lo) or (hi is not None and out > hi)):
            return   # MXNet: NaN passes (no comparison fails)
        if lo is not None and hi is not None:
            why = f"exceed bound [{_num(lo)},{_num(hi)}]"
        elif lo is not None:
            why = f"should be greater equal to {_num(lo)}"
        else:
            why = f"should be less equal to {_num(hi)}"
        doc = f"\n{self.name}: {self.doc}" if self.doc else ""
        raise MXNetError(f"value {_num(out)} for Parameter {self.name} {why}{doc}, in "
                         f"operator {op_name}")


def _num(value: Any) -> str:
    """A bound or value as C++ streams print it (1.0 as 1)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _optional(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def parse_opt(value: Any) -> Any:
        return None if _is_none(value) else parse(value)
    return parse_opt


def Int(name: str, default: Any = REQUIRED, doc: str = "", lower: int | None = None,
        upper: int | None = None, wide: bool = False) -> Param:
    """A C++ ``int`` attribute (``wide``: int64_t/uint64_t), with MXNet's bounds."""
    return Param(name, _int_parser(_INT64 if wide else _INT32), default, doc, "int",
                 lower=lower, upper=upper)


def Float(name: str, default: Any = REQUIRED, doc: str = "", lower: float | None = None,
          upper: float | None = None) -> Param:
    """A float attribute, with MXNet's bounds (``set_range(lower, upper)``)."""
    return Param(name, _to_float, default, doc, "float", lower=lower, upper=upper)


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


def Enum(name: str, choices: Sequence[str], default: Any = REQUIRED, doc: str = "",
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


def _dtype_parser(choices: tuple[str, ...]) -> Callable[[Any], str]:
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
          choices: Sequence[str] = ()) -> Param:
    """A dtype attribute, normalized to its NumPy name ('float32', 'int64', 'bfloat16').

    ``np.float32``, ``np.dtype('float32')``, ``'float32'`` and MXNet's type flag all parse;
    ``choices`` restricts it to the dtypes the operator supports.
    """
    return Param(name, _dtype_parser(tuple(choices)), default, doc, "dtype", tuple(choices))


def OptDtype(name: str = "dtype", default: Any = None, doc: str = "",
             choices: Sequence[str] = ()) -> Param:
    """A :func:`Dtype` attribute that may be ``None``."""
    return Param(name, _optional(_dtype_parser(tuple(choices))), default, doc, "dtype or None",
                 tuple(choices))

"""Reading JSON text for MXNet's formats: strict numbers, any nesting depth, clear errors.

``json.loads`` recurses in C and raises RecursionError past about 1000 levels; legitimate
symbol JSON nests deeper (each ``_foreach`` level adds four), so a document too deep for it
is read again by an iterative parser that builds the same Python values.
"""
from __future__ import annotations

import json
import math
import re
from json.decoder import scanstring  # type: ignore[attr-defined]  # C accelerated, untyped in typeshed
from typing import Any

from ..base import MXNetError

__all__ = ["read_json"]

_MAX_INT_DIGITS = 20        # MXNet reads integers into 64-bit fields at most
_TOKEN = re.compile(r'[ \t\n\r]*(?:([\[\]{}:,"])|(-?(?:0|[1-9][0-9]*)(\.[0-9]+)?'
                    r'([eE][-+]?[0-9]+)?)|(true|false|null|NaN|-?Infinity))')
_WORDS = {"true": True, "false": False, "null": None}
_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _COLON, _NEXT = range(6)


class _BadNumber(ValueError):
    pass


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise _BadNumber(f"integer of {len(text)} digits is out of range")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadNumber(f"number {text} is out of range")
    return value


def _parse_constant(text: str) -> Any:
    raise _BadNumber(f"{text} is not a JSON number")


_DECODER = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float,
                            parse_constant=_parse_constant)


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line} column {col}"


def read_json(text: str, what: str = "JSON") -> Any:
    """Parse one JSON value from ``text`` (MXNet: text after it is ignored).

    NaN, Infinity, numbers that overflow a double and integers longer than 20 digits are
    refused; every failure is an :class:`MXNetError` naming ``what`` and the position.
    """
    start = len(text) - len(text.lstrip(" \t\n\r"))
    try:
        try:
            return _DECODER.raw_decode(text, start)[0]
        except RecursionError:
            return _parse_iterative(text, start)
    except json.JSONDecodeError as err:
        raise MXNetError(f"{what} is malformed: {err.msg} at "
                         f"{_where(text, err.pos)}") from None
    except (_BadNumber, ValueError) as err:
        raise MXNetError(f"{what} is malformed: {err}") from None


def _scalar(text: str, m: re.Match[str]) -> Any:
    """The value of a number, literal or string token."""
    if m.group(1) == '"':
        return scanstring(text, m.end())
    if m.group(2) is not None:
        num = m.group(2)
        value = _parse_int(num) if m.group(3) is None and m.group(4) is None \
            else _parse_float(num)
        return value, m.end()
    word = m.group(5)
    if word in _WORDS:
        return _WORDS[word], m.end()
    return _parse_constant(word), m.end()


def _parse_iterative(text: str, pos: int) -> Any:
    """The JSON value at ``pos``, parsed with an explicit stack instead of recursion."""
    stack: list[list[Any]] = []     # [container, pending key]
    mode = _VALUE
    while True:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise json.JSONDecodeError("Expecting value", text, pos)
        punct = m.group(1)
        at = pos + len(m.group(0)) - len(m.group(0).lstrip(" \t\n\r"))   # the token
        pos = m.end()
        if mode in (_VALUE, _VALUE_OR_CLOSE):
            if punct == "]" and mode == _VALUE_OR_CLOSE:
                value = stack.pop()[0]
            elif punct in ("[", "{"):
                stack.append([[] if punct == "[" else {}, None])
                mode = _VALUE_OR_CLOSE if punct == "[" else _KEY_OR_CLOSE
                continue
            elif punct is None or punct == '"':
                value, pos = _scalar(text, m)
            else:
                raise json.JSONDecodeError("Expecting value", text, at)
        elif mode in (_KEY, _KEY_OR_CLOSE):
            if punct == "}" and mode == _KEY_OR_CLOSE:
                value = stack.pop()[0]
            elif punct == '"':
                stack[-1][1], pos = scanstring(text, pos)
                mode = _COLON
                continue
            else:
                raise json.JSONDecodeError("Expecting property name enclosed in double "
                                           "quotes", text, at)
        elif mode == _COLON:
            if punct != ":":
                raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
            mode = _VALUE
            continue
        else:   # _NEXT: after an item
            is_list = isinstance(stack[-1][0], list)
            if punct == ",":
                mode = _VALUE if is_list else _KEY
                continue
            if punct != ("]" if is_list else "}"):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
            value = stack.pop()[0]
        if not stack:
            return value
        container, key = stack[-1]
        if isinstance(container, list):
            container.append(value)
        else:
            container[key] = value
        mode = _NEXT

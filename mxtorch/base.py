"""Errors, dtype tables and attribute-string helpers shared by every layer.

NumPy and the standard library only: this module never imports torch.
"""
from __future__ import annotations

import ast
from typing import Any

import numpy as np

__all__ = ["MXNetError", "NotSupportedForSparseNDArray", "string_types", "numeric_types",
           "integer_types", "mx_real_t", "dtype_np", "dtype_name", "DTYPE_NP_TO_MX",
           "DTYPE_MX_TO_NP", "attr_to_str", "parse_attr_value", "py_str"]


class MXNetError(RuntimeError):
    """Error raised by mxtorch where MXNet raises ``mxnet.base.MXNetError``."""


class NotSupportedForSparseNDArray(MXNetError):
    """Raised for operations that sparse arrays do not support."""


string_types = (str,)
numeric_types = (float, int, np.generic)
integer_types = (int, np.integer)
mx_real_t = np.float32
py_str = str

# MXNet's type flags (mshadow's enum), as stored in files and `__dtype__` attributes.
_BFLOAT16 = np.dtype([("bfloat16", np.uint16)])
DTYPE_MX_TO_NP: dict[int, np.dtype] = {
    0: np.dtype(np.float32), 1: np.dtype(np.float64), 2: np.dtype(np.float16),
    3: np.dtype(np.uint8), 4: np.dtype(np.int32), 5: np.dtype(np.int8),
    6: np.dtype(np.int64), 7: np.dtype(np.bool_), 8: np.dtype(np.int16),
    9: np.dtype(np.uint16), 10: np.dtype(np.uint32), 11: np.dtype(np.uint64),
    12: _BFLOAT16,
}
DTYPE_NP_TO_MX: dict[np.dtype, int] = {v: k for k, v in DTYPE_MX_TO_NP.items()}

_DTYPE_ALIASES = {"bfloat16": _BFLOAT16, "bool": np.dtype(np.bool_)}


def dtype_np(dtype: Any) -> np.dtype:
    """Normalize a dtype given as a NumPy type, a name, a type flag or a torch dtype."""
    if dtype is None:
        return np.dtype(np.float32)
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, str) and dtype in _DTYPE_ALIASES:
        return _DTYPE_ALIASES[dtype]
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        if int(dtype) not in DTYPE_MX_TO_NP:
            raise MXNetError(f"unknown MXNet type flag {dtype}")
        return DTYPE_MX_TO_NP[int(dtype)]
    torch_name = getattr(dtype, "is_floating_point", None)
    if torch_name is not None:  # a torch.dtype, compared by name to keep torch out of here
        name = str(dtype).replace("torch.", "")
        return _DTYPE_ALIASES.get(name) or np.dtype(name)
    try:
        return np.dtype(dtype)
    except TypeError as err:
        raise MXNetError(f"unknown dtype {dtype!r}") from err


def dtype_name(dtype: Any) -> str:
    """The name MXNet prints and stores for a dtype ('float32', 'bfloat16', ...)."""
    dt = dtype_np(dtype)
    if dt == _BFLOAT16:
        return "bfloat16"
    return dt.name


def attr_to_str(value: Any) -> str:
    """Render an attribute value the way MXNet's Python front end does (``str(value)``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return dtype_name(value)
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


def parse_attr_value(text: str) -> Any:
    """Best-effort parse of an attribute string into a Python literal (tuples, numbers, None)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text

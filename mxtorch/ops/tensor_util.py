"""dtype tables between NumPy and torch, and small tensor helpers the operators share."""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import torch

from ..base import MXNetError, dtype_name, dtype_np

__all__ = ["np_to_torch_dtype", "torch_to_np_dtype", "torch_to_np_name", "torch_dtype",
           "unshared"]

_NP_TO_TORCH: dict[np.dtype[Any], torch.dtype] = {
    np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
    np.dtype(np.float16): torch.float16, np.dtype(np.uint8): torch.uint8,
    np.dtype(np.int32): torch.int32, np.dtype(np.int8): torch.int8,
    np.dtype(np.int64): torch.int64, np.dtype(np.bool_): torch.bool,
    np.dtype(np.int16): torch.int16, np.dtype(np.uint16): torch.uint16,
    np.dtype(np.uint32): torch.uint32, np.dtype(np.uint64): torch.uint64,
    dtype_np("bfloat16"): torch.bfloat16,
}
_TORCH_TO_NP = {v: k for k, v in _NP_TO_TORCH.items()}
_TORCH_TO_NAME = {v: dtype_name(k) for k, v in _NP_TO_TORCH.items()}
_NAME_TO_TORCH = {dtype_name(k): v for k, v in _NP_TO_TORCH.items()}


def np_to_torch_dtype(dtype: Any) -> torch.dtype:
    dt = dtype_np(dtype)
    try:
        return _NP_TO_TORCH[dt]
    except KeyError:
        raise MXNetError(f"dtype {dt} is not supported") from None


def torch_dtype(dtype: Any) -> torch.dtype:
    """Any dtype spelling (name, NumPy type, torch dtype, None=float32) -> torch dtype."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str):
        t = _NAME_TO_TORCH.get(dtype)
        if t is not None:
            return t
    return np_to_torch_dtype(dtype)


def torch_to_np_dtype(dtype: torch.dtype) -> np.dtype[Any]:
    return _TORCH_TO_NP[dtype]


def torch_to_np_name(dtype: torch.dtype) -> str:
    return _TORCH_TO_NAME[dtype]


def unshared(res: torch.Tensor, tensors: Iterable[torch.Tensor]) -> torch.Tensor:
    """``res``, or a copy of it when it is a view of (or is) one of ``tensors``.

    MXNet operators return new arrays: a result that is a view of an input (torch's
    reshape, transpose, narrow, split, expand ...) or an input itself is copied, so
    writing into it never changes the input. Only NDArray's own ``reshape`` and basic
    indexing share memory, as in MXNet."""
    if res._is_view():
        ptr = res.untyped_storage().data_ptr()
        for t in tensors:
            if t.untyped_storage().data_ptr() == ptr:
                return res.clone(memory_format=torch.contiguous_format)
        return res
    for t in tensors:   # a plain loop: this runs for every imperative operator call
        if t is res:
            return res.clone(memory_format=torch.contiguous_format)
    return res

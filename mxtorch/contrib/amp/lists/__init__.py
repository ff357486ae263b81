"""MXNet's AMP operator lists (which operators run in low precision, float32 or the widest
input type), restricted to the operators mxtorch's registry defines."""
from . import symbol_bf16, symbol_fp16

__all__ = ["symbol_fp16", "symbol_bf16"]

"""Multi-head attention products on interleaved projections (``_contrib_interleaved_*``).

The projections arrive as MXNet's transformer layers produce them: (seq_length, batch,
heads * {3 or 2} * head_dim) with the query, key and value of each head next to each other.
The ``qk`` operators return the scaled scores (batch * heads, query length, key length); the
``valatt`` operators weight the values with attention of that shape and return
(seq_length, batch, heads * head_dim).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import torch

from ..base import MXNetError
from .params import Int
from .registry import OpDef, ShapeInfer, Shapes, register

__all__: list[str] = []


def _heads(op: str, x: torch.Tensor, heads: int, parts: int, which: int) -> torch.Tensor:
    """Projection ``which`` of ``parts`` interleaved ones: (batch * heads, length, head_dim)."""
    if x.dim() != 3:
        raise MXNetError(f"Operator {op}: the projections should be 3D in seq_length-batch-"
                         f"proj_dim, got shape {tuple(x.shape)}")
    length, batch, dim = x.shape
    if heads <= 0 or dim % (heads * parts):
        raise MXNetError(f"Operator {op}: the projection size {dim} does not divide into "
                         f"{heads} heads of {parts} interleaved projections")
    proj = x.reshape(length, batch, heads, parts, dim // (heads * parts))[:, :, :, which]
    return proj.permute(1, 2, 0, 3).reshape(batch * heads, length, -1)


def _scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """q k^T / sqrt(head_dim)."""
    return torch.matmul(q, k.transpose(1, 2)) * (1.0 / math.sqrt(q.shape[-1]))


def _weighted(op: str, att: torch.Tensor, v: torch.Tensor, heads: int) -> torch.Tensor:
    """attention @ values, back to (seq_length, batch, heads * head_dim)."""
    if att.dim() != 3 or att.shape[0] != v.shape[0] or att.shape[2] != v.shape[1]:
        raise MXNetError(f"Operator {op}: attention {tuple(att.shape)} does not match the "
                         f"values (batch * heads, length, head_dim) = {tuple(v.shape)}")
    out = torch.matmul(att, v)                              # (B * H, Lq, D)
    bh, length, dim = out.shape
    return out.reshape(bh // heads, heads, length, dim).permute(2, 0, 1, 3).reshape(
        length, bh // heads, heads * dim)


def _selfatt_qk(attrs: Any, qkv: torch.Tensor) -> torch.Tensor:
    op = "_contrib_interleaved_matmul_selfatt_qk"
    return _scores(_heads(op, qkv, attrs.heads, 3, 0), _heads(op, qkv, attrs.heads, 3, 1))


def _selfatt_valatt(attrs: Any, qkv: torch.Tensor, att: torch.Tensor) -> torch.Tensor:
    op = "_contrib_interleaved_matmul_selfatt_valatt"
    return _weighted(op, att, _heads(op, qkv, attrs.heads, 3, 2), attrs.heads)


def _encdec_qk(attrs: Any, queries: torch.Tensor, keys_values: torch.Tensor) -> torch.Tensor:
    op = "_contrib_interleaved_matmul_encdec_qk"
    return _scores(_heads(op, queries, attrs.heads, 1, 0),
                   _heads(op, keys_values, attrs.heads, 2, 0))


def _encdec_valatt(attrs: Any, keys_values: torch.Tensor, att: torch.Tensor) -> torch.Tensor:
    op = "_contrib_interleaved_matmul_encdec_valatt"
    return _weighted(op, att, _heads(op, keys_values, attrs.heads, 2, 1), attrs.heads)


def _qk_shape(q_index: int, k_index: int) -> Callable[[Any, Shapes], ShapeInfer]:
    """(batch * heads, query length, key length) from the projections' shapes."""
    def infer(attrs: Any, shapes: Shapes) -> ShapeInfer:
        q, k = shapes[q_index], shapes[k_index]
        if q is None or k is None or len(q) != 3 or len(k) != 3:
            return shapes, None
        return shapes, [(attrs.heads * q[1], q[0], k[0])]
    return infer


def _valatt_shape(parts: int) -> Callable[[Any, Shapes], ShapeInfer]:
    """(query length, batch, heads * head_dim) from the projections and attention."""
    def infer(attrs: Any, shapes: Shapes) -> ShapeInfer:
        kv, att = shapes
        if kv is None or len(kv) != 3:
            return shapes, None
        if att is None or len(att) != 3:
            return shapes, None
        return shapes, [(att[1], kv[1], kv[2] // parts)]
    return infer


_HEADS = [Int("heads", doc="Set number of heads")]
_DOC = "Multi-head attention on interleaved projections: {}.\n\nParameters\n----------\n{}\n" \
       "heads : int"

for _name, _fn, _inputs, _infer, _what in (
        ("selfatt_qk", _selfatt_qk, ("queries_keys_values",), _qk_shape(0, 0),
         "scores q k^T / sqrt(head_dim) of (seq, batch, heads * 3 * head_dim) projections"),
        ("selfatt_valatt", _selfatt_valatt, ("queries_keys_values", "attention"),
         _valatt_shape(3), "attention-weighted values of (seq, batch, heads * 3 * head_dim) "
                           "projections"),
        ("encdec_qk", _encdec_qk, ("queries", "keys_values"), _qk_shape(0, 1),
         "scores of (seq, batch, heads * head_dim) queries against (seq, batch, heads * 2 * "
         "head_dim) keys and values"),
        ("encdec_valatt", _encdec_valatt, ("keys_values", "attention"), _valatt_shape(2),
         "attention-weighted values of (seq, batch, heads * 2 * head_dim) keys and values")):
    register(OpDef(f"_contrib_interleaved_matmul_{_name}", _fn, inputs=_inputs, params=_HEADS,
                   infer_shape=_infer,
                   doc=_DOC.format(_what, "\n".join(f"{i} : NDArray" for i in _inputs))))

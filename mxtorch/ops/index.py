"""Indexing operators: take, Embedding, one_hot, gather_nd, scatter_nd, batch_take, Sequence*."""
from __future__ import annotations

"""Normalization operators: BatchNorm, LayerNorm, InstanceNorm, GroupNorm, L2Normalization, LRN."""
from __future__ import annotations

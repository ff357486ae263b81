"""Reduction and sorting operators: sum, mean, max, argmax, topk, sort, pick, norm, ..."""
from __future__ import annotations

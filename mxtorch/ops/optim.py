"""Optimizer update operators: sgd_update, adam_update, ..."""
from __future__ import annotations

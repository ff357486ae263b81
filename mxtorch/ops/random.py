"""Random sampling operators: random_*, sample_*, multinomial, shuffle."""
from __future__ import annotations

"""Creation and conversion operators: zeros, ones, full, arange, linspace, eye, cast, ..."""
from __future__ import annotations

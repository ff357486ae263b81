"""``mx.random``: seeding and the random sampling functions (``mx.random.uniform``...)."""
from __future__ import annotations

import torch

from .context import Context

__all__ = ["seed"]


def seed(seed_state: int, ctx="all") -> None:
    """Seed the random number generators.

    ``ctx='all'`` seeds every device; a context seeds only that device's generator (all
    CPU contexts share the one CPU generator).
    """
    if not isinstance(seed_state, int):
        raise ValueError("seed_state must be an integer")
    if ctx == "all":
        torch.manual_seed(seed_state)
        return
    ctx = ctx if isinstance(ctx, Context) else Context(ctx)
    if ctx.device_type == "gpu":
        with torch.cuda.device(ctx.device_id):
            torch.cuda.manual_seed(seed_state)
    else:
        torch.default_generator.manual_seed(seed_state)


def __getattr__(name):
    # mx.random.uniform / normal / ... are the same functions as mx.nd.random.*
    from .ndarray import random as _ndr
    try:
        return getattr(_ndr, name)
    except AttributeError:
        raise AttributeError(f"module 'mxtorch.random' has no attribute '{name}'") from None

"""``mx.random``: seeding and the random sampling functions (``mx.random.uniform``...)."""
from __future__ import annotations

import torch

from .context import Context

__all__ = ["seed"]

# MXNet: every process starts from the same random state (its resource manager seeds each
# device's generator from a fixed global seed at start-up), so a script that never calls
# mx.random.seed draws the same initial weights, dropout masks and samples in every run.
# torch's generators start from a fresh random seed instead; this fixes them at import.
_DEFAULT_SEED = 0


def _seed_default_state() -> None:
    """Seed torch's CPU generator and (lazily) every CUDA device's with MXNet's default."""
    torch.manual_seed(_DEFAULT_SEED)


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


_seed_default_state()

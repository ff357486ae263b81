"""``mx.npx.random``: the seed of MXNet's random generators."""
from ..random import seed  # noqa: F401

__all__ = ["seed"]

"""``mx.nd.random``: Python wrappers choosing between ``_random_*`` and ``_sample_*``."""
from __future__ import annotations


def install(namespace) -> None:
    """Add the scalar/array dispatching wrappers to the ``mx.nd.random`` namespace."""

"""Turn a block of operator names into the list of those the operator registry defines."""
from __future__ import annotations

from ....ops import registry


def names(block: str) -> list[str]:
    """The whitespace-separated names of ``block`` that are registered operators (or aliases)."""
    return [name for name in block.split() if registry.find(name) is not None]


def conditional(rows: list[tuple[str, str, list[str]]]) -> list[tuple[str, str, list[str]]]:
    """The ``(operator, attribute, values)`` rows whose operator is registered."""
    return [row for row in rows if registry.find(row[0]) is not None]

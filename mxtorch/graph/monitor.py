"""The backward half of executor monitoring: MXNet's executor calls a Monitor's callback on
the outputs of every backward node too (``<op>_backward_output``, or ``..._output<i>`` for
an operator with several inputs: the gradient of each input), in backward order."""
from __future__ import annotations

from typing import Callable

import torch

from .ir import Node

__all__ = ["BackwardTaps"]


class BackwardTaps:
    """Taps the gradient flowing into each input of each operator of a monitored forward."""

    def __init__(self) -> None:
        self._entries: list[tuple[Node, list]] = []

    def tap(self, node: Node, ins: list) -> list:
        """Inputs for ``node``: an alias with a gradient hook for each that requires grad."""
        if not any(t.requires_grad for t in ins):
            return ins
        held, out = [], []
        for t in ins:
            box: list = [None]
            if t.requires_grad:
                t = t.view_as(t)
                t.register_hook(lambda g, box=box: box.__setitem__(0, g))
            held.append((t, box))
            out.append(t)
        self._entries.append((node, held))
        return out

    def report(self, callback: Callable[[str, torch.Tensor], None]) -> None:
        """Call ``callback(name, gradient)`` for every tapped operator, last one first;
        an input that got no gradient (no gradient was asked for it) reports zeros."""
        for node, held in reversed(self._entries):
            aux = set(node.aux_positions())
            grads = [(t, box[0]) for i, (t, box) in enumerate(held) if i not in aux]
            for k, (t, g) in enumerate(grads):
                name = "output" if len(grads) == 1 else f"output{k}"
                callback(f"{node.name}_backward_{name}",
                         g if g is not None else torch.zeros_like(t))

"""Channels-last activations for the convolution layers of a compiled program on CPU.

MXNet's oneDNN build keeps convolution activations in oneDNN's own blocked layout from
one convolution to the next, for training as for inference, and reorders them back to
NCHW only where an operator needs it. The same is done here with torch's
``channels_last`` memory format: a 2-D convolution's output is made channels-last, the
operators that compute on any strides and keep the format (activations, pooling,
BatchNorm, elementwise sums, concatenation) pass it on, and everything else (Flatten,
FullyConnected, reshapes, the graph's outputs) receives a dense NCHW copy. Each
operator declares its part (``OpDef.channels_last``). Values are
unchanged: only the strides differ, and no tensor leaves the program channels-last
(gradients included: see ``Executor._hand_over`` and ``autograd.grad``).

torch's NCHW max pooling runs one window at a time (a 2x2 pooling of 64x20x24x24 takes
about 2 ms on two cores here); on channels-last input it vectorizes over the channels
and takes a quarter of a millisecond, and oneDNN's convolutions and their gradients
skip their internal reorders. Measured on whole training steps (hybridized, in one
process, alternating): LeNet b64 12% faster, mobilenet1.0 b8 19% faster, resnet18_v1
b8 and densenet121 b2 even, squeezenet1.0 b8 6% slower (its 3x3 expand layers' weight
gradients are slower channels-last).

The weights stay NCHW: oneDNN reorders them itself. Converting them too saved a
channels-last copy of every weight for the backward pass (resnet18: 45 MiB for the
whole step) and, measured again on resnet18_v1 and squeezenet1.0 b8 training steps (one
process, alternating), gained nothing: 640.7 ms with channels-last weights against
643.2 ms without, and 348.4 against 350.7 ms.
"""
from __future__ import annotations

from typing import Sequence

import torch

from .ir import Entry, Node

__all__ = ["channels_last_entries", "to_channels_last", "to_dense"]

_CL = torch.channels_last


def _key(e: Entry) -> tuple:
    return (id(e.node), e.index)


def _keeps(n: Node, role: str | None, cl: set) -> bool:
    """Whether ``n`` takes its channels-last data input as it is and gives output 0
    channels-last too (elementwise sums and concatenation only if every input has it)."""
    if role is None or not n.inputs or _key(n.inputs[0]) not in cl:
        return False
    if role == "keep_all":
        return all(_key(e) in cl for e in n.inputs)
    return role == "keep"


def channels_last_entries(nodes: Sequence[Node]) -> tuple[set, set]:
    """``(cl, starts)``: the entries (``(id(node), index)``) that are channels-last in
    the program of ``nodes`` (topological order), and the ids of the convolutions whose
    outputs are made so."""
    cl: set = set()
    starts: set = set()
    for n in nodes:
        if n.is_variable:
            continue
        role = n.op.channels_last_role(n.parsed)
        if role == "start":
            starts.add(id(n))
            cl.add((id(n), 0))
        elif _keeps(n, role, cl):
            cl.add((id(n), 0))
    return cl, starts


def to_channels_last(t: torch.Tensor) -> torch.Tensor:
    """``t`` in channels-last memory format (itself when it already is)."""
    return t.contiguous(memory_format=_CL)


def to_dense(t: torch.Tensor) -> torch.Tensor:
    """``t`` row-major contiguous (itself when it already is)."""
    return t.contiguous()

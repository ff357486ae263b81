"""The hand-tuned CPU backend (``onednn``; MXNet's ``MKLDNN``): inference programs whose
Convolution[+BatchNorm][+add][+ReLU] groups run as single oneDNN calls on channels-last
activations, with folded, prepacked weights and, where measured faster, Winograd kernels
(:mod:`.fusion`, :mod:`.winograd`).

Only :mod:`mxtorch.graph.backends` imports this package (by name, on first use): no core
module depends on it. Where a graph has no convolution group, runs on CUDA, or torch has
no oneDNN, the ``jit`` backend's program runs instead.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

import torch

from . import fusion
from ..inference import Frozen, build_jit

__all__ = ["build"]

log = logging.getLogger(__name__)


def build(program: Any, tensors: Sequence[torch.Tensor], const_idx: Sequence[int],
          device: torch.device | None) -> Callable[..., Any]:
    """The program with its convolution groups fused (else ``jit``'s)."""
    on_cuda = any(t.is_cuda for i, t in enumerate(tensors) if i not in set(const_idx))
    if not on_cuda and fusion.available():
        fusion.prepare()
        gm, groups = fusion.fuse_program(program, tensors, const_idx, device)
        if groups:
            log.debug("%d oneDNN convolution groups", groups)
            consts = [tensors[i].detach() for i in const_idx]
            return Frozen(gm, len(tensors), const_idx, consts).eval()
    return build_jit(program, tensors, const_idx, device)

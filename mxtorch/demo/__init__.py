"""The training demo behind ``mxtorch train``: a small MLP on scikit-learn's bundled 8x8
digits (1797 images, shipped inside scikit-learn, no download), trained with either MXNet
API — ``Symbol`` + ``Module.fit`` or a hybridized Gluon ``HybridBlock`` + ``Trainer`` — on
one or several contexts, reporting held-out accuracy and writing an MXNet checkpoint.

Needs the ``demo`` extra: ``pip install 'mxtorch[demo]'`` (scikit-learn; tqdm for bars).
"""
from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass

from .data import MissingExtraError, load_split, parse_ctx

__all__ = ["DemoConfig", "DemoResult", "MissingExtraError", "run_demo", "parse_ctx",
           "AMP_DTYPES"]

#: ``--amp`` choices -> the target dtype of ``mx.contrib.amp.init``
AMP_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}


@dataclass
class DemoConfig:
    """Settings of one demo run (the ``mxtorch train`` flags)."""

    api: str = "module"
    epochs: int = 10
    batch_size: int = 64
    ctx: str = "cpu"
    out: str = "mxtorch-demo"
    lr: float = 0.1
    hidden: int = 128
    seed: int = 0
    progress: bool = True
    amp: str | None = None      # 'bf16' or 'fp16': mixed precision with mx.contrib.amp


@dataclass
class DemoResult:
    """What a demo run produced: held-out accuracy and the checkpoint files."""

    accuracy: float
    symbol_file: str
    params_file: str


def _setup_logging() -> None:
    """Send MXNet-style INFO lines (``Epoch[0] Train-accuracy=...``) to stdout, bare."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(handler)
    root.setLevel(logging.INFO)


def run_demo(cfg: DemoConfig) -> DemoResult:
    """Train per ``cfg``, print progress, metric lines, the final held-out accuracy and the
    checkpoint location; return a :class:`DemoResult`."""
    import mxtorch as mx
    if cfg.epochs < 1 or cfg.batch_size < 1:
        raise ValueError("--epochs and --batch-size must be positive")
    ctxs = parse_ctx(cfg.ctx)
    if cfg.amp is not None and cfg.amp not in AMP_DTYPES:
        raise ValueError(f"unknown --amp {cfg.amp!r}: use 'bf16' or 'fp16'")
    split = load_split(cfg.seed)
    _setup_logging()
    if cfg.amp is not None:
        from ..contrib import amp
        amp.init(AMP_DTYPES[cfg.amp])   # before the network is built, as MXNet requires
    mx.random.seed(cfg.seed)
    # Gluon's RandomSampler shuffles with NumPy's global generator (as MXNet's does): seed
    # it too, so a run's accuracy does not depend on what the process drew before
    import numpy as np
    np.random.seed(cfg.seed)
    print(f"digits: {len(split.y_train)} training / {len(split.y_val)} held-out 8x8 images, "
          f"10 classes | api={cfg.api} ctx={ctxs} epochs={cfg.epochs} "
          f"batch_size={cfg.batch_size} lr={cfg.lr}"
          + (f" amp={AMP_DTYPES[cfg.amp]}" if cfg.amp else ""), flush=True)
    os.makedirs(cfg.out, exist_ok=True)
    prefix = os.path.join(cfg.out, f"digits-{cfg.api}")
    if cfg.api == "module":
        from .module_api import train_module as train
    elif cfg.api == "gluon":
        from .gluon_api import train_gluon as train
    else:
        raise ValueError(f"unknown --api {cfg.api!r}: use 'module' or 'gluon'")
    acc = train(cfg, split, ctxs, prefix)
    result = DemoResult(acc, f"{prefix}-symbol.json", f"{prefix}-{cfg.epochs:04d}.params")
    print(f"Final held-out accuracy: {acc:.4f} ({len(split.y_val)} images)")
    print(f"Checkpoint written to {result.symbol_file} and {result.params_file}")
    print(f"  load it with mx.model.load_checkpoint({prefix!r}, {cfg.epochs})")
    return result

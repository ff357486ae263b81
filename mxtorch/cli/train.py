"""``mxtorch train``: the training demo (an MLP on scikit-learn's bundled 8x8 digits)."""
from __future__ import annotations

import argparse

__all__ = ["add_parser"]


def _handle(args: argparse.Namespace) -> int:
    """Entry point of ``mxtorch train``."""
    from ..demo import DemoConfig, MissingExtraError, run_demo
    cfg = DemoConfig(api=args.api, epochs=args.epochs, batch_size=args.batch_size,
                     ctx=args.ctx, out=args.out, lr=args.lr, hidden=args.hidden,
                     seed=args.seed, progress=not args.no_progress, amp=args.amp)
    try:
        run_demo(cfg)
    except MissingExtraError as err:
        print(f"mxtorch train: {err}")
        return 1
    return 0


def add_parser(sub) -> None:
    """Register the ``train`` subcommand."""
    from ..demo import DemoConfig
    d = DemoConfig()
    p = sub.add_parser("train", help="train an MLP on the bundled 8x8 digits (the demo)",
                       description="Train a small network on scikit-learn's bundled 8x8 "
                                   "digits with a held-out split, print MXNet-style metric "
                                   "lines and write a checkpoint.")
    p.add_argument("--api", choices=("module", "gluon"), default=d.api,
                   help="Symbol + Module.fit, or HybridBlock + Trainer (default: %(default)s)")
    p.add_argument("--epochs", type=int, default=d.epochs, help="default: %(default)s")
    p.add_argument("--batch-size", type=int, default=d.batch_size, help="default: %(default)s")
    p.add_argument("--ctx", default=d.ctx,
                   help="cpu, cpu:0,1, gpu or gpu:0,1 (several = data parallel; "
                        "default: %(default)s)")
    p.add_argument("--out", default=d.out, help="checkpoint directory (default: %(default)s)")
    p.add_argument("--lr", type=float, default=d.lr, help="learning rate (default: %(default)s)")
    p.add_argument("--hidden", type=int, default=d.hidden,
                   help="hidden units (default: %(default)s)")
    p.add_argument("--seed", type=int, default=d.seed, help="default: %(default)s")
    p.add_argument("--amp", choices=("bf16", "fp16"), default=None,
                   help="mixed precision with mx.contrib.amp: FullyConnected runs in "
                        "bfloat16 or float16, the rest as AMP's lists say (default: float32)")
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    p.set_defaults(handler=_handle)

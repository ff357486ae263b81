"""The ``mxtorch`` command: ``train``, ``run``, ``info`` and ``convert`` subcommands.

``mxtorch train`` trains a small network on scikit-learn's bundled digits (the demo),
``mxtorch run SCRIPT`` runs an unchanged MXNet script with ``import mxnet`` resolving to
mxtorch, ``mxtorch info`` reports versions, devices and optional extras, and
``mxtorch convert`` turns an MXNet checkpoint into a PyTorch state dict (and back).
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``mxtorch`` command, one subparser per subcommand."""
    from . import convert, info, run, train
    parser = argparse.ArgumentParser(
        prog="mxtorch",
        description="Apache MXNet 1.x's Python API on PyTorch (import mxtorch as mx).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in (train, run, info, convert):
        mod.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``mxtorch`` command on ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] == "run":
        args = _parse_run(parser, argv)
    else:
        args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 0
    return int(args.handler(args) or 0)


def _parse_run(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse ``run [-m] SCRIPT ARGS...``: everything after SCRIPT goes to the script as is."""
    head = 1
    while head < len(argv) and argv[head].startswith("-"):
        head += 1
    args = parser.parse_args(argv[:head + 1])
    args.script_args = argv[head + 1:]
    return args

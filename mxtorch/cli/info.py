"""``mxtorch info``: versions, devices and optional extras of this installation."""
from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import platform
import sys

import numpy as np
import torch

__all__ = ["collect_info", "format_info"]

# (import name, distribution name, what needs it)
_EXTRAS = (
    ("sklearn", "scikit-learn", "the `mxtorch train` demo (pip install 'mxtorch[demo]')"),
    ("tqdm", "tqdm", "progress bars (mx.callback.TqdmProgressBar, the demo)"),
    ("PIL", "pillow", "mx.image decoding"),
    ("graphviz", "graphviz", "mx.viz.plot_network"),
)


def _version(dist: str) -> str | None:
    """Installed version of distribution ``dist``, or None."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _devices() -> list[str]:
    """Human-readable list of the devices torch can use, as MXNet contexts."""
    devices = [f"cpu(0): {platform.processor() or platform.machine()}, "
               f"{os.cpu_count()} cores, torch threads={torch.get_num_threads()}"]
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            prop = torch.cuda.get_device_properties(i)
            devices.append(f"gpu({i}): {prop.name}, {prop.total_memory / 2**30:.1f} GiB")
    return devices


def collect_info() -> dict:
    """Gather versions, devices and extras into a plain dict."""
    import mxtorch
    extras = {}
    for module, dist, purpose in _EXTRAS:
        present = importlib.util.find_spec(module) is not None
        extras[dist] = (_version(dist) if present else None, present, purpose)
    return {
        "mxtorch": mxtorch.__mxtorch_version__, "mxnet_api": mxtorch.__version__,
        "torch": torch.__version__, "numpy": np.__version__,
        "python": sys.version.split()[0], "platform": platform.platform(),
        "cuda": torch.version.cuda if torch.cuda.is_available() else None,
        "devices": _devices(), "extras": extras,
    }


def format_info(info: dict) -> str:
    """Render :func:`collect_info`'s dict as the text ``mxtorch info`` prints."""
    lines = [f"mxtorch  {info['mxtorch']} (MXNet API {info['mxnet_api']})",
             f"torch    {info['torch']}",
             f"numpy    {info['numpy']}", f"python   {info['python']} ({info['platform']})",
             f"cuda     {info['cuda'] or 'not available'}", "devices:"]
    lines += [f"  {d}" for d in info["devices"]]
    lines.append("optional extras:")
    for dist, (version, present, purpose) in info["extras"].items():
        state = f"yes ({version})" if present else "no"
        lines.append(f"  {dist:<13} {state:<14} {purpose}")
    return "\n".join(lines)


def _handle(args: argparse.Namespace) -> int:
    """Entry point of ``mxtorch info``."""
    print(format_info(collect_info()))
    return 0


def add_parser(sub) -> None:
    """Register the ``info`` subcommand."""
    p = sub.add_parser("info", help="versions, devices and optional extras",
                       description="Print mxtorch/torch/numpy versions, the devices seen "
                                   "and which optional extras are installed.")
    p.set_defaults(handler=_handle)

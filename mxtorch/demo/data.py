"""Data and device helpers of the demo: the digits split and ``--ctx`` parsing."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MissingExtraError", "DigitsSplit", "load_split", "parse_ctx", "ProgressBar"]


class MissingExtraError(ImportError):
    """An optional dependency of the demo is not installed."""


@dataclass
class DigitsSplit:
    """The 8x8 digits as float32 arrays in [0, 1], split into train and held-out parts."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray


def load_split(seed: int = 0, held_out: float = 0.2) -> DigitsSplit:
    """Load scikit-learn's bundled digits (no download) and shuffle-split them by ``seed``."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise MissingExtraError(
            "the training demo needs scikit-learn (its bundled 8x8 digits are the data): "
            "pip install 'mxtorch[demo]'  (or: pip install scikit-learn tqdm)") from None
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.float32)
    order = np.random.RandomState(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_val = int(round(len(x) * held_out))
    return DigitsSplit(x[n_val:], y[n_val:], x[:n_val], y[:n_val])


def parse_ctx(spec: str) -> list:
    """``cpu`` / ``gpu`` / ``gpu:0,1`` / ``cpu:0,1`` -> a list of mxtorch contexts."""
    import mxtorch as mx
    kind, _, ids = spec.strip().lower().partition(":")
    if kind not in ("cpu", "gpu"):
        raise ValueError(f"bad --ctx {spec!r}: expected cpu, gpu, cpu:0,1 or gpu:0,1")
    try:
        numbers = [int(i) for i in ids.split(",")] if ids else [0]
    except ValueError:
        raise ValueError(f"bad --ctx {spec!r}: device ids must be integers") from None
    if kind == "gpu":
        available = mx.context.num_gpus()
        missing = [i for i in numbers if i >= available]
        if missing:
            raise ValueError(f"--ctx {spec}: gpu {missing} not available "
                             f"({available} GPU(s) seen by torch)")
    make = mx.gpu if kind == "gpu" else mx.cpu
    return [make(i) for i in numbers]


class ProgressBar:
    """A tqdm bar per epoch (nothing when tqdm is missing or ``enabled`` is False)."""

    def __init__(self, total: int, enabled: bool = True):
        self.total = total
        self._tqdm = None
        self._bar = None
        if enabled:
            try:
                from tqdm import tqdm
                self._tqdm = tqdm
            except ImportError:
                pass

    @property
    def active(self) -> bool:
        """Whether bars are drawn."""
        return self._tqdm is not None

    def update(self, epoch: int, nbatch: int, metrics: dict | None = None) -> None:
        """Show batch ``nbatch`` (0-based) of ``epoch``; closes the bar on the last batch."""
        if self._tqdm is None:
            return
        if self._bar is None:
            self._bar = self._tqdm(total=self.total, desc=f"Epoch[{epoch}]", unit="batch",
                                   leave=True, dynamic_ncols=True)
        self._bar.n = nbatch + 1
        if metrics:
            self._bar.set_postfix(metrics, refresh=False)
        self._bar.refresh()
        if nbatch + 1 >= self.total:
            self.close()

    def close(self) -> None:
        """Finish the current bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

"""MXNet's aggregate profile statistics: per category and name, a count with the total,
minimum, maximum and average, printed as MXNet's table or JSON."""
from __future__ import annotations

import json

import numpy as np

__all__ = ["Stat", "table", "as_json", "MEMORY_CATEGORIES", "SORT_KEYS"]

MEMORY_CATEGORIES = ("Device Storage", "Pool Memory")
SORT_KEYS = {"total": 0, "avg": 1, "min": 2, "max": 3, "count": 4}


class Stat:
    """Aggregate of one name: durations (microseconds) or counter values."""

    __slots__ = ("counter", "count", "total", "min", "max")

    def __init__(self, counter: bool):
        self.counter = counter
        self.count = 0
        self.total = 0.0
        self.min = float("inf")
        self.max = 0.0

    def add(self, value: float) -> None:
        self.count += 1
        # MXNet: a counter's "total" is its latest value
        self.total = value if self.counter else self.total + value
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value

    def avg(self) -> float:
        # MXNet: a counter's average is half its range, in integers
        return (self.max - self.min) // 2 if self.counter else self.total / self.count

    def key(self, sort_by: int) -> float:
        return (self.total, self.avg(), self.min, self.max, self.count)[sort_by]


def _sorted(stats: dict, sort_by: int, ascending: bool) -> list:
    """(name, stat) by the sort key, largest first (smallest with ``ascending``); ties by
    name, largest first, as MXNet's heap gives them."""
    sign = -1 if ascending else 1
    return sorted(stats.items(), key=lambda kv: (sign * kv[1].key(sort_by), kv[0]),
                  reverse=True)


def _f32(x: float) -> float:
    """``x`` (microseconds or bytes) in milliseconds or kilobytes, rounded as a float32."""
    return float(np.float32(x / 1000.0))


def table(stats: dict, sort_by: int, ascending: bool) -> str:
    """MXNet's aggregate table."""
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    for cat in sorted(stats):
        mem = cat in MEMORY_CATEGORIES
        unit = ("Use  (kB)" if mem else "Time (ms)")
        lines += [cat, "================="]
        lines.append(f"{'Name':<25}{'Total Count':>16} " + ("" if mem else f"{'Time (ms)':>16} ")
                     + f"{'Min ' + unit:>16} {'Max ' + unit:>16} {'Avg ' + unit:>16}")
        lines.append(f"{'----':<25}{'-----------':>16} " + ("" if mem else f"{'---------':>16} ")
                     + f"{'-------------':>16} {'-------------':>16} {'-------------':>16}")
        for name, s in _sorted(stats[cat], sort_by, ascending):
            total = "" if mem else f"{_f32(s.total):>16.4f} "
            lines.append(f"{name:<25}{s.count:>16} {total}{_f32(s.min):>16.4f} "
                         f"{_f32(s.max):>16.4f} {_f32(s.avg()):>16.4f}")
        lines.append("")
    return "\n".join(lines) + "\n"


def as_json(stats: dict, sort_by: int, ascending: bool) -> str:
    """MXNet's aggregate stats as JSON: {"Time": ..., "Memory": ..., "Unit": ...}."""
    def num(x: float):
        v = float(f"{_f32(x):.4g}")
        return int(v) if v.is_integer() else v
    out: dict = {"Time": {}, "Memory": {}}
    for cat in sorted(stats):
        mem = cat in MEMORY_CATEGORIES
        block = out["Memory" if mem else "Time"][cat] = {}
        for name, s in _sorted(stats[cat], sort_by, ascending):
            block[name] = {"Count": s.count} if mem else {"Count": s.count,
                                                          "Total": num(s.total)}
            block[name].update(Min=num(s.min), Max=num(s.max), Avg=num(s.avg()))
    out["Unit"] = {"Time": "ms", "Memory": "kB"}
    return json.dumps(out, indent=4) + "\n"

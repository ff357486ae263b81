"""Timing helpers for benchmarks: interleaved repeats, medians, same-run ratios."""
from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")


def timeit(fn, number: int) -> float:
    """Seconds per call of ``fn`` averaged over ``number`` calls."""
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def compare(cases: dict, number: int, repeats: int = 7, warmup: int = 3) -> dict:
    """Time each case interleaved ``repeats`` times; return median seconds per call."""
    for fn in cases.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            samples[name].append(timeit(fn, number))
    return {k: statistics.median(v) for k, v in samples.items()}


def report(title: str, res: dict, baseline: str) -> None:
    base = res[baseline]
    print(f"== {title}")
    for k, v in res.items():
        print(f"  {k:<28s} {v * 1e6:10.2f} us   ratio vs {baseline}: {v / base:5.2f}")

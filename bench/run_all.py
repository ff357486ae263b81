"""Run every issue-10 workload for mxtorch, torch eager and torch.compile, one process per
column, interleaved, and print same-run speed ratios against torch eager.

    OMP_WAIT_POLICY=passive python bench/run_all.py [--rounds 5] [--only w1,w2]
        [--columns mxtorch,torch,compile[,mxnet]] [--mxnet-python PATH] [--no-memory]

Each column is a long-lived worker process (so torch.compile compiles once); for every
workload the driver asks the workers in turn for one timing sample, ``rounds`` times, and
reports median times. Ratios are ``torch eager time / column time`` (> 1: faster than
eager), taken per round from the two samples measured one after the other, so that a
change in the machine's capacity between rounds cancels out; the row prints their median
and, in brackets, their range over the rounds.
The peak memory of a resnet18 training step is measured in a fresh process per column
(ru_maxrss growth over five steps). Only ratios taken in the same run are meaningful on a
machine whose capacity varies.

The optional ``mxnet`` column runs the same workloads in real MXNet 1.9.1
(``bench/mxnet_ref.py``) with an interpreter that has it (``--mxnet-python`` or
``MXNET_REF_PYTHON``), so mxtorch can be compared with the framework it replaces in the
same run; MXNet itself is never a dependency of the project.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS = int(os.environ.get("BENCH_THREADS", "2"))


def _setup_process() -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))
    import torch
    torch.set_num_threads(THREADS)


def worker(column: str) -> None:
    """Answer ``workload`` lines on stdin with one JSON timing sample each."""
    _setup_process()
    import warnings
    warnings.simplefilter("ignore")
    import logging
    logging.disable(logging.WARNING)
    import workloads
    from mxnet_ref import serve
    serve(lambda name: workloads.build(name, column))


def memory(column: str) -> None:
    """The peak RSS of resnet18 training steps (batch 8) for ``column``
    (``mxnet_ref.peak_memory``)."""
    _setup_process()
    import warnings
    warnings.simplefilter("ignore")
    import workloads
    from mxnet_ref import peak_memory
    peak_memory(workloads.resnet18_train_step(column))


def _spawn(args: list[str], mxnet_python: str | None = None) -> subprocess.Popen:
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    if args[-1] == "mxnet":
        if not mxnet_python:
            raise SystemExit("the mxnet column needs --mxnet-python or MXNET_REF_PYTHON")
        env.update(OMP_NUM_THREADS=str(THREADS), MXNET_MKLDNN_ENABLED="1")
        cmd = [mxnet_python, os.path.join(HERE, "mxnet_ref.py")]
    else:
        cmd = [sys.executable, os.path.abspath(__file__)] + args
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env, bufsize=1)


def _ask(proc: subprocess.Popen, name: str) -> dict:
    proc.stdin.write(name + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    return json.loads(line) if line else {"error": "worker died"}


def drive(workloads_: list[str], columns: list[str], rounds: int,
          mxnet_python: str | None = None) -> dict:
    procs = {c: _spawn(["--worker", c], mxnet_python) for c in columns}
    results: dict = {}
    try:
        for w in workloads_:
            samples = {c: [] for c in columns}
            errors: dict = {}
            for _ in range(rounds):
                for c in columns:
                    if c in errors:
                        continue
                    rep = _ask(procs[c], w)
                    if "error" in rep:
                        errors[c] = rep["error"]
                    else:
                        samples[c].append(rep["t"])
            results[w] = {c: statistics.median(v) if v else None for c, v in samples.items()}
            results[w]["errors"] = errors
            results[w]["ratios"] = {c: _paired_ratios(samples.get("torch", []), v)
                                    for c, v in samples.items()}
            _print_row(w, results[w], columns)
    finally:
        for p in procs.values():
            p.stdin.close()
            p.wait(timeout=60)
    return results


def _paired_ratios(base: list[float], samples: list[float]) -> list[float]:
    """``base[i] / samples[i]`` for every round both columns answered."""
    return [b / s for b, s in zip(base, samples)] if len(base) == len(samples) else []


def _print_row(w: str, res: dict, columns: list[str]) -> None:
    base = res.get("torch")
    cells = []
    for c in columns:
        t = res.get(c)
        if t is None:
            cells.append(f"{c}: failed ({res['errors'].get(c, '?')[:60]})")
            continue
        unit = f"{t * 1e6:.2f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms"
        ratios = res["ratios"].get(c)
        ratio = ""
        if c != "torch" and ratios:
            ratio = (f" x{statistics.median(ratios):.2f}"
                     f" [{min(ratios):.2f}-{max(ratios):.2f}]")
        elif base:
            ratio = f" x{base / t:.2f}"
        cells.append(f"{c}: {unit}{ratio}")
    extra = ""
    if w == "dispatch_add" and base and res.get("mxtorch"):
        extra = f"  overhead {(res['mxtorch'] - base) * 1e6:.2f} us/call"
    if res.get("mxnet") and res.get("mxtorch"):
        extra += f"  mxtorch vs MXNet x{res['mxnet'] / res['mxtorch']:.2f}"
    print(f"{w:<24s} " + " | ".join(cells) + extra, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker")
    ap.add_argument("--memory")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--columns", default="mxtorch,torch,compile")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--mxnet-python", default=os.environ.get("MXNET_REF_PYTHON"),
                    help="interpreter with mxnet 1.9.1 for the optional mxnet column")
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)
    if args.memory:
        return memory(args.memory)
    sys.path.insert(0, HERE)
    from workloads import WORKLOADS
    names = [w for w in WORKLOADS if not args.only or w in args.only.split(",")]
    columns = args.columns.split(",")
    print(f"threads={THREADS} OMP_WAIT_POLICY=passive rounds={args.rounds}; "
          f"ratio = torch eager time / column time (>1 is faster than eager)")
    drive(names, columns, args.rounds, args.mxnet_python)
    if not args.no_memory:
        for c in [c for c in columns if c != "compile"]:
            env = dict(os.environ, OMP_WAIT_POLICY="passive")
            if c == "mxnet":
                env.update(OMP_NUM_THREADS=str(THREADS), MXNET_MKLDNN_ENABLED="1")
                cmd = [args.mxnet_python, os.path.join(HERE, "mxnet_ref.py"), "--memory"]
            else:
                cmd = [sys.executable, os.path.abspath(__file__), "--memory", c]
            out = subprocess.run(cmd, capture_output=True, text=True, env=env)
            print(f"resnet18 training step b8 peak RSS [{c}]: "
                  f"{out.stdout.strip() or out.stderr.strip()[-300:]}")


if __name__ == "__main__":
    main()

"""Data-parallel throughput of gluon.Trainer(kvstore='dist_sync') with 1 vs 2 processes.

An MLP 784-256-256-10 at batch 128 per worker, on CPU (gloo over loopback), started with
``python -m mxtorch.launch``. Each worker uses BENCH_THREADS torch threads (default 1), so
2 workers use 2 cores; the 1-process run is also timed with 2 threads for an honest
"same cores" comparison. Reports global samples/s and the scaling of 2 vs 1 process.

Run: python bench/bench_dist.py [--steps 60]
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH = 128


def worker(steps: int) -> None:
    """One worker: train ``steps`` steps after a warmup; rank 0 prints samples/s."""
    import numpy as np
    import torch

    import mxtorch as mx
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))
    kv = mx.kv.create("dist_sync")
    net = mx.gluon.nn.Sequential()
    net.add(mx.gluon.nn.Dense(256, activation="relu", in_units=784),
            mx.gluon.nn.Dense(256, activation="relu", in_units=256),
            mx.gluon.nn.Dense(10, in_units=256))
    mx.random.seed(0)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.05, "momentum": 0.9}, kvstore=kv)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    rs = np.random.RandomState(kv.rank)
    x = mx.nd.array(rs.uniform(-1, 1, (BATCH, 784)))
    y = mx.nd.array(rs.randint(0, 10, BATCH))

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(BATCH * kv.num_workers)

    for _ in range(5):
        step()
    kv.barrier()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    mx.nd.waitall()
    kv.barrier()
    dt = time.perf_counter() - t0
    if kv.rank == 0:
        print(f"RESULT {steps * BATCH * kv.num_workers / dt:.1f}", flush=True)


def run(n: int, threads: int, steps: int) -> float:
    """Launch ``n`` workers with ``threads`` threads each; return global samples/s."""
    env = dict(os.environ, BENCH_THREADS=str(threads), OMP_WAIT_POLICY="passive")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(HERE), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-m", "mxtorch.launch", "-n", str(n),
                          os.path.abspath(__file__), "--worker", "--steps", str(steps)],
                         env=env, capture_output=True, text=True, check=True, timeout=600)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")][-1]
    return float(line.split()[1])


def main() -> None:
    """Time 1 process (1 and 2 threads) and 2 processes (1 thread each)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    if args.worker:
        worker(args.steps)
        return
    one_1 = run(1, 1, args.steps)
    one_2 = run(1, 2, args.steps)
    two_1 = run(2, 1, args.steps)
    print(f"== dist_sync MLP 784-256-256-10, batch {BATCH}/worker, {os.cpu_count()} cores")
    print(f"  1 process  x 1 thread : {one_1:10.1f} samples/s")
    print(f"  1 process  x 2 threads: {one_2:10.1f} samples/s")
    print(f"  2 processes x 1 thread: {two_1:10.1f} samples/s   "
          f"scaling vs 1x1: {two_1 / one_1:4.2f}, vs 1x2: {two_1 / one_2:4.2f}")


if __name__ == "__main__":
    main()

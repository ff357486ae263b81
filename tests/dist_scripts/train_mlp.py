"""A dist worker: trains the MLP with Module and with gluon.Trainer on kvstore='dist_sync'.

Usage: train_mlp.py OUT_DIR [module|gluon|both]. With KILL_RANK/KILL_STEP set, that worker
SIGKILLs itself at that gluon step, and the others train "forever" (until they fail).
"""
import os
import signal
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlp_common as mc

import mxtorch as mx


def main():
    out, what = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "both")
    kv = mx.kv.create("dist_sync")
    rank, nw = kv.rank, kv.num_workers
    x, y = mc.dataset(nw)
    xs, ys = mc.shard(x, rank, nw), mc.shard(y, rank, nw)
    if "KILL_RANK" in os.environ:
        kill_rank, kill_step = int(os.environ["KILL_RANK"]), int(os.environ["KILL_STEP"])

        def on_step(step):
            if rank == kill_rank and step == kill_step:
                os.kill(os.getpid(), signal.SIGKILL)

        mc.EPOCHS = 10 ** 6
        mc.train_gluon(xs, ys, mc.BATCH, kv, 100 + rank, nw, on_step=on_step)
        return
    if what in ("module", "both"):
        mod = mc.train_module(xs, ys, mc.BATCH, kv, 100 + rank)
        args, _ = mod.get_params()
        np.savez(os.path.join(out, f"module_rank{rank}.npz"),
                 **{k: v.asnumpy() for k, v in args.items()})
        mod.save_checkpoint(os.path.join(out, f"ckpt_rank{rank}"), 2,
                            save_optimizer_states=True)
    if what in ("gluon", "both"):
        kv2 = mx.kv.create("dist_sync")  # a second store shares the one process group
        # MXNet: Trainer broadcasts rank 0's weights at the first step, after that step's
        # backward -- so gluon workers start from the same seed, as MXNet's examples do
        net, trainer = mc.train_gluon(xs, ys, mc.BATCH, kv2, 200, nw)
        np.savez(os.path.join(out, f"gluon_rank{rank}.npz"), **mc.gluon_arrays(net))
        trainer.save_states(os.path.join(out, f"trainer_rank{rank}.states"))
    kv.barrier()


if __name__ == "__main__":
    main()

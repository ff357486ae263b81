"""Mixed precision: a training step of ``mxtorch train``'s network (``demo.gluon_api``'s
MLP 64 -> hidden -> 10, hybridized; ``BENCH_HIDDEN``, default the demo's 128) at batch 256,
float32 against ``mx.contrib.amp`` bfloat16, in one run.

The float32 network is hybridized before ``amp.init()`` (its graph keeps float32), the AMP
one after (its graph has the casts); the steps are timed interleaved. bfloat16 matrix
products are fast only on CPUs with AVX512-BF16 or AMX; the flags this CPU reports are
printed first.
"""
import os

import mxtorch as mx
from mxtorch import autograd, gluon
from mxtorch.contrib import amp
from mxtorch.demo.gluon_api import build_net
from common import compare

BATCH = int(os.environ.get("BENCH_BATCH", "256"))
HIDDEN = int(os.environ.get("BENCH_HIDDEN", "128"))


def cpu_flags() -> str:
    """The bfloat16-related flags of this CPU (from /proc/cpuinfo, where there is one)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split(":", 1)[1].split() for line in f
                          if line.startswith("flags")), [])
    except OSError:
        return "unknown"
    found = [f for f in flags if "bf16" in f or f.startswith("amx")]
    return " ".join(found) or "none (no AVX512-BF16 / AMX)"


def make_step(hidden: int):
    """The demo's network with its Trainer, and one training step on a fixed batch."""
    net = build_net(hidden)
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    if amp.amp._amp_initialized:
        amp.init_trainer(trainer)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x = mx.nd.random.uniform(shape=(BATCH, 64))
    y = mx.nd.random.randint(0, 10, shape=(BATCH,)).astype("float32")

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
            if getattr(trainer, "_amp_loss_scaler", None) is not None:
                with amp.scale_loss(loss, trainer) as loss:
                    pass
        loss.backward()
        trainer.step(BATCH)
        mx.nd.waitall()
    step()   # builds the hybridized graph (with the casts once amp.init() ran)
    return step


def main():
    print(f"CPU bfloat16 support: {cpu_flags()}")
    fp32 = make_step(HIDDEN)
    amp.init("bfloat16")
    bf16 = make_step(HIDDEN)
    res = compare({"float32": fp32, "amp bfloat16": bf16}, number=10, repeats=5)
    print(f"== training step, batch {BATCH}, hidden {HIDDEN}")
    for k, v in res.items():
        print(f"  {k:<16s} {v * 1e3:9.2f} ms   ratio vs float32: {v / res['float32']:5.2f}")


if __name__ == "__main__":
    main()

"""The demo with Gluon: a hybridized ``HybridSequential`` MLP trained by ``gluon.Trainer``."""
from __future__ import annotations

import logging
import math
import time

import numpy as np

import mxtorch as mx
from mxtorch import autograd, gluon
from mxtorch.contrib import amp
from mxtorch.gluon import nn

from .data import DigitsSplit, ProgressBar

_LOG = logging.getLogger(__name__)

__all__ = ["build_net", "train_gluon", "evaluate"]


def build_net(hidden: int = 128) -> nn.HybridSequential:
    """Dense(hidden, relu) -> Dense(10), as a HybridBlock."""
    net = nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(nn.Dense(hidden, activation="relu"), nn.Dense(10))
    return net


def _float32(outs: list) -> list:
    """The outputs for the metric: float32 (under AMP the last layer gives bfloat16/float16)."""
    return [o if o.dtype == np.float32 else o.astype("float32") for o in outs]


def evaluate(net, loader, ctxs: list) -> float:
    """Accuracy of ``net`` over ``loader``, batches split across ``ctxs``."""
    metric = mx.metric.Accuracy()
    for x, y in loader:
        xs = gluon.utils.split_and_load(x, ctxs, even_split=False)
        ys = gluon.utils.split_and_load(y, ctxs, even_split=False)
        metric.update(ys, _float32([net(part) for part in xs]))
    return float(metric.get()[1])


def _train_epoch(net, trainer, loader, ctxs, metric, bar, epoch) -> None:
    """One pass over ``loader``: forward/backward per context, then one Trainer step."""
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for nbatch, (x, y) in enumerate(loader):
        xs = gluon.utils.split_and_load(x, ctxs, even_split=False)
        ys = gluon.utils.split_and_load(y, ctxs, even_split=False)
        with autograd.record():
            outs = [net(part) for part in xs]
            losses = [loss_fn(o, t) for o, t in zip(outs, ys)]
            if getattr(trainer, "_amp_loss_scaler", None) is not None:
                # AMP: backward on the scaled loss; step() unscales it and skips a step
                # whose gradients overflowed
                with amp.scale_loss(losses, trainer) as losses:
                    pass
        autograd.backward(losses)
        trainer.step(x.shape[0])
        metric.update(ys, _float32(outs))
        bar.update(epoch, nbatch, {"accuracy": f"{metric.get()[1]:.4f}"})


def train_gluon(cfg, split: DigitsSplit, ctxs: list, prefix: str) -> float:
    """Train, log MXNet-style lines, export ``prefix`` at the last epoch; return accuracy."""
    train_data = gluon.data.DataLoader(
        gluon.data.ArrayDataset(split.x_train, split.y_train), cfg.batch_size, shuffle=True)
    val_data = gluon.data.DataLoader(
        gluon.data.ArrayDataset(split.x_val, split.y_val), cfg.batch_size)
    net = build_net(cfg.hidden)
    net.initialize(mx.init.Xavier(magnitude=2.0), ctx=ctxs)
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": cfg.lr, "momentum": 0.9, "wd": 1e-4})
    if cfg.amp is not None:
        amp.init_trainer(trainer)
    bar = ProgressBar(math.ceil(len(split.y_train) / cfg.batch_size), cfg.progress)
    metric = mx.metric.Accuracy()
    for epoch in range(cfg.epochs):
        tic = time.time()
        metric.reset()
        _train_epoch(net, trainer, train_data, ctxs, metric, bar, epoch)
        _LOG.info("Epoch[%d] Train-%s=%f", epoch, *metric.get())
        _LOG.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
        _LOG.info("Epoch[%d] Validation-accuracy=%f", epoch,
                  evaluate(net, val_data, ctxs))
    net.export(prefix, epoch=cfg.epochs)
    return evaluate(net, val_data, ctxs)

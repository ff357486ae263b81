"""The demo with MXNet's symbolic API: ``mx.sym`` MLP trained by ``Module.fit``."""
from __future__ import annotations

import math

import mxtorch as mx

from .data import DigitsSplit, ProgressBar

__all__ = ["build_symbol", "train_module"]


def build_symbol(hidden: int = 128) -> "mx.sym.Symbol":
    """data -> FullyConnected(hidden) -> relu -> FullyConnected(10) -> SoftmaxOutput."""
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=hidden, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _batch_callback(cfg, n_batches: int):
    """A tqdm bar per epoch, or MXNet's Speedometer when there is no bar."""
    bar = ProgressBar(n_batches, cfg.progress)
    if not bar.active:
        return mx.callback.Speedometer(cfg.batch_size, max(1, n_batches // 2))

    def _callback(param) -> None:
        metrics = None
        if param.eval_metric is not None:
            metrics = {k: f"{v:.4f}" for k, v in param.eval_metric.get_name_value()}
        bar.update(param.epoch, param.nbatch, metrics)
    return _callback


def train_module(cfg, split: DigitsSplit, ctxs: list, prefix: str) -> float:
    """Fit with ``Module.fit`` (checkpointing the last epoch) and return held-out accuracy."""
    train_iter = mx.io.NDArrayIter(split.x_train, split.y_train, cfg.batch_size,
                                   shuffle=True, label_name="softmax_label")
    val_iter = mx.io.NDArrayIter(split.x_val, split.y_val, cfg.batch_size,
                                 label_name="softmax_label")
    mod = mx.mod.Module(build_symbol(cfg.hidden), context=ctxs)
    n_batches = math.ceil(len(split.y_train) / cfg.batch_size)
    mod.fit(train_iter, eval_data=val_iter, num_epoch=cfg.epochs, eval_metric="acc",
            optimizer="sgd",
            optimizer_params={"learning_rate": cfg.lr, "momentum": 0.9, "wd": 1e-4},
            initializer=mx.init.Xavier(magnitude=2.0),
            batch_end_callback=_batch_callback(cfg, n_batches),
            epoch_end_callback=mx.callback.do_checkpoint(prefix, period=cfg.epochs))
    # predict() drops the padding of the last batch, so every held-out image counts once.
    pred = mod.predict(val_iter).asnumpy().argmax(axis=1)
    return float((pred == split.y_val).mean())

"""Callbacks for ``Module.fit`` / ``FeedForward`` (``mx.callback``), as in MXNet 1.9.1."""
from __future__ import annotations

import logging
import math
import time

_LOG = logging.getLogger(__name__)

__all__ = ["module_checkpoint", "do_checkpoint", "log_train_metric", "Speedometer",
           "ProgressBar", "LogValidationMetricsCallback", "TqdmProgressBar"]


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """Callback to checkpoint Module to prefix every epoch.

    Parameters
    ----------
    mod : subclass of BaseModule
        The module to checkpoint.
    prefix : str
        The file prefix for this checkpoint.
    period : int
        How many epochs to wait before checkpointing. Defaults to 1.
    save_optimizer_states : bool
        Indicates whether or not to save optimizer states for continued training.

    Returns
    -------
    callback : function
        The callback function that can be passed as iter_end_callback to fit.
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        """The checkpoint function."""
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def do_checkpoint(prefix, period=1):
    """A callback that saves a model checkpoint every few epochs.

    Each checkpoint is made up of a couple of binary files: a model description file and a
    parameters (weights and biases) file, ``prefix-symbol.json`` and ``prefix-epoch.params``.

    Parameters
    ----------
    prefix : str
        Prefix for the checkpoint filenames.
    period : int, optional
        Interval (number of epochs) between checkpoints. Default `period` is 1.

    Returns
    -------
    callback : function
        A callback function that can be passed as `epoch_end_callback` to fit.
    """
    period = int(max(1, period))

    def _callback(iter_no, sym, arg, aux):
        """The checkpoint function."""
        if (iter_no + 1) % period == 0:
            from .model import save_checkpoint   # mx.model imports this module
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def log_train_metric(period, auto_reset=False):
    """Callback to log the training evaluation result every period.

    Parameters
    ----------
    period : int
        The number of batch to log the training evaluation metric.
    auto_reset : bool
        Reset the metric after each log.

    Returns
    -------
    callback : function
        The callback function that can be passed as iter_epoch_callback to fit.
    """
    def _callback(param):
        """The checkpoint function."""
        if param.nbatch % period == 0 and param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            for name, value in name_value:
                _LOG.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch,
                          name, value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """Log training speed and evaluation metrics periodically.

    Parameters
    ----------
    batch_size : int
        Batch size of data.
    frequent : int
        Specifies how frequently training speed and evaluation metrics must be logged.
        Default behavior is to log once every 50 batches.
    auto_reset : bool
        Reset the evaluation metrics after each log.
    """

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param):
        """Callback to Show speed."""
        count = param.nbatch
        if self.last_count > count:
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        try:
            speed = self.frequent * self.batch_size / (time.time() - self.tic)
        except ZeroDivisionError:
            speed = float("inf")
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            if self.auto_reset:
                param.eval_metric.reset_local()
                msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec"
                msg += "\t%s=%f" * len(name_value)
                _LOG.info(msg, param.epoch, count - self.frequent, count, speed,
                          *sum(name_value, ()))
            else:
                msg = "Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec"
                msg += "\t%s=%f" * len(name_value)
                _LOG.info(msg, param.epoch, count, speed, *sum(name_value, ()))
        else:
            _LOG.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec",
                      param.epoch, count, speed)
        self.tic = time.time()


class ProgressBar:
    """Display a progress bar, indicating the progress of batch processing.

    Parameters
    ----------
    total : int
        total number of batches per epoch
    length : int
        number of chars to define maximum length of progress bar
    """

    def __init__(self, total, length=80):
        self.bar_len = length
        self.total = total

    def __call__(self, param):
        """Callback to Show progress bar."""
        count = param.nbatch
        filled_len = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        prog_bar = "=" * filled_len + "-" * (self.bar_len - filled_len)
        _LOG.info("[%s] %s%s\r", prog_bar, percents, "%")


class LogValidationMetricsCallback:
    """Just logs the eval metrics at the end of an epoch."""

    def __call__(self, param):
        if not param.eval_metric:
            return
        name_value = param.eval_metric.get_name_value()
        for name, value in name_value:
            _LOG.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)


class TqdmProgressBar:
    """A batch-end callback driving a ``tqdm`` progress bar (mxtorch extra; needs tqdm).

    Parameters
    ----------
    total : int
        Total number of batches per epoch.
    **tqdm_kwargs
        Passed to ``tqdm.tqdm``.
    """

    def __init__(self, total, **tqdm_kwargs):
        try:
            from tqdm import tqdm
        except ImportError:
            raise ImportError("TqdmProgressBar needs the 'tqdm' package; use "
                              "mx.callback.ProgressBar instead") from None
        self._tqdm = tqdm
        self._kwargs = dict(tqdm_kwargs, total=total)
        self._bar = None
        self._epoch = None

    def __call__(self, param):
        if self._bar is None or param.epoch != self._epoch:
            self.close()
            self._epoch = param.epoch
            self._bar = self._tqdm(desc="Epoch[%d]" % param.epoch, **self._kwargs)
        self._bar.n = param.nbatch + 1
        if param.eval_metric is not None:
            self._bar.set_postfix(dict(param.eval_metric.get_name_value()), refresh=False)
        self._bar.refresh()

    def close(self):
        """Close the current bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def __getattr__(name):
    # MXNet: callback re-exports model.save_checkpoint; resolved lazily (model imports us).
    if name == "save_checkpoint":
        from .model import save_checkpoint
        return save_checkpoint
    raise AttributeError(f"module 'mxtorch.callback' has no attribute '{name}'")

"""``mx.monitor``: monitor inputs, outputs, weights and gradients for debugging."""
from __future__ import annotations

import logging
import re
from math import sqrt

from . import ndarray
from .ndarray import NDArray

_LOG = logging.getLogger(__name__)

__all__ = ["Monitor"]


def _py_str(name) -> str:
    """Node names may arrive as bytes (MXNet's C callback) or str."""
    return name.decode("utf-8") if isinstance(name, (bytes, bytearray)) else name


class Monitor:
    """Monitor inputs, outputs, weights, and gradients for debugging.

    Parameters
    ----------
    interval : int
        Number of batches between printing.
    stat_func : function
        A function that computes statistics of tensors. Takes an `NDArray` and returns
        an `NDArray` (or a list of them). Defaults to ``norm(x)/sqrt(x.size)``.
    pattern : str
        A regular expression specifying which tensors to monitor. Only tensors whose
        names match (``re.match``) are included: ``'.*weight|.*output'`` prints all
        weights and outputs, ``'.*backward.*'`` all gradients.
    sort : bool, default False
        Whether to sort the results by name.
    monitor_all : bool, default False
        If true, monitor both input and output, otherwise monitor output only.
    """

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        if stat_func is None:
            def asum_stat(x):
                """returns |x|/size(x), async execution."""
                return ndarray.norm(x) / sqrt(x.size)
            stat_func = asum_stat
        self.stat_func = stat_func
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

        def stat_helper(name, array):
            """wrapper for executor callback"""
            name = _py_str(name)
            if not self.activated or not self.re_prog.match(name):
                return
            self.queue.append((self.step, name, self.stat_func(array)))
        self.stat_helper = stat_helper

    def install(self, exe):
        """Install the callback into an executor; several executors may be installed.

        Parameters
        ----------
        exe : mx.executor.Executor
            The Executor (returned by symbol.bind) to install to.
        """
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def _wait_all(self) -> None:
        """Wait for every bound argument and auxiliary array."""
        for exe in self.exes:
            for array in exe.arg_arrays:
                array.wait_to_read()
            for array in exe.aux_arrays:
                array.wait_to_read()

    def tic(self):
        """Start collecting stats for current batch. Call before calling forward."""
        if self.step % self.interval == 0:
            self._wait_all()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """End collecting for current batch and return results.

        Call after computation of current batch.

        Returns
        -------
        res : list of (step, name, str)
            The stat of every monitored tensor, each value followed by a tab.
        """
        if not self.activated:
            return []
        self._wait_all()
        for exe in self.exes:
            for name, array in zip(exe._symbol.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(exe._symbol.list_auxiliary_states(), exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = [(n, k, _format_stats(v_list)) for n, k, v_list in self.queue]
        self.queue = []
        return res

    def toc_print(self):
        """End collecting and print results."""
        res = self.toc()
        for n, k, v in res:
            _LOG.info("Batch: {:7d} {:30s} {:s}".format(n, k, v))


def _format_stats(v_list) -> str:
    """MXNet's text for one queue entry: each stat, scalar or array, then a tab."""
    if isinstance(v_list, NDArray):
        v_list = [v_list]
    assert isinstance(v_list, list)
    s = ""
    for v in v_list:
        assert isinstance(v, NDArray)
        if v.shape == (1,):
            s += str(v.asscalar()) + "\t"
        else:
            s += str(v.asnumpy()) + "\t"
    return s

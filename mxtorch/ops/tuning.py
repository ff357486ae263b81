"""Operator tuning: small imperative calls, and the backward pass of a small recorded
graph, run on one thread.

Several torch CPU kernels start their OpenMP team whatever the size of the call: MKL's
GEMM, softmax and its gradient, the NLL loss, pooling, normalization, convolution and
the VML transcendental functions. With the workers asleep (``OMP_WAIT_POLICY=passive``,
or after any pause) each start costs 10-25 us on a small machine, more than the whole
work of a small call. MXNet's operator tuning (``MXNET_USE_OPERATOR_TUNING``) timed its
operators and ran small calls without OpenMP; mxtorch estimates a call's single-thread
time from its size instead, with an operator's ``work`` function:

* an imperative call of such an operator whose estimate is under ``ONE_THREAD_US`` runs
  on one thread;
* while recording, the largest estimate of the recorded calls is kept, and a
  ``backward`` of a graph whose every call was that small runs on one thread. A
  hybridized block's program counts as large (its calls are not seen one by one).

Only the time changes: the kernels compute the same values on one thread or several.
"""
from __future__ import annotations

import torch

__all__ = ["ONE_THREAD_US", "ELEMENTS_PER_US", "elements", "product", "dense", "dot",
           "batch_dot", "rnn", "conv", "passes", "recorded", "recorded_result", "single", "restore"]

ONE_THREAD_US = 200.0        # a call estimated under this runs on one thread
_MACS_PER_US = 40_000        # float32 GEMM on one core (about 80 GFLOP/s)
_ELEMENTS_PER_US = 2_000     # a memory-bound kernel on one core
ELEMENTS_PER_US = _ELEMENTS_PER_US

_threads = torch.get_num_threads
_set_threads = torch.set_num_threads


def elements(attrs, data, *rest) -> float:
    """A kernel over ``data``'s elements."""
    return data.numel() / _ELEMENTS_PER_US


def passes(tensors) -> float:
    """One memory-bound pass over every tensor of a list (a multi-tensor update)."""
    return sum(t.numel() for t in tensors) / _ELEMENTS_PER_US


def product(m: int, k: int, n: int) -> float:
    """An ``(m, k) @ (k, n)`` matrix product."""
    return m * k * n / _MACS_PER_US


def dense(attrs, data, weight, *rest) -> float:
    """``FullyConnected``: one multiply-add per element of ``data`` per output unit."""
    return data.numel() * weight.shape[0] / _MACS_PER_US


def dot(attrs, lhs, rhs, *rest) -> float:
    """``dot``: the contracted length is ``lhs``'s last axis (first when transposed)."""
    if lhs.dim() == 0 or rhs.dim() == 0:
        return elements(attrs, lhs if lhs.numel() >= rhs.numel() else rhs)
    k = lhs.shape[0] if getattr(attrs, "transpose_a", False) else lhs.shape[-1]
    return lhs.numel() * rhs.numel() / max(1, k) / _MACS_PER_US


def batch_dot(attrs, lhs, rhs, *rest) -> float:
    """``batch_dot``: ``dot`` per batch entry."""
    if lhs.dim() < 3:
        return dot(attrs, lhs, rhs)
    k = lhs.shape[-2] if getattr(attrs, "transpose_a", False) else lhs.shape[-1]
    return lhs.numel() * rhs.numel() / max(1, k * lhs.shape[0]) / _MACS_PER_US


def rnn(attrs, data, parameters, *rest) -> float:
    """A fused RNN: every parameter used once per time step and batch entry."""
    steps = data.shape[0] * data.shape[1] if data.dim() >= 2 else data.numel()
    return steps * parameters.numel() / _MACS_PER_US


def conv(attrs, data, weight, *rest) -> float:
    """A convolution, counted as if every input position made an output position."""
    channels = data.shape[1] if data.dim() > 1 and data.shape[1] else 1
    return data.numel() / channels * weight.numel() / _MACS_PER_US


def recorded(state, work: float) -> None:
    """Note a recorded call's estimate in ``state``: mx.autograd's per-thread state, whose
    ``work`` is the largest estimate since the outermost ``record()`` began."""
    if work > state.work:
        state.work = work


def recorded_result(state, result) -> None:
    """Note a recorded call of an operator without a ``work`` estimate: one pass over
    its result (what :func:`recorded` does, one call fewer: it runs per recorded call)."""
    work = result.numel() / _ELEMENTS_PER_US
    if work > state.work:
        state.work = work


def single(work: float = 0.0) -> int:
    """Set one thread when ``work`` (estimated single-thread microseconds; none: always)
    is under ``ONE_THREAD_US`` and more are set; returns the count for :func:`restore`,
    else 0."""
    if work >= ONE_THREAD_US:
        return 0
    threads = _threads()
    if threads <= 1:
        return 0
    _set_threads(1)
    return threads


def restore(threads: int) -> None:
    """Undo :func:`single`."""
    if threads:
        _set_threads(threads)

"""``mx.nd.contrib``: the contrib operators of the registry (``_contrib_ctc_loss`` is
``contrib.ctc_loss``) and MXNet's Python-level contrib functions: the ``isinf``/``isnan``/
``isfinite`` checks, the Zipfian candidate sampler and the imperative control flow
(``foreach``, ``while_loop``, ``cond``, plain Python loops over NDArrays)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..context import current_context
from .ndarray import NDArray, empty, invoke
from .register import populate as _populate
from .utils import logical_and

__all__ = ["rand_zipfian", "foreach", "while_loop", "cond", "isinf", "isfinite", "isnan",
           "adamw_update", "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update"]


# ---------------------------------------------------------------------- elementwise checks
def isinf(data: NDArray) -> NDArray:
    """1 where an element is +inf or -inf, 0 elsewhere (in the input's dtype).

    Parameters
    ----------
    data : NDArray
        The input.

    Returns
    -------
    NDArray
        Same shape and dtype as ``data``.
    """
    return abs(data) == np.inf


def isfinite(data: NDArray) -> NDArray:
    """1 where an element is neither infinite nor NaN, 0 elsewhere (in the input's dtype).

    Parameters
    ----------
    data : NDArray
        The input.

    Returns
    -------
    NDArray
        Same shape and dtype as ``data``.
    """
    return logical_and(abs(data) != np.inf, data == data)


def isnan(data: NDArray) -> NDArray:
    """1 where an element is NaN, 0 elsewhere (in the input's dtype).

    Parameters
    ----------
    data : NDArray
        The input.

    Returns
    -------
    NDArray
        Same shape and dtype as ``data``.
    """
    return data != data


# ---------------------------------------------------------------------- sampling
def rand_zipfian(true_classes: NDArray, num_sampled: int, range_max: int, ctx=None):
    """Sample ``num_sampled`` classes in ``[0, range_max)`` with replacement from the
    approximately log-uniform (Zipfian) distribution
    ``P(c) = (log(c + 2) - log(c + 1)) / log(range_max + 1)``.

    Parameters
    ----------
    true_classes : NDArray
        1-D array of the target classes.
    num_sampled : int
        How many classes to sample.
    range_max : int
        The number of classes.
    ctx : Context, optional
        Where the results live (default: the current context).

    Returns
    -------
    (NDArray, NDArray, NDArray)
        The sampled classes (int64), the expected count of each true class and of each
        sampled class (float64).
    """
    ctx = ctx or current_context()
    log_range = math.log(range_max + 1)
    rand = invoke("_random_uniform", [], {"low": 0.0, "high": log_range,
                                          "shape": (num_sampled,), "dtype": "float64"},
                  ctx=ctx)
    sampled = (rand.exp() - 1).astype("int64") % range_max

    def expected(classes: NDArray) -> NDArray:
        return ((classes + 2.0) / (classes + 1.0)).log() / log_range * num_sampled

    true_cls = true_classes.as_in_context(ctx).astype("float64")
    return sampled, expected(true_cls), expected(sampled.astype("float64"))


# ---------------------------------------------------------------------- control flow
def _flatten(args: Any, what: str) -> tuple[list, Any]:
    """A nested list of NDArrays -> (the arrays in order, its structure for _regroup)."""
    if isinstance(args, NDArray):
        return [args], 0
    if not isinstance(args, (list, tuple)):
        raise AssertionError(f"{what} must be (nested) list of NDArray, but got {args} of "
                             f"type {type(args)}")
    flat: list = []
    fmt = []
    for a in args:
        part, sub = _flatten(a, what)
        flat.extend(part)
        fmt.append(sub)
    return flat, fmt


def _regroup(flat: list, fmt: Any) -> tuple[Any, list]:
    """Rebuild the nesting ``fmt`` from the front of ``flat``; returns (it, the rest)."""
    if isinstance(fmt, int):
        return (flat[0], flat[1:]) if fmt == 0 else (flat[:fmt], flat[fmt:])
    out = []
    for sub in fmt:
        item, flat = _regroup(flat, sub)
        out.append(item)
    return out, flat


def _scalar(value: Any, kind: type, what: str):
    if isinstance(value, NDArray):
        value = value.asscalar()
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"Cannot convert {what} to python {kind.__name__}") from None


def foreach(body: Callable, data, init_states):
    """Run ``body`` over axis 0 of ``data``: ``out, states = body(data[i], states)``.

    Parameters
    ----------
    body : callable
        ``body(slice, states) -> (outputs, new_states)``; ``slice`` is an NDArray, or a
        list of them when ``data`` is a list.
    data : NDArray or list of NDArrays
        Iterated over their first axis.
    init_states : NDArray or nested list of NDArrays
        The states of the first step.

    Returns
    -------
    (outputs, states)
        Each step's outputs stacked on a new axis 0 (with the nesting of one step's
        outputs), and the states after the last step.
    """
    for what, value in (("data", data), ("init_states", init_states)):
        flat, _ = _flatten(value, f"foreach {what}")
        if not all(isinstance(x, NDArray) for x in flat):
            raise AssertionError(f"{what} should be an NDArray or a nested list of NDArrays")
    single = isinstance(data, NDArray)
    steps = data.shape[0] if single else data[0].shape[0]
    states = init_states
    per_step, fmt = [], 0
    for i in range(steps):
        outs, states = body(data[i] if single else [d[i] for d in data], states)
        outs, fmt = _flatten(outs, "foreach output")
        per_step.append(outs)
    stacked = [invoke("stack", list(items), {"num_args": len(items)})
               for items in zip(*per_step)]
    return _regroup(stacked, fmt)[0], states


def while_loop(cond: Callable, func: Callable, loop_vars, max_iterations=None):
    """Run ``func`` while ``cond(*loop_vars)`` is true, at most ``max_iterations`` times.

    Parameters
    ----------
    cond : callable
        ``cond(*loop_vars) -> NDArray`` holding one value; the loop stops when it is 0.
    func : callable
        ``func(*loop_vars) -> (step_output, new_loop_vars)``.
    loop_vars : NDArray or list of NDArrays
        The initial loop variables.
    max_iterations : int
        Required: the first axis of every stacked output.

    Returns
    -------
    (outputs, loop_vars)
        The step outputs stacked on axis 0 (padded to ``max_iterations`` rows, whose
        values past the last step are undefined), and the final loop variables.
    """
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _scalar(max_iterations, int, "max_iteration")
    if len(loop_vars) == 0:
        raise ValueError("loop_vars should contain at least one element")
    single = isinstance(loop_vars, NDArray)
    loop_vars = [loop_vars] if single else list(loop_vars)
    per_step: list = []
    fmt = None
    while len(per_step) < max_iterations and \
            _scalar(cond(*loop_vars), bool, "Return value of cond"):
        step_output, new_vars = func(*loop_vars)
        step_output = list(step_output) if isinstance(step_output, tuple) else \
            (step_output if step_output is not None else [])
        new_vars = [] if new_vars is None else new_vars
        new_vars = [new_vars] if isinstance(new_vars, NDArray) else list(new_vars)
        if len(new_vars) != len(loop_vars):
            raise ValueError("The length of loop_vars should be consistent during the loop")
        loop_vars = new_vars
        flat, fmt = _flatten(step_output, "while output")
        if per_step and len(flat) != len(per_step[0]):
            raise ValueError("Number of elements in step_output should be the same in each "
                             "step")
        per_step.append(flat)
    stacked = [_stack_padded(list(items), max_iterations, i)
               for i, items in enumerate(zip(*per_step), 1)]
    if fmt is not None:
        stacked, _ = _regroup(stacked, fmt)
    return stacked, loop_vars[0] if single else loop_vars


def _stack_padded(items: list, rows: int, index: int) -> NDArray:
    """Stack one output over the steps on axis 0, padded to ``rows`` (undefined values)."""
    items = [x.expand_dims(0) for x in items]
    if len(items) != rows:
        first = items[0]
        items.append(empty((rows - len(items),) + first.shape[1:], ctx=first.context,
                           dtype=first.dtype))
    shapes = {x.shape[1:] for x in items}
    if len(shapes) > 1:
        raise ValueError("\n".join(
            [f"Shapes of {index}-th elements in step_outputs are inconsistent, which are:"]
            + [f"  Step {i}, shape is {x.shape}" for i, x in enumerate(items)]))
    return invoke("Concat", items, {"dim": 0, "num_args": len(items)})


def cond(pred, then_func: Callable, else_func: Callable):
    """``then_func()`` when ``pred`` (an NDArray holding one value) is nonzero, else
    ``else_func()``.

    Parameters
    ----------
    pred : NDArray
        The condition, one element.
    then_func, else_func : callable
        Functions of no arguments returning an NDArray or a nested list of NDArrays.

    Returns
    -------
    What the chosen function returns.
    """
    return then_func() if _scalar(pred, bool, "pred") else else_func()


# ---------------------------------------------------------------------- AdamW updates
def _rescale_array(rescale_grad, ctx) -> NDArray:
    """``rescale_grad`` as the one-element array the AdamW operators take."""
    if isinstance(rescale_grad, NDArray):
        return rescale_grad
    from .utils import full
    return full(shape=(1,), val=rescale_grad, ctx=ctx)


def _interleaved(*lists) -> list:
    """[(w0, g0, ...), (w1, g1, ...)] flattened: w0, g0, ..., w1, g1, ..."""
    return [x for group in zip(*lists) for x in group]


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """AdamW step (``_adamw_update``); ``rescale_grad`` may be a number or an NDArray, and
    the update is skipped when it is NaN, Inf or 0.

    ``mean`` and ``var`` are updated in place; pass ``out=weight`` to update the weight.
    """
    return invoke("_adamw_update", [weight, grad, mean, var,
                                    _rescale_array(rescale_grad, weight.context)],
                  dict(lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                       clip_gradient=clip_gradient, **kwargs), out=out)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                    **kwargs):
    """Multi-precision AdamW step (``_mp_adamw_update``) through the float32 ``weight32``."""
    return invoke("_mp_adamw_update", [weight, grad, mean, var, weight32,
                                       _rescale_array(rescale_grad, weight.context)],
                  dict(lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                       clip_gradient=clip_gradient, **kwargs), out=out)


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None,
                       name=None, size=0, **kwargs):
    """AdamW steps of several weights at once (``_multi_adamw_update``)."""
    size = size or len(weights)
    data = _interleaved(weights, grads, mean, var)
    data.append(_rescale_array(rescale_grad, weights[0].context))
    return invoke("_multi_adamw_update", data,
                  dict(num_weights=size, lrs=lrs, wds=wds, etas=etas, **kwargs), out=out)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas,
                          out=None, name=None, size=0, **kwargs):
    """Multi-precision AdamW steps of several weights (``_multi_mp_adamw_update``)."""
    size = size or len(weights)
    data = _interleaved(weights, grads, mean, var, weights32)
    data.append(_rescale_array(rescale_grad, weights[0].context))
    return invoke("_multi_mp_adamw_update", data,
                  dict(num_weights=size, lrs=lrs, wds=wds, etas=etas, **kwargs), out=out)


__all__ += _populate(globals(), "contrib")

"""Adaptive optimizers: Adam, AdaGrad, RMSProp, AdaDelta, Ftrl, Adamax, Nadam, FTML, LAMB, Test."""
from __future__ import annotations

import math
import os

import numpy

from .. import ndarray as nd
from ..ndarray import NDArray
from .base import Optimizer, register

__all__ = ["Adam", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "Adamax", "Nadam", "FTML",
           "LAMB", "Test"]


def _zeros_like(weight, dtype=None):
    """Zeros with the weight's shape and context (float32 unless ``dtype``)."""
    return nd.zeros(weight.shape, weight.context, dtype=dtype)


def _check(weight, grad):
    assert isinstance(weight, NDArray)
    assert isinstance(grad, NDArray)


def _clip_kw(opt, kwargs, key='clip_gradient'):
    """Add clip_gradient to op kwargs when set (MXNet tests truthiness)."""
    if opt.clip_gradient:
        kwargs[key] = opt.clip_gradient
    return kwargs


def _clipped(opt, grad):
    """``clip(grad, -clip_gradient, clip_gradient)`` when clip_gradient is not None."""
    if opt.clip_gradient is not None:
        return nd.clip(grad, -opt.clip_gradient, opt.clip_gradient)
    return grad


@register
class Adam(Optimizer):
    """The Adam optimizer (*Adam: A Method for Stochastic Optimization*).

    At step t::

        rescaled_grad = clip(grad * rescale_grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * rescaled_grad
        v = beta2 * v + (1 - beta2) * (rescaled_grad**2)
        lr = learning_rate * sqrt(1 - beta2**t) / (1 - beta1**t)
        w = w - lr * m / (sqrt(v) + epsilon)

    Parameters
    ----------
    beta1 : float, optional
        Exponential decay rate for the first moment estimates.
    beta2 : float, optional
        Exponential decay rate for the second moment estimates.
    epsilon : float, optional
        Small value to avoid division by 0.
    lazy_update : bool, optional
        Default is True (only meaningful for row_sparse storage).
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (_zeros_like(weight, weight.dtype),  # mean
                _zeros_like(weight, weight.dtype))  # variance

    def update(self, index, weight, grad, state):
        _check(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        coef1 = 1. - self.beta1 ** t
        coef2 = 1. - self.beta2 ** t
        lr *= math.sqrt(coef2) / coef1
        kwargs = _clip_kw(self, {'beta1': self.beta1, 'beta2': self.beta2,
                                 'epsilon': self.epsilon, 'rescale_grad': self.rescale_grad})
        mean, var = state
        nd.adam_update(weight, grad, mean, var, out=weight, lazy_update=self.lazy_update,
                       lr=lr, wd=wd, **kwargs)


@register
class AdaGrad(Optimizer):
    """AdaGrad optimizer.

    This optimizer updates each weight by::

        grad = clip(grad * rescale_grad, clip_gradient)
        history += square(grad)
        div = grad / sqrt(history + float_stable_eps)
        weight += (div + weight * wd) * -lr

    Parameters
    ----------
    eps : float, optional
        Initial value of the history accumulator. Avoids division by 0.
    """

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return _zeros_like(weight)  # history

    def update(self, index, weight, grad, state):
        _check(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        history = state
        grad = _clipped(self, grad * self.rescale_grad)
        history[:] += nd.square(grad)
        div = grad / nd.sqrt(history + self.float_stable_eps)
        weight[:] += (div + weight * wd) * -lr


@register
class RMSProp(Optimizer):
    """The RMSProp optimizer (Tieleman & Hinton, or Graves' centered version).

    Parameters
    ----------
    gamma1 : float, optional
        A decay factor of moving average over past squared gradient.
    gamma2 : float, optional
        A "momentum" factor. Only used if `centered`=``True``.
    epsilon : float, optional
        Small value to avoid division by 0.
    centered : bool, optional
        True: Graves's version (``rmspropalex_update``); False: Tieleman & Hinton's
        (``rmsprop_update``).
    clip_weights : float, optional
        Clips weights into range ``[-clip_weights, clip_weights]``.
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9,
                 epsilon=1e-8, centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        if self.centered:
            return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))  # n, g, delta
        return (_zeros_like(weight),)  # n

    def update(self, index, weight, grad, state):
        _check(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = {'gamma1': self.gamma1, 'epsilon': self.epsilon,
                  'rescale_grad': self.rescale_grad}
        if self.centered:
            kwargs['gamma2'] = self.gamma2
        _clip_kw(self, kwargs)
        if self.clip_weights:
            kwargs['clip_weights'] = self.clip_weights
        if not self.centered:
            (n,) = state
            nd.rmsprop_update(weight, grad, n, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            n, g, delta = state
            nd.rmspropalex_update(weight, grad, n, g, delta, out=weight, lr=lr, wd=wd,
                                  **kwargs)


@register
class AdaDelta(Optimizer):
    """The AdaDelta optimizer (*ADADELTA: An adaptive learning rate method*).

    This optimizer updates each weight by::

        grad = clip(grad * rescale_grad, clip_gradient)
        acc_grad = rho * acc_grad + (1. - rho) * grad * grad
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_grad + epsilon) * grad
        acc_delta = rho * acc_delta + (1. - rho) * delta * delta
        weight -= (delta + wd * weight)

    Parameters
    ----------
    rho : float
        Decay rate for both squared gradients and delta.
    epsilon : float
        Small value to avoid division by 0.
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (_zeros_like(weight),  # accumulated g
                _zeros_like(weight))  # accumulated delta

    def update(self, index, weight, grad, state):
        _check(weight, grad)
        wd = self._get_wd(index)
        self._update_count(index)
        # MXNet: ``grad *= rescale_grad`` scales the caller's gradient array in place.
        grad *= self.rescale_grad
        grad = _clipped(self, grad)
        acc_g, acc_delta = state
        acc_g[:] *= self.rho
        acc_g[:] += (1. - self.rho) * grad * grad
        current_delta = nd.sqrt(acc_delta + self.epsilon) / nd.sqrt(acc_g + self.epsilon) * grad
        acc_delta[:] *= self.rho
        acc_delta[:] += (1. - self.rho) * current_delta * current_delta
        weight[:] -= current_delta + wd * weight


@register
class Ftrl(Optimizer):
    """The Ftrl optimizer (*Ad Click Prediction: a View from the Trenches*).

    The optimizer updates the weight by::

        rescaled_grad = clip(grad * rescale_grad, clip_gradient)
        z += rescaled_grad - (sqrt(n + rescaled_grad**2) - sqrt(n)) * weight / learning_rate
        n += rescaled_grad**2
        w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / learning_rate + wd) * (abs(z) > lamda1)

    Parameters
    ----------
    lamda1 : float, optional
        L1 regularization coefficient.
    learning_rate : float, optional
        The initial learning rate.
    beta : float, optional
        Per-coordinate learning rate correlation parameter.
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        # MXNet: learning_rate is not passed to the base class, it only sets self.lr
        # (so an lr_scheduler's base_lr is not overwritten).
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # z, n

    def update(self, index, weight, grad, state):
        _check(weight, grad)
        self._update_count(index)
        wd = self._get_wd(index)
        lr = self._get_lr(index)
        kwargs = _clip_kw(self, {'lamda1': self.lamda1, 'beta': self.beta,
                                 'rescale_grad': self.rescale_grad})
        z, n = state
        nd.ftrl_update(weight, grad, z, n, out=weight, lr=lr, wd=wd, **kwargs)


@register
class Adamax(Optimizer):
    """The AdaMax optimizer (Adam with the infinity norm).

    The optimizer updates the weight by::

        grad = clip(grad * rescale_grad + wd * weight, clip_gradient)
        m = beta1 * m_t + (1 - beta1) * grad
        u = maximum(beta2 * u, abs(grad))
        weight -= lr / (1 - beta1**t) * m / u

    Parameters
    ----------
    beta1 : float, optional
        Exponential decay rate for the first moment estimates.
    beta2 : float, optional
        Exponential decay rate for the second moment estimates.
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return (_zeros_like(weight, weight.dtype),  # mean
                _zeros_like(weight, weight.dtype))  # variance

    def update(self, index, weight, grad, state):
        _check(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        lr /= (1. - self.beta1 ** t)
        grad = _clipped(self, grad * self.rescale_grad + wd * weight)
        m_t, u_t = state
        m_t[:] *= self.beta1
        m_t[:] += (1. - self.beta1) * grad
        u_t[:] = nd.maximum(self.beta2 * u_t, nd.abs(grad))
        weight[:] -= lr * m_t / u_t


@register
class Nadam(Optimizer):
    """The Nesterov Adam optimizer.

    Parameters
    ----------
    beta1 : float, optional
        Exponential decay rate for the first moment estimates.
    beta2 : float, optional
        Exponential decay rate for the second moment estimates.
    epsilon : float, optional
        Small value to avoid division by 0.
    schedule_decay : float, optional
        Exponential decay rate for the momentum schedule.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def create_state(self, index, weight):
        return (_zeros_like(weight, weight.dtype),  # mean
                _zeros_like(weight, weight.dtype))  # variance

    def update(self, index, weight, grad, state):
        _check(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        grad = _clipped(self, grad * self.rescale_grad + wd * weight)
        # MXNet: m_schedule is one scalar shared by every parameter index.
        momentum_t = self.beta1 * (1. - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1. - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * momentum_t
        m_schedule_next = self.m_schedule * momentum_t_1
        m_t, v_t = state
        m_t[:] *= self.beta1
        m_t[:] += (1. - self.beta1) * grad
        v_t[:] *= self.beta2
        v_t[:] += (1. - self.beta2) * grad * grad
        grad_prime = grad / (1. - self.m_schedule)
        m_t_prime = m_t / (1. - m_schedule_next)
        v_t_prime = v_t / (1. - pow(self.beta2, t))
        m_t_bar = (1. - momentum_t) * grad_prime + momentum_t_1 * m_t_prime
        weight[:] -= lr * m_t_bar / (nd.sqrt(v_t_prime) + self.epsilon)


@register
class FTML(Optimizer):
    """The FTML optimizer (*FTML - Follow the Moving Leader in Deep Learning*).

    For details of the update algorithm, see :func:`~mxtorch.ndarray.ftml_update`.

    Parameters
    ----------
    beta1 : float, optional
        0 < beta1 < 1. Generally close to 0.5.
    beta2 : float, optional
        0 < beta2 < 1. Generally close to 1.
    epsilon : float, optional
        Small value to avoid division by 0.
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return tuple(_zeros_like(weight, weight.dtype) for _ in range(3))  # d_0, v_0, z_0

    def update(self, index, weight, grad, state):
        _check(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        kwargs = _clip_kw(self, {'beta1': self.beta1, 'beta2': self.beta2,
                                 'epsilon': self.epsilon, 'rescale_grad': self.rescale_grad,
                                 't': t}, key='clip_grad')
        prev_d, prev_v, prev_z = state
        nd.ftml_update(weight, grad, prev_d, prev_v, prev_z, out=weight, lr=lr, wd=wd, **kwargs)


@register
class LAMB(Optimizer):
    """LAMB Optimizer (*Large Batch Optimization for Deep Learning*).

    Parameters
    ----------
    beta1, beta2, epsilon : float, optional
        Adam-style moment decay rates and stability constant.
    lower_bound, upper_bound : float, optional
        Bounds of the weight norm used in the trust ratio.
    bias_correction : bool, optional
        Whether to bias-correct the moments.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE',
                                                          "45"))))

    def create_state(self, index, weight):
        return (_zeros_like(weight, weight.dtype), _zeros_like(weight, weight.dtype))

    def _update_one(self, index, weight, grad, state, multi_precision, aggregated=False):
        """Phase 1 (moments, direction g) then phase 2 (trust-ratio step) for one weight."""
        _check(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = _clip_kw(self, {'beta1': self.beta1, 'beta2': self.beta2,
                                 'epsilon': self.epsilon, 'bias_correction': self.bias_correction,
                                 'rescale_grad': self.rescale_grad,
                                 't': self._index_update_count[index]})
        bounds = {}
        if self.lower_bound:
            bounds['lower_bound'] = self.lower_bound
        if self.upper_bound:
            bounds['upper_bound'] = self.upper_bound
        if multi_precision:
            (mean, var), weight32 = state[1], state[0]
            g = nd.mp_lamb_update_phase1(weight, grad, mean, var, weight32, wd=wd, **kwargs)
            if aggregated:
                # multi_mp_lamb_update (lists) writes the float32 master copy back ...
                nd.lamb_update_phase2(weight32, g, weight32.norm(), g.norm(), lr=lr,
                                      out=weight32, **bounds)
                nd.cast(weight32, dtype=weight.dtype, out=weight)
            else:
                # ... MXNet's mp_lamb_update_phase2 (single tensor) does not.
                nd.mp_lamb_update_phase2(weight, g, weight32.norm(), g.norm(), weight32,
                                         lr=lr, out=weight, **bounds)
        else:
            mean, var = state
            g = nd.lamb_update_phase1(weight, grad, mean, var, wd=wd, **kwargs)
            nd.lamb_update_phase2(weight, g, weight.norm(), g.norm(), lr=lr, out=weight,
                                  **bounds)

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        # MXNet routes lists (what the Updater passes) through _multi_(mp_)lamb_update,
        # the same per-tensor arithmetic; here lists run tensor by tensor.
        if not isinstance(index, (tuple, list)):
            self._update_one(index, weight, grad, state, multi_precision)
            return
        for i, w, g, s in zip(index, weight, grad, state):
            self._update_one(i, w, g, s, multi_precision, aggregated=self.aggregate_num > 1)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        w = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and w.dtype == numpy.float16)


@register
class Test(Optimizer):
    """The Test optimizer: ``weight += rescale_grad * grad``; the state copies the weight."""

    def create_state(self, index, weight):
        """Creates a state to duplicate weight."""
        return nd.zeros(weight.shape, weight.context)

    def update(self, index, weight, grad, state):
        """Performs w += rescale_grad * grad."""
        weight[:] += grad * self.rescale_grad
        state[:] = weight

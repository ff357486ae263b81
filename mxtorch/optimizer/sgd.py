"""SGD-family optimizers: SGD, ccSGD, NAG, Signum, LARS, DCASGD, SGLD."""
from __future__ import annotations

import math
import os
import warnings

import numpy
from ..ops.optim import sgd_foreach_

from .. import ndarray as nd
from ..ndarray import NDArray
from .base import Optimizer, _flatten_list, register

__all__ = ["SGD", "ccSGD", "NAG", "Signum", "LARS", "DCASGD", "SGLD"]


def _as_lists(indices, weights, grads, states):
    """Wrap a single update into one-element lists."""
    if not isinstance(indices, (tuple, list)):
        return [indices], [weights], [grads], [states]
    return indices, weights, grads, states


def _mp_state_with_copy(opt, index, weight, name):
    """SGD/NAG/LARS multi-precision state: ``(state, weight32)`` (note the order)."""
    if opt.multi_precision and weight.dtype == numpy.float16:
        weight_master_copy = weight.astype(numpy.float32)
        return (opt.create_state(index, weight_master_copy), weight_master_copy)
    if weight.dtype == numpy.float16 and not opt.multi_precision:
        warnings.warn("Accumulating with float16 in optimizer can lead to "
                      "poor accuracy or slow convergence. "
                      "Consider using multi_precision=True option of the "
                      f"{name} optimizer")
    return opt.create_state(index, weight)


def _sgd_kwargs(opt, momentum):
    """rescale_grad, momentum (when > 0) and clip_gradient (when set) as op kwargs."""
    kwargs = {'rescale_grad': opt.rescale_grad}
    if opt.momentum > 0:
        kwargs['momentum'] = momentum
    if opt.clip_gradient:
        kwargs['clip_gradient'] = opt.clip_gradient
    return kwargs


def _use_mp(opt, index, weight):
    """Whether this (possibly aggregated) update runs in multi precision."""
    w = weight[0] if isinstance(index, (tuple, list)) else weight
    return opt.multi_precision and w.dtype == numpy.float16


def _sgd_inplace(opt, weights, grads, states, lrs, wds) -> bool:
    """``multi_sgd(_mom)_update`` applied in place (see ``ops.optim.sgd_foreach_``)."""
    moms = [s._t for s in states] if opt.momentum > 0 else None
    return sgd_foreach_([w._t for w in weights], [g._t for g in grads], moms, lrs, wds,
                        opt.momentum, opt.rescale_grad, opt.clip_gradient)


@register
class SGD(Optimizer):
    """The SGD optimizer with momentum and weight decay.

    Standard updates are applied by::

        rescaled_grad = lr * (rescale_grad * clip(grad, clip_gradient) + wd * weight)
        state = momentum * state + rescaled_grad
        weight = weight - state

    Several weights passed at once go through the fused ``multi_sgd_update`` family (MXNet
    aggregates up to ``MXNET_OPTIMIZER_AGGREGATION_SIZE``, default 4; mxtorch's Updater
    hands all weights of one dtype to one multi-tensor update, with equal results).

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    lazy_update : bool, optional
        Default is True. Lazy (row-sparse) updates; mxtorch arrays are dense.
    multi_precision : bool, optional
        Keep and update a float32 master copy of float16 weights.
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE', "4"))

    _foreach_update = True  # the Updater may pass any number of weights at once

    def create_state_multi_precision(self, index, weight):
        return _mp_state_with_copy(self, index, weight, "SGD")

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return nd.zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        indices, weights, grads, states = _as_lists(indices, weights, grads, states)
        for weight, grad in zip(weights, grads):
            assert isinstance(weight, NDArray)
            assert isinstance(grad, NDArray)
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        kwargs = _sgd_kwargs(self, self.momentum)
        weights = list(weights)
        n = len(weights)
        if not multi_precision and _sgd_inplace(self, weights, grads, states, lrs, wds):
            return
        if not multi_precision:
            if self.momentum > 0:
                nd.multi_sgd_mom_update(*_flatten_list(zip(weights, grads, states)),
                                        out=weights, num_weights=n, lrs=lrs, wds=wds, **kwargs)
            else:
                nd.multi_sgd_update(*_flatten_list(zip(weights, grads)), out=weights,
                                    num_weights=n, lrs=lrs, wds=wds, **kwargs)
        elif self.momentum > 0:
            nd.multi_mp_sgd_mom_update(*_flatten_list(zip(weights, grads, *zip(*states))),
                                       out=weights, num_weights=n, lrs=lrs, wds=wds, **kwargs)
        else:
            nd.multi_mp_sgd_update(*_flatten_list(zip(weights, grads, list(zip(*states))[1])),
                                   out=weights, num_weights=n, lrs=lrs, wds=wds, **kwargs)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state,
                          multi_precision=_use_mp(self, index, weight))


@register
class ccSGD(SGD):
    """[DEPRECATED] Same as `SGD`. Left here for backward compatibility."""


@register
class Signum(Optimizer):
    """The Signum optimizer that takes the sign of gradient or momentum.

    The optimizer updates the weight by::

        rescaled_grad = rescale_grad * clip(grad, clip_gradient) + wd * weight
        state = momentum * state + (1-momentum)*rescaled_grad
        weight = (1 - lr * wd_lh) * weight - lr * sign(state)

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    wd_lh : float, optional
        The amount of decoupled weight decay regularization.
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return nd.zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = _sgd_kwargs(self, self.momentum)
        if self.wd_lh:
            kwargs['wd_lh'] = self.wd_lh
        if state is not None:
            nd.signum_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            kwargs.pop('wd_lh', None)
            nd.signsgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient.

    This optimizer updates each weight by::

        state = momentum * state + grad + wd * weight
        weight = weight - (lr * (grad + momentum * state))

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    multi_precision : bool, optional
        Keep and update a float32 master copy of float16 weights.
    """

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state_multi_precision(self, index, weight):
        return _mp_state_with_copy(self, index, weight, "NAG")

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return nd.zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = _sgd_kwargs(self, self.momentum)
        if not multi_precision:
            if state is not None:
                self._nag_inplace(weight, grad, state, lr, wd, kwargs)
            else:
                nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
        elif state[0] is not None:
            nd.mp_nag_mom_update(weight, grad, state[0], state[1], out=weight,
                                 lr=lr, wd=wd, **kwargs)
        else:
            nd.mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd, **kwargs)

    @staticmethod
    def _nag_inplace(weight, grad, mom, lr, wd, kwargs):
        """nag_mom_update with out=weight, as MXNet's kernel computes it in place."""
        if not wd:
            nd.nag_mom_update(weight, grad, mom, out=weight, lr=lr, wd=wd, **kwargs)
            return
        # MXNet: with out=weight the kernel writes the weight first and then the momentum
        # from the UPDATED weight (wd term); reproduce that aliasing effect.
        mom_old = mom.copy()
        nd.nag_mom_update(weight, grad, mom, out=weight, lr=lr, wd=wd, **kwargs)
        g = grad * kwargs['rescale_grad']
        if kwargs.get('clip_gradient', -1) >= 0:
            g = nd.clip(g, -kwargs['clip_gradient'], kwargs['clip_gradient'])
        mom[:] = mom_old * kwargs.get('momentum', 0.0) - lr * (g + wd * weight)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        use_mp = self.multi_precision and weight.dtype == numpy.float16 \
            and isinstance(state, (tuple, list))
        self._update_impl(index, weight, grad, state, multi_precision=use_mp)


def _is_no_lars(name: str) -> bool:
    """LARS leaves biases and normalization parameters unscaled."""
    return name.endswith('gamma') or name.endswith('beta') or name.endswith('bias')


@register
class LARS(Optimizer):
    """The LARS optimizer from 'Large Batch Training of Convolution Networks'.

    Like SGD with momentum, with a per-layer learning rate (except bias and batch norm
    parameters)::

        lr_layer = lr * lr_mult * eta * w_norm / (g_norm + weight_decay * w_norm + eps)

    when both norms are positive, else ``lr * lr_mult``.

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    lazy_update : bool, optional
        Default is True.
    eta : float, optional
        LARS coefficient used to scale the learning rate.
    eps : float, optional
        Epsilon in case of very small gradients.
    momentum_correction : bool, optional
        Scale the momentum by the global learning rate change (with an lr_scheduler).
    """

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE', "4"))
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return self._apply_mults([lr for _ in indices], indices, 'lr_mult', self.lr_mult)

    def set_wd_mult(self, args_wd_mult):
        # MXNet: unlike the base class, only names ending with '_weight' keep weight decay.
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not n.endswith('_weight'):
                self.wd_mult[n] = 0.0
        self.wd_mult.update(self._sym_mults('__wd_mult__'))
        self.wd_mult.update(args_wd_mult)

    def create_state_multi_precision(self, index, weight):
        return _mp_state_with_copy(self, index, weight, "SGD")

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return nd.zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _l2norm(self, v, rescale=False):
        """L2 norm (float32) of an NDArray, as a Python float."""
        v = v.astype('float32')
        if rescale:
            v *= self.rescale_grad
        return nd.norm(v).asnumpy()[0]

    def _get_lars(self, i, weight, g, lr, wd):
        """Scaled learning rate of one layer."""
        name = self.idx2name[i] if i in self.idx2name else str(i)
        if _is_no_lars(name):
            return lr
        w_norm = self._l2norm(weight)
        g_norm = self._l2norm(g, rescale=True)
        if w_norm > 0.0 and g_norm > 0.0:
            lars = self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        else:
            lars = 1.0
        return lars * lr

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        indices, weights, grads, states = _as_lists(indices, weights, grads, states)
        for weight, grad in zip(weights, grads):
            assert isinstance(weight, NDArray)
            assert isinstance(grad, NDArray)
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        momentum = self.momentum
        if self.momentum > 0 and self.momentum_correction and self.last_lr != 0:
            momentum = self.momentum * (self.cur_lr / self.last_lr)
        kwargs = _sgd_kwargs(self, momentum)
        # MXNet: dense arrays always take the aggregated (multi_lars) path; the per-layer
        # _get_lars path is for row_sparse storage, which mxtorch does not have.
        self._update_aggregated(indices, weights, grads, states, lrs, wds,
                                multi_precision, kwargs)

    def _update_aggregated(self, indices, weights, grads, states, lrs, wds,
                           multi_precision, kwargs):
        """multi_sum_sq + multi_lars, then the preloaded_multi_*sgd* operators."""
        names = [self.idx2name[i] if i in self.idx2name else str(i) for i in indices]
        lars_idx = [i for i, nm in enumerate(names) if not _is_no_lars(nm)]
        order = lars_idx + [i for i, nm in enumerate(names) if _is_no_lars(nm)]
        nb_lars = len(lars_idx)
        ctx = weights[0].context
        new_lrs = nd.array([lrs[i] for i in order], ctx=ctx, dtype='float32')
        new_wds = nd.array([wds[i] for i in order], ctx=ctx, dtype='float32')
        ws, gs, ss = ([seq[i] for i in order] for seq in (weights, grads, states))
        if nb_lars > 0:
            w_sum_sq = nd.multi_sum_sq(*ws[:nb_lars], num_arrays=nb_lars)
            g_sum_sq = nd.multi_sum_sq(*gs[:nb_lars], num_arrays=nb_lars)
            nd.multi_lars(new_lrs[:nb_lars], w_sum_sq, g_sum_sq, new_wds[:nb_lars],
                          eta=self.eta, eps=self.eps, rescale_grad=self.rescale_grad,
                          out=new_lrs[:nb_lars])
        for s in range(0, len(indices), self.aggregate_num):
            e = min(s + self.aggregate_num, len(indices))
            w, g, st = ws[s:e], gs[s:e], ss[s:e]
            if not multi_precision:
                data = _flatten_list(zip(w, g, st)) if self.momentum > 0 else \
                    _flatten_list(zip(w, g))
                op = nd.preloaded_multi_sgd_mom_update if self.momentum > 0 \
                    else nd.preloaded_multi_sgd_update
            else:
                data = _flatten_list(zip(w, g, *zip(*st))) if self.momentum > 0 else \
                    _flatten_list(zip(w, g, list(zip(*st))[1]))
                op = nd.preloaded_multi_mp_sgd_mom_update if self.momentum > 0 \
                    else nd.preloaded_multi_mp_sgd_update
            op(*(data + [new_lrs[s:e], new_wds[s:e]]), out=w, num_weights=len(w), **kwargs)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state,
                          multi_precision=_use_mp(self, index, weight))


@register
class DCASGD(Optimizer):
    """The DCASGD optimizer (Asynchronous SGD with Delay Compensation).

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    lamda : float, optional
        Scale DC value.
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return (None, weight.copy())  # previous weight
        return (nd.zeros(weight.shape, weight.context, dtype=weight.dtype),  # momentum
                weight.copy())  # previous weight

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        mom, previous_weight = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous_weight))
        if mom is not None:
            mom[:] *= self.momentum
            mom[:] += step
        else:
            assert self.momentum == 0.0
            mom = step
        previous_weight[:] = weight
        weight[:] += mom


@register
class SGLD(Optimizer):
    """Stochastic Gradient Riemannian Langevin Dynamics.

    ``weight += -lr/2 * (grad + wd * weight) + normal(0, sqrt(lr))``.
    """

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        weight[:] += - lr / 2 * (grad + wd * weight)
        weight[:] += nd.random.normal(0, math.sqrt(lr), shape=weight.shape,
                                      dtype=weight.dtype, ctx=weight.context)

"""LBSGD: SGD for large batches, emulated by accumulating gradients over ``batch_scale``
updates, with a warm-up of the learning rate (MXNet 1.9.1 ``mx.optimizer.LBSGD``)."""
from __future__ import annotations

import logging
import math
import warnings

import numpy

from .. import ndarray as nd
from ..ndarray import NDArray
from .base import Optimizer, register

_LOG = logging.getLogger(__name__)

__all__ = ["LBSGD"]


def _warmup_mult(strategy: str, nup: int, nwup: int, maxmult: float) -> float:
    """Learning-rate multiplier after ``nup`` of ``nwup`` warm-up updates."""
    if nup >= nwup:
        return maxmult
    if nwup <= 1:
        return 1.0
    if strategy == 'linear':
        return 1.0 + (maxmult - 1) * nup / nwup
    if strategy == 'power2':
        return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
    if strategy == 'sqrt':
        return 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
    return 1.0


@register
class LBSGD(Optimizer):
    """The Large Batch SGD optimizer with momentum and weight decay.

    Gradients are summed over ``batch_scale`` calls; every ``batch_scale``-th call applies
    one SGD step (``sgd_update``/``sgd_mom_update``) with the mean gradient and the
    learning rate scaled by the warm-up schedule (or by LARS, the layer-wise adaptive
    rate, with ``warmup_strategy='lars'``). The other calls leave the weight unchanged.

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    multi_precision : bool, optional
        Keep and update a float32 master copy of float16 weights.
    warmup_strategy : {'linear', 'power2', 'sqrt', 'lars'}, default 'linear'
        How the multiplier grows from 1 to ``batch_scale`` during warm-up.
    warmup_epochs : int, default 5
        Length of the warm-up, in epochs.
    batch_scale : int, default 1
        Number of gradients accumulated per update (large batch / actual batch).
    updates_per_epoch : int, default 32
        Updates per epoch, used to measure the warm-up.
    begin_epoch : int, default 0
        The epoch training starts at.
    num_epochs : int, default 60
        The total number of epochs.
    """

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy='linear',
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(**kwargs)
        _LOG.info('Running Large-Batch SGD Algorithm')
        _LOG.info('(Batch_scale=%f, warmup_epochs=%d, warmup_strategy=%s, '
                  'updates_per_epoch=%d)', batch_scale, warmup_epochs, warmup_strategy,
                  updates_per_epoch)
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads: dict = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index, weight):
        """Momentum (or None), or ``(momentum, weight32)`` for multi-precision float16."""
        if self.multi_precision and weight.dtype == numpy.float16:
            master = weight.astype(numpy.float32)
            mom = nd.zeros(weight.shape, weight.context, dtype=numpy.float32) \
                if self.momentum != 0.0 else None
            return (mom, master)
        if weight.dtype == numpy.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to "
                          "poor accuracy or slow convergence. "
                          "Consider using multi_precision=True option of the "
                          "SGD optimizer")
        if self.momentum != 0.0:
            return nd.zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _get_lbmult(self, nup):
        """The warm-up learning-rate multiplier after ``nup`` accumulated gradients."""
        return _warmup_mult(self.warmup_strategy, nup,
                            self.warmup_epochs * self.updates_per_epoch,
                            float(self.batch_scale))

    def _l2norm(self, v):
        """Sum of squares of ``v`` (a Python float)."""
        return float((v * v).asnumpy().sum())

    def _get_lars(self, weight, g, wd):
        """The LARS multiplier ``sqrt(|w|^2 / (|g|^2 + wd |w|^2))``, clipped to [0.01, 100]."""
        weight2 = self._l2norm(weight)
        grad2 = self._l2norm(g)
        lars = math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18))
        return min(max(lars, 0.01), 100.0)

    def _cumulate_gradient(self, grad, index):
        """Add ``grad`` to the running sum of ``index``; returns ``{cum_grad, num_cums}``."""
        cgrad = self.cumgrads.get(index, {})
        if cgrad and cgrad['num_cums'] > 0:
            cgrad = {'cum_grad': cgrad['cum_grad'] + grad, 'num_cums': cgrad['num_cums'] + 1}
        else:
            # MXNet: the first gradient is kept by reference, not copied.
            cgrad = {'cum_grad': grad, 'num_cums': self.init_updates + 1}
        self.cumgrads[index] = cgrad
        return cgrad

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        if cgrad['num_cums'] % self.batch_scale != 0:
            # MXNet: an SGD step with lr 0, which leaves the weight as it is.
            nd.sgd_update(weight, grad, out=weight, lr=0.0, wd=wd)
            return
        grad = cgrad['cum_grad'] / self.batch_scale
        if self.warmup_strategy == 'lars':
            lr *= self._get_lars(weight, grad, wd)
        else:
            lr *= self._get_lbmult(cgrad['num_cums'])
        kwargs = {'rescale_grad': self.rescale_grad}
        if self.momentum > 0:
            kwargs['momentum'] = self.momentum
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient
        if not isinstance(state, (list, tuple)):
            if state is not None:
                nd.sgd_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
            else:
                nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
        elif state[0] is not None:
            nd.mp_sgd_mom_update(weight, grad, state[0], state[1], out=weight, lr=lr, wd=wd,
                                 **kwargs)
        else:
            nd.mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd, **kwargs)
        self.cumgrads[index]['cum_grad'] = 0

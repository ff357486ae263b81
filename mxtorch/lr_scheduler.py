"""Scheduling learning rate (``mx.lr_scheduler``), as MXNet 1.9.1.

A scheduler is called with ``num_update`` (the largest number of updates applied to any
weight) and returns the learning rate. ``FactorScheduler`` and ``MultiFactorScheduler``
change ``base_lr`` as they go, exactly like MXNet's (they are stateful and expect
non-decreasing ``num_update``).
"""
from __future__ import annotations

import logging
from math import cos, pi

_LOG = logging.getLogger(__name__)

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


class LRScheduler:
    """Base class of a learning rate scheduler.

    Parameters
    ----------
    base_lr : float, optional
        The initial learning rate.
    warmup_steps : int
        Number of warmup steps used before this scheduler starts decay.
    warmup_begin_lr : float
        If using warmup, the learning rate from which it starts warming up.
    warmup_mode : str
        ``'linear'`` increases the lr in equal increments each step, ``'constant'`` keeps
        it at ``warmup_begin_lr`` for ``warmup_steps``.
    """

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        self.base_lr = base_lr
        assert isinstance(warmup_steps, int)
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr")
        if self.warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0")
        if warmup_mode not in ['linear', 'constant']:
            raise ValueError("Supports only linear and constant modes of warmup")
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """Learning rate during warmup (``num_update < warmup_steps``)."""
        assert num_update < self.warmup_steps
        if self.warmup_mode == 'linear':
            increase = (self.warmup_final_lr - self.warmup_begin_lr) \
                * float(num_update) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase
        if self.warmup_mode == 'constant':
            return self.warmup_begin_lr
        raise ValueError("Invalid warmup mode %s" % self.warmup_mode)

    def __call__(self, num_update):
        """Return the learning rate for ``num_update`` (the max update count of any weight)."""
        raise NotImplementedError("must override this")


class FactorScheduler(LRScheduler):
    """Reduce the learning rate by a factor for every *n* steps.

    It returns ``base_lr * pow(factor, floor(num_update/step))`` (but never less than
    ``stop_factor_lr``).

    Parameters
    ----------
    step : int
        Changes the learning rate for every n updates.
    factor : float, optional
        The factor to change the learning rate.
    stop_factor_lr : float, optional
        Stop updating the learning rate if it is less than this value.
    """

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # MXNet: a while loop (continuing training via load_epoch); the change happens once
        # num_update > count + step, so the first decay is at update step + 1.
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                _LOG.info("Update[%d]: now learning rate arrived at %0.5e, will not "
                          "change in the future", num_update, self.base_lr)
            else:
                _LOG.info("Update[%d]: Change learning rate to %0.5e",
                          num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Reduce the learning rate by ``factor`` at each step of a list.

    With ``step[k] <= num_update < step[k+1]`` the rate is ``base_lr * pow(factor, k+1)``.

    Parameters
    ----------
    step : list of int
        The list of steps to schedule a change (strictly increasing, >= 1).
    factor : float
        The factor to change the learning rate.
    base_lr, warmup_steps, warmup_begin_lr, warmup_mode
        As in :class:`LRScheduler`.
    """

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        assert isinstance(step, list) and len(step) >= 1
        for i, _step in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list")
            if _step < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update > self.step[self.cur_step_ind]:
                self.count = self.step[self.cur_step_ind]
                self.cur_step_ind += 1
                self.base_lr *= self.factor
                _LOG.info("Update[%d]: Change learning rate to %0.5e",
                          num_update, self.base_lr)
            else:
                return self.base_lr
        return self.base_lr


class PolyScheduler(LRScheduler):
    """Polynomial decay: ``final_lr + (start_lr - final_lr) * (1 - nup/max_nup)^pwr``.

    Parameters
    ----------
    max_update : int
        Maximum number of updates before the decay reaches ``final_lr``.
    base_lr : float
        Base learning rate to start from.
    pwr : int
        Power of the decay term.
    final_lr : float
        Final learning rate after all steps.
    warmup_steps, warmup_begin_lr, warmup_mode
        As in :class:`LRScheduler`.
    """

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        assert isinstance(max_update, int)
        if max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive")
        self.power = pwr
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                pow(1 - float(num_update - self.warmup_steps) / float(self.max_steps),
                    self.power)
        return self.base_lr


class CosineScheduler(LRScheduler):
    """Cosine decay: ``final_lr + (start_lr - final_lr) * (1 + cos(pi * nup/max_nup)) / 2``.

    Parameters
    ----------
    max_update : int
        Maximum number of updates before the decay reaches ``final_lr``.
    base_lr : float
        Base learning rate.
    final_lr : float
        Final learning rate after all steps.
    warmup_steps, warmup_begin_lr, warmup_mode
        As in :class:`LRScheduler`.
    """

    def __init__(self, max_update, base_lr=0.01, final_lr=0,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        assert isinstance(max_update, int)
        if max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive")
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                (1 + cos(pi * (num_update - self.warmup_steps) / self.max_steps)) / 2
        return self.base_lr

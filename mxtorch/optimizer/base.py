"""The ``Optimizer`` base class, its registry and ``create``.

Optimizers update weights through the registered update operators (``mx.nd.sgd_update``,
``mx.nd.adam_update``, ...) with ``out=weight``, or through plain NDArray arithmetic where
MXNet 1.9.1 does so (AdaDelta, Adamax, Nadam, DCASGD, SGLD). Per-parameter learning rate
and weight decay multipliers come from ``set_lr_mult``/``set_wd_mult``, from a Symbol's
``__lr_mult__``/``__wd_mult__`` attributes, or from Gluon parameters (``param_dict``).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy

from .. import ndarray as nd

__all__ = ["Optimizer", "register", "create"]


def _flatten_list(nested_list: Any) -> list:
    """[(a, b), (c, d)] -> [a, b, c, d]."""
    return [item for sublist in nested_list for item in sublist]


class Optimizer:
    """The base class inherited by all optimizers.

    Parameters
    ----------
    rescale_grad : float, optional, default 1.0
        Multiply the gradient with ``rescale_grad`` before updating. Often
        choose to be ``1.0/batch_size``.
    param_idx2name : dict from int to string, optional, default None
        A dictionary that maps int index to string name.
    clip_gradient : float, optional, default None
        Clip the gradient by projecting onto the box ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional, default None
        The initial learning rate. If None, the optimization will use the learning rate
        from ``lr_scheduler``. If not None, it will overwrite the learning rate in
        ``lr_scheduler``. If None and ``lr_scheduler`` is also None, then it will be set
        to 0.01 by default.
    lr_scheduler : LRScheduler, optional, default None
        The learning rate scheduler.
    wd : float, optional, default 0.0
        The weight decay (or L2 regularization) coefficient.
    sym : Symbol, optional, default None
        The Symbol this optimizer is applying to (for ``__lr_mult__``/``__wd_mult__``).
    begin_num_update : int, optional, default 0
        The initial number of updates.
    multi_precision : bool, optional, default False
        Keep a float32 master copy of float16 weights and update that copy.
    param_dict : dict of int -> gluon.Parameter, default None
        Parameters by index, to look up ``lr_mult``/``wd_mult``. Not pickled.

    Properties
    ----------
    learning_rate : float
        The current learning rate of the optimizer.
    """

    opt_registry: dict[str, type] = {}

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0.,
                 clip_gradient=None, learning_rate=None,
                 lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None:
            if self.lr_scheduler.base_lr != learning_rate:
                # MXNet prints (does not raise or warn) this UserWarning object.
                print(UserWarning("learning rate from ``lr_scheduler`` has been "
                                  "overwritten by ``learning_rate`` in optimizer."))
                self.lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult: dict = {}
        self.wd_mult: dict = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts: dict = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        assert isinstance(param_idx2name, dict), \
            'param_idx2name should be a dict of param indexes to names.'
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = False
        self.set_lr_mult({})
        self.set_wd_mult({})

    # ------------------------------------------------------------------ registry
    @staticmethod
    def register(klass):
        """Register a new optimizer class under its lower-cased class name.

        Examples
        --------
        >>> @mx.optimizer.Optimizer.register
        ... class MyOptimizer(mx.optimizer.Optimizer):
        ...     pass
        >>> optim = mx.optimizer.Optimizer.create_optimizer('MyOptimizer')
        """
        assert isinstance(klass, type)
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn('WARNING: New optimizer %s.%s is overriding existing optimizer %s.%s'
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """Instantiate an optimizer by (case-insensitive) name.

        Parameters
        ----------
        name : str
            Name of a registered subclass of Optimizer.
        kwargs : dict
            Parameters for the optimizer.

        Returns
        -------
        Optimizer
            An instantiated optimizer.
        """
        if name.lower() in Optimizer.opt_registry:
            return Optimizer.opt_registry[name.lower()](**kwargs)
        raise ValueError('Cannot find optimizer %s' % name)

    # ------------------------------------------------------------------ learning rate
    @property
    def learning_rate(self):
        """The current learning rate (from the scheduler when there is one)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Set a new learning rate; raises UserWarning when an lr_scheduler is defined."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been "
                              "defined. Note that set_learning_rate can mutate "
                              "the value of the learning rate of the optimizer "
                              "only when the LRScheduler of the optimizer is "
                              "undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        """[DEPRECATED] Sets lr scale. Use set_lr_mult instead."""
        raise DeprecationWarning

    # ------------------------------------------------------------------ states and updates
    def create_state(self, index, weight):
        """Create auxiliary state for a given weight (None when there is none)."""

    def create_state_multi_precision(self, index, weight):
        """Create state, with a float32 master copy first when the weight is float16.

        Returns ``(weight32, state)`` for float16 weights with ``multi_precision``.
        """
        if self.multi_precision and weight.dtype == numpy.float16:
            weight_master_copy = weight.astype(numpy.float32)
            return (weight_master_copy,) + (self.create_state(index, weight_master_copy),)
        if weight.dtype == numpy.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to "
                          "poor accuracy or slow convergence. "
                          "Consider using multi_precision=True option of the "
                          "optimizer")
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Update ``weight`` in place from ``grad`` and ``state``."""
        raise NotImplementedError()

    def update_multi_precision(self, index, weight, grad, state):
        """Update, through the float32 master copy for float16 weights when enabled."""
        if self.multi_precision and weight.dtype == numpy.float16:
            weight_master_copy = state[0]
            original_state = state[1]
            grad32 = grad.astype(numpy.float32)
            self.update(index, weight_master_copy, grad32, original_state)
            nd.cast(weight_master_copy, dtype=weight.dtype, out=weight)
        else:
            self.update(index, weight, grad, state)

    # ------------------------------------------------------------------ multipliers
    def _sym_mults(self, key: str) -> dict:
        """{argument name: float(attr[key])} from the Symbol given at construction."""
        out = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and key in attr[name]:
                    out[name] = float(attr[name][key])
        return out

    def set_lr_mult(self, args_lr_mult):
        """Set per-parameter learning rate multipliers (keys: names or indices).

        Parameters
        ----------
        args_lr_mult : dict of str/int to float
            Multipliers; they override the Symbol's ``__lr_mult__`` attributes.
        """
        self.lr_mult = self._sym_mults('__lr_mult__')
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Set per-parameter weight decay multipliers (keys: names or indices).

        When ``param_idx2name`` was given, parameters whose name ends neither with
        ``_weight`` nor ``_gamma`` get 0 by default.

        Parameters
        ----------
        args_wd_mult : dict of str/int to float
            Multipliers; they override the defaults and ``__wd_mult__`` attributes.
        """
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith('_weight') or n.endswith('_gamma')):
                self.wd_mult[n] = 0.0
        self.wd_mult.update(self._sym_mults('__wd_mult__'))
        self.wd_mult.update(args_wd_mult)

    def _set_current_context(self, device_id):
        """Switch the per-index update counts to those of device ``device_id``."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index):
        """Count one update of each index and advance ``num_update``."""
        if not isinstance(index, (list, tuple)):
            index = [index]
        for idx in index:
            if idx not in self._index_update_count:
                self._index_update_count[idx] = self.begin_num_update
            self._index_update_count[idx] += 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _apply_mults(self, values: list, indices, attr: str, table: dict) -> list:
        """Scale values by param_dict[i].<attr>, table[i], or table[name of i]."""
        for i, index in enumerate(indices):
            if index in self.param_dict:
                values[i] *= getattr(self.param_dict[index], attr)
            elif index in table:
                values[i] *= table[index]
            elif index in self.idx2name:
                values[i] *= table.get(self.idx2name[index], 1.0)
        return values

    def _get_lrs(self, indices):
        """Learning rates for a list of indices."""
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        return self._apply_mults([lr for _ in indices], indices, 'lr_mult', self.lr_mult)

    def _get_lr(self, index):
        """Learning rate for one index."""
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        """Weight decays for a list of indices."""
        return self._apply_mults([self.wd for _ in indices], indices, 'wd_mult', self.wd_mult)

    def _get_wd(self, index):
        """Weight decay for one index."""
        return self._get_wds([index])[0]

    def __getstate__(self):
        ret = self.__dict__.copy()
        # MXNet: param_dict (Gluon parameters) is never pickled.
        ret.pop('param_dict', None)
        return ret

    def __setstate__(self, state):
        self.__dict__ = dict(state)
        # param_dict needs to be explicitly set by the trainer
        self.param_dict = {}


# convenience wrapper for Optimizer.Register
register = Optimizer.register


# backward compatibility wrapper for Optimizer.CreateOptimizer
create = Optimizer.create_optimizer

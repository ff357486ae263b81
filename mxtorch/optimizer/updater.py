"""``Updater`` (the kvstore/Module update closure) and ``get_updater``."""
from __future__ import annotations

from typing import Any

from ..base import MXNetError
from ..format.pickle_safe import LRSchedulerState, OptimizerState, dump_states, load_states
from ..ndarray import NDArray
from ..ndarray.ordering import WRITES
from .base import Optimizer

__all__ = ["Updater", "get_updater"]


def _revive_scheduler(stub: LRSchedulerState, depth: int) -> Any:
    """A pickled MXNet lr scheduler stub -> the mxtorch scheduler with that state."""
    from .. import lr_scheduler
    cls = getattr(lr_scheduler, stub.class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, lr_scheduler.LRScheduler)):
        raise MXNetError(f"unknown lr scheduler class '{stub.class_name}' in optimizer states")
    obj = object.__new__(cls)
    obj.__dict__.update(_revive(stub.state, depth + 1))
    return obj


_MAX_DEPTH = 100  # real states nest a few levels (dict -> tuple -> NDArray)


def _revive(obj: Any, depth: int = 0) -> Any:
    """Turn the inert stubs of ``load_states`` into real optimizers and schedulers."""
    if depth > _MAX_DEPTH:
        raise MXNetError(f"optimizer states are nested more than {_MAX_DEPTH} levels deep")
    if isinstance(obj, OptimizerState):
        cls = Optimizer.opt_registry.get(obj.class_name.lower())
        if cls is None:
            raise MXNetError(f"unknown optimizer class '{obj.class_name}' in optimizer states")
        opt = object.__new__(cls)
        opt.__setstate__(_revive(obj.state, depth + 1))
        return opt
    if isinstance(obj, LRSchedulerState):
        return _revive_scheduler(obj, depth)
    if isinstance(obj, dict):
        return {k: _revive(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(_revive(v, depth + 1) for v in obj)
    return obj


class Updater:
    """Updater for kvstore: ``updater(index, grad, weight)`` applies the optimizer.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer; its states are created lazily, one per index.
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states: dict = {}
        self.states_synced: dict = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def _prepare(self, indices, weights) -> list:
        """Create missing states, move unsynced ones to the weight's context."""
        indices = list(indices)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                indices[i] = idx = idx.decode()
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
        return indices

    def __call__(self, index, grad, weight):
        """Updates weight given gradient and index (single values or lists)."""
        with WRITES:   # MXNet: updates of one weight from several threads are ordered
            self._update(index, grad, weight)

    def _update(self, index, grad, weight):
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = index, grad, weight
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        indices = self._prepare(indices, weights)
        if not self.aggregate_updates:
            for i, w, g in zip(indices, weights, grads):
                self.optimizer.update_multi_precision(i, w, g, self.states[i])
            return
        # Group by dtype, then update in chunks of aggregate_num.
        type_map: dict = {}
        for i, w, g in zip(indices, weights, grads):
            type_map.setdefault(w.dtype, []).append((i, w, g))
        num = self.optimizer.aggregate_num
        for group in type_map.values():
            if getattr(self.optimizer, "_foreach_update", False):
                # one multi-tensor update for the whole group: MXNet's chunks of
                # aggregate_num exist for its kernels' argument limits, the results are equal
                num = len(group)
            idxs, ws, gs = zip(*group)
            for s in range(0, len(idxs), num):
                states = [self.states[i] for i in idxs[s:s + num]]
                self.optimizer.update_multi_precision(idxs[s:s + num], ws[s:s + num],
                                                      gs[s:s + num], states)

    def sync_state_context(self, state, context):
        """Copy a state (NDArray, or nested tuple/list of them) to ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = (self.sync_state_context(i, context) for i in state)
            return tuple(synced) if isinstance(state, tuple) else list(synced)
        return state

    def set_states(self, states):
        """Set updater states from ``get_states`` bytes (``states`` or ``(states, opt)``).

        The bytes are read with a restricted unpickler: no code from them is run.
        """
        states = _revive(load_states(states, "<updater states>"))
        optimizer = self.optimizer
        if isinstance(states, tuple) and len(states) == 2:
            states, optimizer = states
            if not isinstance(optimizer, Optimizer):
                raise MXNetError("updater states: the second item must be an optimizer, "
                                 f"got {type(optimizer).__name__}")
        if not isinstance(states, dict):
            raise MXNetError("updater states must be a dict of index -> state, got "
                             f"{type(states).__name__}")
        self.states, self.optimizer = states, optimizer
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """Pickle the updater states (MXNet-readable bytes).

        Parameters
        ----------
        dump_optimizer : bool, default False
            Whether to also save the optimizer itself (learning rate, weight decay,
            schedules, update counts): the pickle is then ``(states, optimizer)``.
        """
        return dump_states((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer):
    """Return the updater closure for ``optimizer`` (an :class:`Updater`).

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer.
    """
    return Updater(optimizer)

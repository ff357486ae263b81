"""``mx.model``: checkpoints and the kvstore/update helpers Module uses (MXNet 1.9.1)."""
from __future__ import annotations

import logging
import os
from collections import namedtuple

import numpy as np

from . import kvstore as kvs
from . import ndarray as nd
from . import symbol as sym
from .base import MXNetError
from .context import cpu
from .format.fileset import load_set, write_set

_LOG = logging.getLogger(__name__)

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params"]

# Parameter to pass to batch_end_callback
BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


class _CheckpointKeyError(MXNetError, ValueError):
    """A params key without ``arg:``/``aux:`` (MXNet raises ValueError from the split)."""


def _create_sparse_kvstore(kvstore):
    """Create a kvstore for row_sparse parameters: always update on kvstore."""
    if isinstance(kvstore, kvs.KVStore):
        kv = kvstore
    elif isinstance(kvstore, str):
        kv = kvs.create(kvstore)
    else:
        raise TypeError(f"Cannot create '{kvstore}' KVStore with row_sparse parameters. "
                        "The type must be KVStore or str.")
    if not kv.is_capable(kvs.KVStoreBase.OPTIMIZER):
        raise AssertionError("KVStore with sparse weight requires optimizer support. However, "
                             "type(kv) does not support optimizer. Please consider other "
                             "kvstore backends (e.g. dist_device) instead.")
    return (kv, True)


def _create_kvstore(kvstore, num_device, arg_params):
    """Create a kvstore (or None) from a type or an instance; returns ``(kv, update_on_kvstore)``.

    Parameters
    ----------
    kvstore : KVStore or str
        The kvstore.
    num_device : int
        The number of devices.
    arg_params : dict of str to NDArray
        Model parameters (a 'local' store stops updating on kvstore above 16M elements).
    """
    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        # no need to use kv for single device and single machine
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = kvs.create(kvstore)
            if kvstore == "local":
                # MXNet: automatically select a proper local
                max_size = max(np.prod(param.shape) for param in arg_params.values())
                if max_size > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError("kvstore must be KVStore, str or None")
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= kv.is_capable(kvs.KVStoreBase.OPTIMIZER)
    return (kv, update_on_kvstore)


def _initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    """Initialize the kvstore with ``arg_params`` (broadcast to devices if updating there)."""
    for idx, param_on_devs in enumerate(param_arrays):
        name = param_names[idx]
        if not update_on_kvstore or arg_params[name].stype != "default":
            kvstore.init(name, arg_params[name])
        else:
            kvstore.broadcast(name, arg_params[name], out=param_on_devs)


def _update_params_on_kvstore_nccl(param_arrays, grad_arrays, kvstore, param_names):
    """Update ``param_arrays`` from ``grad_arrays`` on an NCCL kvstore, in batches."""
    valid = [i for i, grad_list in enumerate(grad_arrays) if grad_list[0] is not None]
    valid_grads = [grad_arrays[i] for i in valid]
    valid_params = [param_arrays[i] for i in valid]
    valid_names = [param_names[i] for i in valid]
    size = len(valid_grads)
    batch = int(os.getenv("MXNET_UPDATE_AGGREGATION_SIZE", "16"))
    start = 0
    while start < size:
        end = start + batch if start + batch < size else size
        # push gradient, priority is negative index; pull back the weights
        kvstore.pushpull(valid_names[start:end], valid_grads[start:end],
                         out=valid_params[start:end], priority=-start)
        start = end


def _update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """Update ``param_arrays`` from ``grad_arrays`` on the kvstore (push grads, pull weights)."""
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        name = param_names[index]
        if grad_list[0].stype == "default" and arg_list[0].stype == "default":
            kvstore.pushpull(name, grad_list, out=arg_list, priority=-index)
        else:
            kvstore.push(name, grad_list, priority=-index)
            kvstore.pull(name, out=arg_list, priority=-index)


def _update_params(param_arrays, grad_arrays, updater, num_device,
                   kvstore=None, param_names=None):
    """Update ``param_arrays`` with a local ``updater``; gradients are summed on the kvstore."""
    updates = [[] for _ in range(num_device)]
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        if kvstore:
            name = param_names[index]
            if grad_list[0].stype == "default" and arg_list[0].stype == "default":
                kvstore.pushpull(name, grad_list, priority=-index)
            else:
                kvstore.push(name, grad_list, priority=-index)
                kvstore.pull(name, out=grad_list, priority=-index)
        for k, (w, g) in enumerate(zip(arg_list, grad_list)):
            # MXNet: a faked index so that each device gets its own optimizer state
            updates[k].append((index * num_device + k, g, w))
    for dev_updates in updates:
        if dev_updates:
            i, g, w = zip(*dev_updates)
            updater(i, g, w)


def _multiple_callbacks(callbacks, *args, **kwargs):
    """Send args and kwargs to the callbacks: None, a single function, or a list."""
    if isinstance(callbacks, list):
        for cb in callbacks:
            cb(*args, **kwargs)
        return
    if callbacks:
        callbacks(*args, **kwargs)


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Checkpoint the model data into files.

    Parameters
    ----------
    prefix : str
        Prefix of model name.
    epoch : int
        The epoch number of the model.
    symbol : Symbol
        The input Symbol (not saved when None).
    arg_params : dict of str to NDArray
        Model parameter, dict of name to NDArray of net's weights.
    aux_params : dict of str to NDArray
        Model parameter, dict of name to NDArray of net's auxiliary states.
    remove_amp_cast : bool, optional
        Whether to remove the amp_cast and amp_multicast operators before saving.

    Notes
    -----
    - ``prefix-symbol.json`` will be saved for symbol.
    - ``prefix-epoch.params`` will be saved for parameters.
    The files are written as one set (see ``format.fileset``): a reader, or a process
    killed mid-save, sees either the previous checkpoint or the new one, recorded in
    ``prefix-epoch.manifest``. With a distributed kvstore in use, only the worker of
    rank 0 writes (the others return at once).
    """
    if not _checkpoint_writer():
        return
    save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
    param_name = "%s-%04d.params" % (prefix, epoch)
    parts = []
    if symbol is not None:
        parts.append((f"{prefix}-symbol.json",
                      lambda path: symbol.save(path, remove_amp_cast=remove_amp_cast)))
    parts.append((param_name, lambda path: nd.save(path, save_dict)))
    write_set(_checkpoint_manifest(prefix, epoch), parts)
    _LOG.info('Saved checkpoint to "%s"', param_name)


def _checkpoint_manifest(prefix, epoch) -> str:
    """The manifest that records which files make up checkpoint ``prefix``/``epoch``."""
    return "%s-%04d.manifest" % (os.fspath(prefix), epoch)


def _checkpoint_writer() -> bool:
    """Whether this process writes checkpoints: False on dist workers of rank != 0."""
    from .kvstore.dist import is_checkpoint_writer
    return is_checkpoint_writer()


def load_params(prefix, epoch):
    """Load ``arg:``/``aux:`` params from ``prefix-epoch.params``.

    Returns
    -------
    arg_params : dict of str to NDArray
    aux_params : dict of str to NDArray
    """
    fname = "%s-%04d.params" % (prefix, epoch)
    return load_set(_checkpoint_manifest(prefix, epoch),
                    lambda files: _split_params(files.path(fname), fname))


def _split_params(path, fname):
    """``(arg_params, aux_params)`` from the params file at ``path`` (named ``fname``)."""
    save_dict = nd.load(path)
    arg_params: dict = {}
    aux_params: dict = {}
    if not save_dict:
        _LOG.warning("Params file '%s' is empty", fname)
        return (arg_params, aux_params)
    if not isinstance(save_dict, dict):
        raise _CheckpointKeyError(f"{fname}: a checkpoint params file must hold named arrays "
                                  "('arg:<name>' / 'aux:<name>'), found an unnamed list")
    for k, v in save_dict.items():
        if ":" not in k:
            raise _CheckpointKeyError(f"{fname}: invalid key {k!r}; checkpoint keys are "
                                      "'arg:<name>' or 'aux:<name>'")
        tp, name = k.split(":", 1)
        if tp == "arg":
            arg_params[name] = v
        if tp == "aux":
            aux_params[name] = v
    return (arg_params, aux_params)


def load_checkpoint(prefix, epoch):
    """Load a model checkpoint from files.

    Parameters
    ----------
    prefix : str
        Prefix of model name.
    epoch : int
        Epoch number of model we would like to load.

    Returns
    -------
    symbol : Symbol
        The symbol configuration of computation network.
    arg_params : dict of str to NDArray
        Model parameter, dict of name to NDArray of net's weights.
    aux_params : dict of str to NDArray
        Model parameter, dict of name to NDArray of net's auxiliary states.

    Notes
    -----
    - Symbol will be loaded from ``prefix-symbol.json``.
    - Parameters will be loaded from ``prefix-epoch.params``.
    - When ``prefix-epoch.manifest`` records the set these files were saved as, the
      files are checked against it, and a set whose save was interrupted after its
      commit is read from the temporaries it names.
    """
    symbol, arg_params, aux_params, _ = _load_checkpoint_set(prefix, epoch)
    return (symbol, arg_params, aux_params)


def _load_checkpoint_set(prefix, epoch, states=False):
    """``(symbol, arg_params, aux_params, states)`` of one checkpoint, checked to belong
    together; ``states``, only when asked for, is ``(path, bytes)`` of its ``.states``."""
    sym_name = f"{prefix}-symbol.json"
    param_name = "%s-%04d.params" % (prefix, epoch)
    state_name = "%s-%04d.states" % (prefix, epoch)

    def load(files):
        symbol = sym.load(files.path(sym_name, strict=False))
        arg_params, aux_params = _split_params(files.path(param_name), param_name)
        if not states:
            return symbol, arg_params, aux_params, None
        path = files.path(state_name)
        with open(path, "rb") as f:  # read now: a later save may replace the file
            return symbol, arg_params, aux_params, (path, f.read())

    return load_set(_checkpoint_manifest(prefix, epoch), load)


# MXNet's mx.model also holds FeedForward and the names it imports for it; mxtorch's
# FeedForward lives in feedforward.py (which imports this module), so they resolve there.
_FEEDFORWARD_NAMES = ("FeedForward", "Context", "DataDesc", "DataParallelExecutorManager",
                      "LogValidationMetricsCallback", "Uniform", "get_updater", "io", "metric",
                      "opt")


def __getattr__(name):
    if name in _FEEDFORWARD_NAMES:
        from . import feedforward
        return getattr(feedforward, name)
    raise AttributeError(f"module 'mxtorch.model' has no attribute '{name}'")

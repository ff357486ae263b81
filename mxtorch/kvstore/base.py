"""``KVStoreBase``, the kvstore registry and ``create`` (MXNet's ``kvstore/base.py``)."""
from __future__ import annotations

import warnings


__all__ = ["create", "KVStoreBase"]

# in-process stores: each behaves as a dense reduce-by-sum store in this process
_LOCAL_TYPES = ("local", "device", "nccl", "local_allreduce_cpu", "local_allreduce_device")


class KVStoreBase:
    """An abstract key-value store interface for data parallel training."""

    OPTIMIZER = "optimizer"
    kv_registry: dict = {}

    def broadcast(self, key, value, out, priority=0):
        """Broadcast ``value`` at rank 0 to all ranks and store the result in ``out``.

        Parameters
        ----------
        key : str or int
        value : NDArray
        out : NDArray or list of NDArray
        priority : int, optional
        """
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` for summation, then pull the result into ``out`` (or ``value``).

        Parameters
        ----------
        key : str or int
        value : NDArray or list of NDArray
        out : NDArray or list of NDArray, optional
        priority : int, optional
        """
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        """Register an optimizer with the kvstore.

        Parameters
        ----------
        optimizer : Optimizer
        """
        raise NotImplementedError()

    def is_capable(self, capability):
        """Query whether the store supports a capability such as ``'optimizer'``.

        Parameters
        ----------
        capability : str

        Returns
        -------
        bool
        """
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Save the optimizer (updater) state to a file.

        Parameters
        ----------
        fname : str
        dump_optimizer : bool, default False
        """
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        """Load the optimizer (updater) state from a file.

        Parameters
        ----------
        fname : str
        """
        raise NotImplementedError()

    @property
    def type(self):
        """The type of this kvstore backend (str)."""
        raise NotImplementedError()

    @property
    def rank(self):
        """The rank of this worker node, in ``[0, num_workers)``."""
        raise NotImplementedError()

    @property
    def num_workers(self):
        """The number of worker nodes."""
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Register a new KVStore class; ``create(klass.__name__.lower())`` builds it.

        Examples
        --------
        >>> @mx.kvstore.KVStoreBase.register
        ... class MyKVStore(mx.kvstore.KVStoreBase):
        ...     pass
        >>> kv = mx.kv.create('MyKVStore')
        """
        assert isinstance(klass, type)
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            old = KVStoreBase.kv_registry[name]
            warnings.warn(f"WARNING: New kvstore {klass.__module__}.{klass.__name__} is "
                          f"overriding existing kvstore {old.__module__}.{old.__name__}")
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A key-value store for testing."""

    def broadcast(self, key, value, out, priority=0):
        """Copy ``value`` into every array of ``out``."""
        out = out if isinstance(out, list) else [out]
        for o in out:
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` (a list) and write the result into ``out`` (or back into ``value``)."""
        from ..ndarray import NDArray
        if isinstance(value, NDArray):
            if out is not None:
                out = out if isinstance(out, list) else [out]
                for o in out:
                    o[:] = value
            return
        ctx = value[0].context
        reduced = sum([val.as_in_context(ctx) for val in value])
        targets = value if out is None else (out if isinstance(out, list) else [out])
        for o in targets:
            o[:] = reduced

    @staticmethod
    def is_capable(capability):
        """The test store has no optimizer support."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError(f"Unknown capability: {capability}")

    @property
    def type(self):
        return "teststore"

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def set_optimizer(self, optimizer):
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        raise NotImplementedError()


def create(name="local"):
    """Create a new KVStore.

    ``local`` and ``device`` (and ``nccl``, ``local_allreduce_cpu``,
    ``local_allreduce_device``) are in-process stores: values pushed from several
    devices are summed, and with an optimizer set the update runs on push.
    ``dist_sync``, ``dist_device_sync``, ``dist_sync_device``, ``dist_async`` and
    ``horovod`` run on ``torch.distributed`` (see ``mxtorch.kvstore.dist``): values are
    summed across workers, and ``dist_async`` is synchronous in mxtorch.

    Parameters
    ----------
    name : {'local', 'device', 'nccl', 'dist_sync', 'dist_device_sync', 'dist_async', 'horovod'}
        The type of KVStore.

    Returns
    -------
    kv : KVStoreBase
        The created KVStore.
    """
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if name.startswith("dist") or name == "horovod":
        # torch.distributed stores: see kvstore/dist.py (rendezvous from DMLC_* or torchrun)
        from .dist import create_dist
        return create_dist(name)
    from .kvstore import KVStore
    # MXNet: any other name builds a local store that reports that name as its type
    return KVStore(name)

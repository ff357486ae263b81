"""Distributed kvstores (``dist_sync``, ``dist_device_sync``, ``dist_async``, ``horovod``)
on ``torch.distributed``.

Every worker keeps a full copy of the store. A push sums the arrays pushed from this
worker's devices, then sums across workers with one ``all_reduce`` (gloo on CPU, NCCL on
CUDA), then applies the optimizer set by ``set_optimizer`` -- identically on every worker,
so the stored weights stay bit-identical without a parameter server. ``init`` broadcasts
rank 0's value (MXNet: only rank 0's init value is used).

The rendezvous comes from torchrun's variables (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``) or MXNet's (``DMLC_NUM_WORKER``, ``DMLC_WORKER_ID``/``DMLC_TASK_ID``,
``DMLC_PS_ROOT_URI``, ``DMLC_PS_ROOT_PORT``); rank 0 hosts the store at that address.
Without either, the store is a 1-worker group. Every rendezvous and collective is bounded
by ``MXTORCH_DIST_TIMEOUT`` seconds (default 300): a dead peer or a rendezvous that cannot
form raises :class:`MXNetError` instead of hanging.
"""
from __future__ import annotations

import atexit
import logging
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as tdist

from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from .kvstore import KVStore, _group, _key_value

_LOG = logging.getLogger(__name__)

__all__ = ["DistKVStore", "HorovodKVStore", "create_dist", "is_checkpoint_writer"]

_DEFAULT_TIMEOUT_S = 300.0
# process-wide state of the one process group mxtorch created (MXNet: one ps-lite postoffice)
_STATE: dict = {"backend": None, "failed": False, "barrier_exit": False, "hooked": False}


def _timeout_s() -> float:
    """The bound on rendezvous and collectives, from ``MXTORCH_DIST_TIMEOUT`` (seconds)."""
    raw = os.environ.get("MXTORCH_DIST_TIMEOUT", str(_DEFAULT_TIMEOUT_S))
    try:
        value = float(raw)
    except ValueError:
        raise MXNetError(f"MXTORCH_DIST_TIMEOUT must be a number of seconds, got {raw!r}") \
            from None
    if value <= 0:
        raise MXNetError(f"MXTORCH_DIST_TIMEOUT must be > 0, got {raw!r}")
    return value


def _env_int(name: str) -> int:
    """An integer environment variable, with a clear error when malformed."""
    raw = os.environ[name]
    try:
        return int(raw)
    except ValueError:
        raise MXNetError(f"distributed kvstore: environment variable {name}={raw!r} is not "
                         "an integer") from None


def rendezvous_env() -> tuple[int, int, str, int]:
    """``(rank, world_size, addr, port)`` from torchrun's or MXNet's DMLC_* variables."""
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:
        addr = env.get("MASTER_ADDR", "127.0.0.1")
        port = _env_int("MASTER_PORT") if "MASTER_PORT" in env else 29500
        return _env_int("RANK"), _env_int("WORLD_SIZE"), addr, port
    if "DMLC_NUM_WORKER" in env:
        role = env.get("DMLC_ROLE", "worker")
        if role != "worker":
            raise MXNetError(f"distributed kvstore: DMLC_ROLE={role!r}; mxtorch runs "
                             "all-reduce among workers and needs no server or scheduler")
        rank_var = "DMLC_WORKER_ID" if "DMLC_WORKER_ID" in env else "DMLC_TASK_ID"
        if rank_var not in env:
            raise MXNetError("distributed kvstore: DMLC_NUM_WORKER is set but neither "
                             "DMLC_WORKER_ID nor DMLC_TASK_ID gives this worker's rank")
        addr = env.get("DMLC_PS_ROOT_URI", "127.0.0.1")
        port = _env_int("DMLC_PS_ROOT_PORT") if "DMLC_PS_ROOT_PORT" in env else 9091
        return _env_int(rank_var), _env_int("DMLC_NUM_WORKER"), addr, port
    return 0, 1, "127.0.0.1", 0


def _pick_backend(name: str) -> str:
    """``MXTORCH_DIST_BACKEND`` if set; NCCL for device stores when CUDA is there; else gloo."""
    forced = os.environ.get("MXTORCH_DIST_BACKEND")
    if forced:
        return forced.lower()
    device_store = "device" in name or name == "horovod"
    if device_store and torch.cuda.is_available() and tdist.is_nccl_available():
        return "nccl"
    return "gloo"


def _make_store(rank: int, world: int, addr: str, port: int, timeout: timedelta):
    """The rendezvous store: a TCPStore hosted by rank 0 (a HashStore for one worker)."""
    if world == 1 and port == 0:
        return tdist.HashStore()
    try:
        return tdist.TCPStore(addr, port, world, is_master=(rank == 0), timeout=timeout,
                              wait_for_workers=True)
    except Exception as exc:  # noqa: BLE001 - torch raises several types here
        _STATE["failed"] = True
        raise MXNetError(
            f"distributed kvstore: rendezvous failed: worker rank {rank} of {world} could not "
            f"meet the other workers at {addr}:{port} within {timeout.total_seconds():g} s "
            f"(is every worker started, and is rank 0 reachable there?): {exc}") from None


def _ensure_process_group(name: str) -> None:
    """Join (once per process) the torch.distributed group every dist kvstore uses."""
    if tdist.is_initialized():
        if _STATE["backend"] is None:
            _STATE["backend"] = tdist.get_backend()  # created by the user (e.g. torchrun)
        return
    rank, world, addr, port = rendezvous_env()
    if not 0 <= rank < world:
        raise MXNetError(f"distributed kvstore: rank {rank} is not in [0, {world})")
    timeout = timedelta(seconds=_timeout_s())
    backend = _pick_backend(name)
    store = _make_store(rank, world, addr, port, timeout)
    try:
        tdist.init_process_group(backend, store=store, rank=rank, world_size=world,
                                 timeout=timeout)
    except Exception as exc:  # noqa: BLE001
        _STATE["failed"] = True
        raise MXNetError(f"distributed kvstore: init_process_group({backend!r}) failed on "
                         f"rank {rank} of {world}: {exc}") from None
    if backend == "nccl":
        local = int(os.environ.get("LOCAL_RANK", rank % max(torch.cuda.device_count(), 1)))
        torch.cuda.set_device(local)
    _STATE["backend"] = backend
    _install_exit_hooks()


def _install_exit_hooks() -> None:
    """Barrier (if asked) and tear down the group at exit; skip both after a failure."""
    if _STATE["hooked"]:
        return
    _STATE["hooked"] = True
    previous = sys.excepthook

    def _hook(kind, value, tb):
        _STATE["failed"] = True  # an uncaught error: peers may be mid-collective
        previous(kind, value, tb)

    sys.excepthook = _hook
    atexit.register(_at_exit)


def _at_exit() -> None:
    """Tear down the group at exit, after a barrier only if ``_barrier_before_exit(True)``.

    MXNet barriers by default so that parameter servers outlive every worker; all-reduce
    needs no servers, and a default barrier would hold a failing worker (``sys.exit(3)``)
    for the whole timeout, so mxtorch barriers only on request.
    """
    if not tdist.is_initialized():
        return
    if _STATE["failed"]:
        return
    try:
        if _STATE["barrier_exit"]:
            tdist.barrier()
        elif tdist.get_backend() == "gloo":
            # Rank 0 hosts the rendezvous store: a short, bounded meeting keeps it alive
            # until every worker is done with it (tearing it down earlier can abort a peer).
            tdist.monitored_barrier(timeout=timedelta(seconds=min(10.0, _timeout_s())))
    except Exception as exc:  # noqa: BLE001
        _LOG.warning("distributed kvstore: barrier before exit failed: %s", exc)
        return
    try:
        tdist.destroy_process_group()
    except Exception:  # noqa: BLE001
        pass


def is_checkpoint_writer() -> bool:
    """False on workers of rank != 0 of a distributed group: checkpoints come from rank 0."""
    return not (tdist.is_available() and tdist.is_initialized() and tdist.get_rank() != 0)


def _comm_device() -> torch.device:
    """Where collectives run: the current CUDA device for NCCL, CPU for gloo."""
    if _STATE["backend"] == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _collective(op: str, tensors: list[torch.Tensor], what: str) -> None:
    """Sum (``all_reduce``) or ``broadcast`` from rank 0, in place, one call per dtype."""
    dev = _comm_device()
    by_dtype: dict = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for group in by_dtype.values():
        flat = torch.cat([t.reshape(-1).to(dev) for t in group]) if len(group) > 1 \
            else group[0].reshape(-1).to(dev, copy=True)
        try:
            if op == "all_reduce":
                tdist.all_reduce(flat)
            else:
                tdist.broadcast(flat, src=0)
        except Exception as exc:  # noqa: BLE001 - DistBackendError, RuntimeError, ...
            _STATE["failed"] = True
            raise MXNetError(
                f"distributed kvstore: {op} of {what} failed on worker rank "
                f"{tdist.get_rank()} of {tdist.get_world_size()}: another worker died, hung "
                f"longer than the {_timeout_s():g} s timeout, or the network failed "
                f"({type(exc).__name__}: {exc})") from None
        offset = 0
        for t in group:
            n = t.numel()
            t.copy_(flat[offset:offset + n].view(t.shape))
            offset += n


class DistKVStore(KVStore):
    """A distributed key-value store over ``torch.distributed``.

    ``dist_sync``, ``dist_device_sync`` and ``dist_sync_device`` are synchronous: a push
    returns once every worker pushed the key, and every worker then holds the sum (or the
    optimizer's update with that sum). ``dist_device_*`` keep values on the devices.

    ``dist_async`` -- how it differs from MXNet: MXNet's servers apply each worker's
    gradient as soon as it arrives, with no synchronization. mxtorch has no parameter
    server; ``dist_async`` runs exactly as ``dist_sync`` (synchronous all-reduce, then the
    update on every worker). Training results equal ``dist_sync``'s, not MXNet's
    nondeterministic asynchronous ones, and a slow worker slows the others.

    Parameters
    ----------
    name : str
        The kvstore type (``'dist_sync'``, ``'dist_device_sync'``, ``'dist_async'``, ...).
    """

    def __init__(self, name: str = "dist_sync"):
        super().__init__(name)
        _ensure_process_group(name)

    def _device_comm(self) -> bool:
        """``dist_device_*`` keep the stored values on the devices."""
        return "device" in self._type

    @property
    def rank(self):
        """The rank of this worker, in ``[0, num_workers)``."""
        return tdist.get_rank()

    @property
    def num_workers(self):
        """The number of workers in the group."""
        return tdist.get_world_size()

    def init(self, key, value):
        """Initialize keys with rank 0's values (the values of other ranks are ignored).

        Parameters
        ----------
        key : str, int, or sequence of str or int
        value : NDArray or sequence of NDArray
        """
        keys, vals, use_str = _key_value(key, value)
        self._set_key_type(use_str)
        for k, v in zip(keys, vals):
            if k in self._store:
                self._init_one(k, v)  # raises MXNet's duplicate-init error
        firsts: dict = {}
        for k, v in zip(keys, vals):
            firsts.setdefault(k, v)
        copies = [v._t.detach().clone() for v in firsts.values()]
        _collective("broadcast", copies, f"init of keys {list(firsts)}")
        for (k, v), t in zip(firsts.items(), copies):
            self._init_one(k, _as_nd(t, v))

    def push(self, key, value, priority=0):
        """Push values: summed over this worker's devices, then over all workers.

        With an optimizer set, every worker applies ``updater(key, sum, stored)``
        identically; otherwise the sum replaces the stored value.

        Parameters
        ----------
        key : str, int, or sequence of str or int
        value : NDArray, list of NDArray, or list of list of NDArray
        priority : int, optional
            Ignored (kept for MXNet compatibility).
        """
        keys, vals, use_str = _key_value(key, value)
        self._set_key_type(use_str)
        groups = _group(keys, vals)
        stored = [self._stored(k) for k, _ in groups]
        merged = [self._reduce(k, g, s) for (k, g), s in zip(groups, stored)]
        _collective("all_reduce", [m._t for m in merged],
                    f"keys {[k for k, _ in groups]}")
        for (k, _), m, s in zip(groups, merged, stored):
            if self._updater is not None:
                self._updater(self._updater_key(k), m, s)
            else:
                with torch.no_grad():
                    s._t.copy_(m._t)

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Save the optimizer state (identical on every worker); rank 0 writes the file.

        Parameters
        ----------
        fname : str
        dump_optimizer : bool, default False
        """
        if self.rank == 0:
            super().save_optimizer_states(fname, dump_optimizer)

    def _barrier(self):
        """Global barrier among all workers (bounded by the timeout)."""
        _collective("all_reduce", [torch.zeros(1)], "barrier")

    barrier = _barrier

    def _barrier_before_exit(self, barrier_before_exit=True):
        """Whether workers wait for each other at exit.

        MXNet's default is True (its servers must outlive the workers); mxtorch has no
        servers, so it barriers at exit only when this is called with True.
        """
        _STATE["barrier_exit"] = bool(barrier_before_exit)

    def _send_command_to_servers(self, head, body):
        """There are no servers: every worker applies the update itself."""
        raise MXNetError("kvstore: mxtorch's distributed kvstore has no server nodes; "
                         "the optimizer runs on every worker")


class HorovodKVStore(DistKVStore):
    """``horovod``: all-reduce semantics (sum over workers) with no optimizer on the store.

    ``broadcast`` copies rank 0's value everywhere and ``pushpull`` sums across workers;
    Trainer then updates locally (``update_on_kvstore`` is False), as with Horovod.
    """

    def __init__(self, name: str = "horovod"):
        super().__init__(name)

    def is_capable(self, capability):
        """Horovod runs no optimizer in the store."""
        if capability.lower() == "optimizer":
            return False
        raise ValueError(f"Unknown capability: {capability}")

    @property
    def local_rank(self):
        """The rank of this worker on its machine (``LOCAL_RANK``, else the global rank)."""
        return int(os.environ.get("LOCAL_RANK", self.rank))


def _as_nd(tensor: torch.Tensor, like: NDArray) -> NDArray:
    """Wrap ``tensor`` in an NDArray on ``like``'s context."""
    from ..ndarray.ndarray import _wrap
    return _wrap(tensor.to(like._t.device), like.context)


def create_dist(name: str) -> KVStore:
    """Create the distributed kvstore ``name`` (joins the process group on first use)."""
    if name == "horovod":
        return HorovodKVStore(name)
    return DistKVStore(name)

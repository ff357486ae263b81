"""The in-process ``KVStore`` (MXNet's ``local`` / ``device`` stores) over torch tensors."""
from __future__ import annotations

import torch

from ..base import MXNetError
from ..context import Context
from ..ndarray.ndarray import NDArray, _wrap
from ..ndarray.ordering import WRITES
from .base import KVStoreBase

__all__ = ["KVStore"]


def _check(cond: bool, msg: str = "") -> None:
    """Raise AssertionError as MXNet's ``assert`` statements do (also under ``-O``)."""
    if not cond:
        raise AssertionError(msg)


def _key_value(keys, vals) -> tuple[list, list, bool | None]:
    """Flatten (keys, values) into parallel lists; the bool tells whether keys are str."""
    if isinstance(keys, (tuple, list)):
        _check(len(keys) == len(vals))
        flat_k: list = []
        flat_v: list = []
        use_str = None
        for key, val in zip(keys, vals):
            k_i, v_i, str_i = _key_value(key, val)
            flat_k += k_i
            flat_v += v_i
            use_str = str_i if use_str is None else use_str
            _check(use_str == str_i, "inconsistent types of keys detected.")
        return flat_k, flat_v, use_str
    _check(isinstance(keys, (int, str)), "unexpected type for keys: " + str(type(keys)))
    use_str = isinstance(keys, str)
    if isinstance(vals, NDArray):
        return [keys], [vals], use_str
    for value in vals:
        _check(isinstance(value, NDArray))
    return [keys] * len(vals), list(vals), use_str


def _group(keys: list, vals: list) -> list[tuple]:
    """Group values by key: [(key, [values...])], int keys sorted as MXNet does."""
    groups: dict = {}
    for k, v in zip(keys, vals):
        groups.setdefault(k, []).append(v)
    order = sorted(groups) if keys and isinstance(keys[0], int) else list(groups)
    return [(k, groups[k]) for k in order]


class KVStore(KVStoreBase):
    """A key-value store for synchronization of values over multiple devices.

    Values pushed for one key (one array per device) are summed; with an updater set
    (``set_optimizer`` / ``_set_updater``) ``updater(key, merged, stored)`` runs on
    every push, otherwise the sum replaces the stored value.

    Parameters
    ----------
    handle : str, default 'local'
        The kvstore type (mxtorch keeps the name where MXNet keeps a C handle).
    """

    def __init__(self, handle: str = "local"):
        self.handle = handle
        self._type = handle
        self._store: dict = {}
        self._key_type: str | None = None
        self._updater = None
        self._updater_func = None
        self._str_updater_func = None
        self._is_p3 = False
        self._compression: dict | None = None
        self._residuals: dict = {}

    # ------------------------------------------------------------------ internals
    def _set_key_type(self, use_str: bool | None) -> None:
        """MXNet: a store holds only int keys or only str keys."""
        if use_str is None:
            return
        kind = "str" if use_str else "int"
        if self._key_type is None:
            self._key_type = kind
        elif self._key_type != kind:
            raise MXNetError(f"Check failed: key_type_ == key_type: Mixed key types are not "
                             f"allowed (this kvstore uses {self._key_type} keys, got {kind})")

    def _device_comm(self) -> bool:
        """Whether the store keeps values on the devices (``device``/``nccl``) or on CPU."""
        return "device" in self._type or self._type == "nccl"

    def _stored(self, key) -> NDArray:
        """The stored array of ``key``; raises if the key was never initialized."""
        stored = self._store.get(key)
        if stored is None:
            raise MXNetError(f"Check failed: !local.is_none(): key {key} has not been inited")
        return stored

    def _init_one(self, key, value: NDArray) -> None:
        """Store a copy of ``value`` under ``key``."""
        if key in self._store:
            raise MXNetError(f"Check failed: duplicate init of key {key}. Please double check "
                             "if you called kv.init or kv.broadcast with this key multiple "
                             "times")
        ctx = value.context if self._device_comm() else Context("cpu", 0)
        tensor = value._t.detach().to(ctx.torch_device, copy=True)
        self._store[key] = _wrap(tensor, ctx)

    @staticmethod
    def _check_shape(key, value: NDArray, stored: NDArray) -> None:
        """The shape of every pushed/pulled array must equal the stored one."""
        if value.shape != stored.shape:
            raise MXNetError(f"kvstore key {key!r}: operands shape mismatch "
                             f"from.shape = {value.shape} to.shape={stored.shape}")

    def _reduce(self, key, values: list, stored: NDArray) -> NDArray:
        """Sum the arrays pushed for ``key`` on the stored array's device and dtype."""
        dev, dtype = stored._t.device, stored._t.dtype
        with torch.no_grad():
            acc = None
            for slot, v in enumerate(values):
                self._check_shape(key, v, stored)
                t = v._t.detach()
                if self._compression is not None:
                    t = self._quantize(key, slot, t)
                if acc is None:
                    acc = t.to(dev, dtype, copy=True)
                else:
                    acc.add_(t.to(dev, dtype))
        return _wrap(acc, stored.context)

    def _quantize(self, key, slot: int, grad: torch.Tensor) -> torch.Tensor:
        """MXNet's 2-bit quantization with a residual per (key, source device)."""
        if grad.dtype != torch.float32:
            raise MXNetError(f"kvstore key {key!r}: 2bit gradient compression supports float32 "
                             f"gradients only, got {grad.dtype}")
        thr = self._compression["threshold"]
        res = self._residuals.get((key, slot))
        if res is None or res.shape != grad.shape or res.device != grad.device:
            res = torch.zeros_like(grad)
            self._residuals[(key, slot)] = res
        res.add_(grad)
        # MXNet: >= threshold -> +threshold, <= -threshold -> -threshold, else 0
        q = (res >= thr).to(grad.dtype) * thr - (res <= -thr).to(grad.dtype) * thr
        res.sub_(q)
        return q

    def _updater_key(self, key):
        """MXNet: the str-key updater receives the key as bytes (a ctypes ``c_char_p``)."""
        return key.encode("utf-8") if isinstance(key, str) else key

    # ------------------------------------------------------------------ public API
    def broadcast(self, key, value, out, priority=0):
        """Broadcast ``value`` to every array of ``out``; the key is initialized with it.

        Like MXNet's native store, a key cannot be broadcast (or initialized) twice.

        Parameters
        ----------
        key : str or int, or list of them
        value : NDArray, list of NDArray
        out : NDArray, list of NDArray, or list of list of NDArray
        priority : int, optional
            Ignored (kept for MXNet compatibility).
        """
        self.init(key, value)
        self.pull(key, out=out, priority=priority)

    def is_capable(self, capability):
        """Query a capability: ``'optimizer'`` is supported; others raise ValueError."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return not self._is_p3
        raise ValueError(f"Unknown capability: {capability}")

    def init(self, key, value):
        """Initialize a single or a sequence of key-value pairs into the store.

        Parameters
        ----------
        key : str, int, or sequence of str or int
        value : NDArray or sequence of NDArray
        """
        keys, vals, use_str = _key_value(key, value)
        self._set_key_type(use_str)
        for k, v in zip(keys, vals):
            self._init_one(k, v)

    def push(self, key, value, priority=0):
        """Push a single or a sequence of key-value pairs into the store.

        Arrays pushed for the same key (one per device) are summed. With an updater,
        ``updater(key, merged, stored)`` updates the stored value; otherwise the sum
        replaces it.

        Parameters
        ----------
        key : str, int, or sequence of str or int
        value : NDArray, list of NDArray, or list of list of NDArray
        priority : int, optional
            Ignored (kept for MXNet compatibility).
        """
        keys, vals, use_str = _key_value(key, value)
        self._set_key_type(use_str)
        for k, group in _group(keys, vals):
            with WRITES:   # MXNet: pushes and pulls of one key are ordered
                stored = self._stored(k)
                merged = self._reduce(k, group, stored)
                if self._updater is not None:
                    self._updater(self._updater_key(k), merged, stored)
                else:
                    with torch.no_grad():
                        stored._t.copy_(merged._t)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Pull a single value or a sequence of values from the store into ``out``.

        Parameters
        ----------
        key : str, int, or sequence of str or int
        out : NDArray, list of NDArray, or list of list of NDArray
        priority : int, optional
            Ignored (kept for MXNet compatibility).
        ignore_sparse : bool, default True
            Kept for MXNet compatibility (every mxtorch array is dense).
        """
        _check(out is not None)
        keys, outs, use_str = _key_value(key, out)
        self._set_key_type(use_str)
        for k, o in zip(keys, outs):
            stored = self._stored(k)
            self._check_shape(k, o, stored)
            with WRITES, torch.no_grad():
                o._t.copy_(stored._t)

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` and pull the updated value into ``out`` (``value`` if None).

        Parameters
        ----------
        key : str, int, or sequence of str or int
        value : NDArray, list of NDArray, or list of list of NDArray
        out : NDArray, list of NDArray, or list of list of NDArray, optional
        priority : int, optional
        """
        self.push(key, value, priority)
        self.pull(key, out=value if out is None else out, priority=priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull the rows ``row_ids`` of the stored value; the other rows of ``out`` are zero.

        Parameters
        ----------
        key : str, int, or sequence of str or int
        out : NDArray or list of NDArray or list of list of NDArray
        priority : int, optional
        row_ids : NDArray or list of NDArray
            1-D row indices (need not be unique or sorted), one per output, or a single
            one shared by every output.
        """
        _check(out is not None)
        _check(row_ids is not None)
        if isinstance(row_ids, NDArray):
            row_ids = [row_ids]
        _check(isinstance(row_ids, list), "row_ids should be NDArray or list of NDArray")
        single_rowid = len(row_ids) == 1 and isinstance(out, list)
        first_out = [out[0]] if single_rowid else out
        keys, outs, use_str = _key_value(key, first_out)
        _, rids, _ = _key_value(key, row_ids)
        _check(len(rids) == len(outs), "the number of row_ids doesn't match the number of values")
        self._set_key_type(use_str)
        for k, o, rid in zip(keys, outs, rids):
            self._pull_rows(k, o, rid)
        if single_rowid:
            for out_i in out[1:]:
                out[0].copyto(out_i)

    def _pull_rows(self, key, out: NDArray, row_ids: NDArray) -> None:
        """Write the rows ``row_ids`` of the stored value into ``out``; zero the rest."""
        stored = self._stored(key)
        self._check_shape(key, out, stored)
        idx = row_ids._t.detach().to(stored._t.device).long().reshape(-1)
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= stored.shape[0]):
            raise MXNetError(f"row_sparse_pull: row_ids out of range for key {key!r} "
                             f"with {stored.shape[0]} rows")
        with torch.no_grad():
            rows = torch.zeros_like(stored._t)
            rows[idx] = stored._t[idx]
            out._t.copy_(rows)

    def set_gradient_compression(self, compression_params):
        """Set 2-bit gradient compression: ``{'type': '2bit', 'threshold': 0.5}``.

        Each pushed gradient is added to a residual kept per key and device; residual
        values ``>= threshold`` are sent as ``threshold``, values ``<= -threshold`` as
        ``-threshold``, the rest as 0, and what was sent is subtracted from the residual.
        Supported by ``device`` stores only, as in MXNet.

        Parameters
        ----------
        compression_params : dict
            ``type`` (required, ``'2bit'``) and ``threshold`` (float > 0, default 0.5).
        """
        if "device" not in self.type and "dist" not in self.type:
            raise Exception("Gradient compression is not supported for this type of kvstore")
        _check(isinstance(compression_params, dict),
               "unexpected type for param_dict: " + str(type(compression_params)))
        self._compression = _parse_compression(compression_params)
        self._residuals = {}

    def set_optimizer(self, optimizer):
        """Register an optimizer: pushes then update the stored weights with it.

        Parameters
        ----------
        optimizer : Optimizer
            The new optimizer for the store.
        """
        from .. import optimizer as opt
        self._set_updater(opt.get_updater(optimizer))

    @property
    def type(self):
        """The type of this kvstore (str)."""
        return self._type

    @property
    def rank(self):
        """The rank of this worker node (0 for an in-process store)."""
        return 0

    @property
    def num_workers(self):
        """The number of worker nodes (1 for an in-process store)."""
        return 1

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Save the optimizer (updater) state to a file (written atomically).

        Parameters
        ----------
        fname : str
            Path to the output states file.
        dump_optimizer : bool, default False
            Whether to also save the optimizer itself.
        """
        from ..ndarray.utils import atomic_write
        _check(self._updater is not None, "Cannot save states for distributed training")
        atomic_write(fname, self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        """Load the optimizer (updater) state from a file written by ``save_optimizer_states``.

        The file is read with a restricted unpickler: a malformed file, or one that
        references anything but arrays and optimizers, raises MXNetError naming it.

        Parameters
        ----------
        fname : str
            Path to input states file.
        """
        from ..format.pickle_safe import load_states
        _check(self._updater is not None, "Cannot load states for distributed training")
        with open(fname, "rb") as f:
            blob = f.read()
        load_states(blob, str(fname))  # validates: never runs code from the file
        self._updater.set_states(blob)

    def _set_updater(self, updater):
        """Set a push updater ``updater(key, merged, stored)`` into the store.

        Parameters
        ----------
        updater : function
        """
        self._updater = updater
        self._updater_func = updater
        self._str_updater_func = updater

    def _barrier(self):
        """Global barrier among workers (a no-op in one process)."""

    barrier = _barrier

    def _barrier_before_exit(self, barrier_before_exit=True):
        """Whether to barrier before exit (a no-op in one process)."""

    def _send_command_to_servers(self, head, body):
        """Send a command to the servers (there are none in one process)."""
        raise MXNetError("kvstore: there are no server nodes in an in-process kvstore")


def _parse_compression(params: dict) -> dict:
    """Validate gradient-compression parameters as MXNet's GradientCompression does."""
    if "type" not in params:
        raise MXNetError("Required parameter type of string is not presented")
    kind = str(params["type"])
    if kind != "2bit":
        raise MXNetError(f"Unknown type for gradient compression {kind}")
    raw = params.get("threshold", 0.5)
    try:
        threshold = float(str(raw))
    except ValueError:
        raise MXNetError(f"Invalid Parameter format for threshold expect float but "
                         f"value='{raw}'") from None
    if not threshold > 0:
        raise MXNetError(f"Check failed: params.threshold > 0 ({threshold} vs. 0) : "
                         "threshold must be greater than 0")
    # MXNet: other keys are ignored
    return {"type": kind, "threshold": threshold}

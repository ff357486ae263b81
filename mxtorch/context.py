"""Device contexts: ``mx.cpu(i)``, ``mx.gpu(i)`` and the current-context stack."""
from __future__ import annotations

import threading

import torch

from .base import MXNetError

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus",
           "gpu_memory_info"]


class Context:
    """A device context, as in MXNet.

    ``mx.cpu(0)`` and ``mx.cpu(1)`` are distinct contexts that both live on the one CPU
    device; ``mx.gpu(i)`` is CUDA device ``i``.

    Parameters
    ----------
    device_type : {'cpu', 'gpu', 'cpu_pinned', 'cpu_shared'} or Context
    device_id : int, default 0
    """

    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}
    _default_ctx = threading.local()
    __slots__ = ("device_typeid", "device_id", "_old_ctx", "_torch_device")

    def __init__(self, device_type, device_id: int = 0):
        if isinstance(device_type, Context):
            self.device_typeid = device_type.device_typeid
            self.device_id = device_type.device_id
        else:
            if device_type not in self.devstr2type:
                raise MXNetError(f"unknown device type {device_type!r}; "
                                 f"expected one of {sorted(self.devstr2type)}")
            self.device_typeid = self.devstr2type[device_type]
            self.device_id = int(device_id)
        self._old_ctx = None
        self._torch_device = None

    @property
    def device_type(self) -> str:
        return self.devtype2str[self.device_typeid]

    @property
    def torch_device(self) -> torch.device:
        """The torch device this context computes on."""
        dev = self._torch_device
        if dev is None:
            if self.device_typeid == 2:
                _check_gpu(self.device_id)
                dev = torch.device("cuda", self.device_id)
            else:
                dev = torch.device("cpu")
            self._torch_device = dev
        return dev

    def __hash__(self):
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __str__(self):
        return f"{self.device_type}({self.device_id})"

    __repr__ = __str__

    def __enter__(self):
        if not hasattr(Context._default_ctx, "value"):
            Context._default_ctx.value = Context("cpu", 0)
        self._old_ctx = Context._default_ctx.value
        Context._default_ctx.value = self
        return self

    def __exit__(self, ptype, value, trace):
        Context._default_ctx.value = self._old_ctx

    def empty_cache(self):
        """Release cached device memory (CUDA only; a no-op on CPU)."""
        if self.device_typeid == 2 and torch.cuda.is_available():
            with torch.cuda.device(self.device_id):
                torch.cuda.empty_cache()


def _check_gpu(device_id: int) -> None:
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if device_id >= count:
        raise MXNetError(f"gpu({device_id}) is not available: this machine has {count} "
                         "CUDA device(s)")


def cpu(device_id: int = 0) -> Context:
    """Return a CPU context. ``device_id`` only distinguishes contexts."""
    return Context("cpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """Return a pinned-memory CPU context."""
    return Context("cpu_pinned", device_id)


def gpu(device_id: int = 0) -> Context:
    """Return a GPU context (CUDA device ``device_id``)."""
    return Context("gpu", device_id)


def num_gpus() -> int:
    """Number of CUDA devices visible to torch."""
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def gpu_memory_info(device_id: int = 0) -> tuple[int, int]:
    """Return ``(free, total)`` bytes of GPU memory."""
    _check_gpu(device_id)
    return torch.cuda.mem_get_info(device_id)


def current_context() -> Context:
    """The context of the innermost ``with ctx:`` block, ``cpu(0)`` by default."""
    if not hasattr(Context._default_ctx, "value"):
        Context._default_ctx.value = Context("cpu", 0)
    return Context._default_ctx.value


def context_of_device(device: torch.device) -> Context:
    """Map a torch device back to a context (``cuda:i`` -> ``gpu(i)``)."""
    if device.type == "cuda":
        return Context("gpu", device.index or 0)
    return Context("cpu", 0)

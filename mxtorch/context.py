"""Device contexts: ``mx.cpu(i)``, ``mx.gpu(i)`` and the current-context stack."""
from __future__ import annotations

import threading
import warnings

import torch

from .base import MXNetError, _MXClassPropertyMetaClass, classproperty

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus",
           "gpu_memory_info", "get_cuda_compute_capability"]


class Context(metaclass=_MXClassPropertyMetaClass):
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

    @classproperty
    def default_ctx(cls) -> "Context":
        """The calling thread's default context (deprecated in MXNet: use
        ``current_context()`` and ``test_utils.set_default_context``)."""
        warnings.warn("Context.default_ctx has been deprecated. "
                      "Please use Context.current_context() instead. "
                      "Please use test_utils.set_default_context to set a default context",
                      DeprecationWarning)
        if not hasattr(Context._default_ctx, "value"):
            cls._default_ctx.value = Context("cpu", 0)
        return cls._default_ctx.value

    @default_ctx.setter
    def default_ctx(cls, val: "Context") -> None:  # noqa: N805 - a classproperty's setter
        warnings.warn("Context.default_ctx has been deprecated. "
                      "Please use Context.current_context() instead. "
                      "Please use test_utils.set_default_context to set a default context",
                      DeprecationWarning)
        cls._default_ctx.value = val

    @staticmethod
    def current_context() -> "Context":
        """The calling thread's current context (``mx.cpu(0)`` unless set)."""
        return current_context()

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


def get_cuda_compute_capability(ctx: Context) -> int:
    """The CUDA compute capability of a GPU context as an int (70 for ``sm_70``).

    Parameters
    ----------
    ctx : Context
        A GPU context.
    """
    if ctx.device_type != "gpu":
        raise ValueError("Expecting a gpu context to get cuda compute capability, "
                         "while received ctx {}".format(str(ctx)))
    _check_gpu(ctx.device_id)
    major, minor = torch.cuda.get_device_capability(ctx.device_id)
    return major * 10 + minor


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

"""Program backends: the one place where a compiled graph is optimized.

A backend takes a :class:`~mxtorch.graph.compile.GraphProgram` with what it needs (the
inputs frozen as constants, example tensors, the device; inference only) and returns a
callable running the same program faster. MXNet's switches choose one by name:
``Symbol.optimize_for(backend)``/``HybridBlock.optimize_for``,
``hybridize(backend=..., static_alloc=True, static_shape=True)``,
``MXNET_SUBGRAPH_BACKEND``, ``Module.bind(for_training=False)`` and
``Executor.optimize_for_inference``. The backends:

=========  ================================  ===========================================
name       MXNet names                       what runs
=========  ================================  ===========================================
onednn     ``MKLDNN``, ``ONEDNN``, ``DNNL``  the hand-tuned CPU path (:mod:`.cpu_tuned`)
jit        ``JIT``                           ``torch.jit`` trace + freeze
inductor   ``INDUCTOR``, ``TORCH_COMPILE``   ``torch.compile``
cudagraph  ``CUDAGRAPH``                     jit's program as a CUDA graph (CUDA)
=========  ================================  ===========================================

``onednn`` is the default: fused oneDNN Convolution[+BatchNorm][+add][+ReLU] groups on
channels-last activations, else jit's program. The same package traces a bound
executor's training steps into straight-line programs (:func:`trace_training_step`).
On CUDA every backend's program is replayed as a CUDA graph where shapes are static.
``default``/``default_v2`` are MXNet's partitioning backends (:mod:`..partition`), which
change the graph, not the program. A name that is none of these, or a backend this
machine cannot run, is an :class:`~mxtorch.base.MXNetError` naming the known ones. No
backend changes process-wide state.
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Callable, NamedTuple, Sequence

import torch

from ...base import MXNetError
from .inference import InferenceOptimizer

__all__ = ["Backend", "BACKENDS", "backend_from_env", "names", "is_program_backend",
           "resolve", "create", "DEFAULT", "InferenceOptimizer", "training_trace_mode",
           "training_trace_cost", "trace_training_step"]


def _always() -> str | None:
    return None


def _needs_cuda() -> str | None:
    return None if torch.cuda.is_available() else "it needs a CUDA device"


class Backend(NamedTuple):
    """One program backend: its name, MXNet's names for it, and where its builder is."""
    name: str
    aliases: tuple[str, ...]
    builder: str                      # "module:function", imported on first use
    unavailable: Callable[[], str | None] = _always   # why it cannot run here, or None


BACKENDS: dict[str, Backend] = {b.name: b for b in (
    Backend("onednn", ("MKLDNN", "ONEDNN", "DNNL"), ".cpu_tuned:build"),
    Backend("jit", ("JIT",), ".inference:build_jit"),
    Backend("inductor", ("INDUCTOR", "TORCH_COMPILE"), ".inference:build_inductor"),
    Backend("cudagraph", ("CUDAGRAPH",), ".inference:build_jit", _needs_cuda),
)}

#: the backend the optimizing switches without a name (static_alloc + static_shape,
#: ``Module.bind(for_training=False)``) pick
DEFAULT = "onednn"

_BY_NAME = {alias: b for b in BACKENDS.values() for alias in (b.name.upper(),) + b.aliases}


def backend_from_env() -> str | None:
    """The backend named by ``MXNET_SUBGRAPH_BACKEND`` (``NONE`` or empty: none)."""
    name = os.environ.get("MXNET_SUBGRAPH_BACKEND", "").strip()
    return None if not name or name.upper() == "NONE" else name


def names() -> list[str]:
    """Every name a program backend answers to (MXNet's spellings and ours)."""
    return sorted(_BY_NAME)


def is_program_backend(name: Any) -> bool:
    """Whether ``name`` names a program backend (available here or not)."""
    return isinstance(name, str) and name.upper() in _BY_NAME


def resolve(name: str | None) -> Backend:
    """The backend ``name`` picks (no name: :data:`DEFAULT`); MXNetError naming the known
    backends when ``name`` is unknown or cannot run on this machine."""
    if not name:
        return BACKENDS[DEFAULT]
    backend = _BY_NAME.get(str(name).upper()) if isinstance(name, str) else None
    if backend is None:
        from ..partition import BACKENDS as PARTITIONING
        raise MXNetError(f"backend '{name}' is not a known backend; program backends: "
                         f"{', '.join(names())}; partitioning backends: "
                         f"{', '.join(sorted(PARTITIONING))}")
    why = backend.unavailable()
    if why is not None:
        raise MXNetError(f"backend '{name}' cannot run here: {why}; available backends: "
                         f"{', '.join(n for n in names() if _BY_NAME[n].unavailable() is None)}")
    return backend


def _builder(backend: Backend) -> Callable[..., Any]:
    """The backend's build function, its module imported on first use."""
    module, func = backend.builder.split(":")
    build: Callable[..., Any] = getattr(importlib.import_module(module, __name__), func)
    return build


def create(program: Any, const_idx: Sequence[int], backend: str | None = None,
           name: str = "graph") -> InferenceOptimizer:
    """``program`` optimized for inference by ``backend`` (see :func:`resolve`): a callable
    ``(tensors, device)`` giving the outputs, or None where the caller runs the plain
    program (first call with an input signature, or compilation failed)."""
    chosen = resolve(backend)
    return InferenceOptimizer(program, const_idx, _builder(chosen), chosen.name, name=name,
                              cuda_graphs=True, require_cuda=chosen.name == "cudagraph")


# --------------------------------------------------------------- training steps
# A bound executor's training step may run as two traced straight-line programs (the
# hand-tuned CPU backend's :mod:`.cpu_tuned.training`); the executor reaches them here.
def _training() -> Any:
    return importlib.import_module(".cpu_tuned.training", __name__)


def training_trace_mode(device: torch.device) -> str | None:
    """How the training steps of executors on ``device`` are traced: None (never),
    ``"auto"`` (when it pays) or ``"always"`` (``MXTORCH_TRACE_TRAINING``)."""
    mode: str | None = _training().trace_mode(device)
    return mode


def training_trace_cost() -> Any:
    """The cost model (:class:`~mxtorch.graph.budget.CostModel`) of tracing a step."""
    return _training().TRACE_COST


def trace_training_step(program: Any, tensors: Sequence[torch.Tensor], slots: Sequence[int],
                        outs: Sequence[torch.Tensor], device: torch.device | None) -> Any:
    """The traced training step (``forward``/``backward`` programs) of ``program`` on
    ``tensors`` with the gradients of ``tensors[slots]``, or None where tracing cannot
    replay the step faithfully."""
    return _training().trace_step(program, tensors, slots, outs, device)

"""Optimizing passes for compiled graphs in inference (MXNet's subgraph backends).

MXNet 1.9.1 fuses Convolution+BatchNorm(+ReLU) with oneDNN when a graph runs for
inference (``hybridize(static_alloc=True, static_shape=True)``, ``optimize_for(backend)``,
``MXNET_SUBGRAPH_BACKEND``, ``Module.bind(for_training=False)``). Here the same is done
on the torch program of a :class:`~mxtorch.graph.compile.GraphProgram`:

* on CPU, Convolution[+BatchNorm][+add][+ReLU] groups run as single oneDNN calls on
  channels-last activations with folded, prepacked weights (:mod:`.fusion`, MXNet's
  ``MKLDNN`` backend, the default);
* otherwise (CUDA, graphs with no convolution, ``backend="jit"``) the inference
  ``torch.fx`` module is traced with the parameters as constants, ``torch.jit.freeze``
  folds BatchNorm into the preceding convolutions and ``torch.jit.optimize_for_inference``
  prepacks oneDNN (MKLDNN) weights on CPU;
* ``backend="inductor"`` uses ``torch.compile`` instead;
* on CUDA with static shapes the frozen program is replayed as a CUDA graph.

Compiled programs are cached per input signature (shapes, dtypes, device) and compiled
on the second call with a signature, so one-off calls never pay for compilation; a
shape change compiles once more. Parameters are frozen as constants: a parameter
changed in place or replaced is detected (tensor identity and version counter) and
triggers a recompilation. Any failure runs the plain program, with one warning.
"""
from __future__ import annotations

import logging
import os
import time
import warnings
from typing import Callable, Sequence

import torch

from . import fusion
from .fusion import fold_batchnorm

__all__ = ["fold_batchnorm", "InferenceOptimizer", "backend_from_env", "BACKENDS"]

log = logging.getLogger(__name__)

#: backend names accepted by ``optimize_for`` / ``MXNET_SUBGRAPH_BACKEND``
#: (``default``/``default_v2`` name MXNet's partitioning backends, :mod:`.partition`)
BACKENDS = {"MKLDNN": "onednn", "ONEDNN": "onednn", "DNNL": "onednn",
            "MKLDNN_QUANTIZE": "onednn", "JIT": "jit",
            "TENSORRT": "jit", "INDUCTOR": "inductor",
            "TORCH_COMPILE": "inductor", "CUDAGRAPH": "jit"}

_MAX_RECOMPILES = 4  # per signature: a "constant" changing every call is not constant


def backend_from_env() -> str | None:
    """The backend named by ``MXNET_SUBGRAPH_BACKEND`` (``NONE`` or empty: none)."""
    name = os.environ.get("MXNET_SUBGRAPH_BACKEND", "").strip()
    return None if not name or name.upper() == "NONE" else name


def resolve_backend(name: str | None) -> str:
    """Map an MXNet backend name to the mxtorch strategy (``onednn``, ``jit`` or
    ``inductor``); no name means the default, ``onednn``."""
    if not name:
        return "onednn"
    return BACKENDS.get(str(name).upper(), "onednn")


class _Frozen(torch.nn.Module):
    """The inference program with the constant inputs held as buffers (for freezing)."""

    def __init__(self, gm: torch.nn.Module, n_inputs: int, const_idx: Sequence[int],
                 consts: Sequence[torch.Tensor]):
        super().__init__()
        self.gm = gm
        self.n_inputs = n_inputs
        self.const_idx = list(const_idx)
        for k, t in enumerate(consts):
            self.register_buffer(f"c{k}", t.detach())

    def forward(self, *data):
        slots: list = [None] * self.n_inputs
        for k, i in enumerate(self.const_idx):
            slots[i] = getattr(self, f"c{k}")
        it = iter(data)
        for i in range(self.n_inputs):
            if slots[i] is None:
                slots[i] = next(it)
        return tuple(self.gm(*slots))


class _CudaGraph:
    """Replay a compiled program as a CUDA graph on static input buffers."""

    def __init__(self, fn: Callable, data: Sequence[torch.Tensor]):
        self.static_in = [t.clone() for t in data]
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                fn(*self.static_in)
        torch.cuda.current_stream().wait_stream(stream)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_out = fn(*self.static_in)

    def __call__(self, *data):
        for dst, src in zip(self.static_in, data):
            dst.copy_(src)
        self.graph.replay()
        return tuple(t.clone() for t in self.static_out)


class _Entry:
    """One compiled program for one input signature."""
    __slots__ = ("fn", "fingerprint", "seen", "compiles")

    def __init__(self):
        self.fn: Callable | None = None
        self.fingerprint: tuple = ()
        self.seen = 0
        self.compiles = 0


class InferenceOptimizer:
    """Compile and cache the inference program of a GraphProgram per input signature.

    ``__call__(tensors, device)`` returns the outputs, or ``None`` when the caller must
    run the plain program (first call with a signature, or compilation failed).

    Parameters
    ----------
    program : GraphProgram
        The compiled symbol graph.
    const_idx : sequence of int
        Positions (in ``program.input_names``) of parameters/auxiliary states to freeze.
    backend : str, optional
        MXNet backend name (``MKLDNN``...) or ``inductor``; None uses the jit strategy.
    name : str
        Used in log and warning messages.
    """

    def __init__(self, program, const_idx: Sequence[int], backend: str | None = None,
                 name: str = "graph", cuda_graphs: bool = True):
        self.program = program
        self.const_idx = sorted(set(const_idx))
        const = set(self.const_idx)
        self.data_idx = [i for i in range(len(program.input_names)) if i not in const]
        self.strategy = resolve_backend(backend)
        self.name = name
        self.cuda_graphs = cuda_graphs
        self.failed = False
        self._cache: dict[tuple, _Entry] = {}

    def _signature(self, tensors: Sequence[torch.Tensor]) -> tuple:
        return tuple((tuple(tensors[i].shape), tensors[i].dtype, tensors[i].device)
                     for i in self.data_idx)

    def _fingerprint(self, tensors: Sequence[torch.Tensor]) -> tuple:
        return tuple((id(tensors[i]), tensors[i]._version) for i in self.const_idx)

    def __call__(self, tensors: Sequence[torch.Tensor], device) -> tuple | None:
        if self.failed:
            return None
        sig = self._signature(tensors)
        entry = self._cache.get(sig)
        if entry is None:
            entry = self._cache[sig] = _Entry()
        fp = self._fingerprint(tensors)
        if entry.fn is not None and entry.fingerprint == fp:
            return entry.fn(*[tensors[i] for i in self.data_idx])
        entry.seen += 1
        if entry.seen < 2:
            return None  # compile on the second call with this signature
        if entry.compiles >= _MAX_RECOMPILES:
            return None
        return self._compile(entry, tensors, device, fp)

    def _compile(self, entry: _Entry, tensors, device, fp: tuple) -> tuple | None:
        """Compile for this signature; on any failure warn once and stay on the plain path."""
        t0 = time.perf_counter()
        data = [tensors[i] for i in self.data_idx]
        if self.strategy == "onednn" and not (data and data[0].is_cuda):
            fusion.prepare()   # its one warning (no C compiler) must not be silenced below
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn = self._build(tensors, data, device)
                out = fn(*data)
                ref = self.program(tensors, False, device)
            _check_same(out, ref)
        except Exception as err:  # noqa: BLE001 -- any failure means: run the plain program
            self.failed = True
            warnings.warn(f"mxtorch: optimizing '{self.name}' for inference failed "
                          f"({type(err).__name__}: {err}); running the plain program",
                          RuntimeWarning, stacklevel=4)
            return None
        entry.fn, entry.fingerprint = fn, fp
        entry.compiles += 1
        log.debug("compiled '%s' (%s) for %s in %.3f s", self.name, self.strategy,
                  self._signature(tensors), time.perf_counter() - t0)
        return ref

    def _build(self, tensors, data, device) -> Callable:
        """oneDNN fusion, or trace + freeze (+ oneDNN prepacking), or torch.compile
        (+ CUDA graph)."""
        on_cuda = bool(data) and data[0].is_cuda
        consts = [tensors[i].detach() for i in self.const_idx]
        if self.strategy == "onednn" and not on_cuda and fusion.available():
            gm, groups = fusion.fuse_program(self.program, tensors, self.const_idx, device)
            if groups:
                log.debug("'%s': %d oneDNN convolution groups", self.name, groups)
                return _Frozen(gm, len(tensors), self.const_idx, consts).eval()
        gm = self.program.module(False, device)
        mod = _Frozen(gm, len(tensors), self.const_idx, consts).eval()
        if self.strategy == "inductor":
            fn = torch.compile(mod, dynamic=False)
        else:
            traced = torch.jit.trace(mod, tuple(data), check_trace=False)
            fn = torch.jit.freeze(traced)
            fn = torch.jit.optimize_for_inference(fn)
        if on_cuda and self.cuda_graphs and torch.cuda.is_available():
            fn = _CudaGraph(fn, data)
        return fn


def _check_same(out: Sequence[torch.Tensor], ref: Sequence[torch.Tensor]) -> None:
    """Raise when the compiled program disagrees with the plain one (float32 tolerance)."""
    if len(out) != len(ref):
        raise RuntimeError(f"{len(out)} outputs instead of {len(ref)}")
    for a, b in zip(out, ref):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise RuntimeError(f"output {tuple(a.shape)} {a.dtype} instead of "
                               f"{tuple(b.shape)} {b.dtype}")
        if a.is_floating_point():
            scale = float(b.abs().max()) if b.numel() else 0.0
            if not torch.allclose(a, b, rtol=1e-3, atol=1e-4 * max(1.0, scale)):
                raise RuntimeError("compiled outputs differ from the plain program")
        elif not torch.equal(a, b):
            raise RuntimeError("compiled outputs differ from the plain program")

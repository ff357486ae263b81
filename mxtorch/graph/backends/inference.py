"""What every program backend shares: the per-signature compile cache, the frozen
constants, CUDA-graph replay, and the torch-made backends (``jit``, ``inductor``).

A backend's build function (:mod:`mxtorch.graph.backends`) turns the inference program of
a :class:`~mxtorch.graph.compile.GraphProgram` with its constant inputs into a callable on
the data inputs. :class:`InferenceOptimizer` caches the built programs per input signature
(shapes, dtypes, device) and builds on the second call with a signature, so one-off calls
never pay for compilation; a shape change builds once more. Constants (parameters and
auxiliary states) are frozen: one changed in place or replaced is detected (tensor identity
and version counter) and triggers a rebuild. Any failure runs the plain program: Any, with one
warning. On CUDA with static shapes the built program is replayed as a CUDA graph.
"""
from __future__ import annotations

import logging
import time
import warnings
from typing import Any, Callable, Sequence

import torch

__all__ = ["InferenceOptimizer", "build_jit", "build_inductor", "Frozen"]

log = logging.getLogger(__name__)

_MAX_RECOMPILES = 4  # per signature: a "constant" changing every call is not constant


class Frozen(torch.nn.Module):
    """The inference program with the constant inputs held as buffers (for freezing)."""

    def __init__(self, gm: torch.nn.Module, n_inputs: int, const_idx: Sequence[int],
                 consts: Sequence[torch.Tensor]):
        super().__init__()
        self.gm = gm
        self.n_inputs = n_inputs
        self.const_idx = list(const_idx)
        for k, t in enumerate(consts):
            self.register_buffer(f"c{k}", t.detach())

    def forward(self, *data: torch.Tensor) -> tuple[Any, ...]:
        slots: list[Any] = [None] * self.n_inputs
        for k, i in enumerate(self.const_idx):
            slots[i] = getattr(self, f"c{k}")
        it = iter(data)
        for i in range(self.n_inputs):
            if slots[i] is None:
                slots[i] = next(it)
        return tuple(self.gm(*slots))


class _CudaGraph:
    """Replay a compiled program as a CUDA graph on static input buffers."""

    def __init__(self, fn: Callable[..., Any], data: Sequence[torch.Tensor]):
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

    def __call__(self, *data: torch.Tensor) -> tuple[torch.Tensor, ...]:
        for dst, src in zip(self.static_in, data):
            dst.copy_(src)
        self.graph.replay()
        return tuple(t.clone() for t in self.static_out)


class _Entry:
    """One compiled program for one input signature."""
    __slots__ = ("fn", "fingerprint", "seen", "compiles")

    def __init__(self) -> None:
        self.fn: Callable[..., Any] | None = None
        self.fingerprint: tuple[Any, ...] = ()
        self.seen = 0
        self.compiles = 0


class InferenceOptimizer:
    """Build and cache a backend's inference program of a GraphProgram per input signature.

    ``__call__(tensors, device)`` returns the outputs, or ``None`` when the caller must
    run the plain program (first call with a signature, or the build failed).

    Parameters
    ----------
    program : GraphProgram
        The compiled symbol graph.
    const_idx : sequence of int
        Positions (in ``program.input_names``) of parameters/auxiliary states to freeze.
    build : callable
        The backend's ``build(program: Any, tensors, const_idx, device)`` giving a callable on
        the data inputs.
    strategy : str
        The backend's name (log messages).
    name : str
        The graph's name, used in log and warning messages.
    """

    def __init__(self, program: Any, const_idx: Sequence[int], build: Callable[..., Any],
                 strategy: str, name: str = "graph", cuda_graphs: bool = True,
                 require_cuda: bool = False):
        self.program = program
        self.const_idx = sorted(set(const_idx))
        const = set(self.const_idx)
        self.data_idx = [i for i in range(len(program.input_names)) if i not in const]
        self.build = build
        self.strategy = strategy
        self.name = name
        self.cuda_graphs = cuda_graphs
        self.require_cuda = require_cuda
        self.failed = False
        self._cache: dict[tuple[Any, ...], _Entry] = {}

    def _signature(self, tensors: Sequence[torch.Tensor]) -> tuple[Any, ...]:
        return tuple((tuple(tensors[i].shape), tensors[i].dtype, tensors[i].device)
                     for i in self.data_idx)

    def _fingerprint(self, tensors: Sequence[torch.Tensor]) -> tuple[Any, ...]:
        return tuple((id(tensors[i]), tensors[i]._version) for i in self.const_idx)

    def __call__(self, tensors: Sequence[torch.Tensor],
                 device: torch.device | None) -> tuple[Any, ...] | None:
        if self.failed:
            return None
        sig = self._signature(tensors)
        entry = self._cache.get(sig)
        if entry is None:
            entry = self._cache[sig] = _Entry()
        fp = self._fingerprint(tensors)
        if entry.fn is not None and entry.fingerprint == fp:
            out: tuple[Any, ...] = entry.fn(*[tensors[i] for i in self.data_idx])
            return out
        entry.seen += 1
        if entry.seen < 2:
            return None  # compile on the second call with this signature
        if entry.compiles >= _MAX_RECOMPILES:
            return None
        return self._compile(entry, tensors, device, fp)

    def _compile(self, entry: _Entry, tensors: Sequence[torch.Tensor],
                 device: torch.device | None, fp: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """Build for this signature; on any failure warn once and stay on the plain path."""
        t0 = time.perf_counter()
        data = [tensors[i] for i in self.data_idx]
        on_cuda = bool(data) and data[0].is_cuda
        try:
            if self.require_cuda and not on_cuda:
                raise RuntimeError(f"backend '{self.strategy}' runs CUDA inputs only")
            with torch.no_grad():
                fn = self.build(self.program, tensors, self.const_idx, device)
                if on_cuda and self.cuda_graphs and torch.cuda.is_available():
                    fn = _CudaGraph(fn, data)
                out = fn(*data)
                ref: tuple[Any, ...] = self.program(tensors, False, device)
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


def frozen(program: Any, tensors: Sequence[torch.Tensor], const_idx: Sequence[int],
           device: torch.device | None) -> Frozen:
    """The plain inference program with the constants held as buffers."""
    consts = [tensors[i].detach() for i in const_idx]
    gm = program.module(False, device)
    return Frozen(gm, len(tensors), const_idx, consts).eval()


def build_jit(program: Any, tensors: Sequence[torch.Tensor], const_idx: Sequence[int],
              device: torch.device | None) -> Callable[..., Any]:
    """Trace + freeze (BatchNorm folded into convolutions) + ``optimize_for_inference``
    (oneDNN weight prepacking on CPU)."""
    const = set(const_idx)
    data = tuple(t for i, t in enumerate(tensors) if i not in const)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the tracer's notes on Python values
        traced = torch.jit.trace(frozen(program, tensors, const_idx, device), data,
                                 check_trace=False)
        fn = torch.jit.freeze(traced)
        return torch.jit.optimize_for_inference(fn)


def build_inductor(program: Any, tensors: Sequence[torch.Tensor], const_idx: Sequence[int],
                   device: torch.device | None) -> Callable[..., Any]:
    """``torch.compile`` of the frozen program (static shapes)."""
    return torch.compile(frozen(program, tensors, const_idx, device), dynamic=False)


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

"""Whether compiling a program pays for itself: the one place that decides.

A compiled program (a training step traced into straight-line aten code, see
:mod:`.training`) runs faster than the plain program, but compiling it costs time once,
in proportion to the graph's size: tracing takes 3-10 ms per operator node, about as
long as 100-300 plain training steps of that node on small tensors. Many programs run
only a few times (a test binding hundreds of small executors, an unrolled RNN checked
for one step), and there compiling costs far more than it can save.

So each input signature has a :class:`CompileGate`: the plain program runs and the time
it takes is charged to the gate; compiling is due when that time reaches the estimated
cost of compiling (the rule of ski rental: however many runs are still to come, at most
twice the time of the better of the two choices is spent, and a program that runs a few
times never pays for a compilation). The estimate is a :class:`CostModel`'s, whose cost
per node is the median of the compilations measured so far in the process. Once compiled,
the compiled program's first runs are timed too, and it is dropped for the plain one if
its typical (median) run is slower.

Bound executors use it for their traced training steps; an optimizing backend
(``graph/backends/``) whose compilation may cost more than it saves asks the same way.
"""
from __future__ import annotations

from collections import deque

__all__ = ["CostModel", "CompileGate"]

# The first run of a signature is not timed (it builds the program, allocates, creates
# oneDNN primitives ... whichever path runs it), nor the first run after compiling.
_WARM_RUNS = 1
# Timed plain runs before compiling can be due; timed compiled runs that decide whether
# the compiled program is kept.
_PLAIN_RUNS = 2
_TRIAL_RUNS = 5
_KEPT_RUNS = 64   # plain run times kept for the comparison
_SAMPLES = 15   # compilations a CostModel's estimate is the median of


class CostModel:
    """Estimated seconds to compile a graph of ``nodes`` operator nodes:
    ``fixed + per_node * nodes``, ``per_node`` being the lower median of the last
    compilations measured (``per_node`` given here counts as the first): the process's
    first compilation also imports the tracer, seconds that say nothing of the next."""

    def __init__(self, fixed: float, per_node: float):
        self.fixed = fixed
        self._samples: deque = deque([per_node], maxlen=_SAMPLES)

    @property
    def per_node(self) -> float:
        ordered = sorted(self._samples)
        return ordered[(len(ordered) - 1) // 2]

    def estimate(self, nodes: int) -> float:
        return self.fixed + self.per_node * nodes

    def observe(self, nodes: int, seconds: float) -> None:
        """Record a compilation of a graph of ``nodes`` operator nodes that took
        ``seconds``."""
        self._samples.append(max(seconds - self.fixed, 0.0) / max(nodes, 1))


class CompileGate:
    """One program signature: the plain program runs until compiling it is due, then
    the compiled one (``compiled``) unless it turns out slower.

    The caller charges every run with :meth:`charge` (a run may be charged in parts,
    its forward with ``new_run=True`` and its backward after), asks :meth:`due` after
    a plain run's forward, and hands over what it compiled with :meth:`compiled_as`.
    With ``at_once`` compiling is due after the first run, and the compiled program is
    kept. Run times are compared by their medians: a collection or another process
    slows a few runs, not the typical one.
    """

    __slots__ = ("model", "nodes", "at_once", "compiled", "final", "_runs", "_run",
                 "_timed", "_plain", "_plain_total", "_fast")

    def __init__(self, model: CostModel, nodes: int, at_once: bool = False):
        self.model = model
        self.nodes = nodes
        self.at_once = at_once
        self.compiled = None       # the compiled program, once one runs
        self.final = False         # decided for good: nothing more to time
        self._runs = 0             # runs since the program now running was made
        self._run = 0.0            # the run in progress, while it is timed
        self._timed = False
        self._plain: deque = deque(maxlen=_KEPT_RUNS)   # times of whole runs
        self._plain_total = 0.0    # every timed plain second, the run in progress's too
        self._fast: list = []

    def charge(self, seconds: float, new_run: bool) -> None:
        """Charge ``seconds`` of running the program now in use (plain or compiled)."""
        if self.final:
            return
        if new_run:
            self._close_run()
            if self.compiled is not None and len(self._fast) >= _TRIAL_RUNS:
                self._decide()
                return
            self._runs += 1
            self._timed = self._runs > _WARM_RUNS
        if self._timed:
            self._run += seconds
            if self.compiled is None:
                self._plain_total += seconds

    def due(self) -> bool:
        """Whether the plain runs so far have taken as long as compiling would."""
        if self.compiled is not None or self.final:
            return False
        runs = len(self._plain) + self._timed
        return self.at_once or (runs >= _PLAIN_RUNS
                                and self._plain_total >= self.model.estimate(self.nodes))

    def compiled_as(self, program, seconds: float) -> None:
        """Take the compiled program, made in ``seconds`` (None: it cannot be compiled
        faithfully; the plain program runs for good)."""
        self.model.observe(self.nodes, seconds)
        self.compiled = program
        self.final = program is None or self.at_once
        self._runs, self._timed = 0, False    # the rest of this plain run is not timed

    def never(self) -> None:
        """Keep the plain program for good."""
        self.compiled, self.final = None, True

    def _close_run(self) -> None:
        if self._timed:
            (self._plain if self.compiled is None else self._fast).append(self._run)
        self._run, self._timed = 0.0, False

    def _decide(self) -> None:
        """After the trial runs: keep the compiled program unless it is slower."""
        if _median(self._fast) > _median(self._plain):
            self.compiled = None
        self.final = True


def _median(times) -> float:
    ordered = sorted(times)
    return ordered[len(ordered) // 2] if ordered else float("inf")

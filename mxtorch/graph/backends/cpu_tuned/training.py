"""A bound executor's training step as two straight-line torch programs.

``Executor.forward(is_train=True)`` followed by ``backward()`` normally records the
GraphProgram on torch's autograd tape and replays it backwards: per node, the engine's
bookkeeping and, for the operators with MXNet's own gradient (``SoftmaxOutput`` ...), a
Python call. Here the step is traced once per input signature, in fake-tensor mode,
with ``torch.autograd.grad`` inside (as AOTAutograd does): the result is one aten-level
graph of forward and backward together, which is cut in two:

* the forward program computes the outputs, applies the in-place updates of auxiliary
  states, and returns the values the backward needs;
* the backward program takes those and the head gradients and returns the gradients.

Where OpenMP's workers sleep between regions, every matrix product in them runs on
:mod:`.gemm`'s pool, with its layout worked out at trace time; where every
other tensor of the step is small the other operators run on one thread (MXNet's
operator tuning makes the same choice), so no OpenMP worker is woken for them. The
programs are straight-line Python calling the aten operators directly, with the views
that change nothing folded away.

Tracing costs 3-10 ms per operator node of the symbol (make_fx's work per aten
operator), as long as a few hundred autograd steps of that node on small tensors, so a
signature is traced only once its autograd steps have taken as long as the trace is
estimated to take (:mod:`.budget`, with ``TRACE_COST``), and the traced step is kept
only if it runs faster. ``MXTORCH_TRACE_TRAINING=always`` traces at the first step
(the traced programs run from the second), ``0`` never.

Tracing refuses what it cannot replay faithfully: an operator that reads tensor values
in Python fails under fake tensors, and a graph with random operators (``Dropout``) is
left to autograd, whose random streams users can seed. Either way the executor keeps
the autograd path for that signature; nothing is lost but speed.
"""
from __future__ import annotations

import logging
import operator
import os
import time
from typing import Callable, Sequence

import torch
import torch.fx as fx

from ....ops import tuning
from ...budget import CostModel
from . import gemm

__all__ = ["TrainingStep", "trace_step", "trace_mode", "TRACE_COST"]

_LOG = logging.getLogger(__name__)
_aten = torch.ops.aten
_SMALL = 1 << 16   # elements: steps whose tensors are all this small run on one thread

#: the estimated cost of tracing a step: measured here on 2 cores, 20-50 ms for a graph
#: of one or two operators, then 3-10 ms per operator node (LSTM cells, dense layers,
#: elementwise chains of 2 to 400 nodes); refined by every trace the process makes
TRACE_COST = CostModel(fixed=0.02, per_node=0.005)


def trace_mode(device) -> str | None:
    """How training steps on ``device`` are traced (``MXTORCH_TRACE_TRAINING``): None
    (``0``, or not on CPU), ``"always"`` (at the first step) or ``"auto"`` (when it
    pays, the default)."""
    value = os.environ.get("MXTORCH_TRACE_TRAINING", "auto").strip().lower()
    if value in ("0", "off", "false") or device.type != "cpu":
        return None
    return "always" if value == "always" else "auto"


class TrainingStep:
    """``forward(tensors) -> outputs`` then ``backward(head_grads) -> grads`` (one per
    slot, None where the output does not depend on it). Both run without autograd."""

    def __init__(self, fwd: Callable, bwd: Callable, n_outputs: int, head_mask: tuple,
                 one_thread: bool, fresh: tuple, head_shapes: list):
        self._fwd, self._bwd = fwd, bwd
        self._n = n_outputs
        self.head_mask = head_mask     # which outputs take a head gradient
        self.one_thread = one_thread
        self.fresh = fresh             # which gradients are new memory nothing else holds
        self._head_shapes = head_shapes
        self._ones: list | None = None
        self._saved: tuple | None = None

    def _call(self, fn, args):
        grad_mode = torch.is_grad_enabled()
        torch._C._set_grad_enabled(False)
        threads = tuning.single() if self.one_thread else 0
        try:
            return fn(*args)
        finally:
            torch._C._set_grad_enabled(grad_mode)
            tuning.restore(threads)

    def forward(self, tensors: Sequence[torch.Tensor]) -> tuple:
        res = self._call(self._fwd, tensors)
        self._saved = res[self._n:]
        return res[:self._n]

    def ones(self) -> list:
        """The default head gradients (ones); the backward program only reads them."""
        if self._ones is None:
            self._ones = [torch.ones(s, dtype=d, device=v) for s, d, v in self._head_shapes]
        return self._ones

    def backward(self, head_grads: Sequence[torch.Tensor]) -> tuple:
        return self._call(self._bwd, (*head_grads, *self._saved))


def trace_step(program, tensors: Sequence[torch.Tensor], slots: Sequence[int],
               outs: Sequence[torch.Tensor], device) -> TrainingStep | None:
    """Trace ``program``'s training forward on ``tensors`` and the gradients of
    ``tensors[slots]``; ``outs`` are the outputs of an autograd run of the same step (the
    ones requiring grad take head gradients). None when the step cannot be traced
    faithfully."""
    from torch.fx.experimental.proxy_tensor import get_proxy_mode, make_fx
    start = time.perf_counter()
    n_in = len(tensors)
    slots = list(slots)
    mask = tuple(o.requires_grad for o in outs)

    def joint(*args):
        inputs = list(args[:n_in])
        for k in slots:
            inputs[k] = inputs[k].detach().requires_grad_(True)
        with torch.enable_grad():
            outs = program(inputs, True, device)
        # MXNet updates some auxiliary states in the backward pass (BatchNorm's moving
        # statistics): the nodes traced from here on belong to backward()
        marks.append(len(get_proxy_mode().tracer.graph.nodes))
        diff = [o for o, m in zip(outs, mask) if m]
        grads = torch.autograd.grad(diff, [inputs[k] for k in slots], list(args[n_in:]),
                                    allow_unused=True) if diff else [None] * len(slots)
        return (*(o.detach() for o in outs), *grads)

    heads = [torch.zeros_like(o) for o, m in zip(outs, mask) if m]
    marks: list = []
    try:
        gm = make_fx(joint, tracing_mode="fake", _allow_non_fake_inputs=True)(
            *tensors, *heads)
    except Exception as err:  # noqa: BLE001 -- any failure keeps the autograd path
        _LOG.debug("training step: not traced (%s: %s)", type(err).__name__, err)
        return None
    for node in gm.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) \
                and torch.Tag.nondeterministic_seeded in node.target.tags:
            _LOG.debug("training step: random operator %s, not traced", node.target)
            return None
    in_forward_pass = set(list(gm.graph.nodes)[:marks[-1]])
    _use_pool(gm.graph, torch.get_num_threads())
    one_thread = _all_small(gm.graph)
    _fold_views(gm.graph)
    fg, bg = _split(gm.graph, n_in, len(outs), in_forward_pass)
    _LOG.debug("training step traced in %.3f s (%d nodes, one thread: %s)",
               time.perf_counter() - start, len(gm.graph.nodes), one_thread)
    head_shapes = [(h.shape, h.dtype, h.device) for h in heads]
    return TrainingStep(_straight_line(fg, gm), _straight_line(bg, gm), len(outs), mask,
                        one_thread, _fresh_results(bg), head_shapes)


def _val(node):
    return node.meta.get("val") if isinstance(node, fx.Node) else None


_PRODUCTS = (_aten.mm.default, _aten.addmm.default)


def _aliases(target) -> bool:
    """A view (or an in-place update): no work of its own."""
    returns = target._schema.returns
    return bool(returns) and returns[0].alias_info is not None


def _all_small(graph: fx.Graph) -> bool:
    """Whether every operator other than the pool's products and views makes at most
    ``_SMALL`` elements on CPU, and every product left to torch is under operator
    tuning's one-thread limit (then one thread does them faster than OpenMP)."""
    for node in graph.nodes:
        target = node.target
        if node.op != "call_function" or hasattr(target, "by_address") or (
                isinstance(target, torch._ops.OpOverload) and _aliases(target)):
            continue
        if target in _PRODUCTS:
            a, b = (_val(x) for x in node.args[-2:])
            if tuning.product(a.shape[0], a.shape[1], b.shape[1]) >= tuning.ONE_THREAD_US:
                return False
            continue
        vals = _val(node)
        for v in vals if isinstance(vals, (tuple, list)) else (vals,):
            if isinstance(v, torch.Tensor) and (v.numel() > _SMALL or v.device.type != "cpu"):
                return False
    return True


def _use_pool(graph: fx.Graph, threads: int) -> None:
    """Drop ``detach`` (the programs run without autograd) and put the matrix products on
    the GEMM pool, each with its layout fixed now."""
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        if node.target is _aten.detach.default:
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)
        elif node.target is _aten.mm.default and not node.kwargs:
            fn = gemm.planned(_val(node.args[0]), _val(node.args[1]), threads=threads)
            if fn is not None:
                node.target = fn
        elif node.target is _aten.addmm.default and not node.kwargs and len(node.args) == 3:
            bias, a, b = (_val(x) for x in node.args)
            fn = gemm.planned(a, b, bias, threads=threads) if bias is not None else None
            if fn is not None:
                node.target = fn


def _mutates(node: fx.Node) -> bool:
    target = node.target
    return isinstance(target, torch._ops.OpOverload) and target._schema.is_mutable


def _split(graph: fx.Graph, n_in: int, n_out: int,
           in_forward_pass: set) -> tuple[fx.Graph, fx.Graph]:
    """Cut the joint graph: the forward program is what the outputs and the in-place
    updates traced in the forward pass need; the rest is the backward program, fed by
    the head gradients and the forward values it uses."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    heads = placeholders[n_in:]
    (results,) = [n.args[0] for n in graph.nodes if n.op == "output"]
    needed: set = set()
    stack = [x for x in results[:n_out] if isinstance(x, fx.Node)]
    stack += [n for n in graph.nodes if n.op == "call_function" and _mutates(n)
              and n in in_forward_pass]
    while stack:
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(node.all_input_nodes)
    in_forward = set(placeholders[:n_in]) | needed
    backward = [n for n in graph.nodes if n.op not in ("placeholder", "output")
                and n not in in_forward]
    saved: dict = {}   # forward values the backward uses, in order
    for node in backward:
        saved.update((x, None) for x in node.all_input_nodes if x in in_forward)
    saved.update((x, None) for x in results[n_out:] if x in in_forward)
    fg, bg = fx.Graph(), fx.Graph()
    fenv: dict = {}
    benv = {h: bg.placeholder(h.name) for h in heads}
    for x in saved:
        benv[x] = bg.placeholder(f"saved_{x.name}")
        benv[x].meta = dict(x.meta)
    for node in graph.nodes:
        if node in in_forward:
            fenv[node] = fg.node_copy(node, fenv.__getitem__)
    for node in backward:
        benv[node] = bg.node_copy(node, benv.__getitem__)
    fg.output(tuple(fenv[x] for x in results[:n_out]) + tuple(fenv[x] for x in saved))
    bg.output(tuple(benv[x] if isinstance(x, fx.Node) else x for x in results[n_out:]))
    return fg, bg


# ---------------------------------------------------------------- views
def _is_view(node) -> bool:
    """A call of an operator that returns a view of its first argument."""
    if not isinstance(node, fx.Node) or node.op != "call_function":
        return False
    target = node.target
    if not isinstance(target, torch._ops.OpOverload) or not _aliases(target):
        return False
    returns = target._schema.returns
    return len(returns) == 1 and not returns[0].alias_info.is_write


def _geometry(node):
    v = _val(node)
    if not isinstance(v, torch.Tensor):
        return None
    return v.dtype, tuple(v.shape), v.stride(), v.storage_offset()


def _view_base(node: fx.Node, same) -> fx.Node:
    """The furthest tensor up ``node``'s chain of views for which ``same(node, base)``."""
    best, base = node, node
    while _is_view(base) and isinstance(base.args[0], fx.Node):
        base = base.args[0]
        if same(node, base):
            best = base
    return best


def _fold_views(graph: fx.Graph) -> None:
    """Drop views that change nothing, and the views a pool product reads only through
    the address (its layout was fixed from the view's strides), then the views nothing
    uses any more: a transpose costs as much as a small kernel's launch.

    * ``t(t(x))``, ``view(x, x.shape)`` -> ``x`` (same dtype, shape, strides, offset);
    * ``sum(x, dims, keepdim=True)`` used only through a view dropping ``dims`` ->
      ``sum(x, dims)``;
    * a product's operand ``t(w)`` -> ``w`` (same dtype and offset).
    """
    def identical(a, b):
        return _geometry(a) is not None and _geometry(a) == _geometry(b)

    def same_address(a, b):
        ga, gb = _geometry(a), _geometry(b)
        return ga is not None and gb is not None and (ga[0], ga[3]) == (gb[0], gb[3])

    for node in list(graph.nodes):
        if _is_view(node):
            base = _view_base(node, identical)
            if base is not node:
                node.replace_all_uses_with(base)
        elif node.target is _aten.sum.dim_IntList and len(node.args) == 3 and \
                node.args[2] is True and not node.kwargs and len(node.users) == 1:
            (user,) = node.users
            dims = [d % len(_val(node).shape) for d in node.args[1]]
            squeezed = [s for i, s in enumerate(_val(node).shape) if i not in dims]
            if _is_view(user) and user.args[0] is node and \
                    list(_val(user).shape) == squeezed and _val(user).is_contiguous():
                node.args = (node.args[0], node.args[1], False)
                node.meta["val"] = _val(user)
                user.replace_all_uses_with(node)
        by_address = getattr(node.target, "by_address", None)
        if by_address is not None:
            args = list(node.args)
            first = len(args) - 2    # (a, b) or (bias, a, b)
            for pos, ok in zip((first, first + 1), by_address):
                if ok and isinstance(args[pos], fx.Node):
                    args[pos] = _view_base(args[pos], same_address)
            node.args = tuple(args)
    for node in reversed(list(graph.nodes)):
        if _is_view(node) and not node.users:
            graph.erase_node(node)


def _fresh_results(graph: fx.Graph) -> tuple:
    """For each result of ``graph``: whether it is memory made by the graph that no other
    result and no input shares (it can be handed over without a copy)."""
    def base(x):
        """``(node, item)`` of the memory ``x`` lies in; node None: not made here."""
        item = None
        while isinstance(x, fx.Node) and x.op == "call_function":
            target = x.target
            if target is operator.getitem:
                x, item = x.args
            elif isinstance(target, torch._ops.OpOverload) and _aliases(target):
                x, item = x.args[0], None     # a view, or an in-place update
            else:
                return x, item
        return None, None

    (results,) = [n.args[0] for n in graph.nodes if n.op == "output"]
    bases = [base(x) for x in results]
    return tuple(b[0] is not None and bases.count(b) == 1 for b in bases)


# ---------------------------------------------------------------- code
_LITERALS = (bool, int, str, type(None))


def _straight_line(graph: fx.Graph, owner: torch.nn.Module) -> Callable:
    """A Python function running ``graph``'s nodes in order (``owner`` holds the
    constants of its ``get_attr`` nodes): aten operators are called without
    ``OpOverload.__call__``'s Python frame, and each value is released after its last
    use."""
    names: dict = {}
    consts: dict = {}

    def const(value) -> str:
        name = f"c{len(consts)}"
        consts[name] = value
        return name

    def emit(x) -> str:
        if isinstance(x, fx.Node):
            return names[x]
        if isinstance(x, list):
            return "[" + ", ".join(emit(v) for v in x) + "]"
        if isinstance(x, tuple):
            return "(" + "".join(emit(v) + ", " for v in x) + ")"
        if isinstance(x, _LITERALS) or (isinstance(x, float) and x == x and
                                         abs(x) != float("inf")):
            return repr(x)
        return const(x)

    nodes = list(graph.nodes)
    last: dict = {}
    for i, node in enumerate(nodes):
        for x in node.all_input_nodes:
            last[x] = i
    params, body = [], []
    for i, node in enumerate(nodes):
        names[node] = f"v{i}"
        if node.op == "placeholder":
            params.append(names[node])
            continue
        if node.op == "output":
            body.append(f"return {emit(node.args[0])}")
            break
        if node.op == "get_attr":   # a constant tensor the trace captured
            names[node] = const(operator.attrgetter(node.target)(owner))
            continue
        target = node.target
        fn = target._op if isinstance(target, torch._ops.OpOverload) else target
        args = [emit(a) for a in node.args]
        args += [f"{k}={emit(v)}" for k, v in node.kwargs.items()]
        body.append(f"v{i} = {const(fn)}({', '.join(args)})")
        dead = [names[x] for x in node.all_input_nodes if last[x] == i and x.op != "get_attr"]
        if dead:
            body.append(f"del {', '.join(dead)}")
    src = f"def program({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body)
    scope = dict(consts)
    exec(compile(src, "<mxtorch training step>", "exec"), scope)  # noqa: S102 -- our source
    program = scope["program"]
    program.source = src
    return program

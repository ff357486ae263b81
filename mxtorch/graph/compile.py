"""Compile a Symbol's graph into a GraphProgram: a ``torch.fx.GraphModule`` that runs the
operators' torch computes in topological order with no per-node interpretation."""
from __future__ import annotations

import keyword
import operator
import re
from collections import OrderedDict
from typing import Any, Callable, Sequence

import torch
import torch.fx as fx

from ..ops.tensor_util import unshared
from .ir import Entry, Node, topo_order
from .ir_json import subgraph_heads
from . import layout

__all__ = ["GraphProgram", "own_outputs"]

_IDENT = re.compile(r"[^0-9a-zA-Z_]")


def _ident(name: str) -> str:
    """A Python identifier for a node name (a variable may be called 'in' or '1x')."""
    s = _IDENT.sub("_", name) or "n"
    if keyword.iskeyword(s):
        return f"{s}_"
    return s if not s[0].isdigit() else f"n_{s}"


# Built modules of recent graphs, by graph structure (:func:`_structure`): binding the
# same symbol again, or an equal one built anew (a test's loop, a Module's buckets),
# reuses them instead of generating and compiling the same code again. The least
# recently bound structures are let go beyond _SHARED_NODES nodes of built modules
# (a module takes about 2.5 KB per node).
_SHARED: OrderedDict = OrderedDict()
_SHARED_NODES = 20000
_SHARED_GRAPHS = 1024   # structures remembered, built or not


class _Modules(dict):
    """The built modules of one graph structure, by (training flag, device, shapes,
    layout), and how many nodes they hold together."""

    __slots__ = ("nodes", "weight")

    def __init__(self, nodes: int):
        super().__init__()
        self.nodes = nodes
        self.weight = 0

    def built(self, key: tuple, gm: fx.GraphModule) -> None:
        """Keep ``gm``, made for ``key``; let the least recently used structures go."""
        self[key] = gm
        self.weight += self.nodes
        total = sum(m.weight for m in _SHARED.values())
        while total > _SHARED_NODES and len(_SHARED) > 1:
            _, oldest = next(iter(_SHARED.items()))
            if oldest is self:
                break
            _SHARED.popitem(last=False)
            total -= oldest.weight


def _structure(nodes: Sequence[Node], heads: Sequence[Entry]) -> tuple | None:
    """A key equal for graphs that compile to the same program: per node in topological
    order its operator, parsed and written attributes and inputs (by position; names
    make no difference to the code); then the heads. None for graphs with subgraphs."""
    pos: dict[int, int] = {}
    parts = []
    for i, n in enumerate(nodes):
        pos[id(n)] = i
        if n.is_variable:
            parts.append(None)
            continue
        if n.subgraphs:
            return None
        parts.append((n.op.name, n.parsed, tuple(n.attrs.items()),
                      tuple((pos[id(e.node)], e.index) for e in n.inputs)))
    key = (tuple(parts), tuple((pos[id(h.node)], h.index) for h in heads))
    try:
        hash(key)
    except TypeError:   # an attribute value that is a list
        return None
    return key


def _shared_modules(key: tuple | None, nodes: int) -> _Modules:
    """The module cache of graphs with structure ``key`` (a new one of its own when
    None), the most recently used from now."""
    if key is None:
        return _Modules(nodes)
    modules = _SHARED.get(key)
    if modules is None:
        modules = _SHARED[key] = _Modules(nodes)
        if len(_SHARED) > _SHARED_GRAPHS:
            _SHARED.popitem(last=False)
    else:
        _SHARED.move_to_end(key)
    return modules


class GraphProgram:
    """A symbol graph compiled to torch: ``program(tensors, is_train, device)``.

    ``tensors`` are the graph inputs in ``input_names`` order (``Symbol.list_inputs``).
    One ``torch.fx.GraphModule`` is built per (training flag, device) and reused, also
    by the programs of other graphs of the same structure.
    """

    def __init__(self, heads: Sequence[Entry], channels_last: bool = False):
        self.heads = list(heads)
        #: on CPU, training programs run 2-D convolution layers on channels-last
        #: activations (:mod:`.layout`); inference has :mod:`.fusion` for that
        self.channels_last = channels_last
        self.nodes: list[Node] = topo_order(self.heads)
        self.input_nodes = [n for n in self.nodes if n.is_variable]
        self.input_names = [n.name for n in self.input_nodes]
        self._modules = _shared_modules(_structure(self.nodes, self.heads),
                                        len(self.nodes))
        self._forwards: dict[tuple, Callable] = {}  # the modules' generated forward code
        # MXNet: creation nodes may take their shape from the graph (zeros/ones/full with
        # shape=(0, H) or (-1, H) for RNN begin states, arange with infer_range); those
        # programs are specialized per input shapes.
        self._deferred = [n for n in self.nodes
                          if not n.is_variable and n.op.shape_from_graph(n.parsed)]

    def module(self, is_train: bool, device: torch.device | None = None,
               in_shapes: tuple | None = None) -> fx.GraphModule:
        key = (bool(is_train), device, in_shapes, self.channels_last)
        gm = self._modules.get(key)
        if gm is None:
            filled = self._fill_shapes(in_shapes)
            # input shapes that give the deferred nodes the same shapes share the code
            same = (bool(is_train), device, self.channels_last,
                    tuple(filled.get(id(n)) for n in self._deferred)) if filled else key
            gm = self._modules.get(same)
            if gm is None:
                gm = self._build(bool(is_train), device, filled)
                self._modules.built(same, gm)
            self._modules[key] = gm
        return gm

    def __call__(self, tensors: Sequence[torch.Tensor], is_train: bool,
                 device: torch.device | None = None) -> tuple:
        if self._deferred:
            shapes = tuple(tuple(t.shape) for t in tensors)
            return self.module(is_train, device, shapes)(*tensors)
        # the generated code itself: nn.Module.__call__ (hooks, which a program never
        # has) costs about 10 us per call
        fwd = self._forwards.get((is_train, device))
        if fwd is None:
            fwd = self._forwards[(is_train, device)] = self.module(is_train, device).forward
        return fwd(*tensors)

    def _fill_shapes(self, in_shapes: tuple | None) -> dict[int, tuple]:
        """Inferred output shapes of the deferred creation nodes, by node id."""
        if not self._deferred or in_shapes is None:
            return {}
        from .passes import infer_graph_shapes
        shapes = infer_graph_shapes(self.heads, dict(zip(self.input_names, in_shapes)))
        return {id(n): shapes[(id(n), 0)] for n in self._deferred
                if (id(n), 0) in shapes and 0 not in shapes[(id(n), 0)]}

    def _build(self, is_train: bool, device: torch.device | None,
               filled: dict[int, tuple] | None = None) -> fx.GraphModule:
        graph = fx.Graph()
        env: dict[tuple, fx.Node] = {}
        for n in self.input_nodes:
            env[(id(n), 0)] = graph.placeholder(_ident(n.name))
        cl_mode = (self.channels_last and is_train
                   and (device is None or device.type == "cpu"))
        cl, starts = layout.channels_last_entries(self.nodes) if cl_mode else (set(), set())
        dense: dict[tuple, fx.Node] = {}   # a channels-last entry's NCHW copy, made once

        def nchw(key: tuple) -> fx.Node:
            if key not in dense:
                dense[key] = graph.call_function(layout.to_dense, (env[key],))
            return dense[key]

        for n in self.nodes:
            if n.is_variable:
                continue
            fn = _bound(n, is_train, device, (filled or {}).get(id(n)), self.channels_last)
            keys = [(id(e.node), e.index) for e in n.inputs]
            if (id(n), 0) in cl or not any(k in cl for k in keys):
                args = [env[k] for k in keys]
            else:   # the operator needs NCHW: give it the dense copies
                args = [nchw(k) if k in cl else env[k] for k in keys]
            _record(graph, env, n, graph.call_function(fn, tuple(args)))
            if id(n) in starts:
                env[(id(n), 0)] = graph.call_function(layout.to_channels_last,
                                                      (env[(id(n), 0)],))
        graph.output(tuple(nchw((id(h.node), h.index)) if (id(h.node), h.index) in cl
                           else env[(id(h.node), h.index)] for h in self.heads))
        return fx.GraphModule(torch.nn.Module(), graph, class_name="GraphProgram")

    def interpret(self, tensors: Sequence[torch.Tensor],
                  run_node: Callable[[Node, list], Any]) -> tuple:
        """Run the graph node by node, without the compiled module: ``run_node(node,
        inputs)`` gives each operator node's result (a tensor or a sequence of them)."""
        env: dict[tuple, torch.Tensor] = {}
        for n, t in zip(self.input_nodes, tensors):
            env[(id(n), 0)] = t
        for n in self.nodes:
            if n.is_variable:
                continue
            res = run_node(n, [env[(id(e.node), e.index)] for e in n.inputs])
            outs = res if isinstance(res, (tuple, list)) else (res,)
            for i, t in enumerate(outs):
                env[(id(n), i)] = t
        return tuple(env[(id(h.node), h.index)] for h in self.heads)

    def run_node(self, n: Node, ins: Sequence[torch.Tensor], is_train: bool,
                 device: torch.device | None) -> Any:
        """One node's operator on ``ins``, as the compiled module calls it."""
        if n.op.takes_subgraphs:
            return _bound(n, is_train, device, None, self.channels_last)(*ins)
        return n.op.run(n.parsed, ins, is_train, device)

    def run_monitored(self, tensors: Sequence[torch.Tensor], is_train: bool,
                      device: torch.device | None, callback: Callable, monitor_all: bool,
                      taps=None):
        """Interpret node by node, calling ``callback(name, tensor)`` on every output
        (and every input when ``monitor_all``); used only while a monitor is installed.
        ``taps`` (a ``monitor.BackwardTaps``) records the gradients of operator inputs."""
        def run(n: Node, ins: list) -> Any:
            if taps is not None:
                ins = taps.tap(n, ins)
            if monitor_all:   # MXNet: a variable input is reported by its own name too
                for e, name, t in zip(n.inputs, n.op.monitor_input_names(n.parsed), ins):
                    if e.node.is_variable:
                        callback(e.node.name, t)
                    callback(f"{n.name}_{name}", t)
            res = self.run_node(n, ins, is_train, device)
            outs = res if isinstance(res, (tuple, list)) else (res,)
            for name, t in zip(n.output_names(), outs):
                callback(f"{n.name}_{name}", t)
            return res
        return self.interpret(tensors, run)


def emit_node(graph: fx.Graph, env: dict, n: Node, fn: Callable) -> None:
    """Append ``fn(*inputs of n)`` to ``graph``; record its outputs in ``env`` by entry."""
    out = graph.call_function(fn, tuple(env[(id(e.node), e.index)] for e in n.inputs))
    _record(graph, env, n, out)


def _record(graph: fx.Graph, env: dict, n: Node, out: fx.Node) -> None:
    """Record the outputs of ``n``'s call ``out`` in ``env`` by entry."""
    nout = n.num_outputs()
    if nout == 1:
        env[(id(n), 0)] = out
        return
    for i in range(nout):
        env[(id(n), i)] = graph.call_function(operator.getitem, (out, i))


def _subgraph_callables(n: Node, is_train: bool, device,
                        channels_last: bool = False) -> list[Callable]:
    """The node's nested graphs as programs, compiled as the enclosing one is (the same
    layouts give the same arithmetic)."""
    graphs = n.subgraphs or n.op.nested_graphs(n.parsed)
    progs = [GraphProgram(subgraph_heads(g), channels_last=channels_last) for g in graphs]
    return [lambda *t, p=p: p(t, is_train, device) for p in progs]


def _bound(n: Node, is_train: bool, device: torch.device | None,
           shape: tuple | None = None, channels_last: bool = False) -> Callable:
    subs = (_subgraph_callables(n, is_train, device, channels_last)
            if n.op.takes_subgraphs else None)
    attrs = n.parsed if shape is None else n.op.with_shape(n.parsed, shape)
    fn = n.op.bind_runtime(attrs, is_train, device, subs)
    fn.__name__ = _ident(n.name)
    fn.__qualname__ = fn.__name__
    return fn


def own_outputs(outs: Sequence[torch.Tensor], inputs: Sequence[torch.Tensor]) -> tuple:
    """MXNet's graph outputs are new arrays, except an output that is an input variable
    itself: an output that is a view of an input (reshape, transpose, a slice ...) is
    copied, so writing into it never changes the bound input."""
    return tuple(unshared(o, inputs) if o._is_view() else o for o in outs)

"""Graph partitioning: MXNet's subgraph backends (``SubgraphBackendRegistry``).

A backend is a named list of subgraph properties; a property picks groups of connected
nodes (its selector) and replaces each group by one node that runs the group as a nested
graph. :func:`partition` takes a graph (output entries) and returns a new one; the graph
given is left as it is. MXNet 1.9.1's ``default`` and ``default_v2`` backends group the
operators named in the property's ``op_names`` into ``_CachedOp`` nodes
(``src/operator/subgraph/build_subgraph.cc``): the grouping never creates a cycle
through the nodes left outside, each group's inputs become the nested graph's variables
(named after the entries they cut, ``data0``, ``exp0_output0``), its outputs the
entries used outside, and the partitioned graph lists the same inputs, arguments and
auxiliary states in the same order and computes the same outputs and gradients.

``Symbol.optimize_for``, ``Symbol.get_backend_symbol``, ``HybridBlock.hybridize(backend=)``,
``MXNET_SUBGRAPH_BACKEND`` at bind and the C API (:mod:`mxtorch.capi`) reach it.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Sequence

from ..base import MXNetError
from ..ops import registry as _reg
from .backends import backend_from_env, is_program_backend, names
from .ir import Entry, Node, topo_order
from .ir_json import graph_dict

__all__ = ["SubgraphProperty", "SubgraphBackend", "BACKENDS", "get_backend", "partition",
           "build_subgraph", "set_op_names", "remove_op_names", "partition_for_bind",
           "is_partition_backend", "is_known_backend", "check_backend", "known_backends"]

_Slot = tuple  # (node, input index) or (None, head index): where an entry is used


# ---------------------------------------------------------------------- properties
class ContainOpSelector:
    """Selects connected operator nodes whose operator is in ``op_names`` (MXNet's
    ``ContainOpSelector``: by the operator's registered name, not an alias)."""

    def __init__(self, op_names: frozenset[str]):
        self.op_names = op_names

    def select(self, node: Node) -> bool:
        return not node.is_variable and node.op.name in self.op_names

    def select_input(self, cur: Node, node: Node) -> bool:
        return self.select(node)

    def select_output(self, cur: Node, node: Node) -> bool:
        return self.select(node)

    def filter(self, candidates: list[int]) -> list[int]:
        return candidates

    def reset(self) -> None:
        """Forget what was seen before a retry (this selector keeps nothing)."""


class SubgraphProperty:
    """A partitioning rule: a selector for the nodes of a subgraph and the node that
    replaces them; ``attrs`` are set from outside (``op_names`` by the C API)."""

    def __init__(self, backend: str):
        self.backend = backend
        self.attrs: dict[str, Any] = {}

    def create_selector(self, op_names: Sequence[str] | None = None) -> ContainOpSelector:
        """The selector over ``op_names`` (default: the ``op_names`` attribute)."""
        if op_names is None:
            if "op_names" not in self.attrs:
                raise MXNetError(f"subgraph backend '{self.backend}': Cannot find attribute "
                                 "op_names in SubgraphProperty (set it with "
                                 "MXSetSubgraphPropertyOpNamesV2)")
            op_names = self.attrs["op_names"]
        return ContainOpSelector(frozenset(op_names))

    def create_node(self, heads: list[Entry], subgraph_id: int) -> Node:
        """The node that runs the nested graph ``heads``: ``_CachedOp<id>``."""
        nested = graph_dict(heads, with_attrs=False)
        return Node(_reg.get("_CachedOp"), f"_CachedOp{subgraph_id}", {}, [], [nested])


class SubgraphBackend:
    """A named list of subgraph properties, applied in order."""

    def __init__(self, name: str, properties: list[SubgraphProperty]):
        self.name = name
        self.properties = properties


#: MXNet's registered subgraph backends (``MXNET_REGISTER_SUBGRAPH_BACKEND``)
BACKENDS: dict[str, SubgraphBackend] = {
    name: SubgraphBackend(name, [SubgraphProperty(name)]) for name in ("default", "default_v2")}

# MXNet's SubgraphPropertyOpNameSet: op names set for binding (MXSetSubgraphPropertyOpNames)
_BIND_OP_NAMES: dict[str, frozenset[str]] = {}


def known_backends() -> list[str]:
    """Every backend name ``optimize_for``/``hybridize``/``MXNET_SUBGRAPH_BACKEND`` take:
    the partitioning ones and the program backends of :mod:`.backends`."""
    return sorted(BACKENDS) + names()


def is_partition_backend(name: str | None) -> bool:
    return name in BACKENDS


def is_known_backend(name: str) -> bool:
    """Whether ``name`` is a partitioning backend or an inference optimizer's name."""
    return name in BACKENDS or is_program_backend(name)


def check_backend(name: str) -> str:
    """``name`` when it is a known backend, else MXNetError naming the known ones."""
    if is_known_backend(name):
        return name
    raise MXNetError(f"SubgraphProperty {name} is not found in SubgraphBackendRegistry; "
                     f"known backends: {', '.join(known_backends())}")


def get_backend(name: str) -> SubgraphBackend:
    """The partitioning backend ``name`` (MXNetError naming the known ones otherwise)."""
    backend = BACKENDS.get(name)
    if backend is None:
        check_backend(name)
        raise MXNetError(f"backend '{name}' optimizes compiled programs and does not "
                         f"partition graphs; partitioning backends: {', '.join(BACKENDS)}")
    return backend


def set_op_names(name: str, op_names: Sequence[str], for_bind: bool) -> None:
    """Give backend ``name`` the operators to group: for binding with
    ``MXNET_SUBGRAPH_BACKEND`` (``for_bind``, MXNet's ``MXSetSubgraphPropertyOpNames``,
    any name) or as its properties' ``op_names`` (``...OpNamesV2``)."""
    if for_bind:
        _BIND_OP_NAMES[name] = frozenset(op_names)
        return
    for prop in get_backend(name).properties:
        prop.attrs["op_names"] = frozenset(op_names)


def remove_op_names(name: str, for_bind: bool) -> None:
    """Undo :func:`set_op_names`."""
    if for_bind:
        _BIND_OP_NAMES.pop(name, None)
        return
    for prop in get_backend(name).properties:
        prop.attrs.pop("op_names", None)


def partition_for_bind(heads: list[Entry]) -> list[Entry]:
    """The graph an executor binds: partitioned when ``MXNET_SUBGRAPH_BACKEND`` names a
    partitioning backend that op names were set for with
    ``MXSetSubgraphPropertyOpNames`` (else as given); an unknown name is an error."""
    name = backend_from_env()
    if name is None or not is_partition_backend(check_backend(name)):
        return heads
    op_names = _BIND_OP_NAMES.get(name)
    return partition(heads, name, op_names=op_names) if op_names else heads


# ---------------------------------------------------------------------- the pass
def partition(heads: Sequence[Entry], backend: str, options: dict | None = None,
              op_names: Sequence[str] | None = None) -> list[Entry]:
    """The graph ``heads`` partitioned by every property of ``backend``.

    ``options`` are the backend options (``dedup_subgraph='True'``: one nested input per
    distinct entry, one output per distinct entry); ``op_names`` overrides the
    properties' own.
    """
    props = get_backend(backend).properties
    options = options or {}
    dedup = str(options.get("dedup_subgraph")) == "True"
    heads = _clone(heads)
    for prop in props:
        heads = build_subgraph(heads, prop, prop.create_selector(op_names), dedup)
    return heads


def build_subgraph(heads: list[Entry], prop: SubgraphProperty, selector: ContainOpSelector,
                   dedup: bool = False) -> list[Entry]:
    """One property's pass over a graph it may change (MXNet's BuildSubgraph)."""
    graph = _Graph(heads)
    groups = graph.find_subgraphs(selector)
    for sid, members in enumerate(groups):
        graph.replace(members, sid, prop, dedup)
    return graph.heads


def _clone(heads: Sequence[Entry]) -> list[Entry]:
    """A copy of the graph's nodes (the pass rewires inputs in place)."""
    memo: dict[int, Node] = {}
    for n in topo_order(heads):
        new = Node(n.op, n.name, n.attrs, [Entry(memo[id(e.node)], e.index) for e in n.inputs],
                   n.subgraphs)
        new._parsed = n._parsed
        memo[id(n)] = new
    return [Entry(memo[id(h.node)], h.index) for h in heads]


def _entry_name(e: Entry) -> str:
    """The name ``list_outputs`` gives an entry (a variable's own name)."""
    if e.node.is_variable:
        return e.node.name
    return f"{e.node.name}_{e.node.output_names()[e.index]}"


class _Graph:
    """The graph being partitioned: nodes in DFS order with their consumers, the
    topological position of every place an entry is used, and the subgraph labels."""

    def __init__(self, heads: list[Entry]):
        self.heads = list(heads)
        self.nodes = topo_order(self.heads)
        self.nid = {n: i for i, n in enumerate(self.nodes)}
        # consumers[i]: {consumer node: [its input positions reading node i]}
        self.consumers: list[dict[Node, list[int]]] = [{} for _ in self.nodes]
        for n in self.nodes:
            for pos, e in enumerate(n.inputs):
                self.consumers[self.nid[e.node]].setdefault(n, []).append(pos)
        self.labels = [-1] * len(self.nodes)
        self.order = self._slot_order()

    # -- slots: where an entry is used (a node's input or a graph output)
    def read(self, slot: _Slot) -> Entry:
        node, i = slot
        return self.heads[i] if node is None else node.inputs[i]

    def write(self, slot: _Slot, entry: Entry) -> None:
        node, i = slot
        if node is None:
            self.heads[i] = entry
        else:
            node.inputs[i] = entry

    def _slot_order(self) -> dict[_Slot, int]:
        """Every slot's position in the DFS over the graph (MXNet's TopSortEntries): a
        slot is numbered when the node it reads is finished or found already seen."""
        order: dict[_Slot, int] = {}
        seen: set[Node] = set()
        for k, head in enumerate(self.heads):
            if head.node in seen:
                order[(None, k)] = len(order)
                continue
            seen.add(head.node)
            stack = [[head.node, 0, (None, k)]]
            while stack:
                top = stack[-1]
                node, i, slot = top
                if i == len(node.inputs):
                    order[slot] = len(order)
                    stack.pop()
                    continue
                top[1] = i + 1
                child = node.inputs[i].node
                if child in seen:
                    order[(node, i)] = len(order)
                else:
                    seen.add(child)
                    stack.append([child, 0, (node, i)])
        return order

    # -- selection (MXNet's FindSubgraphs / PreSelectSubgraphNodes / LabelSubgraph)
    def find_subgraphs(self, selector: ContainOpSelector) -> list[list[int]]:
        """The groups of node ids to replace, each sorted, in the order they are found
        (a fresh selector per seed, as MXNet creates one per node)."""
        groups: list[list[int]] = []
        for seed, node in enumerate(self.nodes):
            if self.labels[seed] != -1 or not selector.select(node):
                continue
            sel = ContainOpSelector(selector.op_names)
            candidates = self._preselect(sel, len(groups), seed)
            kept = sel.filter(candidates)
            for i in candidates:
                if i not in kept:
                    self.labels[i] = -1
            if kept:
                groups.append(sorted(kept))
        return groups

    def _preselect(self, selector: ContainOpSelector, label: int, seed: int) -> list[int]:
        """The group grown from ``seed``, retried without the nodes that closed a cycle;
        the seed alone when every try finds one."""
        excluded: set[int] = set()
        n_excluded = 0
        for _ in range(len(self.nodes) ** 2):
            members = self._label(selector, label, seed, excluded)
            if members is not None:
                return members
            if len(excluded) == n_excluded:
                break
            n_excluded = len(excluded)
            selector.reset()
        self.labels[seed] = label
        return [seed]

    def _label(self, selector: ContainOpSelector, label: int, seed: int,
               excluded: set[int]) -> list[int] | None:
        """Grow a group breadth-first from ``seed`` over selected inputs and outputs;
        None (and one more node in ``excluded``) when it would close a cycle."""
        self.labels[seed] = label
        queue, members = deque([seed]), []
        # outside node id -> (members reading it, members it reads)
        boundary: dict[int, tuple[list[int], list[int]]] = {}
        while queue:
            cur = queue.popleft()
            members.append(cur)
            node = self.nodes[cur]
            for e in node.inputs:
                j = self.nid[e.node]
                if self._joins(j, excluded) and selector.select_input(node, e.node):
                    self.labels[j] = label
                    queue.append(j)
                elif self.labels[j] == -1:
                    boundary.setdefault(j, ([], []))[0].append(cur)
            for consumer in self.consumers[cur]:
                j = self.nid[consumer]
                if self._joins(j, excluded) and selector.select_output(node, consumer):
                    self.labels[j] = label
                    queue.append(j)
                elif self.labels[j] == -1:
                    boundary.setdefault(j, ([], []))[1].append(cur)
        breaker = self._cycle_breaker(boundary, set(members))
        if breaker is None:
            return sorted(members)
        excluded.add(breaker)
        for i in members:
            self.labels[i] = -1
        return None

    def _joins(self, j: int, excluded: set[int]) -> bool:
        return self.labels[j] == -1 and j not in excluded

    def _cycle_breaker(self, boundary: dict, members: set[int]) -> int | None:
        """The member to leave out when an outside node both reads from the group and
        (through other outside nodes) feeds it: the latest member on such a path."""
        keys = sorted(boundary)
        breaker = -1
        for a, i in enumerate(keys):
            reads_group, feeds_group = boundary[i][1], boundary[i][0]
            if reads_group and feeds_group:
                breaker = max(breaker, max(feeds_group), max(reads_group))
            elif reads_group:
                for j in keys[a + 1:]:
                    into = boundary[j][0]
                    if into and self._is_ancestor(i, j, members):
                        breaker = max(breaker, max(reads_group), max(into))
        return None if breaker == -1 else breaker

    def _is_ancestor(self, ancestor: int, node: int, members: set[int]) -> bool:
        """Whether ``node`` depends on ``ancestor`` along a path outside the group."""
        # MXNet bounds this search by the node count instead of remembering visits
        stack, seen = [node], {node}
        while stack:
            top = stack.pop()
            if top == ancestor:
                return True
            for e in self.nodes[top].inputs:
                j = self.nid.get(e.node)
                if j is not None and j not in members and j not in seen:
                    seen.add(j)
                    stack.append(j)
        return False

    # -- replacement (MXNet's CreateSubgraphNode)
    def _outside(self, node: Node, label: int) -> bool:
        j = self.nid.get(node)
        return j is None or self.labels[j] != label

    def replace(self, member_ids: list[int], sid: int, prop: SubgraphProperty,
                dedup: bool) -> None:
        """Replace the group by the property's node running it as a nested graph."""
        members = [self.nodes[i] for i in member_ids]
        label = self.labels[member_ids[0]]
        in_slots = sorted(((m, i) for m in members for i, e in enumerate(m.inputs)
                           if self._outside(e.node, label)), key=self.order.__getitem__)
        outer = self._cut_inputs(in_slots, dedup)
        out_slots = [(c, i) for m in members for c, pos in self.consumers[self.nid[m]].items()
                     if self._outside(c, label) for i in pos]
        out_slots += [(None, k) for k, h in enumerate(self.heads)
                      if not self._outside(h.node, label)]
        out_slots.sort(key=self.order.__getitem__)
        nested, index = _nested_outputs([self.read(s) for s in out_slots], dedup)
        node = prop.create_node(nested, sid)
        # the node's inputs follow its nested graph's variables (the _CachedOp's inputs)
        variables = [n for n in topo_order(nested) if n.is_variable]
        node.inputs = [outer[v][0] for v in variables]
        for pos, v in enumerate(variables):
            self.order[(node, pos)] = self.order[outer[v][1]]
            src = self.nid.get(node.inputs[pos].node)
            if src is not None:
                uses = self.consumers[src]
                for m in members:
                    uses.pop(m, None)
                uses.setdefault(node, []).append(pos)
        for s, k in zip(out_slots, index):
            self.write(s, Entry(node, k))

    def _cut_inputs(self, slots: list[_Slot], dedup: bool) -> dict[Node, tuple]:
        """Feed each input slot of the group from a new variable named after the entry it
        read (``<entry name><n>``, n counting uses); {variable: (entry, slot)}."""
        outer: dict[Node, tuple] = {}
        counts: dict[str, int] = {}
        shared: dict[Entry, Node] = {}
        for slot in slots:
            entry = self.read(slot)
            name = _entry_name(entry)
            counts[name] = counts[name] + 1 if name in counts else 0
            var = shared.get(entry) if dedup else None
            if var is None:
                var = Node(None, f"{name}{counts[name]}")
                shared[entry] = var
                outer[var] = (entry, slot)
            self.write(slot, Entry(var, 0))
        return outer


def _nested_outputs(entries: list[Entry], dedup: bool) -> tuple[list[Entry], list[int]]:
    """The nested graph's outputs for the used entries (in slot order) and the output
    each use reads; with ``dedup`` a run of uses of one entry shares one output."""
    if not dedup:
        return entries, list(range(len(entries)))
    outputs: list[Entry] = []
    index: list[int] = []
    for e in entries:
        if not outputs or outputs[-1] != e:
            outputs.append(e)
        index.append(len(outputs) - 1)
    return outputs, index

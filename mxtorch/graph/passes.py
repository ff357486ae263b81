"""Shape and dtype inference over a Symbol's graph, both ways, to a fixed point."""
from __future__ import annotations

import ast
import json
import warnings
from functools import lru_cache
from typing import Any

from ..base import DTYPE_MX_TO_NP, MXNetError, dtype_name, dtype_np
from .ir import Entry, Node, topo_order
from .ir_json import subgraph_heads
from ..util import is_np_shape

__all__ = ["infer_shape", "infer_type", "infer_graph_shapes", "infer_graph_types"]


def _merge(old: tuple | None, new: tuple | None, what: str) -> tuple | None:
    """Merge two partial shapes (0 = unknown dim); raise on a conflict."""
    if new is None:
        return old
    new = tuple(int(d) for d in new)
    if old is None or len(old) == 0:
        return new
    if len(new) == 0:
        return old
    if len(old) != len(new):
        raise _Conflict(what, old, new)
    out = []
    for a, b in zip(old, new):
        if a and b and a != b:
            raise _Conflict(what, old, new)
        out.append(a or b)
    return tuple(out)


class _Conflict(Exception):
    def __init__(self, what, old, new):
        super().__init__(what)
        self.what, self.old, self.new = what, old, new


def _known(s: tuple | None) -> bool:
    if s is None:
        return False
    if is_np_shape():  # NumPy semantics: () is a scalar and 0 a real (empty) dimension
        return True
    return len(s) > 0 and all(d > 0 for d in s)


def _unknown_as_zero(shape) -> tuple:
    """A user or attribute shape in the internal form: -1/None (NumPy semantics' unknown
    dimension) become 0."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return tuple(0 if d is None or d < 0 else int(d) for d in shape)


def _var_shape(node: Node) -> tuple | None:
    text = node.attrs.get("__shape__")
    if not text:
        return None
    return _unknown_as_zero(ast.literal_eval(text))


def infer_graph_shapes(heads: list[Entry], known: dict[str, tuple],
                       outputs: list | None = None) -> dict[tuple, tuple]:
    """Return ``{(id(node), out_index): shape}`` for every entry that could be inferred.

    ``known`` maps variable names to (possibly partial) shapes; a given shape takes the
    place of the variable's ``__shape__`` attribute, as in MXNet. ``outputs`` are known
    (partial) shapes of the heads, inferred backwards from. Raises MXNetError naming the
    operator and argument on inconsistent shapes.
    """
    nodes = topo_order(heads)
    shapes: dict[tuple, tuple] = {}
    for n in nodes:
        if n.is_variable:
            given = known.get(n.name)
            s = _var_shape(n) if given is None else _unknown_as_zero(given)
            if s is not None:
                shapes[(id(n), 0)] = s
    for h, s in zip(heads, outputs or ()):
        key = (id(h.node), h.index)
        try:
            shapes[key] = _merge(shapes.get(key), s, h.node.name)
        except _Conflict as c:
            raise MXNetError(f"output shape inconsistent {c.old} vs {c.new}") from None
    done: set[int] = set()   # nodes whose inference ran with every shape known
    for _ in range(len(nodes) + 1):
        changed = False
        for n in nodes:
            if n.is_variable or id(n) in done:
                continue
            changed |= _infer_node(n, shapes, done)
        if not changed:
            break
    return shapes


def _infer_node(n: Node, shapes: dict, done: set) -> bool:
    """Run one node's inference; merge what it finds. A node is done once it ran with
    every input shape known and all its output shapes are known (so a node whose shapes
    came from its neighbours still runs once, and reports an inconsistency there)."""
    in_shapes = [shapes.get((id(e.node), e.index)) for e in n.inputs]
    nout = n.num_outputs()
    ins_known = all(_known(s) for s in in_shapes)
    try:
        outs = [shapes.get((id(n), i)) for i in range(nout)]
        if n.op.subgraph_attr is not None:
            new_in, new_out = _through_nested(n, in_shapes, outs, infer_graph_shapes)
        else:
            new_in, new_out = n.op.infer_shape(n.parsed, list(in_shapes), outs)
    except MXNetError as err:
        raise MXNetError(f"Error in operator {n.name}: {err}") from None
    changed = False
    for e, s in zip(n.inputs, new_in):
        key = (id(e.node), e.index)
        try:
            merged = _merge(shapes.get(key), s, e.node.name)
        except _Conflict as c:
            raise MXNetError(f"Error in operator {n.name}: Shape inconsistent, Provided = "
                             f"{list(c.old)}, inferred shape={tuple(c.new)} for input "
                             f"'{c.what}'") from None
        if merged != shapes.get(key):
            shapes[key] = merged
            changed = True
    for i, s in enumerate(new_out or []):
        key = (id(n), i)
        try:
            merged = _merge(shapes.get(key), s, f"{n.name} output {i}")
        except _Conflict as c:
            raise MXNetError(f"Error in operator {n.name}: output shape inconsistent "
                             f"{c.old} vs {c.new}") from None
        if merged != shapes.get(key):
            shapes[key] = merged
            changed = True
    if ins_known and all(_known(shapes.get((id(n), i))) for i in range(nout)):
        done.add(id(n))
    return changed


@lru_cache(maxsize=64)
def _nested_heads(text: str) -> list[Entry]:
    return subgraph_heads(json.loads(text))


def _through_nested(n: Node, known: list, known_out: list, infer) -> tuple[list, list]:
    """Infer a node that applies a nested graph (_CachedOp) by inferring that graph with
    the node's inputs and outputs; ``infer`` is :func:`infer_graph_shapes` or
    ``infer_graph_types``."""
    heads = _nested_heads(getattr(n.parsed, n.op.subgraph_attr))
    names = n.input_names()
    found = infer(heads, {k: v for k, v in zip(names, known) if v is not None}, known_out)
    by_name = {v.name: v for v in topo_order(heads) if v.is_variable}
    return ([found.get((id(by_name[k]), 0)) for k in names],
            [found.get((id(h.node), h.index)) for h in heads])


def _collect(sym, args: tuple, kwargs: dict) -> dict[str, Any]:
    names = sym.list_arguments()
    if args and kwargs:
        raise ValueError("Can only specify known argument shapes either by positional or "
                         "kwargs way.")
    if args:
        if len(args) > len(names):
            raise MXNetError(f"too many positional arguments: the symbol has arguments "
                             f"{names}")
        return {n: v for n, v in zip(names, args) if v is not None}
    inputs = set(sym.list_inputs())
    for k in kwargs:
        if k not in inputs:
            raise MXNetError(f"infer: '{k}' is not an argument of the symbol; arguments "
                             f"are {names}")
    return {k: v for k, v in kwargs.items() if v is not None}


def infer_shape(sym, args: tuple, kwargs: dict, partial: bool):
    """``Symbol.infer_shape`` / ``infer_shape_partial`` with MXNet's return conventions.

    An unknown shape is ``()`` and an unknown dimension 0; under NumPy shape semantics
    they are ``None`` and -1 (a partial result's 0 reads as unknown there).
    """
    for k, v in list(enumerate(args)) + list(kwargs.items()):
        if v is not None and not isinstance(v, (tuple, list)):
            raise TypeError(f"Arguments need to be shapes (tuple), but '{k}' is {type(v)}.")
    known = {k: _unknown_as_zero(v) for k, v in _collect(sym, args, kwargs).items()}
    shapes = infer_graph_shapes(sym._outputs, known)
    nodes = topo_order(sym._outputs)
    by_name = {n.name: n for n in nodes if n.is_variable}
    arg_names, aux_names = sym.list_arguments(), sym.list_auxiliary_states()

    def get(node, i=0):
        return shapes.get((id(node), i))

    arg_shapes = [get(by_name[n]) for n in arg_names]
    aux_shapes = [get(by_name[n]) for n in aux_names]
    out_shapes = [get(e.node, e.index) for e in sym._outputs]
    complete = all(_known(s) for s in arg_shapes + aux_shapes + out_shapes)
    if not complete and not partial:
        unknown = [f"{n}: {s or ()}" for n, s in zip(arg_names, arg_shapes) if not _known(s)]
        warnings.warn("Cannot decide shape for the following arguments (0s in shape means "
                      "unknown dimensions). Consider providing them as input:\n\t"
                      + "\n\t".join(unknown), stacklevel=3)
        return None, None, None

    np_shape = is_np_shape()

    def fmt(lst):
        if not np_shape:
            return [tuple(s) if s is not None else () for s in lst]
        if not partial:
            return [None if s is None else tuple(s) for s in lst]
        return [None if s is None else tuple(d if d else -1 for d in s) for s in lst]
    return fmt(arg_shapes), fmt(out_shapes), fmt(aux_shapes)


# ---------------------------------------------------------------------- dtypes
def _var_type(node: Node) -> str | None:
    text = node.attrs.get("__dtype__")
    if text is None:
        return None
    return dtype_name(DTYPE_MX_TO_NP[int(text)])


def infer_graph_types(heads: list[Entry], known: dict[str, str],
                      outputs: list | None = None) -> dict[tuple, str]:
    """``{(id(node), out_index): dtype name}`` for every entry that could be inferred
    from the variables' ``known`` dtypes and the heads' ``outputs`` dtypes."""
    nodes = topo_order(heads)
    types: dict[tuple, str] = {}
    for n in nodes:
        if n.is_variable:
            t = known.get(n.name) or _var_type(n)
            if t is not None:
                types[(id(n), 0)] = t
    for h, t in zip(heads, outputs or ()):
        if t is not None:
            types.setdefault((id(h.node), h.index), t)
    for _ in range(len(nodes) + 1):
        changed = False
        for n in nodes:
            if n.is_variable:
                continue
            in_types = [types.get((id(e.node), e.index)) for e in n.inputs]
            if n.op.subgraph_attr is not None:
                outs = [types.get((id(n), i)) for i in range(n.num_outputs())]
                new_in, new_out = _through_nested(n, in_types, outs, infer_graph_types)
            else:
                new_in, new_out = n.op.infer_type(n.parsed, list(in_types))
            for e, t in zip(n.inputs, new_in):
                key = (id(e.node), e.index)
                if t is not None and types.get(key) is None:
                    types[key] = t
                    changed = True
            for i, t in enumerate(new_out):
                if t is not None and types.get((id(n), i)) is None:
                    types[(id(n), i)] = t
                    changed = True
        if not changed:
            break
    return types


def infer_type(sym, args: tuple, kwargs: dict, partial: bool):
    """``Symbol.infer_type`` with MXNet's return conventions (NumPy type objects)."""
    known = {k: dtype_name(dtype_np(v)) for k, v in _collect(sym, args, kwargs).items()}
    types = infer_graph_types(sym._outputs, known)
    nodes = topo_order(sym._outputs)
    by_name = {n.name: n for n in nodes if n.is_variable}
    arg_names, aux_names = sym.list_arguments(), sym.list_auxiliary_states()
    arg_t = [types.get((id(by_name[n]), 0)) for n in arg_names]
    aux_t = [types.get((id(by_name[n]), 0)) for n in aux_names]
    out_t = [types.get((id(e.node), e.index)) for e in sym._outputs]
    if any(t is None for t in arg_t + aux_t + out_t) and not partial:
        unknown = [f"{n}: None" for n, t in zip(arg_names, arg_t) if t is None]
        warnings.warn("Cannot decide type for the following arguments. Consider providing "
                      "them as input:\n\t" + "\n\t".join(unknown), stacklevel=3)
        return None, None, None

    def fmt(lst):
        return [None if t is None else dtype_np(t).type for t in lst]
    return fmt(arg_t), fmt(out_t), fmt(aux_t)



# ---------------------------------------------------------------------- gradients
def gradient_nodes(heads: list[Entry], wrt: set[str]) -> list[Node]:
    """The operator nodes a backward pass from ``heads`` to the variables ``wrt`` goes
    through, in topological order: nodes that depend on one of them and receive a
    gradient from the heads (a zero-gradient operator such as BlockGrad passes none on).
    Raises MXNetError where that gradient meets a non-differentiable operator."""
    nodes = topo_order(heads)
    dep: set[int] = set()
    for n in nodes:
        if (n.is_variable and n.name in wrt) or any(id(e.node) in dep for e in n.inputs):
            dep.add(id(n))
    live = {id(h.node) for h in heads}
    out = []
    for n in reversed(nodes):
        if n.is_variable or id(n) not in live or id(n) not in dep or n.op.zero_grad:
            continue
        if not n.op.differentiable:
            raise MXNetError(f"Operator {n.op.name} is non-differentiable because it didn't "
                             "register FGradient attribute.")
        out.append(n)
        live.update(id(e.node) for e in n.inputs)
    return out[::-1]


def planned_bytes(heads: list[Entry], shapes: dict, types: dict, wrt: set[str]) -> int:
    """MXNet's memory-plan total for a bound graph, from inferred shapes and dtypes: the
    peak of the forward intermediates alive at once (each freed after its last use), plus,
    where gradients flow, the forward results kept for backward and their gradients."""
    nodes = topo_order(heads)

    def nbytes(key) -> int:
        shape, dt = shapes.get(key), types.get(key)
        if shape is None or dt is None:
            return 0
        size = 1
        for d in shape:
            size *= d
        return size * dtype_np(dt).itemsize

    last_use: dict[tuple, int] = {(id(h.node), h.index): len(nodes) for h in heads}
    for step, n in enumerate(nodes):
        for e in n.inputs:
            last_use[(id(e.node), e.index)] = max(last_use.get((id(e.node), e.index), 0), step)
    alive: dict[tuple, int] = {}
    peak = 0
    for step, n in enumerate(nodes):
        if n.is_variable:
            continue
        for i in range(n.num_outputs()):
            alive[(id(n), i)] = nbytes((id(n), i))
        peak = max(peak, sum(alive.values()))
        for key in [k for k in alive if last_use.get(k, step) <= step]:
            del alive[key]
    kept = sum(2 * nbytes((id(n), i)) for n in gradient_nodes(heads, wrt)
               for i in range(n.num_outputs()))
    return peak + kept

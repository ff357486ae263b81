"""``mx.sym.Symbol``: an immutable DAG of variables and operator nodes, with MXNet naming."""
from __future__ import annotations

import ctypes
import logging
import numbers
import os

import numpy as np

from ..attribute import AttrScope
from ..base import DTYPE_NP_TO_MX, HandleTable, MXNetError, NotImplementedForSymbol, dtype_np
from ..ops import registry as _reg
from ..executor import bind, simple_bind
from ..graph.ir import HIDDEN_KEYS, Entry, Node, topo_order
from ..graph.ir_json import dump_graph, load_graph

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json", "fromjson"]

_STYPE_TO_ID = {"default": 0, "row_sparse": 1, "csr": 2}
# the symbols behind the handles ``Symbol.handle`` and the C API handed out
_HANDLES = HandleTable("Symbol")


class Symbol:
    """A symbolic graph: one or more output entries of a node DAG."""

    __slots__ = ("_outputs", "__weakref__")

    def __init__(self, outputs: list[Entry]):
        if not isinstance(outputs, (list, tuple)):
            # MXNet: Symbol(handle) wraps a SymbolHandle the C API returned (and owns it)
            outputs = _HANDLES.adopt(outputs, self)._outputs
        self._outputs = list(outputs)

    # ------------------------------------------------------------------ structure
    @property
    def name(self) -> str | None:
        """The name of the symbol's node (``None`` for a group of several nodes)."""
        if len(self._outputs) == 1:
            return self._outputs[0].node.name
        node = self._single_node()
        return None if node is None else node.name

    def _topo(self) -> list[Node]:
        return topo_order(self._outputs)

    def _aux_ids(self, nodes: list[Node]) -> set[int]:
        aux = set()
        for n in nodes:
            for pos in n.aux_positions():
                if pos < len(n.inputs):
                    aux.add(id(n.inputs[pos].node))
        return aux

    def list_arguments(self) -> list[str]:
        """Names of the arguments (variables that are not auxiliary states), DFS order."""
        nodes = self._topo()
        aux = self._aux_ids(nodes)
        return [n.name for n in nodes if n.is_variable and id(n) not in aux]

    def list_auxiliary_states(self) -> list[str]:
        """Names of the auxiliary states (variables feeding a mutable input)."""
        nodes = self._topo()
        aux = self._aux_ids(nodes)
        return [n.name for n in nodes if n.is_variable and id(n) in aux]

    def list_inputs(self) -> list[str]:
        """Names of all variables (arguments and auxiliary states), DFS order."""
        return [n.name for n in self._topo() if n.is_variable]

    def list_outputs(self) -> list[str]:
        return [_entry_name(e) for e in self._outputs]

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([e]) for e in self._outputs)

    def __getitem__(self, index) -> "Symbol":
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise ValueError(f"There is no output named {index!r}; outputs are {names}")
            if len(matches) > 1:
                raise ValueError(f"There are multiple outputs with name {index!r}")
            index = matches[0]
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not isinstance(index, numbers.Integral):
            raise TypeError("Symbol only supports integer or string indexing")
        if index >= len(self._outputs) or index < -len(self._outputs):
            raise IndexError(f"Symbol index {index} out of range ({len(self._outputs)} "
                             "outputs)")
        return Symbol([self._outputs[index]])

    def get_internals(self) -> "Symbol":
        """A group of every output of every node, in DFS order."""
        entries = []
        for n in self._topo():
            entries.extend(Entry(n, i) for i in range(n.num_outputs()))
        return Symbol(entries)

    def get_children(self) -> "Symbol | None":
        """A group of the inputs of the output nodes (each node once), or ``None`` when
        they have no inputs."""
        entries, seen = [], set()
        for e in self._outputs:
            if id(e.node) not in seen:
                seen.add(id(e.node))
                entries.extend(e.node.inputs)
        return Symbol(entries) if entries else None

    def _gen_atomic_symbol(self) -> "Symbol":
        """The head operator alone: a nameless node with the same operator and attributes
        and no inputs, to be composed again (``atomic(data=x, name='fc')``)."""
        node = self._outputs[0].node
        if node.is_variable:
            raise MXNetError("_gen_atomic_symbol: the symbol's head is a variable, "
                             "not an operator")
        new = Node(node.op, "", node.op_attrs())
        return Symbol([Entry(new, i) for i in range(new.num_outputs())])

    # ------------------------------------------------------------------ attributes
    def attr(self, key: str) -> str | None:
        """The attribute ``key`` of the symbol's node (``None`` for a group of nodes).

        ``name`` is the node's name; a hidden key (``lr_mult``, ``ctx_group``, ...) is
        also found in its stored ``__key__`` form.
        """
        node = self._single_node()
        if node is None:
            return None
        if key == "name":
            return node.name
        value = node.attrs.get(key)
        if value is None and key in HIDDEN_KEYS:
            value = node.attrs.get(f"__{key}__")
        return value

    def _single_node(self) -> Node | None:
        """The one node all outputs come from, or ``None`` for a group of nodes."""
        node = self._outputs[0].node if self._outputs else None
        if any(e.node is not node for e in self._outputs):
            return None
        return node

    def list_attr(self, recursive: bool = False) -> dict[str, str]:
        """The attributes of the symbol's node; a hidden ``__key__`` is also listed as
        ``key``."""
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been "
                                     "deprecated. Please use attr_dict instead.")
        node = self._single_node()
        return {} if node is None else _listed_attrs(node)

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """Attributes of every node that has any, keyed by node name."""
        out = {}
        for n in self._topo():
            a = _listed_attrs(n)
            if a:
                out[n.name] = a
        return out

    def _set_attr(self, **kwargs) -> None:
        """Set attributes of the symbol's node (``name`` renames it); hidden keys are
        stored as ``__key__``."""
        for v in kwargs.values():
            if not isinstance(v, str):
                raise ValueError("Set Attr only accepts string values")
        node = self._single_node()
        if node is None:
            raise MXNetError("Symbol.SetAttrs only works for non-grouped symbol")
        for k, v in kwargs.items():
            if k == "name":
                node.name = v
            else:
                node.attrs[stored_attr_key(k, operator_kwarg=False)] = v
        node._parsed = None
        if node.op is not None:
            node.parsed  # noqa: B018 - MXNet: the operator's parser validates the new attributes

    # ------------------------------------------------------------------ copy / compose
    def __copy__(self) -> "Symbol":
        return _clone(self)

    def __deepcopy__(self, memo) -> "Symbol":
        return _clone(self)

    # MXNet: these NDArray methods exist on Symbol only to raise.
    def copy(self):
        raise NotImplementedForSymbol(self.copy, None)

    def wait_to_read(self):
        raise NotImplementedForSymbol(self.wait_to_read, None)

    def asnumpy(self):
        raise NotImplementedForSymbol(self.asnumpy, None)

    def asscalar(self):
        raise NotImplementedForSymbol(self.asscalar, None)

    def as_in_context(self):
        raise NotImplementedForSymbol(self.as_in_context, None)

    def detach(self):
        raise NotImplementedForSymbol(self.detach, None)

    def backward(self):
        raise NotImplementedForSymbol(self.backward, None)

    def gradient(self, wrt):
        """The gradient symbol with respect to ``wrt``: MXNet 1.9.1 documents it as not
        implemented and raises, and so does mxtorch (use ``bind(...).backward()``)."""
        raise MXNetError("Symbol.gradient is not implemented (as in MXNet 1.9.1); bind the "
                         "symbol and call Executor.backward instead")

    @property
    def handle(self) -> ctypes.c_void_p:
        """The symbol's C handle (a ``SymbolHandle``), for MXNet code that calls the C API
        (``mxtorch.base._LIB``); ``Symbol(handle)`` gives the symbol back."""
        return ctypes.c_void_p(_HANDLES.lend(self))

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        return self.handle

    def __call__(self, *args, **kwargs) -> "Symbol":
        """Compose: replace this symbol's variables by other symbols (a new symbol)."""
        s = _clone(self)
        s._compose(*args, **kwargs)
        return s

    def _compose(self, *args, name: str | None = None, **kwargs) -> None:
        if name is not None and len(self._outputs) == 1:
            self._outputs[0].node.name = name
        if args and kwargs:
            raise TypeError("compose only accept input Symbols either as positional or "
                            "keyword arguments, not both")
        for v in list(args) + list(kwargs.values()):
            if not isinstance(v, Symbol):
                raise TypeError("Compose expect `Symbol` as arguments")
        node = self._single_node()
        if node is not None and node.op is not None and not node.inputs:
            self._outputs = _compose_atomic(node, args, kwargs)._outputs
            return
        if args:
            names = self.list_arguments()
            if len(args) > len(names):
                raise MXNetError(f"compose: {len(args)} inputs given but the symbol has "
                                 f"{len(names)} arguments {names}")
            mapping = dict(zip(names, args))
        else:
            mapping = kwargs
        if not mapping:
            return
        for s in mapping.values():
            if len(s._outputs) != 1:
                raise MXNetError("compose: each input must be a single-output symbol")
        repl = {k: v._outputs[0] for k, v in mapping.items()}
        for n in self._topo():
            n.inputs = [repl.get(e.node.name, e) if e.node.is_variable else e
                        for e in n.inputs]
        self._outputs = [repl.get(e.node.name, e) if e.node.is_variable else e
                         for e in self._outputs]

    # ------------------------------------------------------------------ inference
    def infer_shape(self, *args, **kwargs):
        """Infer shapes: ``(arg_shapes, out_shapes, aux_shapes)`` or three ``None``."""
        from ..graph.passes import infer_shape
        return infer_shape(self, args, kwargs, partial=False)

    def infer_shape_partial(self, *args, **kwargs):
        from ..graph.passes import infer_shape
        return infer_shape(self, args, kwargs, partial=True)

    def infer_type(self, *args, **kwargs):
        """Infer dtypes: ``(arg_types, out_types, aux_types)`` or three ``None``."""
        from ..graph.passes import infer_type
        return infer_type(self, args, kwargs, partial=False)

    def infer_type_partial(self, *args, **kwargs):
        from ..graph.passes import infer_type
        return infer_type(self, args, kwargs, partial=True)

    # ------------------------------------------------------------------ serialization
    def tojson(self, remove_amp_cast: bool = True) -> str:
        from ..util import is_np_shape
        # MXNet: a graph saved while NumPy shape semantics are on says so.
        extra = {"is_np_shape": ["int", 1]} if is_np_shape() else None
        return dump_graph(self._outputs, remove_amp_cast=remove_amp_cast, extra_attrs=extra)

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        """Save to ``fname`` as symbol JSON (written to a temporary name, then renamed)."""
        from ..ndarray.utils import atomic_write
        if not isinstance(fname, (str, os.PathLike)):
            raise TypeError("fname needs to be a string")
        atomic_write(fname, self.tojson(remove_amp_cast).encode("utf-8"))

    def debug_str(self) -> str:
        """A text dump of the graph, in MXNet's layout."""
        lines = ["Symbol Outputs:"]
        for i, e in enumerate(self._outputs):
            lines.append(f"\toutput[{i}]={e.node.name}({e.index})")
        aux = self._aux_ids(self._topo())
        for n in self._topo():
            if n.is_variable:
                lines.append(f"Variable:{n.name}")
                continue
            lines += ["--------------------", f"Op:{n.op.name}, Name={n.name}", "Inputs:"]
            for i, e in enumerate(n.inputs):
                ver = "" if not e.node.is_variable else \
                    f" version={1 if id(e.node) in aux else 0}"
                lines.append(f"\targ[{i}]={e.node.name}({e.index}){ver}")
            if n.op_attrs():
                lines.append("Attrs:")
                lines += [f"\t{k}={v}" for k, v in n.op_attrs().items()]
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        names = ", ".join(e.node.name for e in self._outputs)
        return f"<Symbol group [{names}]>"

    __str__ = __repr__

    def __reduce__(self):
        return (load_json, (self.tojson(),))

    def __hash__(self):
        return id(self)

    # MXNet: a Symbol has no truth value and no in-place arithmetic.
    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, "bool")

    __nonzero__ = __bool__

    def __iadd__(self, other):
        raise NotImplementedForSymbol(self.__iadd__, "+=", other, 1)

    def __isub__(self, other):
        raise NotImplementedForSymbol(self.__isub__, "-=", other)

    def __imul__(self, other):
        raise NotImplementedForSymbol(self.__imul__, "*=", other)

    def __idiv__(self, other):
        raise NotImplementedForSymbol(self.__idiv__, "/=", other)

    def __itruediv__(self, other):
        raise NotImplementedForSymbol(self.__itruediv__, "/=", other)

    # ------------------------------------------------------------------ execution
    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """Bind arrays to the symbol and return an :class:`Executor`."""
        return bind(self, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """Allocate arrays from inferred shapes and bind them."""
        return simple_bind(self, ctx, grad_req, type_dict, stype_dict, group2ctx,
                           shared_arg_names, shared_exec, shared_buffer, **kwargs)

    def _bind(self, device=None, args=None, args_grad=None, grad_req="write",
              aux_states=None, group2ctx=None, shared_exec=None, ctx=None):
        return self.bind(device or ctx, args, args_grad, grad_req, aux_states, group2ctx,
                         shared_exec)

    def _simple_bind(self, device=None, grad_req="write", type_dict=None, stype_dict=None,
                     group2ctx=None, shared_arg_names=None, shared_exec=None,
                     shared_buffer=None, ctx=None, **kwargs):
        return self.simple_bind(device or ctx, grad_req, type_dict, stype_dict, group2ctx,
                                shared_arg_names, shared_exec, shared_buffer, **kwargs)

    def eval(self, ctx=None, **kwargs):
        """Evaluate the symbol with the given NDArrays; returns a list of outputs."""
        from ..context import current_context
        from ..util import is_np_array
        exe = self.bind(ctx or current_context(), kwargs, grad_req="null")
        outs = exe.forward()
        return [o.as_np_ndarray() for o in outs] if is_np_array() else outs

    def optimize_for(self, backend, args=None, aux=None, ctx=None, shape_dict=None,
                     type_dict=None, stype_dict=None, skip_infer=False, **kwargs):
        """Partition the symbol for ``backend``; returns the new symbol.

        Parameters
        ----------
        backend : str
            A partitioning backend (``default``, ``default_v2``: the operators named with
            ``MXSetSubgraphPropertyOpNamesV2`` grouped into ``_CachedOp`` nodes) or an
            inference optimizer (``MKLDNN``, ``JIT``, ``inductor``...), which works on the
            compiled program and leaves the symbol as it is. Other names raise MXNetError.
        args, aux : dict of str to NDArray, optional
            Arrays of arguments and auxiliary states; their shapes and dtypes (with
            ``shape_dict`` and ``type_dict``) are checked against the graph first.
        ctx : Context, optional
            The device context (default: the current one).
        shape_dict, type_dict, stype_dict : dict, optional
            Shapes, dtypes and storage types of inputs not in ``args``.
        skip_infer : bool
            Skip the shape and dtype checks.
        **kwargs
            Backend options (``dedup_subgraph=True``).
        """
        from ..context import Context, current_context
        from ..graph.partition import is_known_backend, is_partition_backend, partition
        _expect(isinstance(backend, str), "backend must be a string")
        _expect(args is None or isinstance(args, dict), "args must be a dict of NDArrays")
        _expect(aux is None or isinstance(aux, dict), "aux must be a dict of NDArrays")
        _expect(isinstance(ctx if ctx is not None else current_context(), Context),
                "ctx must be a Context")
        shapes, types = _optimize_inputs(self, args, aux, shape_dict, type_dict, stype_dict)
        if not is_known_backend(backend):
            # MXNet: an unknown backend is logged and the symbol given back unchanged
            logging.getLogger(__name__).error(
                "Error optimizing for backend '%s' cannot be found", backend)
            return self.__copy__()
        if not skip_infer and shapes:
            self.infer_shape_partial(**shapes)
        if not skip_infer and types:
            self.infer_type_partial(**types)
        if not is_partition_backend(backend):
            return self.__copy__()
        return Symbol(partition(self._outputs, backend, {k: str(v) for k, v in kwargs.items()}))

    def get_backend_symbol(self, backend):
        """The symbol partitioned by ``backend`` with the op names its properties were
        given (``MXSetSubgraphPropertyOpNamesV2``); an inference optimizer's name gives
        the symbol as it is."""
        from ..graph.partition import check_backend, is_partition_backend, partition
        check_backend(backend)
        if not is_partition_backend(backend):
            return self.__copy__()
        return Symbol(partition(self._outputs, backend))

    # ------------------------------------------------------------------ arithmetic
    def __add__(self, other):
        return _arith(self, other, "_Plus", "_PlusScalar")

    __radd__ = __add__

    def __sub__(self, other):
        return _arith(self, other, "_Minus", "_MinusScalar")

    def __rsub__(self, other):
        return _arith(self, other, None, "_RMinusScalar")

    def __mul__(self, other):
        return _arith(self, other, "_Mul", "_MulScalar")

    __rmul__ = __mul__

    def __truediv__(self, other):
        return _arith(self, other, "_Div", "_DivScalar")

    def __rtruediv__(self, other):
        return _arith(self, other, None, "_RDivScalar")

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __mod__(self, other):
        return _arith(self, other, "_Mod", "_ModScalar")

    def __rmod__(self, other):
        return _arith(self, other, None, "_RModScalar")

    def __pow__(self, other):
        return _arith(self, other, "_Power", "_PowerScalar")

    def __rpow__(self, other):
        return _arith(self, other, None, "_RPowerScalar")

    def __neg__(self):
        return self.__mul__(-1.0)

    def __abs__(self):
        return _make("abs", [self], {})

    def __eq__(self, other):
        return _arith(self, other, "_equal", "_equal_scalar")

    def __ne__(self, other):
        return _arith(self, other, "_not_equal", "_not_equal_scalar")

    def __gt__(self, other):
        return _arith(self, other, "_greater", "_greater_scalar")

    def __ge__(self, other):
        return _arith(self, other, "_greater_equal", "_greater_equal_scalar")

    def __lt__(self, other):
        return _arith(self, other, "_lesser", "_lesser_scalar")

    def __le__(self, other):
        return _arith(self, other, "_lesser_equal", "_lesser_equal_scalar")

    # The operator methods (s.sum(), s.reshape(), s.astype(), ...) are installed on the
    # class from the registry's fluent operators when mx.sym is imported.

    def as_np_ndarray(self):
        """The same graph as a numpy-mode symbol (``mx.sym.np._Symbol``): run, it gives
        ``mx.np.ndarray`` outputs and its operators follow NumPy semantics."""
        from .numpy._symbol import _Symbol
        return _Symbol(self._outputs)

    def as_nd_ndarray(self):
        """The same graph as a classic Symbol (this one already is)."""
        return self


def stored_attr_key(key: str, operator_kwarg: bool) -> str:
    """The key an attribute is stored under: MXNet keeps ``lr_mult``, ``ctx_group`` and
    the other hidden keys as ``__lr_mult__`` ...

    An operator keyword that starts with a hidden key is stored hidden; a key that ends
    with one (``fc_lr_mult``) is the deprecated per-input form and raises MXNetError.
    """
    for hidden in HIDDEN_KEYS:
        pos = key.rfind(hidden)
        if pos == 0 and (operator_kwarg or key == hidden):
            return f"__{key}__"
        if pos > 0 and pos + len(hidden) == len(key):
            raise MXNetError(f"setting variable attributes with {key} is deprecated. "
                             f"please instead use\nw = Variable({hidden}=...)\n"
                             f"sym = YourSymbolName({key[:pos - 1]}=w)")
    return key


def _expect(condition: bool, message: str) -> None:
    """MXNet asserts on optimize_for's argument types."""
    if not condition:
        raise AssertionError(message)


def _optimize_inputs(sym: Symbol, args, aux, shape_dict, type_dict, stype_dict):
    """The known input shapes and dtypes for ``optimize_for``: from the arrays of
    arguments and auxiliary states it names (others are ignored), then the dicts, checked
    as MXNet checks them."""
    from ..ndarray.ndarray import NDArray
    shapes, types = {}, {}
    inputs = set(sym.list_inputs())
    for given, names in ((args or {}, sym.list_arguments()),
                         (aux or {}, sym.list_auxiliary_states())):
        for name in (n for n in names if n in given):
            arr = given[name]
            if not isinstance(arr, NDArray):
                raise TypeError("Only accept list of NDArrays or dict of str to NDArray")
            shapes[name], types[name] = arr.shape, np.dtype(arr.dtype).name
    for k, v in (shape_dict or {}).items():
        if not isinstance(v, (tuple, list)):
            raise ValueError(str(v) + " has to be a tuple or list.")
        if k in inputs and k not in shapes:
            shapes[k] = tuple(v)
    for k, v in (type_dict or {}).items():
        if np.dtype(v) not in DTYPE_NP_TO_MX:
            raise ValueError(str(np.dtype(v).type) + " is not a MXNet type.")
        if k in inputs and k not in types:
            types[k] = np.dtype(v).name
    for v in (stype_dict or {}).values():
        if v not in _STYPE_TO_ID:
            raise ValueError(str(v) + " is not a MXNet storage type.")
    return shapes, types


def _compose_atomic(node: Node, args: tuple, kwargs: dict) -> Symbol:
    """Give an atomic symbol's operator its inputs (missing ones become variables)."""
    from .register import create_symbol
    attrs = dict(node.attrs)
    return create_symbol(node.op, node.op.name, list(args), dict(kwargs), attrs,
                         node.name, scoped=False)


def _listed_attrs(node: Node) -> dict[str, str]:
    out = dict(node.attrs)
    for k in HIDDEN_KEYS:
        hk = f"__{k}__"
        if hk in out:
            out[k] = out[hk]
    return out


def _entry_name(e: Entry) -> str:
    node = e.node
    if node.is_variable:
        return node.name
    out = node.output_names()[e.index]
    return f"{node.name}_{out}" if node.name else out


def _clone(sym: Symbol) -> Symbol:
    memo: dict[int, Node] = {}
    for n in sym._topo():
        new = Node(n.op, n.name, n.attrs, [Entry(memo[id(e.node)], e.index) for e in n.inputs],
                   n.subgraphs)
        new._parsed = n._parsed
        memo[id(n)] = new
    return Symbol([Entry(memo[id(e.node)], e.index) for e in sym._outputs])


def _arith(lhs: Symbol, rhs, array_op: str | None, scalar_op: str) -> Symbol:
    if isinstance(rhs, Symbol):
        if array_op is None:
            raise TypeError(f"reflected {scalar_op} with a Symbol")
        return _make(array_op, [lhs, rhs], {})
    if isinstance(rhs, (numbers.Number, np.generic)):
        return _make(scalar_op, [lhs], {"scalar": rhs})
    raise TypeError(f"type {type(rhs).__name__} not supported")


def _make(op_name: str, inputs: list, kwargs: dict, name: str | None = None,
          attr: dict | None = None) -> Symbol:
    from .register import create_symbol
    return create_symbol(_reg.get(op_name), op_name, inputs, {}, kwargs, name, attr)


# ---------------------------------------------------------------------- variables
def var(name: str, attr: dict | None = None, shape=None, lr_mult=None, wd_mult=None,
        dtype=None, init=None, stype=None, profiler_scope=None, **kwargs) -> Symbol:
    """Create a symbolic variable (a graph input)."""
    if not isinstance(name, str):
        raise TypeError("Expect a string for variable `name`")
    attrs = {stored_attr_key(k, operator_kwarg=False): v
             for k, v in AttrScope.current.get(attr).items()}
    if shape is not None:
        attrs["__shape__"] = str(tuple(shape) if isinstance(shape, list) else shape)
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        attrs["__dtype__"] = str(DTYPE_NP_TO_MX[dtype_np(dtype)])
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        attrs["__storage_type__"] = str(_STYPE_TO_ID[stype])
    if profiler_scope is not None:
        attrs["__profiler_scope__"] = profiler_scope
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            attrs[k] = str(v)
        else:
            raise ValueError(f"Attribute name={k} is not supported. Additional attributes "
                             "must start and end with double underscores, e.g, __yourattr__")
    return Symbol([Entry(Node(None, name, attrs), 0)])


Variable = var


def Group(symbols) -> Symbol:
    """Group several symbols into one multi-output symbol."""
    symbols = list(symbols)
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    entries = []
    for s in symbols:
        entries.extend(s._outputs)
    return Symbol(entries)


def load_json(json_str: str) -> Symbol:
    """Load a symbol from MXNet's JSON (any version MXNet 1.9.1 loads)."""
    if not isinstance(json_str, str):
        raise TypeError("fname required to be string")
    return Symbol(load_graph(json_str))


fromjson = load_json


def load(fname: str) -> Symbol:
    """Load a symbol from a ``-symbol.json`` file."""
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError("fname need to be string")
    try:
        with open(fname, "rb") as f:
            data = f.read()
    except OSError as err:
        raise MXNetError(f"cannot read symbol file {fname!r}: {err}") from None
    return Symbol(load_graph(data, os.fspath(fname)))



# MXNet defines these in symbol.py; here they live in helpers.py, which imports this module
_IN_HELPERS = ("zeros", "ones", "full", "arange", "linspace", "eye", "histogram", "hypot",
               "maximum", "minimum", "pow", "power", "split_v2")


def __getattr__(name: str):
    """``from mxtorch.symbol.symbol import zeros`` as from MXNet's module."""
    if name in _IN_HELPERS:
        from . import helpers
        return getattr(helpers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

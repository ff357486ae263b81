"""THE operator registry: every MXNet operator is defined once, here and in the family files.

An :class:`OpDef` carries everything the rest of mxtorch needs to know about an operator:
its names, typed attributes, input names (possibly a function of the attributes), which
inputs are auxiliary (mutable) states, its outputs, shape and dtype inference and the
torch compute. ``mx.nd``, ``mx.sym``, the JSON loader and the graph compiler all find
operators through :func:`get`.

Compute convention
------------------
``compute(attrs, *inputs, **runtime)`` takes the parsed attributes (a namedtuple with
one field per :class:`Param`) and the input tensors in input-name order, and returns one
tensor, or a tuple when the operator has several visible outputs. Runtime keywords are
passed only when the definition asks for them:

* ``is_train=bool`` when ``train_aware=True`` (Dropout, BatchNorm, loss outputs, ...);
* ``device=torch.device`` when ``creates=True`` (operators that make arrays from nothing).

Auxiliary states arrive as ordinary inputs and are updated in place by the compute.
Where MXNet's gradient is not the mathematical one the compute uses a
``torch.autograd.Function``, so the gradient rule lives in the same definition.
"""
from __future__ import annotations

import json
from collections import namedtuple
from typing import Any, Callable, Sequence

import numpy as np
import torch

from ..base import MXNetError, attr_to_str
from .params import REQUIRED, Param

__all__ = ["OpDef", "register", "get", "find", "all_ops", "TShape", "Shapes", "ShapeInfer",
           "DTypes", "TypeInfer", "same_type_infer"]

TShape = tuple[int, ...]  # a shape (MXNet's TShape); 0 is an unknown dimension
Shapes = list[TShape | None]  # None: a shape not known yet
ShapeInfer = tuple[Shapes, Shapes | None]  # an infer_shape function's (inputs, outputs)
DTypes = list[str | None]  # dtype names ("float32"); None: not known yet
TypeInfer = tuple[DTypes, DTypes]  # an infer_type function's (inputs, outputs)

_REGISTRY: dict[str, "OpDef"] = {}
_CANONICAL: dict[str, "OpDef"] = {}
_META_MEMO = 4096   # answers an operator's meta_forward remembers


def _shape_known(shape: tuple | None) -> bool:
    return shape is not None and all(d > 0 for d in shape)


class OpDef:
    """The single definition of one operator.

    Besides its structure and compute, an operator declares here the properties the
    graph passes and front ends read (none of them looks an operator up by name):

    channels_last
        How the operator treats channels-last activations in a compiled CPU program
        (:mod:`mxtorch.graph.layout`): ``"start"`` makes output 0 channels-last (a 2-D
        NCHW convolution), ``"keep"`` passes a channels-last data input on to output 0,
        ``"keep_all"`` does so only when every input is channels-last; ``None`` (the
        default) needs dense NCHW inputs. A function of the attributes may give the role.
    fusion_role
        The part the operator plays in the CPU convolution fusion
        (``graph/backends/cpu_tuned/fusion.py``, MXNet's ``SgMKLDNNConvProperty``): ``"conv"``,
        ``"batchnorm"``, ``"add"`` (an elementwise sum) or ``"relu"``; ``None`` for none.
        A function of the attributes may give the role (``Activation`` is ``"relu"`` only
        for ``act_type='relu'``).
    same_dtype_fn
        ``fn(a, b)``: the compute without its checks, for two inputs of one dtype that
        broadcast (NDArray's operator methods call it directly).
    tensor_scalar_fn
        ``fn(x, s)``: the compute of a float32/float64 ``x`` and the scalar given as a
        0-dim tensor of ``x``'s dtype (NDArray's operator methods keep such tensors).
    infer_shape_takes_outputs
        The ``infer_shape`` function takes a third argument, the output shapes the graph
        already knows (for inference backwards from the outputs).
    custom_op_attr
        The attribute naming the user's Python operator the compute runs (``Custom``'s
        ``op_type``): the profiler reports the call under that name, as MXNet does.
    """

    def __init__(self, name: str, compute: Callable, *, params: Sequence[Param] = (),
                 inputs: Sequence[str] | Callable[[Any], list[str]] = ("data",),
                 aux: Sequence[str] | Callable[[Any], list[str]] = (),
                 num_outputs: int | Callable[[Any], int] = 1,
                 output_names: Sequence[str] | Callable[[Any], list[str]] | None = None,
                 total_outputs: int | Callable[[Any], int] | None = None,
                 infer_shape: Callable | None = None, infer_type: Callable | None = None,
                 aliases: Sequence[str] = (), key_var_num_args: str | None = None,
                 train_aware: bool = False, creates: bool = False, doc: str = "",
                 fluent: bool | str = False,
                 allow_extra: bool = False, takes_subgraphs: bool = False,
                 work: Callable | None = None, differentiable: bool = True,
                 zero_grad: bool = False, input_inits: dict[str, str] | None = None,
                 deterministic: bool | Callable[[Any], bool] = True,
                 listed_inputs: bool = True, subgraph_attr: str | None = None,
                 shape_from_graph: Callable[[Any], bool] | None = None,
                 with_shape: Callable[[Any, tuple], Any] | None = None,
                 float_attrs: Callable[[Any], Any] | None = None,
                 int_grad: bool = True,
                 infer_shape_takes_outputs: bool = False,
                 channels_last: str | Callable[[Any], str | None] | None = None,
                 fusion_role: str | Callable[[Any], str | None] | None = None,
                 same_dtype_fn: Callable | None = None,
                 tensor_scalar_fn: Callable | None = None,
                 custom_op_attr: str | None = None):
        self.name = name
        self.compute = compute
        self.params: dict[str, Param] = {p.name: p for p in params}
        self._inputs = inputs
        self._aux = aux
        self.aux = () if callable(aux) else tuple(aux)
        self._num_outputs = num_outputs
        self._output_names = output_names
        self._total_outputs = total_outputs
        self._infer_shape = infer_shape
        self.infer_shape_takes_outputs = infer_shape_takes_outputs
        self._infer_type = infer_type
        self.aliases = tuple(aliases)
        self.key_var_num_args = key_var_num_args
        self.train_aware = train_aware
        self.creates = creates
        self.doc = doc
        # fluent: NDArray and Symbol have a method for it (True: named as the operator; a
        # string: the method's name, as ``Flatten`` -> ``flatten``)
        self.fluent = fluent
        # input_inits: {input name: initializer JSON} given, at composition, to a variable
        # fed to that input that has no ``__init__`` attribute yet (MXNet's
        # FSetInputVarAttrOnCompose: PReLU's gamma starts at 0.25)
        self.input_inits = input_inits or {}
        # allow_extra: unknown attributes are kept (as sorted (key, str) pairs) in
        # ``attrs.extra`` instead of raising, for operators such as Custom.
        self.allow_extra = allow_extra
        # takes_subgraphs: the compute gets ``subgraphs=[callable(*tensors) -> tuple]``
        # (control-flow operators such as _foreach; the graph layer compiles them).
        self.takes_subgraphs = takes_subgraphs
        # work(attrs, *tensors): the estimated single-thread microseconds of a call, for
        # operators whose torch kernels start OpenMP at any size (see ops/tuning.py)
        self.work = work
        # differentiable=False: MXNet registers no gradient (a backward pass that needs one
        # through it fails at bind); zero_grad: the gradient is zero (BlockGrad), so none
        # flows on to the inputs
        self.differentiable = differentiable
        self.zero_grad = zero_grad
        # deterministic=False (or a function of the attributes): the outputs depend on more
        # than the inputs (random numbers, state), so two such nodes never merge (CSE)
        self._deterministic = deterministic
        # listed_inputs=False: MXNet declares no input names for the operator (only
        # argument docs), so its executor's monitor calls the inputs input0, input1, ...
        self.listed_inputs = listed_inputs
        # subgraph_attr: the attribute holding a nested graph (symbol JSON) that the
        # operator applies to its inputs (_CachedOp): the graph layer compiles it and infers
        # the node's shapes and types through it
        self.subgraph_attr = subgraph_attr
        # a creation operator whose output shape the graph gives (MXNet infers it
        # backwards): shape_from_graph(attrs) says when (default: a ``shape`` attribute with
        # unknown dims), with_shape(attrs, shape) gives the attributes that make that shape
        # (default: ``shape`` replaced)
        self._shape_from_graph = shape_from_graph
        self._with_shape = with_shape
        # float_attrs(attrs): for an operator whose result may be integer while its
        # gradient flows (Cast), the attributes that keep the result float64 (None: they
        # already do); integer gradients compute with them (ops/intgrad.py)
        self.float_attrs = float_attrs
        # int_grad False: MXNet's backward kernels give integer inputs a zero gradient
        # (mod's integer specializations of mod_grad/mod_rgrad are 0)
        self.int_grad = int_grad
        # the properties the class docstring describes
        self._channels_last = channels_last
        self._fusion_role = fusion_role
        self.same_dtype_fn = same_dtype_fn
        self.tensor_scalar_fn = tensor_scalar_fn
        self.custom_op_attr = custom_op_attr
        fields = list(self.params) + (["extra"] if allow_extra else [])
        self.Attrs = namedtuple(f"{name.strip('_') or 'op'}_attrs", fields)
        self.param_order = list(self.params)
        self._attr_cache: dict = {}
        self._meta_memo: dict = {}   # meta_forward's results (see there)
        self.static_inputs = None if callable(inputs) else list(inputs)
        self._default_attrs = None

    # ------------------------------------------------------------------ attributes
    def parse_attrs(self, kwargs: dict) -> Any:
        """Parse attribute values (Python values or MXNet strings) into ``self.Attrs``.

        Unknown names raise :class:`MXNetError`; names of the form ``__x__`` are hidden
        attributes and are ignored here (the Symbol keeps them).
        """
        try:
            key = tuple(kwargs.items())  # a call site passes its keywords in one order
            hit = self._attr_cache.get(key)
            if hit is not None:
                return hit
        except TypeError:
            key = None
        values = {}
        extra = []
        for k, v in kwargs.items():
            p = self.params.get(k)
            if p is None:
                if k.startswith("__") and k.endswith("__"):
                    continue
                if self.allow_extra:
                    extra.append((k, attr_to_str(v)))
                    continue
                if not self.params:
                    continue  # MXNet: operators without parameters ignore unknown keys
                raise MXNetError(f"Operator {self.name}: unknown attribute '{k}'. "
                                 f"Valid attributes are {sorted(self.params)}")
            values[k] = p.convert(self.name, v)
        for name, p in self.params.items():
            if name not in values:
                if p.default is REQUIRED:
                    raise MXNetError(f"Operator {self.name}: required attribute '{name}' "
                                     "is missing")
                values[name] = p.default
        if self.allow_extra:
            values["extra"] = tuple(sorted(extra))
        attrs = self.Attrs(**values)
        if key is not None and len(self._attr_cache) < 4096:
            self._attr_cache[key] = attrs
        return attrs

    def default_attrs(self) -> Any:
        """Attributes with every default (cached; raises if one is required)."""
        attrs = self._default_attrs
        if attrs is None:
            attrs = self._default_attrs = self.parse_attrs({})
        return attrs

    @property
    def plain(self) -> bool:
        """True when the compute takes no runtime keywords."""
        return not (self.train_aware or self.creates or self.takes_subgraphs)

    # ------------------------------------------------------------------ structure
    def input_names(self, attrs: Any) -> list[str]:
        if self.static_inputs is not None:
            return self.static_inputs
        return list(self._inputs(attrs))

    def num_outputs(self, attrs: Any) -> int:
        n = self._num_outputs
        return n(attrs) if callable(n) else n

    def total_outputs(self, attrs: Any) -> int:
        n = self._total_outputs
        if n is None:
            return self.num_outputs(attrs)
        return n(attrs) if callable(n) else n

    def output_names(self, attrs: Any) -> list[str]:
        names = self._output_names
        if names is None:
            n = self.num_outputs(attrs)
            return ["output"] if n == 1 else [f"output{i}" for i in range(n)]
        return list(names(attrs) if callable(names) else names)

    def shape_from_graph(self, attrs: Any) -> bool:
        """Whether this creation node's output shape must come from the graph."""
        if not self.creates:
            return False
        if self._shape_from_graph is not None:
            return self._shape_from_graph(attrs)
        return any(d is None or d <= 0 for d in getattr(attrs, "shape", None) or ())

    def with_shape(self, attrs: Any, shape: tuple) -> Any:
        """The attributes that make this creation node's output ``shape``."""
        if self._with_shape is not None:
            return self._with_shape(attrs, shape)
        return attrs._replace(shape=shape)

    def nested_graphs(self, attrs: Any) -> list[dict]:
        """The nested graph named by ``subgraph_attr``, as symbol JSON data (else [])."""
        if self.subgraph_attr is None:
            return []
        return [json.loads(getattr(attrs, self.subgraph_attr))]

    def monitor_input_names(self, attrs: Any) -> list[str]:
        """The input names an executor's monitor reports (``<node>_<name>``)."""
        names = self.input_names(attrs)
        return names if self.listed_inputs else [f"input{i}" for i in range(len(names))]

    def is_deterministic(self, attrs: Any) -> bool:
        """Whether the outputs are a function of the inputs and attributes alone."""
        det = self._deterministic
        return det(attrs) if callable(det) else det

    def channels_last_role(self, attrs: Any) -> str | None:
        """``"start"``, ``"keep"``, ``"keep_all"`` or None (see ``channels_last``)."""
        role = self._channels_last
        return role(attrs) if callable(role) else role

    def fusion_role_of(self, attrs: Any) -> str | None:
        """``"conv"``, ``"batchnorm"``, ``"add"``, ``"relu"`` or None (see ``fusion_role``)."""
        role = self._fusion_role
        return role(attrs) if callable(role) else role

    def aux_names(self, attrs: Any) -> list[str]:
        return list(self._aux(attrs)) if callable(self._aux) else list(self.aux)

    # ------------------------------------------------------------------ execution
    def run(self, attrs: Any, tensors: Sequence[torch.Tensor], is_train: bool = False,
            device: torch.device | None = None):
        """Call the compute with the runtime keywords this operator asked for."""
        if self.train_aware:
            if self.creates:
                return self.compute(attrs, *tensors, is_train=is_train, device=device)
            return self.compute(attrs, *tensors, is_train=is_train)
        if self.creates:
            return self.compute(attrs, *tensors, device=device)
        return self.compute(attrs, *tensors)

    def bind_runtime(self, attrs: Any, is_train: bool, device: torch.device | None,
                     subgraphs: list | None = None):
        """Return ``f(*tensors)`` with attributes and runtime keywords fixed (for graphs)."""
        compute = self.compute
        kw: dict[str, Any] = {}
        if self.train_aware:
            kw["is_train"] = is_train
        if self.creates:
            kw["device"] = device
        if self.takes_subgraphs:
            kw["subgraphs"] = subgraphs or []
        if kw:
            return lambda *t: compute(attrs, *t, **kw)
        return lambda *t: compute(attrs, *t)

    # ------------------------------------------------------------------ inference
    def infer_shape(self, attrs: Any, in_shapes: list,
                    out_shapes: list | None = None) -> tuple[list, list]:
        """Infer shapes both ways. ``None`` is an unknown shape, 0 an unknown dimension.

        ``out_shapes`` (what the graph already knows of the outputs) reaches a custom
        inference function declared with ``infer_shape_takes_outputs``. Returns
        ``(in_shapes, out_shapes)`` with whatever could be filled in.
        """
        in_shapes = list(in_shapes)
        out = None
        if self._infer_shape is not None:
            if self.infer_shape_takes_outputs:
                res = self._infer_shape(attrs, in_shapes, out_shapes)
            else:
                res = self._infer_shape(attrs, in_shapes)
            if res is not None:
                new_in, out = res
                if out is not None and all(_shape_known(s) for s in out):
                    return list(new_in), list(out)
                in_shapes = list(new_in)
        if out is not None:   # the definition's own (partial) answer
            return in_shapes, list(out)
        if all(s is not None and 0 not in s for s in in_shapes):
            return in_shapes, self.meta_forward(attrs, in_shapes, None)[0]
        return in_shapes, self._partial_outputs(attrs, in_shapes)

    # unknown dimensions take these values in turn; an output dimension that comes out
    # the same every time does not depend on them and is known
    _PROBE_DIMS = (97, 101, 3)

    def _partial_outputs(self, attrs: Any, in_shapes: list) -> list:
        """Output shapes from inputs with unknown (0) dimensions: run the compute on meta
        tensors with the unknown dimensions set to each probe value; the output dimensions
        that agree across the runs (at least two) are known, the others 0."""
        n = self.num_outputs(attrs)
        if any(s is None for s in in_shapes) or not in_shapes:
            return [None] * n
        runs = []
        for probe in self._PROBE_DIMS:
            shapes = [tuple(d or probe for d in s) for s in in_shapes]
            try:
                runs.append(self.meta_forward(attrs, shapes, None)[0])
            except MXNetError:
                continue
        if len(runs) < 2:
            return [None] * n
        outs = []
        for k in range(n):
            ranks = {len(r[k]) for r in runs}
            if len(ranks) != 1:
                outs.append(None)
                continue
            outs.append(tuple(dims[0] if len(set(dims)) == 1 else 0
                              for dims in zip(*(r[k] for r in runs))))
        return outs

    def infer_type(self, attrs: Any, in_types: list) -> tuple[list, list]:
        """Infer dtypes (NumPy dtype names, ``None`` when unknown) both ways."""
        if self._infer_type is not None:
            return self._infer_type(attrs, list(in_types))
        known = [t for t in in_types if t is not None]
        in_types = [t if t is not None else (known[0] if known else None) for t in in_types]
        n = self.num_outputs(attrs)
        if not in_types:
            dt = getattr(attrs, "dtype", None) or "float32"
            return in_types, [dt] * n
        if any(t is None for t in in_types):
            return in_types, [None] * n
        try:
            shapes = [(1,) * 1 for _ in in_types]
            return in_types, self.meta_forward(attrs, None, in_types, shapes)[1]
        except Exception:  # noqa: BLE001 - shapes of 1 may not suit the op; fall back
            return in_types, [in_types[0]] * n

    def meta_forward(self, attrs: Any, in_shapes: list | None, in_types: list | None,
                     fallback_shapes: list | None = None) -> tuple[list, list]:
        """Run the compute on meta tensors to read output shapes and dtypes.

        The answer is remembered by attributes, shapes and dtypes: a graph repeats the
        same node many times (an unrolled RNN), binding infers shapes and dtypes of every
        node, and torch's meta kernels take up to a millisecond per call.
        """
        shapes = in_shapes if in_shapes is not None else fallback_shapes
        types = in_types or ["float32"] * len(shapes)
        key = self._meta_key(attrs, shapes, types)
        known = self._meta_memo.get(key) if key is not None else None
        if known is None:
            try:
                known = self._meta_run(attrs, shapes, types)
            except MXNetError as err:   # remembered too: dtype inference tries shapes
                if type(err) is not MXNetError:     # of 1, which many operators refuse
                    raise
                known = err
            if key is not None:
                if len(self._meta_memo) >= _META_MEMO:
                    self._meta_memo.clear()
                self._meta_memo[key] = known
        if isinstance(known, MXNetError):
            raise MXNetError(*known.args) from None
        return list(known[0]), list(known[1])

    def _meta_key(self, attrs: Any, shapes: list, types: list) -> tuple | None:
        """``meta_forward``'s memo key; None where the answer may change between calls
        (a Custom operator's class can be registered again) or cannot be hashed."""
        if self.allow_extra or self.takes_subgraphs:
            return None
        try:
            key = (attrs, tuple(map(type, attrs)), tuple(tuple(s) for s in shapes),
                   tuple(types))
            hash(key)
        except TypeError:
            return None
        return key

    def _meta_run(self, attrs: Any, shapes: list, types: list) -> tuple[tuple, tuple]:
        from ..base import dtype_np
        from .tensor_util import np_to_torch_dtype, torch_to_np_name
        metas = [torch.empty(tuple(s), dtype=np_to_torch_dtype(dtype_np(t)), device="meta")
                 for s, t in zip(shapes, types)]
        try:
            with torch.no_grad():
                out = self.run(attrs, metas, is_train=False, device=torch.device("meta"))
        except MXNetError:
            raise
        except (RuntimeError, ValueError, IndexError, TypeError) as err:
            raise MXNetError(f"Operator {self.name}: shape inference failed for input "
                             f"shapes {[tuple(s) for s in shapes]}: {err}") from None
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return (tuple(tuple(o.shape) for o in outs),
                tuple(torch_to_np_name(o.dtype) for o in outs))

    def __repr__(self):
        return f"<OpDef {self.name}>"


def same_type_infer(attrs: Any, types: list) -> tuple[list, list]:
    """MXNet's ElemwiseType: every input and the output share the first known dtype."""
    known = next((t for t in types if t is not None), None)
    return [t if t is not None else known for t in types], [known]


def register(opdef: OpDef) -> OpDef:
    """Add an operator (and its aliases) to the registry."""
    for nm in (opdef.name, *opdef.aliases):
        if nm in _REGISTRY:
            raise MXNetError(f"operator {nm} is registered twice")
        _REGISTRY[nm] = opdef
    _CANONICAL[opdef.name] = opdef
    return opdef


def get(name: str) -> OpDef:
    """Look an operator up by name or alias; raise MXNetError when unknown."""
    op = _REGISTRY.get(name)
    if op is None:
        raise MXNetError(f"Cannot find operator '{name}' in the registry")
    return op


def find(name: str) -> OpDef | None:
    return _REGISTRY.get(name)


def all_ops() -> dict[str, OpDef]:
    """Every registered name (aliases included) -> its definition."""
    return dict(_REGISTRY)


def canonical_ops() -> dict[str, OpDef]:
    """Canonical name -> definition (one entry per operator)."""
    return dict(_CANONICAL)


_SUB_NAMESPACES = (("_contrib_", "contrib"), ("_linalg_", "linalg"), ("_random_", "random"),
                   ("_sample_", "random"), ("_image_", "image"))
NAMESPACES = ("op", "_internal") + tuple(dict.fromkeys(ns for _, ns in _SUB_NAMESPACES))


def public_name(name: str) -> tuple[str, str] | None:
    """Registry name -> (sub-namespace, name there) for contrib/linalg/random/image ops."""
    for prefix, ns in _SUB_NAMESPACES:
        if name.startswith(prefix):
            return ns, name[len(prefix):]
    return None


def namespace_names(namespace: str) -> dict[str, str]:
    """Name in a front-end namespace -> registry name, for one of :data:`NAMESPACES`.

    ``op`` holds the public names (what ``mx.nd`` / ``mx.sym`` export), ``_internal`` the
    ``_x`` names; ``contrib``, ``linalg``, ``random`` and ``image`` the ``_contrib_x``,
    ``_linalg_x``, ``_random_x``/``_sample_x`` and ``_image_x`` operators without their
    prefix (``linalg`` also takes the public ``linalg_x`` names).
    """
    if namespace not in NAMESPACES:
        raise MXNetError(f"unknown operator namespace {namespace!r}; namespaces are "
                         f"{list(NAMESPACES)}")
    out: dict[str, str] = {}
    for nm in _REGISTRY:
        if namespace == "op":
            if not nm.startswith("_"):
                out[nm] = nm
        elif namespace == "_internal":
            if nm.startswith("_"):
                out[nm] = nm
        else:
            sub = public_name(nm)
            if sub is not None and sub[0] == namespace:
                out.setdefault(sub[1], nm)
            elif namespace == "linalg" and nm.startswith("linalg_"):
                out.setdefault(nm[len("linalg_"):], nm)
    return out


_MADE: dict[tuple, Callable] = {}  # (front end's make_function, registry name) -> function


def made_function(make_function: Callable[[OpDef, str], Callable], name: str) -> Callable:
    """The one function a front end has for a registry name, whichever namespaces show it."""
    key = (make_function, name)
    fn = _MADE.get(key)
    if fn is None:
        fn = _MADE[key] = make_function(get(name), name)
    return fn


def populate(make_function: Callable[[OpDef, str], Callable], module_dict: dict,
             namespace: str) -> list[str]:
    """Fill one namespace of a front end (``mx.nd.linalg``, ``mx.sym._internal``, ...)
    with a function per operator; names the module already defines are kept.

    Returns the names added, for the module's ``__all__``.
    """
    added = []
    for short, nm in namespace_names(namespace).items():
        if short not in module_dict:
            module_dict[short] = made_function(make_function, nm)
            added.append(short)
    return added


def fluent_methods() -> dict[str, str]:
    """Method name -> registry name of every operator with a fluent method (``x.sum()``
    is ``sum(x)``).

    ``fluent=True`` names the method after the operator; a string names it otherwise
    (``Flatten`` gives ``flatten``, ``Cast`` gives Symbol's ``astype``).
    """
    out = {}
    for opdef in _CANONICAL.values():
        method = opdef.fluent
        if method is True:
            out[opdef.name] = opdef.name
        elif method:
            out[method] = method if method in opdef.aliases else opdef.name
    return out


def _doc_input_names(opdef: OpDef) -> list[str]:
    """An operator's input names for its docstring (the default attributes' inputs)."""
    if opdef.static_inputs is not None:
        return opdef.static_inputs
    values = {n: None if p.default is REQUIRED else p.default for n, p in opdef.params.items()}
    if opdef.allow_extra:
        values["extra"] = ()
    try:
        return opdef.input_names(opdef.Attrs(**values))
    except (MXNetError, TypeError, ValueError, AttributeError):
        return []   # inputs that need a required attribute (Custom's op_type, ...)


def _doc_value(kind: str, value: Any) -> str:
    """A default as MXNet's dmlc parameters print it: booleans 0/1, ints quoted, floats
    with float32's 9 digits, tuples ``[a,b]``, strings quoted."""
    if isinstance(value, bool):
        return str(int(value))
    if value is None:
        return "'None'" if kind.startswith(("int", "{")) else "None"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "[%s]" % ",".join(_doc_value("", v).strip("'") for v in value)
    if isinstance(value, int):
        return "'%d'" % value if kind.startswith("int") else str(value)
    if isinstance(value, float):
        # MXNet: a float attribute is a C float, printed with 9 significant digits
        return "%.9g" % (np.float32(value) if kind.startswith("float") else value)
    return attr_to_str(value)


def _doc_type(param: Param) -> str:
    """MXNet's ``type, required`` / ``type,optional, default=...`` of one attribute."""
    kind = param.type_name
    if param.choices:
        names = sorted(repr(c) for c in param.choices)
        if param.default is None:
            names.insert(0, "None")
        kind = "{%s}" % ", ".join(names)
    if param.default is REQUIRED:
        return kind + ", required"
    # MXNet: no space between an enum's braces and 'optional'
    sep = "," if param.choices else ", "
    return "%s%soptional, default=%s" % (kind, sep, _doc_value(kind, param.default))


def argument_docs(opdef: OpDef) -> tuple[list[str], list[str], list[str]]:
    """(names, types, descriptions) of an operator's inputs and attributes, the lists
    MXNet's ``_build_doc`` takes: inputs typed ``NDArray-or-Symbol`` (``[]`` for a
    variable number of them), attributes with their type and default."""
    names, types, descs = [], [], []
    if opdef.key_var_num_args:
        names.append("data")
        types.append("NDArray-or-Symbol[]")
        descs.append("The input arrays (any number of them).")
    else:
        for name in _doc_input_names(opdef):
            names.append(name)
            types.append("NDArray-or-Symbol")
            descs.append("")
    for param in opdef.params.values():
        names.append(param.name)
        types.append(_doc_type(param))
        descs.append(param.doc)
    return names, types, descs


def function_doc(opdef: OpDef, build_doc: Callable) -> str:
    """The docstring of a front end's function for ``opdef``: ``build_doc`` (the
    ``_build_doc`` of ``mx.ndarray_doc`` or ``mx.symbol_doc``) over its description and
    :func:`argument_docs`; a description that has its own Parameters section is kept."""
    if "Parameters\n---" in opdef.doc:
        return opdef.doc
    names, types, descs = argument_docs(opdef)
    return build_doc(opdef.name, opdef.doc, names, types, descs, opdef.key_var_num_args)

"""Generate ``mx.sym.<op>`` functions from the operator registry."""
from __future__ import annotations

from typing import Any, Callable

from ..attribute import AttrScope
from ..base import MXNetError, attr_to_str
from ..name import NameManager
from ..symbol_doc import _build_doc
from ..ops import registry as _reg
from ..graph.ir import AUX_INIT, Entry, Node
from .symbol import Symbol, stored_attr_key

__all__ = ["create_symbol", "make_function", "populate", "install_methods"]


def _split(opdef: _reg.OpDef, args: tuple, kwargs: dict):
    pos: list[Symbol] = []
    named: dict[str, Symbol] = {}
    attrs: dict[str, Any] = {}
    extra = []
    for a in args:
        if isinstance(a, Symbol):
            pos.append(a)
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, Symbol) for x in a):
            pos.extend(a)
        elif a is None and not extra:
            continue
        else:
            extra.append(a)
    for i, v in enumerate(extra):
        if i >= len(opdef.param_order):
            raise MXNetError(f"Operator {opdef.name}: too many positional arguments")
        attrs[opdef.param_order[i]] = v
    for k, v in kwargs.items():
        if isinstance(v, Symbol):
            named[k] = v
        elif v is None and k not in opdef.params:
            continue
        else:
            attrs[k] = v
    return pos, named, attrs


def create_symbol(opdef: _reg.OpDef, called_name: str, pos: list, named: dict,
                  attr_kwargs: dict, name: str | None = None,
                  attr: dict | None = None, scoped: bool = True) -> Symbol:
    """Create one operator node, auto-creating missing inputs as ``<name>_<input>``.

    With ``scoped`` the name comes from the NameManager and the AttrScope's attributes
    and ``attr`` join the keywords; otherwise ``name`` is used as given.
    """
    for s in list(pos) + list(named.values()):
        if len(s._outputs) != 1:
            raise MXNetError(f"Operator {opdef.name}: an input symbol has "
                             f"{len(s._outputs)} outputs; pass a single output")
    nvar = opdef.key_var_num_args
    if nvar and nvar not in attr_kwargs:
        attr_kwargs = dict(attr_kwargs, **{nvar: len(pos) + len(named)})
    if scoped:
        # MXNet: the scope's attributes and attr= are operator keywords too (so an
        # operator with parameters rejects an unknown plain key); hidden keys such as
        # lr_mult are stored as __lr_mult__.
        scope_attrs = AttrScope.current.get(attr)
        if scope_attrs:
            attr_kwargs = dict(attr_kwargs, **scope_attrs)
        name = NameManager.current.get(name, called_name.lower())
    attr_kwargs = {stored_attr_key(k, operator_kwarg=True): v for k, v in attr_kwargs.items()}
    parsed = opdef.parse_attrs(attr_kwargs)
    node_attrs = {k: attr_to_str(v) for k, v in attr_kwargs.items()}
    input_names = opdef.input_names(parsed)
    slots: dict[str, Entry] = {}
    for n, s in zip(input_names, pos):
        slots[n] = s._outputs[0]
    if len(pos) > len(input_names):
        raise MXNetError(f"Operator {opdef.name}: {len(pos)} inputs given but it takes "
                         f"{len(input_names)}: {input_names}")
    for k, s in named.items():
        if k not in input_names:
            raise MXNetError(f"Operator {opdef.name}: unknown input '{k}'; inputs are "
                             f"{input_names}")
        slots[k] = s._outputs[0]
    entries = []
    for n in input_names:
        e = slots.get(n)
        if e is None:
            if nvar and n.startswith("arg") and n[3:].isdigit():
                raise MXNetError(f"Operator {opdef.name}: missing input {n}")
            e = Entry(Node(None, f"{name}_{n}" if name else n, dict(node_attrs)), 0)
        init = opdef.input_inits.get(n) or (AUX_INIT.get(n) if n in opdef.aux else None)
        if init is not None and e.node.is_variable and "__init__" not in e.node.attrs:
            # MXNet: set on the variable itself, a user's variable included
            e.node.attrs["__init__"] = init
        entries.append(e)
    node = Node(opdef, name, node_attrs, entries)
    node._parsed = parsed
    return Symbol([Entry(node, i) for i in range(opdef.num_outputs(parsed))])


def make_function(opdef: _reg.OpDef, fname: str) -> Callable:
    def fn(*args, name=None, attr=None, out=None, **kwargs):
        pos, named, attrs = _split(opdef, args, kwargs)
        return create_symbol(opdef, fname, pos, named, attrs, name, attr)
    fn.__name__ = fname
    fn.__qualname__ = fname
    fn.__doc__ = _reg.function_doc(opdef, _build_doc)
    return fn


def populate(module_dict: dict, namespace: str) -> list[str]:
    """Fill one ``mx.sym`` namespace module (``op``, ``_internal``, ``contrib``, ``linalg``,
    ``random``, ``image``) from the registry; returns the names added."""
    return _reg.populate(make_function, module_dict, namespace)


def install_methods(cls: type) -> None:
    """Give ``cls`` (Symbol) a method per fluent operator: the ``mx.sym`` function itself
    (``s.sum(axis=1)`` is ``mx.sym.sum(s, axis=1)``); names the class defines are kept."""
    for method, nm in _reg.fluent_methods().items():
        if method not in cls.__dict__:
            setattr(cls, method, _reg.made_function(make_function, nm))

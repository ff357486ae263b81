"""Elementwise operators: unary math, binary (elemwise_/broadcast_) and scalar forms.

Families are tables: one row per operator, expanded by one loop each.
"""
from __future__ import annotations

import math

import torch

from .params import Float
from .registry import OpDef, register

__all__: list[str] = []


def _float_only(fn):
    """Apply a float function; integer inputs keep their dtype as in MXNet."""
    def run(x):
        if x.is_floating_point():
            return fn(x)
        return fn(x.to(torch.float32)).to(x.dtype)
    return run


# (name, torch function, aliases)
_UNARY = [
    ("abs", torch.abs, ()),
    ("sign", torch.sign, ()),
    ("round", _float_only(lambda x: torch.sign(x) * torch.floor(torch.abs(x) + 0.5)), ()),
    ("rint", _float_only(torch.round), ()),
    ("ceil", _float_only(torch.ceil), ()),
    ("floor", _float_only(torch.floor), ()),
    ("trunc", _float_only(torch.trunc), ()),
    ("fix", _float_only(torch.trunc), ()),
    ("square", torch.square, ()),
    ("sqrt", _float_only(torch.sqrt), ()),
    ("rsqrt", _float_only(torch.rsqrt), ()),
    ("exp", _float_only(torch.exp), ()),
    ("log", _float_only(torch.log), ()),
    ("negative", torch.negative, ()),
    ("relu", torch.relu, ()),
    ("sigmoid", _float_only(torch.sigmoid), ()),
    ("tanh", _float_only(torch.tanh), ()),
]


def _unary_compute(fn):
    return lambda attrs, x: fn(x)


for _name, _fn, _aliases in _UNARY:
    register(OpDef(_name, _unary_compute(_fn), aliases=_aliases, fluent=True,
                   doc=f"Elementwise {_name} of the input."))


def _int_div(x, y):
    if x.is_floating_point() or y.is_floating_point():
        return torch.div(x, y)
    return torch.div(x, y, rounding_mode="trunc")


# (broadcast name, elemwise name or None, torch function)
_BINARY = [
    ("broadcast_add", "elemwise_add", torch.add, ("broadcast_plus",), ("_add", "_plus", "_Plus")),
    ("broadcast_sub", "elemwise_sub", torch.sub, ("broadcast_minus",), ("_sub", "_minus", "_Minus")),
    ("broadcast_mul", "elemwise_mul", torch.mul, (), ("_mul", "_Mul")),
    ("broadcast_div", "elemwise_div", _int_div, (), ("_div", "_Div")),
]


def _binary_compute(fn):
    return lambda attrs, x, y: fn(x, y)


def _same_shape_check(name):
    def infer(attrs, shapes):
        a, b = shapes
        known = a if a is not None else b
        if known is None:
            return shapes, [None]
        return [known, known], [known]
    return infer


for _bname, _ename, _fn, _baliases, _ealiases in _BINARY:
    register(OpDef(_bname, _binary_compute(_fn), inputs=("lhs", "rhs"), aliases=_baliases))
    if _ename:
        register(OpDef(_ename, _binary_compute(_fn), inputs=("lhs", "rhs"), aliases=_ealiases,
                       infer_shape=_same_shape_check(_ename)))


def _scalar_value(x: torch.Tensor, s: float):
    # MXNet: the scalar is cast to the array's dtype before the operation.
    if x.is_floating_point():
        return s
    if x.dtype == torch.bool:
        return bool(s)
    return int(s)


_SCALAR = [
    ("_plus_scalar", lambda x, s: x + s, ("_PlusScalar",)),
    ("_minus_scalar", lambda x, s: x - s, ("_MinusScalar",)),
    ("_rminus_scalar", lambda x, s: s - x, ("_RMinusScalar",)),
    ("_mul_scalar", lambda x, s: x * s, ("_MulScalar",)),
    ("_div_scalar", lambda x, s: _int_div(x, torch.tensor(s, dtype=x.dtype))
     if not x.is_floating_point() else x / s, ("_DivScalar",)),
    ("_rdiv_scalar", lambda x, s: _int_div(torch.tensor(s, dtype=x.dtype), x)
     if not x.is_floating_point() else s / x, ("_RDivScalar",)),
]


def _scalar_compute(fn):
    return lambda attrs, x: fn(x, _scalar_value(x, attrs.scalar))


for _sname, _fn, _saliases in _SCALAR:
    register(OpDef(_sname, _scalar_compute(_fn), params=[Float("scalar", 1.0)],
                   aliases=_saliases))

del math

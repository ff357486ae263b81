"""Gradients of integer arrays, as MXNet 1.x computes them.

MXNet differentiates arrays of every dtype: ``attach_grad`` works on an int32 array, and
each gradient an operator's backward produces for an integer input is computed in that
input's dtype (a float gradient is truncated toward zero, as a C cast does; ``x * x`` on
int32 gives the int32 gradient ``2 * x``, ``x.astype('float32') * 1.5`` gives 1).

torch's autograd differentiates floating-point tensors only. So an integer tensor that
takes part in a recorded computation carries a float64 *shadow* in its ``_mx_shadow``
attribute, which torch differentiates, while the array keeps its exact integer values:

- an attached integer array's shadow is a float64 leaf of zeros, whose gradient is what
  lands in the array's integer ``grad`` buffer; each use of a shadow reads the array's
  current values on the shadow's path (writes outside ``record()`` never leave it stale);
- an operator with a shadowed input, or with a float input on the tape and an integer
  result (a cast to int32), runs once more on *stand-ins* (see :func:`stand_ins`); each
  of its results gets the stand-in result's gradient path with its own exact values
  (:class:`_Graft`): a float result joins the tape itself, an integer one gets a shadow;
- every use of a shadow passes through :class:`_Truncate`, whose backward truncates the
  gradient to the integer dtype: one operator's contribution to an integer array's
  gradient is an integer, as in MXNet, and contributions add up exactly.

Nothing here runs unless a recorded result came out without a gradient while an input
carries a shadow (or is on the tape and the result is integer): float code never gets here.
"""
from __future__ import annotations

from typing import Callable, Sequence

import torch

__all__ = ["SHADOW", "IN_GRAPH", "INPLACE", "shadow", "stand_ins", "involved", "follow",
           "run_op", "attach", "head"]

SHADOW = "_mx_shadow"
_F64 = torch.float64

# MXNet's errors for writes under record() that its graph cannot represent: into an array
# already in the graph, and of a recorded value into part of an array (or in place)
IN_GRAPH = ("Assigning to NDArrays that are already in a computational graph will cause "
            "undefined behavior when evaluating gradients. Please call backward first to "
            "clear the graph or do this out side of a record section. Also note that you "
            "cannot use inplace operations like +=, *=, relu(x, out=x), y[idx]=x, etc "
            "inside a record section.")
INPLACE = ("Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with "
           "autograd.")


class _Truncate(torch.autograd.Function):
    """Identity on a shadow; the gradient is cast to the integer dtype and back."""

    @staticmethod
    def forward(ctx, s: torch.Tensor, dtype: torch.dtype):
        ctx.dtype = dtype
        return s.view_as(s)

    @staticmethod
    def backward(ctx, g: torch.Tensor):
        return g.to(ctx.dtype).to(g.dtype), None


class _Graft(torch.autograd.Function):
    """``box[0]`` (a result with its exact values) joins the tape where ``s`` is: its
    gradient goes to ``s`` (cast to s's dtype). The boxed tensor is returned itself."""

    @staticmethod
    def forward(ctx, s: torch.Tensor, box: list):
        ctx.dtype = s.dtype
        return box[0]

    @staticmethod
    def backward(ctx, g: torch.Tensor):
        return g.to(ctx.dtype), None


def attach(t: torch.Tensor) -> torch.Tensor:
    """Give the integer tensor ``t`` (an attached array's) a fresh shadow leaf; return it."""
    leaf = torch.zeros(t.shape, dtype=_F64, device=t.device, requires_grad=True)
    setattr(t, SHADOW, leaf)
    return leaf


def shadow(t: torch.Tensor) -> torch.Tensor | None:
    """The float64 stand-in of an integer tensor to compute with (its values, on the
    shadow's gradient path, truncating gradients to t's dtype); None without a shadow."""
    s = getattr(t, SHADOW, None)
    if s is None:
        return None
    # t's current values on the shadow's path: writes into the array outside record()
    # (or into an attached array's) never leave a stale copy behind
    return _Truncate.apply(_Graft.apply(s, [t.to(_F64)]), t.dtype)


def head(t: torch.Tensor) -> torch.Tensor | None:
    """What ``backward`` differentiates for the integer head ``t`` (None: not recorded)."""
    s = getattr(t, SHADOW, None)
    if s is None or not s.is_leaf:
        return s
    return _Graft.apply(s, [t.to(_F64)])


def involved(tensors: Sequence[torch.Tensor], res_float: bool) -> bool:
    """Whether a recorded call on ``tensors`` whose results carry no gradient still has
    one to give: a shadowed input, or an input on the tape and an integer result."""
    for t in tensors:
        if t.requires_grad:
            if not res_float:
                return True
        elif not t.is_floating_point() and getattr(t, SHADOW, None) is not None:
            return True
    return False


def stand_ins(tensors: Sequence[torch.Tensor]) -> list:
    """The inputs to compute the gradient path with: a shadowed integer tensor's shadow,
    every other tensor itself (an unshadowed integer one is a constant)."""
    out = []
    for t in tensors:
        s = None if t.is_floating_point() else shadow(t)
        out.append(t if s is None else s)
    return out


def _as_float(tensors: list) -> list:
    """Integer constants as float64: operators that want one dtype (dot, concat ...)."""
    return [t if t.is_floating_point() else t.to(_F64) for t in tensors]


def _graft(real: torch.Tensor, s) -> torch.Tensor:
    """``real`` on ``s``'s gradient path: a float result joins the tape, an integer one
    gets ``s`` as its shadow (both keep their exact values)."""
    if not isinstance(s, torch.Tensor) or not s.requires_grad or \
            not s.is_floating_point() or s.shape != real.shape:
        return real
    if real.is_floating_point():
        return _Graft.apply(s, [real])
    setattr(real, SHADOW, _Graft.apply(s, [real.to(_F64)]))
    return real


def follow(fn: Callable, tensors: Sequence[torch.Tensor], res):
    """``res`` (the result of ``fn(*tensors)``, a tensor or a sequence of them) on the
    gradient path of ``fn`` applied to the stand-ins. Where ``fn`` cannot run on them the
    gradient is zero, as MXNet's is for an integer input an operator needs integer."""
    ins = stand_ins(tensors)
    with torch.enable_grad():
        try:
            out = fn(*ins)
        except Exception:  # noqa: BLE001 - an operator that wants one dtype: try floats
            try:
                out = fn(*_as_float(ins))
            except Exception:  # noqa: BLE001 - no gradient path through this operator
                return res
    if isinstance(res, torch.Tensor):
        return _graft(res, out)
    if not isinstance(out, (tuple, list)) or len(out) != len(res):
        return res
    return type(res)(_graft(r, s) for r, s in zip(res, out))


def run_op(opdef, attrs, tensors: Sequence[torch.Tensor], res, is_train: bool = False,
           device: torch.device | None = None):
    """:func:`follow` for a registered operator. The stand-in run uses the definition's
    ``float_attrs`` (a cast to an integer type casts to float64 instead); operators with
    auxiliary states or random draws are left alone (the second run would change them),
    as are those whose integer gradient is zero in MXNet (``OpDef.int_grad``)."""
    if opdef.aux_names(attrs) or not opdef.is_deterministic(attrs):
        return res
    if not opdef.int_grad and isinstance(res, torch.Tensor):
        # recorded, with a zero gradient to each input
        return follow(lambda *ins: _zero_path(ins, res), tensors, res)
    float_attrs = opdef.float_attrs
    if float_attrs is not None:
        attrs = float_attrs(attrs) or attrs
    return follow(lambda *ins: opdef.run(attrs, ins, is_train, device), tensors, res)


def _zero_path(ins: Sequence[torch.Tensor], res: torch.Tensor) -> torch.Tensor:
    """float64 zeros shaped as ``res`` on the gradient path of ``ins``, passing back
    zeros."""
    out = torch.zeros(res.shape, dtype=_F64, device=res.device)
    for t in ins:
        if isinstance(t, torch.Tensor) and t.requires_grad:
            out = out + (t.sum() * 0).to(_F64)
    return out

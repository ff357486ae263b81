"""Optimizer update operators: sgd_update, adam_update, multi_sgd_update, lamb, lars, ...

MXNet semantics: the weight input is NOT changed unless the caller passes ``out=weight``
(every optimizer does); the state inputs (``mom``, ``mean``, ``var``, ``n``, ``weight32``,
...) are mutated in place, always. So each compute updates its states in place under
``torch.no_grad()`` and returns the new weight as a fresh tensor; ``invoke(out=weight)``
copies it back. ``clip_gradient < 0`` means no clipping (``0`` clips to zero, as in MXNet).
The ``multi_*`` operators use PyTorch's fused multi-tensor ``torch._foreach_*`` kernels.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import torch

from . import tuning
from .params import Bool, Float, FloatOrShape, Int
from .registry import OpDef, register

_NG = torch.no_grad


def _clip(g: torch.Tensor, clip: float) -> torch.Tensor:
    """Clip to [-clip, clip] when clip >= 0 (MXNet: a negative value disables clipping)."""
    return g.clamp(-clip, clip) if clip >= 0 else g


def _rescaled(grad: torch.Tensor, a: Any, clip: float | None = None) -> torch.Tensor:
    """``clip(rescale_grad * grad)``."""
    return _clip(grad * a.rescale_grad, a.clip_gradient if clip is None else clip)


def _rescaled_wd(grad: torch.Tensor, weight: torch.Tensor, a: Any) -> torch.Tensor:
    """``clip(rescale_grad * grad + wd * weight)`` (Adam, RMSProp family)."""
    return _clip(grad * a.rescale_grad + weight * a.wd, a.clip_gradient)


def _common(*extra, lr: bool = True, wd: bool = True, lazy: bool = False) -> list:
    """The parameter list shared by the update operators."""
    ps = [Float("lr")] if lr else []
    ps += list(extra)
    if wd:
        ps.append(Float("wd", 0.0))
    ps += [Float("rescale_grad", 1.0), Float("clip_gradient", -1.0)]
    if lazy:
        ps.append(Bool("lazy_update", True))
    return ps


def _reg(name: str, fn: Callable, inputs: Sequence[str], params: list, doc: str, **kw) -> None:
    register(OpDef(name, fn, inputs=list(inputs), params=params, doc=doc, **kw))


# ---------------------------------------------------------------------- SGD family
def _sgd(a, weight, grad):
    with _NG():
        return weight * (1.0 - a.lr * a.wd) - _rescaled(grad, a) * a.lr


def _sgd_mom(a, weight, grad, mom):
    with _NG():
        mom.mul_(a.momentum).add_(weight, alpha=-a.lr * a.wd).add_(_rescaled(grad, a), alpha=-a.lr)
        return weight + mom


def _mp_sgd(a, weight, grad, weight32):
    with _NG():
        g = _rescaled(grad.float(), a)
        weight32.mul_(1.0 - a.lr * a.wd).add_(g, alpha=-a.lr)
        return weight32.to(weight.dtype)


def _mp_sgd_mom(a, weight, grad, mom, weight32):
    with _NG():
        g = _rescaled(grad.float(), a)
        mom.mul_(a.momentum).add_(weight32, alpha=-a.lr * a.wd).add_(g, alpha=-a.lr)
        weight32.add_(mom)
        return weight32.to(weight.dtype)


def _nag_step(a, w: torch.Tensor, g0: torch.Tensor, mom: torch.Tensor) -> torch.Tensor:
    """NAG (MXNet 1.9.1 kernel): g = g0 + wd*w; mom = momentum*mom - lr*g.

    ``g0`` is the rescaled, clipped gradient. Returns the increment ``momentum*mom - lr*g``.
    """
    g = g0 + w * a.wd
    mom.mul_(a.momentum).add_(g, alpha=-a.lr)
    return mom * a.momentum - g * a.lr


def _nag_mom(a, weight, grad, mom):
    with _NG():
        return weight + _nag_step(a, weight, _rescaled(grad, a), mom)


def _mp_nag_mom(a, weight, grad, mom, weight32):
    with _NG():
        g = _rescaled(grad.float(), a)
        mom_old = mom.clone()
        weight32.add_(_nag_step(a, weight32, g, mom))
        # MXNet 1.9.1 quirk: the stored momentum is recomputed with the UPDATED weight32
        # in the weight-decay term (identical to the plain rule when wd == 0).
        torch.add(mom_old * a.momentum, g + weight32 * a.wd, alpha=-a.lr, out=mom)
        return weight32.to(weight.dtype)


def _signsgd(a, weight, grad):
    # MXNet: rescale_grad and clip_gradient have no effect on signSGD (only the sign counts).
    with _NG():
        return weight * (1.0 - a.lr * a.wd) - torch.sign(grad) * a.lr


def _signum(a, weight, grad, mom):
    # MXNet keeps the momentum negated: mom = m*mom - (1-m)*(wd*w + clip(rescale*grad)).
    with _NG():
        mom.mul_(a.momentum).add_(weight, alpha=-(1 - a.momentum) * a.wd)
        mom.add_(_rescaled(grad, a), alpha=-(1 - a.momentum))
        return weight * (1.0 - a.lr * a.wd_lh) + torch.sign(mom) * a.lr


_MOM = Float("momentum", 0.0)
_reg("sgd_update", _sgd, ["weight", "grad"], _common(lazy=True),
     "Update function for Stochastic Gradient Descent (SGD) optimizer.")
_reg("sgd_mom_update", _sgd_mom, ["weight", "grad", "mom"], _common(_MOM, lazy=True),
     "Momentum update function for Stochastic Gradient Descent (SGD) optimizer.")
_reg("mp_sgd_update", _mp_sgd, ["weight", "grad", "weight32"], _common(lazy=True),
     "Updater function for multi-precision sgd optimizer.")
_reg("mp_sgd_mom_update", _mp_sgd_mom, ["weight", "grad", "mom", "weight32"],
     _common(_MOM, lazy=True), "Updater function for multi-precision sgd optimizer.")
_reg("nag_mom_update", _nag_mom, ["weight", "grad", "mom"], _common(_MOM),
     "Update function for Nesterov Accelerated Gradient (NAG) optimizer.")
_reg("mp_nag_mom_update", _mp_nag_mom, ["weight", "grad", "mom", "weight32"], _common(_MOM),
     "Update function for multi-precision Nesterov Accelerated Gradient (NAG) optimizer.")
_reg("signsgd_update", _signsgd, ["weight", "grad"], _common(),
     "Update function for SignSGD optimizer.")
_reg("signum_update", _signum, ["weight", "grad", "mom"], _common(_MOM) + [Float("wd_lh", 0.0)],
     "SIGN momentUM (Signum) optimizer.")


# ---------------------------------------------------------------------- adaptive
def _adam(a, weight, grad, mean, var):
    with _NG():
        g = _rescaled_wd(grad, weight, a)
        mean.mul_(a.beta1).add_(g, alpha=1 - a.beta1)
        var.mul_(a.beta2).addcmul_(g, g, value=1 - a.beta2)
        return torch.addcdiv(weight, mean, var.sqrt().add_(a.epsilon), value=-a.lr)


def _clip_weights(w: torch.Tensor, a: Any) -> torch.Tensor:
    return w.clamp_(-a.clip_weights, a.clip_weights) if a.clip_weights >= 0 else w


def _rmsprop(a, weight, grad, n):
    with _NG():
        g = _rescaled_wd(grad, weight, a)
        n.mul_(a.gamma1).addcmul_(g, g, value=1 - a.gamma1)
        w = torch.addcdiv(weight, g, (n + a.epsilon).sqrt_(), value=-a.lr)
        return _clip_weights(w, a)


def _rmspropalex(a, weight, grad, n, g_avg, delta):
    with _NG():
        g = _rescaled_wd(grad, weight, a)
        n.mul_(a.gamma1).addcmul_(g, g, value=1 - a.gamma1)
        g_avg.mul_(a.gamma1).add_(g, alpha=1 - a.gamma1)
        denom = (n - g_avg * g_avg + a.epsilon).sqrt_()
        delta.mul_(a.gamma2).addcdiv_(g, denom, value=-a.lr)
        return _clip_weights(weight + delta, a)


def _ftrl(a, weight, grad, z, n):
    with _NG():
        g = _rescaled(grad, a)
        n_new = n + g * g
        z.add_(g - (n_new.sqrt() - n.sqrt()) * weight / a.lr)
        n.copy_(n_new)
        w = (torch.sign(z) * a.lamda1 - z) / ((n.sqrt() + a.beta) / a.lr + a.wd)
        return w * (z.abs() > a.lamda1).to(w.dtype)


def _ftml(a, weight, grad, d, v, z):
    with _NG():
        g = _clip(grad * a.rescale_grad + weight * a.wd, a.clip_grad)
        v.mul_(a.beta2).addcmul_(g, g, value=1 - a.beta2)
        d_t = ((v / (1 - a.beta2 ** a.t)).sqrt_() + a.epsilon) * ((1 - a.beta1 ** a.t) / a.lr)
        sigma = d_t - d * a.beta1
        z.mul_(a.beta1).add_(g, alpha=1 - a.beta1).sub_(sigma * weight)
        d.copy_(d_t)
        return -z / d_t


def _group_adagrad(a, weight, grad, history):
    with _NG():
        g = _rescaled(grad, a)
        sq = (g * g).reshape(g.shape[0], -1).mean(dim=1).reshape(history.shape)
        history.add_(sq)
        scale = (history + a.epsilon).sqrt_().reshape((g.shape[0],) + (1,) * (g.dim() - 1))
        return weight - g / scale * a.lr


_B1, _B2 = Float("beta1", 0.9), Float("beta2", 0.999)
_reg("adam_update", _adam, ["weight", "grad", "mean", "var"],
     _common(_B1, _B2, Float("epsilon", 1e-8), lazy=True), "Update function for Adam optimizer.")
_RMS = [Float("gamma1", 0.95), Float("epsilon", 1e-8)]
_reg("rmsprop_update", _rmsprop, ["weight", "grad", "n"],
     _common(*_RMS) + [Float("clip_weights", -1.0)], "Update function for RMSProp optimizer.")
_reg("rmspropalex_update", _rmspropalex, ["weight", "grad", "n", "g", "delta"],
     _common(_RMS[0], Float("gamma2", 0.9), _RMS[1]) + [Float("clip_weights", -1.0)],
     "Update function for RMSPropAlex optimizer.")
_reg("ftrl_update", _ftrl, ["weight", "grad", "z", "n"],
     _common(Float("lamda1", 0.01), Float("beta", 1.0)), "Update function for Ftrl optimizer.")
_reg("ftml_update", _ftml, ["weight", "grad", "d", "v", "z"],
     [Float("lr"), Float("beta1", 0.6, lower=0.0, upper=1.0),
      Float("beta2", 0.999, lower=0.0, upper=1.0), Float("epsilon", 1e-8),
      Int("t"), Float("wd", 0.0), Float("rescale_grad", 1.0), Float("clip_grad", -1.0)],
     "The FTML optimizer.")
_reg("_contrib_group_adagrad_update", _group_adagrad, ["weight", "grad", "history"],
     [Float("lr"), Float("rescale_grad", 1.0), Float("clip_gradient", -1.0),
      Float("epsilon", 1e-5)], "Update function for Group AdaGrad optimizer.")


# ---------------------------------------------------------------------- LAMB
def _lamb_g(a, w: torch.Tensor, grad: torch.Tensor, mean, var) -> torch.Tensor:
    """LAMB phase 1 on float tensors: update mean/var in place, return the direction g."""
    g = _rescaled(grad, a)
    mean.mul_(a.beta1).add_(g, alpha=1 - a.beta1)
    var.mul_(a.beta2).addcmul_(g, g, value=1 - a.beta2)
    if a.bias_correction:
        m_hat = mean / (1 - a.beta1 ** a.t)
        v_hat = var / (1 - a.beta2 ** a.t)
        return m_hat / (v_hat.sqrt() + a.epsilon) + w * a.wd
    return mean / (var.sqrt() + a.epsilon) + w * a.wd


def _lamb1(a, weight, grad, mean, var):
    with _NG():
        return _lamb_g(a, weight, grad, mean, var)


def _mp_lamb1(a, weight, grad, mean, var, weight32):
    with _NG():
        return _lamb_g(a, weight32, grad.float(), mean, var)


def _lamb_lr(a, r1: torch.Tensor, r2: torch.Tensor) -> torch.Tensor:
    """lr * r1 / r2 with r1 bounded (lower_bound, upper_bound >= 0); lr when r1 or r2 is 0."""
    if a.lower_bound >= 0:
        r1 = r1.clamp(min=a.lower_bound)
    if a.upper_bound >= 0:
        r1 = r1.clamp(max=a.upper_bound)
    valid = (r1 != 0) & (r2 != 0)
    return torch.where(valid, r1 / torch.where(valid, r2, torch.ones_like(r2)) * a.lr,
                       torch.full_like(r1, a.lr))


def _lamb2(a, weight, g, r1, r2):
    with _NG():
        return weight - _lamb_lr(a, r1, r2).to(weight.dtype) * g


def _mp_lamb2(a, weight, g, r1, r2, weight32):
    # MXNet 1.9.1: weight32 is read but NOT written back (only the returned weight changes).
    with _NG():
        return (weight32 - _lamb_lr(a, r1.float(), r2.float()) * g).to(weight.dtype)


_LAMB1 = [_B1, _B2, Float("epsilon", 1e-6), Int("t"), Bool("bias_correction", True),
          Float("wd"), Float("rescale_grad", 1.0), Float("clip_gradient", -1.0)]
_LAMB2 = [Float("lr"), Float("lower_bound", -1.0), Float("upper_bound", -1.0)]
_reg("lamb_update_phase1", _lamb1, ["weight", "grad", "mean", "var"], _LAMB1,
     "Phase I of lamb update: updates mean and var, returns g.")
_reg("mp_lamb_update_phase1", _mp_lamb1, ["weight", "grad", "mean", "var", "weight32"], _LAMB1,
     "Mixed precision version of Phase I of lamb update.")
_reg("lamb_update_phase2", _lamb2, ["weight", "g", "r1", "r2"], _LAMB2,
     "Phase II of lamb update: weight - lr * r1/r2 * g.")
_reg("mp_lamb_update_phase2", _mp_lamb2, ["weight", "g", "r1", "r2", "weight32"], _LAMB2,
     "Mixed precision version of Phase II of lamb update.")


# ---------------------------------------------------------------------- multi-tensor SGD
def _split(data: Sequence[torch.Tensor], k: int) -> list[list[torch.Tensor]]:
    """[w0, g0, w1, g1, ...] -> [[w0, w1, ...], [g0, g1, ...]] for groups of ``k``."""
    return [list(data[j::k]) for j in range(k)]


def _check_n(a, data: Sequence, per: int, extra: int = 0) -> None:
    from ..base import MXNetError
    if len(data) != a.num_weights * per + extra:
        raise MXNetError(f"expected {a.num_weights * per + extra} inputs for num_weights="
                         f"{a.num_weights}, got {len(data)}")
    if extra == 0 and (len(a.lrs) != a.num_weights or len(a.wds) != a.num_weights):
        raise MXNetError(f"lrs and wds must have num_weights={a.num_weights} entries, got "
                         f"{len(a.lrs)} and {len(a.wds)}")


def _foreach_grads(a, gs: list[torch.Tensor], to_float: bool) -> list[torch.Tensor]:
    """Fresh list of clip(rescale_grad * g) (float32 when ``to_float``)."""
    if to_float:
        gs = [g.float() for g in gs]
    gs = torch._foreach_mul(gs, a.rescale_grad)
    if a.clip_gradient >= 0:
        torch._foreach_clamp_min_(gs, -a.clip_gradient)
        torch._foreach_clamp_max_(gs, a.clip_gradient)
    return gs


def _foreach_step(a, ws: list, gs: list, moms: list | None) -> list[torch.Tensor]:
    """New weights for SGD(/momentum) over lists; ``moms`` updated in place."""
    lrs, wds = list(a.lrs), list(a.wds)
    if moms is None:
        new = torch._foreach_mul(ws, [1.0 - lr * wd for lr, wd in zip(lrs, wds)])
        torch._foreach_mul_(gs, lrs)
        torch._foreach_sub_(new, gs)
        return new
    torch._foreach_mul_(moms, a.momentum)
    torch._foreach_sub_(moms, torch._foreach_mul(ws, [lr * wd for lr, wd in zip(lrs, wds)]))
    torch._foreach_mul_(gs, lrs)
    torch._foreach_sub_(moms, gs)
    return torch._foreach_add(ws, moms)


def _multi_sgd(a, *data):
    _check_n(a, data, 2)
    with _NG():
        ws, gs = _split(data, 2)
        return tuple(_foreach_step(a, ws, _foreach_grads(a, gs, False), None))


def _multi_sgd_mom(a, *data):
    _check_n(a, data, 3)
    with _NG():
        ws, gs, moms = _split(data, 3)
        return tuple(_foreach_step(a, ws, _foreach_grads(a, gs, False), moms))


def _multi_mp_sgd(a, *data):
    _check_n(a, data, 3)
    with _NG():
        ws, gs, w32s = _split(data, 3)
        new = _foreach_step(a, w32s, _foreach_grads(a, gs, True), None)
        torch._foreach_copy_(w32s, new)
        return tuple(w32.to(w.dtype) for w, w32 in zip(ws, w32s))


def _multi_mp_sgd_mom(a, *data):
    _check_n(a, data, 4)
    with _NG():
        ws, gs, moms, w32s = _split(data, 4)
        new = _foreach_step(a, w32s, _foreach_grads(a, gs, True), moms)
        torch._foreach_copy_(w32s, new)
        return tuple(w32.to(w.dtype) for w, w32 in zip(ws, w32s))


def _multi_inputs(names: Sequence[str], preloaded: bool) -> Callable[[Any], list[str]]:
    def inputs(a) -> list[str]:
        out = [f"{nm}_{i}" for i in range(a.num_weights) for nm in names]
        return out + (["lrs", "wds"] if preloaded else [])
    return inputs


def _multi_params(momentum: bool, preloaded: bool) -> list:
    ps = [] if preloaded else [FloatOrShape("lrs"), FloatOrShape("wds")]
    if momentum:
        ps.append(Float("momentum", 0.0))
    return ps + [Float("rescale_grad", 1.0), Float("clip_gradient", -1.0),
                 Int("num_weights", 1)]


def _preloaded_step(a, data: Sequence[torch.Tensor], per: int, mp: bool, mom: bool):
    """preloaded_multi_*: lrs and wds are the last two input arrays (0-d tensor scalars)."""
    _check_n(a, data, per, extra=2)
    lrs, wds = data[-2], data[-1]
    groups = _split(data[:-2], per)
    outs = []
    with _NG():
        for i in range(a.num_weights):
            w, g = groups[0][i], groups[1][i]
            m = groups[2][i] if mom else None
            w32 = groups[-1][i] if mp else w
            lr, wd = lrs[i].to(w32.dtype), wds[i].to(w32.dtype)
            g = _rescaled(g.float() if mp else g, a)
            if m is None:
                new = w32 * (1 - lr * wd) - lr * g
            else:
                m.mul_(a.momentum).sub_(lr * wd * w32).sub_(lr * g)
                new = w32 + m
            if mp:
                w32.copy_(new)
                new = w32.to(w.dtype)
            outs.append(new)
    return tuple(outs)


def _multi_out(a) -> int:
    return a.num_weights


for _nm, _fn, _names, _mom in (
        ("multi_sgd_update", _multi_sgd, ("weight", "grad"), False),
        ("multi_sgd_mom_update", _multi_sgd_mom, ("weight", "grad", "mom"), True),
        ("multi_mp_sgd_update", _multi_mp_sgd, ("weight", "grad", "weight32"), False),
        ("multi_mp_sgd_mom_update", _multi_mp_sgd_mom, ("weight", "grad", "mom", "weight32"),
         True)):
    register(OpDef(_nm, _fn, inputs=_multi_inputs(_names, False),
                   params=_multi_params(_mom, False), num_outputs=_multi_out,
                   doc=f"{_nm}: fused update of num_weights weights (data = {', '.join(_names)}"
                       " per weight)."))
    _mp = "mp" in _nm
    _per = len(_names)
    register(OpDef(
        "preloaded_" + _nm,
        (lambda per, mp, mom: lambda a, *d: _preloaded_step(a, d, per, mp, mom))(_per, _mp, _mom),
        inputs=_multi_inputs(_names, True), params=_multi_params(_mom, True),
        num_outputs=_multi_out,
        doc=f"preloaded_{_nm}: like {_nm} with lrs and wds given as the last two arrays."))


# ---------------------------------------------------------------------- LARS / AMP helpers
def _multi_sum_sq(a, *arrays):
    from ..base import MXNetError
    if any(x.dtype != arrays[0].dtype for x in arrays):
        raise MXNetError("multi_sum_sq requires all arrays to have the same dtype, got "
                         f"{sorted({str(x.dtype) for x in arrays})}")
    with _NG():
        fl = [x if x.dtype == torch.float32 else x.float() for x in arrays]
        return torch.stack(torch._foreach_norm(fl)).square()


def _multi_lars(a, lrs, w_sum_sq, g_sum_sq, wds):
    with _NG():
        w_norm = w_sum_sq.sqrt()
        valid = (w_norm > 0) & (g_sum_sq > 0)
        lars = a.eta * w_norm / (g_sum_sq.sqrt() * a.rescale_grad + wds * w_norm + a.eps)
        return torch.where(valid, lrs * lars, lrs)


def _finite(arrays: Sequence[torch.Tensor]) -> torch.Tensor:
    """float32 (1,): 1 when every element of every array is finite, else 0."""
    flags = [torch.isfinite(x).all() for x in arrays]
    ok = torch.stack(flags).all() if flags else torch.tensor(True)
    return ok.reshape(1).to(torch.float32)


def _all_finite(a, data):
    # MXNet: with init_output=False the output is only ever set to 0 (never to 1);
    # see the report note: honouring that needs the previous ``out`` value.
    with _NG():
        return _finite([data])


def _multi_all_finite(a, *arrays):
    with _NG():
        return _finite(arrays)


def _array_inputs(a) -> list[str]:
    return [f"array_{i}" for i in range(a.num_arrays)]


register(OpDef("multi_sum_sq", _multi_sum_sq, inputs=_array_inputs,
               params=[Int("num_arrays")], key_var_num_args="num_arrays",
               doc="Compute the sums of squares of multiple arrays (float32, (num_arrays,))."))
_reg("multi_lars", _multi_lars, ["lrs", "weights_sum_sq", "grads_sum_sq", "wds"],
     [Float("eta"), Float("eps"), Float("rescale_grad", 1.0)],
     "Compute the LARS coefficients of multiple weights and grads from their sums of square.")
_reg("all_finite", _all_finite, ["data"], [Bool("init_output", True)],
     "Check if all the float numbers in the array are finite (used for AMP).")
register(OpDef("multi_all_finite", _multi_all_finite,
               inputs=_array_inputs, params=[Int("num_arrays", 1), Bool("init_output", True)],
               key_var_num_args="num_arrays",
               doc="Check if all the float numbers in all the arrays are finite (used for AMP)."))



def sgd_foreach_(weights: list, grads: list, moms: list | None, lrs: list, wds: list,
                 momentum: float, rescale_grad: float, clip_gradient) -> bool:
    """``multi_sgd(_mom)_update`` on tensor lists, in place, with ``torch._foreach_*``.

    The same arithmetic in the same order as the operators, without their fresh outputs
    and the copies back into ``out=`` (the optimizers' fast path). Returns False (and does
    nothing) for dtypes other than float32/float64.
    """
    if not all(w.dtype in (torch.float32, torch.float64) for w in weights):
        return False
    clip = clip_gradient is not None and clip_gradient >= 0
    if not clip and len(set(lrs)) == 1 and len(set(wds)) == 1:
        _sgd_foreach_uniform(weights, grads, moms, lrs[0], wds[0], momentum, rescale_grad)
        return True
    with torch.no_grad():
        gs = torch._foreach_mul(grads, rescale_grad)
        if clip_gradient is not None and clip_gradient >= 0:
            torch._foreach_clamp_min_(gs, -clip_gradient)
            torch._foreach_clamp_max_(gs, clip_gradient)
        torch._foreach_mul_(gs, lrs)
        decay = any(wd != 0 for wd in wds)
        if momentum > 0:
            torch._foreach_mul_(moms, momentum)
            if decay:
                torch._foreach_sub_(moms, torch._foreach_mul(
                    weights, [lr * wd for lr, wd in zip(lrs, wds)]))
            torch._foreach_sub_(moms, gs)
            torch._foreach_add_(weights, moms)
        else:
            if decay:
                torch._foreach_mul_(weights, [1.0 - lr * wd for lr, wd in zip(lrs, wds)])
            torch._foreach_sub_(weights, gs)
    return True


_FUSED_SGD = getattr(torch, "_fused_sgd_", None)
_increment_version = getattr(torch.autograd.graph, "increment_version", None)
if _increment_version is None:
    _FUSED_SGD = None


def _fusable(w: torch.Tensor, g: torch.Tensor, m: torch.Tensor | None) -> bool:
    # torch's fused kernel reads raw memory: it checks neither shapes nor strides.
    return (w.dtype == torch.float32 and w.device.type == "cpu" and w.is_contiguous()
            and g.dtype == w.dtype and g.device == w.device and g.shape == w.shape
            and (m is None or (m.dtype == w.dtype and m.device == w.device
                               and m.shape == w.shape and m.is_contiguous())))


def _sgd_fused(weights, grads, moms, lr, wd, momentum, rescale_grad) -> list[int]:
    """MXNet's SGD step in ONE pass over each float32 CPU weight (torch's fused SGD kernel).

    The kernel computes (``maximize``) ``d = -g + wd_t * w``; ``buf = momentum * buf +
    (1 - dampening) * d``; ``w -= lr_t * buf`` (``buf`` is ``d`` without momentum). With
    ``dampening = 1 - lr * rescale_grad``, ``wd_t = -wd / rescale_grad`` and ``lr_t = -1``
    (``-lr * rescale_grad`` without momentum) that is MXNet's ``mom = momentum * mom -
    lr * wd * w - lr * rescale_grad * g; w += mom`` (``w -= lr * (rescale_grad * g + wd *
    w)``), up to the order of roundings. The foreach form reads and writes every weight
    and state three or four times, and on CPU each pass over a large tensor is one more
    OpenMP region. Gradients are only read (a strided one is read through a dense copy).

    Returns the positions it left to the foreach path: every one where the kernel is
    missing or ``rescale_grad`` is 0, else those whose weight or state is not a dense
    float32 CPU tensor of the weight's shape.
    """
    if _FUSED_SGD is None or not rescale_grad:
        return list(range(len(weights)))
    fw, fg, fm, rest = [], [], [], []
    for i, (w, g) in enumerate(zip(weights, grads)):
        m = moms[i] if momentum > 0 else None
        if _fusable(w, g, m):
            fw.append(w)
            fg.append(g if g.is_contiguous() else g.contiguous())
            fm.append(m)
        else:
            rest.append(i)
    if not fw:
        return rest
    scale = lr * rescale_grad
    threads = tuning.single(tuning.passes(fw))
    try:
        with torch.no_grad():
            if momentum > 0:
                _FUSED_SGD(fw, fg, fm, weight_decay=-wd / rescale_grad, momentum=momentum,
                           lr=-1.0, dampening=1.0 - scale, nesterov=False, maximize=True,
                           is_first_step=False)
            else:
                _FUSED_SGD(fw, fg, [], weight_decay=-wd / rescale_grad, momentum=0.0,
                           lr=-scale, dampening=0.0, nesterov=False, maximize=True,
                           is_first_step=False)
    except TypeError:   # another torch's signature: refused before anything is written
        return list(range(len(weights)))
    finally:
        tuning.restore(threads)
    # the kernel does not count its writes: bump the version counters that caches and
    # autograd rely on, as every other in-place operator does
    _increment_version(fw)
    if momentum > 0:
        _increment_version(fm)
    return rest


def _sgd_foreach_uniform(weights, grads, moms, lr, wd, momentum, rescale_grad) -> None:
    """The common case (one lr and wd, no clipping): no temporaries, scalar alphas."""
    rest = _sgd_fused(weights, grads, moms, lr, wd, momentum, rescale_grad)
    if not rest:
        return
    if len(rest) < len(weights):
        weights, grads = [weights[i] for i in rest], [grads[i] for i in rest]
        moms = [moms[i] for i in rest] if momentum > 0 else moms
    with torch.no_grad():
        if momentum > 0:
            torch._foreach_mul_(moms, momentum)
            if wd:
                torch._foreach_add_(moms, weights, alpha=-lr * wd)
            torch._foreach_add_(moms, grads, alpha=-lr * rescale_grad)
            torch._foreach_add_(weights, moms)
        else:
            if wd:
                torch._foreach_mul_(weights, 1.0 - lr * wd)
            torch._foreach_add_(weights, grads, alpha=-lr * rescale_grad)


# ---------------------------------------------------------------------- AdamW (contrib)
def _adamw_scale(rescale_grad: torch.Tensor) -> float | None:
    """The gradient scale held in the one-element ``rescale_grad`` array, or None when it
    is NaN, infinite or zero: MXNet's AdamW kernels then skip the update."""
    s = float(rescale_grad.reshape(-1)[0])
    return s if math.isfinite(s) and s != 0 else None


def _adamw_step(a, w, g, mean, var, scale: float, lr: float, wd: float, eta: float):
    """One AdamW step: ``mean``/``var`` updated in place; returns the new weight."""
    g = _clip(g * scale, a.clip_gradient)
    mean.mul_(a.beta1).add_(g, alpha=1 - a.beta1)
    var.mul_(a.beta2).addcmul_(g, g, value=1 - a.beta2)
    return w - eta * (lr * mean / (var.sqrt() + a.epsilon) + wd * w)


def _adamw(a, weight, grad, mean, var, rescale_grad):
    with _NG():
        s = _adamw_scale(rescale_grad)
        if s is None:
            return weight.clone()
        # MXNet: this kernel rescales and clips the gradient in place (the multi-weight
        # and multi-precision kernels leave it as it is)
        grad.copy_(_clip(grad * s, a.clip_gradient))
        return _adamw_step(a, weight, grad, mean, var, 1.0, a.lr, a.wd, a.eta)


def _mp_adamw(a, weight, grad, mean, var, weight32, rescale_grad):
    with _NG():
        s = _adamw_scale(rescale_grad)
        if s is None:
            return weight.clone()
        weight32.copy_(_adamw_step(a, weight32, grad.float(), mean, var, s, a.lr, a.wd, a.eta))
        return weight32.to(weight.dtype)


def _multi_adamw_step(a, data: Sequence[torch.Tensor], mp: bool) -> tuple:
    """``_multi_(mp_)adamw_update``: data = (weight, grad, mean, var[, weight32]) per
    weight, then ``rescale_grad``."""
    per = 5 if mp else 4
    _check_n(a, data, per, extra=1)
    groups = _split(data[:-1], per)
    with _NG():
        s = _adamw_scale(data[-1])
        if s is None:
            return tuple(w.clone() for w in groups[0])
        outs = []
        for i, (w, g, mean, var) in enumerate(zip(*groups[:4])):
            w32 = groups[4][i] if mp else w
            new = _adamw_step(a, w32, g.float() if mp else g, mean, var, s, a.lrs[i],
                              a.wds[i], a.etas[i])
            if mp:
                w32.copy_(new)
                new = w32.to(w.dtype)
            outs.append(new)
        return tuple(outs)


_ADAMW = [_B1, _B2, Float("epsilon", 1e-8)]
_reg("_adamw_update", _adamw, ["weight", "grad", "mean", "var", "rescale_grad"],
     [Float("lr")] + _ADAMW + [Float("wd", 0.0), Float("eta"), Float("clip_gradient", -1.0)],
     "Update function for AdamW optimizer (decoupled weight decay); skipped when\n"
     "rescale_grad is NaN, Inf or 0.")
_reg("_mp_adamw_update", _mp_adamw,
     ["weight", "grad", "mean", "var", "weight32", "rescale_grad"],
     [Float("lr")] + _ADAMW + [Float("wd", 0.0), Float("eta"), Float("clip_gradient", -1.0)],
     "Update function for multi-precision AdamW optimizer.")
for _nm, _mp_flag, _names in (
        ("_multi_adamw_update", False, ("weight", "grad", "mean", "var")),
        ("_multi_mp_adamw_update", True, ("weight", "grad", "mean", "var", "weight32"))):
    register(OpDef(
        _nm, (lambda mp: lambda a, *d: _multi_adamw_step(a, d, mp))(_mp_flag),
        inputs=(lambda f: lambda a: f(a) + ["rescale_grad"])(_multi_inputs(_names, False)),
        params=[FloatOrShape("lrs"), FloatOrShape("wds"), FloatOrShape("etas")] + _ADAMW
        + [Float("clip_gradient", -1.0), Int("num_weights", 1)],
        num_outputs=_multi_out,
        doc=f"{_nm}: AdamW update of num_weights weights (data = {', '.join(_names)} per "
            "weight, then rescale_grad)."))

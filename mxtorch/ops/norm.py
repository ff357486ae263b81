"""Normalization operators: BatchNorm, LayerNorm, InstanceNorm, GroupNorm, L2Normalization, LRN.

Every compute is one fused torch kernel (``native_batch_norm``, ``native_layer_norm``,
``native_group_norm``, ``instance_norm``, ``local_response_norm``) plus the layout moves
MXNet's ``axis`` attributes need.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ..base import MXNetError
from . import tuning
from .params import Bool, Enum, Float, Int, OptFloat, Str
from .registry import OpDef, register

__all__: list[str] = []

Shape = tuple | None


# ---------------------------------------------------------------------------- helpers
def _norm_axis(op: str, axis: int, ndim: int) -> int:
    """Normalize a possibly negative axis, raising MXNetError when out of range."""
    if not -ndim <= axis < ndim:
        raise MXNetError(f"Operator {op}: axis {axis} is out of range for an input with "
                         f"{ndim} dimensions")
    return axis % ndim


def _param_shapes(op: str, in_shapes: list, names: list[str], vec: Shape) -> list:
    """Fill the per-channel parameter inputs (1..n) with ``vec``, checking given shapes."""
    out = list(in_shapes)
    if vec is None:
        return out
    for i in range(1, len(out)):
        given = out[i]
        if given is not None and 0 not in given and tuple(given) != tuple(vec):
            raise MXNetError(f"Operator {op}: input '{names[i]}' has shape {tuple(given)} "
                             f"but {tuple(vec)} is expected for data shape {tuple(out[0])}")
        out[i] = tuple(vec)
    return out


def _check_vec(op: str, name: str, t: torch.Tensor, size: int) -> None:
    """Raise MXNetError when a parameter vector does not have shape (size,)."""
    if tuple(t.shape) != (size,):
        raise MXNetError(f"Operator {op}: {name} must have shape ({size},), got "
                         f"{tuple(t.shape)}")


class _FixedOnes(torch.autograd.Function):
    """Ones shaped like gamma, whose gradient to gamma is zero (``fix_gamma=True``)."""

    @staticmethod
    def forward(ctx: Any, gamma: torch.Tensor) -> torch.Tensor:
        return torch.ones_like(gamma)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(grad)


class _MovingUpdate(torch.autograd.Function):
    """Identity on BatchNorm's output; its backward folds batch stats into the moving ones."""

    @staticmethod
    def forward(ctx: Any, out: torch.Tensor, mean: torch.Tensor, invstd: torch.Tensor,
                moving_mean: torch.Tensor, moving_var: torch.Tensor, momentum: float,
                eps: float) -> torch.Tensor:
        ctx.stats = (mean, invstd, moving_mean, moving_var, momentum, eps)
        return out.view_as(out)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor):
        mean, invstd, mm, mv, momentum, eps = ctx.stats
        with torch.no_grad():
            var = invstd.double().pow(-2).sub_(eps)
            mm.mul_(momentum).add_(mean.to(mm.dtype), alpha=1.0 - momentum)
            mv.mul_(momentum).add_(var.to(mv.dtype), alpha=1.0 - momentum)
        return grad, None, None, None, None, None, None


class _InferenceBatchNorm(torch.autograd.Function):
    """BatchNorm with fixed statistics whose gradient is the batch-statistics formula.

    # MXNet: an inference-mode forward followed by a (default, training-mode) backward
    # differentiates as if ``moving_mean``/``1/sqrt(moving_var+eps)`` were batch statistics.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                mean: torch.Tensor, var: torch.Tensor, eps: float) -> torch.Tensor:
        invstd = torch.rsqrt(var.float() + eps)
        ctx.save_for_backward(x, weight, mean.float().clone(), invstd)
        ctx.eps = eps
        return F.batch_norm(x, mean, var, weight, bias, False, 0.0, eps)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor):
        x, weight, mean, invstd = ctx.saved_tensors
        need = [bool(n) for n in ctx.needs_input_grad[:3]]
        dx, dw, db = torch.ops.aten.native_batch_norm_backward(
            grad, x, weight, None, None, mean, invstd, True, ctx.eps, need)
        return dx, dw, db, None, None, None


# ---------------------------------------------------------------------------- BatchNorm
def _batch_norm(attrs: Any, data: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
                moving_mean: torch.Tensor, moving_var: torch.Tensor, *, is_train: bool):
    """MXNet BatchNorm (native CPU semantics).

    # MXNet: the moving statistics are updated in the BACKWARD pass (a training forward
    # alone leaves them untouched), with the biased batch variance; the third output is
    # the inverse standard deviation, not the variance.
    """
    if data.dim() < 1:
        raise MXNetError("Operator BatchNorm: data must have at least one dimension")
    axis = _norm_axis("BatchNorm", getattr(attrs, "axis", 1), data.dim())
    chans = data.shape[axis]
    for name, t in (("gamma", gamma), ("beta", beta), ("moving_mean", moving_mean),
                    ("moving_var", moving_var)):
        _check_vec("BatchNorm", name, t, chans)
    x = data.movedim(axis, 1) if axis != 1 else data
    if x.dim() == 1:
        x = x.unsqueeze(0)
    # MXNet: fix_gamma treats gamma as 1 and gives it a zero gradient.
    weight = _FixedOnes.apply(gamma) if attrs.fix_gamma else gamma
    eps = attrs.eps
    if attrs.use_global_stats:
        out = F.batch_norm(x, moving_mean, moving_var, weight, beta, False, 0.0, eps)
        mean, invstd = moving_mean, torch.rsqrt(moving_var + eps)
    elif not is_train:
        if torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad
                                        or beta.requires_grad):
            out = _InferenceBatchNorm.apply(x, weight, beta, moving_mean, moving_var, eps)
        else:
            out = F.batch_norm(x, moving_mean, moving_var, weight, beta, False, 0.0, eps)
        mean, invstd = moving_mean, torch.rsqrt(moving_var + eps)
    else:
        out, mean, invstd = torch.native_batch_norm(x, weight, beta, None, None, True,
                                                    0.0, eps)
        if torch.is_grad_enabled() and out.requires_grad:
            out = _MovingUpdate.apply(out, mean.detach(), invstd.detach(), moving_mean,
                                      moving_var, float(attrs.momentum), float(eps))
    out = out.reshape(data.shape) if data.dim() == 1 else out
    out = out.movedim(1, axis) if axis != 1 and data.dim() > 1 else out
    if not attrs.output_mean_var:
        return out
    mean = mean.detach().to(moving_mean.dtype, copy=mean is moving_mean)
    return out, mean, invstd.detach().to(moving_var.dtype)


def _bn_infer_shape(attrs: Any, in_shapes: list):
    """gamma, beta, moving_mean and moving_var are (C,) with C the data's ``axis`` size."""
    data = in_shapes[0]
    if data is None:
        return in_shapes, None
    axis = _norm_axis("BatchNorm", getattr(attrs, "axis", 1), len(data))
    vec = (data[axis],) if data[axis] else None
    names = ["data", "gamma", "beta", "moving_mean", "moving_var"]
    filled = _param_shapes("BatchNorm", in_shapes, names, vec)
    outs = [tuple(data)] + ([vec, vec] if attrs.output_mean_var else [])
    return filled, outs


def _bn_infer_type(attrs: Any, in_types: list):
    """MXNet: float16 data keeps float32 parameters and statistics."""
    data = in_types[0] or next((t for t in in_types if t is not None), None)
    if data is None:
        return in_types, [None] * (3 if attrs.output_mean_var else 1)
    param = "float32" if data in ("float16", "bfloat16") else data
    types = [data] + [t if t is not None else param for t in in_types[1:]]
    return types, [data] + ([param, param] if attrs.output_mean_var else [])


_BN_COMMON = [
    Float("momentum", 0.9, "Momentum for moving average"),
    Bool("fix_gamma", True, "Fix gamma while training"),
    Bool("use_global_stats", False, "Use the moving statistics instead of batch ones"),
    Bool("output_mean_var", False, "Output the mean and inverse std"),
]

register(OpDef(
    "BatchNorm", _batch_norm, work=tuning.elements,
    params=[Float("eps", 1e-3, "Epsilon to prevent div 0"), *_BN_COMMON,
            Int("axis", 1, "The channel axis"),
            Bool("cudnn_off", False, "Do not select CUDNN operator (ignored)"),
            OptFloat("min_calib_range"), OptFloat("max_calib_range")],
    inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
    aux=("moving_mean", "moving_var"), train_aware=True,
    num_outputs=lambda a: 3 if a.output_mean_var else 1,
    output_names=["output", "mean", "var"], total_outputs=3,
    infer_shape=_bn_infer_shape, infer_type=_bn_infer_type,
    channels_last=lambda a: "keep" if a.axis in (1, -3) else None,
    fusion_role=lambda a: "batchnorm" if a.axis in (1, -3) else None,
    doc="""Batch normalization.

Normalizes ``data`` over every axis but ``axis`` with the batch statistics in training
and the moving statistics otherwise, then scales by ``gamma`` and shifts by ``beta``.

Parameters
----------
data : NDArray
    Input data.
gamma, beta : NDArray
    Per-channel scale and shift.
moving_mean, moving_var : NDArray
    Running statistics (auxiliary states, updated in place during training).
eps : float, default 1e-3
momentum : float, default 0.9
fix_gamma : bool, default True
use_global_stats : bool, default False
output_mean_var : bool, default False
axis : int, default 1
"""))

def _batch_norm_v1(attrs: Any, data: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
                   moving_mean: torch.Tensor, moving_var: torch.Tensor, *, is_train: bool):
    """BatchNorm_v1: BatchNorm on 2-D or 4-D data whose third output is the batch
    variance."""
    if data.dim() not in (2, 4):
        # MXNet: the legacy kernel views 2-D data as (batch, channel, 1, 1) and takes
        # (batch, channel, height, width); any other rank fails in its kernel
        raise MXNetError(f"Operator BatchNorm_v1: data must be 2-D or 4-D (batch, channel"
                         f"[, height, width]), got shape {tuple(data.shape)}")
    return _sync_batch_norm(attrs, data, gamma, beta, moving_mean, moving_var,
                            is_train=is_train)


register(OpDef(
    "BatchNorm_v1", _batch_norm_v1,
    params=[Float("eps", 1e-3, "Epsilon to prevent div 0"), *_BN_COMMON],
    inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
    aux=("moving_mean", "moving_var"), train_aware=True,
    num_outputs=lambda a: 3 if a.output_mean_var else 1,
    output_names=["output", "mean", "var"], total_outputs=3,
    infer_shape=_bn_infer_shape, infer_type=_bn_infer_type,
    doc="Batch normalization, the legacy operator (channel axis 1)."))


def _sync_batch_norm(attrs: Any, data: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
                     moving_mean: torch.Tensor, moving_var: torch.Tensor, *, is_train: bool):
    """SyncBatchNorm in one process: BatchNorm over channel axis 1.

    # MXNet: unlike BatchNorm, the third output is the batch VARIANCE, not 1/std (as in
    # BatchNorm_v1).
    """
    out = _batch_norm(attrs, data, gamma, beta, moving_mean, moving_var, is_train=is_train)
    if not attrs.output_mean_var:
        return out
    out, mean, invstd = out
    var = invstd.double().pow(-2).sub_(attrs.eps).to(invstd.dtype)
    return out, mean, var


register(OpDef(
    "_contrib_SyncBatchNorm", _sync_batch_norm,
    params=[Float("eps", 1e-3, "Epsilon to prevent div 0"), *_BN_COMMON,
            Int("ndev", 1, "The count of GPU devices"),
            Str("key", doc="Hash key for synchronization: the same for one layer on every "
                "device")],
    inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
    aux=("moving_mean", "moving_var"), train_aware=True,
    num_outputs=lambda a: 3 if a.output_mean_var else 1,
    output_names=["output", "mean", "var"], total_outputs=3,
    infer_shape=_bn_infer_shape, infer_type=_bn_infer_type,
    doc="""Batch normalization with statistics synchronized across devices.

mxtorch runs a layer's devices in one process step by step, so the statistics are the
batch's, exactly as BatchNorm with ``axis=1``; ``ndev`` and ``key`` are kept for
compatibility. With ``output_mean_var`` the extra outputs are the batch mean and variance.

Parameters
----------
data : NDArray
    ``(batch, channel, ...)``.
gamma, beta : NDArray
moving_mean, moving_var : NDArray
    Auxiliary states, updated in the backward pass of a training step.
eps : float, default 1e-3
momentum : float, default 0.9
fix_gamma : bool, default True
use_global_stats : bool, default False
output_mean_var : bool, default False
ndev : int, default 1
key : str
"""))


# ---------------------------------------------------------------------------- LayerNorm
_WIDER = {torch.float32: torch.float64, torch.float16: torch.float32,
          torch.bfloat16: torch.float32}


class _LayerNorm(torch.autograd.Function):
    """native_layer_norm over the last axis, with gamma/beta gradients summed in a wider type.

    # MXNet: its sum reducer is compensated (Kahan), so the gamma/beta gradients, sums over
    # every row of the batch, stay exact to the last bits; a plain float32 sum over
    # thousands of rows does not.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
                eps: float):
        out, mean, rstd = torch.native_layer_norm(x, (x.shape[-1],), gamma, beta, eps)
        ctx.save_for_backward(x, gamma, mean, rstd)
        ctx.mark_non_differentiable(mean, rstd)
        return out, mean, rstd

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad: torch.Tensor, _mean: Any, _rstd: Any):
        x, gamma, mean, rstd = ctx.saved_tensors
        need_x, need_g, need_b = ctx.needs_input_grad[:3]
        dx = None
        if need_x:
            dx = torch.ops.aten.native_layer_norm_backward(
                grad, x, (x.shape[-1],), mean, rstd, gamma, None, [True, False, False])[0]
        acc = _WIDER.get(grad.dtype, grad.dtype)
        g2 = grad.reshape(-1, x.shape[-1]).to(acc)
        dgamma = dbeta = None
        if need_g:
            xhat = (x.to(acc) - mean.to(acc)) * rstd.to(acc)
            dgamma = (g2 * xhat.reshape(g2.shape)).sum(0).to(gamma.dtype)
        if need_b:
            dbeta = g2.sum(0).to(gamma.dtype)
        return dx, dgamma, dbeta, None


def _layer_norm(attrs: Any, data: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor):
    """Normalize over ``axis`` (biased variance); optional outputs mean and std."""
    axis = _norm_axis("LayerNorm", attrs.axis, data.dim())
    _check_vec("LayerNorm", "gamma", gamma, data.shape[axis])
    _check_vec("LayerNorm", "beta", beta, data.shape[axis])
    last = axis == data.dim() - 1
    x = data if last else data.movedim(axis, -1)
    if torch.is_grad_enabled() and (gamma.requires_grad or beta.requires_grad):
        out, mean, rstd = _LayerNorm.apply(x, gamma, beta, attrs.eps)
    else:
        out, mean, rstd = torch.native_layer_norm(x, (x.shape[-1],), gamma, beta, attrs.eps)
    if not last:
        out = out.movedim(-1, axis)
    if not attrs.output_mean_var:
        return out
    mean, std = mean.detach(), rstd.detach().reciprocal()
    if not last:
        mean, std = mean.movedim(-1, axis), std.movedim(-1, axis)
    return out, mean.to(data.dtype), std.to(data.dtype)


def _axis_vec_infer(op: str):
    """Shape inference for LayerNorm: gamma/beta are (data.shape[axis],)."""
    def infer(attrs: Any, in_shapes: list):
        data = in_shapes[0]
        if data is None:
            return in_shapes, None
        axis = _norm_axis(op, attrs.axis, len(data))
        vec = (data[axis],) if data[axis] else None
        filled = _param_shapes(op, in_shapes, ["data", "gamma", "beta"], vec)
        if not attrs.output_mean_var:
            return filled, [tuple(data)]
        red = tuple(1 if i == axis else d for i, d in enumerate(data))
        return filled, [tuple(data), red, red]
    return infer


register(OpDef(
    "LayerNorm", _layer_norm, work=tuning.elements,
    params=[Int("axis", -1, "The axis to normalize over"),
            Float("eps", 1e-5, "Epsilon to prevent division by 0"),
            Bool("output_mean_var", False, "Output the mean and std")],
    inputs=("data", "gamma", "beta"),
    num_outputs=lambda a: 3 if a.output_mean_var else 1,
    output_names=["output", "mean", "std"], total_outputs=3,
    infer_shape=_axis_vec_infer("LayerNorm"),
    doc="""Layer normalization over one axis.

Parameters
----------
data : NDArray
gamma, beta : NDArray
    Scale and shift, of shape ``(data.shape[axis],)``.
axis : int, default -1
eps : float, default 1e-5
output_mean_var : bool, default False
    Also return the mean and the standard deviation (``axis`` kept as size 1).
"""))


# ---------------------------------------------------------------------------- InstanceNorm
def _instance_norm(attrs: Any, data: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor):
    """Normalize each (instance, channel) over the spatial axes."""
    if data.dim() < 3:
        raise MXNetError(f"Operator InstanceNorm: data must have at least 3 dimensions, got "
                         f"shape {tuple(data.shape)}")
    _check_vec("InstanceNorm", "gamma", gamma, data.shape[1])
    _check_vec("InstanceNorm", "beta", beta, data.shape[1])
    # MXNet: one spatial element normalizes to 0 (output beta); F.instance_norm refuses it
    # in training, group norm with one group per channel computes it.
    n, c = data.shape[0], data.shape[1]
    x = data.reshape(n, c, -1).contiguous()   # a strided view (axis != 1) is not accepted
    out = torch.native_group_norm(x, gamma, beta, n, c, x.shape[2], c, attrs.eps)[0]
    return out.reshape(data.shape)


def _channel_vec_infer(attrs: Any, in_shapes: list):
    """InstanceNorm: gamma/beta are (C,) with C = data.shape[1]."""
    data = in_shapes[0]
    if data is None or len(data) < 2:
        return in_shapes, None
    vec = (data[1],) if data[1] else None
    return _param_shapes("InstanceNorm", in_shapes, ["data", "gamma", "beta"], vec), \
        [tuple(data)]


register(OpDef(
    "InstanceNorm", _instance_norm,
    params=[Float("eps", 1e-3, "Epsilon to prevent division by 0")],
    inputs=("data", "gamma", "beta"), infer_shape=_channel_vec_infer,
    output_names=["output", "mean", "var"], total_outputs=3,
    doc="""Instance normalization: each channel of each instance over its spatial axes.

Parameters
----------
data : NDArray
    ``(batch, channel, spatial...)``, at least 3-D.
gamma, beta : NDArray
    ``(channel,)`` scale and shift.
eps : float, default 1e-3
"""))


# ---------------------------------------------------------------------------- GroupNorm
def _group_norm(attrs: Any, data: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor):
    """Normalize channel groups; gamma/beta are per GROUP in MXNet 1.9.1."""
    groups = attrs.num_groups
    if data.dim() < 2 or groups <= 0 or data.shape[1] % groups:
        raise MXNetError(f"Operator GroupNorm: the channel axis of data {tuple(data.shape)} "
                         f"must be divisible by num_groups={groups}")
    # MXNet: one gamma/beta per group (shape (num_groups,)), not per channel.
    _check_vec("GroupNorm", "gamma", gamma, groups)
    _check_vec("GroupNorm", "beta", beta, groups)
    n, c = data.shape[0], data.shape[1]
    per = c // groups
    x = data.reshape(n, c, -1)
    weight = gamma.repeat_interleave(per)
    bias = beta.repeat_interleave(per)
    out, mean, rstd = torch.native_group_norm(x, weight, bias, n, c, x.shape[2], groups,
                                              attrs.eps)
    out = out.reshape(data.shape)
    if not attrs.output_mean_var:
        return out
    return out, mean.detach().to(data.dtype), rstd.detach().reciprocal().to(data.dtype)


def _group_infer(attrs: Any, in_shapes: list):
    """GroupNorm: gamma/beta are (num_groups,); mean/std are (N, num_groups)."""
    data = in_shapes[0]
    vec = (attrs.num_groups,)
    filled = _param_shapes("GroupNorm", in_shapes, ["data", "gamma", "beta"], vec)
    if data is None:
        return filled, None
    if not attrs.output_mean_var:
        return filled, [tuple(data)]
    return filled, [tuple(data), (data[0], attrs.num_groups), (data[0], attrs.num_groups)]


register(OpDef(
    "GroupNorm", _group_norm,
    params=[Int("num_groups", 1, "Total number of groups"),
            Float("eps", 1e-5, "Epsilon to prevent division by 0"),
            Bool("output_mean_var", False, "Output the mean and std")],
    inputs=("data", "gamma", "beta"),
    num_outputs=lambda a: 3 if a.output_mean_var else 1,
    output_names=["output", "mean", "std"], total_outputs=3, infer_shape=_group_infer,
    doc="""Group normalization.

Parameters
----------
data : NDArray
    ``(batch, channel, ...)`` with ``channel`` divisible by ``num_groups``.
gamma, beta : NDArray
    ``(num_groups,)``: in MXNet 1.9.1 one scale and shift per group.
num_groups : int, default 1
eps : float, default 1e-5
output_mean_var : bool, default False
"""))


# ---------------------------------------------------------------------------- L2Normalization
_L2_AXES = {"instance": 1, "channel": None, "spatial": 2}


def _l2_normalization(attrs: Any, data: torch.Tensor):
    """data / sqrt(sum(data**2) + eps) over the axes ``mode`` selects."""
    if attrs.mode == "channel":
        if data.dim() < 2:
            raise MXNetError("Operator L2Normalization: mode 'channel' needs at least 2-D data")
        dims: tuple = (1,)
    else:
        start = _L2_AXES[attrs.mode]
        if data.dim() <= start:
            raise MXNetError(f"Operator L2Normalization: mode '{attrs.mode}' needs at least "
                             f"{start + 1}-D data, got shape {tuple(data.shape)}")
        dims = tuple(range(start, data.dim()))
    norm = torch.sqrt(data.square().sum(dim=dims, keepdim=True) + attrs.eps)
    return data / norm


register(OpDef(
    "L2Normalization", _l2_normalization,
    params=[Float("eps", 1e-10, "A small constant for numerical stability"),
            Enum("mode", ("channel", "instance", "spatial"), "instance",
                 "Which axes to compute the L2 norm over")],
    total_outputs=2,
    doc="""L2-normalize ``data`` per instance, per channel position or per spatial map.

Parameters
----------
data : NDArray
eps : float, default 1e-10
mode : {'instance', 'channel', 'spatial'}, default 'instance'
"""))


# ---------------------------------------------------------------------------- LRN
def _lrn(attrs: Any, data: torch.Tensor):
    """Local response normalization across channels."""
    if data.dim() < 3:
        raise MXNetError(f"Operator LRN: data must have at least 3 dimensions, got shape "
                         f"{tuple(data.shape)}")
    if attrs.nsize <= 0:
        raise MXNetError(f"Operator LRN: nsize must be positive, got {attrs.nsize}")
    return F.local_response_norm(data, attrs.nsize, alpha=attrs.alpha, beta=attrs.beta,
                                 k=attrs.knorm)


register(OpDef(
    "LRN", _lrn,
    params=[Float("alpha", 1e-4, "The variance scaling parameter"),
            Float("beta", 0.75, "The power parameter"),
            Float("knorm", 2.0, "The parameter k"),
            Int("nsize", doc="Normalization window width in channels")],
    output_names=["output", "tmp_norm"], total_outputs=2,
    doc="""Local response normalization across channels.

``out = x / (knorm + alpha / nsize * sum_window(x ** 2)) ** beta``

Parameters
----------
data : NDArray
    ``(batch, channel, ...)``.
alpha : float, default 1e-4
beta : float, default 0.75
knorm : float, default 2
nsize : int
    Window width in channels (required).
"""))

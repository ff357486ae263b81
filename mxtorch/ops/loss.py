"""Loss-output and gradient-control operators whose gradients are MXNet's, not the math's.

SoftmaxOutput, the *RegressionOutput family, SVMOutput, MakeLoss/make_loss, BlockGrad,
IdentityAttachKLSparseReg, softmax_cross_entropy and CTCLoss. Where MXNet's backward
ignores the head gradient (loss layers), the compute goes through a
``torch.autograd.Function`` so the gradient rule lives next to the forward.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ..base import MXNetError
from . import tuning
from .params import Bool, Enum, Float
from .registry import OpDef, register, same_type_infer

__all__: list[str] = []

_NORMS = ("batch", "null", "valid")


def _recording(*tensors: torch.Tensor) -> bool:
    """True when autograd will record through these tensors."""
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


def _label_grad(ctx: Any, label: torch.Tensor) -> torch.Tensor | None:
    """MXNet gives the label input a zero gradient."""
    return torch.zeros_like(label) if ctx.needs_input_grad[1] else None


# ---------------------------------------------------------------------- SoftmaxOutput
def _softmax_label_shape(attrs: Any, dshape: tuple) -> list[tuple]:
    """The label shapes MXNet accepts for a data shape (the first is the inferred one)."""
    if not attrs.multi_output:
        return [tuple(dshape[:-1])]
    n = dshape[0]
    rest = 1
    for d in dshape[2:]:
        rest *= d
    return [(n, rest), (n, *dshape[2:]), (n, 1, *dshape[2:])]


def _check_softmax_label(attrs: Any, dshape: tuple, lshape: tuple) -> None:
    """Raise MXNetError when the label shape does not fit the data shape."""
    if len(dshape) < 2 and attrs.multi_output:
        raise MXNetError(f"Operator SoftmaxOutput: multi_output needs data with at least 2 "
                         f"dimensions, got data shape {dshape}")
    allowed = _softmax_label_shape(attrs, dshape)
    if tuple(lshape) not in allowed and tuple(lshape) != tuple(dshape):
        expect = " or ".join(str(s) for s in dict.fromkeys(allowed))
        raise MXNetError(f"Operator SoftmaxOutput: label shape {tuple(lshape)} is inconsistent "
                         f"with data shape {tuple(dshape)}; expected {expect}")


def _softmax_forward(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """Softmax over the class axis MXNet uses for these attributes."""
    if attrs.multi_output:
        n, k = data.shape[0], data.shape[1]
        return torch.softmax(data.reshape(n, k, -1), dim=1).reshape(data.shape)
    if attrs.preserve_shape:
        return torch.softmax(data, dim=-1)
    # MXNet: without preserve_shape the data is flattened to (batch, -1).
    n = data.shape[0] if data.dim() > 0 else 1
    return torch.softmax(data.reshape(n, -1), dim=1).reshape(data.shape)


def _softmax_grad_layout(attrs: Any, out: torch.Tensor,
                         label: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """View output as (rows, classes, cols) and label as (rows, cols)."""
    if attrs.multi_output:
        n, k = out.shape[0], out.shape[1]
        return out.reshape(n, k, -1), label.reshape(n, -1)
    if attrs.preserve_shape:
        out2 = out.reshape(-1, out.shape[-1])
        return out2.unsqueeze(2), label.reshape(-1, 1)
    n = out.shape[0] if out.dim() > 0 else 1
    # MXNet: the backward reads only the first `batch` labels in this layout.
    return out.reshape(n, -1).unsqueeze(2), label.reshape(-1)[:n].reshape(n, 1)


_CLASSES: dict = {}  # (classes, device) -> arange(classes), for the one-hot comparison


def _class_ids(k: int, device: torch.device) -> torch.Tensor:
    ids = _CLASSES.get((k, device))
    if ids is None:
        ids = torch.arange(k, device=device)
        if type(ids) is torch.Tensor:   # not a fake tensor made while a step is traced
            _CLASSES[(k, device)] = ids
    return ids


def _softmax_output_grad(attrs: Any, out: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
    """(softmax - target) * grad_scale / norm, MXNet's SoftmaxOutput backward."""
    if label.shape == out.shape:
        # MXNet: a label of the data's shape holds probabilities (no normalization)
        grad = (out - label.to(out.dtype)) * attrs.grad_scale
        return grad * out if attrs.out_grad else grad
    if (out.dim() == 2 and not attrs.multi_output and not attrs.use_ignore
            and not attrs.out_grad and attrs.smooth_alpha <= 0
            and attrs.normalization != "valid"):
        # the common (batch, classes) case in the fewest kernels; same arithmetic as below
        n, k = out.shape
        lab = label.reshape(-1)[:n].to(torch.int64)
        grad = out - (lab.unsqueeze(1) == _class_ids(k, out.device)).to(out.dtype)
        scale = attrs.grad_scale / n if attrs.normalization == "batch" else attrs.grad_scale
        return grad.mul_(scale) if scale != 1.0 else grad
    out3, lab = _softmax_grad_layout(attrs, out, label)
    k = out3.shape[1]
    # MXNet: labels and ignore_label are compared after a C cast to int (truncation).
    lab_i = lab.to(torch.int64)
    classes = torch.arange(k, device=out.device).view(1, k, 1)
    onehot = classes == lab_i.unsqueeze(1)
    if attrs.smooth_alpha > 0 and not attrs.multi_output:
        # MXNet 1.9.1: the multi_output backward ignores smooth_alpha.
        alpha = attrs.smooth_alpha
        target = torch.where(onehot, 1.0 - alpha, alpha / (k - 1) if k > 1 else 0.0)
        grad = out3 - target.to(out.dtype)
    else:
        grad = out3 - onehot.to(out.dtype)
    ignore = int(attrs.ignore_label)
    if attrs.use_ignore:
        grad = grad * (lab_i != ignore).unsqueeze(1).to(out.dtype)
    scale = attrs.grad_scale
    if attrs.multi_output and attrs.normalization != "valid":
        # MXNet 1.9.1: multi_output 'null' and 'batch' also divide by the spatial size.
        scale = scale / lab.shape[1]
    if attrs.normalization == "batch":
        grad = grad * (scale / lab.shape[0])
    elif attrs.normalization == "valid":
        # MXNet: 'valid' counts labels != ignore_label even when use_ignore is off.
        valid = (lab_i != ignore).sum().clamp(min=1).to(out.dtype)
        grad = grad * (scale / valid)
    elif scale != 1.0:
        grad = grad * scale
    grad = grad.reshape(out.shape)
    if attrs.out_grad:
        # MXNet: the backward node is wired to the output, not to the head gradient,
        # so out_grad=True multiplies by the softmax output itself.
        grad = grad * out
    return grad


class _SoftmaxOutputFn(torch.autograd.Function):
    """Softmax forward; MXNet's label-driven backward that ignores the head gradient."""

    @staticmethod
    def forward(ctx, data, label, attrs):
        out = _softmax_forward(attrs, data)
        ctx.attrs = attrs
        ctx.save_for_backward(out, label)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        out, label = ctx.saved_tensors
        return _softmax_output_grad(ctx.attrs, out, label), _label_grad(ctx, label), None


def _softmax_output(attrs: Any, data: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
    if attrs.multi_output or data.dim() != 2 or label.shape != data.shape[:1]:
        _check_softmax_label(attrs, tuple(data.shape), tuple(label.shape))
    if not data.is_floating_point():
        raise MXNetError(f"Operator SoftmaxOutput: data must be floating point, got {data.dtype}")
    if _recording(data, label):
        return _SoftmaxOutputFn.apply(data, label, attrs)
    return _softmax_forward(attrs, data)


def _softmax_output_shape(attrs: Any, in_shapes: list):
    dshape, lshape = in_shapes
    if dshape is None or 0 in dshape:
        return in_shapes, [None]
    if lshape is None:
        if attrs.multi_output and len(dshape) < 2:
            _check_softmax_label(attrs, dshape, ())
        lshape = _softmax_label_shape(attrs, dshape)[0]
    else:
        _check_softmax_label(attrs, dshape, lshape)
    return [dshape, lshape], [dshape]


register(OpDef(
    "SoftmaxOutput", _softmax_output, aliases=("Softmax",), work=tuning.elements,
    params=[Float("grad_scale", 1.0), Float("ignore_label", -1.0),
            Bool("multi_output", False), Bool("use_ignore", False),
            Bool("preserve_shape", False), Enum("normalization", _NORMS, "null"),
            Bool("out_grad", False),
            Float("smooth_alpha", 0.0, "Label smoothing constant", 0.0, 1.0)],
    inputs=("data", "label"), infer_shape=_softmax_output_shape, infer_type=same_type_infer,
    doc="""Computes the gradient of cross entropy loss with respect to softmax output.

Forward is softmax (over axis 1 with ``multi_output``, over the last axis with
``preserve_shape``, else over the flattened non-batch axes). Backward ignores the head
gradient: ``grad = (softmax - onehot(label)) * grad_scale / norm``.

Parameters
----------
data : NDArray
    Input array.
label : NDArray
    Ground truth label.
grad_scale : float, optional, default=1
    Scales the gradient by a float factor.
ignore_label : float, optional, default=-1
    The instances whose labels == ignore_label will be ignored during backward, if
    use_ignore is set to true.
multi_output : boolean, optional, default=0
    Softmax over axis 1 with labels of shape (n, d1, ...).
use_ignore : boolean, optional, default=0
    If set to true, the ignore_label value will not contribute to the backward gradient.
preserve_shape : boolean, optional, default=0
    Softmax over the last axis only.
normalization : {'batch', 'null', 'valid'}, optional, default='null'
    Normalizes the gradient.
out_grad : boolean, optional, default=0
    Multiplies gradient with output gradient element-wise.
smooth_alpha : float, optional, default=0
    Label smoothing: the target is 1-alpha at the label and alpha/(k-1) elsewhere.
"""))


# ---------------------------------------------------------------------- regression outputs
def _regression_grad(kind: str, out: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
    """d(loss)/d(data) before scaling: out - label, or MAE's sign."""
    diff = out - label.reshape(out.shape).to(out.dtype)
    if kind == "mae":
        # MXNet: minus_sign gives -1 where out == label.
        return torch.where(diff > 0, 1.0, -1.0).to(out.dtype)
    return diff


class _RegressionFn(torch.autograd.Function):
    """Identity/sigmoid forward; backward (out - label) * grad_scale / num_output."""

    @staticmethod
    def forward(ctx, data, label, kind, grad_scale):
        out = torch.sigmoid(data) if kind == "logistic" else data.clone()
        ctx.kind, ctx.grad_scale = kind, grad_scale
        ctx.save_for_backward(out, label)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        out, label = ctx.saved_tensors
        # MXNet: num_output = label.size / label.shape[0]; the head gradient is ignored.
        num_output = label.numel() // label.shape[0] if label.dim() > 0 else 1
        grad = _regression_grad(ctx.kind, out, label) * (ctx.grad_scale / num_output)
        return grad, _label_grad(ctx, label), None, None


def _regression_label_shape(dshape: tuple) -> tuple:
    """MXNet: (n, 1) data takes a 1-D label by default; otherwise the data shape."""
    if len(dshape) == 2 and dshape[1] == 1:
        return (dshape[0],)
    return tuple(dshape)


def _check_regression_label(name: str, dshape: tuple, lshape: tuple) -> None:
    size_d = 1
    for d in dshape:
        size_d *= d
    size_l = 1
    for d in lshape:
        size_l *= d
    if len(lshape) == 0 or len(dshape) == 0 or lshape[0] != dshape[0] or size_l != size_d:
        raise MXNetError(f"Operator {name}: shape inconsistent, label shape {tuple(lshape)} "
                         f"does not match data shape {tuple(dshape)}")


def _make_regression(name: str, kind: str) -> None:
    """Register one *RegressionOutput operator."""
    def compute(attrs: Any, data: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
        _check_regression_label(name, tuple(data.shape), tuple(label.shape))
        if _recording(data, label):
            return _RegressionFn.apply(data, label, kind, attrs.grad_scale)
        return torch.sigmoid(data) if kind == "logistic" else data.clone()

    def infer_shape(attrs: Any, in_shapes: list):
        dshape, lshape = in_shapes
        if dshape is None or 0 in dshape:
            return in_shapes, [None]
        if lshape is None:
            lshape = _regression_label_shape(dshape)
        else:
            _check_regression_label(name, dshape, lshape)
        return [dshape, lshape], [dshape]

    forward = "sigmoid(data)" if kind == "logistic" else "data"
    loss = "sign(out - label)" if kind == "mae" else "(out - label)"
    register(OpDef(name, compute, params=[Float("grad_scale", 1.0)],
                   inputs=("data", "label"), infer_shape=infer_shape,
                   infer_type=same_type_infer, doc=f"""\
{name}: forward ``{forward}``; backward ``{loss} * grad_scale / num_output``
(``num_output = label.size / label.shape[0]``), ignoring the head gradient.

Parameters
----------
data : NDArray
    Input data to the function.
label : NDArray
    Input label to the function.
grad_scale : float, optional, default=1
    Scale the gradient by a float factor
"""))


for _name, _kind in (("LinearRegressionOutput", "linear"),
                     ("LogisticRegressionOutput", "logistic"),
                     ("MAERegressionOutput", "mae")):
    _make_regression(_name, _kind)


# ---------------------------------------------------------------------- SVMOutput
def _svm_grad(attrs: Any, out: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
    """MXNet's L1/L2 SVM gradient (head gradient ignored)."""
    k = out.shape[-1]
    out2 = out.reshape(-1, k)
    lab = label.reshape(-1).to(torch.int64)
    onehot = torch.arange(k, device=out.device).view(1, k) == lab.view(-1, 1)
    margin, coef = attrs.margin, attrs.regularization_coefficient
    zero = torch.zeros((), dtype=out.dtype, device=out.device)
    if attrs.use_linear:
        at_label = -(margin > out2).to(out.dtype) * coef
        other = (margin > -out2).to(out.dtype) * coef
    else:
        at_label = -coef * torch.where(margin > out2, 2 * (margin - out2), zero)
        other = coef * torch.where(margin > -out2, 2 * (margin + out2), zero)
    return torch.where(onehot, at_label, other).reshape(out.shape)


class _SVMFn(torch.autograd.Function):
    """Identity forward; MXNet's hinge-loss backward."""

    @staticmethod
    def forward(ctx, data, label, attrs):
        ctx.attrs = attrs
        ctx.save_for_backward(data, label)
        return data.clone()

    @staticmethod
    def backward(ctx, grad_out):
        out, label = ctx.saved_tensors
        return _svm_grad(ctx.attrs, out, label), _label_grad(ctx, label), None


def _svm_output(attrs: Any, data: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
    if tuple(label.shape) != tuple(data.shape[:-1]):
        raise MXNetError(f"Operator SVMOutput: label shape {tuple(label.shape)} does not match "
                         f"data shape {tuple(data.shape)}; expected {tuple(data.shape[:-1])}")
    if _recording(data, label):
        return _SVMFn.apply(data, label, attrs)
    return data.clone()


def _svm_shape(attrs: Any, in_shapes: list):
    dshape, lshape = in_shapes
    if dshape is None or 0 in dshape:
        return in_shapes, [None]
    return [dshape, lshape if lshape is not None else tuple(dshape[:-1])], None


register(OpDef(
    "SVMOutput", _svm_output, inputs=("data", "label"), infer_shape=_svm_shape,
    params=[Float("margin", 1.0), Float("regularization_coefficient", 1.0),
            Bool("use_linear", False)],
    doc="""Computes support vector machine based transformation of the input.

Forward is the identity; backward is the L2-SVM (or L1 with ``use_linear``) hinge-loss
gradient for the given labels, ignoring the head gradient.

Parameters
----------
data : NDArray
    Input data for SVM transformation.
label : NDArray
    Class label for the input data.
margin : float, optional, default=1
    The loss function penalizes outputs that lie outside this margin.
regularization_coefficient : float, optional, default=1
    Regularization parameter for the SVM.
use_linear : boolean, optional, default=0
    Whether to use L1-SVM objective. L2-SVM objective is used by default.
"""))


# ---------------------------------------------------------------------- MakeLoss / make_loss
def _make_loss_grad(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """grad_scale / norm everywhere (MXNet's MakeLoss backward)."""
    scale = attrs.grad_scale
    if attrs.normalization == "batch":
        # MXNet: 'batch' divides by the rows of data flattened to 2-D (all but the last axis).
        rows = data.numel() // data.shape[-1] if data.dim() > 0 and data.shape[-1] else 1
        return torch.full_like(data, scale / max(rows, 1))
    if attrs.normalization == "valid":
        valid = (data > attrs.valid_thresh).sum().clamp(min=1).to(data.dtype)
        return (scale / valid).expand(data.shape).clone()
    return torch.full_like(data, scale)


class _MakeLossFn(torch.autograd.Function):
    """Identity forward; a constant gradient that ignores the head gradient."""

    @staticmethod
    def forward(ctx, data, attrs):
        ctx.attrs = attrs
        ctx.save_for_backward(data)
        return data.clone()

    @staticmethod
    def backward(ctx, grad_out):
        (data,) = ctx.saved_tensors
        if ctx.attrs is None:
            return torch.ones_like(data), None
        return _make_loss_grad(ctx.attrs, data), None


def _make_loss(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    if _recording(data):
        return _MakeLossFn.apply(data, attrs)
    return data.clone()


register(OpDef(
    "MakeLoss", _make_loss,
    params=[Float("grad_scale", 1.0), Float("valid_thresh", 0.0),
            Enum("normalization", _NORMS, "null")],
    doc="""Make your own loss function in network construction.

Forward is the identity; backward is ``grad_scale`` (divided by the number of rows with
``normalization='batch'``, or by the number of elements above ``valid_thresh`` with
``'valid'``), ignoring the head gradient.

Parameters
----------
data : NDArray
    Input array.
grad_scale : float, optional, default=1
    Gradient scale as a supplement to unary and binary operators
valid_thresh : float, optional, default=0
    clip each element in the array to 0 when it is less than ``valid_thresh``.
normalization : {'batch', 'null', 'valid'}, optional, default='null'
    If this is set to null, the output gradient will not be normalized.
"""))

register(OpDef(
    "make_loss", lambda attrs, data: _make_loss(None, data),
    doc="""Make your own loss function in network construction.

Forward is the identity; the gradient is ones, whatever the head gradient.

Parameters
----------
data : NDArray
    The input array.
"""))


# ---------------------------------------------------------------------- BlockGrad
register(OpDef(
    "BlockGrad", lambda attrs, data: data.detach().clone(), aliases=("stop_gradient",),
    zero_grad=True,
    doc="""Stops gradient computation: identity forward, zero gradient to the input.

Parameters
----------
data : NDArray
    The input array.
"""))


# ---------------------------------------------------------------------- softmax_cross_entropy
def _softmax_cross_entropy(attrs: Any, data: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
    if data.dim() != 2:
        raise MXNetError(f"Operator softmax_cross_entropy: only accepts 2-D data, got shape "
                         f"{tuple(data.shape)}")
    if label.dim() != 1 or label.shape[0] != data.shape[0]:
        raise MXNetError(f"Operator softmax_cross_entropy: data and label shape mismatch: "
                         f"data {tuple(data.shape)}, label {tuple(label.shape)}")
    logp = torch.log_softmax(data, dim=1)
    picked = logp.gather(1, label.detach().to(torch.int64).unsqueeze(1))
    return -picked.sum().reshape(1)


def _softmax_cross_entropy_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    """(1,) from 2-D data and its 1-D label (MXNet infers neither from the other).
    Declared, not run on meta tensors: torch's meta log_softmax/gather path imports
    torch._dynamo on its first call (about 1 s)."""
    data, label = shapes
    if data is not None and len(data) != 2:
        raise MXNetError(f"Operator softmax_cross_entropy: only accepts 2-D data, got "
                         f"shape {tuple(data)}")
    if label is not None and len(label) != 1:
        raise MXNetError("Operator softmax_cross_entropy: SoftmaxCrossEntropy only accept "
                         f"1D label, got shape {tuple(label)}")
    if data is None or label is None:
        return shapes, None
    if data[0] and label[0] and data[0] != label[0]:
        raise MXNetError(f"Operator softmax_cross_entropy: data and label shape mismatch: "
                         f"data {tuple(data)}, label {tuple(label)}")
    return shapes, [(1,)]


def _softmax_cross_entropy_type(attrs: Any, types: list) -> tuple[list, list]:
    """The output has data's dtype; the label keeps its own."""
    return types, [types[0]]


register(OpDef(
    "softmax_cross_entropy", _softmax_cross_entropy, inputs=("data", "label"),
    infer_shape=_softmax_cross_entropy_shape, infer_type=_softmax_cross_entropy_type,
    doc="""Calculate cross entropy of softmax output and one-hot label, summed over the batch.

Returns an array of shape (1,).

Parameters
----------
data : NDArray
    Input data (2-D: batch x classes).
label : NDArray
    Input label (1-D class indices).
"""))


# ---------------------------------------------------------------------- IdentityAttachKLSparseReg
class _KLSparseRegFn(torch.autograd.Function):
    """Identity forward; backward adds the KL sparseness penalty and updates moving_avg."""

    @staticmethod
    def forward(ctx, data, moving_avg, attrs):
        ctx.attrs = attrs
        ctx.moving_avg = moving_avg
        ctx.save_for_backward(data)
        return data.clone()

    @staticmethod
    def backward(ctx, grad_out):
        (data,) = ctx.saved_tensors
        attrs, moving_avg = ctx.attrs, ctx.moving_avg
        dims = [d for d in range(data.dim()) if d != 1]
        avg = data.mean(dim=dims) if dims else data
        # MXNet: the moving average is updated during backward, not forward.
        moving_avg.mul_(attrs.momentum).add_(avg.to(moving_avg.dtype), alpha=1 - attrs.momentum)
        rho = attrs.sparseness_target
        ma = moving_avg.to(data.dtype).view([1, -1] + [1] * (data.dim() - 2))
        penalty = attrs.penalty * (-rho / ma + (1 - rho) / (1 - ma))
        return grad_out + penalty, None, None


def _kl_sparse_reg(attrs: Any, data: torch.Tensor, moving_avg: torch.Tensor) -> torch.Tensor:
    if data.dim() < 2 or tuple(moving_avg.shape) != (data.shape[1],):
        raise MXNetError(f"Operator IdentityAttachKLSparseReg: moving_avg shape "
                         f"{tuple(moving_avg.shape)} does not match data shape "
                         f"{tuple(data.shape)}; expected (data.shape[1],) with 2-D or more data")
    if _recording(data):
        return _KLSparseRegFn.apply(data, moving_avg, attrs)
    return data.clone()


def _kl_shape(attrs: Any, in_shapes: list):
    dshape, mshape = in_shapes
    if dshape is None or 0 in dshape or len(dshape) < 2:
        return in_shapes, [None]
    return [dshape, mshape if mshape is not None else (dshape[1],)], None


register(OpDef(
    "IdentityAttachKLSparseReg", _kl_sparse_reg, inputs=("data", "moving_avg"),
    aux=("moving_avg",), infer_shape=_kl_shape,
    params=[Float("sparseness_target", 0.1, lower=0.0, upper=1.0),
            Float("penalty", 0.001, lower=0.0, upper=1.0),
            Float("momentum", 0.9, lower=0.0, upper=1.0)],
    doc="""Apply a sparse regularization to the output of a sigmoid activation function.

Forward is the identity. Backward adds
``penalty * (-rho / avg + (1 - rho) / (1 - avg))`` to the head gradient, where ``avg``
is the moving average (auxiliary state, updated during backward) of the mean
activation of each unit (axis 1).

Parameters
----------
data : NDArray
    Input data.
sparseness_target : float, optional, default=0.1
    The sparseness target
penalty : float, optional, default=0.001
    The tradeoff parameter for the sparseness penalty
momentum : float, optional, default=0.9
    The momentum for running average
"""))


# ---------------------------------------------------------------------- CTCLoss
def _ctc_inputs(attrs: Any) -> list[str]:
    names = ["data", "label"]
    if attrs.use_data_lengths:
        names.append("data_lengths")
    if attrs.use_label_lengths:
        names.append("label_lengths")
    return names


def _ctc_lengths(attrs: Any, data: torch.Tensor, label: torch.Tensor,
                 extra: tuple) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sequence input and label lengths, from the inputs or from the label padding."""
    rest = list(extra)
    n, t = data.shape[1], data.shape[0]
    if attrs.use_data_lengths:
        data_len = rest.pop(0).detach().to(torch.int64)
    else:
        data_len = torch.full((n,), t, dtype=torch.int64, device=data.device)
    if attrs.use_label_lengths:
        label_len = rest.pop(0).detach().to(torch.int64)
    else:
        # MXNet: a label ends at the first padding value (0 with blank 'first', -1 'last').
        pad = 0 if attrs.blank_label == "first" else -1
        mask = label == pad
        first = mask.to(torch.int8).argmax(dim=1)
        label_len = torch.where(mask.any(dim=1), first, label.shape[1])
    return data_len, label_len


def _ctc_loss(attrs: Any, data: torch.Tensor, label: torch.Tensor,
              *extra: torch.Tensor) -> torch.Tensor:
    if data.dim() != 3:
        raise MXNetError(f"Operator CTCLoss: data must be 3-D (sequence, batch, alphabet), "
                         f"got shape {tuple(data.shape)}")
    if label.dim() != 2 or label.shape[0] != data.shape[1]:
        raise MXNetError(f"Operator CTCLoss: label must be 2-D (batch, max_label_length) "
                         f"with batch {data.shape[1]}, got shape {tuple(label.shape)}")
    data_len, label_len = _ctc_lengths(attrs, data, label, extra)
    blank = 0 if attrs.blank_label == "first" else data.shape[2] - 1
    targets = label.detach().to(torch.int64).clamp(min=0)
    if attrs.use_data_lengths:
        # MXNet: steps past a sequence's length are never read (even NaN there gives a
        # zero gradient); torch's log_softmax would carry NaN into the gradient
        steps = torch.arange(data.shape[0], device=data.device).reshape(-1, 1, 1)
        data = torch.where(steps < data_len.reshape(1, -1, 1), data, 0.0)
    logp = torch.log_softmax(data, dim=2)
    return F.ctc_loss(logp, targets, data_len, label_len, blank=blank, reduction="none",
                      zero_infinity=False).to(data.dtype)


def _ctc_shape(attrs: Any, in_shapes: list):
    dshape = in_shapes[0]
    if dshape is None or 0 in dshape:
        return in_shapes, [None]
    if len(dshape) != 3:
        raise MXNetError(f"Operator CTCLoss: data must be 3-D, got shape {tuple(dshape)}")
    shapes = list(in_shapes)
    names = _ctc_inputs(attrs)
    for i in range(2, len(names)):
        if shapes[i] is None:
            shapes[i] = (dshape[1],)
    return shapes, [(dshape[1],)]


register(OpDef(
    "CTCLoss", _ctc_loss, aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
    inputs=_ctc_inputs, total_outputs=2, output_names=("output0",),
    infer_shape=_ctc_shape, infer_type=lambda attrs, t: (t, [t[0]]),
    params=[Bool("use_data_lengths", False), Bool("use_label_lengths", False),
            Enum("blank_label", ("first", "last"), "first")],
    doc="""Connectionist Temporal Classification Loss.

The softmax is applied inside: ``data`` holds unnormalized activations of shape
(sequence_length, batch_size, alphabet_size). Returns the loss of each sequence, shape
(batch_size,).

Parameters
----------
data : NDArray
    Input ndarray
label : NDArray
    Ground-truth labels for the loss, (batch_size, max_label_length), padded with 0
    (``blank_label='first'``) or -1 (``'last'``) unless ``use_label_lengths``.
data_lengths : NDArray
    Lengths of data for each of the samples. Only required when use_data_lengths is true.
label_lengths : NDArray
    Lengths of labels for each of the samples. Only required when use_label_lengths is true.
use_data_lengths : boolean, optional, default=0
    Whether the data lenghts are decided by `data_lengths`.
use_label_lengths : boolean, optional, default=0
    Whether the label lenghts are decided by `label_lengths`.
blank_label : {'first', 'last'}, optional, default='first'
    Set the label that is reserved for blank label.
"""))


# ---------------------------------------------------------------------- Gluon's softmax CE
def _softmax_ce(attrs: Any, data: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
    """``-pick(log_softmax(data), label)`` per row of (batch, classes) logits, as one operator.

    Gluon's ``SoftmaxCrossEntropyLoss`` (sparse labels, class axis last, batch axis 0)
    on NDArrays; the Symbol form keeps MXNet's log_softmax/pick/mean graph. # MXNet: pick
    clips out-of-range labels into [0, classes) and truncates float labels.
    """
    if data.dim() != 2 or label.numel() != data.shape[0]:
        raise MXNetError(f"Operator _softmax_cross_entropy_rows: data must be (batch, "
                         f"classes) and label (batch,), got {tuple(data.shape)} and "
                         f"{tuple(label.shape)}")
    lab = label.reshape(-1).to(torch.int64).clamp(0, data.shape[1] - 1)
    return F.cross_entropy(data, lab, reduction="none")


register(OpDef("_softmax_cross_entropy_rows", _softmax_ce, inputs=("data", "label"),
               work=tuning.elements,
               doc="Per-row softmax cross entropy of (batch, classes) logits with sparse "
                   "labels (the NDArray form of Gluon's SoftmaxCrossEntropyLoss)."))

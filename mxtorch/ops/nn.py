"""Neural-network operators: FullyConnected, Convolution, Deconvolution, Pooling, Activation,
LeakyReLU.

Each compute is a straight call into ``torch.nn.functional``; the MXNet conventions
(``flatten``, ``target_shape``, the pooling ``full`` convention, PReLU's gamma
broadcasting) are resolved from the attributes and the input shape before the call.
Shape inference fills weights and biases backwards from the data shape, as MXNet
infers ``fc1_weight`` from ``num_hidden``.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F

from ..base import MXNetError
from . import tuning
from .elemwise import same_shape_infer
from .params import Bool, Enum, Float, Int, OptBool, OptInt, Shape
from .registry import OpDef, register, same_type_infer

__all__: list[str] = []

_CONV_LAYOUTS = ("NCDHW", "NCHW", "NCW", "NDHWC", "NHWC")
_POOL_LAYOUTS = ("NCDHW", "NCHW", "NCW", "NDHWC", "NHWC", "NWC")
_CUDNN_TUNE = ("fastest", "limited_workspace", "off")
_CONV_FN = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_DECONV_FN = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
_MAX_POOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVG_POOL = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
_CL = torch.channels_last
_CL_POOL_MIN = 1 << 14  # elements: below this the copies cost more than they save
_DATA_DESC = {1: "3D in (batch, channel, x)", 2: "4D in (batch, channel, y, x)",
              3: "5D in (batch, channel, d, y, x)"}


def _err(op: str, msg: str) -> MXNetError:
    """An MXNetError naming the operator."""
    return MXNetError(f"Operator {op}: {msg}")


def _check_float(op: str, *tensors: torch.Tensor) -> None:
    """MXNet's NN kernels are float-only."""
    for t in tensors:
        if not t.is_floating_point():
            raise _err(op, "this operation only supports floating point types, not "
                       f"{str(t.dtype).replace('torch.', '')}")


def _check_shape(op: str, name: str, given: tuple | None, expected: tuple) -> None:
    """MXNet's 'Shape inconsistent' check for an input inferred from the data."""
    if given is None:
        return
    if len(given) != len(expected) or any(g and e and g != e for g, e in zip(given, expected)):
        raise _err(op, f"shape inconsistent for input '{name}': provided {tuple(given)}, "
                   f"inferred shape {tuple(expected)}")


def _merge(given: tuple | None, expected: tuple) -> tuple:
    """Fill unknown (None or 0) dims of ``given`` from ``expected``."""
    if given is None:
        return tuple(expected)
    return tuple(g if g else e for g, e in zip(given, expected))


def _spatial_param(op: str, name: str, value: tuple, nd: int, default: int) -> tuple:
    """Expand an empty stride/dilate/pad to ``nd`` values; check its length."""
    if not value:
        return (default,) * nd
    if len(value) != nd:
        raise _err(op, f"{name} must have the same number of dimensions as kernel, but "
                   f"kernel has {nd} while {name} is {tuple(value)}")
    return tuple(value)


# ---------------------------------------------------------------- FullyConnected
def _fc_inputs(attrs: Any) -> list[str]:
    return ["data", "weight"] if attrs.no_bias else ["data", "weight", "bias"]


def _fc_compute(attrs: Any, data: torch.Tensor, weight: torch.Tensor,
                bias: torch.Tensor | None = None) -> torch.Tensor:
    """y = x W^T + b on the flattened (or last-axis) input."""
    if attrs.flatten and data.dim() != 2:
        # MXNet: a 1-D input is read as (batch, 1).
        x = data.reshape(data.shape[0], math.prod(data.shape[1:]))
    else:
        x = data
    if weight.dim() == 2 and weight.shape[0] == attrs.num_hidden and x.is_floating_point():
        try:
            return F.linear(x, weight, bias)
        except RuntimeError:
            pass  # explain below in MXNet's terms
    in_dim = x.shape[-1]
    if tuple(weight.shape) != (attrs.num_hidden, in_dim):
        raise _err("FullyConnected", f"shape inconsistent for input 'weight': provided "
                   f"{tuple(weight.shape)}, inferred shape {(attrs.num_hidden, in_dim)}")
    if bias is not None and tuple(bias.shape) != (attrs.num_hidden,):
        raise _err("FullyConnected", f"shape inconsistent for input 'bias': provided "
                   f"{tuple(bias.shape)}, inferred shape {(attrs.num_hidden,)}")
    _check_float("FullyConnected", data)
    return F.linear(x, weight, bias)


def _fc_infer_shape(attrs: Any, shapes: list,
                    out_shapes: list | None = None) -> tuple[list, list | None]:
    """weight (num_hidden, in) and bias (num_hidden,) from data; data's last dim from weight;
    data's batch dim from a known output (RNN begin states of shape (0, H))."""
    data, weight = shapes[0], shapes[1]
    nh = attrs.num_hidden
    if data is None:
        return shapes, None  # MXNet: nothing is inferred until data's shape is known
    out = (out_shapes or [None])[0]
    if data and not data[0] and out and out[0]:
        data = (out[0],) + tuple(data[1:])
    if weight is not None and weight[1:] and weight[1]:
        data = _fill_fc_data(attrs, data, weight[1])
    in_dim = 0
    if data is not None:
        rest = data[1:] if attrs.flatten else data[-1:]
        in_dim = math.prod(rest) if rest else 1
    _check_shape("FullyConnected", "weight", weight, (nh, in_dim))
    new = [data, _merge(weight, (nh, in_dim))]
    if not attrs.no_bias:
        _check_shape("FullyConnected", "bias", shapes[2], (nh,))
        new.append((nh,))
    if data is None:
        return new, None
    out = (data[0], nh) if attrs.flatten else tuple(data[:-1]) + (nh,)
    return new, [out]


def _fill_fc_data(attrs: Any, data: tuple, in_dim: int) -> tuple:
    """Fill the one unknown feature dim of ``data`` from the weight's input size."""
    if not attrs.flatten:
        return tuple(data[:-1]) + (data[-1] or in_dim,)
    rest = list(data[1:])
    unknown = [i for i, d in enumerate(rest) if not d]
    if len(unknown) == 1:
        known = math.prod(d for d in rest if d)
        if in_dim % known == 0:
            rest[unknown[0]] = in_dim // known
    return (data[0], *rest)


register(OpDef(
    "FullyConnected", _fc_compute, work=tuning.dense,
    params=[Int("num_hidden", doc="Number of hidden nodes of the output.", lower=1),
            Bool("no_bias", False), Bool("flatten", True)],
    inputs=_fc_inputs, infer_shape=_fc_infer_shape,
    infer_shape_takes_outputs=True, infer_type=same_type_infer,
    doc="Applies a linear transformation: Y = X W^T + b.\n\n"
        "With ``flatten=True`` all axes but the first are collapsed; with ``flatten=False``\n"
        "the transformation applies to the last axis."))


# ---------------------------------------------------------------- Convolution
class _ConvCfg(NamedTuple):
    nd: int
    kernel: tuple
    stride: tuple
    dilate: tuple
    pad: tuple
    channel_last: bool


def _conv_cfg(op: str, attrs: Any, data_ndim: int | None) -> _ConvCfg:
    """Validate kernel/stride/dilate/pad against each other and the data rank."""
    kernel = tuple(attrs.kernel)
    nd = len(kernel)
    if nd not in (1, 2, 3):
        raise _err(op, f"{nd}D {op.lower()} not supported (kernel {kernel})")
    if any(k <= 0 for k in kernel):
        raise _err(op, f"kernel must be positive, got {kernel}")
    stride = _spatial_param(op, "stride", attrs.stride, nd, 1)
    dilate = _spatial_param(op, "dilate", attrs.dilate, nd, 1)
    pad = _spatial_param(op, "pad", attrs.pad, nd, 0)
    if any(s <= 0 for s in stride) or any(d <= 0 for d in dilate):
        raise _err(op, f"stride {stride} and dilate {dilate} must be positive")
    if data_ndim is not None and data_ndim != nd + 2:
        raise _err(op, f"input data should be {_DATA_DESC[nd]} for a kernel of {nd} "
                   f"dimensions, got a {data_ndim}D input")
    if attrs.num_filter <= 0 or attrs.num_group <= 0:
        raise _err(op, "num_filter and num_group must be at least 1")
    layout = attrs.layout
    if layout is not None and len(layout) != nd + 2:
        raise _err(op, f"layout {layout} does not match a {nd}D kernel")
    channel_last = layout is not None and layout[-1] == "C"
    return _ConvCfg(nd, kernel, stride, dilate, pad, channel_last)


def _to_channel_first(x: torch.Tensor) -> torch.Tensor:
    return x.movedim(-1, 1)


def _to_channel_last(x: torch.Tensor) -> torch.Tensor:
    return x.movedim(1, -1)


def _conv_weight_shape(attrs: Any, cfg: _ConvCfg, channels: int) -> tuple:
    """(num_filter, C/num_group, *kernel), channel-last for NHWC/NDHWC layouts."""
    per_group = channels // attrs.num_group if channels else 0
    if cfg.channel_last:
        return (attrs.num_filter, *cfg.kernel, per_group)
    return (attrs.num_filter, per_group, *cfg.kernel)


def _conv_out_dim(size: int, k: int, s: int, d: int, p: int) -> int:
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1 if size else 0


def _conv_check(attrs: Any, cfg: _ConvCfg, data: tuple, weight: tuple | None) -> None:
    """Group divisibility, weight shape, and kernel-fits-input checks."""
    op = "Convolution"
    channels = data[-1] if cfg.channel_last else data[1]
    if channels and channels % attrs.num_group:
        raise _err(op, f"input channels {channels} are not divisible by num_group "
                   f"{attrs.num_group}")
    if attrs.num_filter % attrs.num_group:
        raise _err(op, f"num_filter {attrs.num_filter} is not divisible by num_group "
                   f"{attrs.num_group}")
    _check_shape(op, "weight", weight, _conv_weight_shape(attrs, cfg, channels))
    spatial = data[1:-1] if cfg.channel_last else data[2:]
    for size, k, d, p in zip(spatial, cfg.kernel, cfg.dilate, cfg.pad):
        if size and d * (k - 1) + 1 > size + 2 * p:
            raise _err(op, f"kernel size {cfg.kernel} (dilate {cfg.dilate}) exceeds the "
                       f"padded input {tuple(spatial)} + 2*{cfg.pad}")


@lru_cache(maxsize=1024)
def _conv_plan(attrs: Any, data: tuple, weight: tuple) -> _ConvCfg:
    """Validated configuration for one (attrs, data shape, weight shape)."""
    cfg = _conv_cfg("Convolution", attrs, len(data))
    _conv_check(attrs, cfg, tuple(data), tuple(weight))
    return cfg


def _conv_compute(attrs: Any, data: torch.Tensor, weight: torch.Tensor,
                  bias: torch.Tensor | None = None) -> torch.Tensor:
    """N-d grouped, dilated convolution through torch.nn.functional.conv{1,2,3}d."""
    cfg = _conv_plan(attrs, data.shape, weight.shape)
    _check_float("Convolution", data)
    if cfg.channel_last:
        data, weight = _to_channel_first(data), _to_channel_first(weight)
    out = _CONV_FN[cfg.nd](data, weight, bias, cfg.stride, cfg.pad, cfg.dilate,
                           attrs.num_group)
    return _to_channel_last(out) if cfg.channel_last else out


def _conv_data_from_output(cfg: _ConvCfg, data: tuple, out: tuple) -> tuple:
    """MXNet's incomplete inference: the batch size always, and a spatial size wherever
    the stride is 1, come back from the output."""
    dims = list(data)
    dims[0] = dims[0] or out[0]
    first = 1 if cfg.channel_last else 2
    for k, (o, kern, s, d, p) in enumerate(zip(out[first:first + cfg.nd], cfg.kernel,
                                               cfg.stride, cfg.dilate, cfg.pad)):
        if o and s == 1 and not dims[first + k]:
            dims[first + k] = o + d * (kern - 1) - 2 * p
    return tuple(dims)


def _conv_infer_shape(attrs: Any, shapes: list,
                      out_shapes: list | None = None) -> tuple[list, list | None]:
    """weight (num_filter, C/num_group, *kernel) and bias (num_filter,) from data; data's
    batch and stride-1 spatial sizes from a known output."""
    data = shapes[0]
    cfg = _conv_cfg("Convolution", attrs, None if data is None else len(data))
    if data is None:
        return shapes, None
    out = (out_shapes or [None])[0]
    if out is not None and len(out) == len(data) and 0 in data:
        data = _conv_data_from_output(cfg, data, out)
    _conv_check(attrs, cfg, data, shapes[1])
    channels = data[-1] if cfg.channel_last else data[1]
    new = [data, _merge(shapes[1], _conv_weight_shape(attrs, cfg, channels))]
    if not attrs.no_bias:
        _check_shape("Convolution", "bias", shapes[2], (attrs.num_filter,))
        new.append((attrs.num_filter,))
    spatial = data[1:-1] if cfg.channel_last else data[2:]
    out_sp = tuple(_conv_out_dim(*a) for a in zip(spatial, cfg.kernel, cfg.stride,
                                                   cfg.dilate, cfg.pad))
    if cfg.channel_last:
        return new, [(data[0], *out_sp, attrs.num_filter)]
    return new, [(data[0], attrs.num_filter, *out_sp)]


def _conv_params(workspace: int, no_bias: bool) -> list:
    """The attributes Convolution and Deconvolution share."""
    return [
        Shape("kernel"), Shape("stride", ()), Shape("dilate", ()), Shape("pad", ()),
        Int("num_filter", doc="Convolution filter(channel) number", lower=1),
        Int("num_group", 1),
        Int("workspace", workspace, "Maximum temporary workspace (MB)", lower=0, wide=True),
        Bool("no_bias", no_bias),
        Enum("cudnn_tune", _CUDNN_TUNE, None, optional=True),
        Bool("cudnn_off", False),
        Enum("layout", _CONV_LAYOUTS, None, optional=True),
    ]


def _conv_2d_nchw(attrs: Any) -> bool:
    return len(attrs.kernel) == 2 and attrs.layout in (None, "NCHW")


register(OpDef(
    "Convolution", _conv_compute, params=_conv_params(1024, False), work=tuning.conv,
    inputs=_fc_inputs, infer_shape=_conv_infer_shape,
    infer_shape_takes_outputs=True, infer_type=same_type_infer,
    channels_last=lambda a: "start" if _conv_2d_nchw(a) else None,
    fusion_role=lambda a: "conv" if _conv_2d_nchw(a) else None,
    doc="Compute N-D convolution on (N+2)-D input (N = 1, 2 or 3).\n\n"
        "weight has shape (num_filter, channels/num_group, *kernel)."))


# ---------------------------------------------------------------- Deconvolution
def _deconv_pad_adj(attrs: Any, cfg: _ConvCfg, spatial: tuple) -> tuple[tuple, tuple]:
    """MXNet's InferPad: ``target_shape`` overrides ``pad`` and ``adj``."""
    adj = _spatial_param("Deconvolution", "adj", attrs.adj, cfg.nd, 0)
    target = tuple(attrs.target_shape)
    if not any(target):
        return cfg.pad, adj
    if len(target) != cfg.nd:
        raise _err("Deconvolution", f"target_shape {target} must have {cfg.nd} dimensions")
    pads, adjs = [], []
    for size, k, s, d, t in zip(spatial, cfg.kernel, cfg.stride, cfg.dilate, target):
        full = s * (size - 1) + d * (k - 1) + 1
        if full < t:
            raise _err("Deconvolution", f"too big target shape {target}: at most {full} "
                       "is reachable")
        total = full - t
        # MXNet: an odd difference is split as pad=(total+1)//2 and adj=total%2.
        pads.append((total + 1) // 2)
        adjs.append(total % 2)
    return tuple(pads), tuple(adjs)


def _deconv_prepare(attrs: Any, data: tuple, weight: tuple | None):
    """Validate a deconvolution and return (cfg, pad, adj, weight shape)."""
    op = "Deconvolution"
    cfg = _conv_cfg(op, attrs, len(data))
    if cfg.channel_last:
        raise _err(op, f"layout {attrs.layout} is not supported; use NCW, NCHW or NCDHW")
    channels = data[1]
    if channels and channels % attrs.num_group:
        raise _err(op, f"input channels {channels} are not divisible by num_group "
                   f"{attrs.num_group}")
    if attrs.num_filter % attrs.num_group:
        raise _err(op, f"num_filter {attrs.num_filter} is not divisible by num_group "
                   f"{attrs.num_group}")
    wshape = (channels, attrs.num_filter // attrs.num_group, *cfg.kernel)
    _check_shape(op, "weight", weight, wshape)
    pad, adj = _deconv_pad_adj(attrs, cfg, data[2:])
    for a, s in zip(adj, cfg.stride):
        if a >= s:
            raise _err(op, f"adj {adj} must be smaller than stride {cfg.stride}")
    return cfg, pad, adj, wshape


def _deconv_out_dim(size: int, k: int, s: int, d: int, p: int, a: int) -> int:
    return s * (size - 1) + d * (k - 1) + 1 - 2 * p + a if size else 0


@lru_cache(maxsize=1024)
def _deconv_plan(attrs: Any, data: tuple, weight: tuple) -> tuple[_ConvCfg, tuple, tuple]:
    """Validated (cfg, pad, adj) for one (attrs, data shape, weight shape)."""
    cfg, pad, adj, _ = _deconv_prepare(attrs, tuple(data), tuple(weight))
    dims = [_deconv_out_dim(*a) for a in zip(data[2:], cfg.kernel, cfg.stride,
                                              cfg.dilate, pad, adj)]
    if any(d <= 0 for d in dims):
        raise _err("Deconvolution", f"output size {tuple(dims)} is not positive (pad {pad} "
                   "too large)")
    return cfg, pad, adj


def _deconv_compute(attrs: Any, data: torch.Tensor, weight: torch.Tensor,
                    bias: torch.Tensor | None = None) -> torch.Tensor:
    """Transposed convolution through torch.nn.functional.conv_transpose{1,2,3}d."""
    cfg, pad, adj = _deconv_plan(attrs, data.shape, weight.shape)
    _check_float("Deconvolution", data)
    return _DECONV_FN[cfg.nd](data, weight, bias, cfg.stride, pad, adj, attrs.num_group,
                              cfg.dilate)


def _deconv_infer_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    """weight (C, num_filter/num_group, *kernel) and bias (num_filter,) from data."""
    data = shapes[0]
    if data is None:
        _conv_cfg("Deconvolution", attrs, None)
        return shapes, None
    cfg, pad, adj, wshape = _deconv_prepare(attrs, data, shapes[1])
    new = [data, _merge(shapes[1], wshape)]
    if not attrs.no_bias:
        _check_shape("Deconvolution", "bias", shapes[2], (attrs.num_filter,))
        new.append((attrs.num_filter,))
    out_sp = tuple(_deconv_out_dim(*a) for a in zip(data[2:], cfg.kernel, cfg.stride,
                                                     cfg.dilate, pad, adj))
    return new, [(data[0], attrs.num_filter, *out_sp)]


register(OpDef(
    "Deconvolution", _deconv_compute, work=tuning.conv,
    params=_conv_params(512, True) + [Shape("adj", ()), Shape("target_shape", ())],
    inputs=_fc_inputs, infer_shape=_deconv_infer_shape,
    doc="Computes 1-D, 2-D or 3-D transposed convolution (deconvolution).\n\n"
        "weight has shape (channels, num_filter/num_group, *kernel); ``target_shape``\n"
        "overrides ``pad`` and ``adj``. ``no_bias`` defaults to True."))


# ---------------------------------------------------------------- Pooling
class _PoolCfg(NamedTuple):
    nd: int
    kernel: tuple
    stride: tuple
    pad: tuple            # MXNet's symmetric pad (count_include_pad clips windows at H+pad)
    pad_left: tuple       # left padding actually applied
    out: tuple            # output spatial size
    fast: bool            # torch's pooling computes exactly MXNet's windows
    channel_last: bool


def _pool_nd(layout: str | None, shape: tuple) -> tuple[int, bool]:
    """Number of spatial dims and whether the layout is channel-last."""
    nd = len(shape) - 2
    if nd not in (1, 2, 3):
        raise _err("Pooling", f"input data should be 3D in (batch, channel, x), or 4D in "
                   f"(batch, channel, y, x), or 5D in (batch, channel, d, y, x); got shape "
                   f"{shape}")
    if layout is not None and len(layout) != nd + 2:
        raise _err("Pooling", f"layout {layout} does not match the input shape {shape}")
    return nd, layout is not None and layout[-1] == "C"


def _pool_out_dim(conv: str, size: int, k: int, s: int, p: int) -> int:
    """Output length of one spatial dim under MXNet's pooling conventions."""
    if conv == "same":
        return (size + s - 1) // s
    if k > size + 2 * p:
        raise _err("Pooling", f"kernel size ({k}) exceeds input ({size} padded to "
                   f"{size + 2 * p})")
    if conv == "valid":
        return 1 + (size + 2 * p - k) // s
    # MXNet: 'full' is ceil mode without torch's "last window starts inside" rule.
    return 1 + math.ceil((size + 2 * p - k) / s)


def _torch_out_dim(conv: str, size: int, k: int, s: int, p: int) -> int:
    """Output length torch's pooling would produce (ceil_mode for 'full')."""
    if conv != "full":
        return (size + 2 * p - k) // s + 1
    out = -((size + 2 * p - k) // -s) + 1
    if (out - 1) * s >= size + p:
        out -= 1
    return out


@lru_cache(maxsize=1024)
def _pool_cfg(attrs: Any, shape: tuple) -> _PoolCfg:
    """Resolve kernel, stride, pads and output size for one input shape."""
    nd, channel_last = _pool_nd(attrs.layout, shape)
    spatial = shape[1:-1] if channel_last else shape[2:]
    conv = attrs.pooling_convention
    if attrs.global_pool:
        kernel, stride, pad, conv = tuple(spatial), (1,) * nd, (0,) * nd, "valid"
    else:
        kernel = tuple(attrs.kernel)
        if len(kernel) != nd:
            raise _err("Pooling", f"kernel {kernel} needs input data "
                       f"{_DATA_DESC.get(len(kernel), 'of 3 to 5 dims')}, got shape {shape}")
        stride = _spatial_param("Pooling", "stride", attrs.stride, nd, 1)
        if conv == "same":   # MXNet: only checks the pad is zero, whatever its length
            _check_same(attrs, nd, tuple(attrs.pad))
            pad = (0,) * nd
        else:
            pad = _spatial_param("Pooling", "pad", attrs.pad, nd, 0)
        if any(v <= 0 for v in kernel + stride):
            raise _err("Pooling", f"kernel {kernel} and stride {stride} must be positive")
    if conv == "same":
        _check_same(attrs, nd, pad)
    out = tuple(_pool_out_dim(conv, *a) for a in zip(spatial, kernel, stride, pad))
    pad_left = pad
    if conv == "same":
        pad_left = tuple(max((o - 1) * s + k - n, 0) // 2
                         for o, s, k, n in zip(out, stride, kernel, spatial))
    fast = conv != "same" and attrs.pool_type in ("max", "avg") and all(
        2 * p <= k and _torch_out_dim(conv, n, k, s, p) == o
        for n, k, s, p, o in zip(spatial, kernel, stride, pad, out))
    return _PoolCfg(nd, kernel, stride, pad, pad_left, out, fast, channel_last)


def _check_same(attrs: Any, nd: int, pad: tuple) -> None:
    """The 'same' convention: 1-D max pooling without padding."""
    if nd != 1 or attrs.pool_type != "max":
        raise _err("Pooling", "the 'same' pooling convention supports 1-D max pooling only")
    if any(pad):
        raise _err("Pooling", "the 'same' pooling convention disables the use of pad")


def _pool_padded(x: torch.Tensor, cfg: _PoolCfg, spatial: tuple, value: float) -> torch.Tensor:
    """Pad (or crop) so that plain windows of ``kernel``/``stride`` give ``cfg.out``."""
    pads: list[int] = []
    for i in reversed(range(cfg.nd)):
        right = (cfg.out[i] - 1) * cfg.stride[i] + cfg.kernel[i] - cfg.pad_left[i] - spatial[i]
        pads += [cfg.pad_left[i], right]
    if not any(pads):
        return x
    return F.pad(x, pads, value=value)


def _window_sum(x: torch.Tensor, cfg: _PoolCfg) -> torch.Tensor:
    """Sum over every window of an already padded input."""
    if cfg.nd == 1:
        return F.avg_pool2d(x.unsqueeze(-2), (1, cfg.kernel[0]), (1, cfg.stride[0]),
                            divisor_override=1).squeeze(-2)
    return _AVG_POOL[cfg.nd](x, cfg.kernel, cfg.stride, divisor_override=1)


def _avg_counts(x: torch.Tensor, cfg: _PoolCfg, spatial: tuple,
                include_pad: bool) -> torch.Tensor:
    """MXNet's averaging divisor per output position (a broadcastable tensor)."""
    counts = None
    for i in range(cfg.nd):
        start = torch.arange(cfg.out[i], device=x.device, dtype=x.dtype) * cfg.stride[i]
        start = start - cfg.pad_left[i]
        end = start + cfg.kernel[i]
        if include_pad:
            c = end.clamp(max=spatial[i] + cfg.pad[i]) - start
        else:
            c = end.clamp(max=spatial[i]) - start.clamp(min=0)
        shape = [1] * (cfg.nd + 2)
        shape[2 + i] = cfg.out[i]
        c = c.clamp(min=1).reshape(shape)
        counts = c if counts is None else counts * c
    return counts


def _lp_pool(x: torch.Tensor, cfg: _PoolCfg, spatial: tuple, p: int) -> torch.Tensor:
    """Lp pooling as MXNet computes it: (sum x^p)^(1/p), signed for odd p."""
    xp = _pool_padded(x, cfg, spatial, 0.0)
    # MXNet: p=1 and p=3 use x and x^3 (not |x|), and the signed cube root.
    if p == 1:
        return _window_sum(xp, cfg)
    if p == 2:
        return _window_sum(xp * xp, cfg).sqrt()
    s = _window_sum(xp * xp * xp, cfg)
    return s.sign() * s.abs().pow(1.0 / 3.0)


class _ChannelsLastMaxPool(torch.autograd.Function):
    """2-D max pooling of a large NCHW tensor on CPU, computed on a channels-last copy.

    torch's NCHW max-pooling kernel scans one window at a time: on a 64x20x24x24 input
    it takes about 2.4 ms here, against 0.7 ms for the copy, the channels-last kernel
    (vectorized over channels) and the copy back. The indices are positions within each
    plane, so the gradient runs the NCHW backward kernel (which is fast) unchanged.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, kernel: tuple, stride: tuple, pad: tuple,
                ceil: bool) -> torch.Tensor:
        out, idx = torch.ops.aten.max_pool2d_with_indices(
            x.contiguous(memory_format=_CL), kernel, stride, pad, (1, 1), ceil)
        idx = idx.contiguous()
        ctx.save_for_backward(x, idx)
        ctx.cfg = (kernel, stride, pad, ceil)
        return out.contiguous()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor):
        x, idx = ctx.saved_tensors
        kernel, stride, pad, ceil = ctx.cfg
        dx = torch.ops.aten.max_pool2d_with_indices_backward(
            grad.contiguous(), x, kernel, stride, pad, (1, 1), ceil, idx)
        return dx, None, None, None, None


def _nchw_max_pool(x: torch.Tensor, cfg: _PoolCfg, ceil: bool) -> torch.Tensor:
    """2-D max pooling of a dense NCHW tensor; large ones on CPU via channels-last."""
    if (x.numel() < _CL_POOL_MIN or x.device.type != "cpu"
            or not x.is_contiguous() or x.is_contiguous(memory_format=_CL)):
        return F.max_pool2d(x, cfg.kernel, cfg.stride, cfg.pad, ceil_mode=ceil)
    if torch.is_grad_enabled() and x.requires_grad:
        return _ChannelsLastMaxPool.apply(x, cfg.kernel, cfg.stride, cfg.pad, ceil)
    return F.max_pool2d(x.contiguous(memory_format=_CL), cfg.kernel, cfg.stride, cfg.pad,
                        ceil_mode=ceil).contiguous()


def _pool_fast(attrs: Any, x: torch.Tensor, cfg: _PoolCfg) -> torch.Tensor:
    """torch's own pooling where its windows equal MXNet's."""
    ceil = attrs.pooling_convention == "full" and not attrs.global_pool
    if attrs.pool_type == "max":
        if cfg.nd == 2:
            return _nchw_max_pool(x, cfg, ceil)
        return _MAX_POOL[cfg.nd](x, cfg.kernel, cfg.stride, cfg.pad, ceil_mode=ceil)
    include = attrs.count_include_pad is not False
    return _AVG_POOL[cfg.nd](x, cfg.kernel, cfg.stride, cfg.pad, ceil_mode=ceil,
                             count_include_pad=include)


def _pool_general(attrs: Any, x: torch.Tensor, cfg: _PoolCfg, spatial: tuple) -> torch.Tensor:
    """Explicit padding for the cases torch's pooling cannot express."""
    kind = attrs.pool_type
    if kind == "max":
        # MXNet: a window lying entirely in the padding yields the dtype's lowest value.
        lowest = torch.finfo(x.dtype).min
        return _MAX_POOL[cfg.nd](_pool_padded(x, cfg, spatial, lowest), cfg.kernel, cfg.stride)
    if kind == "lp":
        return _lp_pool(x, cfg, spatial, attrs.p_value)
    total = _window_sum(_pool_padded(x, cfg, spatial, 0.0), cfg)
    if kind == "sum":
        return total
    return total / _avg_counts(x, cfg, spatial, attrs.count_include_pad is not False)


def _pool_compute(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """Max / average / sum / Lp pooling over 1, 2 or 3 spatial dims."""
    cfg = _pool_cfg(attrs, tuple(data.shape))
    _check_float("Pooling", data)
    if attrs.pool_type == "lp" and attrs.p_value not in (1, 2, 3):
        raise _err("Pooling", f"p_value must be 1, 2 or 3 for Lp pooling, got {attrs.p_value}")
    x = _to_channel_first(data) if cfg.channel_last else data
    spatial = tuple(x.shape[2:])
    if cfg.fast:
        out = _pool_fast(attrs, x, cfg)
    elif attrs.global_pool and attrs.pool_type in ("avg", "sum"):
        dims = tuple(range(2, 2 + cfg.nd))
        out = x.mean(dims, keepdim=True) if attrs.pool_type == "avg" else x.sum(dims, True)
    else:
        out = _pool_general(attrs, x, cfg, spatial)
    return _to_channel_last(out) if cfg.channel_last else out


def _pool_infer_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    """The output's spatial sizes from the pooling configuration (partial shapes are left
    to the generic inference)."""
    data = shapes[0]
    if data is None or 0 in data:
        return shapes, None
    cfg = _pool_cfg(attrs, tuple(data))
    if cfg.channel_last:
        return shapes, [(data[0], *cfg.out, data[-1])]
    return shapes, [(data[0], data[1], *cfg.out)]


register(OpDef(
    "Pooling", _pool_compute, work=tuning.elements, infer_shape=_pool_infer_shape,
    params=[
        Shape("kernel", ()), Enum("pool_type", ("avg", "lp", "max", "sum"), "max"),
        Bool("global_pool", False), Bool("cudnn_off", False),
        Enum("pooling_convention", ("full", "same", "valid"), "valid"),
        Shape("stride", ()), Shape("pad", ()), OptInt("p_value", None),
        OptBool("count_include_pad", None),
        Enum("layout", _POOL_LAYOUTS, None, optional=True),
    ],
    # MXNet: the 1.9.1 wheels (oneDNN builds) give max pooling a hidden workspace output,
    # which shows in node_row_ptr of the symbol JSON they write.
    total_outputs=lambda a: 2 if a.pool_type == "max" and a.layout in (
        None, "NCW", "NCHW", "NCDHW") else 1,
    infer_type=same_type_infer,
    channels_last=lambda a: "keep" if a.layout in (None, "NCHW") and (
        a.global_pool or len(a.kernel) == 2) else None,
    doc="Performs pooling on the input (1-D, 2-D or 3-D).\n\n"
        "``pooling_convention='valid'`` floors the output size, ``'full'`` ceils it\n"
        "(1 + ceil((x + 2*pad - kernel) / stride)); ``global_pool`` ignores kernel,\n"
        "stride and pad."))


# ---------------------------------------------------------------- Activation
_ACTIVATIONS = {
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    # MXNet: softrelu returns x itself above 20, as torch's softplus threshold does.
    "softrelu": F.softplus,
    "softsign": F.softsign,
}


def _act_compute(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    """Elementwise activation selected by ``act_type``."""
    _check_float("Activation", data)
    return _ACTIVATIONS[attrs.act_type](data)


register(OpDef(
    "Activation", _act_compute, work=tuning.elements,
    params=[Enum("act_type", tuple(sorted(_ACTIVATIONS)))], infer_shape=same_shape_infer,
    infer_shape_takes_outputs=True,
    infer_type=same_type_infer, listed_inputs=False, channels_last="keep",
    fusion_role=lambda a: "relu" if a.act_type == "relu" else None,
    doc="Applies an activation function element-wise to the input.\n\n"
        "act_type: relu, sigmoid, softrelu (log(1 + exp(x))), softsign (x / (1 + |x|)), tanh."))


# ---------------------------------------------------------------- LeakyReLU
def _lrelu_inputs(attrs: Any) -> list[str]:
    return ["data", "gamma"] if attrs.act_type == "prelu" else ["data"]


def _gamma_shape(gamma: tuple, data: tuple) -> tuple:
    """MXNet's expand_shape: gamma's axes line up with data axes 0 and 1 from the right."""
    result = [1] * len(data)
    s = len(gamma) - 1
    for i in range(len(data) - 1, -1, -1):
        if s >= 0 and i <= 1 and (data[i] == gamma[s] or gamma[s] == 1):
            result[i] = gamma[s]
            s -= 1
    if s != -1:
        raise _err("LeakyReLU", f"cannot broadcast gamma {gamma} to data {data}")
    return tuple(result)


_SELU_LAMBDA = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


class _MXSelu(torch.autograd.Function):
    """SELU with MXNet's gradient, computed from the output y."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        y = F.selu(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        # MXNet: selu_grad(y) = lambda * (alpha + y) for y <= 0, where y already carries
        # lambda (the mathematical derivative is y + lambda * alpha).
        return grad * torch.where(y > 0, _SELU_LAMBDA, _SELU_LAMBDA * (_SELU_ALPHA + y))


def _rrelu(attrs: Any, data: torch.Tensor, is_train: bool) -> torch.Tensor:
    """Randomized leaky ReLU: random slopes in training, their mean in inference."""
    if not is_train:
        return F.leaky_relu(data, (attrs.lower_bound + attrs.upper_bound) / 2)
    slopes = torch.empty_like(data).uniform_(attrs.lower_bound, attrs.upper_bound)
    return torch.where(data > 0, data, data * slopes)


def _lrelu_compute(attrs: Any, data: torch.Tensor, gamma: torch.Tensor | None = None,
                   *, is_train: bool = False) -> torch.Tensor:
    """Leaky ReLU family selected by ``act_type``."""
    _check_float("LeakyReLU", data)
    kind = attrs.act_type
    if kind == "leaky":
        return F.leaky_relu(data, attrs.slope)
    if kind == "prelu":
        g = gamma.reshape(_gamma_shape(tuple(gamma.shape), tuple(data.shape)))
        return torch.where(data > 0, data, data * g)
    if kind == "elu":
        return F.elu(data, attrs.slope)
    if kind == "selu":
        return _MXSelu.apply(data)
    if kind == "gelu":
        return F.gelu(data)
    return _rrelu(attrs, data, is_train)


def _lrelu_infer_shape(attrs: Any, shapes: list) -> tuple[list, list | None]:
    """The output has data's shape; PReLU's gamma defaults to (channels,). Declared, not
    run on meta tensors: torch's meta elu/gelu/selu import torch._dynamo (about 1 s)."""
    data = shapes[0]
    if data is None:
        return shapes, None
    if attrs.act_type != "prelu":
        return [data], [data]
    gamma = shapes[1]
    if gamma is None and len(data) > 1 and data[1]:
        gamma = (data[1],)
    if gamma is not None and 0 not in gamma and 0 not in data:
        _gamma_shape(gamma, data)
    return [data, gamma], [data]


register(OpDef(
    "LeakyReLU", _lrelu_compute,
    params=[
        Enum("act_type", ("elu", "gelu", "leaky", "prelu", "rrelu", "selu"), "leaky"),
        Float("slope", 0.25), Float("lower_bound", 0.125), Float("upper_bound", 0.334),
    ],
    inputs=_lrelu_inputs, infer_shape=_lrelu_infer_shape, train_aware=True,
    infer_type=same_type_infer,
    input_inits={"gamma": '["Constant", {"value": 0.25}]'},
    # MXNet: rrelu has a hidden second output (the mask of random slopes).
    total_outputs=lambda attrs: 2 if attrs.act_type == "rrelu" else 1,
    deterministic=lambda attrs: attrs.act_type != "rrelu",
    doc="Leaky rectified linear units: leaky, prelu (learned gamma), rrelu (random\n"
        "slope in training), elu, selu and gelu (erf form)."))

"""Indexing operators: take, Embedding, one_hot, gather_nd, scatter_nd, batch_take, Sequence*.

Index inputs arrive as float arrays in legacy MXNet; every compute casts them to int64
(truncating toward zero, as MXNet's cast does). Index inputs get no gradient.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..base import MXNetError
from .failure import failed
from .params import Bool, Dtype, Enum, Float, Int, Shape
from .registry import OpDef, register
from .tensor_util import torch_dtype

__all__: list[str] = []

_ALL_DTYPES = ("bfloat16", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")


def _as_index(t: torch.Tensor) -> torch.Tensor:
    """Float (or int) index array -> int64, truncating like MXNet's cast."""
    return t.detach().to(torch.int64)


def _norm_axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise MXNetError(f"Operator {op}: axis {axis} is out of range for a {ndim}-d input")
    return axis % ndim


# ---------------------------------------------------------------------- take
def _take_compute(attrs, a, indices):
    dim = _norm_axis("take", attrs.axis, a.dim())
    n = a.shape[dim]
    idx = _as_index(indices)
    if attrs.mode == "clip":
        idx = idx.clamp(0, n - 1)
    elif attrs.mode == "wrap":
        idx = torch.remainder(idx, n)
    elif idx.device.type != "meta" and bool(((idx < 0) | (idx >= n)).any()):
        # MXNet: mode='raise' rejects any index outside [0, n), negative ones included;
        # the kernel's check is reported where the result is waited for
        out = _take_rows(a, dim, idx.clamp(0, n - 1))
        bad = int(idx[(idx < 0) | (idx >= n)].reshape(-1)[0])
        return failed(MXNetError(f"Operator take: indices out of bound (index {bad} for axis "
                                 f"{attrs.axis} of size {n}, mode='raise')"), out)
    return _take_rows(a, dim, idx)


def _take_rows(a, dim: int, idx):
    out = torch.index_select(a, dim, idx.reshape(-1))
    return out.reshape(a.shape[:dim] + idx.shape + a.shape[dim + 1:])


register(OpDef(
    "take", _take_compute, inputs=("a", "indices"), fluent=True,
    params=[Int("axis", 0), Enum("mode", ("clip", "raise", "wrap"), "clip")],
    doc="Take elements from ``a`` along ``axis`` at ``indices``.\n\nParameters\n----------\n"
        "a : NDArray\nindices : NDArray\naxis : int, optional\n"
        "mode : {'clip', 'raise', 'wrap'}, optional\n    Out-of-bound handling (default "
        "'clip')."))


# ---------------------------------------------------------------------- Embedding
def _embedding_compute(attrs, data, weight):
    want = (attrs.input_dim, attrs.output_dim)
    if tuple(weight.shape) != want:
        raise MXNetError(f"Operator Embedding: weight shape {tuple(weight.shape)} is "
                         f"inconsistent with (input_dim, output_dim) = {want}")
    # MXNet: out-of-range indices are clipped into [0, input_dim).
    idx = _as_index(data).clamp(0, attrs.input_dim - 1)
    return F.embedding(idx, weight)


def _embedding_infer_shape(attrs, shapes):
    data, _ = shapes
    weight = (attrs.input_dim, attrs.output_dim)
    out = None if data is None or 0 in data else [tuple(data) + (attrs.output_dim,)]
    return [data, weight], out


def _embedding_infer_type(attrs, types):
    data, weight = types
    weight = weight or attrs.dtype
    return [data or "float32", weight], [weight]


register(OpDef(
    "Embedding", _embedding_compute, inputs=("data", "weight"),
    params=[Int("input_dim", doc="Vocabulary size of the input indices.", lower=1),
            Int("output_dim", doc="Dimension of the embedding vectors.", lower=1),
            Dtype("dtype", "float32", choices=_ALL_DTYPES), Bool("sparse_grad", False)],
    infer_shape=_embedding_infer_shape, infer_type=_embedding_infer_type,
    doc="Map integer indices to rows of ``weight`` (input_dim, output_dim).\n\nParameters\n"
        "----------\ndata : NDArray\n    Indices (as floats).\nweight : NDArray\n"
        "input_dim : int\noutput_dim : int\ndtype : str, optional\n"
        "sparse_grad : bool, optional"))
register(OpDef(
    "_contrib_SparseEmbedding", _embedding_compute, inputs=("data", "weight"),
    params=[Int("input_dim", doc="Vocabulary size of the input indices.", lower=1),
            Int("output_dim", doc="Dimension of the embedding vectors.", lower=1),
            Dtype("dtype", "float32", choices=_ALL_DTYPES), Bool("sparse_grad", False)],
    infer_shape=_embedding_infer_shape, infer_type=_embedding_infer_type,
    # MXNet: Embedding whose weight gradient has row_sparse storage (deprecated there);
    # mxtorch stores that gradient densely, as every row_sparse array
    doc="Map integer indices to rows of ``weight``; deprecated form of ``Embedding`` with\n"
        "a row_sparse weight gradient."))


# ---------------------------------------------------------------------- one_hot
def _one_hot_compute(attrs, indices):
    idx = _as_index(indices)
    # MXNet: indices outside [0, depth) give a row of off_value.
    hot = idx.unsqueeze(-1) == torch.arange(attrs.depth, device=idx.device)
    dt = torch_dtype(attrs.dtype)
    on = torch.tensor(attrs.on_value, device=idx.device).to(dt)
    off = torch.tensor(attrs.off_value, device=idx.device).to(dt)
    return torch.where(hot, on, off)


register(OpDef(
    "one_hot", _one_hot_compute, inputs=("indices",), fluent=True,
    params=[Int("depth"), Float("on_value", 1.0), Float("off_value", 0.0),
            Dtype("dtype", "float32", choices=_ALL_DTYPES)],
    doc="One-hot encode ``indices`` into a new last axis of size ``depth``.\n\nParameters\n"
        "----------\nindices : NDArray\ndepth : int\non_value : float, optional\n"
        "off_value : float, optional\ndtype : str, optional"))


# ---------------------------------------------------------------------- gather/scatter
def _nd_index(op: str, indices: torch.Tensor, shape: tuple) -> tuple:
    """Split an (M, ...) index array into M int64 index tensors for the first M dims."""
    if indices.dim() < 2:
        raise MXNetError(f"Operator {op}: indices must have at least 2 dimensions, got "
                         f"shape {tuple(indices.shape)}")
    m = indices.shape[0]
    if m > len(shape):
        raise MXNetError(f"Operator {op}: indices.shape[0] = {m} exceeds the number of "
                         f"dimensions of {tuple(shape)}")
    idx = _as_index(indices)
    return tuple(idx[i] for i in range(m))


class OutOfBoundsError(MXNetError, IndexError):
    """An index out of bounds: MXNet raises Python's ``IndexError`` for it (its error
    registry maps the C++ message prefix); it is an MXNetError too, as mxtorch's are."""


def _gather_nd_check_bound(indices: torch.Tensor, shape: tuple) -> None:
    """MXNet's bound check: for the first bad axis, report its last index outside
    [-size, size - 1] (compared in the index dtype, as MXNet compares)."""
    if indices.device.type == "meta" or indices.numel() == 0:
        return
    flat = indices.detach().reshape(indices.shape[0], -1)
    sizes = torch.tensor(shape[:flat.shape[0]], dtype=flat.dtype, device=flat.device)
    sizes = sizes.reshape(-1, 1)
    bad = (flat < -sizes) | (flat > sizes - 1)
    if not bool(bad.any()):
        return
    axis = int(bad.any(dim=1).nonzero()[0, 0])
    last = int(bad[axis].nonzero()[-1, 0])
    value = flat[axis, last].item()
    value = int(value) if float(value).is_integer() else value
    raise OutOfBoundsError(f"Operator gather_nd: index {value} is out of bounds for axis "
                           f"{axis} with size {shape[axis]}")


def _gather_nd_compute(attrs, data, indices):
    shape = tuple(data.shape)
    _nd_index("gather_nd", indices, shape)
    _gather_nd_check_bound(indices, shape)
    # MXNet: an index i becomes int(i + size) % size (negative ones wrap once)
    sizes = torch.tensor(shape[:indices.shape[0]], device=indices.device)
    sizes = sizes.reshape((-1,) + (1,) * (indices.dim() - 1))
    idx = torch.remainder((indices.detach() + sizes).to(torch.int64), sizes)
    return data[tuple(idx)]


def _scatter_nd_compute(attrs, data, indices):
    shape = tuple(attrs.shape)
    out = torch.zeros(shape, dtype=data.dtype, device=data.device)
    return out.index_put(_nd_index("scatter_nd", indices, shape), data)


register(OpDef(
    "gather_nd", _gather_nd_compute, inputs=("data", "indices"),
    doc="Gather slices of ``data`` at the coordinates in ``indices`` (shape (M, ...)).\n\n"
        "Parameters\n----------\ndata : NDArray\nindices : NDArray"))
register(OpDef(
    "scatter_nd", _scatter_nd_compute, inputs=("data", "indices"), params=[Shape("shape")],
    doc="Scatter ``data`` into a zero array of ``shape`` at the coordinates in ``indices``."
        "\n\nParameters\n----------\ndata : NDArray\nindices : NDArray\nshape : tuple"))


def _batch_take_compute(attrs, a, indices):
    if a.dim() != 2 or indices.shape[0] != a.shape[0]:
        raise MXNetError(f"Operator batch_take: expected a of shape (N, M) and indices of "
                         f"shape (N,), got {tuple(a.shape)} and {tuple(indices.shape)}")
    idx = _as_index(indices).reshape(-1, 1).clamp(0, a.shape[1] - 1)
    return torch.gather(a, 1, idx).reshape(indices.shape)


# MXNet: batch_take registers no gradient (deprecated in favour of pick)
register(OpDef("batch_take", _batch_take_compute, inputs=("a", "indices"),
               differentiable=False,
               doc="out[i] = a[i, indices[i]] (indices clipped into range)."))


# ---------------------------------------------------------------------- Sequence*
def _seq_inputs(attrs) -> list[str]:
    return ["data", "sequence_length"] if attrs.use_sequence_length else ["data"]


def _seq_infer_shape(attrs, shapes):
    if not attrs.use_sequence_length or shapes[0] is None:
        return shapes, None
    batch_axis = 1 if attrs.axis == 0 else 0
    return [shapes[0], (shapes[0][batch_axis],)], None


def _seq_check(op: str, attrs, data: torch.Tensor, allowed: tuple) -> None:
    if attrs.axis not in allowed:
        raise MXNetError(f"Operator {op}: axis must be one of {allowed}, got {attrs.axis}")
    if data.dim() < 2:
        raise MXNetError(f"Operator {op}: data must have at least 2 dimensions, got "
                         f"{tuple(data.shape)}")


def _step_mask(data: torch.Tensor, lengths: torch.Tensor, axis: int) -> torch.Tensor:
    """Boolean (T, B) or (B, T) mask of valid steps, broadcastable to ``data``."""
    steps = torch.arange(data.shape[axis], device=data.device)
    lens = _as_index(lengths).reshape(-1)
    mask = steps[:, None] < lens[None, :] if axis == 0 else lens[:, None] > steps[None, :]
    return mask.reshape(mask.shape + (1,) * (data.dim() - 2))


def _sequence_mask_compute(attrs, data, sequence_length=None):
    _seq_check("SequenceMask", attrs, data, (0, 1))
    if not attrs.use_sequence_length:
        return data.clone()
    mask = _step_mask(data, sequence_length, attrs.axis)
    value = torch.tensor(attrs.value, dtype=data.dtype, device=data.device)
    return torch.where(mask, data, value)


def _sequence_last_compute(attrs, data, sequence_length=None):
    _seq_check("SequenceLast", attrs, data, (0, 1))
    if not attrs.use_sequence_length:
        return data.select(attrs.axis, -1)
    steps = data.shape[attrs.axis]
    last = (_as_index(sequence_length).reshape(-1) - 1).clamp(0, steps - 1)
    batch = torch.arange(last.shape[0], device=data.device)
    return data[last, batch] if attrs.axis == 0 else data[batch, last]


def _sequence_reverse_compute(attrs, data, sequence_length=None):
    _seq_check("SequenceReverse", attrs, data, (0,))
    if not attrs.use_sequence_length:
        return data.flip(0)
    steps = torch.arange(data.shape[0], device=data.device)[:, None]
    lens = _as_index(sequence_length).reshape(1, -1)
    # MXNet: the first len[b] steps are reversed, the padding after them stays in place.
    src = torch.where(steps < lens, lens - 1 - steps, steps)
    src = src.reshape(src.shape + (1,) * (data.dim() - 2)).expand(data.shape)
    return torch.gather(data, 0, src)


_SEQ_PARAMS = [Bool("use_sequence_length", False)]
_SEQ_DOC = ("\n\nParameters\n----------\ndata : NDArray\n    (max_len, batch, ...) when "
            "axis=0.\nsequence_length : NDArray, optional\n    (batch,) lengths; only an "
            "input when use_sequence_length=True.\nuse_sequence_length : bool\naxis : int")

register(OpDef(
    "SequenceMask", _sequence_mask_compute, inputs=_seq_inputs,
    params=_SEQ_PARAMS + [Float("value", 0.0), Int("axis", 0)],
    infer_shape=_seq_infer_shape,
    doc="Set the steps past each sequence's length to ``value``." + _SEQ_DOC))
register(OpDef(
    "SequenceLast", _sequence_last_compute, inputs=_seq_inputs,
    params=_SEQ_PARAMS + [Int("axis", 0)], infer_shape=_seq_infer_shape,
    doc="The last valid step of each sequence." + _SEQ_DOC))
register(OpDef(
    "SequenceReverse", _sequence_reverse_compute, inputs=_seq_inputs,
    params=_SEQ_PARAMS + [Int("axis", 0)], infer_shape=_seq_infer_shape,
    doc="Reverse the valid steps of each sequence." + _SEQ_DOC))



# ---------------------------------------------------------------------- ravel / unravel
def _ravel_check(op: str, attrs) -> tuple:
    shape = tuple(attrs.shape)
    if not shape:
        raise MXNetError(f"Operator {op}: Empty shape parameter for {op.strip('_')} operator")
    return shape


def _ravel_compute(attrs, data):
    """(ndim, N) multi-indices -> (N,) flat indices into ``shape`` (row-major)."""
    shape = _ravel_check("_ravel_multi_index", attrs)
    if data.dim() != 2 or data.shape[0] != len(shape):
        raise MXNetError(f"Operator _ravel_multi_index: input of shape {tuple(data.shape)} "
                         f"must be 2-D with a first dimension of {len(shape)} (the number "
                         f"of dimensions of shape={shape})")
    idx = _as_index(data)
    flat = idx[0]
    # MXNet: the leading size is never used, so shape may start with -1
    for j in range(1, len(shape)):
        flat = flat * shape[j] + idx[j]
    return flat.to(data.dtype)


def _unravel_compute(attrs, data):
    """(N,) flat indices -> (ndim, N) multi-indices into ``shape`` (row-major)."""
    shape = _ravel_check("_unravel_index", attrs)
    if data.dim() != 1:
        raise MXNetError(f"Operator _unravel_index: input of shape {tuple(data.shape)} must "
                         "be 1-D")
    idx = _as_index(data)
    rows = []
    for size in reversed(shape[1:]):
        # MXNet: C++ integer division (truncating), so negative indices stay negative
        quot = torch.div(idx, size, rounding_mode="trunc")
        rows.append(idx - quot * size)
        idx = quot
    rows.append(idx)
    return torch.stack(rows[::-1]).to(data.dtype)


def _ravel_infer_shape(attrs, shapes, outs=None):
    ndim = len(_ravel_check("_ravel_multi_index", attrs))
    data = shapes[0]
    if data is not None and len(data) == 2 and data[1]:
        return [data], [(data[1],)]
    if outs and outs[0] is not None and outs[0][0]:
        return [(ndim, outs[0][0])], [tuple(outs[0])]
    return shapes, None


def _unravel_infer_shape(attrs, shapes, outs=None):
    ndim = len(_ravel_check("_unravel_index", attrs))
    data = shapes[0]
    if data is not None and len(data) == 1 and data[0]:
        return [data], [(ndim, data[0])]
    if outs and outs[0] is not None and len(outs[0]) == 2 and outs[0][1]:
        return [(outs[0][1],)], [tuple(outs[0])]
    return shapes, None


register(OpDef(
    "_ravel_multi_index", _ravel_compute, aliases=("ravel_multi_index",),
    params=[Shape("shape", ())], infer_shape=_ravel_infer_shape,
    infer_shape_takes_outputs=True,
    doc="Convert a batch of multi-indices (ndim, N) into flat indices (N,) for an array of "
        "``shape`` (its first entry may be -1).\n\nParameters\n----------\ndata : NDArray\n"
        "shape : tuple of int"))
register(OpDef(
    "_unravel_index", _unravel_compute, aliases=("unravel_index",),
    params=[Shape("shape", ())], infer_shape=_unravel_infer_shape,
    infer_shape_takes_outputs=True,
    doc="Convert flat indices (N,) into multi-indices (ndim, N) for an array of ``shape`` "
        "(its first entry may be -1).\n\nParameters\n----------\ndata : NDArray\n"
        "shape : tuple of int"))

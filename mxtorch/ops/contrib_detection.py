"""Contrib detection operators on boxes: ``_contrib_box_nms``, ``_contrib_box_iou``,
``_contrib_box_encode``, ``_contrib_box_decode`` and ``_contrib_bipartite_matching``.

The greedy suppressions (box_nms here; MultiBoxDetection and Proposal in
:mod:`contrib_multibox`) share :func:`greedy_keep`: boxes are visited in blocks, each block
first loses the boxes a box kept in an earlier block suppresses, then the greedy pass runs
inside the block on its small pairwise matrix. The result is the sequential greedy answer
(a box is dropped when a kept box before it suppresses it) with work proportional to the
kept boxes times all boxes, as MXNet's kernel.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..base import MXNetError
from .params import Bool, Enum, Float, Int
from .registry import OpDef, ShapeInfer, Shapes, register

__all__ = ["greedy_keep"]

_FORMATS = ("corner", "center")
_BLOCK = 256


# ---------------------------------------------------------------------------- greedy NMS
def greedy_keep(n: int, suppresses: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
                device: torch.device, limit: int | None = None) -> torch.Tensor:
    """Indices (ascending) the greedy pass keeps among ``n`` boxes in priority order.

    ``suppresses(ref, pos)`` gives the (len(ref), len(pos)) boolean matrix "kept box ref
    removes box pos"; ``limit`` stops once that many boxes are kept.
    """
    kept = torch.zeros(0, dtype=torch.int64, device=device)
    for start in range(0, n, _BLOCK):
        idx = torch.arange(start, min(n, start + _BLOCK), device=device)
        if kept.numel():
            idx = idx[~suppresses(kept, idx).any(0)]
        if idx.numel() == 0:
            continue
        inner = torch.triu(suppresses(idx, idx), diagonal=1).cpu().numpy()
        removed = np.zeros(idx.numel(), dtype=bool)
        for i in range(idx.numel()):
            if not removed[i]:
                removed |= inner[i]
        kept = torch.cat([kept, idx[torch.from_numpy(~removed).to(device)]])
        if limit is not None and kept.numel() >= limit:
            return kept[:limit]
    return kept


def _intersect(a1: torch.Tensor, a2: torch.Tensor, b1: torch.Tensor, b2: torch.Tensor,
               fmt: str) -> torch.Tensor:
    """The overlap of two 1-D extents (corner: [lo, hi]; center: [mid, size]), >= 0."""
    if fmt == "center":
        aw, bw = a2 / 2, b2 / 2
        a1, a2, b1, b2 = a1 - aw, a1 + aw, b1 - bw, b1 + bw
    w = torch.minimum(a2, b2) - torch.maximum(a1, b1)
    return torch.where(w > 0, w, torch.zeros_like(w))


def _area(box: torch.Tensor, fmt: str) -> torch.Tensor:
    """Box areas (0 where a side is negative), boxes in the last axis."""
    if fmt == "corner":
        w, h = box[..., 2] - box[..., 0], box[..., 3] - box[..., 1]
    else:
        w, h = box[..., 2], box[..., 3]
    return torch.where((w < 0) | (h < 0), torch.zeros_like(w), w * h)


def _pair_iou(ref: torch.Tensor, pos: torch.Tensor, fmt: str) -> torch.Tensor:
    """IoU of every ref box (rows) with every pos box (columns), MXNet's box_nms rule."""
    r, p = ref[:, None, :], pos[None, :, :]
    inter = (_intersect(r[..., 0], r[..., 2], p[..., 0], p[..., 2], fmt)
             * _intersect(r[..., 1], r[..., 3], p[..., 1], p[..., 3], fmt))
    out: torch.Tensor = inter / (_area(r, fmt) + _area(p, fmt) - inter)
    return out


# ---------------------------------------------------------------------------- box_nms
def _nms_check(attrs: Any, shape: tuple[int, ...]) -> None:
    """MXNet's BoxNMSShape checks."""
    name = "Operator _contrib_box_nms"
    if len(shape) < 2:
        raise MXNetError(f"{name}: input must have dim >= 2 the last two dimensions are "
                         f"num_box and box_width {shape} provided")
    width = shape[-1]
    expected = 6 if attrs.id_index >= 0 else 5
    if width < expected:
        raise MXNetError(f"{name}: the last dimension must have at least 5 elements namely "
                         f"(score, coordinates x 4) {width} provided, {expected} expected.")
    cs, ce, si = attrs.coord_start, attrs.coord_start + 3, attrs.score_index
    if not 0 <= si < width:
        raise MXNetError(f"{name}: score_index: {si} out of range: (0, {width})")
    if cs <= si <= ce:
        raise MXNetError(f"{name}: score_index: {si} conflict with coordinates: ({cs}, {ce}).")
    if cs < 0 or ce >= width:
        raise MXNetError(f"{name}: coordinates: ({cs}, {ce}) out of range:: (0, {width})")
    ii = attrs.id_index
    if ii >= 0:
        if ii >= width:
            raise MXNetError(f"{name}: id_index: {ii} out of range: (0, {width})")
        if cs <= ii <= ce:
            raise MXNetError(f"{name}: id_index: {ii} conflict with coordinates: ({cs}, {ce}).")
        if ii == si:
            raise MXNetError(f"{name}: id_index: {ii} conflict with score_index: {si}")


def _nms_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    data = shapes[0]
    if data is None:
        return shapes, None
    _nms_check(attrs, tuple(data))
    return shapes, [tuple(data)]


def _nms_suppress(attrs: Any, boxes: torch.Tensor,
                  ids: torch.Tensor | None) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    def suppresses(ref: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = _pair_iou(boxes[ref], boxes[pos], attrs.in_format) \
            > attrs.overlap_thresh
        if ids is not None:
            out &= ids[ref][:, None] == ids[pos][None, :]
        return out
    return suppresses


def _convert_format(out: torch.Tensor, attrs: Any) -> torch.Tensor:
    """Convert the output boxes to ``out_format``; rows whose first coordinate is < 0 stay."""
    cs = attrs.coord_start
    a, b, c, d = out[..., cs:cs + 4].unbind(-1)
    if attrs.out_format == "center":
        conv = torch.stack([(a + c) / 2, (b + d) / 2, c - a, d - b], dim=-1)
    else:
        conv = torch.stack([a - c / 2, b - d / 2, a + c / 2, b + d / 2], dim=-1)
    # MXNet: the -1 padding rows, and any box starting left of 0, are not converted
    coords = torch.where((a < 0)[..., None], out[..., cs:cs + 4], conv)
    return torch.cat([out[..., :cs], coords, out[..., cs + 4:]], dim=-1)


def _nms_forward(attrs: Any, data: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The suppressed boxes (-1 rows at the end) and, per output row, its input row."""
    shape = tuple(data.shape)
    n, width = shape[-2], shape[-1]
    x = data.reshape(-1, n, width)
    batches = x.shape[0]
    topk = n if attrs.topk < 0 else min(n, attrs.topk)
    if topk < 1:
        # MXNet: topk=0 gives the input back unchanged (no suppression, no conversion)
        return data.clone(), torch.arange(batches * n, device=data.device).reshape(shape[:-1])
    score = x[..., attrs.score_index]
    valid = score > attrs.valid_thresh
    if attrs.id_index >= 0:
        valid &= x[..., attrs.id_index] != attrs.background_id
    out = torch.full_like(x, -1)
    record = torch.full((batches, n), -1, dtype=torch.int64, device=data.device)
    cs = attrs.coord_start
    for b in range(batches):
        idx = valid[b].nonzero().squeeze(1)
        if idx.numel() == 0:
            continue
        idx = idx[torch.sort(score[b, idx], descending=True, stable=True).indices][:topk]
        rows = x[b, idx]
        ids = None
        if attrs.id_index >= 0 and not attrs.force_suppress:
            ids = torch.trunc(rows[:, attrs.id_index])
        kept = idx[greedy_keep(idx.numel(), _nms_suppress(attrs, rows[:, cs:cs + 4], ids),
                               data.device)]
        out[b, :kept.numel()] = x[b, kept]
        record[b, :kept.numel()] = kept + b * n
    if attrs.in_format != attrs.out_format:
        out = _convert_format(out, attrs)
    return out.reshape(shape), record.reshape(shape[:-1])


class _BoxNMS(torch.autograd.Function):
    """box_nms with MXNet's gradient: each output row's gradient goes to its input row."""

    @staticmethod
    def forward(ctx: Any, data: torch.Tensor, attrs: Any) -> torch.Tensor:
        out, record = _nms_forward(attrs, data)
        ctx.save_for_backward(record)
        ctx.shape = data.shape
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        (record,) = ctx.saved_tensors
        width = ctx.shape[-1]
        flat_rec = record.reshape(-1)
        rows = grad.reshape(-1, width)
        kept = flat_rec >= 0
        gin = torch.zeros_like(rows)
        gin[flat_rec[kept]] = rows[kept]
        return gin.reshape(ctx.shape), None


def _box_nms(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    _nms_check(attrs, tuple(data.shape))
    if data.requires_grad:
        out: torch.Tensor = _BoxNMS.apply(data, attrs)
        return out
    return _nms_forward(attrs, data)[0]


register(OpDef(
    "_contrib_box_nms", _box_nms, aliases=("_contrib_box_non_maximum_suppression",),
    params=[Float("overlap_thresh", 0.5, "Overlapping(IoU) threshold to suppress object "
                  "with smaller score."),
            Float("valid_thresh", 0.0, "Filter input boxes to those whose scores greater "
                  "than valid_thresh."),
            Int("topk", -1, "Apply nms to topk boxes with descending scores, -1 to no "
                "restriction."),
            Int("coord_start", 2, "Start index of the consecutive 4 coordinates."),
            Int("score_index", 1, "Index of the scores/confidence of boxes."),
            Int("id_index", -1, "Optional, index of the class categories, -1 to disable."),
            Int("background_id", -1, "Optional, id of the background class which will be "
                "ignored in nms."),
            Bool("force_suppress", False, "Optional, if set false and id_index is provided, "
                 "nms will only apply to boxes belongs to the same category"),
            Enum("in_format", _FORMATS, "corner", "The input box encoding type."),
            Enum("out_format", _FORMATS, "corner", "The output box encoding type.")],
    total_outputs=2, output_names=("output0",), infer_shape=_nms_shape,
    infer_type=lambda attrs, t: (t, [t[0]]),
    doc="""Apply non-maximum suppression to boxes.

The kept boxes come first, sorted by descending score; suppressed, invalid (score not
above ``valid_thresh``, or of ``background_id``) and boxes beyond ``topk`` are dropped and
the rows left at the end are filled with -1. The gradient of each output row flows back to
the input row it came from (0 for the dropped ones).

Parameters
----------
data : NDArray
    ``(..., num_box, box_width)``; leading dimensions are batches. By default a box is
    ``[id, score, xmin, ymin, xmax, ymax, ...]``.
overlap_thresh : float, default 0.5
valid_thresh : float, default 0
topk : int, default -1
coord_start : int, default 2
score_index : int, default 1
id_index : int, default -1
background_id : int, default -1
force_suppress : bool, default False
    Suppress across classes even when ``id_index`` is given.
in_format, out_format : {'corner', 'center'}, default 'corner'
"""))


# ---------------------------------------------------------------------------- box_iou
def _iou_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    lhs, rhs = shapes
    if lhs is None or rhs is None:
        return shapes, None
    for side, s in (("lhs", lhs), ("rhs", rhs)):
        if len(s) < 2:
            raise MXNetError(f"Operator _contrib_box_iou: {side} must have dim >= 2 "
                             f"{len(s)} provided")
        if s[-1] != 4:
            raise MXNetError(f"Operator _contrib_box_iou: last dimension of {side} must be 4 "
                             f"{s[-1]} provided")
    return shapes, [tuple(lhs[:-1]) + tuple(rhs[:-1])]


def _box_iou(attrs: Any, lhs: torch.Tensor, rhs: torch.Tensor) -> torch.Tensor:
    _iou_shape(attrs, [tuple(lhs.shape), tuple(rhs.shape)])
    a, b = lhs.detach().reshape(-1, 4), rhs.detach().reshape(-1, 4)
    fmt = attrs.format
    r, p = a[:, None, :], b[None, :, :]
    inter = (_intersect(r[..., 0], r[..., 2], p[..., 0], p[..., 2], fmt)
             * _intersect(r[..., 1], r[..., 3], p[..., 1], p[..., 3], fmt))
    iou = inter / (_area(r, fmt) + _area(p, fmt) - inter)
    iou = torch.where(inter <= 0, torch.zeros_like(iou), iou)
    return iou.reshape(tuple(lhs.shape[:-1]) + tuple(rhs.shape[:-1]))


register(OpDef(
    "_contrib_box_iou", _box_iou, inputs=("lhs", "rhs"),
    params=[Enum("format", _FORMATS, "corner", "The box encoding type.")],
    infer_shape=_iou_shape, infer_type=lambda attrs, t: (t, [t[0]]), zero_grad=True,
    doc="""Intersection-over-union of every box of ``lhs`` with every box of ``rhs``.

The gradient is zero, as in MXNet.

Parameters
----------
lhs : NDArray
    ``(a_1, ..., a_n, 4)``.
rhs : NDArray
    ``(b_1, ..., b_m, 4)``.
format : {'corner', 'center'}, default 'corner'

Returns
-------
NDArray
    ``(a_1, ..., a_n, b_1, ..., b_m)``.
"""))


# ---------------------------------------------------------------------------- bipartite_matching
def _matching_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    d = shapes[0]
    if d is None:
        return shapes, None
    if len(d) < 2:
        raise MXNetError(f"Operator _contrib_bipartite_matching: score matrix must have dim "
                         f">= 2 {len(d)} provided")
    return shapes, [tuple(d[:-1]), tuple(d[:-2]) + (d[-1],)]


def _bipartite_matching(attrs: Any, data: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy matching by score: each step takes the best pair of a free row and column."""
    _matching_shape(attrs, [tuple(data.shape)])
    shape = tuple(data.shape)
    rows, cols = shape[-2], shape[-1]
    s = data.detach().reshape(-1, rows * cols)
    if s.dtype == torch.float16:
        s = s.float()
    thr = float(np.float32(attrs.threshold))
    # ascending order: the smallest score first, i.e. the largest negated score
    key, thr_key = (-s, -thr) if attrs.is_ascend else (s, thr)
    batches = s.shape[0]
    row = torch.full((batches, rows), -1, dtype=torch.int64, device=data.device)
    col = torch.full((batches, cols), -1, dtype=torch.int64, device=data.device)
    free = torch.ones_like(s, dtype=torch.bool)
    active = torch.ones(batches, dtype=torch.bool, device=data.device)
    count = torch.zeros(batches, dtype=torch.int64, device=data.device)
    neg = torch.tensor(-float("inf"), dtype=key.dtype, device=data.device)
    for _ in range(min(rows, cols)):
        best, at = torch.where(free, key, neg).max(dim=1)
        take = active & free.any(1) & (best > thr_key)
        active &= take
        if not bool(active.any()):
            break
        b = take.nonzero().squeeze(1)
        r, c = at[b] // cols, at[b] % cols
        row[b, r], col[b, c] = c, r
        grid = free[b].reshape(-1, rows, cols)
        grid[torch.arange(b.numel()), r, :] = False
        grid[torch.arange(b.numel()), :, c] = False
        free[b] = grid.reshape(-1, rows * cols)
        count[b] += 1
        # MXNet: the match that exceeds topk is kept before the loop stops (topk + 1)
        if attrs.topk > 0:
            active &= count <= attrs.topk
    return (row.to(data.dtype).reshape(shape[:-1]),
            col.to(data.dtype).reshape(shape[:-2] + (cols,)))


register(OpDef(
    "_contrib_bipartite_matching", _bipartite_matching, num_outputs=2,
    params=[Bool("is_ascend", False, "Use ascend order for scores instead of descending. "
                 "Please set threshold accordingly."),
            Float("threshold", doc="Ignore matching when score < thresh, if "
                  "is_ascend=false, or ignore score > thresh, if is_ascend=true."),
            Int("topk", -1, "Limit the number of matches to topk, set -1 for no limit")],
    infer_shape=_matching_shape, infer_type=lambda attrs, t: (t, [t[0], t[0]]),
    zero_grad=True,
    doc="""Greedy bipartite matching of a score matrix ``(B, N, M)``.

Pairs are taken in order of score (descending, or ascending with ``is_ascend``) while the
score passes ``threshold`` and both the row and the column are still free.

Parameters
----------
data : NDArray
    ``(..., N, M)`` scores.
is_ascend : bool, default False
threshold : float
topk : int, default -1

Returns
-------
x : NDArray
    ``(..., N)``: the column matched to each row, -1 where none.
y : NDArray
    ``(..., M)``: the row matched to each column, -1 where none.
"""))


# ---------------------------------------------------------------------------- box_encode
def _encode_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    s, m, a, r = shapes[:4]
    name = "Operator _contrib_box_encode"
    if s is not None and len(s) != 2:
        raise MXNetError(f"{name}: samples shape must have dim == 2, {len(s)} provided")
    if m is not None and len(m) < 2:
        raise MXNetError(f"{name}: matches shape must have dim == 2, {len(m)} provided")
    for what, x in (("anchors", a), ("refs", r)):
        if x is None:
            continue
        if len(x) < 3:
            raise MXNetError(f"{name}: {what} shape must have dim == 3, {len(x)} provided")
        if x[-1] != 4:
            raise MXNetError(f"{name}: last dimension of {what} must be 4, {x[-1]} provided")
    shapes = list(shapes[:4]) + [shapes[4] or (4,), shapes[5] or (4,)]
    if a is None:
        return shapes, None
    return shapes, [tuple(a), tuple(a)]


def _center(box: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """(x, y, width, height) of corner boxes."""
    w = box[..., 2] - box[..., 0]
    h = box[..., 3] - box[..., 1]
    return box[..., 0] + w * 0.5, box[..., 1] + h * 0.5, w, h


def _box_encode(attrs: Any, samples: torch.Tensor, matches: torch.Tensor,
                anchors: torch.Tensor, refs: torch.Tensor, means: torch.Tensor,
                stds: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    inputs = (samples, matches, anchors, refs, means, stds)
    _encode_shape(attrs, [tuple(t.shape) for t in inputs])
    b, n = anchors.shape[0], anchors.shape[1]
    anchors = anchors.detach().reshape(b, n, 4)
    refs = refs.detach().reshape(b, -1, 4)
    samples, matches = samples.detach().reshape(b, n), matches.detach().reshape(b, n)
    m = refs.shape[1]
    idx = matches.to(torch.int64).clamp(0, max(m - 1, 0))
    ref = refs.gather(1, idx[..., None].expand(b, n, 4))
    rx, ry, rw, rh = _center(ref)
    ax, ay, aw, ah = _center(anchors)
    raw = torch.stack([(rx - ax) / aw, (ry - ay) / ah, torch.log(rw / aw),
                       torch.log(rh / ah)], dim=-1)
    valid = (samples > 0.5)[..., None]
    targets = torch.where(valid, (raw - means.detach()) / stds.detach(),
                          torch.zeros_like(raw))
    masks = valid.to(anchors.dtype).expand(b, n, 4).clone()
    return targets, masks


register(OpDef(
    "_contrib_box_encode", _box_encode, num_outputs=2,
    inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
    infer_shape=_encode_shape, infer_type=lambda attrs, t: (t, [t[0], t[0]]),
    zero_grad=True,
    doc="""Encode training targets of matched boxes as normalized center offsets.

Parameters
----------
samples : NDArray
    ``(B, N)``: +1 positive, -1 negative, 0 ignore.
matches : NDArray
    ``(B, N)``: the reference box of each anchor, in ``[0, M)``.
anchors : NDArray
    ``(B, N, 4)`` corner boxes.
refs : NDArray
    ``(B, M, 4)`` corner boxes.
means, stds : NDArray
    ``(4,)``: subtracted from, then dividing, the encoded values.

Returns
-------
targets, masks : NDArray
    ``(B, N, 4)`` each; targets are 0 and masks 0 where the sample is not positive.
"""))


# ---------------------------------------------------------------------------- box_decode
def _decode_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    d, a = shapes
    name = "Operator _contrib_box_decode"
    if d is not None:
        if len(d) != 3:
            raise MXNetError(f"{name}: data shape must have dim == 3, {len(d)} provided")
        if d[-1] != 4:
            raise MXNetError(f"{name}: last dimension of data must be 4, {d[-1]} provided")
    if a is not None:
        if len(a) < 3:
            raise MXNetError(f"{name}: anchors shape must have dim == 3, {len(a)} provided")
        if a[-1] != 4:
            raise MXNetError(f"{name}: last dimension of anchors must be 4, {a[-1]} provided")
    return shapes, None if d is None else [tuple(d)]


def _box_decode(attrs: Any, data: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
    _decode_shape(attrs, [tuple(data.shape), tuple(anchors.shape)])
    n = data.shape[1]
    if anchors.numel() != n * 4:
        raise MXNetError(f"Operator _contrib_box_decode: anchors {tuple(anchors.shape)} must "
                         f"hold one box per box of data {tuple(data.shape)}")
    x = data.detach()
    a = anchors.detach().reshape(1, n, 4)
    ax, ay, aw, ah = a.unbind(-1)
    if attrs.format == "corner":
        aw, ah = aw - ax, ah - ay
        ax, ay = ax + aw * 0.5, ay + ah * 0.5
    ox = x[..., 0] * attrs.std0 * aw + ax
    oy = x[..., 1] * attrs.std1 * ah + ay
    dw, dh = x[..., 2] * attrs.std2, x[..., 3] * attrs.std3
    if attrs.clip > 0:
        dw, dh = torch.clamp(dw, max=attrs.clip), torch.clamp(dh, max=attrs.clip)
    ow = torch.exp(dw) * aw * 0.5
    oh = torch.exp(dh) * ah * 0.5
    return torch.stack([ox - ow, oy - oh, ox + ow, oy + oh], dim=-1)


register(OpDef(
    "_contrib_box_decode", _box_decode, inputs=("data", "anchors"),
    params=[Float("std0", 1.0, "value to be divided from the 1st encoded values"),
            Float("std1", 1.0, "value to be divided from the 2nd encoded values"),
            Float("std2", 1.0, "value to be divided from the 3rd encoded values"),
            Float("std3", 1.0, "value to be divided from the 4th encoded values"),
            Float("clip", -1.0, "If larger than 0, bounding box target will be clipped to "
                  "this value."),
            Enum("format", _FORMATS, "center", "The box encoding type of the anchors.")],
    infer_shape=_decode_shape, infer_type=lambda attrs, t: (t, [t[0]]), zero_grad=True,
    doc="""Decode center-offset predictions against anchors into corner boxes.

Parameters
----------
data : NDArray
    ``(B, N, 4)`` predicted offsets.
anchors : NDArray
    ``(1, N, 4)`` in ``format``.
std0, std1, std2, std3 : float, default 1
    Multiply the encoded values.
clip : float, default -1
    If > 0, the width and height offsets are clipped to it before the exponential.
format : {'corner', 'center'}, default 'center'
"""))

"""Contrib anchor-based detection operators: ``_contrib_MultiBoxPrior``,
``_contrib_MultiBoxTarget``, ``_contrib_MultiBoxDetection`` (SSD) and ``_contrib_Proposal``,
``_contrib_MultiProposal`` (Faster R-CNN's region proposals).

MXNet computes these on the CPU in float32 with its own rounding points (some steps in
double); the arithmetic below follows the same order so the values agree bit for bit where
it matters (thresholds, sorting). The gradients are zero, as in MXNet.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..base import MXNetError
from .contrib_detection import greedy_keep
from .params import Bool, Float, FloatOrShape, Int
from .registry import OpDef, ShapeInfer, Shapes, register

__all__: list[str] = []


# ---------------------------------------------------------------------------- MultiBoxPrior
def _prior_check(attrs: Any) -> None:
    name = "Operator _contrib_MultiBoxPrior"
    if len(attrs.steps) != 2:
        raise MXNetError(f"{name}: Step ndim must be 2: (step_y, step_x), got {attrs.steps}")
    if len(attrs.offsets) != 2 or not all(0.0 <= o <= 1.0 for o in attrs.offsets):
        raise MXNetError(f"{name}: offsets must be two values in [0, 1], got {attrs.offsets}")
    if not attrs.sizes or not attrs.ratios:
        raise MXNetError(f"{name}: sizes and ratios must not be empty")
    if attrs.steps[0] * attrs.steps[1] < 0:
        raise MXNetError(f"{name}: Must specify both step_y and step_x")


def _prior_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    d = shapes[0]
    if d is None:
        return shapes, None
    _prior_check(attrs)
    if len(d) < 4:
        raise MXNetError(f"Operator _contrib_MultiBoxPrior: Input data should be 4D: "
                         f"batch-channel-y-x, got {tuple(d)}")
    k = len(attrs.sizes) + len(attrs.ratios) - 1
    return shapes, [(1, d[2] * d[3] * k, 4)]


def _prior_half_sizes(attrs: Any, h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Half widths and heights of the anchors of one location, in float32 as MXNet."""
    f = np.float32
    half_w, half_h = [], []
    shapes = [(s, attrs.ratios[0]) for s in attrs.sizes]
    shapes += [(attrs.sizes[0], r) for r in attrs.ratios[1:]]
    for size, ratio in shapes:
        root = np.sqrt(f(ratio))
        half_w.append(f(size) * f(h) / f(w) * root / f(2))
        half_h.append(f(size) / root / f(2))
    return np.array(half_w, np.float32), np.array(half_h, np.float32)


def _multibox_prior(attrs: Any, data: torch.Tensor) -> torch.Tensor:
    _prior_shape(attrs, [tuple(data.shape)])
    h, w = data.shape[2], data.shape[3]
    f = np.float32
    step_y, step_x = f(attrs.steps[0]), f(attrs.steps[1])
    if step_y <= 0 or step_x <= 0:
        step_y, step_x = f(1) / f(h), f(1) / f(w)
    dev = data.device
    cy = (torch.arange(h, dtype=torch.float32, device=dev) + f(attrs.offsets[0])) * step_y
    cx = (torch.arange(w, dtype=torch.float32, device=dev) + f(attrs.offsets[1])) * step_x
    hw, hh = (torch.from_numpy(v).to(dev) for v in _prior_half_sizes(attrs, h, w))
    cy, cx = cy[:, None, None], cx[None, :, None]
    k = hw.numel()
    boxes = torch.stack([(cx - hw).expand(h, w, k), (cy - hh).expand(h, w, k),
                         (cx + hw).expand(h, w, k), (cy + hh).expand(h, w, k)], dim=-1)
    if attrs.clip:
        boxes = boxes.clamp(0.0, 1.0)
    return boxes.reshape(1, -1, 4).to(data.dtype)


register(OpDef(
    "_contrib_MultiBoxPrior", _multibox_prior, aliases=("_npx_multibox_prior",),
    params=[FloatOrShape("sizes", (1.0,), "List of sizes of generated MultiBoxPriores."),
            FloatOrShape("ratios", (1.0,), "List of aspect ratios of generated "
                         "MultiBoxPriores."),
            Bool("clip", False, "Whether to clip out-of-boundary boxes."),
            FloatOrShape("steps", (-1.0, -1.0), "Priorbox step across y and x, -1 for auto "
                         "calculation."),
            FloatOrShape("offsets", (0.5, 0.5), "Priorbox center offsets, y and x "
                         "respectively")],
    infer_shape=_prior_shape, infer_type=lambda attrs, t: (t, [t[0]]), zero_grad=True,
    doc="""Generate prior (anchor) boxes for every location of a feature map.

Each location gets ``len(sizes) + len(ratios) - 1`` corner boxes: every size with the
first ratio, then the first size with every other ratio, in that order.

Parameters
----------
data : NDArray
    ``(N, C, H, W)``; only H and W are read.
sizes : tuple of float, default (1,)
ratios : tuple of float, default (1,)
clip : bool, default False
    Clip the boxes to [0, 1].
steps : tuple of float, default (-1, -1)
    ``(step_y, step_x)``; -1 uses 1/H and 1/W.
offsets : tuple of float, default (0.5, 0.5)

Returns
-------
NDArray
    ``(1, H * W * num_anchors, 4)``.
"""))


# ---------------------------------------------------------------------------- MultiBoxTarget
def _target_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    a, lab, p = shapes
    if a is None or lab is None or p is None:
        return shapes, None
    name = "Operator _contrib_MultiBoxTarget"
    if len(a) != 3 or a[0] != 1 or a[2] != 4:
        raise MXNetError(f"{name}: Anchors are shared across batches: anchor must be "
                         f"(1, num_anchors, 4), got {tuple(a)}")
    if len(lab) != 3 or lab[2] < 5:
        raise MXNetError(f"{name}: Label should be [batch, num_labels, label_width >= 5] "
                         f"tensor, got {tuple(lab)}")
    if len(p) != 3 or p[2] != a[1]:
        raise MXNetError(f"{name}: Number of anchors mismatch: cls_pred {tuple(p)} must be "
                         f"[batch, num_classes, {a[1]}]")
    if len(attrs.variances) != 4:
        raise MXNetError(f"{name}: variances must have 4 values, got {attrs.variances}")
    return shapes, [(lab[0], a[1] * 4), (lab[0], a[1] * 4), (lab[0], a[1])]


def _overlaps(anchors: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
    """IoU (num_anchors, num_gt) with MXNet's unclamped areas and 0 for an empty union."""
    a, g = anchors[:, None, :], gt[None, :, :]
    iw = torch.clamp(torch.minimum(a[..., 2], g[..., 2]) - torch.maximum(a[..., 0], g[..., 0]),
                     min=0)
    ih = torch.clamp(torch.minimum(a[..., 3], g[..., 3]) - torch.maximum(a[..., 1], g[..., 1]),
                     min=0)
    inter = iw * ih
    union = ((a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
             + (g[..., 2] - g[..., 0]) * (g[..., 3] - g[..., 1]) - inter)
    safe = torch.where(union == 0, torch.ones_like(union), union)
    return torch.where(union == 0, torch.zeros_like(inter), inter / safe)


def _num_valid_gt(labels: torch.Tensor) -> int:
    """Labels up to the first class -1 (MXNet requires the whole padding row to be -1)."""
    pad = (labels[:, 0] == -1).nonzero()
    if pad.numel() == 0:
        return int(labels.shape[0])
    first = int(pad[0, 0])
    if bool((labels[first, 1:5] != -1).any()):
        raise MXNetError("Operator _contrib_MultiBoxTarget: a label row with class -1 must "
                         f"be padding (-1 everywhere), got {labels[first, :5].tolist()}")
    return first


def _match_anchors(iou: torch.Tensor, overlap_threshold: float) -> tuple[torch.Tensor, ...]:
    """Positive anchors and their ground truth: first a greedy best-pair matching, then
    (overlap_threshold > 0) every anchor whose best IoU passes the threshold."""
    n, g = iou.shape
    flag = torch.zeros(n, dtype=torch.bool, device=iou.device)
    match = torch.full((n,), -1, dtype=torch.int64, device=iou.device)
    free = iou.clone()
    for _ in range(g):
        flat = free.reshape(-1)
        at = flat.argmax()
        if not bool(flat[at] > 1e-6):
            break
        j, k = int(at) // g, int(at) % g
        flag[j], match[j] = True, k
        free[j, :] = -1
        free[:, k] = -1
    best_gt = iou.argmax(dim=1)
    best_iou = iou.gather(1, best_gt[:, None]).squeeze(1)
    if overlap_threshold > 0:
        extra = ~flag & (best_iou > overlap_threshold)
        match = torch.where(extra, best_gt, match)
        flag |= extra
    return flag, match, best_iou


def _mine_negatives(attrs: Any, flag: torch.Tensor, best_iou: torch.Tensor,
                    cls_pred: torch.Tensor) -> torch.Tensor:
    """The negative anchors: all others, or the hardest (lowest background probability)."""
    if attrs.negative_mining_ratio <= 0:
        return ~flag
    n = flag.numel()
    num_pos = int(flag.sum())
    num_neg = min(int(np.float32(num_pos) * np.float32(attrs.negative_mining_ratio)),
                  n - num_pos)
    neg = torch.zeros_like(flag)
    if num_neg <= 0:
        return neg
    cand = (~flag & (best_iou < attrs.negative_mining_thresh)).nonzero().squeeze(1)
    if cand.numel() < num_neg:
        raise MXNetError(f"Operator _contrib_MultiBoxTarget: {cand.numel()} negative "
                         f"candidates for {num_neg} negative samples")
    logits = cls_pred[:, cand]
    prob = torch.exp(logits[0] - logits.max(0).values) / \
        torch.exp(logits - logits.max(0).values).sum(0)
    order = torch.sort(prob, stable=True).indices[:num_neg]
    neg[cand[order]] = True
    return neg


def _loc_targets(attrs: Any, anchors: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
    """Center offsets of the matched boxes over their anchors, divided by the variances."""
    a, g = anchors.float(), gt.float()
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    ax, ay = (a[:, 0] + a[:, 2]) * 0.5, (a[:, 1] + a[:, 3]) * 0.5
    gw, gh = g[:, 2] - g[:, 0], g[:, 3] - g[:, 1]
    gx, gy = (g[:, 0] + g[:, 2]) * 0.5, (g[:, 1] + g[:, 3]) * 0.5
    vx, vy, vw, vh = (float(np.float32(v)) for v in attrs.variances)
    return torch.stack([(gx - ax) / aw / vx, (gy - ay) / ah / vy,
                        torch.log(gw / aw) / vw, torch.log(gh / ah) / vh], dim=-1)


def _multibox_target(attrs: Any, anchor: torch.Tensor, label: torch.Tensor,
                     cls_pred: torch.Tensor) -> tuple[torch.Tensor, ...]:
    _target_shape(attrs, [tuple(anchor.shape), tuple(label.shape), tuple(cls_pred.shape)])
    anchors = anchor.detach().reshape(-1, 4)
    label, cls_pred = label.detach(), cls_pred.detach()
    batches, n = label.shape[0], anchors.shape[0]
    dt = anchor.dtype
    loc = torch.zeros(batches, n, 4, dtype=dt, device=anchor.device)
    mask = torch.zeros_like(loc)
    cls = torch.full((batches, n), attrs.ignore_label, dtype=dt, device=anchor.device)
    for b in range(batches):
        num_gt = _num_valid_gt(label[b])
        if num_gt == 0:
            continue
        gt = label[b, :num_gt]
        iou = _overlaps(anchors, gt[:, 1:5]).float()
        pos, match, best_iou = _match_anchors(iou, attrs.overlap_threshold)
        neg = _mine_negatives(attrs, pos, best_iou, cls_pred[b])
        idx = match.clamp(min=0)
        cls[b] = torch.where(pos, gt[idx, 0] + 1, torch.where(neg, 0.0, cls[b]))
        mask[b] = pos[:, None].to(dt).expand(n, 4)
        targets = _loc_targets(attrs, anchors, gt[idx, 1:5]).to(dt)
        loc[b] = torch.where(pos[:, None], targets, torch.zeros_like(targets))
    return loc.reshape(batches, -1), mask.reshape(batches, -1), cls


register(OpDef(
    "_contrib_MultiBoxTarget", _multibox_target, aliases=("_npx_multibox_target",),
    inputs=("anchor", "label", "cls_pred"), num_outputs=3,
    output_names=["loc_target", "loc_mask", "cls_target"],
    params=[Float("overlap_threshold", 0.5, "Anchor-GT overlap threshold to be regarded as "
                  "a positive match."),
            Float("ignore_label", -1.0, "Label for ignored anchors."),
            Float("negative_mining_ratio", -1.0, "Max negative to positive samples ratio, "
                  "use -1 to disable mining"),
            Float("negative_mining_thresh", 0.5, "Threshold used for negative mining."),
            Int("minimum_negative_samples", 0, "Minimum number of negative samples."),
            FloatOrShape("variances", (0.1, 0.1, 0.2, 0.2), "Variances to be encoded in box "
                         "regression target.")],
    infer_shape=_target_shape, infer_type=lambda attrs, t: (t, [t[0]] * 3), zero_grad=True,
    doc="""Compute SSD training targets for anchors from padded ground-truth labels.

Anchors are matched to ground truths greedily by best IoU, then any anchor whose best IoU
exceeds ``overlap_threshold`` is positive too. Negatives are all other anchors, or with
``negative_mining_ratio > 0`` the ones below ``negative_mining_thresh`` with the lowest
background probability, ``ratio`` per positive. (MXNet's CPU operator does not read
``minimum_negative_samples``.)

Parameters
----------
anchor : NDArray
    ``(1, num_anchors, 4)`` corner boxes.
label : NDArray
    ``(B, num_labels, >= 5)`` rows ``[class, xmin, ymin, xmax, ymax, ...]``, padded with -1.
cls_pred : NDArray
    ``(B, num_classes, num_anchors)`` class scores (for mining).

Returns
-------
loc_target, loc_mask : NDArray
    ``(B, num_anchors * 4)``.
cls_target : NDArray
    ``(B, num_anchors)``: class + 1 for positives, 0 for negatives, ``ignore_label`` else.
"""))


# ---------------------------------------------------------------------------- MultiBoxDetection
def _detection_shape(attrs: Any, shapes: Shapes) -> ShapeInfer:
    c, lo, a = shapes
    if c is None or lo is None or a is None:
        return shapes, None
    name = "Operator _contrib_MultiBoxDetection"
    if len(c) != 3 or len(lo) != 2 or len(a) != 3:
        raise MXNetError(f"{name}: expected cls_prob 3-D, loc_pred 2-D and anchor 3-D, got "
                         f"{tuple(c)}, {tuple(lo)} and {tuple(a)}")
    if c[2] != a[1]:
        raise MXNetError(f"{name}: Number of anchors mismatch: cls_prob {tuple(c)}, "
                         f"anchor {tuple(a)}")
    if c[2] * 4 != lo[1]:
        raise MXNetError(f"{name}: # anchors mismatch with # loc: cls_prob {tuple(c)}, "
                         f"loc_pred {tuple(lo)}")
    if a[2] != 4:
        raise MXNetError(f"{name}: anchor boxes must have 4 values, got {tuple(a)}")
    if len(attrs.variances) != 4:
        raise MXNetError(f"{name}: Variance size must be 4, got {attrs.variances}")
    return shapes, [(c[0], a[1], 6)]


def _decode_locations(attrs: Any, anchors: torch.Tensor, loc: torch.Tensor) -> torch.Tensor:
    """Corner boxes from anchors and SSD offsets (clipped to [0, 1] with ``clip``)."""
    al, at, ar, ab = anchors.unbind(-1)
    aw, ah = ar - al, ab - at
    ax, ay = (al + ar) / 2, (at + ab) / 2
    vx, vy, vw, vh = (float(np.float32(v)) for v in attrs.variances)
    ox = loc[..., 0] * vx * aw + ax
    oy = loc[..., 1] * vy * ah + ay
    ow = torch.exp(loc[..., 2] * vw) * aw / 2
    oh = torch.exp(loc[..., 3] * vh) * ah / 2
    out = torch.stack([ox - ow, oy - oh, ox + ow, oy + oh], dim=-1)
    return out.clamp(0.0, 1.0) if attrs.clip else out


def _detection_suppress(attrs: Any, rows: torch.Tensor) -> Callable[..., torch.Tensor]:
    box = rows[:, 2:6]
    area = (box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1])

    def suppresses(ref: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        a, b = box[ref][:, None, :], box[pos][None, :, :]
        w = torch.clamp(torch.minimum(a[..., 2], b[..., 2]) - torch.maximum(a[..., 0], b[..., 0]),
                        min=0)
        h = torch.clamp(torch.minimum(a[..., 3], b[..., 3]) - torch.maximum(a[..., 1], b[..., 1]),
                        min=0)
        inter = w * h
        union = area[ref][:, None] + area[pos][None, :] - inter
        iou = torch.where(union <= 0, torch.zeros_like(inter), inter / union)
        out: torch.Tensor = iou >= attrs.nms_threshold
        if not attrs.force_suppress:
            out &= rows[ref, 0][:, None] == rows[pos, 0][None, :]
        return out
    return suppresses


def _detect_one(attrs: Any, rows: torch.Tensor, out: torch.Tensor) -> None:
    """Fill one image's output from its (num_anchors, 6) candidate rows."""
    kept = rows[rows[:, 0] >= 0]
    count = kept.shape[0]
    out[:count] = kept
    if count < 1 or attrs.nms_threshold <= 0 or attrs.nms_threshold > 1:
        return
    order = torch.sort(kept[:, 1], descending=True, stable=True).indices
    nkeep = count
    if 0 < attrs.nms_topk < count:
        # MXNet: the rows past nms_topk keep their unsorted contents with the id set to -1
        nkeep = attrs.nms_topk
        out[nkeep:count, 0] = -1
    top = kept[order[:nkeep]]
    keep = greedy_keep(nkeep, _detection_suppress(attrs, top), rows.device)
    dropped = torch.ones(nkeep, dtype=torch.bool, device=rows.device)
    dropped[keep] = False
    top[dropped, 0] = -1
    out[:nkeep] = top


def _multibox_detection(attrs: Any, cls_prob: torch.Tensor, loc_pred: torch.Tensor,
                        anchor: torch.Tensor) -> torch.Tensor:
    _detection_shape(attrs, [tuple(cls_prob.shape), tuple(loc_pred.shape),
                             tuple(anchor.shape)])
    prob, loc = cls_prob.detach(), loc_pred.detach()
    batches, _, n = prob.shape
    if prob.shape[1] > 1:
        arg = prob[:, 1:, :].argmax(dim=1)   # the first best class, as MXNet's strict >
        score = prob[:, 1:, :].gather(1, arg[:, None, :]).squeeze(1)
        has = score > -1
        cls_id = torch.where(has, arg + 1, torch.zeros_like(arg))
        score = torch.where(has, score, torch.full_like(score, -1))
    else:
        score = torch.full((batches, n), -1, dtype=prob.dtype, device=prob.device)
        cls_id = torch.zeros((batches, n), dtype=torch.int64, device=prob.device)
    cls_id = torch.where((cls_id > 0) & (score < attrs.threshold), 0, cls_id)
    boxes = _decode_locations(attrs, anchor.detach().reshape(1, n, 4),
                              loc.reshape(batches, n, 4))
    rows = torch.cat([(cls_id - 1).to(prob.dtype)[..., None], score[..., None], boxes], -1)
    out = torch.full((batches, n, 6), -1, dtype=prob.dtype, device=prob.device)
    for b in range(batches):
        _detect_one(attrs, rows[b], out[b])
    return out


register(OpDef(
    "_contrib_MultiBoxDetection", _multibox_detection, aliases=("_npx_multibox_detection",),
    inputs=("cls_prob", "loc_pred", "anchor"),
    params=[Bool("clip", True, "Clip out-of-boundary boxes."),
            Float("threshold", 0.01, "Threshold to be a positive prediction."),
            Int("background_id", 0, "Background id."),
            Float("nms_threshold", 0.5, "Non-maximum suppression threshold."),
            Bool("force_suppress", False, "Suppress all detections regardless of class_id."),
            FloatOrShape("variances", (0.1, 0.1, 0.2, 0.2), "Variances to be decoded from "
                         "box regression output."),
            Int("nms_topk", -1, "Keep maximum top k detections before nms, -1 for no "
                "limit.")],
    infer_shape=_detection_shape, infer_type=lambda attrs, t: (t, [t[0]]), zero_grad=True,
    doc="""Turn SSD class probabilities and box offsets into detections.

Each anchor takes its best non-background class (class 0 is the background; MXNet's CPU
operator does not read ``background_id``); those scoring at least ``threshold`` are
decoded, sorted by score and suppressed per class (IoU >= ``nms_threshold``). Suppressed
rows keep their values with the class id -1; the unused rows are -1.

Parameters
----------
cls_prob : NDArray
    ``(B, num_classes, num_anchors)``.
loc_pred : NDArray
    ``(B, num_anchors * 4)``.
anchor : NDArray
    ``(1, num_anchors, 4)``.
clip : bool, default True
threshold : float, default 0.01
background_id : int, default 0
nms_threshold : float, default 0.5
force_suppress : bool, default False
variances : tuple of float, default (0.1, 0.1, 0.2, 0.2)
nms_topk : int, default -1

Returns
-------
NDArray
    ``(B, num_anchors, 6)`` rows ``[class_id, score, xmin, ymin, xmax, ymax]``.
"""))


# ---------------------------------------------------------------------------- Proposal
def _proposal_params() -> list[Any]:
    return [Int("rpn_pre_nms_top_n", 6000, "Number of top scoring boxes to keep before "
                "applying NMS to RPN proposals"),
            Int("rpn_post_nms_top_n", 300, "Number of top scoring boxes to keep after "
                "applying NMS to RPN proposals"),
            Float("threshold", 0.7, "NMS value, below which to suppress."),
            Int("rpn_min_size", 16, "Minimum height or width in proposal"),
            FloatOrShape("scales", (4.0, 8.0, 16.0, 32.0), "Used to generate anchor windows "
                         "by enumerating scales"),
            FloatOrShape("ratios", (0.5, 1.0, 2.0), "Used to generate anchor windows by "
                         "enumerating ratios"),
            Int("feature_stride", 16, "The size of the receptive field each unit in the "
                "convolution layer of the rpn"),
            Bool("output_score", False, "Add score to outputs"),
            Bool("iou_loss", False, "Usage of IoU Loss")]


def _proposal_shape(multi: bool) -> Callable[[Any, Shapes], ShapeInfer]:
    def infer(attrs: Any, shapes: Shapes) -> ShapeInfer:
        c = shapes[0]
        if c is None:
            return shapes, None
        if len(c) != 4:
            raise MXNetError(f"Operator _contrib_{'Multi' if multi else ''}Proposal: "
                             f"cls_prob must be 4-D, got {tuple(c)}")
        shapes = [c, (c[0], c[1] * 2, c[2], c[3]), (c[0], 3)]
        rows = attrs.rpn_post_nms_top_n * (c[0] if multi else 1)
        outs: Shapes = [(rows, 5), (rows, 1)]
        return shapes, outs[:2 if attrs.output_score else 1]
    return infer


def _base_anchors(attrs: Any) -> np.ndarray:
    """The (ratios x scales, 4) anchors at the origin, in float32 as MXNet makes them."""
    f = np.float32
    end = f(attrs.feature_stride - 1.0)
    w = h = end + f(1)
    ctr = f(0.5 * float(w - f(1)))
    out = []
    for ratio in attrs.ratios:
        for scale in attrs.scales:
            size_ratios = np.floor(w * h / f(ratio))
            new_w = np.floor(np.sqrt(size_ratios) + f(0.5)) * f(scale)
            new_h = np.floor(new_w / f(scale) * f(ratio) + f(0.5)) * f(scale)
            out.append([ctr - f(0.5) * (new_w - f(1)), ctr - f(0.5) * (new_h - f(1)),
                        ctr + f(0.5) * (new_w - f(1)), ctr + f(0.5) * (new_h - f(1))])
    return np.array(out, dtype=np.float32)


def _apply_deltas(attrs: Any, boxes: torch.Tensor, deltas: torch.Tensor,
                  info: torch.Tensor) -> torch.Tensor:
    """Predicted boxes clipped to the image (MXNet's mix of float and double steps)."""
    x1, y1, x2, y2 = boxes.unbind(-1)
    d = deltas.unbind(-1)
    if attrs.iou_loss:
        px1, py1, px2, py2 = x1 + d[0], y1 + d[1], x2 + d[2], y2 + d[3]
    else:
        w, h = x2 - x1 + 1, y2 - y1 + 1
        cx = (x1.double() + 0.5 * (w.double() - 1)).float()
        cy = (y1.double() + 0.5 * (h.double() - 1)).float()
        pcx, pcy = d[0] * w + cx, d[1] * h + cy
        pw, ph = (torch.exp(d[2]) * w).double(), (torch.exp(d[3]) * h).double()
        px1 = (pcx.double() - 0.5 * (pw - 1)).float()
        py1 = (pcy.double() - 0.5 * (ph - 1)).float()
        px2 = (pcx.double() + 0.5 * (pw - 1)).float()
        py2 = (pcy.double() + 0.5 * (ph - 1)).float()
    lim_w, lim_h = info[1] - 1, info[0] - 1
    return torch.stack([px1.clamp(max=lim_w).clamp(min=0), py1.clamp(max=lim_h).clamp(min=0),
                        px2.clamp(max=lim_w).clamp(min=0), py2.clamp(max=lim_h).clamp(min=0)],
                       dim=-1)


def _proposal_suppress(attrs: Any, boxes: torch.Tensor) -> Callable[..., torch.Tensor]:
    area = (boxes[:, 2] - boxes[:, 0] + 1) * (boxes[:, 3] - boxes[:, 1] + 1)

    def suppresses(ref: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        a, b = boxes[ref][:, None, :], boxes[pos][None, :, :]
        w = torch.clamp(torch.minimum(a[..., 2], b[..., 2])
                        - torch.maximum(a[..., 0], b[..., 0]) + 1, min=0)
        h = torch.clamp(torch.minimum(a[..., 3], b[..., 3])
                        - torch.maximum(a[..., 1], b[..., 1]) + 1, min=0)
        inter = w * h
        out: torch.Tensor = inter / (area[ref][:, None] + area[pos][None, :] - inter) \
            > attrs.threshold
        return out
    return suppresses


def _propose_one(attrs: Any, anchors: torch.Tensor, score: torch.Tensor,
                 deltas: torch.Tensor, info: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """One image: (rpn_post_nms_top_n, 4) boxes and their scores."""
    height, width = score.shape[0], score.shape[1]
    fs = attrs.feature_stride
    real_h, real_w = int(info[0].item() / fs), int(info[1].item() / fs)
    if real_h > height or real_w > width:
        raise MXNetError(f"Operator _contrib_Proposal: im_info {info.tolist()} is larger than "
                         f"the feature map ({height}, {width}) times feature_stride {fs}")
    boxes = _apply_deltas(attrs, anchors, deltas, info)
    score = score.clone()
    score[real_h:, :, :] = -1
    score[:, real_w:, :] = -1
    boxes, score = boxes.reshape(-1, 4), score.reshape(-1)
    min_size = np.float32(attrs.rpn_min_size) * np.float32(info[2].item())
    small = ((boxes[:, 2] - boxes[:, 0] + 1) < min_size) | \
        ((boxes[:, 3] - boxes[:, 1] + 1) < min_size)
    # MXNet: a too-small box is enlarged by min_size / 2 on each side and scored -1
    grow = torch.tensor([-1.0, -1.0, 1.0, 1.0], device=boxes.device) * float(min_size / 2)
    boxes = torch.where(small[:, None], boxes + grow, boxes)
    score = torch.where(small, torch.full_like(score, -1), score)
    count = score.numel()
    pre = min(attrs.rpn_pre_nms_top_n if attrs.rpn_pre_nms_top_n > 0 else count, count)
    post = min(attrs.rpn_post_nms_top_n, pre)
    order = torch.sort(score, descending=True, stable=True).indices[:pre]
    boxes, score = boxes[order], score[order]
    keep = greedy_keep(pre, _proposal_suppress(attrs, boxes), boxes.device, limit=post)
    # MXNet: the rows past the kept ones repeat them from the start
    pick = keep[torch.arange(attrs.rpn_post_nms_top_n, device=keep.device) % keep.numel()]
    return boxes[pick], score[pick]


def _proposal(multi: bool) -> Callable[..., Any]:
    def compute(attrs: Any, cls_prob: torch.Tensor, bbox_pred: torch.Tensor,
                im_info: torch.Tensor) -> Any:
        name = f"Operator _contrib_{'Multi' if multi else ''}Proposal"
        _proposal_shape(multi)(attrs, [tuple(cls_prob.shape), None, None])
        batches, two_a, height, width = cls_prob.shape
        num = two_a // 2
        if not multi and batches != 1:
            raise MXNetError(f"{name}: Sorry, multiple images each device is not "
                             f"implemented (cls_prob {tuple(cls_prob.shape)}).")
        if num != len(attrs.ratios) * len(attrs.scales):
            raise MXNetError(f"{name}: cls_prob has {num} anchors per location, ratios x "
                             f"scales gives {len(attrs.ratios) * len(attrs.scales)}")
        if tuple(bbox_pred.shape) != (batches, num * 4, height, width):
            raise MXNetError(f"{name}: bbox_pred {tuple(bbox_pred.shape)} must be "
                             f"{(batches, num * 4, height, width)}")
        dev = cls_prob.device
        base = torch.from_numpy(_base_anchors(attrs)).to(dev)
        fs = attrs.feature_stride
        sx = torch.arange(width, device=dev, dtype=torch.float32) * fs
        sy = torch.arange(height, device=dev, dtype=torch.float32) * fs
        shift = torch.stack(torch.broadcast_tensors(sx[None, :], sy[:, None],
                                                    sx[None, :], sy[:, None]), -1)
        anchors = base[None, None] + shift[:, :, None, :]          # (H, W, A, 4)
        prob = cls_prob.detach().float()[:, num:].permute(0, 2, 3, 1)   # (B, H, W, A)
        deltas = bbox_pred.detach().float().reshape(batches, num, 4, height, width) \
            .permute(0, 3, 4, 1, 2)
        info = im_info.detach().float()
        rois, scores = [], []
        for b in range(batches):
            boxes, score = _propose_one(attrs, anchors, prob[b], deltas[b], info[b])
            index = torch.full((boxes.shape[0], 1), float(b), device=dev)
            rois.append(torch.cat([index, boxes], dim=1))
            scores.append(score[:, None])
        out = torch.cat(rois).to(cls_prob.dtype)
        if attrs.output_score:
            return out, torch.cat(scores).to(cls_prob.dtype)
        return out
    return compute


_PROPOSAL_DOC = """Generate region proposals from RPN scores and box deltas{what}.

Anchors of ``scales`` x ``ratios`` at every ``feature_stride`` are moved by the deltas,
clipped to the image, those under ``rpn_min_size * scale`` (or in the padded part of the
feature map) scored -1, the best ``rpn_pre_nms_top_n`` suppressed at IoU > ``threshold``
and the first ``rpn_post_nms_top_n`` kept (repeated when fewer survive).

Parameters
----------
cls_prob : NDArray
    ``({batch}, 2 * num_anchors, H, W)``; the second half are the object scores.
bbox_pred : NDArray
    ``({batch}, 4 * num_anchors, H, W)``.
im_info : NDArray
    ``({batch}, 3)``: image height, width and scale.
rpn_pre_nms_top_n : int, default 6000
rpn_post_nms_top_n : int, default 300
threshold : float, default 0.7
rpn_min_size : int, default 16
scales : tuple of float, default (4, 8, 16, 32)
ratios : tuple of float, default (0.5, 1, 2)
feature_stride : int, default 16
output_score : bool, default False
iou_loss : bool, default False
    The deltas are corner offsets instead of center/size ones.

Returns
-------
output : NDArray
    ``({rows}, 5)`` rows ``[batch_index, x1, y1, x2, y2]``.
score : NDArray
    ``({rows}, 1)``, with ``output_score``.
"""

for _name, _multi in (("_contrib_Proposal", False), ("_contrib_MultiProposal", True)):
    register(OpDef(
        _name, _proposal(_multi), inputs=("cls_prob", "bbox_pred", "im_info"),
        params=_proposal_params(), total_outputs=2,
        num_outputs=lambda attrs: 2 if attrs.output_score else 1,
        output_names=lambda attrs: ["output", "score"][:2 if attrs.output_score else 1],
        infer_shape=_proposal_shape(_multi),
        infer_type=lambda attrs, t: (t, [t[0]] * (2 if attrs.output_score else 1)),
        zero_grad=True,
        doc=_PROPOSAL_DOC.format(
            what=" for a batch of images" if _multi else " (one image)",
            batch="B" if _multi else "1",
            rows="B * rpn_post_nms_top_n" if _multi else "rpn_post_nms_top_n")))

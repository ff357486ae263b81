"""Contrib detection operators (box_nms, box_iou, box_encode/decode, bipartite_matching,
MultiBoxPrior/Target/Detection, Proposal/MultiProposal) vs values recorded with MXNet 1.9.1."""
import json

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError

C = mx.nd.contrib
PAD = [-1.0] * 6
BOXES = [[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
         [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8],
         [0, 0.5, 0.12, 0.1, 0.2, 0.22], PAD]


def close(out, expected):
    np.testing.assert_allclose(out.asnumpy(), np.array(expected, np.float32), rtol=1e-5,
                               atol=1e-5)


def test_box_nms_classes_ties_and_gradient():
    # score ties (0.5, 0.5) keep input order; -1 rows are invalid; per-class suppression
    x = mx.nd.array(BOXES)
    x.attach_grad()
    with mx.autograd.record():
        y = C.box_nms(x, overlap_thresh=0.1, id_index=0, score_index=1, coord_start=2)
    y.backward(mx.nd.arange(36).reshape((6, 6)))
    close(y, [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2],
              [1, 0.4, 0.1, 0.1, 0.2, 0.2], PAD, PAD, PAD])
    close(x.grad, [list(range(6, 12)), list(range(12, 18)), [0] * 6, list(range(6)),
                   [0] * 6, [0] * 6])


def test_box_nms_options():
    x = mx.nd.array(BOXES)
    top2 = [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2]] + [PAD] * 4
    close(C.box_nms(x, overlap_thresh=0.1, id_index=0, force_suppress=True), top2)
    close(C.box_nms(x, topk=2, overlap_thresh=0.9), top2)
    close(C.box_non_maximum_suppression(x, topk=2, overlap_thresh=0.9), top2)
    close(C.box_nms(x, overlap_thresh=0.1, id_index=0, background_id=0, out_format="center"),
          [[2, 0.6, 0.6, 0.65, 0.2, 0.3], [1, 0.4, 0.15, 0.15, 0.1, 0.1]] + [PAD] * 4)
    # MXNet: a box with a negative first coordinate is not converted; topk=0 is identity
    x = mx.nd.array([[0, 0.5, -0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                     [0, 0.5, 0.5, 0.5, 0.7, 0.8]])
    close(C.box_nms(x, overlap_thresh=0.1, out_format="center"),
          [[0, 0.5, -0.1, 0.1, 0.2, 0.2], [0, 0.5, 0.6, 0.65, 0.2, 0.3], PAD])
    close(C.box_nms(x, topk=0, out_format="center"), x.asnumpy())
    close(C.box_nms(x, valid_thresh=0.9), [PAD] * 3)
    # batches are independent; center input format
    xb = mx.nd.array([[[0, 0.9, 0.5, 0.5, 1, 1], [0, 0.8, 0.6, 0.5, 1, 1]],
                      [[0, 0.1, 0.5, 0.5, 1, 1], [0, 0.8, 2, 2, 1, 1]]])
    close(C.box_nms(xb, in_format="center", overlap_thresh=0.5),
          [[[0, 0.9, 0, 0, 1, 1], PAD], [[0, 0.8, 1.5, 1.5, 2.5, 2.5], [0, 0.1, 0, 0, 1, 1]]])
    close(C.box_nms(xb, in_format="center", out_format="center", overlap_thresh=0.5),
          [[[0, 0.9, 0.5, 0.5, 1, 1], PAD], [[0, 0.8, 2, 2, 1, 1], [0, 0.1, 0.5, 0.5, 1, 1]]])


def test_box_nms_symbol_and_errors():
    out = mx.sym.contrib.box_nms(mx.sym.var("d"), id_index=0)
    assert out.infer_shape(d=(2, 3, 6))[1] == [(2, 3, 6)]
    assert len(out.list_outputs()) == 1
    loaded = mx.sym.load_json(out.tojson())
    assert json.loads(out.tojson())["nodes"][1]["op"] == "_contrib_box_nms"
    ex = loaded.bind(mx.cpu(), {"d": mx.nd.array([BOXES])})
    close(ex.forward()[0], C.box_nms(mx.nd.array([BOXES]), id_index=0))
    with pytest.raises(MXNetError, match="at least 5 elements"):
        C.box_nms(mx.nd.ones((3, 4)))
    with pytest.raises(MXNetError, match="id_index: 1 conflict with score_index"):
        C.box_nms(mx.nd.ones((3, 6)), id_index=1)
    with pytest.raises(MXNetError, match="coordinates"):
        C.box_nms(mx.nd.ones((3, 6)), coord_start=3)
    with pytest.raises(MXNetError, match="in_format"):
        C.box_nms(mx.nd.ones((3, 6)), in_format="xywh")


def test_box_nms_hybridized_matches_imperative():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.contrib.box_nms(x, overlap_thresh=0.3, id_index=0, topk=3)
    net = Net()
    rng = np.random.RandomState(0)
    xy = rng.rand(2, 20, 2)
    x = mx.nd.array(np.concatenate([rng.randint(0, 2, (2, 20, 1)), rng.rand(2, 20, 1), xy,
                                    xy + 0.3], -1))
    expected = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_array_equal(net(x).asnumpy(), expected)
    assert (expected[:, 3:] == -1).all() and (expected[:, :3, 0] >= 0).all()


def test_box_iou():
    close(C.box_iou(mx.nd.array([[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]]),
                    mx.nd.array([[0.25, 0.25, 0.75, 0.75], [2, 2, 3, 3]])),
          [[0.142857, 0.0], [0.142857, 0.0]])
    close(C.box_iou(mx.nd.array([[0.5, 0.5, 1.0, 1.0]]), mx.nd.array([[0.75, 0.75, 0.5, 0.5]]),
                    format="center"), [[0.25]])
    out = mx.sym.contrib.box_iou(mx.sym.var("a"), mx.sym.var("b"))
    assert out.infer_shape(a=(2, 3, 4), b=(5, 4))[1] == [(2, 3, 5)]
    a = mx.nd.array([[0, 0, 1, 1]])
    a.attach_grad()
    with mx.autograd.record():   # MXNet: box_iou's gradient is zero
        (C.box_iou(a, mx.nd.array([[0.5, 0.5, 1, 1]])) + a.sum()).backward()
    assert a.grad.asnumpy().tolist() == [[1, 1, 1, 1]]
    with pytest.raises(MXNetError, match="last dimension of rhs must be 4"):
        C.box_iou(a, mx.nd.ones((2, 5)))


def test_bipartite_matching():
    s = mx.nd.array([[0.5, 0.6, 0.6], [0.1, 0.2, 0.9], [0.3, 0.4, 0.05]])
    x, y = C.bipartite_matching(s, threshold=0.15)
    close(x, [1, 2, 0])
    close(y, [2, 0, 1])
    x, y = C.bipartite_matching(s, threshold=0.35, is_ascend=True)
    close(x, [-1, 0, 2])
    close(y, [1, -1, 2])
    # MXNet: the match past topk is still made (topk + 1 matches)
    x, y = C.bipartite_matching(mx.nd.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]]),
                                threshold=1e-12, topk=1)
    close(x, [1, -1, 0])
    close(y, [2, 0])
    out = mx.sym.contrib.bipartite_matching(mx.sym.var("s"), threshold=0.1)
    assert out.infer_shape(s=(4, 5, 6))[1] == [(4, 5), (4, 6)]
    with pytest.raises(MXNetError, match="score matrix must have dim >= 2"):
        C.bipartite_matching(mx.nd.ones((3,)), threshold=0.1)


def test_box_encode_decode():
    an = mx.nd.array([[[0, 0, 1, 1], [0.5, 0.5, 1.5, 2]]])
    refs = mx.nd.array([[[0.1, 0.2, 0.9, 1.4], [0, 0, 2, 2]]])
    t, m = C.box_encode(mx.nd.array([[1, 0]]), mx.nd.array([[1, 0]]), an, refs,
                        mx.nd.array([0, 0, 0, 0]), mx.nd.array([0.1, 0.1, 0.2, 0.2]))
    close(t, [[[5, 5, 3.465736, 3.465736], [0, 0, 0, 0]]])
    close(m, [[[1, 1, 1, 1], [0, 0, 0, 0]]])
    pred = mx.nd.array([[[0.1, -0.2, 0.3, 2.0], [0, 0, 0, 0]]])
    close(C.box_decode(pred, an, format="corner", clip=1.0, std2=2.0),
          [[[-0.311059, -1.059141, 1.51106, 1.659141], [0.5, 0.5, 1.5, 2.0]]])
    close(C.box_decode(pred, mx.nd.array([[[0.5, 0.5, 1, 1], [1, 1, 2, 2]]])),
          [[[-0.074929, -3.394528, 1.27493, 3.994528], [0, 0, 2, 2]]])
    enc = mx.sym.contrib.box_encode(*[mx.sym.var(n) for n in "smarMS"])
    shapes = enc.infer_shape(s=(2, 7), m=(2, 7), a=(2, 7, 4), r=(2, 3, 4))
    assert shapes[0][-2:] == [(4,), (4,)] and shapes[1] == [(2, 7, 4), (2, 7, 4)]
    dec = mx.sym.contrib.box_decode(mx.sym.var("d"), mx.sym.var("a"))
    assert dec.infer_shape(d=(2, 7, 4), a=(1, 7, 4))[1] == [(2, 7, 4)]
    with pytest.raises(MXNetError, match="data shape must have dim == 3"):
        C.box_decode(mx.nd.ones((7, 4)), mx.nd.ones((1, 7, 4)))
    with pytest.raises(MXNetError, match="last dimension of anchors must be 4"):
        C.box_decode(mx.nd.ones((1, 7, 4)), mx.nd.ones((1, 7, 5)))


def test_multibox_prior():
    close(C.MultiBoxPrior(mx.nd.zeros((1, 1, 1, 2)), sizes=(0.5, 0.8), ratios=(1, 4)),
          [[[0.125, 0.25, 0.375, 0.75], [0.05, 0.1, 0.45, 0.9], [0, 0.375, 0.5, 0.625],
            [0.625, 0.25, 0.875, 0.75], [0.55, 0.1, 0.95, 0.9], [0.5, 0.375, 1, 0.625]]])
    close(C.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 1)), sizes=(0.9,), clip=True, steps=(0.4, 0.5),
                          offsets=(0.25, 0.5)),
          [[[0, 0, 1, 0.55], [0, 0.05, 1, 0.95]]])
    out = mx.sym.contrib.MultiBoxPrior(mx.sym.var("d"), sizes=(0.2, 0.4), ratios=(1, 2, 3))
    assert out.infer_shape(d=(2, 8, 5, 6))[1] == [(1, 120, 4)]
    assert mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 2), dtype="float64")).dtype \
        == np.float64
    with pytest.raises(MXNetError, match="Step ndim must be 2"):
        C.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 2)), steps=(0.1,))


ANCHORS = [[[0, 0, 0.5, 0.5], [0.4, 0.4, 1, 1], [0, 0.5, 0.5, 1], [0.6, 0, 1, 0.4]]]
LABELS = [[[1, 0.05, 0.05, 0.5, 0.55], [0, 0.5, 0.45, 1, 1], [-1] * 5], [[-1] * 5] * 3]
CLS_PRED = [[[2, 0.1, 0.3, 1.5], [0, 1, 0.2, 0.1]], [[0, 0, 0, 0], [1, 1, 1, 1]]]
LOC = [0.5, 1.0, -0.526803, 0.0, 0.833334, 0.416667, -0.911608, -0.435057] + [0] * 8


def test_multibox_target():
    loc, mask, cls = C.MultiBoxTarget(mx.nd.array(ANCHORS), mx.nd.array(LABELS),
                                      mx.nd.array(CLS_PRED))
    close(loc, [LOC, [0] * 16])
    close(mask, [[1] * 8 + [0] * 8, [0] * 16])
    close(cls, [[2, 1, 0, 0], [-1] * 4])    # an image without labels: all ignored
    # hard negative mining: one negative per two positives, the least background-like
    loc, mask, cls = C.MultiBoxTarget(mx.nd.array(ANCHORS), mx.nd.array(LABELS[:1]),
                                      mx.nd.array(CLS_PRED[:1]), negative_mining_ratio=0.5,
                                      overlap_threshold=0.9)
    close(cls, [[2, 1, 0, -1]])
    out = mx.sym.contrib.MultiBoxTarget(*[mx.sym.var(n) for n in ("a", "l", "c")])
    assert out.list_outputs()[-1].endswith("cls_target")
    assert out.infer_shape(a=(1, 10, 4), l=(3, 2, 5), c=(3, 4, 10))[1] == \
        [(3, 40), (3, 40), (3, 10)]
    with pytest.raises(MXNetError, match="Number of anchors mismatch"):
        C.MultiBoxTarget(mx.nd.array(ANCHORS), mx.nd.array(LABELS), mx.nd.ones((2, 2, 3)))
    with pytest.raises(MXNetError, match="padding"):
        C.MultiBoxTarget(mx.nd.array(ANCHORS), mx.nd.array([[[-1, 0, 0, 1, 1]]]),
                         mx.nd.ones((1, 2, 4)))


def test_multibox_detection():
    prob = mx.nd.array([[[0.1, 0.2, 0.7, 0.05], [0.6, 0.5, 0.2, 0.9], [0.3, 0.3, 0.1, 0.05]]])
    loc = mx.nd.array([[0.1, 0.1, 0, 0, 0, 0, 0, 0, 0.5, -0.5, 1, 1, 0, 0, 0, 0]])
    anc = mx.nd.array([[[0, 0, 0.5, 0.5], [0.05, 0.05, 0.5, 0.5], [0.5, 0.5, 1, 1],
                        [0.1, 0, 0.55, 0.5]]])
    close(C.MultiBoxDetection(prob, loc, anc),
          [[[0, 0.9, 0.1, 0, 0.55, 0.5], [-1, 0.6, 0.005, 0.005, 0.505, 0.505],
            [-1, 0.5, 0.05, 0.05, 0.5, 0.5], [0, 0.2, 0.469649, 0.419649, 1, 1]]])
    # MXNet: rows past nms_topk keep their unsorted values with the id set to -1
    close(C.MultiBoxDetection(prob, loc, anc, force_suppress=True, nms_topk=2, clip=False),
          [[[0, 0.9, 0.1, 0, 0.55, 0.5], [-1, 0.6, 0.005, 0.005, 0.505, 0.505],
            [-1, 0.2, 0.469649, 0.419649, 1.080351, 1.030351],
            [-1, 0.9, 0.1, 0, 0.55, 0.5]]])
    out = mx.sym.contrib.MultiBoxDetection(*[mx.sym.var(n) for n in ("c", "l", "a")])
    assert out.infer_shape(c=(2, 3, 10), l=(2, 40), a=(1, 10, 4))[1] == [(2, 10, 6)]
    with pytest.raises(MXNetError, match="# anchors mismatch with # loc"):
        C.MultiBoxDetection(prob, mx.nd.ones((1, 12)), anc)


PROP_KW = dict(rpn_pre_nms_top_n=6, threshold=0.5, scales=(1, 2), ratios=(1,),
               feature_stride=16, rpn_min_size=4)


def _rpn_inputs():
    cls = mx.nd.array(np.arange(24).reshape(1, 4, 2, 3) % 7 / 7.0)
    bbox = mx.nd.array((np.arange(48).reshape(1, 8, 2, 3) % 5 - 2) / 10.0)
    return cls, bbox


def test_proposal():
    cls, bbox = _rpn_inputs()
    rois, score = C.Proposal(cls, bbox, mx.nd.array([[32, 40, 1.0]]), rpn_post_nms_top_n=4,
                             output_score=True, **PROP_KW)
    close(rois, [[0, 13.558632, 0, 30.241367, 16.771221], [0, 0, 0, 11.8, 14.241367],
                 [0, 1.6, 0, 32.6, 21.482735], [0, 19.961302, 12.8, 33.438702, 27.8]])
    close(score, [[0.857143], [0.714286], [0.714286], [0.285714]])
    out = mx.sym.contrib.Proposal(*[mx.sym.var(n) for n in ("c", "b", "i")],
                                  rpn_post_nms_top_n=7)
    shapes = out.infer_shape(c=(1, 6, 4, 5))
    assert shapes[0][1:] == [(1, 12, 4, 5), (1, 3)] and shapes[1] == [(7, 5)]
    with pytest.raises(MXNetError, match="multiple images"):
        C.Proposal(mx.nd.concat(cls, cls, dim=0), mx.nd.concat(bbox, bbox, dim=0),
                   mx.nd.ones((2, 3)), **PROP_KW)


def test_multi_proposal():
    cls, bbox = _rpn_inputs()
    rois = C.MultiProposal(mx.nd.concat(cls, cls[:, ::-1], dim=0),
                           mx.nd.concat(bbox, bbox, dim=0),
                           mx.nd.array([[32, 40, 1.0], [16, 40, 2.0]]),
                           rpn_post_nms_top_n=3, **PROP_KW)
    # image 1: the padded rows of the map score -1, the survivors repeat
    close(rois, [[0, 13.558632, 0, 30.241367, 16.771221], [0, 0, 0, 11.8, 14.241367],
                 [0, 1.6, 0, 32.6, 21.482735], [1, 0, 0, 11.8, 14.241367],
                 [1, 1.6, 0, 32.6, 15], [1, 30.228779, 3.050154, 39, 15]])
    out = mx.sym.contrib.MultiProposal(*[mx.sym.var(n) for n in ("c", "b", "i")],
                                       rpn_post_nms_top_n=7, output_score=True)
    assert out.infer_shape(c=(3, 6, 4, 5))[1] == [(21, 5), (21, 1)]
    with pytest.raises(MXNetError, match="anchors per location"):
        C.MultiProposal(cls, bbox, mx.nd.array([[32, 40, 1.0]]), scales=(1, 2, 3))


def test_zero_gradients_as_mxnet():
    # MXNet registers zero gradients for these: a backward pass through them gives zeros
    anchors = mx.nd.array(ANCHORS)
    cls_pred = mx.nd.array(CLS_PRED[:1])
    for x in (anchors, cls_pred):
        x.attach_grad()
    with mx.autograd.record():
        loc, _, cls = C.MultiBoxTarget(anchors, mx.nd.array(LABELS[:1]), cls_pred)
        det = C.MultiBoxDetection(mx.nd.softmax(cls_pred, axis=1), mx.nd.zeros((1, 16)),
                                  anchors)
        total = loc.sum() + cls.sum() + det.sum() + (cls_pred * 2).sum()
    total.backward()
    assert anchors.grad.asnumpy().tolist() == np.zeros((1, 4, 4)).tolist()
    assert cls_pred.grad.asnumpy().tolist() == np.full((1, 2, 4), 2.0).tolist()

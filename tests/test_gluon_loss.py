"""gluon.loss against NumPy formulas, imperative and hybridized, with sample weights."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch import autograd
from mxtorch.gluon import loss as gloss

RTOL, ATOL = 1e-5, 1e-6


def _r(*shape, seed=0, low=-1.0, high=1.0):
    """Deterministic float32 array."""
    return np.random.RandomState(seed).uniform(low, high, shape).astype(np.float32)


def _softplus(x):
    return np.log1p(np.exp(x))


def _log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def _mean_excl0(v):
    """Mean over every axis but the first."""
    return v.reshape(v.shape[0], -1).mean(axis=1)


def _check(loss, inputs, expect):
    """`loss` on NumPy `inputs` (None stays None) equals `expect`, imperative and
    hybridized."""
    args = [None if a is None else mx.nd.array(a) for a in inputs]
    np.testing.assert_allclose(loss(*args).asnumpy(), expect, RTOL, ATOL)
    loss.hybridize()
    np.testing.assert_allclose(loss(*args).asnumpy(), expect, RTOL, ATOL)


P, L, W = _r(3, 4), _r(3, 4, seed=1), _r(3, 1, seed=2, low=0.5, high=2.0)
PROB = _r(3, 4, seed=3, low=0.05, high=0.95)
BIN = (np.random.RandomState(4).rand(3, 4) > 0.5).astype(np.float32)
SIGN = BIN * 2 - 1


def _bce_logits(x, z, pos=None):
    if pos is None:
        return np.maximum(x, 0) - x * z + _softplus(-np.abs(x))
    return x - x * z + (1 + (pos - 1) * z) * (_softplus(-np.abs(x)) + np.maximum(-x, 0))


def _huber(p, lab, rho):
    d = np.abs(lab - p)
    return np.where(d > rho, d - 0.5 * rho, 0.5 / rho * d ** 2)


ELEMENTWISE = [  # (loss, pred, label, per-element numpy loss (before weighting))
    (lambda: gloss.L2Loss(), P, L, lambda p, lab: 0.5 * (lab - p) ** 2),
    (lambda: gloss.L2Loss(weight=3.), P, L, lambda p, lab: 1.5 * (lab - p) ** 2),
    (lambda: gloss.L1Loss(), P, L, lambda p, lab: np.abs(lab - p)),
    (lambda: gloss.L1Loss(weight=2.), P, L, lambda p, lab: 2 * np.abs(lab - p)),
    (lambda: gloss.SigmoidBCELoss(), P, BIN, _bce_logits),
    (lambda: gloss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=True), PROB, BIN,
     lambda p, z: -(np.log(p + 1e-12) * z + np.log(1 - p + 1e-12) * (1 - z))),
    (lambda: gloss.HuberLoss(rho=0.5), P, L, lambda p, lab: _huber(p, lab, 0.5)),
    (lambda: gloss.HingeLoss(), P, SIGN, lambda p, lab: np.maximum(1 - p * lab, 0)),
    (lambda: gloss.SquaredHingeLoss(margin=2), P, SIGN,
     lambda p, lab: np.maximum(2 - p * lab, 0) ** 2),
    (lambda: gloss.LogisticLoss(), P, SIGN, lambda p, lab: _softplus(-p * lab)),
    (lambda: gloss.LogisticLoss(label_format='binary'), P, BIN,
     lambda p, lab: _softplus(-p * (2 * lab - 1))),
]


@pytest.mark.parametrize('make,pred,label,fn', ELEMENTWISE)
def test_elementwise_losses(make, pred, label, fn):
    per = fn(pred.astype(np.float64), label.astype(np.float64))
    _check(make(), [pred, label], _mean_excl0(per))
    _check(make(), [pred, label, W], _mean_excl0(per * W))


def test_label_is_reshaped_like_pred():
    _check(gloss.L2Loss(), [P, L.reshape(12)], _mean_excl0(0.5 * (L - P) ** 2))


def test_batch_axis():
    per = np.abs(L - P)
    _check(gloss.L1Loss(batch_axis=1), [P, L], per.mean(axis=0))


def test_sigmoid_bce_pos_weight():
    pos = _r(1, 4, seed=5, low=0.5, high=3.0)
    expect = _mean_excl0(_bce_logits(P, BIN, pos))
    # MXNet: Block.__call__ takes positional arguments only, so pos_weight is 4th.
    _check(gloss.SigmoidBCELoss(), [P, BIN, None, pos], expect)
    per = -(np.log(PROB + 1e-12) * BIN * pos + np.log(1 - PROB + 1e-12) * (1 - BIN))
    _check(gloss.SigmoidBCELoss(from_sigmoid=True), [PROB, BIN, W, pos], _mean_excl0(per * W))


def test_softmax_ce_sparse():
    label = np.array([0, 3, 1], np.float32)
    per = -_log_softmax(P)[np.arange(3), label.astype(int)]
    _check(gloss.SoftmaxCrossEntropyLoss(), [P, label], per)
    _check(gloss.SoftmaxCELoss(), [P, label, W], per * W[:, 0])


def test_softmax_ce_dense_axis_from_logits():
    pred, label = _r(3, 4, 2), _r(3, 4, 2, seed=1, low=0, high=1)
    per = -(pred * label).sum(axis=1)
    loss = gloss.SoftmaxCELoss(axis=1, sparse_label=False, from_logits=True)
    _check(loss, [pred, label], per.mean(axis=1))
    w = W.reshape(3, 1, 1)
    _check(gloss.SoftmaxCELoss(axis=1, sparse_label=False, from_logits=True),
           [pred, label, w], (per * w[:, 0]).mean(axis=1))


def test_kldiv():
    label = PROB / PROB.sum(axis=1, keepdims=True)
    logp = _log_softmax(P)
    per = label * (np.log(label + 1e-12) - logp)
    # KLDivLoss sums (not averages) over the non-batch axes.
    _check(gloss.KLDivLoss(), [logp, label], per.sum(axis=1))
    _check(gloss.KLDivLoss(from_logits=False), [P, label, W], (per * W).sum(axis=1))


def test_triplet():
    pos, neg = _r(3, 4, seed=6), _r(3, 4, seed=7)
    d = ((pos - P) ** 2 - (neg - P) ** 2).sum(axis=1)
    _check(gloss.TripletLoss(margin=0.5), [P, pos, neg], np.maximum(d + 0.5, 0))


def test_poisson_nll():
    target = np.array([[0, 1, 2, 3], [4, 0, 1, 5], [2, 2, 0, 1]], np.float32)
    per = np.exp(P) - target * P
    _check(gloss.PoissonNLLLoss(), [P, target], [per.mean()])
    _check(gloss.PoissonNLLLoss(), [P, target, W], [(per * W).mean()])
    rate, target = PROB * 3, target + 1
    per = rate - target * np.log(rate + 1e-8)
    stirling = target * np.log(target) - target + 0.5 * np.log(2 * target * np.pi)
    per = per + np.where(target > 1, stirling, 0)
    full = gloss.PoissonNLLLoss(from_logits=False, compute_full=True)
    _check(full, [rate, target], [per.mean()])
    # MXNet: a zero target makes the masked Stirling term 0 * nan, so the loss is nan.
    assert np.isnan(full(mx.nd.array(rate), mx.nd.array(target - 1)).asnumpy()).all()


def test_cosine_embedding():
    a, b = _r(3, 4, seed=8), _r(3, 4, seed=9)
    label = np.array([1, -1, -1], np.float32)
    cos = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1),
                                      1e-12)
    per = np.where(label == 1, 1 - cos, np.maximum(cos - 0.1, 0)).reshape(3, 1)
    _check(gloss.CosineEmbeddingLoss(margin=0.1), [a, b, label], per)
    _check(gloss.CosineEmbeddingLoss(margin=0.1), [a, b, label, W], per * W)


def test_sdml():
    x1, x2 = _r(3, 4, seed=10), _r(3, 4, seed=11)
    dist = ((x1[:, None, :] - x2[None, :, :]) ** 2).sum(axis=2)
    logp = _log_softmax(-dist, axis=1)
    lab = np.eye(3) * 0.7 + (1 - np.eye(3)) * 0.3 / 2
    per = lab * (np.log(lab + 1e-12) - logp)
    out = gloss.SDMLLoss()(mx.nd.array(x1), mx.nd.array(x2)).asnumpy()
    np.testing.assert_allclose(out, per.sum(axis=1), 1e-5, 1e-6)


def _np_ctc(logits, label):
    """CTC negative log-likelihood of one sequence (blank = last class)."""
    t_len, n_cls = logits.shape
    probs = np.exp(_log_softmax(logits.astype(np.float64)))
    blank = n_cls - 1
    ext = [blank]
    for c in label:
        ext += [int(c), blank]
    alpha = np.zeros(len(ext))
    alpha[0], alpha[1] = probs[0, blank], probs[0, ext[1]]
    for t in range(1, t_len):
        prev = alpha.copy()
        for s in range(len(ext)):
            a = prev[s] + (prev[s - 1] if s > 0 else 0)
            if s > 1 and ext[s] != blank and ext[s] != ext[s - 2]:
                a += prev[s - 2]
            alpha[s] = a * probs[t, ext[s]]
    return -np.log(alpha[-1] + alpha[-2])


def test_ctc():
    pred = _r(2, 5, 4)
    label = np.array([[0, 1, 2], [1, 1, -1]], np.float32)
    expect = [_np_ctc(pred[0], [0, 1, 2]), _np_ctc(pred[1], [1, 1])]
    _check(gloss.CTCLoss(), [pred, label], expect)
    _check(gloss.CTCLoss(layout='TNC', label_layout='TN'),
           [pred.swapaxes(0, 1), label.T], expect)
    lens = [np.array([5, 4], np.float32), np.array([3, 2], np.float32), np.array([1., 2.])]
    expect = [_np_ctc(pred[0], [0, 1, 2]), 2 * _np_ctc(pred[1, :4], [1, 1])]
    _check(gloss.CTCLoss(), [pred, label] + lens, expect)


def test_gradient_flows():
    pred = mx.nd.array(P)
    pred.attach_grad()
    with autograd.record():
        out = gloss.L2Loss()(pred, mx.nd.array(L))
    out.backward()
    np.testing.assert_allclose(pred.grad.asnumpy(), (P - L) / 4, RTOL, ATOL)


def test_repr_and_errors():
    assert repr(gloss.L2Loss()) == 'L2Loss(batch_axis=0, w=1.0)'
    assert repr(gloss.L1Loss()) == 'L1Loss(batch_axis=0, w=None)'
    assert repr(gloss.CTCLoss(label_layout='TN')) == 'CTCLoss(batch_axis=1, w=None)'
    assert gloss.SoftmaxCELoss is gloss.SoftmaxCrossEntropyLoss
    with pytest.raises(AssertionError, match="Only 'NTC' and 'TNC' layouts"):
        gloss.CTCLoss(layout='NCT')
    with pytest.raises(ValueError, match='label_format can only be signed or binary'):
        gloss.LogisticLoss(label_format='probability')
    with pytest.raises(AssertionError, match='weight must be a number'):
        gloss.L1Loss(weight='2')(mx.nd.array(P), mx.nd.array(L))
    with pytest.raises(NotImplementedError):
        gloss.Loss(None, 0)(mx.nd.array(P))


def test_softmax_ce_ndarray_fast_path_matches_mxnet_and_graph():
    """Real MXNet 1.9.1: loss and gradient, labels clipped (7 -> 3, -2 -> 0) and truncated
    (3.7 -> 3) as pick does; the NDArray path (one fused op) equals the hybridized graph."""
    p = np.array([[1.7640524, 0.4001572, 0.978738, 2.2408931],
                  [1.867558, -0.9772779, 0.9500884, -0.1513572],
                  [-0.1032189, 0.4105985, 0.1440436, 1.4542735],
                  [0.7610377, 0.121675, 0.4438632, 0.3336743],
                  [1.4940791, -0.2051583, 0.3130677, -0.8540958]], np.float32)
    want_loss = [1.2007511, 2.4829435, 1.6493986, 1.4948492, 0.460793]
    want_grad = [[-0.6990319, 0.0769464, 0.1372343, 0.4848526],
                 [0.6287457, 0.0365577, 0.251202, -0.9165029],
                 [0.1149548, -0.8078346, 0.1472014, 0.5456794],
                 [0.343872, 0.1814367, 0.2504089, -0.7757176],
                 [-0.3692167, 0.1153216, 0.1936303, 0.0602672]]
    label = mx.nd.array([0, 3.7, 1, 7, -2])
    for hybrid in (False, True):
        lf = gloss.SoftmaxCrossEntropyLoss()
        if hybrid:
            lf.hybridize()
        x = mx.nd.array(p)
        x.attach_grad()
        with mx.autograd.record():
            loss = lf(x, label)
        loss.backward()
        np.testing.assert_allclose(loss.asnumpy(), want_loss, rtol=1e-5)
        np.testing.assert_allclose(x.grad.asnumpy(), want_grad, rtol=1e-5, atol=1e-6)
    with pytest.raises(mx.base.MXNetError, match="_softmax_cross_entropy_rows"):
        mx.nd._internal._softmax_cross_entropy_rows(mx.nd.ones((2, 3, 4)), mx.nd.ones((2,)))

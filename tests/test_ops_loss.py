"""Loss-output and gradient-control operators: MXNet 1.9.1's (non-mathematical) gradients.

Expected gradients are NumPy formulas checked against real MXNet 1.9.1; hard-coded values
were computed by MXNet 1.9.1 on the same inputs.
"""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from mxtorch.ops import registry
from helpers import check_op

RNG = np.random.RandomState(0)


def _ones(shape):
    return mx.nd.array(np.ones(shape))


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _run(op, arrays, head=None, grad_of=(0,), **attrs):
    """Forward under record, backward with a head gradient; return output and gradients."""
    nds = [mx.nd.array(a) for a in arrays]
    for i in grad_of:
        nds[i].attach_grad()
    with mx.autograd.record():
        out = (getattr(mx.nd, op) if isinstance(op, str) else op)(*nds, **attrs)
    head = RNG.uniform(-3, 3, out.shape) if head is None else head
    out.backward(mx.nd.array(head))
    return out.asnumpy(), [nds[i].grad.asnumpy() for i in grad_of]


# ---------------------------------------------------------------------- SoftmaxOutput
def _np_softmax_output_grad(p, label, k_axis, grad_scale=1.0, use_ignore=False,
                            ignore_label=-1, normalization="null", smooth_alpha=0.0):
    """NumPy form of MXNet's SoftmaxOutput backward (p with classes on k_axis)."""
    k = p.shape[k_axis]
    lab = np.trunc(label).astype(np.int64)
    onehot = np.moveaxis(np.arange(k) == lab[..., None], -1, k_axis).astype(np.float64)
    if smooth_alpha > 0:
        target = onehot * (1 - smooth_alpha) + (1 - onehot) * smooth_alpha / (k - 1)
    else:
        target = onehot
    grad = p - target
    keep = np.expand_dims(lab != int(ignore_label), k_axis)
    if use_ignore:
        grad = grad * keep
    if normalization == "batch":
        grad = grad / label.shape[0]
    elif normalization == "valid":
        grad = grad / max(1, int((lab != int(ignore_label)).sum()))
    return grad * grad_scale


@pytest.mark.parametrize("attrs", [
    {}, {"normalization": "batch", "grad_scale": 2.0}, {"normalization": "valid"},
    {"use_ignore": True}, {"use_ignore": True, "normalization": "valid"},
    {"use_ignore": True, "ignore_label": 2, "normalization": "valid", "grad_scale": 0.5},
    {"smooth_alpha": 0.1}, {"smooth_alpha": 0.2, "use_ignore": True},
])
def test_softmax_output_2d(attrs):
    x = RNG.randn(5, 4).astype(np.float32)
    label = np.array([0, 2, -1, 3, 1], np.float32)
    out, (g, gl) = _run("SoftmaxOutput", [x, label], grad_of=(0, 1), **attrs)
    p = _softmax(x.astype(np.float64))
    np.testing.assert_allclose(out, p, rtol=1e-5, atol=1e-6)
    # the random head gradient is ignored
    np.testing.assert_allclose(g, _np_softmax_output_grad(p, label, 1, **attrs), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(gl, np.zeros_like(label))


def test_softmax_output_valid_without_ignore_still_counts_ignore_label():
    # MXNet: 'valid' excludes labels == ignore_label from the count even without use_ignore.
    x = RNG.randn(4, 5).astype(np.float32)
    label = np.array([0, 2, -1, 4], np.float32)
    _, (g,) = _run("SoftmaxOutput", [x, label], normalization="valid")
    p = _softmax(x.astype(np.float64))
    onehot = np.eye(5)[[0, 2, 4, 4]]
    onehot[2] = 0  # label -1 matches no class
    np.testing.assert_allclose(g, (p - onehot) / 3, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attrs", [
    {"multi_output": True}, {"multi_output": True, "normalization": "batch"},
    {"multi_output": True, "normalization": "valid", "use_ignore": True},
    {"multi_output": True, "smooth_alpha": 0.2, "grad_scale": 3.0},
])
def test_softmax_output_multi_output(attrs):
    x = RNG.randn(2, 3, 4).astype(np.float32)
    label = np.array([[1, 2, 0, -1], [0, 2, 2, 1]], np.float32)
    out, (g,) = _run("SoftmaxOutput", [x, label], **attrs)
    p = _softmax(x.astype(np.float64), axis=1)
    np.testing.assert_allclose(out, p, rtol=1e-5, atol=1e-6)
    # MXNet 1.9.1: multi_output ignores smooth_alpha, and 'null'/'batch' also divide by
    # the spatial size (4 here).
    kw = {k: v for k, v in attrs.items() if k not in ("multi_output", "smooth_alpha")}
    exp = _np_softmax_output_grad(p, label, 1, **kw)
    if kw.get("normalization", "null") != "valid":
        exp = exp / 4
    np.testing.assert_allclose(g, exp, rtol=1e-5, atol=1e-6)


def test_softmax_output_multi_output_label_layouts():
    x = RNG.randn(2, 3, 4, 2).astype(np.float32)
    for lshape in [(2, 8), (2, 4, 2), (2, 1, 4, 2)]:
        label = RNG.randint(0, 3, size=lshape).astype(np.float32)
        out, (g,) = _run("SoftmaxOutput", [x, label], multi_output=True)
        p = _softmax(x.astype(np.float64), axis=1)
        exp = _np_softmax_output_grad(p, label.reshape(2, 4, 2), 1) / 8
        np.testing.assert_allclose(g, exp, rtol=1e-5, atol=1e-6)
    op = registry.get("SoftmaxOutput")
    in_shapes, out_shapes = op.infer_shape(op.parse_attrs({"multi_output": True}),
                                           [(2, 3, 4, 2), None])
    assert in_shapes[1] == (2, 8) and out_shapes == [(2, 3, 4, 2)]


@pytest.mark.parametrize("norm", ["null", "batch", "valid"])
def test_softmax_output_preserve_shape(norm):
    x = RNG.randn(2, 3, 4).astype(np.float32)
    label = np.array([[1, 2, 0], [0, 3, -1]], np.float32)
    out, (g,) = _run("SoftmaxOutput", [x, label], preserve_shape=True, normalization=norm)
    p = _softmax(x.astype(np.float64))
    np.testing.assert_allclose(out, p, rtol=1e-5, atol=1e-6)
    # MXNet: 'batch' divides by the number of labels (6 here), not by the batch size.
    exp = _np_softmax_output_grad(p.reshape(6, 4), label.reshape(-1), 1, normalization=norm)
    np.testing.assert_allclose(g, exp.reshape(x.shape), rtol=1e-5, atol=1e-6)


def test_softmax_output_nd_without_preserve_shape():
    # MXNet: softmax over the flattened non-batch axes; the backward uses the first
    # `batch` labels as flat indices into each flattened row.
    x = RNG.randn(2, 3, 4).astype(np.float32)
    label = np.array([[1, 2, 0], [3, 0, 1]], np.float32)
    out, (g,) = _run("SoftmaxOutput", [x, label])
    p = _softmax(x.reshape(2, 12).astype(np.float64))
    np.testing.assert_allclose(out, p.reshape(x.shape), rtol=1e-5, atol=1e-6)
    exp = p - np.eye(12)[[1, 2]]
    np.testing.assert_allclose(g, exp.reshape(x.shape), rtol=1e-5, atol=1e-6)


def test_softmax_output_out_grad_multiplies_by_output():
    # MXNet 1.9.1: out_grad=True multiplies by the softmax output, not the head gradient.
    x = RNG.randn(4, 5).astype(np.float32)
    label = np.array([0, 2, 1, 4], np.float32)
    _, (g,) = _run("SoftmaxOutput", [x, label], out_grad=True)
    p = _softmax(x.astype(np.float64))
    np.testing.assert_allclose(g, (p - np.eye(5)[[0, 2, 1, 4]]) * p, rtol=1e-5, atol=1e-6)


def test_softmax_output_label_out_of_range_and_fractional():
    x = RNG.randn(2, 5).astype(np.float32)
    _, (g,) = _run("SoftmaxOutput", [x, np.array([7, 4.7], np.float32)])
    p = _softmax(x.astype(np.float64))
    np.testing.assert_allclose(g, p - np.array([[0] * 5, [0, 0, 0, 0, 1]]), rtol=1e-5,
                               atol=1e-6)


def test_softmax_output_alias_inference_and_shape_inference():
    x = RNG.randn(3, 4).astype(np.float32)
    label = np.array([1, 0, 3], np.float32)
    np.testing.assert_allclose(mx.nd.Softmax(mx.nd.array(x), mx.nd.array(label)).asnumpy(),
                               _softmax(x), rtol=1e-5, atol=1e-6)
    check_op("SoftmaxOutput", [x, label], {}, expected=lambda d, lab: _softmax(d), grad=False)
    op = registry.get("SoftmaxOutput")
    assert op.infer_shape(op.parse_attrs({}), [(3, 4), None]) == ([(3, 4), (3,)], [(3, 4)])
    assert op.infer_shape(op.parse_attrs({"preserve_shape": True}), [(2, 3, 4), None])[0] \
        == [(2, 3, 4), (2, 3)]
    assert op.parse_attrs({}) == op.parse_attrs({"grad_scale": "1", "ignore_label": "-1",
                                                 "normalization": "null"})


def test_softmax_output_errors():
    with pytest.raises(MXNetError, match="SoftmaxOutput"):
        mx.nd.SoftmaxOutput(_ones((4, 5)), _ones((3,)))
    with pytest.raises(MXNetError, match="SoftmaxOutput"):
        mx.nd.SoftmaxOutput(_ones((2, 3, 4)), _ones((2, 3)), multi_output=True)
    with pytest.raises(MXNetError, match="SoftmaxOutput"):
        mx.nd.SoftmaxOutput(_ones((4, 5)), _ones((4,)), normalization="all")
    op = registry.get("SoftmaxOutput")
    with pytest.raises(MXNetError, match="SoftmaxOutput"):
        op.infer_shape(op.parse_attrs({}), [(4, 5), (5,)])


# ---------------------------------------------------------------------- regression outputs
@pytest.mark.parametrize("op", ["LinearRegressionOutput", "LogisticRegressionOutput",
                                "MAERegressionOutput"])
@pytest.mark.parametrize("shape", [(3, 4), (3, 2, 2), (3,)])
def test_regression_outputs(op, shape):
    x = RNG.randn(*shape).astype(np.float32)
    label = RNG.rand(*shape).astype(np.float32)
    out, (g, gl) = _run(op, [x, label], grad_of=(0, 1), grad_scale=2.0)
    x64 = x.astype(np.float64)
    fwd = 1 / (1 + np.exp(-x64)) if op.startswith("Logistic") else x64
    np.testing.assert_allclose(out, fwd, rtol=1e-5, atol=1e-6)
    diff = fwd - label
    if op.startswith("MAE"):
        diff = np.where(diff > 0, 1.0, -1.0)
    num_output = label.size // label.shape[0]
    np.testing.assert_allclose(g, diff * 2.0 / num_output, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(gl, np.zeros_like(label))


def test_mae_sign_at_zero_is_minus_one():
    # MXNet: minus_sign(a, b) = a - b > 0 ? 1 : -1.
    data, label = np.array([[1., 2., 3.]]), np.array([[1., 1., 4.]])
    _, (g,) = _run("MAERegressionOutput", [data, label])
    np.testing.assert_allclose(g, [[-1 / 3, 1 / 3, -1 / 3]], rtol=1e-6)


def test_regression_label_shapes():
    op = registry.get("LinearRegressionOutput")
    attrs = op.parse_attrs({})
    assert op.infer_shape(attrs, [(3, 4), None]) == ([(3, 4), (3, 4)], [(3, 4)])
    assert op.infer_shape(attrs, [(3, 1), None]) == ([(3, 1), (3,)], [(3, 1)])
    x = RNG.randn(3, 1).astype(np.float32)
    _, (g,) = _run("LinearRegressionOutput", [x, np.zeros(3, np.float32)])
    np.testing.assert_allclose(g, x, rtol=1e-6)
    with pytest.raises(MXNetError, match="LinearRegressionOutput"):
        mx.nd.LinearRegressionOutput(_ones((3, 4)), _ones((3,)))


# ---------------------------------------------------------------------- SVMOutput
@pytest.mark.parametrize("use_linear", [False, True])
def test_svm_output(use_linear):
    x = RNG.randn(4, 3).astype(np.float32)
    label = np.array([0, 2, 1, 1], np.float32)
    m, c = 0.5, 2.0
    out, (g,) = _run("SVMOutput", [x, label], margin=m, regularization_coefficient=c,
                     use_linear=use_linear)
    np.testing.assert_allclose(out, x)
    oh = np.eye(3)[label.astype(int)].astype(bool)
    x64 = x.astype(np.float64)
    if use_linear:
        exp = np.where(oh, -(m > x64).astype(np.float64) * c, (m > -x64) * c)
    else:
        exp = np.where(oh, -c * np.where(m > x64, 2 * (m - x64), 0),
                       c * np.where(m > -x64, 2 * (m + x64), 0))
    np.testing.assert_allclose(g, exp, rtol=1e-5, atol=1e-6)
    op = registry.get("SVMOutput")
    assert op.infer_shape(op.parse_attrs({}), [(4, 3, 2), None]) == \
        ([(4, 3, 2), (4, 3)], [(4, 3, 2)])
    with pytest.raises(MXNetError, match="SVMOutput"):
        mx.nd.SVMOutput(_ones((4, 3)), _ones((3,)))


# ---------------------------------------------------------------------- MakeLoss, BlockGrad
@pytest.mark.parametrize("attrs, norm", [
    ({}, lambda x: 1.0),
    ({"grad_scale": 3.0, "normalization": "batch"}, lambda x: x.size // x.shape[-1] / 3.0),
    ({"normalization": "valid"}, lambda x: max(1, (x > 0).sum())),
    ({"normalization": "valid", "valid_thresh": 0.5}, lambda x: max(1, (x > 0.5).sum())),
])
@pytest.mark.parametrize("shape", [(3, 4), (3, 2, 2)])
def test_make_loss(attrs, norm, shape):
    x = RNG.randn(*shape).astype(np.float32)
    out, (g,) = _run("MakeLoss", [x], **attrs)
    np.testing.assert_allclose(out, x)
    np.testing.assert_allclose(g, np.full(shape, 1.0 / norm(x)), rtol=1e-6)


def test_make_loss_all_invalid_and_lowercase_op():
    _, (g,) = _run("MakeLoss", [-np.ones((2, 3), np.float32)], normalization="valid")
    np.testing.assert_allclose(g, np.ones((2, 3)))
    x = RNG.randn(2, 3).astype(np.float32)
    out, (g,) = _run("make_loss", [x])
    np.testing.assert_allclose(out, x)
    np.testing.assert_allclose(g, np.ones((2, 3)))
    assert registry.get("make_loss") is not registry.get("MakeLoss")
    # MXNet: make_loss has no parameters, so unknown keys such as grad_scale are ignored
    np.testing.assert_array_equal(mx.nd.make_loss(_ones((2,)), grad_scale=2).asnumpy(), [1, 1])


@pytest.mark.parametrize("op", ["BlockGrad", "stop_gradient"])
def test_block_grad(op):
    x = mx.nd.array(RNG.randn(2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, op)(x) * 2 + x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.ones((2, 3)))
    out = getattr(mx.nd, op)(x)
    np.testing.assert_allclose(out.asnumpy(), x.asnumpy())
    out[:] = 0
    assert x.asnumpy().any()  # a new array, not a view of the input


# ---------------------------------------------------------------------- softmax_cross_entropy
def test_softmax_cross_entropy():
    x = RNG.randn(3, 4).astype(np.float32)
    label = np.array([1, 0, 3], np.float32)

    def expected(d, lab):
        p = _softmax(d)
        return np.array([-np.log(p[np.arange(3), lab.astype(int)]).sum()])
    check_op("softmax_cross_entropy", [x, label], {}, expected=expected, grad=[0])
    out, (g,) = _run("softmax_cross_entropy", [x, label], head=np.array([2.0]))
    p = _softmax(x.astype(np.float64))
    np.testing.assert_allclose(g, 2.0 * (p - np.eye(4)[[1, 0, 3]]), rtol=1e-5, atol=1e-6)
    with pytest.raises(MXNetError, match="softmax_cross_entropy"):
        mx.nd.softmax_cross_entropy(_ones((3, 2, 2)), _ones((3,)))
    with pytest.raises(MXNetError, match="softmax_cross_entropy"):
        mx.nd.softmax_cross_entropy(_ones((3, 4)), _ones((2,)))


# ---------------------------------------------------------------------- IdentityAttachKLSparseReg
def test_identity_attach_kl_sparse_reg():
    x = RNG.rand(3, 4).astype(np.float32)
    ma0 = np.full((4,), 0.5, np.float32)
    d, ma = mx.nd.array(x), mx.nd.array(ma0)
    d.attach_grad()
    head = RNG.randn(3, 4)
    expected_ma = ma0.astype(np.float64)
    for _ in range(2):
        with mx.autograd.record():
            out = mx.nd.IdentityAttachKLSparseReg(d, ma, penalty=0.01)
        # MXNet: the moving average changes in backward, not in forward.
        np.testing.assert_allclose(ma.asnumpy(), expected_ma, rtol=1e-6)
        out.backward(mx.nd.array(head))
        expected_ma = 0.9 * expected_ma + 0.1 * x.mean(0)
        np.testing.assert_allclose(ma.asnumpy(), expected_ma, rtol=1e-6)
        rho = 0.1
        exp = head + 0.01 * (-rho / expected_ma + (1 - rho) / (1 - expected_ma))
        np.testing.assert_allclose(d.grad.asnumpy(), exp, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out.asnumpy(), x)
    op = registry.get("IdentityAttachKLSparseReg")
    assert op.infer_shape(op.parse_attrs({}), [(3, 4), None]) == ([(3, 4), (4,)], [(3, 4)])
    with pytest.raises(MXNetError, match="IdentityAttachKLSparseReg"):
        mx.nd.IdentityAttachKLSparseReg(_ones((3, 4)), _ones((3,)))


# ---------------------------------------------------------------------- CTCLoss
def _np_ctc(acts, labels, blank):
    """CTC negative log-likelihood per sequence by the forward algorithm (NumPy)."""
    losses = []
    for n, lab in enumerate(labels):
        p = _softmax(acts[:, n, :].astype(np.float64))
        ext = [blank]
        for c in lab:
            ext += [c, blank]
        alpha = np.zeros(len(ext))
        alpha[0], alpha[1:2] = p[0, blank], p[0, ext[1:2]]
        for t in range(1, p.shape[0]):
            prev = alpha.copy()
            for s in range(len(ext)):
                a = prev[s] + (prev[s - 1] if s > 0 else 0)
                if s > 1 and ext[s] != blank and ext[s] != ext[s - 2]:
                    a += prev[s - 2]
                alpha[s] = a * p[t, ext[s]]
        losses.append(-np.log(alpha[-1] + (alpha[-2] if len(ext) > 1 else 0)))
    return np.array(losses)


def _ctc_inputs():
    return np.random.RandomState(0).randn(5, 2, 4).astype(np.float32)


def test_ctc_loss_padding_and_oracle_values():
    x = _ctc_inputs()
    out, (g,) = _run("CTCLoss", [x, np.array([[1, 2], [3, 0]], np.float32)],
                     head=np.array([1.0, 2.0]))
    # values computed by MXNet 1.9.1 on the same input
    np.testing.assert_allclose(out, [3.803867, 4.668308], rtol=1e-5)
    np.testing.assert_allclose(out, _np_ctc(x, [[1, 2], [3]], 0), rtol=1e-5)
    np.testing.assert_allclose(g[:, 0, 0], [-0.39041305, -0.02583276, -0.06528306,
                                            -0.02001125, -0.04258226], rtol=1e-4, atol=1e-6)
    out, _ = _run("ctc_loss", [x, np.array([[0, 1], [2, -1]], np.float32)], blank_label="last")
    np.testing.assert_allclose(out, [4.108072, 6.4036226], rtol=1e-5)
    np.testing.assert_allclose(out, _np_ctc(x, [[0, 1], [2]], 3), rtol=1e-5)


def test_ctc_loss_lengths_and_gradient():
    x = _ctc_inputs()
    label = np.array([[1, 2], [3, 1]], np.float32)
    out, (g,) = _run("CTCLoss", [x, label, np.array([5, 3], np.float32)],
                     use_data_lengths=True, head=np.array([1.0, 2.0]))
    np.testing.assert_allclose(out, [3.803867, 2.5139432], rtol=1e-5)
    np.testing.assert_array_equal(g[3:, 1], 0)
    out, _ = _run(mx.nd.contrib.CTCLoss, [x, label, np.array([2, 1], np.float32)],
                  use_label_lengths=True)
    np.testing.assert_allclose(out, [3.803867, 4.668308], rtol=1e-5)
    check_op("CTCLoss", [x, label], {}, expected=lambda d, lab: _np_ctc(d, [[1, 2], [3, 1]], 0),
             grad=[0], grad_rtol=1e-4, grad_atol=1e-6)


def test_ctc_loss_nan_past_data_length():
    # MXNet never reads steps past a sequence's length: NaN there changes neither the
    # loss nor the gradient, which is 0 on those steps (values from MXNet 1.9.1)
    x = _ctc_inputs()
    x[3:, 1] = np.nan
    label = np.array([[1, 2], [3, 1]], np.float32)
    out, (g,) = _run("CTCLoss", [x, label, np.array([5, 3], np.float32)],
                     use_data_lengths=True, head=np.array([1.0, 2.0]))
    np.testing.assert_allclose(out, [3.803867, 2.5139432], rtol=1e-5)
    assert not np.isnan(g).any()
    np.testing.assert_array_equal(g[3:, 1], 0)


def test_ctc_loss_structure_and_errors():
    op = registry.get("CTCLoss")
    attrs = op.parse_attrs({"use_data_lengths": True, "use_label_lengths": "True"})
    assert op.input_names(attrs) == ["data", "label", "data_lengths", "label_lengths"]
    assert op.total_outputs(attrs) == 2 and op.num_outputs(attrs) == 1
    assert op.output_names(attrs) == ["output0"]
    assert op.infer_shape(attrs, [(5, 2, 4), (2, 3), None, None])[1] == [(2,)]
    assert mx.nd.contrib.ctc_loss is not None and mx.nd.contrib.CTCLoss is not None
    with pytest.raises(MXNetError, match="CTCLoss"):
        mx.nd.CTCLoss(_ones((5, 4)), _ones((2, 2)))
    with pytest.raises(MXNetError, match="CTCLoss"):
        mx.nd.CTCLoss(_ones((5, 2, 4)), _ones((3, 2)))


def test_softmax_output_probability_labels():
    # MXNet: a label of the data's shape is a probability target: grad = softmax - label
    x = np.array([[1.0, 6.0, 4.0, 2.0], [0.5, 0.0, -1.0, 2.0]], dtype=np.float32)
    p = np.full((2, 4), 0.25, dtype=np.float32)
    data, label = mx.sym.var("x"), mx.sym.var("l")
    sym = mx.sym.SoftmaxOutput(data=data, label=label, grad_scale=2.0)
    assert sym.infer_shape(x=(2, 4), l=(2, 4)) == ([(2, 4), (2, 4)], [(2, 4)], [])
    grad = mx.nd.zeros((2, 4))
    exe = sym.bind(mx.cpu(), args=[mx.nd.array(x), mx.nd.array(p)], args_grad={"x": grad})
    exe.forward(is_train=True)
    exe.backward()
    e = np.exp(x - x.max(1, keepdims=True))
    soft = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(grad.asnumpy(), 2.0 * (soft - p), rtol=1e-5, atol=1e-6)


def test_softmax_cross_entropy_inference_is_declared():
    # MXNet: (1,) from 2-D data and a 1-D label of the same batch; declared, so shape
    # inference never runs torch's meta kernels (whose first call imports torch._dynamo)
    import subprocess
    import sys
    code = ("import sys, mxtorch as mx\n"
            "s = mx.sym.softmax_cross_entropy(mx.sym.Variable('d'), mx.sym.Variable('l'))\n"
            "assert s.infer_shape(d=(3, 4), l=(3,))[1] == [(1,)]\n"
            "assert s.infer_type(d='float64', l='float32')[1][0].__name__ == 'float64'\n"
            "print('torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
    s = mx.sym.softmax_cross_entropy(mx.sym.Variable("d"), mx.sym.Variable("l"))
    with pytest.raises(MXNetError, match="only accepts 2-D data"):
        s.infer_shape(d=(3, 4, 5), l=(3,))
    with pytest.raises(MXNetError, match="only accept 1D label"):
        s.infer_shape(d=(3, 4), l=(3, 1))
    with pytest.raises(MXNetError, match="shape mismatch"):
        s.infer_shape(d=(3, 4), l=(2,))

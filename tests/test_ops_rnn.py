"""The fused RNN operator against NumPy recurrences in MXNet's flat parameter layout."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from mxtorch.ops import registry
from mxtorch.ops.rnn import rnn_param_size

from helpers import check_op

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _unpack(flat, mode, C, H, L, D, P=None):
    """MXNet layout -> list per (layer, dir) of dicts of weights."""
    G = GATES[mode]
    out_sz = P or H
    off = 0
    cells = []
    for layer in range(L):
        ins = C if layer == 0 else D * out_sz
        for _ in range(D):
            w = {}
            for name, shape in (("wx", (G * H, ins)), ("wh", (G * H, out_sz))) + \
                    ((("wr", (P, H)),) if P else ()):
                n = shape[0] * shape[1]
                w[name] = flat[off:off + n].reshape(shape)
                off += n
            cells.append(w)
    for w in cells:
        w["bx"] = flat[off:off + G * H]
        w["bh"] = flat[off + G * H:off + 2 * G * H]
        off += 2 * G * H
    assert off == flat.size
    return cells


def _np_step(mode, w, x, h, c, clip=None, mask=None):
    gx = x @ w["wx"].T + w["bx"]
    gh = h @ w["wh"].T + w["bh"]
    if mode == "lstm":
        i, f, g, o = np.split(gx + gh, 4, axis=-1)
        c2 = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        if clip:
            c2 = np.clip(c2, *clip)
        h2 = _sigmoid(o) * np.tanh(c2)
        if "wr" in w:
            h2 = h2 @ w["wr"].T
        return h2, c2
    if mode == "gru":
        xr, xz, xn = np.split(gx, 3, axis=-1)
        hr, hz, hn = np.split(gh, 3, axis=-1)
        r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        return (1 - z) * n + z * h, c
    pre = gx + gh
    return (np.maximum(pre, 0) if mode == "rnn_relu" else np.tanh(pre)), c


def np_rnn(mode, data, flat, h0, c0=None, L=1, D=1, P=None, clip=None, lengths=None):
    """Reference recurrence: returns output, h_n, c_n."""
    T, N, C = data.shape
    H = c0.shape[-1] if c0 is not None else h0.shape[-1]
    cells = _unpack(flat, mode, C, H, L, D, P)
    x, hs, cs = data, [], []
    for layer in range(L):
        outs = []
        for d in range(D):
            k = layer * D + d
            h = h0[k]
            c = c0[k] if c0 is not None else None
            o = np.zeros((T, N, h.shape[-1]))
            for t in (range(T - 1, -1, -1) if d else range(T)):
                h2, c2 = _np_step(mode, cells[k], x[t], h, c, clip)
                if lengths is not None:
                    m = (t < lengths)[:, None]
                    h2 = np.where(m, h2, h)
                    c2 = np.where(m, c2, c) if c is not None else None
                    o[t] = np.where(m, h2, 0)
                else:
                    o[t] = h2
                h, c = h2, c2
            outs.append(o)
            hs.append(h)
            cs.append(c)
        x = np.concatenate(outs, axis=-1)
    res = [x, np.stack(hs)]
    if c0 is not None:
        res.append(np.stack(cs))
    return res


def _inputs(mode, T=4, N=3, C=3, H=4, L=1, D=1, P=None, seed=0):
    attrs = registry.get("RNN").parse_attrs(dict(state_size=H, num_layers=L, mode=mode,
                                                  bidirectional=D == 2, projection_size=P))
    rng = np.random.RandomState(seed)
    size = rnn_param_size(attrs, C)
    ins = [rng.randn(T, N, C), rng.uniform(-0.5, 0.5, size), rng.randn(L * D, N, P or H)]
    if mode == "lstm":
        ins.append(rng.randn(L * D, N, H))
    return [a.astype(np.float32) for a in ins]


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("L,D", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_rnn_forward_matches_numpy(mode, L, D):
    ins = _inputs(mode, L=L, D=D)
    attrs = dict(state_size=4, num_layers=L, mode=mode, bidirectional=D == 2,
                 state_outputs=True)
    check_op("RNN", ins, attrs,
             expected=lambda *a: np_rnn(mode, *a, L=L, D=D), grad=False, atol=1e-5)


def test_rnn_output_only_and_names():
    ins = _inputs("gru", L=2, D=2)
    out = mx.nd.RNN(*[mx.nd.array(a) for a in ins], state_size=4, num_layers=2, mode="gru",
                    bidirectional=True)
    assert isinstance(out, mx.nd.NDArray) and out.shape == (4, 3, 8)
    op = registry.get("RNN")
    a = op.parse_attrs(dict(state_size=4, num_layers=1, mode="lstm", state_outputs=True))
    assert op.input_names(a) == ["data", "parameters", "state", "state_cell"]
    assert op.output_names(a) == ["output", "state_output", "statecell_output"]


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_rnn_gradient_tiny(mode):
    ins = _inputs(mode, T=2, N=2, C=2, H=2, L=1, D=2, seed=3)
    attrs = dict(state_size=2, num_layers=1, mode=mode, bidirectional=True,
                 state_outputs=True)
    check_op("RNN", ins, attrs, expected=lambda *a: np_rnn(mode, *a, L=1, D=2),
             atol=1e-5)


def test_rnn_infer_shape_backwards():
    op = registry.get("RNN")
    a = op.parse_attrs(dict(state_size=5, num_layers=2, mode="lstm", bidirectional=True,
                            state_outputs=True))
    ins, outs = op.infer_shape(a, [(3, 2, 4), None, None, None])
    # MXNet 1.9.1: sym.RNN(...).infer_shape(data=(3, 2, 4)) gives parameters (1120,)
    assert ins == [(3, 2, 4), (1120,), (4, 2, 5), (4, 2, 5)]
    assert outs == [(3, 2, 10), (4, 2, 5), (4, 2, 5)]
    a = op.parse_attrs(dict(state_size=5, num_layers=1, mode="gru"))
    assert op.infer_shape(a, [(3, 2, 4), None, None])[0][1] == (165,)
    a = op.parse_attrs(dict(state_size=5, num_layers=1, mode="rnn_tanh"))
    assert op.infer_shape(a, [(3, 2, 4), None, None])[0][1] == (55,)
    # MXNet (cuDNN LSTMP): projection 3 -> parameters (195,) and (860,), state (.., 3)
    a = op.parse_attrs(dict(state_size=5, num_layers=1, mode="lstm", projection_size=3))
    assert op.infer_shape(a, [(3, 2, 4), None, None, None])[0][1:] == \
        [(195,), (1, 2, 3), (1, 2, 5)]
    a = op.parse_attrs(dict(state_size=5, num_layers=2, mode="lstm", projection_size=3,
                            bidirectional=True, state_outputs=True))
    ins, outs = op.infer_shape(a, [(3, 2, 4), None, None, None])
    assert ins[1] == (860,) and outs == [(3, 2, 6), (4, 2, 3), (4, 2, 5)]


def test_rnn_projection_matches_numpy():
    ins = _inputs("lstm", L=2, D=2, P=3)
    attrs = dict(state_size=4, num_layers=2, mode="lstm", bidirectional=True,
                 projection_size=3, state_outputs=True)
    check_op("RNN", ins, attrs, grad=False, atol=1e-5,
             expected=lambda *a: np_rnn("lstm", *a, L=2, D=2, P=3))


def test_rnn_cell_clipping():
    ins = _inputs("lstm", L=1, D=2)
    attrs = dict(state_size=4, num_layers=1, mode="lstm", bidirectional=True,
                 state_outputs=True, lstm_state_clip_min=-0.2, lstm_state_clip_max=0.3)
    outs = check_op("RNN", ins, attrs, grad=False, atol=1e-5,
                    expected=lambda *a: np_rnn("lstm", *a, D=2, clip=(-0.2, 0.3)))
    assert outs[2].asnumpy().max() <= 0.3 + 1e-6


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_rnn_sequence_length(mode):
    ins = _inputs(mode, T=4, N=3, L=2, D=2)
    lengths = np.array([4, 1, 3], dtype=np.float32)
    attrs = dict(state_size=4, num_layers=2, mode=mode, bidirectional=True,
                 state_outputs=True, use_sequence_length=True)
    outs = check_op("RNN", ins + [lengths], attrs, grad=False, atol=1e-5,
                    expected=lambda *a: np_rnn(mode, *a[:-1], L=2, D=2, lengths=a[-1]))
    assert np.all(outs[0].asnumpy()[1:, 1] == 0)


def test_rnn_dropout_training_only_between_layers():
    ins = [mx.nd.array(a) for a in _inputs("gru", L=2)]
    kw = dict(state_size=4, num_layers=2, mode="gru", p=0.5)
    infer = mx.nd.RNN(*ins, **kw).asnumpy()
    with mx.autograd.train_mode():
        mx.random.seed(0)
        a = mx.nd.RNN(*ins, **kw).asnumpy()
        mx.random.seed(0)
        b = mx.nd.RNN(*ins, **kw).asnumpy()
    np.testing.assert_allclose(a, b)
    assert not np.allclose(a, infer)
    one = [mx.nd.array(a) for a in _inputs("gru", L=1)]
    with mx.autograd.train_mode():
        out = mx.nd.RNN(*one, state_size=4, num_layers=1, mode="gru", p=0.5)
    np.testing.assert_allclose(out.asnumpy(),
                               mx.nd.RNN(*one, state_size=4, num_layers=1, mode="gru").asnumpy())


def test_rnn_errors():
    raw = _inputs("lstm")
    ins = [mx.nd.array(a) for a in raw]
    with pytest.raises(MXNetError, match="parameters"):
        mx.nd.RNN(ins[0], mx.nd.array(raw[1][:10]), ins[2], ins[3], state_size=4,
                  num_layers=1, mode="lstm")
    with pytest.raises(MXNetError, match="state"):
        mx.nd.RNN(ins[0], ins[1], mx.nd.array(raw[2][:, :2]), ins[3], state_size=4,
                  num_layers=1, mode="lstm")
    with pytest.raises(MXNetError, match="mode"):
        mx.nd.RNN(*ins, state_size=4, num_layers=1, mode="lstm2")
    with pytest.raises(MXNetError, match="projection"):
        g = [mx.nd.array(a) for a in _inputs("gru")]
        mx.nd.RNN(*g, state_size=4, num_layers=1, mode="gru", projection_size=2)


def test_rnn_param_concat_joins_parameter_blocks():
    """_rnn_param_concat (the fused RNN layers' parameter packing) is concat along ``dim``
    with its shape inference, as in MXNet 1.9.1."""
    op = mx.nd._internal._rnn_param_concat
    out = op(mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[5, 6]]), num_args=2, dim=0)
    assert out.asnumpy().tolist() == [[1, 2], [3, 4], [5, 6]]
    out = op(mx.nd.array([1, 2]), mx.nd.array([3, 4, 5]), num_args=2, dim=0)
    assert out.asnumpy().tolist() == [1, 2, 3, 4, 5]
    out = op(mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[7], [8]]), num_args=2, dim=1)
    assert out.asnumpy().tolist() == [[1, 2, 7], [3, 4, 8]]
    s = mx.sym._internal._rnn_param_concat(mx.sym.var("a"), mx.sym.var("b"), num_args=2,
                                           dim=0)
    assert s.infer_shape(a=(6,), b=(4,))[1] == [(10,)]
    assert s.infer_shape(a=(2, 3), b=(4, 3))[1] == [(6, 3)]
    with pytest.raises(MXNetError, match="_rnn_param_concat"):
        op(mx.nd.ones((2, 2)), mx.nd.ones((3, 3)), num_args=2, dim=0)

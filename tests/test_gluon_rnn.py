"""gluon.rnn (MXNet 1.9.1): fused layers and cells against NumPy recurrences and fixtures."""
import json
import os

import numpy as np
import pytest

import mxtorch as mx
from helpers import FIXTURES
import mxtorch.gluon.rnn as rnn

FIX = os.path.join(FIXTURES, 'models/lstm_gluon')


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_step(mode, x, states, wi, wh, bi, bh):
    """One NumPy step of MXNet's recurrences; returns (output, new_states)."""
    h = states[0]
    gi, gh = x @ wi.T + bi, h @ wh.T + bh
    if mode == "lstm":
        i, f, g, o = np.split(gi + gh, 4, axis=-1)
        c = _sig(f) * states[1] + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        return h, [h, c]
    if mode == "gru":
        ir, iz, i_n = np.split(gi, 3, axis=-1)
        hr, hz, h_n = np.split(gh, 3, axis=-1)
        r, z = _sig(ir + hr), _sig(iz + hz)
        h = (1 - z) * np.tanh(i_n + r * h_n) + z * h
        return h, [h]
    h = np.maximum(gi + gh, 0) if mode == "rnn_relu" else np.tanh(gi + gh)
    return h, [h]


def _np_seq(mode, xs, states, w, reverse=False):
    """Run a (T, N, C) sequence; w = (wi, wh, bi, bh)."""
    outs = [None] * len(xs)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for t in order:
        outs[t], states = _np_step(mode, xs[t], states, *w)
    return np.stack(outs), states


def _layer_weights(layer, name):
    return [layer.params.get(name + s).data().asnumpy()
            for s in ("_i2h_weight", "_h2h_weight", "_i2h_bias", "_h2h_bias")]


def _np_layer(layer, mode, x, states, num_layers, dirs):
    """NumPy reference of a fused layer (TNC): output and final states."""
    n_st = len(states)
    finals = [[] for _ in range(n_st)]
    for li in range(num_layers):
        outs = []
        for di, d in enumerate("lr"[:dirs]):
            k = li * dirs + di
            o, st = _np_seq(mode, x, [s[k] for s in states],
                            _layer_weights(layer, "%s%d" % (d, li)), reverse=(d == "r"))
            outs.append(o)
            for j in range(n_st):
                finals[j].append(st[j])
        x = np.concatenate(outs, axis=-1)
    return x, [np.stack(f) for f in finals]


@pytest.mark.parametrize("cls,mode,kw", [
    (rnn.LSTM, "lstm", {}), (rnn.GRU, "gru", {}),
    (rnn.RNN, "rnn_tanh", {"activation": "tanh"}), (rnn.RNN, "rnn_relu", {})])
@pytest.mark.parametrize("bidir", [False, True])
def test_layer_matches_numpy(cls, mode, kw, bidir):
    mx.random.seed(1)
    layer = cls(5, num_layers=2, bidirectional=bidir, layout="NTC", **kw)
    layer.initialize(mx.init.Uniform(0.5))
    x = np.random.RandomState(0).uniform(-1, 1, (3, 4, 6)).astype(np.float32)
    states = [mx.nd.array(np.random.RandomState(i + 1).uniform(-1, 1, info['shape']))
              for i, info in enumerate(layer.state_info(3))]
    out, new_states = layer(mx.nd.array(x), states)
    dirs = 2 if bidir else 1
    ref, ref_states = _np_layer(layer, mode, x.transpose(1, 0, 2),
                                [s.asnumpy() for s in states], 2, dirs)
    np.testing.assert_allclose(out.asnumpy(), ref.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)
    for a, b in zip(new_states, ref_states):
        np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-4, atol=1e-5)
    assert layer.l0_i2h_weight.shape == ((4 if mode == "lstm" else 3 if mode == "gru" else 1)
                                         * 5, 6)
    layer.hybridize()
    np.testing.assert_allclose(layer(mx.nd.array(x), states)[0].asnumpy(), out.asnumpy(),
                               rtol=1e-5, atol=1e-6)


def test_layer_without_states_and_repr():
    layer = rnn.GRU(4, num_layers=2, dropout=0.5, bidirectional=True)
    layer.initialize()
    out = layer(mx.nd.ones((3, 2, 5)))
    assert isinstance(out, mx.nd.NDArray) and out.shape == (3, 2, 8)
    assert repr(layer) == "GRU(5 -> 4, TNC, num_layers=2, dropout=0.5, bidirectional)"
    info = layer.state_info(7)
    assert info == [{'shape': (4, 7, 4), '__layout__': 'LNC', 'dtype': 'float32'}]


def test_lstm_projection_and_clip():
    layer = rnn.LSTM(6, projection_size=3, state_clip_min=-0.1, state_clip_max=0.1,
                     input_size=4)
    layer.initialize()
    h0, c0 = layer.begin_state(2)
    assert h0.shape == (1, 2, 3) and c0.shape == (1, 2, 6)
    out, (h, c) = layer(mx.nd.ones((5, 2, 4)), [h0, c0])
    assert out.shape == (5, 2, 3) and h.shape == (1, 2, 3)
    assert np.abs(c.asnumpy()).max() <= 0.1 + 1e-6
    assert layer.l0_h2r_weight.shape == (3, 6)


def _fixture_inputs():
    return [mx.nd.array(np.load(os.path.join(FIX, "input_data%d.npy" % i))) for i in range(3)]


def _expected(i):
    return np.load(os.path.join(FIX, "output_infer_%d.npy" % i))


def test_fixture_load_parameters_outputs_and_grads():
    net = rnn.LSTM(6, num_layers=2, input_size=4, prefix='lstm0_')
    net.load_parameters(os.path.join(FIX, "lstm.params"))
    xs = _fixture_inputs()
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out, (h, c) = net(xs[0], [xs[1], xs[2]])
    mx.autograd.backward([out, h, c])
    for i, o in enumerate([out, h, c]):
        np.testing.assert_allclose(o.asnumpy(), _expected(i), rtol=1e-4, atol=1e-5)
    manifest = json.load(open(os.path.join(FIX, "manifest.json")))
    grads = dict(zip(["data0", "data1", "data2"], xs))
    for name, fname in manifest["train_backward"]["grads"].items():
        got = grads[name].grad if name in grads else \
            net.params.get(name[len('lstm0_'):]).grad()
        np.testing.assert_allclose(got.asnumpy(), np.load(os.path.join(FIX, fname)),
                                   rtol=1e-4, atol=1e-5)


def test_fixture_symbolblock_imports():
    blk = mx.gluon.SymbolBlock.imports(os.path.join(FIX, "lstm-symbol.json"),
                                       ['data0', 'data1', 'data2'],
                                       os.path.join(FIX, "lstm-0000.params"))
    outs = blk(*_fixture_inputs())
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), _expected(i), rtol=1e-4, atol=1e-5)


def test_export_matches_fixture_json_and_unfused_names(tmp_path):
    net = rnn.LSTM(6, num_layers=2, input_size=4, prefix='lstm0_')
    net.load_parameters(os.path.join(FIX, "lstm.params"))
    net.hybridize()
    xs = _fixture_inputs()
    net(xs[0], [xs[1], xs[2]])
    net.export(str(tmp_path / "lstm"))
    ours = json.load(open(str(tmp_path / "lstm-symbol.json")))
    theirs = json.load(open(os.path.join(FIX, "lstm-symbol.json")))
    assert ours["nodes"] == theirs["nodes"]
    assert ours["heads"] == theirs["heads"] and ours["arg_nodes"] == theirs["arg_nodes"]
    params = mx.nd.load(str(tmp_path / "lstm-0000.params"))
    assert sorted(params) == sorted(mx.nd.load(os.path.join(FIX, "lstm-0000.params")))
    net.save_parameters(str(tmp_path / "p.params"))
    manifest = json.load(open(os.path.join(FIX, "manifest.json")))
    assert sorted(mx.nd.load(str(tmp_path / "p.params"))) == sorted(manifest["param_names"])


def test_bidirectional_unfused_names_roundtrip(tmp_path):
    net = rnn.RNN(3, bidirectional=True, input_size=2)
    net.initialize()
    net.save_parameters(str(tmp_path / "b.params"))
    keys = sorted(mx.nd.load(str(tmp_path / "b.params")))
    assert keys[0] == '_unfused.0.l_cell.h2h_bias' and len(keys) == 8
    other = rnn.RNN(3, bidirectional=True, input_size=2)
    other.load_parameters(str(tmp_path / "b.params"))
    np.testing.assert_array_equal(other.r0_i2h_weight.data().asnumpy(),
                                  net.r0_i2h_weight.data().asnumpy())


def test_unfuse_matches_fused():
    layer = rnn.LSTM(4, num_layers=2, input_size=3, prefix='f_')
    layer.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.uniform(shape=(5, 2, 3))
    stack = layer._unfuse()
    out, _ = stack.unroll(5, x, layout='TNC', merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), layer(x).asnumpy(), rtol=1e-5, atol=1e-6)


def test_layer_errors():
    with pytest.raises(AssertionError, match="Invalid layout"):
        rnn.LSTM(3, layout='CNT')
    layer = rnn.GRU(3, input_size=2)
    layer.initialize()
    with pytest.raises(ValueError, match="Invalid recurrent state shape"):
        layer(mx.nd.ones((4, 2, 2)), mx.nd.zeros((1, 5, 3)))


# ---------------------------------------------------------------- cells
def _cell_weights(cell):
    return [p.data().asnumpy() for p in (cell.i2h_weight, cell.h2h_weight,
                                         cell.i2h_bias, cell.h2h_bias)]


@pytest.mark.parametrize("cls,mode", [(rnn.RNNCell, "rnn_tanh"), (rnn.LSTMCell, "lstm"),
                                      (rnn.GRUCell, "gru")])
def test_cell_unroll_matches_numpy(cls, mode):
    cell = cls(4, input_size=3)
    cell.initialize(mx.init.Uniform(0.5))
    x = np.random.RandomState(2).uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    out, states = cell.unroll(5, mx.nd.array(x), merge_outputs=True)
    n_st = len(cell.state_info())
    ref, ref_st = _np_seq(mode, x.transpose(1, 0, 2), [np.zeros((2, 4))] * n_st,
                          _cell_weights(cell))
    np.testing.assert_allclose(out.asnumpy(), ref.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)
    for a, b in zip(states, ref_st):
        np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-4, atol=1e-5)
    cell.hybridize()
    out2, _ = cell.unroll(5, mx.nd.array(x), merge_outputs=True)
    np.testing.assert_allclose(out2.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)


def test_cell_unroll_valid_length():
    cell = rnn.LSTMCell(3)
    cell.initialize()
    x = mx.nd.random.uniform(shape=(2, 4, 5))
    full, _ = cell.unroll(4, x, merge_outputs=True)
    out, (h, c) = cell.unroll(4, x, merge_outputs=True, valid_length=mx.nd.array([2, 4]))
    assert np.all(out.asnumpy()[0, 2:] == 0)
    np.testing.assert_allclose(out.asnumpy()[0, :2], full.asnumpy()[0, :2], rtol=1e-6)
    np.testing.assert_allclose(h.asnumpy()[0], full.asnumpy()[0, 1], rtol=1e-6)
    np.testing.assert_allclose(h.asnumpy()[1], full.asnumpy()[1, 3], rtol=1e-6)


def test_sequential_residual_dropout_zoneout():
    seq = rnn.SequentialRNNCell()
    with seq.name_scope():
        seq.add(rnn.LSTMCell(4, input_size=4))
        seq.add(rnn.DropoutCell(0.0))
        seq.add(rnn.ResidualCell(rnn.GRUCell(4, input_size=4)))
    seq.initialize()
    assert len(seq) == 3 and len(seq.state_info(2)) == 3
    x = mx.nd.random.uniform(shape=(2, 3, 4))
    outs, states = seq.unroll(3, x, merge_outputs=False)
    assert len(outs) == 3 and len(states) == 3
    mid, _ = seq[0].unroll(3, x, merge_outputs=True)
    seq[2].base_cell._modified = False
    gru_out, _ = seq[2].base_cell.unroll(3, mid, merge_outputs=True)
    np.testing.assert_allclose(outs[2].asnumpy(), (gru_out + mid).asnumpy()[:, 2], rtol=1e-5)
    zone = rnn.ZoneoutCell(rnn.RNNCell(3, input_size=4), 0.0, 0.0)
    zone.initialize()
    z_out, _ = zone.unroll(3, x, merge_outputs=True)
    zone.base_cell._modified = False
    b_out, _ = zone.base_cell.unroll(3, x, merge_outputs=True)
    np.testing.assert_allclose(z_out.asnumpy(), b_out.asnumpy(), rtol=1e-6)


def test_bidirectional_cell_and_hybrid_sequential():
    bi = rnn.BidirectionalCell(rnn.GRUCell(3, prefix='l_'), rnn.GRUCell(3, prefix='r_'))
    bi.initialize()
    x = mx.nd.random.uniform(shape=(4, 2, 5))
    out, states = bi.unroll(4, x, layout='TNC', merge_outputs=True)
    assert out.shape == (4, 2, 6) and len(states) == 2
    l_cell, r_cell = bi._children.values()
    l_ref, _ = l_cell.unroll(4, x, layout='TNC', merge_outputs=True)
    r_ref, _ = r_cell.unroll(4, mx.nd.reverse(x, axis=0), layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy()[..., :3], l_ref.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(out.asnumpy()[..., 3:], r_ref.asnumpy()[::-1], rtol=1e-5)
    hs = rnn.HybridSequentialRNNCell()
    hs.add(rnn.LSTMCell(3))
    hs.add(rnn.LSTMCell(3))
    hs.initialize()
    hs.hybridize()
    o, s = hs(mx.nd.ones((2, 4)), hs.begin_state(batch_size=2))
    assert o.shape == (2, 3) and len(s) == 4


def test_cell_symbolic_unroll():
    cell = rnn.LSTMCell(3, prefix='lstm_')
    out, states = cell.unroll(3, mx.sym.var('data'), merge_outputs=True)
    assert out.list_arguments() == ['data', 'lstm_i2h_weight', 'lstm_i2h_bias',
                                    'lstm_h2h_weight', 'lstm_h2h_bias']
    assert out.infer_shape(data=(2, 3, 5))[1] == [(2, 3, 3)]


def test_cell_errors():
    bi = rnn.BidirectionalCell(rnn.GRUCell(3), rnn.GRUCell(3))
    with pytest.raises(NotImplementedError, match="cannot be stepped"):
        bi(mx.nd.ones((2, 3)), [])
    base = rnn.RNNCell(3)
    rnn.ResidualCell(base)
    with pytest.raises(AssertionError, match="modifier cells"):
        base.begin_state(2)
    with pytest.raises(AssertionError, match="already modified"):
        rnn.ZoneoutCell(base)
    with pytest.raises(AssertionError, match="rate must be a number"):
        rnn.DropoutCell('0.5')
    with pytest.raises(AssertionError, match="deprecated"):
        rnn.LSTMCell(3).unroll(3, None)

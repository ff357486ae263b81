"""mx.rnn (MXNet 1.9.1): symbolic cells, FusedRNNCell, BucketSentenceIter, checkpoints."""
import numpy as np
import pytest

import mxtorch as mx
import mxtorch.rnn as mrnn


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_lstm(x, wi, wh, bi, bh):
    """NumPy LSTM over (N, T, C) from zero states (gates i, f, c, o)."""
    n, t, _ = x.shape
    h = np.zeros((n, wh.shape[1]))
    c = np.zeros_like(h)
    outs = []
    for k in range(t):
        i, f, g, o = np.split(x[:, k] @ wi.T + bi + h @ wh.T + bh, 4, axis=-1)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs, axis=1), h, c


def _forward(sym, args):
    """Bind ``sym`` on ``args`` (name -> numpy) and return its outputs as numpy."""
    exe = sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()})
    return [o.asnumpy() for o in exe.forward()]


def test_lstm_cell_unroll_matches_numpy():
    cell = mrnn.LSTMCell(4, prefix='lstm_')
    out, _ = cell.unroll(3, mx.sym.var('data'), merge_outputs=True)
    assert out.list_arguments() == ['data', 'lstm_i2h_weight', 'lstm_i2h_bias',
                                    'lstm_h2h_weight', 'lstm_h2h_bias']
    # the default begin states are zeros of shape (0, H): filled in when bound
    out, (h, c) = cell.unroll(3, mx.sym.var('data'), merge_outputs=True)
    sym = mx.sym.Group([out, h, c])
    assert sym.list_outputs()[1:] == ['lstm_t2_out_output', 'lstm_t2_state_output']
    rs = np.random.RandomState(0)
    args = {'data': rs.uniform(-1, 1, (2, 3, 5)), 'lstm_i2h_weight': rs.uniform(-1, 1, (16, 5)),
            'lstm_h2h_weight': rs.uniform(-1, 1, (16, 4)), 'lstm_i2h_bias': rs.uniform(size=16),
            'lstm_h2h_bias': rs.uniform(size=16)}
    got = _forward(sym, args)
    ref = _np_lstm(args['data'], args['lstm_i2h_weight'], args['lstm_h2h_weight'],
                   args['lstm_i2h_bias'], args['lstm_h2h_bias'])
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_cell_graph_names_match_mxnet():
    gru = mrnn.GRUCell(4, prefix='gru_')
    out, _ = gru.unroll(2, mx.sym.var('data'))
    assert [o.name for o in out] == ['gru_t0_out', 'gru_t1_out']
    assert 'gru_t0__i2h_output' in out[1].get_internals().list_outputs()
    seq = mrnn.SequentialRNNCell()
    seq.add(mrnn.LSTMCell(4, prefix='a_'))
    seq.add(mrnn.DropoutCell(0.2))
    seq.add(mrnn.ResidualCell(mrnn.GRUCell(4, prefix='b_')))
    outs, states = seq.unroll(3, mx.sym.var('data'), merge_outputs=False)
    assert mx.sym.Group(outs + states).list_outputs() == [
        'b_t0_out_plus_residual_output', 'b_t1_out_plus_residual_output',
        'b_t2_out_plus_residual_output', 'a_t2_out_output', 'a_t2_state_output',
        'b_t2_out_output']
    bi = mrnn.BidirectionalCell(mrnn.LSTMCell(4, prefix='l_'), mrnn.LSTMCell(4, prefix='r_'))
    out, states = bi.unroll(3, mx.sym.var('data'), merge_outputs=True)
    assert out.name == 'bi_out' and len(states) == 2 and len(states[0]) == 2
    assert out.infer_shape(data=(2, 3, 5))[1] == [(2, 3, 8)]


def test_fused_cell_matches_unfused_and_pack_roundtrip():
    fused = mrnn.FusedRNNCell(4, num_layers=2, mode='lstm', bidirectional=True,
                              get_next_state=True, prefix='f_')
    out, states = fused.unroll(3, mx.sym.var('data'), layout='TNC', merge_outputs=True,
                               begin_state=fused.begin_state(func=mx.sym.Variable))
    assert len(states) == 2 and states[0].attr('__layout__') == 'LNC'
    arg_shapes, _, _ = out.infer_shape(data=(3, 2, 5))
    size = dict(zip(out.list_arguments(), arg_shapes))['f_parameters']
    flat = mx.nd.array(np.random.RandomState(1).uniform(-0.5, 0.5, size))
    unpacked = fused.unpack_weights({'f_parameters': flat})
    assert unpacked['f_l0_i2h_i_weight'].shape == (4, 5)
    assert unpacked['f_r1_i2h_o_weight'].shape == (4, 8)
    packed = fused.pack_weights(unpacked)
    np.testing.assert_array_equal(packed['f_parameters'].asnumpy(), flat.asnumpy())
    stack = fused.unfuse()
    zeros = [mx.sym.zeros((2, 4))] * 8
    u_out, _ = stack.unroll(3, mx.sym.var('data'), layout='TNC', merge_outputs=True,
                            begin_state=zeros)
    cell_args = stack.pack_weights(unpacked)
    x = np.random.RandomState(2).uniform(-1, 1, (3, 2, 5))
    u_args = {k: v.asnumpy() for k, v in cell_args.items() if k in u_out.list_arguments()}
    got_u = _forward(u_out, dict(u_args, data=x))[0]
    z = np.zeros((4, 2, 4))
    got_f = _forward(out, {'data': x, 'f_parameters': flat.asnumpy(), 'f_begin_state_0': z,
                           'f_begin_state_1': z})[0]
    np.testing.assert_allclose(got_u, got_f, rtol=1e-4, atol=1e-5)


def test_encode_sentences_and_bucket_iter():
    coded, vocab = mrnn.encode_sentences([['a', 'b'], ['b', 'c', 'a']], invalid_label=0,
                                         start_label=0)
    assert coded == [[1, 2], [2, 3, 1]] and vocab == {'\n': 0, 'a': 1, 'b': 2, 'c': 3}
    with pytest.raises(AssertionError, match="Unknown token d"):
        mrnn.encode_sentences([['d']], vocab=vocab)
    coded, _ = mrnn.encode_sentences([['d']], vocab=dict(vocab), unknown_token='<unk>',
                                     start_label=4)
    assert coded == [[4]]
    sents = [[1, 2, 3]] * 4 + [[1, 2, 3, 4, 5]] * 4 + [[1] * 9]
    it = mrnn.BucketSentenceIter(sents, 2, buckets=[3, 6], invalid_label=0)
    assert it.default_bucket_key == 6 and it.provide_data[0].shape == (2, 6)
    batches = list(it)
    assert len(batches) == 4 and sorted(b.bucket_key for b in batches) == [3, 3, 6, 6]
    b = next(x for x in batches if x.bucket_key == 6)
    np.testing.assert_array_equal(b.data[0].asnumpy()[0], [1, 2, 3, 4, 5, 0])
    np.testing.assert_array_equal(b.label[0].asnumpy()[0], [2, 3, 4, 5, 0, 0])
    it_tn = mrnn.BucketSentenceIter(sents, 2, buckets=[3, 6], layout='TN')
    assert it_tn.next().data[0].shape[1] == 2
    with pytest.raises(ValueError, match="Invalid layout"):
        mrnn.BucketSentenceIter(sents, 2, buckets=[3, 6], layout='XY')


def _sym_gen_factory(vocab, num_hidden):
    def sym_gen(seq_len):
        cell = mrnn.SequentialRNNCell()
        cell.add(mrnn.LSTMCell(num_hidden, prefix='lstm_l0_'))
        data = mx.sym.Variable('data')
        label = mx.sym.Variable('softmax_label')
        embed = mx.sym.Embedding(data=data, input_dim=vocab, output_dim=8, name='embed')
        outputs, _ = cell.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.Reshape(outputs, shape=(-1, num_hidden))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=vocab, name='pred')
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(data=pred, label=label, name='softmax')
        return pred, ('data',), ('softmax_label',)
    return sym_gen


def test_bucketing_module_trains_on_bucket_iter(tmp_path):
    rs = np.random.RandomState(0)
    sents = [list(rs.randint(1, 10, n)) for n in [4] * 8 + [7] * 8]
    mx.random.seed(0)
    it = mrnn.BucketSentenceIter(sents, 4, buckets=[4, 7], invalid_label=0)
    mod = mx.mod.BucketingModule(_sym_gen_factory(10, 8), default_bucket_key=it.default_bucket_key)
    metric = mx.metric.Perplexity(0)
    mod.fit(it, eval_metric=metric, num_epoch=3, optimizer='adam',
            optimizer_params={'learning_rate': 0.05}, initializer=mx.init.Xavier())
    it.reset()
    score = dict(mod.score(it, mx.metric.Perplexity(0)))['perplexity']
    assert score < 9.5
    cell = mrnn.LSTMCell(8, prefix='lstm_l0_')
    arg, aux = mod.get_params()
    sym = _sym_gen_factory(10, 8)(7)[0]
    mrnn.save_rnn_checkpoint(cell, str(tmp_path / 'lm'), 3, sym, arg, aux)
    saved = mx.nd.load(str(tmp_path / 'lm-0003.params'))
    assert 'arg:lstm_l0_i2h_f_weight' in saved and 'arg:lstm_l0_i2h_weight' not in saved
    _, arg2, _ = mrnn.load_rnn_checkpoint(cell, str(tmp_path / 'lm'), 3)
    np.testing.assert_array_equal(arg2['lstm_l0_i2h_weight'].asnumpy(),
                                  arg['lstm_l0_i2h_weight'].asnumpy())
    cb = mrnn.do_rnn_checkpoint([cell], str(tmp_path / 'cb'), period=2)
    cb(0, sym, arg, aux)
    cb(1, sym, arg, aux)
    # the checkpoint of epoch 2 only (its manifest makes symbol + params one set)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith('cb')) == \
        ['cb-0002.manifest', 'cb-0002.params', 'cb-symbol.json']


def test_rnn_params_and_begin_state():
    params = mrnn.RNNParams('x_')
    assert params.get('w') is params.get('w') and params.get('w').name == 'x_w'
    cell = mrnn.GRUCell(3, prefix='g_')
    states = cell.begin_state()
    assert states[0].name == 'g_begin_state_0' and cell.state_shape == [(0, 3)]
    v = cell.begin_state(func=mx.sym.Variable)
    assert v[0].list_arguments() == ['g_begin_state_1']


def test_errors():
    fused = mrnn.FusedRNNCell(3)
    with pytest.raises(NotImplementedError, match="cannot be stepped"):
        fused(mx.sym.var('x'), [])
    with pytest.raises(AssertionError, match="Please unfuse first"):
        mrnn.ZoneoutCell(fused)
    base = mrnn.LSTMCell(3)
    mrnn.ZoneoutCell(base, 0.1, 0.1)
    with pytest.raises(AssertionError, match="modifier cells"):
        base.begin_state()
    with pytest.raises(AssertionError, match="dropout probability must be a number"):
        mrnn.DropoutCell(None)
    with pytest.raises(AssertionError, match="Unsupported layout"):
        fused.unroll(2, mx.sym.var('x'), layout='NCT')


@pytest.mark.parametrize("cell_cls,n_states,sums", [
    (mx.rnn.ConvRNNCell, 1, [10.34095, 10.1113]),
    (mx.rnn.ConvLSTMCell, 2, [1.27874, 2.38282, 5.70679]),
    (mx.rnn.ConvGRUCell, 1, [0.2983, 0.08059]),
])
def test_conv_rnn_cells(cell_cls, n_states, sums):
    # sums of the outputs and last states, from MXNet 1.9.1 on the same weights
    cell = cell_cls(input_shape=(2, 2, 5, 4), num_hidden=3, prefix="c_", i2h_pad=(0, 0),
                    h2h_dilate=(2, 1))
    outs, states = cell.unroll(2, [mx.sym.var("t0"), mx.sym.var("t1")])
    net = mx.sym.Group(outs + states[1:])
    assert sorted(cell.params._params) == ["c_h2h_bias", "c_h2h_weight", "c_i2h_bias",
                                           "c_i2h_weight"]
    assert net.list_outputs()[:2] == ["c_t0_out_output", "c_t1_out_output"]
    assert cell.state_info == [{"shape": (0, 3, 3, 2), "__layout__": "NCHW"}] * n_states
    arg_shapes, out_shapes, _ = net.infer_shape(t0=(2, 2, 5, 4), t1=(2, 2, 5, 4))
    assert out_shapes == [(2, 3, 3, 2)] * len(sums)
    rng = np.random.RandomState(0)
    args = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s))
            for n, s in zip(net.list_arguments(), arg_shapes)}
    exe = net.bind(mx.cpu(), args)
    exe.forward()
    np.testing.assert_allclose([o.asnumpy().sum() for o in exe.outputs], sums, rtol=1e-4)


def test_conv_rnn_cell_checks_and_namespace():
    with pytest.raises(AssertionError, match="odd"):
        mx.rnn.ConvRNNCell(input_shape=(1, 3, 8, 8), num_hidden=2, h2h_kernel=(2, 3))
    assert mx.rnn.rnn_cell.ConvLSTMCell is mx.rnn.ConvLSTMCell
    assert mx.rnn.ConvGRUCell((1, 3, 8, 8), 2)._prefix == "ConvGRU_"
    with pytest.raises(NotImplementedError):
        mx.rnn.BaseConvRNNCell((1, 3, 8, 8), 2, (3, 3), (1, 1), (3, 3), (1, 1), (1, 1), (1, 1),
                               None, None, "zeros", "zeros", "tanh")(mx.sym.var("x"), [])

"""_contrib_interleaved_matmul_* against NumPy and values from MXNet 1.9.1."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from helpers import check_op

RNG = np.random.RandomState(3)


def _split(x, heads, parts, which):
    length, batch, dim = x.shape
    p = x.reshape(length, batch, heads, parts, -1)[:, :, :, which]
    return p.transpose(1, 2, 0, 3).reshape(batch * heads, length, -1)


def _merge(o, heads):
    bh, length, dim = o.shape
    return o.reshape(bh // heads, heads, length, dim).transpose(2, 0, 1, 3).reshape(
        length, bh // heads, heads * dim)


def test_self_attention_products():
    qkv = RNG.rand(4, 2, 3 * 3 * 5)
    att = RNG.rand(6, 4, 4)

    def qk(x):
        q, k = _split(x, 3, 3, 0), _split(x, 3, 3, 1)
        return q @ k.transpose(0, 2, 1) / np.sqrt(5)
    check_op("_contrib_interleaved_matmul_selfatt_qk", [qkv], {"heads": 3}, qk)
    check_op("_contrib_interleaved_matmul_selfatt_valatt", [qkv, att], {"heads": 3},
             lambda x, a: _merge(a @ _split(x, 3, 3, 2), 3))


def test_encoder_decoder_attention_products():
    q, kv, att = RNG.rand(3, 2, 15), RNG.rand(4, 2, 30), RNG.rand(6, 3, 4)
    check_op("_contrib_interleaved_matmul_encdec_qk", [q, kv], {"heads": 3},
             lambda a, b: _split(a, 3, 1, 0) @ _split(b, 3, 2, 0).transpose(0, 2, 1) / np.sqrt(5))
    check_op("_contrib_interleaved_matmul_encdec_valatt", [kv, att], {"heads": 3},
             lambda b, a: _merge(a @ _split(b, 3, 2, 1), 3))
    sym = mx.sym.contrib.interleaved_matmul_encdec_qk(mx.sym.var("q"), mx.sym.var("kv"),
                                                      heads=3)
    assert sym.list_arguments() == ["q", "kv"]
    assert sym.infer_shape(q=(3, 2, 15), kv=(4, 2, 30))[1] == [(6, 3, 4)]
    with pytest.raises(MXNetError, match="heads"):
        mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.ones((4, 2, 10)), heads=3)


def test_attention_chain_matches_mxnet():
    # sums from MXNet 1.9.1 on the same inputs: scores, output, and the gradient's square sum
    rng = np.random.RandomState(3)
    qkv = mx.nd.array(rng.rand(4, 2, 45))
    qkv.attach_grad()
    with mx.autograd.record():
        s = mx.nd.contrib.interleaved_matmul_selfatt_qk(qkv, heads=3)
        o = mx.nd.contrib.interleaved_matmul_selfatt_valatt(qkv, mx.nd.softmax(s), heads=3)
    o.backward(mx.nd.array(rng.rand(*o.shape)))
    assert s.shape == (6, 4, 4) and o.shape == (4, 2, 15)
    np.testing.assert_allclose([float(s.sum().asscalar()), float(o.sum().asscalar()),
                                float((qkv.grad ** 2).sum().asscalar())],
                               [44.8641, 65.2238, 35.4215], rtol=1e-4)

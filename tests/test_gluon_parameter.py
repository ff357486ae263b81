"""gluon.Parameter / Constant / ParameterDict against MXNet 1.9.1 behaviour."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch import gluon, initializer


def test_parameter_basics():
    p = gluon.Parameter('w', shape=3)
    assert p.shape == (3,) and repr(p) == "Parameter w (shape=(3,), dtype=<class 'numpy.float32'>)"
    with pytest.raises(AssertionError, match="grad_req must be one of 'write', 'add', or 'null'"):
        p.grad_req = 'bad'
    with pytest.raises(RuntimeError, match="Parameter 'w' has not been initialized. Note that"):
        p.data()
    with pytest.raises(RuntimeError, match="Parameter 'w' has not been initialized"):
        p.list_ctx()
    with pytest.raises(AssertionError, match="stype for Parameter 'x' must be one of"):
        gluon.Parameter('x', stype='bad')
    assert gluon.Parameter('n', differentiable=False).grad_req == 'null'


def test_initialize_contexts_and_grads():
    p = gluon.Parameter('w', shape=(2, 3), init=initializer.One())
    ctxs = [mx.cpu(0), mx.cpu(1)]
    p.initialize(ctx=ctxs)
    assert p.list_ctx() == ctxs
    assert [d.context for d in p.list_data()] == ctxs
    np.testing.assert_array_equal(p.data(mx.cpu(1)).asnumpy(), np.ones((2, 3)))
    with mx.cpu(1):
        assert p.data() is p.list_data()[1]
    with pytest.raises(RuntimeError, match=r"was not initialized on context cpu\(2\)"):
        p.data(mx.cpu(2))
    with pytest.warns(UserWarning, match="Parameter 'w' is already initialized, ignoring"):
        p.initialize()
    x = mx.nd.ones((4, 3))
    with mx.autograd.record():
        y = mx.nd.FullyConnected(x, p.data(mx.cpu(0)), no_bias=True, num_hidden=2)
    y.backward()
    np.testing.assert_array_equal(p.grad(mx.cpu(0)).asnumpy(), np.full((2, 3), 4.0))
    assert p.list_data()[0]._fresh_grad
    p.zero_grad()
    assert p.list_grad()[0].asnumpy().sum() == 0
    p.set_data(mx.nd.full((2, 3), 2.0))
    np.testing.assert_array_equal(p.data(mx.cpu(1)).asnumpy(), np.full((2, 3), 2.0))
    p.data(mx.cpu(1))[:] = 4.0
    np.testing.assert_array_equal(p._reduce().asnumpy(), np.full((2, 3), 3.0))
    p.reset_ctx(mx.cpu(0))
    assert p.list_ctx() == [mx.cpu(0)] and p.data().asnumpy()[0, 0] == 3.0
    p.initialize(init=initializer.Zero(), force_reinit=True)
    assert p.data().asnumpy().sum() == 0


def test_grad_req_null_and_add():
    p = gluon.Parameter('w', shape=(2,), grad_req='null')
    p.initialize()
    with pytest.raises(RuntimeError, match="because grad_req='null'"):
        p.grad()
    with pytest.raises(RuntimeError, match="because grad_req='null'"):
        p.list_grad()
    p.grad_req = 'add'
    x = p.data()
    for _ in range(2):
        with mx.autograd.record():
            y = (p.data() * 3).sum()
        y.backward()
    np.testing.assert_allclose(p.grad().asnumpy(), [6.0, 6.0])
    assert x is p.data()


def test_deferred_initialization():
    p = gluon.Parameter('w', shape=(0, 3), allow_deferred_init=True)
    p.initialize(ctx=mx.cpu(0))
    assert p.list_ctx() == [mx.cpu(0)]
    with pytest.raises(gluon.DeferredInitializationError, match="initialization was deferred"):
        p.data()
    p.set_data(mx.nd.ones((2, 3)))  # stored until the shape is known
    p._finish_deferred_init()
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((2, 3)))
    q = gluon.Parameter('q', shape=(0, 3))
    with pytest.raises(ValueError, match=r"Cannot initialize Parameter 'q' because it has "
                                         r"invalid shape: \(0, 3\)"):
        q.initialize()
    r = gluon.Parameter('r', shape=(0, 3), allow_deferred_init=True)
    r.initialize()
    with pytest.raises(AssertionError, match="Please specify in_units"):
        r._finish_deferred_init()


def test_shape_setter_and_load_init():
    p = gluon.Parameter('w', shape=(0, 3))
    p.shape = (5, 3)
    with pytest.raises(AssertionError, match='incompatible with given shape'):
        p.shape = (5, 4)
    q = gluon.Parameter('q', shape=(0, 2))
    q._load_init(mx.nd.ones((3, 2)), mx.cpu())
    assert q.shape == (3, 2) and q.data().shape == (3, 2)
    with pytest.raises(AssertionError, match='shape incompatible expected'):
        gluon.Parameter('z', shape=(2, 2))._load_init(mx.nd.ones((3, 2)), None)
    with pytest.raises(AssertionError, match='dtype incompatible expected'):
        gluon.Parameter('z')._load_init(mx.nd.ones((3,), dtype='float64'), None)
    z = gluon.Parameter('z')
    z._load_init(mx.nd.ones((3,), dtype='float64'), None, cast_dtype=True)
    assert z.data().dtype == np.float32


def test_var_cast_row_sparse():
    p = gluon.Parameter('w', shape=(2, 0), lr_mult=2.0, init='zeros')
    attrs = p.var().list_attr()
    assert (attrs['__shape__'], attrs['__lr_mult__'], attrs['__wd_mult__']) == \
        ('(2, 0)', '2.0', '1.0')
    assert (attrs['__dtype__'], attrs['__storage_type__'], attrs['__init__']) == \
        ('0', '0', 'zeros')
    assert p.var() is p.var()
    d = gluon.Parameter('d', shape=(2,))
    d.initialize()
    d.cast('float64')
    assert d.data().dtype == np.float64 and d.grad().dtype == np.float64
    with pytest.raises(RuntimeError, match='Please use data\\(\\) instead'):
        d.row_sparse_data(mx.nd.array([0]))
    rs = gluon.Parameter('rs', shape=(2, 2), stype='row_sparse')
    with pytest.raises(RuntimeError, match='Please use row_sparse_data\\(\\) instead'):
        rs.data()
    with pytest.raises(RuntimeError, match='when no Trainer is created with it'):
        rs.row_sparse_data(mx.nd.array([0]))


def test_constant():
    c = gluon.Constant('c', [[1, 2], [3, 4]])
    assert repr(c) == "Constant c (shape=(2, 2), dtype=<class 'numpy.float32'>)"
    assert c.grad_req == 'null'
    with pytest.warns(UserWarning, match='does not support grad_req other than "null"'):
        c.grad_req = 'write'
    c.initialize()
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])


def test_parameter_dict_get_and_share():
    pd = gluon.ParameterDict('net_')
    w = pd.get('w', shape=(0, 3))
    assert w.name == 'net_w' and pd.prefix == 'net_'
    assert pd.get('w', shape=(4, 0)) is w and w.shape == (4, 3)
    with pytest.raises(AssertionError, match="desired attribute does not match with stored "
                                             "for attribute 'shape'"):
        pd.get('w', shape=(5, 3))
    assert pd.get('w', dtype='float32') is w
    shared = gluon.ParameterDict('net_', shared=pd)
    assert shared.get('w') is w and list(shared.keys()) == ['net_w']
    with pytest.raises(KeyError, match="No constant named 'net_k'"):
        pd.get_constant('k')
    k = pd.get_constant('k', [1, 2])
    assert pd.get_constant('k', [1, 2]) is k
    with pytest.raises(AssertionError, match="already exists but it's value doesn't match"):
        pd.get_constant('k', [1, 3])
    with pytest.raises(AssertionError, match='already exists but it is not a constant'):
        pd.get_constant('w', [1])
    other = gluon.ParameterDict('net_')
    other.get('w', shape=(4, 3))
    with pytest.raises(AssertionError, match="different Parameters with the same name 'net_w'"):
        pd.update(other)
    assert repr(gluon.ParameterDict('a_')) == 'a_ (\n\n)'


def test_parameter_dict_ops(tmp_path):
    pd = gluon.ParameterDict('m_')
    pd.get('w', shape=(2, 3))
    pd.get('b', shape=(2,), init='zeros')
    pd.initialize(initializer.One(), ctx=[mx.cpu(0), mx.cpu(1)])
    assert sorted(pd.list_ctx(), key=str) == [mx.cpu(0), mx.cpu(1)]
    np.testing.assert_array_equal(pd['m_b'].data(mx.cpu(1)).asnumpy(), [0, 0])
    np.testing.assert_array_equal(pd['m_w'].data(mx.cpu(1)).asnumpy(), np.ones((2, 3)))
    pd['m_w'].grad(mx.cpu(0))[:] = 5
    pd.zero_grad()
    assert pd['m_w'].grad(mx.cpu(0)).asnumpy().sum() == 0
    pd.setattr('lr_mult', 0.5)
    assert pd['m_b'].lr_mult == 0.5
    pd.reset_ctx(mx.cpu(0))
    f = str(tmp_path / 'p.params')
    pd.save(f, strip_prefix='m_')
    assert sorted(mx.nd.load(f)) == ['b', 'w']
    with pytest.raises(ValueError, match="Prefix 'zz_' is to be striped before saving"):
        pd.save(f, strip_prefix='zz_')
    pd2 = gluon.ParameterDict('m_')
    pd2.get('w', shape=(0, 3))
    pd2.get('b')
    pd2.load(f, restore_prefix='m_')
    np.testing.assert_array_equal(pd2['m_w'].data().asnumpy(), np.ones((2, 3)))
    with pytest.raises(AssertionError, match="restore_prefix is 'x_' but Parameters name"):
        pd2.load(f, restore_prefix='x_')
    pd3 = gluon.ParameterDict('m_')
    pd3.get('w')
    pd3.get('extra')
    with pytest.raises(AssertionError, match="Parameter 'extra' is missing in file"):
        pd3.load(f, restore_prefix='m_')
    with pytest.raises(AssertionError, match="Parameter 'b' loaded from file.*not present"):
        pd3.load(f, restore_prefix='m_', allow_missing=True)
    pd3.load(f, restore_prefix='m_', allow_missing=True, ignore_extra=True)
    pd4 = gluon.ParameterDict()
    pd4.get('w', dtype='float16')
    pd4.load_dict({'arg:w': mx.nd.ones((2,))}, cast_dtype=True, dtype_source='saved')
    assert pd4['w'].dtype == np.float32

"""mx.autograd on torch.autograd: recording scopes, grad_req, backward, grad, Function."""
import weakref

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError


def test_scopes_and_flags():
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    with mx.autograd.record():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        with mx.autograd.pause():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
        with mx.autograd.predict_mode():
            assert not mx.autograd.is_training() and mx.autograd.is_recording()
    with mx.autograd.record(train_mode=False):
        assert not mx.autograd.is_training()
    with mx.autograd.train_mode():
        assert mx.autograd.is_training() and not mx.autograd.is_recording()
    assert mx.autograd.set_recording(True) is False
    assert mx.autograd.set_recording(False) is True
    assert mx.autograd.set_training(True) is False
    assert mx.autograd.set_training(False) is True


def test_grad_req_write_and_add():
    x = mx.nd.array([[1, 2], [3, 4]])
    x.attach_grad()
    for _ in range(2):
        with mx.autograd.record():
            y = x * x + x
        y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[3, 5], [7, 9]])
    x.attach_grad(grad_req="add")
    for _ in range(3):
        with mx.autograd.record():
            y = x * 3
        y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 2), 9))


def test_grad_req_null_and_head_grads():
    x = mx.nd.array([1.0, 2.0])
    w = mx.nd.array([3.0, 4.0])
    x.attach_grad()
    w.attach_grad(grad_req="null")
    with mx.autograd.record():
        y = x * w
    y.backward(mx.nd.array([10.0, 100.0]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [30, 400])
    assert w.grad is not None and np.all(w.grad.asnumpy() == 0)


def test_not_recorded_outside_scope():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    y = x * 2
    with pytest.raises(MXNetError, match="not in a computational graph"):
        y.backward()


@pytest.mark.parametrize("expr", [
    lambda x: x + x, lambda x: x - 1, lambda x: 2 - x, lambda x: x * 3, lambda x: x / x,
    lambda x: 1 / x, lambda x: x ** 2, lambda x: 2 ** x, lambda x: x % 2, lambda x: x > 1,
    lambda x: x == x, lambda x: mx.nd.exp(x), lambda x: mx.nd.elemwise_mul(x, x),
    lambda x: mx.nd.sqrt(x), lambda x: mx.nd.Flatten(x).reshape((2,))])
def test_operator_calls_outside_record_make_constants(expr):
    # MXNet records nothing outside record(): the result is a constant in a later graph
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    c = expr(x)
    assert not c._t.requires_grad
    with mx.autograd.record():
        y = c * x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), c.asnumpy())


def test_backward_twice_needs_retain_graph():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(MXNetError, match="retain_graph"):
        y.backward()


def test_autograd_grad_and_higher_order():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x * x * x
        (dy,) = mx.autograd.grad(y, [x], create_graph=True)
    np.testing.assert_allclose(dy.asnumpy(), 3 * np.array([1, 4, 9]))
    dy.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * np.array([1, 2, 3]))


def test_mark_variables():
    x = mx.nd.array([1.0, 2.0])
    g = mx.nd.array([0.0, 0.0])
    mx.autograd.mark_variables([x], [g])
    with mx.autograd.record():
        y = x * 5
    y.backward()
    np.testing.assert_array_equal(g.asnumpy(), [5, 5])


def test_custom_function():
    class Sigmoid(mx.autograd.Function):
        def forward(self, x):
            y = 1 / (1 + mx.nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            (y,) = self.saved_tensors
            return dy * y * (1 - y) * 10  # scaled to prove it is used

    x = mx.nd.array([0.0, 1.0])
    x.attach_grad()
    with mx.autograd.record():
        y = Sigmoid()(x)
    y.backward()
    s = 1 / (1 + np.exp(-np.array([0.0, 1.0])))
    np.testing.assert_allclose(y.asnumpy(), s, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), 10 * s * (1 - s), rtol=1e-5)


def test_inplace_update_of_leaf_outside_record():
    w = mx.nd.array([1.0, 2.0])
    w.attach_grad()
    w[:] = w - 0.5
    w -= 0.5
    np.testing.assert_array_equal(w.asnumpy(), [0.0, 1.0])


def test_failed_backward_keeps_what_was_written_and_nothing_pending():
    # MXNet 1.9.1 (checked): the gradients computed before the failure are in their
    # buffers (w.grad [3, 4]), the rest untouched (v.grad [0, 0]); nothing of the failed
    # pass is added to the next one
    class Broken(mx.autograd.Function):
        def forward(self, x):
            return x * 1

        def backward(self, dy):
            raise ValueError("broken backward")

    w = mx.nd.array([1.0, 2.0])
    v = mx.nd.array([5.0, 5.0])
    w.attach_grad()
    v.attach_grad()
    x = mx.nd.array([3.0, 4.0])
    with mx.autograd.record():
        a = Broken()(v)     # created first: its backward runs after w's gradient arrived
        loss = a + w * x
    with pytest.raises(ValueError, match="broken backward"):
        loss.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [3, 4])
    np.testing.assert_array_equal(v.grad.asnumpy(), [0, 0])
    with mx.autograd.record():
        y = w * x
    y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [3, 4])   # not [6, 8]


def test_gradient_replaces_its_buffer_as_soon_as_it_is_complete():
    # MXNet's backward writes each gradient into its buffer as it is computed; the
    # buffer's previous contents must not live on until the end of the pass (a model's
    # gradients would be held twice: resnet18, 45 MiB more at the end of backward)
    seen = []

    class Probe(mx.autograd.Function):
        def forward(self, x):
            return x * 1

        def backward(self, dy):
            seen.append((old() is None, w.grad.asnumpy().tolist()))
            return dy

    w = mx.nd.array([1.0, 2.0])
    w.attach_grad()
    old = weakref.ref(w.grad._t)
    v = mx.nd.array([5.0, 5.0])
    v.attach_grad()
    x = mx.nd.array([3.0, 4.0])
    with mx.autograd.record():
        a = Probe()(v)      # created first: its backward runs after w's gradient arrived
        loss = a + w * x
    loss.backward()
    assert seen == [(True, [3.0, 4.0])]
    np.testing.assert_array_equal(v.grad.asnumpy(), [1, 1])


def test_gradients_reach_buffers_of_every_array_in_one_pass():
    ws = [mx.nd.array([float(i)]) for i in range(5)]
    for i, w in enumerate(ws):
        w.attach_grad(grad_req="add" if i % 2 else "write")
    held = [w.grad for w in ws]
    for _ in range(2):
        with mx.autograd.record():
            y = sum(w * (i + 1) for i, w in enumerate(ws))
        y.backward()
    for i, (w, g) in enumerate(zip(ws, held)):
        want = (i + 1) * (2 if i % 2 else 1)
        assert w.grad.asnumpy()[0] == want and g.asnumpy()[0] == want


def _copy_into(a):
    o = mx.nd.zeros(a.shape)
    a.copyto(o)
    return o


# MXNet 1.9.1 records copies and casts: the gradient of sum(f(a) * f(a)) at a = [1, 2, 3]
# is [2, 4, 6] for every one of these (checked with the oracle).
_RECORDED_COPIES = {
    "nd astype float64": lambda a: a.astype("float64"),
    "nd astype float16": lambda a: a.astype("float16"),
    "nd astype same dtype": lambda a: a.astype("float32"),
    "nd copy": lambda a: a.copy(),
    "nd copyto context": lambda a: a.copyto(mx.cpu(0)),
    "nd as_in_context other": lambda a: a.as_in_context(mx.cpu(1)),
    "nd copyto array": _copy_into,
    "nd.array(a)": lambda a: mx.nd.array(a),
    "nd.array(a, float64)": lambda a: mx.nd.array(a, dtype="float64"),
    "np astype float16": lambda a: a.as_np_ndarray().astype("float16"),
    "np copy method": lambda a: a.as_np_ndarray().copy(),
    "np.copy": lambda a: mx.np.copy(a.as_np_ndarray()),
    "np.array(a)": lambda a: mx.np.array(a.as_np_ndarray()),
    "np as_in_ctx other": lambda a: a.as_np_ndarray().as_in_ctx(mx.cpu(1)),
}


@pytest.mark.parametrize("name", sorted(_RECORDED_COPIES))
def test_copies_and_casts_are_recorded(name):
    f = _RECORDED_COPIES[name]
    a = mx.nd.array([1.0, 2.0, 3.0])
    a.attach_grad()
    with mx.autograd.record():
        b = f(a)
        loss = (b * b).sum()
    loss.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [2, 4, 6])
    # outside recording the copy is a new array with no graph, and never aliases a
    c = f(a)
    assert not c._t.requires_grad
    c[:] = 7
    np.testing.assert_array_equal(a.asnumpy(), [1, 2, 3])


_PATHS = {   # a call under record() -> the operator it records
    "operator method": (lambda a: a + a, "broadcast_add"),
    "scalar method": (lambda a: 2 - a, "_rminus_scalar"),
    "comparison": (lambda a: a > 1, "_greater_scalar"),
    "plain mx.nd function": (lambda a: mx.nd.relu(a), "relu"),
    "invoke": (lambda a: mx.nd.sum(a, axis=0), "sum"),
    "several outputs": (lambda a: mx.nd.split(a, num_outputs=2, axis=0), "SliceChannel"),
    "astype": (lambda a: a.astype("float64"), "Cast"),
    "copy": (lambda a: a.copy(), "_copy"),
}


@pytest.mark.parametrize("path", sorted(_PATHS))
def test_every_dispatch_path_records_in_one_place(path, monkeypatch):
    # invoke, its short forms (operator methods, mx.nd's plain functions) and the copies
    # meet autograd in one place (_settle; _settle_all for several outputs), so a change
    # to recording is made once
    from mxtorch.ndarray import ndarray as nd_module
    call, op = _PATHS[path]
    seen = []
    for name in ("_settle", "_settle_all"):
        def settle(ent, *args, _real=getattr(nd_module, name), **kwargs):
            seen.append(ent.opdef.name)
            return _real(ent, *args, **kwargs)
        monkeypatch.setattr(nd_module, name, settle)
    a = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    a.attach_grad()
    with mx.autograd.record():
        out = call(a)
    assert seen == [op]
    outs = out if isinstance(out, list) else [out]
    assert all(o._t.requires_grad == (path != "comparison") for o in outs)


def test_attached_inputs_outside_recording_build_no_graph_and_restore_grad_mode():
    import torch
    w = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    w.attach_grad()
    y = mx.nd.dot(w, w)
    assert not y._t.requires_grad
    np.testing.assert_allclose(y.asnumpy(), [[7, 10], [15, 22]])
    with pytest.raises(mx.base.MXNetError):
        mx.nd.dot(w, mx.nd.ones((3, 3)))   # fails inside the no-grad section
    assert torch.is_grad_enabled()
    with mx.autograd.record():
        z = (w * w).sum()
    z.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), [[2, 4], [6, 8]])


def test_copyto_into_attached_arrays_while_recording_is_a_plain_write():
    a = mx.nd.array([1.0, 2.0])
    a.attach_grad()
    w = mx.nd.zeros((2, 2))
    w.attach_grad()
    with mx.autograd.record():
        b = a * 2
        b.copyto(w[0])          # a view of an attached array
        c = mx.nd.zeros((2,))
        c.attach_grad()
        b.copyto(c)             # an attached array
    np.testing.assert_array_equal(w.asnumpy(), [[2, 4], [0, 0]])
    np.testing.assert_array_equal(c.asnumpy(), [2, 4])


def _graph(sym):
    """(op, name, inputs) of each node of a symbol's JSON, names with their numbers
    replaced by their order of appearance (MXNet's counters are process-wide)."""
    import json
    import re
    nodes = json.loads(sym.tojson())["nodes"]
    seen: dict = {}

    def norm(name):
        m = re.fullmatch(r"(node_|var|null)(\d+)", name)
        assert m, name
        return m.group(1) + str(seen.setdefault(name, len(seen)))
    return [(n["op"], norm(n["name"]), n.get("attrs", {}),
             [i[:2] for i in n["inputs"]]) for n in nodes]


def _heads(sym):
    import json
    return json.loads(sym.tojson())["heads"]


def test_get_symbol_returns_the_recorded_graph():
    # the node list real MXNet 1.9.1 returns for the same calls
    x = mx.nd.ones((1,))
    x.attach_grad()
    c = mx.nd.ones((1,))
    with mx.autograd.record():
        y = x * x + 2 * x - 1
        w = mx.nd.FullyConnected(y.reshape((1, 1)), mx.nd.ones((2, 1)), mx.nd.ones((2,)),
                                 num_hidden=2)
        z = w * c + c
    assert _graph(mx.autograd.get_symbol(y)) == [
        ("null", "var0", {}, []),
        ("broadcast_mul", "node_1", {}, [[0, 0], [0, 0]]),
        ("_mul_scalar", "node_2", {"scalar": "2.0"}, [[0, 0]]),
        ("broadcast_add", "node_3", {}, [[1, 0], [2, 0]]),
        ("_minus_scalar", "node_4", {"scalar": "1.0"}, [[3, 0]])]
    sym = mx.autograd.get_symbol(z)
    assert [n[0] for n in _graph(sym)] == [
        "null", "broadcast_mul", "_mul_scalar", "broadcast_add", "_minus_scalar", "Reshape",
        "null", "null", "FullyConnected", "null", "broadcast_mul", "broadcast_add"]
    args = sym.list_arguments()
    assert len(args) == 4 and args[0].startswith("var") and \
        all(a.startswith("null") for a in args[1:])
    # the recorded graph computes what was recorded
    out = sym.eval(**{a: mx.nd.ones(s) for a, s in zip(args, [(1,), (2, 1), (2,), (1,)])})
    np.testing.assert_allclose(out[0].asnumpy(), [[4.0, 4.0]])


def test_get_symbol_argument_count_and_output_index():
    x = mx.nd.ones((1,))
    x.attach_grad()
    z = mx.nd.ones((1,))
    z.attach_grad()
    with mx.autograd.record():
        y1 = x * x + 2 * x - 1
        y2 = x * x + 2 * z - 1
        parts = mx.nd.split(mx.nd.ones((2, 2)) * x, num_outputs=2)
    assert len(mx.autograd.get_symbol(y1).list_arguments()) == 1
    assert len(mx.autograd.get_symbol(y2).list_arguments()) == 2
    s = mx.autograd.get_symbol(parts[1])
    g = _graph(s)
    assert g[-1][0] == "SliceChannel" and g[-1][2] == {"num_outputs": "2"}
    assert _heads(s) == [[len(g) - 1, 1, 0]]
    assert mx.autograd.get_symbol(x).list_arguments()[0].startswith("var")


def test_get_symbol_needs_a_recorded_array():
    with pytest.raises(MXNetError, match="not part of a computation graph"):
        mx.autograd.get_symbol(mx.nd.ones((2,)))
    with mx.autograd.record():
        y = mx.nd.ones((2,)) + 1     # no attached input: nothing is recorded
    with pytest.raises(MXNetError, match="not part of a computation graph"):
        mx.autograd.get_symbol(y)


def test_backward_frees_the_recorded_graph():
    # MXNet: without retain_graph, differentiating the graph again fails, even through
    # an operator that saved nothing for backward (x + 1) or from an intermediate array
    x = mx.nd.ones((2, 2))
    dx = mx.nd.zeros((2, 2))
    mx.autograd.mark_variables([x], [dx], grad_reqs="add")
    with mx.autograd.record():
        y = x + 1
        y.backward(retain_graph=True)
        y.backward()
    np.testing.assert_array_equal(dx.asnumpy(), np.full((2, 2), 2))
    with pytest.raises(MXNetError, match="retain_graph=True"):
        y.backward()
    with mx.autograd.record():
        y = x + 1
        z = y * 2
    z.backward()
    with pytest.raises(MXNetError, match="not in a computational graph"):
        y.backward()
    with pytest.raises(MXNetError, match="not part of a computation graph"):
        mx.autograd.get_symbol(z)
    with mx.autograd.record():
        y = x + 1
    mx.autograd.grad(y, [x])              # grad without retain_graph frees it too
    with pytest.raises(MXNetError):
        y.backward()
    with mx.autograd.record():
        y = x + 1
    mx.autograd.grad(y, [x], retain_graph=True)
    y.backward()


@pytest.mark.parametrize("op", [
    lambda x: mx.nd.clip(x, 0.2, 0.7), lambda x: mx.nd.radians(x),
    lambda x: mx.nd.Dropout(x, p=0.5), lambda x: mx.nd.abs(x)])
def test_second_order_of_a_gradient_without_dependence_on_x_is_zero(op):
    # MXNet: a gradient taken with create_graph is in the graph even where it is a
    # constant (clip, radians, dropout) or torch's symbolic zero (abs): its own
    # gradient is zeros
    x = mx.nd.array([[0.1, -0.5], [0.4, 0.9]])
    x.attach_grad()
    with mx.autograd.record():
        y = op(x)
        (g1,) = mx.autograd.grad(y, x, head_grads=mx.nd.ones_like(x), create_graph=True,
                                 retain_graph=True)
        (g2,) = mx.autograd.grad(g1, x, head_grads=mx.nd.ones_like(x), create_graph=True,
                                 retain_graph=True)
    np.testing.assert_array_equal(g2.asnumpy(), np.zeros((2, 2)))


@pytest.mark.parametrize("inline_limit,ops", [
    (5, ["FullyConnected", "FullyConnected"]),   # within the limit: operator by operator
    (0, ["_CachedOp"])])                          # else one node, as MXNet records it
def test_get_symbol_of_a_hybridized_block(inline_limit, ops):
    import json
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(3, in_units=4), mx.gluon.nn.Dense(2, in_units=3))
    net.initialize()
    net.hybridize(inline_limit=inline_limit)
    x = mx.nd.array(np.arange(8).reshape(2, 4))
    with mx.autograd.record():
        y = net(x)
    sym = mx.autograd.get_symbol(y)
    assert [n["op"] for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"] == ops
    params = {p.data()._t._mx_entry[0]: p.data() for p in net.collect_params().values()}
    args = sym.list_arguments()
    assert len(args) == 5
    out = sym.eval(**{a: params.get(a, x) for a in args})[0]
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy(), rtol=1e-6)

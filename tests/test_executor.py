"""Executor (seeds 000/001): bind/simple_bind, forward/backward, grad_req, dicts,
copy_params_from, reshape, shared executors, monitor, CachedOp."""
import numpy as np
import torch
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError


def _mlp():
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=4, name="fc1")
    act = mx.sym.Activation(fc1, act_type="tanh", name="act")
    fc2 = mx.sym.FullyConnected(act, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def _np_mlp(x, w1, b1, w2, b2):
    h = np.tanh(x @ w1.T + b1)
    z = h @ w2.T + b2
    e = np.exp(z - z.max(1, keepdims=True))
    return h, e / e.sum(1, keepdims=True)


def test_simple_bind_forward_backward_matches_numpy():
    net = _mlp()
    exe = net.simple_bind(mx.cpu(), data=(5, 6))
    assert sorted(exe.arg_dict) == sorted(net.list_arguments())
    rng = np.random.RandomState(0)
    vals = {n: rng.randn(*a.shape).astype(np.float32) for n, a in exe.arg_dict.items()}
    vals["softmax_label"] = np.array([0, 1, 2, 1, 0], dtype=np.float32)
    for n, v in vals.items():
        exe.arg_dict[n][:] = v
    out = exe.forward(is_train=True)[0]
    h, p = _np_mlp(vals["data"], vals["fc1_weight"], vals["fc1_bias"], vals["fc2_weight"],
                   vals["fc2_bias"])
    np.testing.assert_allclose(out.asnumpy(), p, rtol=1e-5, atol=1e-6)
    exe.backward()
    onehot = np.eye(3)[vals["softmax_label"].astype(int)]
    dz = p - onehot
    np.testing.assert_allclose(exe.grad_dict["fc2_weight"].asnumpy(), dz.T @ h, rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(exe.grad_dict["fc2_bias"].asnumpy(), dz.sum(0), rtol=1e-4,
                               atol=1e-5)
    assert exe.output_dict.keys() == {"softmax_output"}


def test_bind_uses_callers_arrays():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    c = a * b
    xa, xb = mx.nd.array([1, 2]), mx.nd.array([3, 4])
    ga = mx.nd.zeros((2,))
    exe = c.bind(mx.cpu(), [xa, xb], args_grad={"a": ga})
    assert exe.arg_arrays[0] is xa and exe.grad_arrays[0] is ga and exe.grad_arrays[1] is None
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [3, 8])
    xa[:] = 10
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [30, 40])
    exe.forward(is_train=True, b=mx.nd.array([1, 1]))
    np.testing.assert_array_equal(xb.asnumpy(), [1, 1])
    exe.backward(mx.nd.array([2, 3]))
    np.testing.assert_array_equal(ga.asnumpy(), [2, 3])


def test_grad_req_write_add_null():
    x = mx.sym.var("x")
    w = mx.sym.var("w")
    y = x * w
    args = {"x": mx.nd.array([1, 2]), "w": mx.nd.array([3, 4])}
    grads = {"x": mx.nd.zeros((2,)), "w": mx.nd.zeros((2,))}
    exe = y.bind(mx.cpu(), args, args_grad=grads, grad_req={"x": "add", "w": "null"})
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward(mx.nd.ones((2,)))
    np.testing.assert_array_equal(grads["x"].asnumpy(), [6, 8])
    np.testing.assert_array_equal(grads["w"].asnumpy(), [0, 0])
    exe2 = y.bind(mx.cpu(), args, args_grad=grads, grad_req=["write", "write"])
    exe2.forward(is_train=True)
    exe2.backward(mx.nd.ones((2,)))
    np.testing.assert_array_equal(grads["x"].asnumpy(), [3, 4])
    np.testing.assert_array_equal(grads["w"].asnumpy(), [1, 2])
    with pytest.raises(MXNetError, match="grad_req"):
        y.bind(mx.cpu(), args, args_grad=grads, grad_req="sometimes")


def test_bad_forward_kwargs():
    x = mx.sym.var("x")
    exe = (x * 2).simple_bind(mx.cpu(), x=(2,))
    with pytest.raises(TypeError, match="Unknown argument"):
        exe.forward(y=mx.nd.array([1, 2]))
    with pytest.raises(ValueError, match="Shape not match"):
        exe.forward(x=mx.nd.array([1, 2, 3]))


def test_duplicate_output_names_raise():
    x = mx.sym.var("x")
    g = mx.sym.Group([x, x])
    exe = g.bind(mx.cpu(), {"x": mx.nd.array([1])})
    exe.forward()
    with pytest.raises(ValueError, match="Duplicate"):
        exe.output_dict  # noqa: B018 - the lookup is what raises


def test_copy_params_from():
    net = _mlp()
    exe = net.simple_bind(mx.cpu(), data=(2, 6))
    w = mx.nd.array(np.ones((4, 6)), dtype="float64")
    exe.copy_params_from({"fc1_weight": w})
    assert exe.arg_dict["fc1_weight"].dtype is np.float32
    np.testing.assert_array_equal(exe.arg_dict["fc1_weight"].asnumpy(), np.ones((4, 6)))
    with pytest.raises(ValueError, match="not in the arguments"):
        exe.copy_params_from({"nope": w})
    exe.copy_params_from({"nope": w}, allow_extra_params=True)


def test_batchnorm_aux_updates_in_place():
    data = mx.sym.var("data")
    bn = mx.sym.BatchNorm(data, name="bn", fix_gamma=False, momentum=0.5)
    exe = bn.simple_bind(mx.cpu(), data=(4, 2))
    exe.arg_dict["gamma" if "gamma" in exe.arg_dict else "bn_gamma"][:] = 1
    exe.aux_dict["bn_moving_var"][:] = 1
    x = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], dtype=np.float32)
    exe.forward(is_train=True, data=mx.nd.array(x))
    # MXNet: the moving statistics move in the backward pass, not in forward.
    np.testing.assert_array_equal(exe.aux_dict["bn_moving_mean"].asnumpy(), [0, 0])
    exe.backward(mx.nd.ones((4, 2)))
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(), [2, 2.5], rtol=1e-6)
    np.testing.assert_allclose(exe.aux_dict["bn_moving_var"].asnumpy(), [3, 3], rtol=1e-6)
    mm = exe.aux_arrays[0].asnumpy().copy()
    exe.forward(is_train=False)
    np.testing.assert_array_equal(exe.aux_arrays[0].asnumpy(), mm)


def test_reshape_shares_parameters():
    net = _mlp()
    exe = net.simple_bind(mx.cpu(), data=(4, 6))
    exe.arg_dict["fc1_weight"][:] = 1
    new = exe.reshape(data=(2, 6), softmax_label=(2,))
    assert new.arg_dict["fc1_weight"] is exe.arg_dict["fc1_weight"]
    assert new.arg_dict["data"].shape == (2, 6)
    new.forward()
    assert new.outputs[0].shape == (2, 3)
    with pytest.raises(MXNetError, match="larger than original"):
        exe.reshape(data=(8, 6), softmax_label=(8,))
    big = exe.reshape(allow_up_sizing=True, data=(8, 6), softmax_label=(8,))
    assert big.arg_dict["data"].shape == (8, 6)
    with pytest.raises(MXNetError, match="partial_shaping"):
        exe.reshape(data=(3, 7))


def test_shared_exec_shares_parameter_memory():
    net = _mlp()
    exe = net.simple_bind(mx.cpu(), data=(4, 6))
    params = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    other = net.simple_bind(mx.cpu(), data=(2, 6), shared_exec=exe, shared_arg_names=params)
    for n in params:
        assert other.arg_dict[n] is exe.arg_dict[n]
    assert other.arg_dict["data"] is not exe.arg_dict["data"]


def test_monitor_callback():
    seen = []
    x = mx.sym.var("x")
    y = mx.sym.exp(x, name="e") * 2
    exe = y.simple_bind(mx.cpu(), x=(2,), grad_req="null")
    exe.set_monitor_callback(lambda name, arr: seen.append((name, arr.shape)))
    exe.forward()
    assert ("e_output", (2,)) in seen
    seen.clear()
    exe.set_monitor_callback(lambda name, arr: seen.append(name), monitor_all=True)
    exe.forward()
    assert seen[:3] == ["x", "e_input0", "e_output"]   # as MXNet 1.9.1 names them


def test_2_0_spellings_and_eval():
    a = mx.sym.var("a")
    exe = (a + 1)._bind(device=mx.cpu(), args={"a": mx.nd.array([1])})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [2])
    s = a + 1
    exe = s._simple_bind(device=mx.cpu(), a=(3,))
    assert exe.forward()[0].shape == (3,)
    assert exe.get_optimized_symbol().list_outputs() == s.list_outputs()
    assert "Bound arrays" in exe.debug_str()


def test_cached_op_under_autograd():
    x = mx.sym.var("x")
    w = mx.sym.var("w")
    y = mx.sym.FullyConnected(x, w, no_bias=True, num_hidden=2)
    op = mx.nd.CachedOp(y)
    xv = mx.nd.array([[1, 2, 3]])
    wv = mx.nd.array([[1, 0, 0], [0, 1, 1]])
    wv.attach_grad()
    with mx.autograd.record():
        out = op(xv, wv)
    out.backward(mx.nd.array([[1, 10]]))
    np.testing.assert_array_equal(out.asnumpy(), [[1, 5]])
    np.testing.assert_array_equal(wv.grad.asnumpy(), [[1, 2, 3], [10, 20, 30]])
    with pytest.raises(MXNetError, match="expected 2 inputs"):
        op(xv)


def test_gradients_never_alias_heads_inputs_or_views():
    """backward hands fresh gradients over without copies (strided ones included), but a
    gradient array never shares memory with a head gradient, an input, another gradient,
    and a caller's view into a bigger buffer stays that view."""
    x, w = mx.sym.var("x"), mx.sym.var("w")
    sym = mx.sym.Group([mx.sym.transpose(x), mx.sym.FullyConnected(x, w, num_hidden=3,
                                                                     no_bias=True)])
    big = mx.nd.zeros((2, 3, 4))
    grads = {"x": big[0], "w": mx.nd.zeros((3, 4))}  # grad of x: a view into `big`
    rng = np.random.RandomState(0)
    xv, wv = rng.randn(3, 4).astype(np.float32), rng.randn(3, 4).astype(np.float32)
    exe = sym.bind(mx.cpu(), {"x": mx.nd.array(xv), "w": mx.nd.array(wv)}, args_grad=grads)
    for _ in range(3):
        head0 = mx.nd.array(rng.randn(4, 3))
        head1 = mx.nd.array(rng.randn(3, 3))
        exe.forward(is_train=True)
        exe.backward([head0, head1])
        h0, h1 = head0.asnumpy().copy(), head1.asnumpy().copy()
        np.testing.assert_allclose(big[0].asnumpy(), h0.T + h1 @ wv, rtol=1e-5)
        np.testing.assert_allclose(grads["w"].asnumpy(), h1.T @ xv, rtol=1e-5)
        # a gradient buffer written later must not change the heads or the inputs
        grads["w"][:] = 7
        big[:] = 5
        np.testing.assert_array_equal(head0.asnumpy(), h0)
        np.testing.assert_array_equal(head1.asnumpy(), h1)
        np.testing.assert_array_equal(exe.arg_dict["x"].asnumpy(), xv)
    w_ptr = exe.grad_dict["w"]._t.untyped_storage().data_ptr()
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((4, 3)), mx.nd.ones((3, 3))])
    # the dense layer's (transposed) weight gradient was taken over, not copied
    assert exe.grad_dict["w"]._t.untyped_storage().data_ptr() != w_ptr
    np.testing.assert_allclose(grads["w"].asnumpy(), np.ones((3, 3)).T @ xv, rtol=1e-5)


@pytest.mark.parametrize("make, shares", [
    (lambda d: mx.sym.reshape(d, shape=(-1,)), False),
    (lambda d: mx.sym.transpose(d), False),
    (lambda d: mx.sym.slice_axis(d, axis=0, begin=0, end=1), False),
    (lambda d: d, True),        # MXNet: an output that is the input variable is the input
])
def test_outputs_are_new_arrays_unless_the_output_is_an_input(make, shares):
    a = mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    exe = make(mx.sym.var("data")).bind(mx.cpu(), {"data": a})
    exe.forward()[0][:] = -1
    assert bool((a.asnumpy() == -1).any()) == shares


@pytest.mark.parametrize("static", [False, True])
def test_cached_op_outputs_never_alias_inputs(static):
    class Flat(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.reshape(x, shape=(-1,))

    net = Flat()
    net.hybridize(static_alloc=static, static_shape=static)
    a = mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    for _ in range(3):    # the plain program, then the optimized one
        net(a)[:] = -1
    np.testing.assert_array_equal(a.asnumpy(), np.arange(6).reshape(2, 3))


# ---------------------------------------------------------------- traced training steps
@pytest.fixture
def trace_at_once(monkeypatch):
    """Executors bound in the test trace their training step at the first step."""
    monkeypatch.setenv("MXTORCH_TRACE_TRAINING", "always")


def _traced(exe) -> list:
    """The traced step of each signature the executor has run (None: autograd)."""
    return [g.compiled for g in exe._gates.values()]


def _bound(sym, shapes, seed=0, grad_req="write"):
    exe = sym.simple_bind(mx.cpu(), grad_req=grad_req, **shapes)
    rng = np.random.RandomState(seed)
    for arr in exe.arg_dict.values():
        arr[:] = rng.uniform(-0.5, 0.5, arr.shape)
    for name, arr in exe.aux_dict.items():
        arr[:] = 1 if name.endswith("var") else 0
    if "softmax_label" in exe.arg_dict:
        exe.arg_dict["softmax_label"][:] = rng.randint(0, 3, exe.arg_dict["softmax_label"].shape)
    return exe


def _run_steps(exe, steps=3, out_grads=None, new_data=True):
    """forward+backward ``steps`` times on fresh data; every output, gradient and aux."""
    rng = np.random.RandomState(42)
    seen = []
    for _ in range(steps):
        if new_data:
            exe.arg_dict["data"][:] = rng.randn(*exe.arg_dict["data"].shape)
        outs = [o.asnumpy().copy() for o in exe.forward(is_train=True)]
        exe.backward(out_grads)
        seen.append((outs, {n: g.asnumpy().copy() for n, g in exe.grad_dict.items()
                            if g is not None},
                     {n: a.asnumpy().copy() for n, a in exe.aux_dict.items()}))
    return seen


def _same_steps(a, b):
    for (oa, ga, xa), (ob, gb, xb) in zip(a, b):
        for p, q in zip(oa, ob):
            np.testing.assert_allclose(p, q, rtol=1e-4, atol=1e-5)
        assert ga.keys() == gb.keys() and xa.keys() == xb.keys()
        for n in ga:
            np.testing.assert_allclose(ga[n], gb[n], rtol=1e-4, atol=1e-5, err_msg=n)
        for n in xa:
            np.testing.assert_allclose(xa[n], xb[n], rtol=1e-4, atol=1e-6, err_msg=n)


def _conv_bn_net():
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv")
    net = mx.sym.BatchNorm(net, name="bn", fix_gamma=False)
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


@pytest.mark.parametrize("make, shapes", [
    (_mlp, {"data": (5, 6)}),
    (_conv_bn_net, {"data": (4, 2, 6, 6)}),
])
def test_traced_training_step_equals_autograd(monkeypatch, trace_at_once, make, shapes):
    traced = _bound(make(), shapes)
    seen = _run_steps(traced)
    assert traced._step is not None and _traced(traced) == [traced._step]
    monkeypatch.setenv("MXTORCH_TRACE_TRAINING", "0")
    plain = _bound(make(), shapes)
    ref = _run_steps(plain)
    assert plain._step is None and not plain._gates
    _same_steps(seen, ref)


def test_traced_step_keeps_moving_statistics_in_backward(trace_at_once):
    exe = _bound(_conv_bn_net(), {"data": (4, 2, 6, 6)})
    _run_steps(exe, steps=2)                              # traced from the second step
    before = exe.aux_dict["bn_moving_mean"].asnumpy().copy()
    exe.forward(is_train=True)
    assert exe._step is not None
    np.testing.assert_array_equal(exe.aux_dict["bn_moving_mean"].asnumpy(), before)
    exe.backward()
    assert not np.array_equal(exe.aux_dict["bn_moving_mean"].asnumpy(), before)


def test_traced_step_with_head_gradients_grad_req_add_and_a_second_backward(monkeypatch,
                                                                          trace_at_once):
    def net():
        data = mx.sym.var("data")
        fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
        return mx.sym.Group([mx.sym.tanh(fc), mx.sym.BlockGrad(fc * 2)])
    head = [mx.nd.array(np.linspace(-1, 1, 12).reshape(3, 4)), mx.nd.ones((3, 4))]
    reqs = {"data": "null", "fc_weight": "add", "fc_bias": "write"}
    traced = _bound(net(), {"data": (3, 5)}, grad_req=reqs)
    seen = _run_steps(traced, out_grads=head)
    assert traced._step is not None and traced._step.head_mask == (True, False)
    traced.backward(head)                                  # again, same forward
    twice = traced.grad_dict["fc_weight"].asnumpy()
    monkeypatch.setenv("MXTORCH_TRACE_TRAINING", "0")
    plain = _bound(net(), {"data": (3, 5)}, grad_req=reqs)
    _same_steps(seen, _run_steps(plain, out_grads=head))
    plain.backward(head)
    np.testing.assert_allclose(twice, plain.grad_dict["fc_weight"].asnumpy(), rtol=1e-5)


def test_random_and_untraceable_steps_stay_on_autograd(trace_at_once):
    data = mx.sym.var("data")
    drop = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
        mx.sym.Dropout(data, p=0.5), num_hidden=3, name="fc"), name="softmax")
    exe = _bound(drop, {"data": (8, 5)})
    _run_steps(exe)
    assert _traced(exe) == [None] and exe._step is None
    # an operator that reads values in NumPy cannot be traced with fake tensors
    exe2 = _bound(mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
        mx.sym.Custom(data, op_type="np_square"), num_hidden=3, name="fc"),
        name="softmax"), {"data": (8, 5)})
    seen = _run_steps(exe2)
    assert _traced(exe2) == [None]
    x = exe2.arg_dict["data"].asnumpy()
    p = seen[-1][0][0]
    dz = p - np.eye(3)[exe2.arg_dict["softmax_label"].asnumpy().astype(int)]
    np.testing.assert_allclose(seen[-1][1]["fc_weight"], dz.T @ (x * x), rtol=1e-4, atol=1e-5)


class _NpSquare(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.array(in_data[0].asnumpy() ** 2))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0],
                    mx.nd.array(2 * in_data[0].asnumpy() * out_grad[0].asnumpy()))


@mx.operator.register("np_square")
class _NpSquareProp(mx.operator.CustomOpProp):
    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _NpSquare()


def test_a_new_input_shape_traces_again(trace_at_once):
    exe = _bound(_mlp(), {"data": (5, 6)})
    _run_steps(exe, steps=2)
    small = exe.reshape(data=(2, 6), softmax_label=(2,))
    small.arg_dict["softmax_label"][:] = [0, 1]
    _run_steps(small, steps=2)
    assert small._step is not None and small._step is not exe._step
    h, p = _np_mlp(small.arg_dict["data"].asnumpy(),
                   *(small.arg_dict[n].asnumpy() for n in
                     ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")))
    np.testing.assert_allclose(small.outputs[0].asnumpy(), p, rtol=1e-5, atol=1e-6)


def test_traced_step_copies_a_gradient_that_is_a_view_of_the_head(trace_at_once):
    """The gradient of a reshape is a view of the head gradient; with the default head
    (ones, made once per traced step) it must be copied, or writing into the gradient
    array would change the next step's heads."""
    x = mx.sym.var("x")
    exe = mx.sym.reshape(x, shape=(-1,)).simple_bind(mx.cpu(), x=(2, 3))
    for _ in range(3):
        exe.forward(is_train=True)
        exe.backward()
        np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), np.ones((2, 3)))
        exe.grad_dict["x"][:] = 5
    assert exe._step is not None and exe._step.fresh == (False,)


def test_traced_programs_fold_views_and_keep_constants(monkeypatch):
    """The straight-line programs drop views that change nothing (``t(t(x))``, a view to
    the same shape, a keepdim sum's squeeze) and views a pool product reads only by
    address, and run the constants a trace captured."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from mxtorch.graph.backends.cpu_tuned.training import _fold_views, _straight_line, _use_pool
    from mxtorch.graph.backends.cpu_tuned import gemm
    monkeypatch.setattr(gemm, "_OPENMP_SLEEPS", True)
    const = torch.arange(4.0)

    def fn(x, w):
        h = (x.t().t() + const).view(3, 4)
        return (h @ w.t()).sum(0, keepdim=True).view(-1)

    x, w = torch.randn(3, 4), torch.randn(5, 4)
    gm = make_fx(fn, tracing_mode="fake", _allow_non_fake_inputs=True)(x, w)
    assert any(n.op == "get_attr" for n in gm.graph.nodes)
    _use_pool(gm.graph, 2)
    _fold_views(gm.graph)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert torch.ops.aten.view.default not in targets
    # w.t() remains only as the operand of a torch product (no pool: no C compiler)
    assert targets.count(torch.ops.aten.t.default) == (0 if gemm.available() else 1)
    (total,) = [n for n in gm.graph.nodes if n.target is torch.ops.aten.sum.dim_IntList]
    assert total.args[2] is False
    np.testing.assert_allclose(_straight_line(gm.graph, gm)(x, w), fn(x, w), rtol=1e-5)


def test_simple_bind_allocates_variables_with_their_dtype_attribute():
    # MXNet: an argument's __dtype__ decides its array's dtype; others default to float32
    x = mx.sym.var("x", dtype=np.int32)
    exe = mx.sym.Cast(x, dtype=np.float16).simple_bind(mx.cpu(), x=(2, 3), grad_req="null")
    assert exe.arg_arrays[0].dtype is np.int32 and exe.outputs[0].dtype is np.float16
    exe.arg_arrays[0][:] = np.array([[1.7, -2.2, 3, 4, 5, 6]]).reshape(2, 3)
    exe.forward()
    assert exe.outputs[0].asnumpy().tolist() == [[1, -2, 3], [4, 5, 6]]
    h = mx.sym.var("h", dtype=np.float16)
    exe = mx.sym.Cast(h, dtype=np.float64).simple_bind(mx.cpu(), h=(2,))
    assert exe.arg_arrays[0].dtype is np.float16 and exe.grad_arrays[0].dtype is np.float16
    exe.forward(is_train=True)
    exe.backward(mx.nd.array([0.5, 2], dtype=np.float64))
    assert exe.grad_arrays[0].asnumpy().tolist() == [0.5, 2]
    fc = mx.sym.FullyConnected(x, num_hidden=2, name="fc")
    exe = fc.simple_bind(mx.cpu(), type_dict={"x": np.float64}, x=(2, 3))
    assert [a.dtype for a in exe.arg_arrays] == [np.float64] * 3


def test_variables_named_like_python_keywords():
    # MXNet's test_RNN_float64 binds variables called 'in'; the generated code must not
    # use them as Python names
    a, b = mx.sym.var("in"), mx.sym.var("lambda")
    exe = (a * 2 + b).simple_bind(mx.cpu(), **{"in": (2,), "lambda": (2,)})
    exe.forward(is_train=True, **{"in": mx.nd.array([1, 2]), "lambda": mx.nd.array([3, 4])})
    assert exe.outputs[0].asnumpy().tolist() == [5, 8]
    exe.backward(mx.nd.ones((2,)))
    assert exe.grad_dict["in"].asnumpy().tolist() == [2, 2]


def test_integer_argument_gradient_is_zero_and_nondifferentiable_ops_fail_at_bind():
    x, idx = mx.sym.var("x"), mx.sym.var("idx")
    taken = mx.sym.batch_take(x, idx)
    types = {"x": np.float32, "idx": np.int32}
    exe = mx.sym.stop_gradient(taken).simple_bind(mx.cpu(), x=(4, 3), idx=(4,),
                                                  type_dict=types)
    exe.grad_dict["idx"][:] = 7
    exe.forward(is_train=True)
    exe.backward()
    assert exe.grad_dict["idx"].asnumpy().tolist() == [0, 0, 0, 0]
    assert not exe.grad_dict["x"].asnumpy().any()
    # MXNet: batch_take registers no gradient, so a backward through it cannot be bound
    with pytest.raises(MXNetError, match="batch_take is non-differentiable"):
        taken.simple_bind(mx.cpu(), x=(4, 3), idx=(4,), type_dict=types)
    taken.simple_bind(mx.cpu(), x=(4, 3), idx=(4,), type_dict=types, grad_req="null")


def test_debug_str_reports_planned_memory():
    import re
    data = mx.sym.var("data")
    for _ in range(4):
        data = data * data

    def total(sym, **kw):
        exe = sym.simple_bind(mx.cpu(), data=(256, 1024), **kw)   # 1 MB per array
        return int(re.search(r"Total (\d+) MB allocated", exe.debug_str()).group(1))
    # forward only: two intermediate arrays alive at once; training keeps all four and
    # their gradients; nothing flows through stop_gradient
    assert total(data, grad_req="null") == 2
    assert total(data) == 2 + 8
    assert total(mx.sym.stop_gradient(data)) == 2


def test_common_subexpressions_merged_at_bind(monkeypatch):
    # the optimized graphs MXNet 1.9.1 builds for these (node names included)
    with mx.name.NameManager():
        a, b = mx.sym.var("a"), mx.sym.var("b")
        d = a + 1
        cases = [((a + b) + (a + b), ["a", "b", "_plus0_output", "_plus2_output"]),
                 (mx.sym.Group([a * d, a * d]),
                  ["a", "_plusscalar0_output", "_mul0_output", "_mul0_0_copy_output"]),
                 (mx.sym.Dropout(a) + mx.sym.Dropout(a),   # random: never merged
                  ["a", "dropout0_output", "dropout1_output", "_plus3_output"]),
                 (mx.sym.exp(a, attr={"__x__": "1"}) + mx.sym.exp(a),   # attributes differ
                  ["a", "exp0_output", "exp1_output", "_plus4_output"])]
    for sym, internals in cases:
        exe = sym.simple_bind(mx.cpu(), **{n: (2, 3) for n in sym.list_arguments()})
        assert exe.get_optimized_symbol().get_internals().list_outputs() == internals
    grouped = cases[1][0]
    exe = grouped.simple_bind(mx.cpu(), a=(2, 3))
    outs = exe.forward(is_train=True, a=mx.nd.ones((2, 3)))
    assert outs[0] is not outs[1] and outs[0].asnumpy().tolist() == [[2.0] * 3] * 2
    exe.backward([mx.nd.ones((2, 3)), mx.nd.ones((2, 3))])
    assert exe.grad_dict["a"].asnumpy().tolist() == [[6.0] * 3] * 2   # 2 * (2a + 1)
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "0")
    exe = grouped.simple_bind(mx.cpu(), a=(2, 3))
    assert len(exe.get_optimized_symbol().get_internals()) == 4 and \
        exe.get_optimized_symbol().list_outputs() == ["_mul0_output", "_mul1_output"]


def test_ctx_group_places_arrays_and_outputs():
    with mx.AttrScope(ctx_group="stage1"):
        data = mx.sym.var("data")
        fc1 = mx.sym.FullyConnected(data, name="fc1", num_hidden=4)
    with mx.AttrScope(ctx_group="stage2"):
        net = mx.sym.BatchNorm(mx.sym.FullyConnected(fc1, name="fc2", num_hidden=3),
                               name="bn")
    group2ctx = {"stage1": mx.cpu(1), "stage2": mx.cpu(2)}
    exe = net.simple_bind(mx.cpu(0), group2ctx=group2ctx, data=(2, 5))
    assert {k: v.context for k, v in exe.arg_dict.items()} == {
        "data": mx.cpu(1), "fc1_weight": mx.cpu(1), "fc1_bias": mx.cpu(1),
        "fc2_weight": mx.cpu(2), "fc2_bias": mx.cpu(2), "bn_gamma": mx.cpu(2),
        "bn_beta": mx.cpu(2)}
    assert {v.context for v in exe.aux_arrays} == {mx.cpu(2)}
    assert exe.grad_dict["fc1_weight"].context == mx.cpu(1)
    assert exe.outputs[0].context == mx.cpu(2)
    exe.forward(is_train=True, data=mx.nd.ones((2, 5)))
    exe.backward(mx.nd.ones((2, 3)))
    assert exe.outputs[0].context == mx.cpu(2)
    # without group2ctx everything is on the bind context
    plain = net.simple_bind(mx.cpu(3), data=(2, 5))
    assert {a.context for a in plain.arg_arrays + [plain.outputs[0]]} == {mx.cpu(3)}


def test_reshape_shares_memory_with_the_original():
    y = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=4, name="fc")
    exe = y.simple_bind(mx.cpu(), x=(5, 4), grad_req="null")
    exe.arg_arrays[0][:] = 1
    exe.arg_arrays[1][:] = mx.nd.ones((4, 4))
    exe.arg_arrays[2][:] = 0
    small = exe.reshape(x=(3, 4))
    small.forward()
    np.testing.assert_array_equal(small.outputs[0].asnumpy(), np.full((3, 4), 4.0))
    # its inputs are views of the start of the original's; its outputs go to the
    # original's output memory
    small.arg_arrays[0][:] = 2
    assert exe.arg_arrays[0].asnumpy()[:, 0].tolist() == [2, 2, 2, 1, 1]
    assert exe.outputs[0].asnumpy()[:3].tolist() == [[4.0] * 4] * 3
    with pytest.raises(MXNetError, match="larger than original"):
        exe.reshape(x=(6, 4))
    with pytest.raises(MXNetError, match="unspecified arg: x changed"):
        y.simple_bind(mx.cpu(), x=(5, 4)).reshape(fc_weight=(4, 2))
    big = exe.reshape(allow_up_sizing=True, x=(6, 4))
    big.arg_arrays[0][:] = 0
    assert exe.arg_arrays[0].asnumpy()[4].tolist() == [1] * 4
    assert big.arg_arrays[1] is exe.arg_arrays[1]


def test_monitor_all_names_and_handles():
    import ctypes
    seen = []

    def callback(name, arr):
        # MXNet's callbacks get a handle: NDArray(ctypes.cast(arr, NDArrayHandle)) reads it
        arr = mx.nd.NDArray(ctypes.cast(arr, mx.base.NDArrayHandle), writable=False)
        seen.append((name, arr.shape))
    data = mx.sym.var("data", shape=(2, 3))
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    with mx.name.NameManager():
        net = mx.sym.Activation(fc, act_type="relu", name="act") + 1
    exe = net.simple_bind(mx.cpu(), grad_req="null")
    exe.set_monitor_callback(callback, monitor_all=True)
    exe.forward()
    # as MXNet 1.9.1 names them: a variable input by itself and as <node>_<input>; the
    # inputs of operators MXNet gives no input names (Activation, unary, scalar) are inputN
    assert [n for n, _ in seen] == [
        "data", "fc_data", "fc_weight", "fc_weight", "fc_bias", "fc_bias", "fc_output",
        "act_input0", "act_output", "_plusscalar0_input0", "_plusscalar0_output"]
    assert seen[2] == ("fc_weight", (4, 3))
    # a reshaped executor keeps the monitor
    seen.clear()
    exe.reshape(data=(1, 3)).forward()
    assert seen[0] == ("data", (1, 3))


def test_simple_bind_ignores_keywords_that_are_not_input_shapes():
    s = mx.sym.exp(mx.sym.var("a"))
    exe = s.simple_bind(mx.cpu(), a=(2, 3), axis=1, mode="clip", other=(4,))
    assert exe.arg_dict["a"].shape == (2, 3)
    with pytest.raises(TypeError, match="Arguments need to be shapes"):
        s.infer_shape(a=(2, 3), axis=1)


def test_backward_without_forward_and_extra_head_gradients():
    data = mx.sym.var("data")
    net = mx.sym.repeat(data, repeats=2, axis=0)
    grad = mx.nd.zeros((2, 3))
    exe = net.bind(mx.cpu(), args=[mx.nd.ones((2, 3))], args_grad=[grad])
    # MXNet runs a backward without a forward before it (on the forward buffers)
    head = np.arange(12, dtype=np.float32).reshape(4, 3)
    exe.backward(mx.nd.array(head))
    np.testing.assert_array_equal(grad.asnumpy(), head[0::2] + head[1::2])
    # head gradients beyond the outputs are ignored, as in MXNet
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((4, 3)), mx.nd.ones((7,))])
    np.testing.assert_array_equal(grad.asnumpy(), np.full((2, 3), 2.0))


def test_cached_op_symbol_runs_a_nested_graph():
    data = mx.sym.var("data")
    orig = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=3, name="fc") * 2,
                            fix_gamma=False, output_mean_var=True, name="bn")
    with mx.name.NameManager():
        sub = mx.sym._internal._CachedOp(*[mx.sym.var(n) for n in orig.list_inputs()],
                                         subgraph=orig.tojson())
    # names, arguments and auxiliary states as MXNet 1.9.1 gives them
    assert sub.name == "_cachedop0"
    assert sub.list_outputs() == ["_cachedop0_bn_output", "_cachedop0_bn_mean",
                                  "_cachedop0_bn_var"]
    assert sub.list_arguments() == orig.list_arguments()
    assert sub.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert sub.infer_shape(data=(4, 5)) == orig.infer_shape(data=(4, 5))
    assert sub.infer_type(data="float64")[1] == [np.float64] * 3
    rng = np.random.RandomState(0)
    values = {n: rng.rand(*s).astype(np.float32) for n, s in
              zip(orig.list_arguments(), orig.infer_shape(data=(4, 5))[0])}
    results = []
    for sym in (orig, sub):
        args = {n: mx.nd.array(v) for n, v in values.items()}
        grads = {n: mx.nd.zeros(v.shape) for n, v in values.items()}
        aux = {"bn_moving_mean": mx.nd.zeros((3,)), "bn_moving_var": mx.nd.ones((3,))}
        exe = sym.bind(mx.cpu(), args=args, args_grad=grads, aux_states=aux)
        outs = [o.asnumpy() for o in exe.forward(is_train=True)]
        exe.backward([mx.nd.ones(o.shape) for o in outs])
        results.append((outs, {n: g.asnumpy() for n, g in grads.items()},
                        aux["bn_moving_mean"].asnumpy()))
    (o1, g1, m1), (o2, g2, m2) = results
    for a, b in zip(o1, o2):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for n in g1:
        np.testing.assert_allclose(g1[n], g2[n], rtol=1e-4, atol=1e-5)
    assert m1.any() and np.allclose(m1, m2)   # the moving mean is updated in place


def test_dynamic_shape_graph_binds_and_runs():
    d, i = mx.sym.var("d"), mx.sym.var("i")
    net = mx.sym.contrib.boolean_mask(d, i) * 2
    # MXNet: the output shape is unknown until the operator runs
    assert net.infer_shape_partial(d=(3, 2), i=(3,)) == ([(3, 2), (3,)], [()], [])
    grad = mx.nd.zeros((3, 2))
    exe = net.bind(mx.cpu(), args={"d": mx.nd.ones((3, 2)), "i": mx.nd.array([0, 1, 1])},
                   args_grad={"d": grad}, grad_req={"d": "write", "i": "null"})
    assert exe.forward(is_train=True)[0].asnumpy().tolist() == [[2, 2], [2, 2]]
    exe.backward(mx.nd.ones((2, 2)))
    assert grad.asnumpy().tolist() == [[0, 0], [2, 2], [2, 2]]


def test_bind_needs_arrays_on_its_context_without_group2ctx():
    s = mx.sym.var("a") * 2
    with pytest.raises(MXNetError, match=r"Input array is in cpu\(1\) while binding with "
                                         r"ctx=cpu\(0\)"):
        s.bind(mx.cpu(0), args={"a": mx.nd.ones((2,), ctx=mx.cpu(1))})
    with pytest.raises(MXNetError, match="Gradient array is in cpu"):
        s.bind(mx.cpu(0), args={"a": mx.nd.ones((2,))},
               args_grad={"a": mx.nd.ones((2,), ctx=mx.cpu(1))})
    exe = s.bind(mx.cpu(0), args={"a": mx.nd.ones((2,), ctx=mx.cpu(1))},
                 group2ctx={"dev": mx.cpu(1)})
    assert exe.forward()[0].asnumpy().tolist() == [2, 2]


def test_integer_arguments_get_gradients_through_a_cast():
    # MXNet: Cast's backward casts the head gradient to the (integer) argument's dtype
    x = mx.sym.var("x", dtype=np.int32)
    exe = mx.sym.Cast(x, dtype=np.float32).simple_bind(mx.cpu(), x=(2, 2))
    exe.arg_arrays[0][:] = np.array([[1, 2], [3, 4]])
    exe.forward(is_train=True)
    exe.backward(mx.nd.array([[1.5, -2.7], [3.2, 0.4]]))
    assert exe.grad_arrays[0].dtype == np.int32
    assert exe.grad_arrays[0].asnumpy().tolist() == [[1, -2], [3, 0]]


def test_integer_input_an_operator_needs_integer_gets_a_zero_gradient():
    data, length = mx.sym.var("data"), mx.sym.var("length", dtype=np.int32)
    net = mx.sym.softmax(data, length, axis=1, use_length=True)
    exe = net.simple_bind(mx.cpu(), data=(2, 3), length=(2,))
    exe.arg_dict["length"][:] = np.array([2, 3])
    exe.grad_dict["length"][:] = 5
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((2, 3)))
    assert exe.grad_dict["length"].asnumpy().tolist() == [0, 0]


def test_integer_gradient_tape_leaves_moving_statistics_alone():
    idx = mx.sym.var("idx", dtype=np.int32)
    net = mx.sym.BatchNorm(mx.sym.Cast(idx, dtype=np.float32), name="bn")
    exe = net.simple_bind(mx.cpu(), idx=(4, 2))
    exe.arg_dict["idx"][:] = np.array([[1, 2], [3, 4], [5, 6], [7, 8]])
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((4, 2)))
    # the momentum (0.9) applied once, not by the integer-gradient pass too
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(), [0.4, 0.5],
                               rtol=1e-6)


def test_executor_module_names():
    import mxtorch.executor as ex
    # MXNet's mx.executor exposes what its source imports
    assert ex.NDArray is mx.nd.NDArray and ex.ndarray is mx.nd and ex.py_str(b"a") == "a"
    assert all(callable(getattr(ex, n)) for n in ("c_array_buf", "c_handle_array",
                                                  "c_str_array", "check_call"))
    assert ex.__all__ == ["Executor"]


def test_reshaped_larger_executor_runs_backward_through_softmax_output():
    # an output with no room in the parent's memory is the program's own output: writing
    # it into itself was an in-place write autograd refused in backward (Module.forward on
    # a larger batch, MXNet's test_module.test_forward_reshape)
    data = mx.sym.var("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"),
                               name="sm")
    exe = net.simple_bind(mx.cpu(), data=(2, 4))
    exe.forward(is_train=True, data=mx.nd.ones((2, 4)))
    exe.backward()
    big = exe.reshape(allow_up_sizing=True, data=(5, 4), sm_label=(5,))
    big.arg_dict["fc_weight"][:] = 0.1
    big.forward(is_train=True, data=mx.nd.ones((5, 4)), sm_label=mx.nd.array([0, 1, 2, 0, 1]))
    big.backward()
    np.testing.assert_allclose(big.outputs[0].asnumpy(), np.full((5, 3), 1 / 3), rtol=1e-6)
    # d/dw of the softmax-output loss: (p - onehot(label))^T x, x all ones
    expected = np.full((3, 4), 5 / 3) - np.array([[2], [2], [1]])
    np.testing.assert_allclose(big.grad_dict["fc_weight"].asnumpy(), expected, rtol=1e-5)


@mx.operator.register("thread_probe")
class _ThreadProbeProp(mx.operator.CustomOpProp):
    seen: list = []

    def list_arguments(self):
        return ["data"]

    def infer_shape(self, in_shape):
        return in_shape, in_shape, []

    def create_operator(self, ctx, shapes, dtypes):
        seen = self.seen

        class _Probe(mx.operator.CustomOp):
            def forward(self, is_train, req, in_data, out_data, aux):
                seen.append(("forward", torch.get_num_threads()))
                self.assign(out_data[0], req[0], in_data[0] * 2)

            def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
                seen.append(("backward", torch.get_num_threads()))
                self.assign(in_grad[0], req[0], out_grad[0] * 2)
        return _Probe()


@pytest.mark.skipif(torch.get_num_threads() < 2, reason="needs more than one thread")
@pytest.mark.parametrize("size, small", [((4, 8), True), ((2000, 2000), False)])
def test_small_programs_run_on_one_thread(size, small):
    # MXNet's operator tuning: a bound program whose operators are all small runs on one
    # thread (waking sleeping OpenMP workers costs more than its work); the thread count
    # is restored after each call, and large programs keep every thread
    threads = torch.get_num_threads()
    _ThreadProbeProp.seen.clear()
    x = mx.sym.Variable("x")
    y = mx.sym.Custom(x, op_type="thread_probe", name="probe") + 1
    exe = y.simple_bind(mx.cpu(), x=size)
    exe.forward(is_train=True, x=mx.nd.ones(size))
    exe.backward(mx.nd.ones(size))
    assert torch.get_num_threads() == threads
    expect = 1 if small else threads
    assert _ThreadProbeProp.seen == [("forward", expect), ("backward", expect)]
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), np.full(size, 2.0))


def test_largest_work_estimates_operators_from_inferred_shapes():
    from mxtorch.graph.compile import GraphProgram
    from mxtorch.graph.threads import largest_work
    data, w = mx.sym.Variable("data"), mx.sym.Variable("w")
    conv = mx.sym.Convolution(data, w, num_filter=8, kernel=(3,), no_bias=True)
    prog = GraphProgram(conv._outputs)
    # conv estimate: data elements / channels * weight elements / 40,000 MACs per us
    assert largest_work(prog, [(2, 4, 10), (8, 4, 3)]) == pytest.approx(2 * 10 * 96 / 40000)
    assert largest_work(prog, [(2, 4, 10), (8, 5, 3)]) == float("inf")   # no shapes

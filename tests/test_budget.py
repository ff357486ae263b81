"""When compiling pays (graph/budget.py): the compile gate's arithmetic, when a bound
executor traces its training step, and what binding reuses (compiled modules shared by
equal graphs, no shape inference of its own)."""
import numpy as np
import pytest

import mxtorch as mx
from mxtorch.graph.backends.cpu_tuned import training
from mxtorch.graph import passes
from mxtorch.graph.budget import CompileGate, CostModel


# ---------------------------------------------------------------- the gate
def _runs(gate, forward, backward, n):
    for _ in range(n):
        gate.charge(forward, new_run=True)
        gate.charge(backward, new_run=False)


def test_compile_is_due_once_plain_runs_took_as_long_as_the_estimate():
    gate = CompileGate(CostModel(fixed=0.5, per_node=0.1), nodes=5)   # estimates 1.0 s
    gate.charge(10.0, new_run=True)          # the first run builds the program: not charged
    assert not gate.due()
    _runs(gate, 0.2, 0.1, 3)                 # 0.9 s
    assert not gate.due()
    gate.charge(0.2, new_run=True)           # 1.1 s, charged in the forward already
    assert gate.due()


def test_compile_is_never_due_before_two_timed_runs():
    gate = CompileGate(CostModel(fixed=0.0, per_node=0.0), nodes=100)
    _runs(gate, 1.0, 1.0, 2)                 # one untimed, one timed
    assert not gate.due()
    gate.charge(1.0, new_run=True)
    assert gate.due()


@pytest.mark.parametrize("trial, kept", [
    ([0.05] * 5, True),
    ([0.05, 0.05, 3.0, 0.05, 2.0], True),     # a collection or a busy machine, twice
    ([0.25] * 5, False),
    ([0.25, 0.25, 0.05, 0.25, 0.05], False),
])
def test_compiled_program_is_kept_unless_its_typical_run_is_slower(trial, kept):
    gate = CompileGate(CostModel(fixed=0.0, per_node=0.0), nodes=3)
    _runs(gate, 0.2, 0.2, 3)                 # plain runs: 0.4 s each (the first untimed)
    assert gate.due()
    gate.compiled_as("step", seconds=2.0)
    assert gate.compiled == "step" and not gate.final and not gate.due()
    _runs(gate, 5.0, 5.0, 1)                 # its first run is not timed
    for t in trial:
        _runs(gate, t, t, 1)
    assert gate.compiled == "step" and not gate.final
    gate.charge(0.01, new_run=True)          # the next run decides
    assert gate.final and (gate.compiled == "step") is kept


def test_a_program_that_cannot_be_compiled_stays_plain():
    gate = CompileGate(CostModel(fixed=0.0, per_node=0.0), nodes=3)
    _runs(gate, 1.0, 1.0, 3)
    gate.compiled_as(None, seconds=1.0)
    assert gate.final and gate.compiled is None and not gate.due()
    gate = CompileGate(CostModel(fixed=0.0, per_node=0.0), nodes=3)
    gate.never()
    _runs(gate, 1.0, 1.0, 5)
    assert gate.final and not gate.due()


def test_at_once_compiles_after_the_first_run_and_keeps_it():
    gate = CompileGate(CostModel(fixed=100.0, per_node=100.0), nodes=3, at_once=True)
    gate.charge(0.001, new_run=True)
    assert gate.due()
    gate.compiled_as("step", seconds=0.5)
    assert gate.final and gate.compiled == "step"


def test_cost_model_learns_the_cost_per_node_from_measured_compilations():
    model = CostModel(fixed=0.1, per_node=0.01)
    assert model.estimate(100) == pytest.approx(1.1)
    model.observe(10, 0.1 + 10 * 0.5)        # the first one also imported the tracer
    assert model.per_node == pytest.approx(0.01)
    model.observe(100, 0.1 + 100 * 0.03)     # this machine takes 30 ms per node
    model.observe(50, 0.1 + 50 * 0.03)
    assert model.per_node == pytest.approx(0.03)
    assert model.estimate(10) == pytest.approx(0.4)


# ---------------------------------------------------------------- executors
def _chain(links):
    """An elementwise chain of ``2 * links`` operator nodes on one small argument."""
    x = mx.sym.var("x")
    out = x
    for _ in range(links):
        out = out * 0.5 + x
    return out


def _steps(exe, n):
    seen = []
    for _ in range(n):
        exe.forward(is_train=True)
        exe.backward()
        seen.append(exe._step is not None)
    return seen


def _no_trace(*args, **kwargs):
    raise AssertionError("a training step was traced")


def test_a_large_graph_is_not_traced_in_its_first_steps(monkeypatch):
    monkeypatch.setenv("MXTORCH_TRACE_TRAINING", "auto")
    monkeypatch.setattr(training, "trace_step", _no_trace)
    exe = _chain(1000).simple_bind(mx.cpu(), x=(2, 3))     # 2000 operator nodes
    exe.arg_dict["x"][:] = 1
    assert _steps(exe, 5) == [False] * 5
    (gate,) = exe._gates.values()
    assert gate.nodes == 2000 and not gate.due() and not gate.final
    # the values are autograd's: x_{k+1} = x_k / 2 + x, so x_k -> 2 x and d/dx -> 2
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), np.full((2, 3), 2.0), rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), np.full((2, 3), 2.0), rtol=1e-6)


def test_a_step_is_traced_once_its_runs_have_paid_for_it(monkeypatch):
    monkeypatch.setenv("MXTORCH_TRACE_TRAINING", "auto")
    monkeypatch.setattr(training, "TRACE_COST", CostModel(fixed=0.0, per_node=0.0))
    exe = _chain(2).simple_bind(mx.cpu(), x=(2, 3))
    exe.arg_dict["x"][:] = np.arange(6).reshape(2, 3)
    # one untimed run, two timed ones, then the traced programs
    assert _steps(exe, 4) == [False, False, False, True]
    np.testing.assert_allclose(exe.outputs[0].asnumpy(),
                               1.75 * np.arange(6).reshape(2, 3), rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), np.full((2, 3), 1.75))


def test_a_step_drawing_random_numbers_is_never_traced(monkeypatch):
    monkeypatch.setenv("MXTORCH_TRACE_TRAINING", "auto")
    monkeypatch.setattr(training, "TRACE_COST", CostModel(fixed=0.0, per_node=0.0))
    monkeypatch.setattr(training, "trace_step", _no_trace)
    x = mx.sym.var("x")
    exe = mx.sym.Dropout(x * 2, p=0.5).simple_bind(mx.cpu(), x=(4, 5))
    exe.arg_dict["x"][:] = 1
    assert _steps(exe, 5) == [False] * 5
    (gate,) = exe._gates.values()
    assert gate.final and gate.compiled is None
    kept = exe.outputs[0].asnumpy() != 0      # MXNet's dropout scales what it keeps
    np.testing.assert_array_equal(exe.outputs[0].asnumpy()[kept], 4.0)
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), np.where(kept, 4.0, 0.0))


# ---------------------------------------------------------------- binding
def _fc_net(num_hidden=3):
    data = mx.sym.var("data")
    return mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=num_hidden),
                             act_type="relu")


def _bind(sym, shape):
    exe = sym.simple_bind(mx.cpu(), data=shape)
    rng = np.random.RandomState(0)
    for arr in exe.arg_arrays:
        arr[:] = rng.uniform(-1, 1, arr.shape)
    return exe


def test_equal_graphs_share_their_compiled_modules():
    first, second = _bind(_fc_net(), (2, 4)), _bind(_fc_net(), (2, 4))
    assert first._symbol.name != second._symbol.name      # auto-named nodes differ
    for exe in (first, second):
        args = {n: a.asnumpy() for n, a in exe.arg_dict.items()}
        weight, bias = (args[n] for n in exe._arg_names[1:])
        out = exe.forward(is_train=False)[0].asnumpy()
        np.testing.assert_allclose(out, np.maximum(args["data"] @ weight.T + bias, 0),
                                   rtol=1e-5, atol=1e-6)
    assert first._program._modules is second._program._modules
    assert len(first._program._modules) == 1
    other = _bind(_fc_net(num_hidden=5), (2, 4))
    assert other._program._modules is not first._program._modules
    # a monitor still reports the executor's own node names
    names = []
    second.set_monitor_callback(lambda name, arr: names.append(name))
    second.forward()
    assert names and all(n.startswith(second._symbol.name) or
                         n.startswith(second._symbol.get_children().name) for n in names)


def test_bind_and_forward_run_no_shape_inference(monkeypatch):
    net = _fc_net()
    calls = []
    real = passes.infer_graph_shapes
    monkeypatch.setattr(passes, "infer_graph_shapes",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    args = {"data": mx.nd.ones((2, 4)), net.list_arguments()[1]: mx.nd.ones((3, 4)),
            net.list_arguments()[2]: mx.nd.zeros((3,))}
    exe = net.bind(mx.cpu(), args)
    exe.forward()
    assert calls == [] and exe.outputs[0].asnumpy().tolist() == [[4.0] * 3] * 2
    # before a forward, the outputs are MXNet's: zero arrays of the inferred shapes
    fresh = net.bind(mx.cpu(), args)
    assert [o.shape for o in fresh.outputs] == [(2, 3)] and calls
    assert not fresh.outputs[0].asnumpy().any()
    fresh.forward()
    assert fresh.outputs[0].asnumpy().tolist() == [[4.0] * 3] * 2


def test_shape_and_dtype_inference_run_each_distinct_node_once(monkeypatch):
    from mxtorch.ops import registry
    runs = []
    real = registry.OpDef._meta_run
    monkeypatch.setattr(registry.OpDef, "_meta_run",
                        lambda self, *a: runs.append(self.name) or real(self, *a))
    # sort declares no inference of its own: its meta kernel answers
    monkeypatch.setattr(registry.get("sort"), "_meta_memo", {})
    x = mx.sym.var("x")
    out = x
    for _ in range(50):     # 50 equal sort nodes, each fed the same shape
        out = mx.sym.sort(out)
    assert out.infer_shape(x=(3, 4))[1] == [(3, 4)]
    assert out.infer_type(x=np.float16)[1] == [np.float16]
    assert runs == ["sort", "sort"]          # a shape run, a dtype run
    again = mx.sym.sort(mx.sym.var("y"))     # another graph: the answers are remembered
    assert again.infer_shape(y=(3, 4))[1] == [(3, 4)] and len(runs) == 2


def test_remembered_inference_still_reports_errors():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    dot = mx.sym.dot(a, b)
    for _ in range(2):
        with pytest.raises(mx.base.MXNetError):
            dot.infer_shape(a=(2, 3), b=(4, 5))
    assert dot.infer_shape(a=(2, 3), b=(3, 5))[1] == [(2, 5)]


def test_graphs_with_shapes_inferred_at_run_time_share_code_per_inferred_shape():
    # MXNet: a creation node of shape (0, 3) takes its batch size from the graph (an RNN's
    # begin state); the program is specialized for the shape it gets
    data, other = mx.sym.var("data"), mx.sym.var("other")
    net = mx.sym.Group([mx.sym.zeros(shape=(0, 3)) + data,
                        mx.sym.FullyConnected(other, num_hidden=2, no_bias=True)])
    outs = []
    for batch, width in ((2, 4), (2, 6), (5, 4)):
        exe = net.simple_bind(mx.cpu(), data=(batch, 3), other=(4, width), grad_req="null")
        exe.arg_dict["data"][:] = np.arange(batch * 3).reshape(batch, 3)
        exe.arg_dict["other"][:] = 1
        exe.arg_dict[net.list_arguments()[2]][:] = 0.5
        got = exe.forward()
        np.testing.assert_array_equal(got[0].asnumpy(), np.arange(batch * 3).reshape(batch, 3))
        np.testing.assert_array_equal(got[1].asnumpy(), np.full((4, 2), 0.5 * width))
        outs.append(exe._program._modules)
    assert outs[0] is outs[1] is outs[2]
    built = {id(m) for m in outs[0].values()}
    assert len(built) == 2      # one for batch 2 (whatever the other width), one for 5


def test_shared_modules_of_graphs_not_bound_lately_are_let_go(monkeypatch):
    from mxtorch.graph import compile as compile_mod
    monkeypatch.setattr(compile_mod, "_SHARED", type(compile_mod._SHARED)())
    monkeypatch.setattr(compile_mod, "_SHARED_NODES", 10)
    exes = [_bind(_fc_net(num_hidden=h), (2, 4)) for h in (3, 4, 5)]   # 5 nodes each
    for exe in exes:
        exe.forward()
    # the two most recently built structures stay; the first was let go
    assert [m is exe._program._modules for m, exe in
            zip(compile_mod._SHARED.values(), exes[1:])] == [True, True]
    out = exes[0].forward()[0].asnumpy()   # its executor still has its program
    again = _bind(_fc_net(num_hidden=3), (2, 4))
    assert again._program._modules is not exes[0]._program._modules
    assert out.shape == (2, 3) and again.forward()[0].shape == (2, 3)

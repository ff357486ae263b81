"""mx.profiler: the Chrome trace (MXNet operator names with torch's kernels beneath), MXNet's
aggregate stats, the profiling objects, and instrumentation that exists only while it runs."""
import json
import warnings

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import autograd, profiler
from mxtorch.base import MXNetError
from mxtorch.ndarray import NDArray
from mxtorch.ops import registry


@pytest.fixture
def trace(tmp_path):
    """Configure the profiler to write into tmp_path; stop and close it afterwards."""
    fname = str(tmp_path / "trace.json")

    def configure(**kwargs):
        kwargs.setdefault("continuous_dump", False)
        profiler.set_config(profile_all=True, filename=fname, **kwargs)
        return fname
    yield configure
    profiler.set_state("stop")
    if profiler.REC.output:
        profiler.dump(True)
    profiler.set_config(aggregate_stats=False, continuous_dump=False, filename=fname)


def _events(fname):
    with open(fname, encoding="utf-8") as f:
        return json.load(f)["traceEvents"]


def _op_stats(text):
    return json.loads(text)["Time"].get("operator", {})


def test_trace_has_operator_names_with_torch_kernels_beneath(trace):
    fname = trace()
    x, w, b = mx.nd.ones((4, 8)), mx.nd.ones((3, 8)), mx.nd.ones((3,))
    profiler.set_state("run")
    y = mx.nd.FullyConnected(x, w, b, num_hidden=3)
    z = y + 1
    profiler.set_state("stop")
    profiler.dump()
    np.testing.assert_array_equal(z.asnumpy(), np.full((4, 3), 10.0))
    events = _events(fname)
    fc = [e for e in events if e["name"] == "FullyConnected"]
    assert len(fc) == 1 and fc[0]["cat"] == "operator" and fc[0]["ph"] == "X"
    assert [e["cat"] for e in events if e["name"] == "_plus_scalar"] == ["operator"]
    kernels = [e for e in events if e.get("cat") == "cpu_op"
               and fc[0]["ts"] - 50 <= e["ts"] <= fc[0]["ts"] + fc[0]["dur"] + 50]
    assert any(e["name"] in ("aten::addmm", "aten::linear", "aten::matmul") for e in kernels)
    with pytest.raises(MXNetError, match="hasn't been run"):
        profiler.dump()                  # a finished trace is closed


def test_instrumentation_exists_only_while_running(trace):
    trace()
    fc = registry.get("FullyConnected")
    compute, add = fc.compute, NDArray.__add__
    profiler.set_state("run")
    assert fc.compute is not compute and NDArray.__add__ is not add
    assert fc.compute.__wrapped__ is compute
    profiler.set_state("stop")
    assert fc.compute is compute and NDArray.__add__ is add


def test_aggregate_counts_and_sorting(trace):
    trace(aggregate_stats=True)
    profiler.set_state("run")
    profiler.dumps(reset=True)
    x = mx.nd.zeros((10, 10))
    mx.nd.sqrt(x)
    x = x + 1
    x = x + 1
    x += x                       # the in-place operator runs broadcast_add once
    stats = _op_stats(profiler.dumps(format="json"))
    assert {k: v["Count"] for k, v in stats.items()} == {
        "_zeros": 1, "sqrt": 1, "_plus_scalar": 2, "broadcast_add": 1}
    for key, field in (("count", "Count"), ("total", "Total"), ("min", "Min")):
        for asc in (False, True):
            values = [v[field] for v in
                      _op_stats(profiler.dumps(format="json", sort_by=key,
                                               ascending=asc)).values()]
            assert values == sorted(values, reverse=not asc)
    table = profiler.dumps(reset=True)
    assert "\noperator\n=================\nName                          Total Count" \
           "        Time (ms)    Min Time (ms)    Max Time (ms)    Avg Time (ms)\n" in table
    assert _op_stats(profiler.dumps(format="json")) == {}


def test_pause_resume(trace):
    trace(aggregate_stats=True)
    profiler.set_state("run")
    profiler.pause()
    mx.nd.sqrt(mx.nd.ones((2,)))
    profiler.resume()
    mx.nd.exp(mx.nd.ones((2,)))
    stats = _op_stats(profiler.dumps(format="json"))
    assert "sqrt" not in stats and stats["exp"]["Count"] == 1


def test_domain_objects_and_counter_stats(trace):
    # continuous: dumps() appends what it gathered, and dump() closes the file afterwards
    fname = trace(aggregate_stats=True, continuous_dump=True, dump_period=60)
    profiler.set_state("run")
    dom = profiler.Domain("MyDomain")
    task = dom.new_task("mytask")
    task.start()
    task.stop()
    frame = dom.new_frame("myframe")
    frame.start()
    frame.stop()
    counter = dom.new_counter("mycounter", 5)
    counter += 3
    counter.decrement(2)
    dom.new_marker("mymarker").mark("global")
    event = profiler.Event("myevent")
    event.start()
    event.stop()
    stats = json.loads(profiler.dumps(format="json"))["Time"]
    assert set(stats) >= {"MyDomain", "MyDomain,frame", "MyDomain,instant_marker", "event"}
    # MXNet: a counter's total is its latest value and its average half its range (integer)
    assert stats["MyDomain"]["mycounter"] == {"Count": 3, "Total": 0.006, "Min": 0.005,
                                              "Max": 0.008, "Avg": 0.001}
    assert stats["MyDomain"]["mytask"]["Count"] == 1
    profiler.set_state("stop")
    profiler.dump()
    by_name = {e["name"]: e for e in _events(fname)}
    assert by_name["mymarker"]["ph"] == "i" and by_name["mymarker"]["s"] == "g"
    assert by_name["mycounter"]["ph"] == "C" and by_name["myframe"]["cat"] == "MyDomain,frame"
    assert str(dom) == "MyDomain" and str(counter) == "mycounter"
    with pytest.raises(MXNetError, match="marker scope"):
        dom.new_marker("m").mark("everywhere")


def test_continuous_dump_appends_and_closes(trace):
    fname = trace(continuous_dump=True, dump_period=60)
    profiler.set_state("run")
    sizes = []
    for _ in range(3):
        mx.nd.exp(mx.nd.ones((3,)))
        profiler.dump(False)
        with open(fname, encoding="utf-8") as f:
            sizes.append(len(f.read()))
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    profiler.set_state("stop")
    profiler.dump(True)
    assert [e["name"] for e in _events(fname)].count("exp") == 3


def test_custom_operator_names(trace):
    class Twice(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            mx.nd.zeros((2,))
            self.assign(out_data[0], req[0], in_data[0] * 2)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0] * 2)

    @mx.operator.register("h8_twice")
    class TwiceProp(mx.operator.CustomOpProp):
        def list_arguments(self):
            return ["data"]

        def infer_shape(self, in_shape):
            return in_shape, in_shape, []

        def create_operator(self, ctx, shapes, dtypes):
            return Twice()

    trace(aggregate_stats=True)
    profiler.set_state("run")
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, op_type="h8_twice")
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0])
    custom = json.loads(profiler.dumps(format="json"))["Time"]["Custom Operator"]
    assert {"h8_twice::pure_python", "_backward_h8_twice::pure_python", "h8_twice::_zeros",
            "h8_twice::_mul_scalar", "_backward_h8_twice::_mul_scalar"} <= set(custom)


def test_symbolic_execution_and_scope(trace):
    fname = trace()
    profiler.set_state("run")
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    ex = net.simple_bind(mx.cpu(), data=(3, 4))
    with profiler.scope("mlp"):
        ex.forward()
    profiler.set_state("stop")
    profiler.dump()
    fc = [e for e in _events(fname) if e["name"] == "FullyConnected"]
    assert fc and fc[-1]["args"] == {"scope": "mlp:"}


def test_errors_and_deprecated_names(trace):
    with pytest.raises(MXNetError, match="Cannot find argument 'profile_everything'"):
        profiler.set_config(profile_everything=True)
    with pytest.raises(MXNetError, match="server"):
        profiler.set_config(profile_process="server")
    fname = trace()
    with pytest.raises(MXNetError, match="hasn't been run"):
        profiler.dump()
    with pytest.raises(AssertionError, match="Invalid value provided for format"):
        profiler.dumps(format="xml")
    assert profiler.dumps() == ""          # no aggregate stats configured
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profiler.profiler_set_config(mode="all", filename=fname)
        profiler.profiler_set_state("run")
        profiler.profiler_set_state("stop")
        profiler.dump_profile()
    assert len([w for w in caught if "deprecated" in str(w.message)]) == 4
    assert isinstance(_events(fname), list)

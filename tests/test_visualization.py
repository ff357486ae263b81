"""mx.viz.print_summary (MXNet's table, values from real MXNet 1.9.1) and plot_network."""
import mxtorch as mx


def _net():
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=4, name="fc1")
    act = mx.sym.Activation(fc1, act_type="tanh", name="act")
    bn = mx.sym.BatchNorm(act, name="bn")
    fc2 = mx.sym.FullyConnected(bn, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def test_print_summary_matches_mxnet(capsys):
    mx.viz.print_summary(_net(), shape={"data": (5, 6)})
    lines = [ln.rstrip() for ln in capsys.readouterr().out.splitlines()]
    assert lines[1].startswith("Layer (type)") and "Param #" in lines[1]
    rows = [ln.split() for ln in lines if "(" in ln and not ln.startswith("Layer")]
    assert rows == [["data(null)", "6", "0"], ["fc1(FullyConnected)", "4", "28", "data"],
                    ["act(Activation)", "4", "0", "fc1"], ["bn(BatchNorm)", "4", "8", "act"],
                    ["fc2(FullyConnected)", "3", "15", "bn"],
                    ["softmax(SoftmaxOutput)", "3", "0", "fc2"]]
    assert "Total params: 51" in lines
    assert len(lines[0]) == 120 and set(lines[0]) == {"_"}


def test_plot_network_source():
    dot = mx.viz.plot_network(_net(), shape={"data": (5, 6)})
    src = dot.source
    assert src.startswith("digraph plot {")
    assert "fc1 -> data" in src and "softmax -> softmax_label" in src
    assert "FullyConnected" in src and "fc1_weight" not in src

"""mx.viz.print_summary (MXNet's table, values from real MXNet 1.9.1) and plot_network."""
import numpy as np
import pytest

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
    pytest.importorskip("graphviz")
    dot = mx.viz.plot_network(_net(), shape={"data": (5, 6)})
    src = dot.source
    assert src.startswith("digraph plot {")
    assert "fc1 -> data" in src and "softmax -> softmax_label" in src
    assert "FullyConnected" in src and "fc1_weight" not in src


def _conv_net():
    net = mx.sym.Variable("data")
    net = mx.sym.Convolution(net, kernel=(3, 3), stride=(2, 2), num_filter=4, name="conv")
    net = mx.sym.Pooling(net, kernel=(2, 2), pool_type="avg", name="pool")
    net = mx.sym.FullyConnected(net, name="fc", num_hidden=10)
    sp = mx.sym.SliceChannel(net, num_outputs=2, name="split")
    return mx.sym.SoftmaxOutput(mx.sym.Activation(sp[1], act_type="relu", name="relu"),
                                name="out")


def test_plot_network_labels_shapes_and_types_as_mxnet():
    pytest.importorskip("graphviz")
    dot = mx.viz.plot_network(_conv_net(), shape={"data": (2, 3, 9, 9)},
                              dtype={"data": np.float32}, node_attrs={"fixedsize": "false"})
    src = dot.source
    # lines of real MXNet 1.9.1's digraph source for this network
    for line in ['\tconv [label="Convolution\n3x3/2x2, 4" fillcolor="#fb8072" fixedsize=false '
                 'height=0.8034 shape=box style=filled width=1.3]',
                 '\tpool [label="Pooling\navg, 2x2/1" fillcolor="#80b1d3" fixedsize=false '
                 'height=0.8034 shape=box style=filled width=1.3]',
                 '\tout [label=out fillcolor="#fccde5" fixedsize=false height=0.8034 '
                 'shape=box style=filled width=1.3]',
                 '\tpool -> conv [label="4x4x4(float32)" arrowtail=open dir=back]',
                 '\trelu -> split [label="5(float32)" arrowtail=open dir=back]',
                 '\tout -> out_label [label="(float32)" arrowtail=open dir=back]']:
        assert line in src, line
    assert "conv_weight" not in src
    shown = mx.viz.plot_network(_conv_net(), hide_weights=False).source
    assert "conv -> conv_weight" in shown and "\tconv_weight [" not in shown


def test_plot_network_warns_on_repeated_names_and_checks_input():
    pytest.importorskip("graphviz")
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc", num_hidden=4)
    net = mx.sym.FullyConnected(net, name="fc", num_hidden=2)
    with pytest.warns(RuntimeWarning, match="multiple variables with the same name.*fc"):
        mx.viz.plot_network(net)
    with pytest.raises(TypeError, match="symbol must be a Symbol"):
        mx.viz.plot_network("net")


def test_plot_network_needs_graphviz(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match="requires graphviz"):
        mx.viz.plot_network(_conv_net())

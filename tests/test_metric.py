"""mx.metric: every metric against values MXNet 1.9.1 printed for the same inputs."""
import math

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import metric

PRED = mx.nd.array([[0.3, 0.7], [0.6, 0.4], [0.2, 0.8], [0.9, 0.1]])
LABEL = mx.nd.array([1, 1, 0, 0])
LABEL2 = mx.nd.array([1, 1, 1, 0])
PRED3 = mx.nd.array([[0.1, 0.5, 0.4], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.3, 0.4, 0.3]])
LABEL3 = mx.nd.array([2, 0, 1, 1])
Y = mx.nd.array([1.0, 2.0, 3.0, 4.0])
P = mx.nd.array([1.5, 1.0, 3.5, 2.0])


def _check(m, value, name=None):
    n, v = m.get()
    assert n == (name or m.name)
    assert v == pytest.approx(value, rel=1e-6)
    assert m.get_global()[1] == pytest.approx(value, rel=1e-6)


def test_accuracy():
    m = metric.Accuracy()
    m.update([LABEL], [PRED])
    _check(m, 0.5, "accuracy")
    assert m.num_inst == 4 and m.sum_metric == 2
    m.reset_local()
    assert math.isnan(m.get()[1]) and m.get_global()[1] == 0.5
    m.update([LABEL], [PRED3[:, :2]])
    assert m.get() == ("accuracy", 0.5)
    # predictions already given as labels
    m = metric.Accuracy()
    m.update([mx.nd.array([1, 2, 3])], [mx.nd.array([1, 0, 3])])
    assert m.get()[1] == pytest.approx(2 / 3)
    m = metric.Accuracy(axis=0)
    m.update([mx.nd.array([1, 1])], [mx.nd.array([[0.1, 0.9], [0.8, 0.2]])])
    assert m.get()[1] == 0.5
    with pytest.raises(ValueError, match="Shape of labels 2 does not match shape of predictions 1"):
        metric.Accuracy().update([LABEL, LABEL], [PRED])


def test_topk_accuracy():
    m = metric.TopKAccuracy(top_k=2)
    m.update([LABEL3], [PRED3])
    _check(m, 1.0, "top_k_accuracy_2")
    m = metric.create("top_k_acc", top_k=2)
    m.update([mx.nd.array([0, 0])], [mx.nd.array([[0.1, 0.5, 0.4], [0.6, 0.3, 0.1]])])
    assert m.get()[1] == 0.5
    with pytest.raises(AssertionError, match="Please use Accuracy"):
        metric.TopKAccuracy(top_k=1)


def test_f1_and_mcc():
    m = metric.F1()
    m.update([LABEL], [PRED])
    m.update([LABEL], [PRED])
    _check(m, 0.5, "f1")
    m = metric.F1()
    m.update([LABEL], [PRED])
    m.update([LABEL2], [PRED])
    _check(m, 0.65)
    m = metric.F1(average="micro")
    m.update([LABEL], [PRED])
    m.update([LABEL2], [PRED])
    _check(m, 0.6666666666666665)
    m = metric.MCC()
    m.update([LABEL], [PRED])
    m.update([LABEL2], [PRED])
    _check(m, 0.2886751345948129, "mcc")
    m = metric.MCC(average="micro")
    m.update([LABEL], [PRED])
    m.update([LABEL2], [PRED])
    _check(m, 0.2581988897471611)
    m.reset_local()
    assert math.isnan(m.get()[1]) and m.get_global()[1] == pytest.approx(0.2581988897471611)
    with pytest.raises(ValueError, match="only supports binary classification"):
        metric.F1().update([LABEL3], [PRED3])


def test_perplexity():
    m = metric.Perplexity(ignore_label=None)
    m.update([LABEL3], [PRED3])
    _check(m, 2.6864247343393037, "perplexity")
    m = metric.Perplexity(ignore_label=1)
    m.update([LABEL3], [PRED3])
    _check(m, 2.041241369846562)
    with pytest.raises(AssertionError, match="shape mismatch"):
        metric.Perplexity(ignore_label=None).update([LABEL3], [PRED3.T])


def test_regression_metrics():
    for cls, value in [(metric.MAE, 1.25), (metric.MSE, 3.1875), (metric.RMSE, 1.7043359875679016)]:
        m = cls()
        m.update([Y], [P])
        m.update([Y], [P * 2])
        _check(m, value)
        assert isinstance(m.get()[1], float)
    m = metric.MSE()
    m.update([Y.reshape((2, 2))], [P.reshape((2, 2))])
    assert m.get()[1] == pytest.approx(np.mean((Y.asnumpy() - P.asnumpy()) ** 2))


def test_cross_entropy_nll():
    for m in [metric.CrossEntropy(), metric.NegativeLogLikelihood()]:
        m.update([LABEL3], [PRED3])
        _check(m, 0.9882112741470337)
    assert metric.CrossEntropy().name == "cross-entropy"
    assert metric.NegativeLogLikelihood().name == "nll-loss"


def test_pearson_and_pcc():
    m = metric.PearsonCorrelation()
    m.update([Y], [P])
    m.update([Y], [P * P])
    assert m.get() == ("pearsonr", pytest.approx(0.449189919839618))
    m = metric.PearsonCorrelation(average="micro")
    m.update([Y], [P])
    m.update([Y], [P * P])
    assert m.get()[1] == pytest.approx(0.3289487405320934)
    m = metric.PCC()
    m.update([LABEL3], [PRED3])
    assert m.get()[1] == pytest.approx(0.2)
    m.update([mx.nd.array([0, 1, 2, 3])], [mx.nd.array([0, 1, 2, 2])])
    _check(m, 0.47776654295295456, "pcc")
    assert m.k == 4
    m.reset_local()
    assert math.isnan(m.get()[1])


def test_loss_custom_np():
    m = metric.Loss()
    m.update(None, [mx.nd.array([1, 2, 3.0])])
    assert m.get() == ("loss", 2.0)
    assert metric.Torch().name == "torch" and metric.Caffe().name == "caffe"
    m = metric.np(lambda lab, pred: (lab == pred.argmax(1)).mean())
    m.update([LABEL3], [PRED3])
    assert m.get() == ("custom(<lambda>)", 0.5)

    def myf(lab, pred):
        return 3.0, 2
    m = metric.create(myf)
    m.update([LABEL3], [PRED3])
    assert m.get() == ("myf", 1.5)
    with pytest.raises(NotImplementedError):
        m.get_config()
    m = metric.CustomMetric(myf, name="x", allow_extra_outputs=True)
    m.update([LABEL3], [PRED3, PRED3])
    assert m.get() == ("x", 1.5)


def test_create_composite_config():
    names = {"acc": metric.Accuracy, "accuracy": metric.Accuracy, "ce": metric.CrossEntropy,
             "f1": metric.F1, "mse": metric.MSE, "mae": metric.MAE, "rmse": metric.RMSE,
             "nll_loss": metric.NegativeLogLikelihood, "pearsonr": metric.PearsonCorrelation,
             "pcc": metric.PCC, "loss": metric.Loss, "mcc": metric.MCC,
             "composite": metric.CompositeEvalMetric}
    for name, cls in names.items():
        assert type(metric.create(name)) is cls
    assert type(metric.create("perplexity", -1)) is metric.Perplexity
    m = metric.create(["acc", "ce"])
    m.update([LABEL3], [PRED3])
    assert m.get() == (["accuracy", "cross-entropy"], [0.5, pytest.approx(0.9882112741470337)])
    assert m.get_name_value() == [("accuracy", 0.5),
                                  ("cross-entropy", pytest.approx(0.9882112741470337))]
    assert str(m).startswith("EvalMetric: {'accuracy': 0.5, 'cross-entropy': 0.98821")
    assert m.get_metric(0).name == "accuracy"
    assert isinstance(m.get_metric(5), ValueError)
    assert metric.Accuracy(axis=1).get_config() == {
        "axis": 1, "metric": "Accuracy", "name": "accuracy", "output_names": None,
        "label_names": None}
    assert metric.create("acc").get_name_value()[0][0] == "accuracy"
    with pytest.raises(AssertionError, match="nope is not registered"):
        metric.create("nope")
    m2 = metric.create(metric.Accuracy().get_config())
    assert isinstance(m2, metric.Accuracy)


def test_update_dict_and_names():
    m = metric.Accuracy(output_names=["out"], label_names=["lab"])
    m.update_dict({"lab": LABEL, "other": LABEL2}, {"out": PRED, "x": PRED3})
    assert m.get()[1] == 0.5
    comp = metric.CompositeEvalMetric([metric.Accuracy(), "mse"], label_names=["lab"],
                                      output_names=["out"])
    comp.update_dict({"lab": LABEL, "other": LABEL2}, {"out": PRED, "x": PRED3})
    assert comp.get()[1][0] == 0.5
    assert comp.get_global_name_value()[0] == ("accuracy", 0.5)
    comp.reset()
    assert all(math.isnan(v) for v in comp.get()[1])


def test_check_label_shapes():
    labels, preds = metric.check_label_shapes(LABEL, PRED, wrap=True)
    assert labels == [LABEL] and preds == [PRED]
    with pytest.raises(ValueError, match=r"\(4,\) does not match shape of predictions \(4, 2\)"):
        metric.check_label_shapes(LABEL, PRED, shape=True)


def test_metric_namespace_has_ndarray_and_registry():
    # MXNet's mxnet.metric imports them; GluonTS does `from mxnet.metric import ndarray`
    from mxtorch.metric import ndarray, registry
    assert ndarray is mx.nd and registry is mx.registry

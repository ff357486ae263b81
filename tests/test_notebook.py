"""mx.notebook.callback: PandasLogger over Module.fit, args_wrapper, missing packages."""
import importlib.util

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.notebook import callback

HAS_PANDAS = importlib.util.find_spec("pandas") is not None


def _fit(logger, epochs=2):
    rng = np.random.RandomState(0)
    data = rng.rand(16, 3).astype(np.float32)
    label = (data.sum(axis=1) > 1.5).astype(np.float32)
    train = mx.io.NDArrayIter(data, label, batch_size=4)
    val = mx.io.NDArrayIter(data[:8], label[:8], batch_size=4)
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(train, eval_data=val, num_epoch=epochs, eval_metric="acc",
            initializer=mx.init.Xavier(), **logger.callback_args())


@pytest.mark.skipif(not HAS_PANDAS, reason="PandasLogger needs pandas")
def test_pandas_logger_collects_train_eval_and_epoch_rows():
    logger = callback.PandasLogger(batch_size=4, frequent=2)
    _fit(logger)
    train, evals, epochs = logger.train_df, logger.eval_df, logger.epoch_df
    assert logger.all_dataframes == {"train": train, "eval": evals, "epoch": epochs}
    # 4 batches an epoch, a row every 2nd batch (nbatch 0 and 2), for 2 epochs
    assert len(train) == 4 and list(train["minibatch_count"]) == [0, 2, 0, 2]
    assert list(train["epoch"]) == [0, 0, 1, 1]
    for column in ("accuracy", "batches_per_sec", "records_per_sec", "elapsed"):
        assert column in train.columns
    assert all(0 <= v <= 1 for v in train["accuracy"])
    assert len(evals) == 2 and list(evals["epoch"]) == [0, 1]
    assert len(epochs) == 2 and list(epochs.columns) == ["elapsed", "epoch_time"]


@pytest.mark.skipif(not HAS_PANDAS, reason="PandasLogger needs pandas")
def test_pandas_logger_append_metrics_adds_columns():
    logger = callback.PandasLogger(batch_size=2)
    logger.append_metrics({"a": 1.0}, "train")
    logger.append_metrics({"b": 2.0}, "train")
    df = logger.train_df
    assert list(df.columns) == ["a", "b"]
    assert df["a"].tolist()[0] == 1.0 and df["b"].tolist()[1] == 2.0
    assert df["b"].isna().tolist()[0] and df["a"].isna().tolist()[1]


def test_pandas_logger_without_pandas(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "pandas", None)   # as if it were not installed
    with pytest.raises(ImportError, match="needs the 'pandas' package"):
        callback.PandasLogger(batch_size=4)


def test_live_charts_without_bokeh(monkeypatch):
    import sys
    for name in ("bokeh", "bokeh.io", "bokeh.models", "bokeh.plotting"):
        monkeypatch.setitem(sys.modules, name, None)   # as if it were not installed
    with pytest.raises(ImportError, match="needs the 'bokeh' package"):
        callback.LiveLearningCurve("accuracy")
    with pytest.raises(ImportError, match="needs the 'bokeh' package"):
        callback.LiveTimeSeries()


def test_args_wrapper_merges_callback_args():
    class Recorder:
        def __init__(self, tag):
            self.tag = tag

        def callback_args(self):
            return {"batch_end_callback": self.tag + "-batch",
                    "eval_end_callback": self.tag + "-eval"}

    class EpochOnly:
        def callback_args(self):
            return {"epoch_end_callback": "epoch"}

    merged = callback.args_wrapper(Recorder("a"), Recorder("b"), EpochOnly())
    assert merged == {"batch_end_callback": ["a-batch", "b-batch"],
                      "eval_end_callback": ["a-eval", "b-eval"],
                      "epoch_end_callback": ["epoch"]}
    assert callback.args_wrapper() == {}
    assert mx.notebook.callback is callback

"""mx.callback: MXNet's exact log lines, checkpoint periods, the optional tqdm bar."""
import logging
import sys
import types
from collections import namedtuple

import pytest

import mxtorch as mx
from mxtorch import callback, metric

Param = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def _metric():
    m = metric.Accuracy()
    m.update([mx.nd.array([1, 0])], [mx.nd.array([[0.2, 0.8], [0.3, 0.7]])])
    return m


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(callback.time, "time", lambda: now[0])
    return now


def test_speedometer_auto_reset(caplog, clock):
    speed = callback.Speedometer(batch_size=10, frequent=2)
    m = _metric()
    with caplog.at_level(logging.INFO):
        speed(Param(0, 0, m, None))   # starts the clock
        clock[0] += 0.5
        speed(Param(0, 1, m, None))   # not a multiple of frequent
        clock[0] += 0.5
        speed(Param(0, 2, m, None))
    assert caplog.messages == [
        "Epoch[0] Batch [0-2]\tSpeed: 20.00 samples/sec\taccuracy=0.500000"]
    assert m.num_inst == 0 and m.global_num_inst == 2    # reset_local only


def test_speedometer_no_reset_and_no_metric(caplog, clock):
    speed = callback.Speedometer(batch_size=4, frequent=1, auto_reset=False)
    m = _metric()
    with caplog.at_level(logging.INFO):
        speed(Param(3, 0, m, None))
        clock[0] += 2.0
        speed(Param(3, 1, m, None))
        speed(Param(3, 0, None, None))     # nbatch went back: restart
        clock[0] += 1.0
        speed(Param(3, 1, None, None))
    assert caplog.messages == [
        "Epoch[3] Batch [0-1]\tSpeed: 2.00 samples/sec\taccuracy=0.500000",
        "Iter[3] Batch [1]\tSpeed: 4.00 samples/sec"]
    assert m.num_inst == 2


def test_speedometer_zero_time(caplog, clock):
    speed = callback.Speedometer(batch_size=4, frequent=1)
    with caplog.at_level(logging.INFO):
        speed(Param(0, 0, None, None))
        speed(Param(0, 1, None, None))
    assert caplog.messages == ["Iter[0] Batch [1]\tSpeed: inf samples/sec"]


def test_progress_bar_and_metric_logs(caplog):
    with caplog.at_level(logging.INFO):
        callback.ProgressBar(total=4, length=8)(Param(0, 1, None, None))
        callback.log_train_metric(2, auto_reset=True)(Param(1, 4, _metric(), None))
        callback.log_train_metric(2)(Param(1, 3, _metric(), None))
        callback.LogValidationMetricsCallback()(Param(2, 0, _metric(), None))
        callback.LogValidationMetricsCallback()(Param(2, 0, None, None))
    assert caplog.messages == ["[==------] 25%\r", "Iter[1] Batch[4] Train-accuracy=0.500000",
                               "Epoch[2] Validation-accuracy=0.500000"]


def test_checkpoints(monkeypatch):
    calls = []

    class FakeMod:
        def save_checkpoint(self, prefix, epoch, save_optimizer_states):
            calls.append(("mod", prefix, epoch, save_optimizer_states))

    cb = callback.module_checkpoint(FakeMod(), "pre", period=2, save_optimizer_states=True)
    for i in range(4):
        cb(i)
    fake_model = types.ModuleType("mxtorch.model")
    fake_model.save_checkpoint = lambda *a: calls.append(("model",) + a)
    monkeypatch.setitem(sys.modules, "mxtorch.model", fake_model)
    monkeypatch.setattr(mx, "model", fake_model, raising=False)
    cb = callback.do_checkpoint("p", period=0)    # period is at least 1
    cb(0, "sym", {"a": 1}, {})
    assert callback.save_checkpoint is fake_model.save_checkpoint
    with pytest.raises(AttributeError):
        callback.nothing_here  # noqa: B018 - the lookup is what raises
    assert calls == [("mod", "pre", 2, True), ("mod", "pre", 4, True),
                     ("model", "p", 1, "sym", {"a": 1}, {})]


def test_tqdm_progress_bar(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    with pytest.raises(ImportError, match="needs the 'tqdm' package"):
        callback.TqdmProgressBar(total=3)
    bars = []

    class FakeBar:
        def __init__(self, desc, total):
            self.desc, self.total, self.n, self.closed, self.postfix = desc, total, 0, False, None
            bars.append(self)

        def set_postfix(self, values, refresh=True):
            self.postfix = values

        def refresh(self):
            pass

        def close(self):
            self.closed = True

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeBar))
    pb = callback.TqdmProgressBar(total=3)
    pb(Param(0, 0, _metric(), None))
    pb(Param(0, 1, None, None))
    pb(Param(1, 0, None, None))
    assert [b.desc for b in bars] == ["Epoch[0]", "Epoch[1]"]
    assert bars[0].closed and bars[0].n == 2 and bars[0].postfix == {"accuracy": 0.5}
    pb.close()
    assert bars[1].closed

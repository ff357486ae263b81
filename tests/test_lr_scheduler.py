"""mx.lr_scheduler: values over a range of updates, as recorded from MXNet 1.9.1."""
import logging

import numpy as np
import pytest

import mxtorch.lr_scheduler as L
import mxtorch.optimizer as opt


def _values(sched, n):
    return [sched(i) for i in range(n)]


def test_factor_scheduler():
    s = L.FactorScheduler(step=3, factor=0.5, base_lr=1.0, stop_factor_lr=0.1)
    want = [1.0] * 4 + [0.5] * 3 + [0.25] * 3 + [0.125] * 3 + [0.1]
    np.testing.assert_allclose(_values(s, 14), want)


def test_factor_scheduler_is_stateful():
    # MXNet: base_lr and count change as the scheduler advances; it never goes back.
    s = L.FactorScheduler(step=3, factor=0.5, base_lr=1.0)
    assert s(10) == 0.125 and s.count == 9 and s.base_lr == 0.125
    assert s(2) == 0.125


def test_factor_scheduler_logs(caplog):
    s = L.FactorScheduler(step=1, factor=0.5, base_lr=1.0, stop_factor_lr=0.3)
    with caplog.at_level(logging.INFO):
        s(3)
    assert "Change learning rate to 5.00000e-01" in caplog.text
    assert "will not change in the future" in caplog.text


def test_factor_scheduler_warmup():
    s = L.FactorScheduler(step=2, factor=0.9, base_lr=0.5, warmup_steps=4, warmup_begin_lr=0.1)
    want = [0.1, 0.2, 0.3, 0.4, 0.45, 0.405, 0.405, 0.3645, 0.3645, 0.32805]
    np.testing.assert_allclose(_values(s, 10), want, rtol=1e-9)
    s = L.FactorScheduler(step=2, factor=0.9, base_lr=0.5, warmup_steps=3, warmup_begin_lr=0.1,
                          warmup_mode='constant')
    np.testing.assert_allclose(_values(s, 6), [0.1, 0.1, 0.1, 0.45, 0.45, 0.405], rtol=1e-9)


def test_multifactor_scheduler():
    s = L.MultiFactorScheduler(step=[2, 5, 7], factor=0.5, base_lr=1.0)
    want = [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.125, 0.125]
    np.testing.assert_allclose(_values(s, 10), want)
    assert s.cur_step_ind == 3 and s.count == 7


def test_poly_scheduler():
    s = L.PolyScheduler(max_update=10, base_lr=1.0, pwr=2, final_lr=0.1, warmup_steps=2)
    want = [0.0, 0.5, 1.0, 0.7890625, 0.60625, 0.4515625, 0.325, 0.2265625, 0.15625,
            0.1140625, 0.1, 0.1, 0.1]
    np.testing.assert_allclose(_values(s, 13), want, rtol=1e-9, atol=1e-12)


def test_cosine_scheduler():
    s = L.CosineScheduler(max_update=8, base_lr=1.0, final_lr=0.2, warmup_steps=2,
                          warmup_begin_lr=0.5)
    want = [0.5, 0.75, 1.0, 0.9464101615, 0.8, 0.6, 0.4, 0.2535898385, 0.2, 0.2, 0.2]
    np.testing.assert_allclose(_values(s, 11), want, rtol=1e-9)


def test_scheduler_errors():
    with pytest.raises(ValueError, match="warmup_begin_lr"):
        L.LRScheduler(base_lr=0.1, warmup_begin_lr=0.2)
    with pytest.raises(ValueError, match="positive or 0"):
        L.LRScheduler(warmup_steps=-1)
    with pytest.raises(ValueError, match="linear and constant"):
        L.LRScheduler(warmup_mode='cubic')
    with pytest.raises(ValueError, match="greater or equal than 1"):
        L.FactorScheduler(step=0)
    with pytest.raises(ValueError, match="no more than 1"):
        L.FactorScheduler(step=2, factor=2.0)
    with pytest.raises(ValueError, match="increasing"):
        L.MultiFactorScheduler(step=[3, 2])
    with pytest.raises(ValueError, match="strictly positive"):
        L.PolyScheduler(max_update=0)
    with pytest.raises(AssertionError):
        L.CosineScheduler(max_update=2.5)
    with pytest.raises(NotImplementedError):
        L.LRScheduler()(0)


def test_optimizer_uses_scheduler():
    s = L.MultiFactorScheduler(step=[1, 2], factor=0.1, base_lr=1.0)
    o = opt.SGD(lr_scheduler=s)
    assert o.learning_rate == 1.0
    o._update_count(0)
    o._update_count(0)
    assert o.num_update == 2 and o._get_lr(0) == pytest.approx(0.1)

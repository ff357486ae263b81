"""mx.optimizer and the update operators vs NumPy versions of MXNet 1.9.1's formulas.

The NumPy references below transcribe MXNet's kernels and optimizer code (checked
against real MXNet 1.9.1 while writing them, including its quirks).
"""
import math
import warnings

import numpy as np
import pytest

import mxtorch as mx
import mxtorch.lr_scheduler as lr_scheduler
import mxtorch.optimizer as opt
from mxtorch.base import MXNetError

RS = np.random.RandomState(7)
W0 = [RS.randn(2, 3).astype(np.float32), RS.randn(4).astype(np.float32)]
GRADS = [[RS.randn(*w.shape).astype(np.float32) for w in W0] for _ in range(3)]
LR, WD, RESCALE = 0.1, 0.02, 0.7


def _clip(g, c):
    return np.clip(g, -c, c) if c is not None else g


# ---------------------------------------------------------------------------- references
def _ref_sgd(w, gs, lr, wd, kw, st):
    m = kw.get("momentum", 0.0)
    mom = st.setdefault("mom", np.zeros_like(w))
    for g in gs:
        g = _clip(RESCALE * g, kw.get("clip_gradient"))
        mom[:] = m * mom - lr * wd * w - lr * g
        w = w + mom
    return w


def _ref_nag(w, gs, lr, wd, kw, st):
    m = kw["momentum"]
    mom = np.zeros_like(w)
    for g in gs:
        g0 = _clip(RESCALE * g, kw.get("clip_gradient"))
        gw = g0 + wd * w
        new_mom = m * mom - lr * gw
        w_new = w + m * new_mom - lr * gw
        # MXNet quirk: momentum recomputed from the updated weight (out aliases weight).
        mom = m * mom - lr * (g0 + wd * w_new)
        w = w_new
    return w


def _ref_signum(w, gs, lr, wd, kw, st):
    m, wd_lh = 0.9, kw.get("wd_lh", 0.0)
    mom = np.zeros_like(w)
    for g in gs:
        mom = m * mom - (1 - m) * (wd * w + RESCALE * g)
        w = (1 - lr * wd_lh) * w + lr * np.sign(mom)
    return w


def _ref_adam(w, gs, lr, wd, kw, st):
    b1, b2, eps = 0.9, 0.999, 1e-8
    mean, var = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        g = _clip(RESCALE * g + wd * w, kw.get("clip_gradient"))
        mean = b1 * mean + (1 - b1) * g
        var = b2 * var + (1 - b2) * g * g
        lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w = w - lr_t * mean / (np.sqrt(var) + eps)
    return w


def _ref_adagrad(w, gs, lr, wd, kw, st):
    hist = np.zeros_like(w)
    for g in gs:
        g = _clip(RESCALE * g, kw.get("clip_gradient"))
        hist += g * g
        w = w - lr * (g / np.sqrt(hist + 1e-7) + wd * w)
    return w


def _ref_rmsprop(w, gs, lr, wd, kw, st):
    g1, g2, eps = 0.9, 0.9, 1e-8
    n, gavg, delta = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        g = _clip(RESCALE * g + wd * w, kw.get("clip_gradient"))
        n = g1 * n + (1 - g1) * g * g
        if kw.get("centered"):
            gavg = g1 * gavg + (1 - g1) * g
            delta = g2 * delta - lr * g / np.sqrt(n - gavg * gavg + eps)
            w = w + delta
        else:
            w = w - lr * g / np.sqrt(n + eps)
        if kw.get("clip_weights"):
            w = np.clip(w, -kw["clip_weights"], kw["clip_weights"])
    return w


def _ref_adadelta(w, gs, lr, wd, kw, st):
    rho, eps = 0.9, 1e-5
    acc_g, acc_d = np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        g = RESCALE * g
        acc_g = rho * acc_g + (1 - rho) * g * g
        d = np.sqrt(acc_d + eps) / np.sqrt(acc_g + eps) * g
        acc_d = rho * acc_d + (1 - rho) * d * d
        w = w - (d + wd * w)
    return w


def _ref_ftrl(w, gs, lr, wd, kw, st):
    lamda1, beta = 0.01, 1.0
    z, n = np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        g = RESCALE * g
        z += g - (np.sqrt(n + g * g) - np.sqrt(n)) * w / lr
        n += g * g
        w = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd) * (np.abs(z) > lamda1)
    return w


def _ref_adamax(w, gs, lr, wd, kw, st):
    b1, b2 = 0.9, 0.999
    m, u = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        g = _clip(RESCALE * g + wd * w, kw.get("clip_gradient"))
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g))
        w = w - lr / (1 - b1 ** t) * m / u
    return w


def _ref_nadam(w, gs, lr, wd, kw, st):
    b1, b2, eps, sd = 0.9, 0.999, 1e-8, 0.004
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        g = RESCALE * g + wd * w
        mom_t = b1 * (1 - 0.5 * 0.96 ** (t * sd))
        mom_t1 = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * sd))
        st["sched"] = st.get("sched", 1.0) * mom_t
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_bar = (1 - mom_t) * g / (1 - st["sched"]) + mom_t1 * m / (1 - st["sched"] * mom_t1)
        w = w - lr * m_bar / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return w


def _ref_ftml(w, gs, lr, wd, kw, st):
    b1, b2, eps = 0.6, 0.999, 1e-8
    d, v, z = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        g = _clip(RESCALE * g + wd * w, kw.get("clip_gradient"))
        v = b2 * v + (1 - b2) * g * g
        d_t = (1 - b1 ** t) / lr * (np.sqrt(v / (1 - b2 ** t)) + eps)
        z = b1 * z + (1 - b1) * g - (d_t - b1 * d) * w
        d = d_t
        w = -z / d_t
    return w


def _ref_lamb(w, gs, lr, wd, kw, st):
    b1, b2, eps = 0.9, 0.999, 1e-6
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        g = RESCALE * g
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        d = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + wd * w
        r1 = min(max(np.linalg.norm(w), kw["lower_bound"]), kw["upper_bound"])
        r2 = np.linalg.norm(d)
        w = w - (lr * r1 / r2 if r1 and r2 else lr) * d
    return w


def _ref_dcasgd(w, gs, lr, wd, kw, st):
    prev, lamda = w.copy(), 0.04
    for g in gs:
        g = RESCALE * g
        step = -lr * (g + wd * w + lamda * g * g * (w - prev))
        prev = w.copy()
        w = w + step
    return w


def _ref_test(w, gs, lr, wd, kw, st):
    return w + RESCALE * sum(gs)


def _ref_lars(w, gs, lr, wd, kw, st):
    eta, m = kw["eta"], kw["momentum"]
    mom = np.zeros_like(w)
    for g in gs:
        w_norm, g_norm = np.linalg.norm(w), np.linalg.norm(g) * RESCALE
        lr_l = lr * eta * w_norm / (g_norm + wd * w_norm) if st["lars"] else lr
        mom = m * mom - lr_l * wd * w - lr_l * RESCALE * g
        w = w + mom
    return w


CASES = [
    ("sgd", {"momentum": 0.9, "clip_gradient": 0.5}, _ref_sgd),
    ("sgd", {}, _ref_sgd),
    ("ccsgd", {"momentum": 0.5}, _ref_sgd),
    ("nag", {"momentum": 0.8, "clip_gradient": 0.5}, _ref_nag),
    ("signum", {"wd_lh": 0.01}, _ref_signum),
    ("adam", {"clip_gradient": 0.5}, _ref_adam),
    ("adagrad", {"clip_gradient": 0.5}, _ref_adagrad),
    ("rmsprop", {"clip_weights": 2.0}, _ref_rmsprop),
    ("rmsprop", {"centered": True, "clip_gradient": 0.5}, _ref_rmsprop),
    ("adadelta", {}, _ref_adadelta),
    ("ftrl", {}, _ref_ftrl),
    ("adamax", {"clip_gradient": 0.5}, _ref_adamax),
    ("nadam", {}, _ref_nadam),
    ("ftml", {"clip_gradient": 0.5}, _ref_ftml),
    ("lamb", {"lower_bound": 0.1, "upper_bound": 10.0}, _ref_lamb),
    ("dcasgd", {}, _ref_dcasgd),
    ("test", {}, _ref_test),
]


def _run(name, kw, idx2name=None, dtype=np.float32, steps=GRADS, **extra):
    o = opt.create(name, learning_rate=LR, wd=WD, rescale_grad=RESCALE,
                   param_idx2name=idx2name, **kw, **extra)
    o.set_lr_mult({1: 0.5})
    upd = opt.get_updater(o)
    ws = [mx.nd.array(w, dtype=dtype) for w in W0]
    for gl in steps:
        for i, (w, g) in enumerate(zip(ws, gl)):
            upd(i, mx.nd.array(g, dtype=dtype), w)
    return [w.asnumpy() for w in ws], upd


@pytest.mark.parametrize("name,kw,ref", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_optimizer_matches_formula(name, kw, ref):
    got, _ = _run(name, kw)
    st = {}
    for i, w in enumerate(W0):
        lr = LR * (0.5 if i == 1 else 1.0)
        want = ref(w.astype(np.float64), [g[i].astype(np.float64) for g in GRADS], lr, WD, kw,
                   st if name == "nadam" else {})
        if name == "nadam":  # MXNet: one m_schedule shared by all indices, in call order
            continue
        np.testing.assert_allclose(got[i], want, rtol=2e-5, atol=2e-5, err_msg=name)


def test_nadam_shared_schedule():
    got, _ = _run("nadam", {}, steps=[[g[0], g[1]] for g in GRADS[:1]])
    st = {}
    want0 = _ref_nadam(W0[0].astype(np.float64), [GRADS[0][0]], LR, WD, {}, st)
    np.testing.assert_allclose(got[0], want0, rtol=2e-5, atol=2e-5)
    want1 = _ref_nadam(W0[1].astype(np.float64), [GRADS[0][1]], LR * 0.5, WD, {}, st)
    np.testing.assert_allclose(got[1], want1, rtol=2e-5, atol=2e-5)


def test_lars_and_idx2name_wd_mult():
    names = {0: "fc_weight", 1: "fc_bias"}
    got, _ = _run("lars", {"momentum": 0.9, "eta": 0.01}, idx2name=names)
    want0 = _ref_lars(W0[0].astype(np.float64), [g[0] for g in GRADS], LR, WD,
                      {"eta": 0.01, "momentum": 0.9}, {"lars": True})
    # fc_bias: no LARS scaling, and wd_mult 0 (name does not end with _weight)
    want1 = _ref_lars(W0[1].astype(np.float64), [g[1] for g in GRADS], LR * 0.5, 0.0,
                      {"eta": 0.01, "momentum": 0.9}, {"lars": False})
    np.testing.assert_allclose(got[0], want0, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], want1, rtol=1e-5, atol=1e-5)


def test_group_adagrad():
    o = opt.create("groupadagrad", learning_rate=LR, rescale_grad=RESCALE)
    w = mx.nd.array(W0[0])
    upd = opt.get_updater(o)
    want, hist = W0[0].astype(np.float64), np.zeros((2, 1))
    for gl in GRADS:
        upd(0, mx.nd.array(gl[0]), w)
        g = RESCALE * gl[0]
        hist += np.mean(g * g, axis=1, keepdims=True)
        want = want - LR * g / np.sqrt(hist + 1e-5)
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_sgld_moves_weight():
    mx.random.seed(0)
    got, _ = _run("sgld", {})
    assert np.isfinite(got[0]).all() and not np.allclose(got[0], W0[0])


@pytest.mark.parametrize("name,kw,ref", [("sgd", {"momentum": 0.9}, _ref_sgd),
                                         ("sgd", {}, _ref_sgd),
                                         ("adam", {}, _ref_adam)])
def test_multi_precision_float16(name, kw, ref):
    got, upd = _run(name, kw, dtype=np.float16, multi_precision=True)
    for i, w in enumerate(W0):
        w16 = w.astype(np.float16).astype(np.float64)
        grads = [g[i].astype(np.float16).astype(np.float64) for g in GRADS]
        want = ref(w16, grads, LR * (0.5 if i == 1 else 1.0), WD, kw, {})
        assert got[i].dtype == np.float16
        np.testing.assert_allclose(got[i], want.astype(np.float16), rtol=2e-3, atol=2e-3)
    st = upd.states[0]
    w32 = st[1] if name == "sgd" else st[0]  # SGD: (mom, w32); base class: (w32, state)
    assert w32.dtype == np.float32
    np.testing.assert_allclose(w32.asnumpy().astype(np.float16), got[0])


def test_lr_mult_wd_mult_from_symbol():
    w = mx.sym.Variable("fc_weight", lr_mult=2.0, wd_mult=0.5)
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), weight=w, num_hidden=2, no_bias=True)
    o = opt.SGD(learning_rate=0.1, wd=0.01, sym=net, param_idx2name={0: "fc_weight"})
    assert o._get_lr(0) == pytest.approx(0.2) and o._get_wd(0) == pytest.approx(0.005)
    o.set_lr_mult({"fc_weight": 3.0})
    assert o._get_lr(0) == pytest.approx(0.3)
    o2 = opt.SGD(param_idx2name={0: "a_weight", 1: "a_bias", 2: "bn_gamma"}, wd=1.0)
    assert [o2._get_wd(i) for i in range(3)] == [1.0, 0.0, 1.0]


def test_states_roundtrip_continue_identically():
    full, _ = _run("adam", {}, steps=GRADS)
    _, upd = _run("adam", {}, steps=GRADS[:2])
    blob = upd.get_states(dump_optimizer=True)
    upd2 = opt.get_updater(opt.create("adam"))
    upd2.set_states(blob)
    assert isinstance(upd2.optimizer, opt.Adam) and upd2.optimizer.lr == LR
    assert upd2.optimizer._index_update_count == {0: 2, 1: 2}
    ws = [mx.nd.array(w) for w in _run("adam", {}, steps=GRADS[:2])[0]]
    for i, w in enumerate(ws):
        upd2(i, mx.nd.array(GRADS[2][i]), w)
    for a, b in zip(ws, full):
        np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-6, atol=1e-7)
    # states only (no optimizer): the updater keeps its own optimizer
    upd3 = opt.get_updater(opt.create("sgd", momentum=0.9))
    upd3.set_states(opt.get_updater(opt.create("sgd")).get_states())
    assert upd3.states == {} and isinstance(upd3.optimizer, opt.SGD)


def test_states_pickle_without_param_dict():
    o = opt.SGD(param_dict={0: object()})
    state = o.__getstate__()
    assert "param_dict" not in state
    o2 = opt.SGD.__new__(opt.SGD)
    o2.__setstate__(state)
    assert o2.param_dict == {}


def test_learning_rate_and_scheduler_conflict(capsys):
    sched = lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    o = opt.SGD(learning_rate=0.3, lr_scheduler=sched)
    assert "overwritten" in capsys.readouterr().out and sched.base_lr == 0.3
    with pytest.raises(UserWarning):
        o.set_learning_rate(0.1)
    o.num_update = 5
    assert o.learning_rate == pytest.approx(0.075)
    o2 = opt.SGD()
    assert o2.learning_rate == 0.01
    o2.set_learning_rate(0.5)
    assert o2.learning_rate == 0.5


def test_registry_and_errors():
    assert isinstance(opt.create("ADAM"), opt.Adam)
    assert isinstance(opt.Optimizer.create_optimizer("RmsProp"), opt.RMSProp)
    with pytest.raises(ValueError, match="Cannot find optimizer nope"):
        opt.create("nope")
    with pytest.raises(TypeError):
        opt.create("sgd", no_such_param=1)

    @opt.register
    class MyOpt(opt.Optimizer):
        pass
    assert isinstance(opt.create("myopt"), MyOpt)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        opt.Optimizer.register(MyOpt)
    assert rec and "overriding" in str(rec[0].message)
    del opt.Optimizer.opt_registry["myopt"]
    with pytest.raises(NotImplementedError):
        opt.Optimizer().update(0, mx.nd.zeros(1), mx.nd.zeros(1), None)


def test_aggregated_updater_matches_single():
    o = opt.create("sgd", momentum=0.9, learning_rate=LR, wd=WD, rescale_grad=RESCALE)
    upd = opt.get_updater(o)
    ws = [mx.nd.array(w) for w in W0]
    for gl in GRADS:
        upd([0, 1], [mx.nd.array(g) for g in gl], ws)
    want, _ = _run("sgd", {"momentum": 0.9})
    np.testing.assert_allclose(ws[0].asnumpy(), want[0], rtol=1e-6)
    assert o.num_update == 3


# ---------------------------------------------------------------------------- operators
def test_update_op_semantics_weight_out_and_state_inplace():
    w, g, m = mx.nd.array([1.0, 2.0]), mx.nd.array([0.5, -0.5]), mx.nd.zeros(2)
    r = mx.nd.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9)
    np.testing.assert_allclose(w.asnumpy(), [1.0, 2.0])  # weight unchanged without out
    np.testing.assert_allclose(m.asnumpy(), [-0.05, 0.05])  # state mutated in place
    np.testing.assert_allclose(r.asnumpy(), [0.95, 2.05])
    r = mx.nd.sgd_update(w, g, lr=0.1, wd=0.1, clip_gradient=0.2, out=w)
    assert r is w
    np.testing.assert_allclose(w.asnumpy(), [0.99 - 0.02, 1.98 + 0.02], rtol=1e-6)


def test_small_update_ops():
    w, g = mx.nd.array([1.0, 2.0]), mx.nd.array([0.5, -0.5])
    np.testing.assert_allclose(mx.nd.signsgd_update(w, g, lr=0.1, wd=0.1).asnumpy(),
                               [0.89, 2.08], rtol=1e-6)
    m = mx.nd.zeros(2)
    r = mx.nd.signum_update(w, g, m, lr=0.1, momentum=0.9, wd=0.1, wd_lh=0.2)
    np.testing.assert_allclose(r.asnumpy(), [0.88, 2.06], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [-0.06, 0.03], rtol=1e-5)
    r = mx.nd.lamb_update_phase2(w, g, mx.nd.array([2.0]), mx.nd.array([4.0]), lr=0.1,
                                 lower_bound=3, upper_bound=5)
    np.testing.assert_allclose(r.asnumpy(), [0.9625, 2.0375], rtol=1e-6)
    r = mx.nd.lamb_update_phase2(w, g, mx.nd.array([0.0]), mx.nd.array([4.0]), lr=0.1)
    np.testing.assert_allclose(r.asnumpy(), [0.95, 2.05], rtol=1e-6)
    lrs = mx.nd.multi_lars(mx.nd.array([0.1, 0.2, 0.3]), mx.nd.array([4.0, 0, 4]),
                           mx.nd.array([9.0, 1, 0]), mx.nd.array([0.01, 0.02, 0.1]),
                           eta=0.5, eps=0.1, rescale_grad=2)
    np.testing.assert_allclose(lrs.asnumpy(), [0.1 / 6.12, 0.2, 0.3], rtol=1e-5)
    np.testing.assert_allclose(mx.nd.multi_sum_sq(w, g, num_arrays=2).asnumpy(), [5.0, 0.5])
    assert mx.nd.all_finite(mx.nd.array([1.0, np.inf])).asnumpy().tolist() == [0.0]
    assert mx.nd.multi_all_finite(w, g, num_arrays=2).asnumpy().tolist() == [1.0]


def test_mp_nag_quirk_and_mp_lamb_phase2():
    w16 = mx.nd.array([1.0], dtype="float16")
    m, w32 = mx.nd.array([3.0]), mx.nd.array([1.5])
    r = mx.nd.mp_nag_mom_update(w16, mx.nd.array([2.0], dtype="float16"), m, w32,
                                lr=0.1, momentum=0.5, wd=0.1)
    # MXNet 1.9.1 values: momentum recomputed with the updated weight32
    np.testing.assert_allclose(w32.asnumpy(), [1.9275], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [1.280725], rtol=1e-6)
    assert r.dtype == np.float16
    w32 = mx.nd.array([1.0, 2.0])
    r = mx.nd.mp_lamb_update_phase2(mx.nd.array([1.0, 2.0], dtype="float16"),
                                    mx.nd.array([0.5, 0.5]), mx.nd.array([2.0]),
                                    mx.nd.array([4.0]), w32, lr=0.1)
    np.testing.assert_allclose(r.asnumpy(), [0.975, 1.975], rtol=1e-3)
    np.testing.assert_allclose(w32.asnumpy(), [1.0, 2.0])  # MXNet leaves weight32 alone


def test_multi_sgd_ops_fused():
    ws = [mx.nd.array(w) for w in W0]
    gs = [mx.nd.array(g) for g in GRADS[0]]
    moms = [mx.nd.zeros(w.shape) for w in W0]
    data = [x for tup in zip(ws, gs, moms) for x in tup]
    mx.nd.multi_sgd_mom_update(*data, lrs=(0.1, 0.2), wds=(0.01, 0.0), momentum=0.9,
                               rescale_grad=0.5, clip_gradient=0.3, num_weights=2, out=ws)
    for i, (lr, wd) in enumerate([(0.1, 0.01), (0.2, 0.0)]):
        g = np.clip(0.5 * GRADS[0][i], -0.3, 0.3)
        mom = -lr * wd * W0[i] - lr * g
        np.testing.assert_allclose(moms[i].asnumpy(), mom, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(ws[i].asnumpy(), W0[i] + mom, rtol=1e-5, atol=1e-7)
    w16 = [mx.nd.array(w, dtype="float16") for w in W0]
    w32 = [mx.nd.array(w) for w in W0]
    data = [x for tup in zip(w16, gs, w32) for x in tup]
    mx.nd.preloaded_multi_mp_sgd_update(*data, mx.nd.array([0.1, 0.2]), mx.nd.array([0.0, 0.0]),
                                        num_weights=2, out=w16)
    for i, lr in enumerate([0.1, 0.2]):
        want = W0[i] - lr * GRADS[0][i]
        np.testing.assert_allclose(w32[i].asnumpy(), want, rtol=1e-5, atol=1e-6)
        assert w16[i].dtype == np.float16


def test_update_op_errors():
    w = mx.nd.ones((2,))
    with pytest.raises(MXNetError, match="lr"):
        mx.nd.sgd_update(w, w)
    with pytest.raises(MXNetError, match="sgd_update"):
        mx.nd.sgd_update(w, w, lr=0.1, bogus=1)
    with pytest.raises(MXNetError, match="num_weights"):
        mx.nd.multi_sgd_update(w, w, w, lrs=(0.1,), wds=(0.0,), num_weights=2)
    with pytest.raises(MXNetError, match="same dtype"):
        mx.nd.multi_sum_sq(w, mx.nd.ones((2,), dtype="float16"), num_arrays=2)


def _count_weights(monkeypatch, module, name):
    """Patch ``module.name`` to record how many weights each call gets; returns the list."""
    calls = []
    real = getattr(module, name)

    def counting(weights, *a, **k):
        calls.append(len(weights))
        return real(weights, *a, **k)
    monkeypatch.setattr(module, name, counting)
    return calls


def test_updater_sends_all_sgd_weights_to_one_multi_tensor_update(monkeypatch):
    from mxtorch.optimizer import sgd as sgd_mod
    calls = _count_weights(monkeypatch, sgd_mod, "sgd_foreach_")
    rng = np.random.RandomState(0)
    shapes = [(3, 4), (3,), (5, 3), (5,), (2, 5), (2,)]
    ws = [mx.nd.array(rng.randn(*s)) for s in shapes]
    gs = [mx.nd.array(rng.randn(*s)) for s in shapes]
    ref = [w.copy() for w in ws]
    kw = dict(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5)
    upd = mx.optimizer.get_updater(mx.optimizer.SGD(**kw))
    single = mx.optimizer.get_updater(mx.optimizer.SGD(**kw))
    for _ in range(3):
        upd(list(range(6)), gs, ws)
        for i in range(6):
            single(i, gs[i], ref[i])
    assert calls[:1] == [6]  # MXNet would chunk by aggregate_num=4; results are equal
    for w, r in zip(ws, ref):
        np.testing.assert_allclose(w.asnumpy(), r.asnumpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("momentum,wd", [(0.9, 0.01), (0.9, 0.0), (0.0, 0.01), (0.0, 0.0)])
def test_fused_sgd_step_follows_mxnet_rule(monkeypatch, momentum, wd):
    """The one-pass kernel takes dense float32 CPU weights (a strided gradient through a
    copy); a strided weight and a float64 one take the foreach path; same values."""
    import torch
    from mxtorch.ops import optim as optim_ops
    taken = _count_weights(monkeypatch, optim_ops, "_FUSED_SGD")
    rng = np.random.RandomState(3)
    lr, rescale = 0.05, 0.25
    w_np = [rng.randn(4, 3), rng.randn(3), rng.randn(3, 4), rng.randn(5)]
    g_np = [rng.randn(*w.shape) for w in w_np]
    m_np = [rng.randn(*w.shape) * 0.1 for w in w_np]
    # ws[2] is a strided weight, gs[0] a strided gradient
    ws = [torch.tensor(w_np[0], dtype=torch.float32), torch.tensor(w_np[1], dtype=torch.float32),
          torch.tensor(np.ascontiguousarray(w_np[2].T), dtype=torch.float32).t(),
          torch.tensor(w_np[3], dtype=torch.float64)]
    gs = [torch.tensor(np.ascontiguousarray(g_np[0].T), dtype=torch.float32).t(),
          torch.tensor(g_np[1], dtype=torch.float32), torch.tensor(g_np[2], dtype=torch.float32),
          torch.tensor(g_np[3], dtype=torch.float64)]
    ms = [torch.tensor(m, dtype=w.dtype) for m, w in zip(m_np, ws)]
    versions = [w._version for w in ws]
    for _ in range(2):
        optim_ops._sgd_foreach_uniform(ws, gs, ms if momentum else None, lr, wd, momentum,
                                       rescale)
    assert taken == [2, 2]
    assert all(w._version > v for w, v in zip(ws, versions))
    for i in range(4):
        w, m = w_np[i].copy(), m_np[i].copy()
        for _ in range(2):
            if momentum:
                m = momentum * m - lr * wd * w - lr * rescale * g_np[i]
                w = w + m
            else:
                w = w - lr * (rescale * g_np[i] + wd * w)
        np.testing.assert_allclose(ws[i].numpy(), w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gs[i].numpy(), g_np[i], rtol=1e-6)   # only read
        if momentum:
            np.testing.assert_allclose(ms[i].numpy(), m, rtol=1e-5, atol=1e-6)


def test_static_graph_sees_weights_the_fused_step_wrote():
    """A hybridized static graph freezes its weights; the fused kernel does not count its
    writes, so the update bumps the version counters itself (else stale outputs)."""
    net = mx.gluon.nn.Dense(3, in_units=4)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.array(np.random.RandomState(0).randn(2, 4))
    for _ in range(3):
        net(x)   # the optimized program is built and used
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.5, "momentum": 0.9})
    with mx.autograd.record():
        y = net(x)
    y.backward()
    trainer.step(2)
    w, b = net.weight.data().asnumpy(), net.bias.data().asnumpy()
    np.testing.assert_allclose(net(x).asnumpy(), x.asnumpy() @ w.T + b, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- LBSGD
_LB_GRADS = [[[0.1, 0.2], [-0.3, 0.4]], [[0.5, -0.1], [0.2, 0.0]],
             [[-0.2, 0.3], [0.1, 0.1]], [[0.3, 0.3], [-0.1, 0.2]]]


@pytest.mark.parametrize("kwargs, expected", [
    # weights after each of four updates, from real MXNet 1.9.1
    (dict(momentum=0.9, batch_scale=2, warmup_epochs=1, updates_per_epoch=4, wd=0.01),
     [[[1.0, -2.0], [0.5, 3.0]], [[0.9535, -2.0045], [0.50675, 2.9655]],
      [[0.9535, -2.0045], [0.50675, 2.9655]],
      [[0.89974302, -2.06454086], [0.51181149, 2.8985188]]]),
    (dict(momentum=0.0, batch_scale=2, warmup_strategy='lars', wd=0.01),
     [[[1.0, -2.0], [0.5, 3.0]], [[0.77785438, -2.02149796], [0.53224701, 2.83518243]],
      [[0.77785438, -2.02149796], [0.53224701, 2.83518243]],
      [[0.73575681, -2.22535038], [0.52836901, 2.70523500]]]),
    (dict(momentum=0.5, batch_scale=1, warmup_strategy='sqrt', warmup_epochs=2,
          updates_per_epoch=2),
     [[[0.99, -2.02], [0.53, 2.96]], [[0.935, -2.02], [0.525, 2.94]],
      [[0.9275, -2.05], [0.5125, 2.92]], [[0.89375, -2.095], [0.51625, 2.89]]]),
    (dict(momentum=0.5, batch_scale=3, warmup_strategy='power2', warmup_epochs=2,
          updates_per_epoch=2, begin_epoch=1),
     [[[0.99291658, -2.01416659], [0.52125001, 2.97166657]]] * 3
     + [[[0.92937499, -2.07124996], [0.51187497, 2.92750001]]]),
])
def test_lbsgd_accumulates_batch_scale_gradients_with_warmup(kwargs, expected):
    o = opt.create('lbsgd', learning_rate=0.1, **kwargs)
    w = mx.nd.array([[1., -2.], [0.5, 3.]])
    state = o.create_state_multi_precision(0, w)
    for g, want in zip(_LB_GRADS, expected):
        o.update_multi_precision(0, w, mx.nd.array(g), state)
        np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_lbsgd_multi_precision_keeps_float32_master():
    o = opt.LBSGD(learning_rate=0.1, momentum=0.9, multi_precision=True)
    w = mx.nd.array([[1., -2.], [0.5, 3.]], dtype='float16')
    w32, mom = o.create_state_multi_precision(0, w)
    assert w32.dtype == np.float32 and mom.dtype == np.float32
    o.update_multi_precision(0, w, mx.nd.array(_LB_GRADS[0], dtype='float16'), (w32, mom))
    want = np.array([[1., -2.], [0.5, 3.]]) - 0.1 * np.array(_LB_GRADS[0])
    np.testing.assert_allclose(w32.asnumpy(), want, rtol=1e-4)  # float16 gradient
    assert w.dtype == np.float16
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-3)


def test_optimizer_module_holds_every_optimizer():
    """MXNet's mx.optimizer.optimizer module defines them all (pickles name it)."""
    from mxtorch.optimizer import optimizer as mod
    for name in ['SGD', 'Adam', 'LBSGD', 'ccSGD', 'Test', 'Updater', 'get_updater',
                 'Optimizer', 'create', 'register', 'NDabs']:
        assert getattr(mod, name) is getattr(mx.optimizer, name)
    assert isinstance(mod.create('LBSGD'), mod.LBSGD)
    assert sorted(mx.optimizer.__all__) == sorted(mod.__all__ + ['contrib'])


# ---------------------------------------------------------------------------- AdamW ops
def test_adamw_update_operators_match_mxnet():
    """mx.nd.contrib.(multi_)(mp_)adamw_update, values from real MXNet 1.9.1."""
    g = mx.nd.array([[0.5, -1.], [2., 0.1]])
    w = mx.nd.array([[1., 2.], [3., 4.]])
    m, v = mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2))
    mx.nd.contrib.adamw_update(w, g, m, v, 10.0, lr=0.1, eta=0.5, wd=0.01, clip_gradient=5,
                               out=w)
    np.testing.assert_allclose(w.asnumpy(), [[0.8368851, 2.148115], [2.826885, 3.821885]],
                               rtol=1e-5)
    np.testing.assert_allclose(v.asnumpy(), [[0.025, 0.025], [0.025, 0.001]], rtol=1e-5)
    # MXNet quirk: the single-weight kernel leaves the rescaled, clipped gradient in grad
    np.testing.assert_allclose(g.asnumpy(), [[5., -5.], [5., 1.]], rtol=1e-6)
    # a NaN, Inf or zero rescale_grad skips the update
    w2 = mx.nd.array([[1., 2.], [3., 4.]])
    for bad in (np.nan, np.inf, 0.0):
        mx.nd.contrib.adamw_update(w2, g, m, v, mx.nd.array([bad]), lr=0.1, eta=0.5, out=w2)
    np.testing.assert_array_equal(w2.asnumpy(), [[1., 2.], [3., 4.]])
    ws = [mx.nd.array([[1., 2.], [3., 4.]]), mx.nd.array([5., 6.])]
    gs = [g, mx.nd.array([1., -1.])]
    ms = [mx.nd.zeros((2, 2)), mx.nd.zeros(2)]
    vs = [mx.nd.zeros((2, 2)), mx.nd.zeros(2)]
    mx.nd.contrib.multi_adamw_update(ws, gs, ms, vs, 10.0, lrs=[0.1, 0.2], wds=[0.01, 0.0],
                                     etas=[0.5, 1.0], clip_gradient=5, out=ws)
    np.testing.assert_allclose(ws[0].asnumpy(), [[0.8368849, 2.1481152], [2.826885, 3.8218849]],
                               rtol=1e-5)
    np.testing.assert_allclose(ws[1].asnumpy(), [4.36754, 6.63246], rtol=1e-5)
    w16 = [x.astype('float16') for x in ws]
    w32 = [x.copy() for x in ws]
    mx.nd.contrib.multi_mp_adamw_update(w16, [x.astype('float16') for x in gs], ms, vs, w32, 1.0,
                                        lrs=[0.1, 0.2], wds=[0.01, 0.0], etas=[0.5, 1.0],
                                        out=w16)
    assert w16[0].dtype == np.float16
    np.testing.assert_allclose(w16[0].asnumpy(), [[0.62, 2.35], [2.6, 3.633]], rtol=1e-3)
    np.testing.assert_allclose(w16[1].asnumpy(), [3.686, 7.316], rtol=1e-3)


# ------------------------------------------------------ update operators vs real MXNet 1.9.1
_W = [[1.0, -2.0, 0.5], [0.25, 3.0, -1.5]]
_G = [[0.5, 4.0, -3.0], [1.0, -0.2, 2.5]]
_KW = dict(lr=0.1, wd=0.05, rescale_grad=0.5, clip_gradient=1.0)


def _nd(x, dtype="float32"):
    return mx.nd.array(x, dtype=dtype)


def _full(v):
    return mx.nd.full((2, 3), v)


def _close(got, want, tol=2e-5):
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want, rtol=tol, atol=tol)


def test_adam_and_rmsprop_update_ops_match_mxnet():
    """adam_update, rmsprop_update, rmspropalex_update: values from real MXNet 1.9.1
    (wd folded into the clipped gradient, clip_weights bounding the result)."""
    w, m, v = _nd(_W), _full(0.1), _full(0.2)
    r = mx.nd.adam_update(w, _nd(_G), m, v, beta1=0.8, beta2=0.9, epsilon=1e-3, **_KW)
    _close(r, [[0.967871, -2.052815, 0.522635], [0.209905, 2.978851, -1.552815]])
    _close(m, [[0.14, 0.28, -0.12], [0.1825, 0.09, 0.28]])
    _close(v, [[0.189, 0.28, 0.28], [0.206266, 0.18025, 0.28]])
    _close(w, _W)   # the weight changes only through out=
    # lazy_update only matters for row_sparse gradients: a dense one updates every row
    m2, v2 = _full(0.1), _full(0.2)
    r2 = mx.nd.adam_update(w, _nd(_G), m2, v2, beta1=0.8, beta2=0.9, epsilon=1e-3,
                           lazy_update=False, **_KW)
    _close(r2, r.asnumpy())
    n = _full(0.2)
    r = mx.nd.rmsprop_update(_nd(_W), _nd(_G), n, gamma1=0.8, epsilon=1e-3, clip_weights=1.2,
                             **_KW)
    _close(r, [[0.929092, -1.2, 0.666436], [0.139092, 1.2, -1.2]])
    _close(n, [[0.178, 0.36, 0.36], [0.212531, 0.1605, 0.36]])
    n, g, d = _full(0.2), _full(0.1), _full(0.3)
    r = mx.nd.rmspropalex_update(_nd(_W), _nd(_G), n, g, d, gamma1=0.8, gamma2=0.7,
                                 epsilon=1e-3, clip_weights=2.0, **_KW)
    _close(r, [[1.134859, -1.978111, 0.879858], [0.339278, 2.0, -1.478111]])
    _close(g, [[0.14, 0.28, -0.12], [0.1825, 0.09, 0.28]])
    _close(d, [[0.134859, 0.021889, 0.379858], [0.089278, 0.197234, 0.021889]])
    with pytest.raises(MXNetError, match="adam_update"):
        mx.nd.adam_update(w, w, m, mx.nd.ones((3,)), lr=0.1)


def test_ftrl_ftml_nag_update_ops_match_mxnet():
    """ftrl_update, ftml_update (bounded betas), nag_mom_update: real MXNet 1.9.1 values."""
    z, n = _nd([[0.1, -0.3, 0.0]] * 2), _full(0.2)
    r = mx.nd.ftrl_update(_nd(_W), _nd(_G), z, n, lamda1=0.2, beta=0.5, **_KW)
    _close(r, [[0.009961, -0.841305, 0.252502], [0.0, 0.055159, -0.657534]])
    _close(z, [[-0.301339, 13.664631, -4.241158], [0.040983, -0.73132, 10.723474]])
    _close(n, [[0.2625, 1.2, 1.2], [0.45, 0.21, 1.2]])
    d, v, z = _full(0.1), _full(0.2), _full(0.3)
    r = mx.nd.ftml_update(_nd(_W), _nd(_G), d, v, z, lr=0.1, beta1=0.6, beta2=0.9,
                          epsilon=1e-3, t=2, wd=0.05, rescale_grad=0.5, clip_grad=1.0)
    _close(r, [[0.943658, -2.059159, 0.524435], [0.190072, 2.939103, -1.563017]])
    _close(d, [[6.389534, 7.775704, 7.775704], [6.674722, 6.240026, 7.775704]])
    _close(z, [[-6.029534, 16.01141, -4.077852], [-1.26868, -18.340076, 12.153557]])
    for bad in (dict(beta1=1.5), dict(beta2=-0.1)):
        with pytest.raises(MXNetError, match="beta"):
            mx.nd.ftml_update(d, d, d, d, d, lr=0.1, t=1, **bad)
    m = _full(0.1)
    r = mx.nd.nag_mom_update(_nd(_W), _nd(_G), m, momentum=0.9, **_KW)
    _close(r, [[1.024, -2.09, 0.76625], [0.233625, 3.0715, -1.59475]])
    _close(m, [[0.06, 0.0, 0.1875], [0.03875, 0.085, -0.0025]])


def test_group_adagrad_update_op():
    """_contrib_group_adagrad_update (MXNet 1.9.1 has only a row_sparse CPU kernel): one
    history entry per row, the mean of the row's squared rescaled, clipped gradient."""
    h = mx.nd.array([0.5, 1.0])
    r = mx.nd.contrib.group_adagrad_update(_nd(_W), _nd(_G), h, lr=0.1, rescale_grad=0.5,
                                           clip_gradient=1.0, epsilon=1e-3)
    g = np.clip(0.5 * np.array(_G), -1.0, 1.0)
    hist = np.array([0.5, 1.0]) + (g * g).mean(axis=1)
    _close(h, hist)
    _close(r, np.array(_W) - 0.1 * g / np.sqrt(hist + 1e-3)[:, None])


def test_lamb_phase1_update_ops_match_mxnet():
    """lamb_update_phase1 (with and without bias correction) and mp_lamb_update_phase1
    (float16 weight, float32 direction; weight32 untouched): real MXNet 1.9.1 values."""
    kw = dict(beta1=0.8, beta2=0.9, epsilon=1e-3, t=3, wd=0.05, rescale_grad=0.5,
              clip_gradient=1.0)
    m, v = _full(0.1), _full(0.2)
    r = mx.nd.lamb_update_phase1(_nd(_W), _nd(_G), m, v, **kw)
    _close(r, [[0.370949, 0.463919, -0.21668], [0.436105, 0.300261, 0.488919]])
    _close(m, [[0.13, 0.28, -0.12], [0.18, 0.06, 0.28]])
    _close(v, [[0.18625, 0.28, 0.28], [0.205, 0.181, 0.28]])
    r = mx.nd.lamb_update_phase1(_nd(_W), _nd(_G), _full(0.1), _full(0.2),
                                 bias_correction=False, **kw)
    _close(r, [[0.350532, 0.428152, -0.201351], [0.409177, 0.290699, 0.453152]])
    m, v, w32 = _full(0.1), _full(0.2), _nd(_W)
    r = mx.nd.mp_lamb_update_phase1(_nd(_W, "float16"), _nd(_G, "float16"), m, v, w32, **kw)
    assert r.dtype == np.float32
    _close(r, [[0.370949, 0.463919, -0.21668], [0.436105, 0.300273, 0.488919]])
    _close(w32, _W)


def test_mp_sgd_update_ops_match_mxnet():
    """mp_sgd_update, mp_sgd_mom_update: the float32 master copy steps, the float16 weight
    is its rounding (real MXNet 1.9.1 values)."""
    w32 = _nd(_W)
    r = mx.nd.mp_sgd_update(_nd(_W, "float16"), _nd(_G, "float16"), w32, **_KW)
    assert r.dtype == np.float16
    _close(w32, [[0.97, -2.09, 0.5975], [0.19875, 2.994998, -1.5925]])
    _close(r, [[0.970215, -2.089844, 0.597656], [0.19873, 2.994141, -1.592773]], 1e-3)
    m, w32 = _full(0.1), _nd(_W)
    r = mx.nd.mp_sgd_mom_update(_nd(_W, "float16"), _nd(_G, "float16"), m, w32, momentum=0.9,
                                **_KW)
    _close(m, [[0.06, 0.0, 0.1875], [0.03875, 0.084998, -0.0025]])
    _close(w32, [[1.06, -2.0, 0.6875], [0.28875, 3.084998, -1.5025]])
    _close(r, [[1.05957, -2.0, 0.6875], [0.288818, 3.085938, -1.50293]], 1e-3)


def _per_weight(*cols):
    """[w0, g0, ..., w1, g1, ...]: the operators' interleaved inputs."""
    return [x for tup in zip(*cols) for x in tup]


def test_multi_and_preloaded_sgd_update_ops_match_mxnet():
    """multi_mp_sgd(_mom)_update and preloaded_multi_(mp_)sgd(_mom)_update: per-weight
    lrs/wds (attributes, or the last two arrays), real MXNet 1.9.1 values."""
    w16 = [_nd(_W[0], "float16"), _nd(_W[1], "float16")]
    g16 = [_nd(_G[0], "float16"), _nd(_G[1], "float16")]
    g32 = [_nd(_G[0]), _nd(_G[1])]
    common = dict(rescale_grad=0.5, clip_gradient=1.0, num_weights=2)
    mom_w32 = [[1.06, -2.0, 0.6875], [0.06, 2.929995, -1.79]]
    moms_after = [[0.06, 0.0, 0.1875], [-0.19, -0.070005, -0.29]]
    w32, outs = [_nd(_W[0]), _nd(_W[1])], [_nd(_W[0], "float16"), _nd(_W[1], "float16")]
    mx.nd.multi_mp_sgd_update(*_per_weight(w16, g16, w32), lrs=(0.1, 0.2), wds=(0.05, 0.0),
                              out=outs, **common)
    assert outs[0].dtype == np.float16
    _close(w32[0], [0.97, -2.09, 0.5975])
    _close(w32[1], [0.15, 3.019995, -1.7])
    _close(outs[1], [0.150024, 3.019531, -1.700195], 1e-3)
    for op, extra in ((mx.nd.multi_mp_sgd_mom_update, dict(lrs=(0.1, 0.2), wds=(0.05, 0.0))),
                      (mx.nd.preloaded_multi_mp_sgd_mom_update, {})):
        moms, w32 = [_nd([0.1] * 3), _nd([-0.1] * 3)], [_nd(_W[0]), _nd(_W[1])]
        outs = [_nd(_W[0], "float16"), _nd(_W[1], "float16")]
        arrays = [_nd([0.1, 0.2]), _nd([0.05, 0.0])] if not extra else []
        op(*_per_weight(w16, g16, moms, w32), *arrays, momentum=0.9, out=outs, **extra,
           **common)
        for i in range(2):
            _close(w32[i], mom_w32[i])
            _close(moms[i], moms_after[i])
            _close(outs[i], mom_w32[i], 1e-3)
    outs = [_nd(_W[0]), _nd(_W[1])]
    mx.nd.preloaded_multi_sgd_update(*_per_weight([_nd(w) for w in _W], g32), _nd([0.1, 0.2]),
                                     _nd([0.05, 0.0]), out=outs, **common)
    _close(outs[0], [0.97, -2.09, 0.5975])
    _close(outs[1], [0.15, 3.02, -1.7])
    moms, outs = [_nd([0.1] * 3), _nd([-0.1] * 3)], [_nd(_W[0]), _nd(_W[1])]
    mx.nd.preloaded_multi_sgd_mom_update(*_per_weight([_nd(w) for w in _W], g32, moms),
                                         _nd([0.1, 0.2]), _nd([0.05, 0.0]), momentum=0.9,
                                         out=outs, **common)
    _close(outs[1], [0.06, 2.93, -1.79])
    _close(moms[0], moms_after[0])
    with pytest.raises(MXNetError, match="expected 4 inputs"):
        mx.nd.preloaded_multi_sgd_update(w32[0], g32[0], _nd([0.1]), num_weights=1)


def test_adamw_internal_update_ops_match_mxnet():
    """_adamw_update, _mp_adamw_update, _multi_adamw_update, _multi_mp_adamw_update called
    by their operator names (rescale_grad an array; eta scales the whole step)."""
    internal = mx.nd._internal
    kw = dict(beta1=0.8, beta2=0.9, epsilon=1e-3, clip_gradient=1.0)
    m, v, g = _full(0.1), _full(0.2), _nd(_G)
    r = internal._adamw_update(_nd(_W), g, m, v, _nd([0.5]), lr=0.1, eta=0.5, wd=0.05, **kw)
    _close(r, [[0.959973, -1.976408, 0.498818], [0.223916, 2.917965, -1.488908]])
    _close(v, [[0.18625, 0.28, 0.28], [0.205, 0.181, 0.28]])
    _close(g, [[0.25, 1.0, -1.0], [0.5, -0.1, 1.0]])   # MXNet: grad rescaled in place
    m, v, w32 = _full(0.1), _full(0.2), _nd(_W)
    r = internal._mp_adamw_update(_nd(_W, "float16"), _nd(_G, "float16"), m, v, w32,
                                  _nd([0.5]), lr=0.1, eta=0.5, wd=0.05, **kw)
    assert r.dtype == np.float16
    _close(w32, [[0.959973, -1.976408, 0.498818], [0.223916, 2.917964, -1.488908]])
    _close(m, [[0.13, 0.28, -0.12], [0.18, 0.060005, 0.28]])
    ws, gs = [_nd(_W[0]), _nd(_W[1])], [_nd(_G[0]), _nd(_G[1])]
    multi = dict(lrs=(0.1, 0.2), wds=(0.05, 0.0), etas=(0.5, 1.0), num_weights=2,
                 clip_gradient=1.0)   # default betas and epsilon
    want = [[0.962138, -1.9712, 0.488616], [-0.382459, 3.632466, -2.13246]]
    ms, vs = [_nd([0.1] * 3), _nd([0.0] * 3)], [_nd([0.2] * 3), _nd([0.0] * 3)]
    outs = [_nd(_W[0]), _nd(_W[1])]
    internal._multi_adamw_update(*_per_weight(ws, gs, ms, vs), _nd([0.5]), out=outs, **multi)
    _close(outs[0], want[0])
    _close(outs[1], want[1], 1e-4)
    _close(vs[1], [0.00025, 1e-05, 0.001])
    ms, vs = [_nd([0.1] * 3), _nd([0.0] * 3)], [_nd([0.2] * 3), _nd([0.0] * 3)]
    w32, outs = [_nd(_W[0]), _nd(_W[1])], [_nd(_W[0], "float16"), _nd(_W[1], "float16")]
    internal._multi_mp_adamw_update(*_per_weight([_nd(w, "float16") for w in _W],
                                                 [_nd(x, "float16") for x in _G], ms, vs, w32),
                                    _nd([0.5]), out=outs, **multi)
    assert outs[0].dtype == np.float16
    _close(w32[1], want[1], 1e-4)
    _close(outs[0], [0.961914, -1.97168, 0.488525], 1e-3)

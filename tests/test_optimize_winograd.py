"""Winograd F(4x4, 3x3) / F(2x2, 3x3) convolution kernels and their use in networks."""
import os

import numpy as np
import pytest
import torch

from mxtorch.graph.backends.cpu_tuned import winograd
from mxtorch.graph.backends.cpu_tuned import gemm
from optimize_helpers import (RTOL, ATOL, _x, needs_onednn, _plain_and_compiled,
                               _run_optimized, _conv_ref, _wide_net,
                               _kernel_names)


def _transforms(kind):
    if kind == "native" and winograd.native_transforms() is None:
        pytest.skip("no C compiler: the native Winograd transforms are not built")
    return kind


def _native_path(monkeypatch, path):
    """The native kernels' channel mixes: ``blocked`` (C with MKL's sgemm, block by
    block) or ``bmm`` (one torch.bmm between the two transforms)."""
    _transforms("native")
    if path == "bmm":
        monkeypatch.setattr(winograd, "_BLOCKED_CHANNELS", 0)
    elif gemm.mkl_entry_points() is None:
        pytest.skip("torch without MKL's sgemm: no blocked Winograd kernel")


@pytest.mark.parametrize("tiles", ["F4", "F2"])
@pytest.mark.parametrize("transforms", ["blocked", "bmm", "torch"])
@pytest.mark.parametrize("shape, k, bias, add, relu", [
    ((2, 32, 8, 8), 40, True, False, False),      # whole tiles
    ((1, 33, 7, 9), 32, False, True, True),       # cropped tiles, no bias, sum + relu
    ((3, 64, 5, 4), 48, True, True, False),
    ((1, 100, 6, 10), 70, True, False, True),     # channels beyond one 64-lane block
    ((2, 32, 13, 12), 32, False, False, False)])
def test_winograd_kernel_equals_convolution(shape, k, bias, add, relu, transforms, tiles,
                                            monkeypatch):
    rng = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=rng).contiguous(memory_format=torch.channels_last)
    w = torch.randn(k, shape[1], 3, 3, generator=rng) * 0.1
    b = torch.randn(k, generator=rng) if bias else None
    other = torch.randn(shape[0], k, *shape[2:], generator=rng) if add else None
    assert winograd.applicable(w, (1, 1), (1, 1), (1, 1), 1)
    if transforms != "torch":
        _native_path(monkeypatch, transforms)
    fn = winograd.winograd_conv(w, b, shape, relu, winograd.Workspace(),
                                transforms="torch" if transforms == "torch" else "native",
                                tiles=getattr(winograd, tiles))
    out = fn(x, other) if add else fn(x)
    ref = _conv_ref(x, w, b, other, relu)
    assert out.shape == ref.shape and out.dtype == torch.float32
    assert out.is_contiguous(memory_format=torch.channels_last)
    scale = float(ref.abs().max())
    assert float((out.double() - ref).abs().max()) < 1e-5 * scale
    # the result is fresh: a second call (other input) leaves it as it was
    first = out.clone()
    fn(x * 2, other) if add else fn(x * 2)
    assert torch.equal(out, first)


def test_winograd_native_takes_any_input_layout_and_checks_shapes():
    _transforms("native")
    rng = torch.Generator().manual_seed(1)
    w = torch.randn(32, 32, 3, 3, generator=rng) * 0.1
    x = torch.randn(2, 32, 9, 9, generator=rng)          # NCHW, not channels-last
    other = torch.randn(2, 32, 9, 9, generator=rng)
    fn = winograd.winograd_conv(w, None, x.shape, False, winograd.Workspace(), "native")
    ref = _conv_ref(x, w, None, other, False)
    assert float((fn(x, other).double() - ref).abs().max()) < 1e-5 * float(ref.abs().max())
    with pytest.raises(ValueError, match=r"shape \(2, 32, 9, 9\), got torch.float32 "
                                         r"\(1, 32, 9, 9\)"):
        fn(x[:1])
    with pytest.raises(ValueError, match="summed input"):
        fn(x, other[:, :16])
    with pytest.raises(ValueError, match="transforms='fast'"):
        winograd.winograd_conv(w, None, x.shape, False, winograd.Workspace(), "fast")
    with pytest.raises(ValueError, match="tiles must be F4 or F2"):
        winograd.winograd_conv(w, None, x.shape, False, winograd.Workspace(),
                               tiles=winograd.F4._replace(m=6, a=8))


def test_winograd_tile_matrices_are_the_algorithms():
    """Each algorithm's transforms give the exact 1-D correlation of a 3-tap filter over
    its input tile (in float64): A^T ((G g) * (B^T d)) == correlate(d, g)."""
    rng = np.random.RandomState(0)
    for tiles in (winograd.F4, winograd.F2):
        assert tiles.bt.shape == (tiles.a, tiles.a) and tiles.at.shape == (tiles.m, tiles.a)
        d, g = rng.randn(tiles.a), rng.randn(3)
        got = tiles.at.numpy() @ ((tiles.g.numpy() @ g) * (tiles.bt.numpy() @ d))
        np.testing.assert_allclose(got, np.correlate(d, g, "valid"), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("path", ["blocked", "bmm"])
@pytest.mark.parametrize("tiles", ["F4", "F2"])
def test_winograd_split_between_threads_equals_one_thread(monkeypatch, tiles, path):
    _native_path(monkeypatch, path)
    rng = torch.Generator().manual_seed(2)
    shape = (8, 64, 32, 32)                               # 36 * 512 * 64 floats: split
    x = torch.randn(shape, generator=rng).contiguous(memory_format=torch.channels_last)
    other = torch.randn(shape, generator=rng).contiguous(memory_format=torch.channels_last)
    w = torch.randn(64, 64, 3, 3, generator=rng) * 0.1
    outs = []
    for threads in (1, 2, 3):
        monkeypatch.setattr(torch, "get_num_threads", lambda t=threads: t)
        fn = winograd.winograd_conv(w, None, shape, True, winograd.Workspace(), "native",
                                    getattr(winograd, tiles))
        outs.append(fn(x, other))
    assert torch.equal(outs[0], outs[1]) and torch.equal(outs[0], outs[2])
    ref = _conv_ref(x, w, None, other, True)
    assert float((outs[0].double() - ref).abs().max()) < 1e-5 * float(ref.abs().max())


def test_splitter_hands_errors_back_and_survives_a_fork():
    splitter = winograd._Splitter()
    seen = []

    def part(tag, *rest):
        *buf, lo, hi = rest
        if lo > 0 and tag == "bad":
            raise OSError("part failed")
        seen.append((lo, hi) + tuple(buf))
    splitter.run(part, ("ok",), 10, 3)
    assert sorted(seen) == [(0, 3), (3, 6), (6, 10)]
    with pytest.raises(OSError, match="part failed"):
        splitter.run(part, ("bad",), 10, 2)
    seen.clear()
    splitter.run(part, ("ok",), 10, 3, each=(("x",), ("y",)))   # two parts: two buffers
    assert sorted(seen) == [(0, 5, "x"), (5, 10, "y")]
    splitter._pid = -1                       # as in a forked child: new helper threads
    seen.clear()
    splitter.run(part, ("ok",), 4, 2)
    assert sorted(seen) == [(0, 2), (2, 4)] and splitter._pid == os.getpid()



@pytest.mark.parametrize("kw", [dict(stride=(2, 2)), dict(dilate=(2, 2), pad=(2, 2)),
                                dict(groups=2), dict(c=16), dict(kernel=(1, 1), pad=(0, 0)),
                                dict(dtype=torch.float64)])
def test_winograd_not_applicable(kw):
    c, kernel = kw.get("c", 32), kw.get("kernel", (3, 3))
    w = torch.zeros(32, c, *kernel, dtype=kw.get("dtype", torch.float32))
    assert not winograd.applicable(w, kw.get("pad", (1, 1)), kw.get("stride", (1, 1)),
                                   kw.get("dilate", (1, 1)), kw.get("groups", 1))



@needs_onednn
def test_winograd_in_network_equals_plain_after_shape_change(monkeypatch):
    monkeypatch.setenv("MXTORCH_WINOGRAD", "1")
    net = _wide_net()
    cases = [(2, 8), (1, 11), (2, 8)]   # 11: tiles cropped
    refs = [net(_x(b, s)).asnumpy() for b, s in cases]
    net.hybridize(static_alloc=True, static_shape=True)
    for (batch, size), ref in zip(cases, refs):
        for _ in range(3):
            np.testing.assert_allclose(net(_x(batch, size)).asnumpy(), ref,
                                       rtol=RTOL, atol=ATOL)
    opt = net._cached_op._optimizer
    assert len(opt._cache) == 2
    for entry in opt._cache.values():
        assert entry.compiles == 1
        # the stem (3 input channels) stays oneDNN; both 32-channel groups are Winograd
        assert len(_kernel_names(entry, "_onednn")) == 1
        assert len(_kernel_names(entry, "_winograd")) == 2


@needs_onednn
@pytest.mark.parametrize("env, timings, f4, f2", [
    ("0", None, 0, 0),
    ("auto", [1.0, 0.5, 0.6], 2, 0),     # F2 more than 10% slower than F4
    ("auto", [1.0, 0.5, 0.54], 0, 2),    # F2 within 10% of F4: its smaller weights win
    ("auto", [1.0, 0.95, 0.8], 0, 2),
    ("auto", [1.0, 0.95, 0.95], 0, 0),   # neither 10% faster than oneDNN
    ("1", None, 2, 0)])                  # always F4, untimed
def test_winograd_choice(monkeypatch, env, timings, f4, f2):
    """auto times oneDNN, F4 and (few tiles here) F2, and keeps Winograd only where it is
    at least 10% faster; 0 never tries it."""
    monkeypatch.setenv("MXTORCH_WINOGRAD", env)
    calls = []

    def timed(kernels, args, rounds=3):
        calls.append((len(kernels), args[0].shape))
        return timings
    monkeypatch.setattr(winograd, "timings", timed)
    net = _wide_net()
    x = _x(2, 8)
    ref = net(x).asnumpy()
    outs, entry = _run_optimized(net, x)
    for o in outs:
        np.testing.assert_allclose(o, ref, rtol=RTOL, atol=ATOL)
    assert len(_kernel_names(entry, "_winograd")) == f4
    assert len(_kernel_names(entry, "_winograd2x2")) == f2
    assert calls == ([(3, (2, 32, 8, 8))] * 2 if env == "auto" else [])


def test_winograd_f2_is_tried_only_with_few_tiles():
    assert winograd.few_tiles((1, 256, 14, 14))       # 16 tiles of 4x4
    assert winograd.few_tiles((2, 32, 8, 8))
    assert not winograd.few_tiles((1, 64, 56, 56))    # 196
    assert not winograd.few_tiles((16, 512, 7, 7))    # 64


def test_winograd_timings_are_interleaved_best_of_rounds():
    seen = []

    def kernel(tag):
        def fn(x):
            seen.append(tag)
        return fn
    times = winograd.timings([kernel("a"), kernel("b"), kernel("c")], (None,), rounds=2)
    assert seen == ["a", "b", "c"] + ["a", "b", "c"] * 2   # warm-up, then interleaved
    assert len(times) == 3 and all(0 <= t < 1 for t in times)



@needs_onednn
def test_winograd_bad_setting_runs_plain_with_warning(monkeypatch):
    monkeypatch.setenv("MXTORCH_WINOGRAD", "sometimes")
    with pytest.raises(ValueError, match="MXTORCH_WINOGRAD='sometimes'"):
        winograd.mode()
    net = _wide_net()
    x = _x(2, 8)
    ref, out = _plain_and_compiled(net, x, "MXTORCH_WINOGRAD")
    np.testing.assert_allclose(out, ref, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=RTOL, atol=ATOL)

"""Checkpoints of several files are atomic as a set; killed writers leave nothing behind.

The kill test forks a writer that saves checkpoints k = 1, 2, 3, ... in a loop, SIGKILLs
it at a random moment and checks that a reader loads exactly the last finished save or
the one in flight, every file of it from the same k (values, architecture and optimizer
states tell which k each file came from).
"""
import errno
import json
import os
import random
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from mxtorch.format import fileset

# --------------------------------------------------------------------------- fixtures


def _sym(k):
    """Architecture k%2: its layer name and width say which parity saved it."""
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3 + k % 2, name="fc%d" % (k % 2))
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def _module(k):
    mod = mx.mod.Module(_sym(k), data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=[("data", (2, 4))], label_shapes=[("softmax_label", (2,))])
    mod.init_params()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    return mod


def _fill_module(mod, k):
    """Every parameter and the momentum state of ``mod`` hold the value k."""
    args, auxs = mod.get_params()
    mod.set_params({n: mx.nd.full(v.shape, k) for n, v in args.items()}, auxs)
    name = "fc%d_weight" % (k % 2)
    mod._updater.states = {0: mx.nd.full(args[name].shape, k)}
    mod._updater.states_synced = {0: True}


def _check_module(prefix, epoch=1):
    """The k of the checkpoint ``prefix``; asserts that every part says the same k."""
    mod = mx.mod.Module.load(prefix, epoch, load_optimizer_states=True, data_names=["data"])
    layer = [n for n in mod.symbol.list_arguments() if n.startswith("fc")][0][:3]
    values = {float(v.asnumpy().ravel()[0]) for v in mod._arg_params.values()}
    assert len(values) == 1, values
    k = int(values.pop())
    assert layer == "fc%d" % (k % 2), (layer, k)
    assert all(n.startswith(layer) for n in mod._arg_params)
    assert mod._arg_params[layer + "_weight"].shape == (3 + k % 2, 4)
    mod.bind(data_shapes=[("data", (2, 4))], label_shapes=[("softmax_label", (2,))])
    mod.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    state = mod._updater.states[0].asnumpy()
    assert state.shape == (3 + k % 2, 4) and (state == k).all(), (state, k)
    return k


def _files(d):
    return sorted(os.listdir(d))


def _temps(d):
    return [n for n in os.listdir(d) if ".tmp-" in n]


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


class _DiskFull:
    """``open`` for ``format.fileset`` whose ``n``-th file opened for writing fails ENOSPC."""

    def __init__(self, n):
        self.n = n
        self.seen = 0

    def __call__(self, path, mode="r", *args, **kwargs):
        if "w" in mode:
            self.seen += 1
            if self.seen == self.n:
                raise OSError(errno.ENOSPC, "No space left on device", path)
        return open(path, mode, *args, **kwargs)


# --------------------------------------------------------------------------- full disk


@pytest.mark.parametrize("fail_at", [1, 2, 3, 4])
def test_module_checkpoint_on_full_disk_keeps_old_set(tmp_path, monkeypatch, fail_at):
    """Writes 1-3 are the three members, 4 the manifest (the commit): each failing
    leaves the epoch-1 set of k=2 whole and no temporary behind."""
    prefix = str(tmp_path / "m")
    old = _module(2)
    _fill_module(old, 2)
    old.save_checkpoint(prefix, 1, save_optimizer_states=True)
    before = {n: (tmp_path / n).read_bytes() for n in _files(tmp_path)}
    new = _module(3)
    _fill_module(new, 3)
    monkeypatch.setattr(fileset, "open", _DiskFull(fail_at), raising=False)
    with pytest.raises(OSError) as err:
        new.save_checkpoint(prefix, 1, save_optimizer_states=True)
    assert err.value.errno == errno.ENOSPC
    monkeypatch.undo()
    assert {n: (tmp_path / n).read_bytes() for n in _files(tmp_path)} == before
    assert _check_module(prefix) == 2


def test_model_checkpoint_on_full_disk_leaves_no_symbol_without_params(tmp_path, monkeypatch):
    prefix = str(tmp_path / "net")
    monkeypatch.setattr(fileset, "open", _DiskFull(2), raising=False)
    with pytest.raises(OSError):
        mx.model.save_checkpoint(prefix, 3, _sym(0), {"fc0_weight": mx.nd.ones((3, 4))}, {})
    monkeypatch.undo()
    assert _files(tmp_path) == []


# --------------------------------------------------------------------------- stale temporaries


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    dead, alive = _dead_pid(), os.getppid()
    fname = str(tmp_path / "w.params")
    names = ["w.params.tmp-%d" % dead, "w.params.tmp-%d-7" % dead,
             "w.params.tmp-%d-1.tmp-%d-2" % (dead, dead), "w.params.tmp-%d-3" % alive,
             "other.params.tmp-%d" % dead, "w.params.tmp-x"]
    for n in names:
        (tmp_path / n).write_bytes(b"\0" * 1000)
    mx.nd.save(fname, {"a": mx.nd.ones((2,))})
    assert _files(tmp_path) == sorted(["w.params", "w.params.tmp-%d-3" % alive,
                                       "other.params.tmp-%d" % dead, "w.params.tmp-x"])
    net = mx.gluon.nn.Dense(2, in_units=2)
    net.initialize()
    (tmp_path / ("n.params.tmp-%d" % dead)).write_bytes(b"junk")
    net.save_parameters(str(tmp_path / "n.params"))
    assert "n.params.tmp-%d" % dead not in _files(tmp_path)


def test_checkpoint_save_removes_stale_member_temporaries(tmp_path):
    dead = _dead_pid()
    prefix = str(tmp_path / "m")
    for n in ("m-symbol.json", "m-0001.params", "m-0001.states", "m-0001.manifest"):
        (tmp_path / ("%s.tmp-%d-0" % (n, dead))).write_bytes(b"x" * 100)
    mod = _module(1)
    _fill_module(mod, 1)
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    assert _temps(tmp_path) == []
    assert _check_module(prefix) == 1


# --------------------------------------------------------------------------- interrupted commit

def _save_and_die_after(mod, prefix, renames):
    """In a forked child: save ``mod``'s checkpoint and die (``os._exit``) right after the
    manifest's rename (``renames`` = 1) or after ``renames - 1`` member renames."""
    pid = os.fork()
    if pid == 0:
        try:
            real, count = os.replace, [0]

            def replace(src, dst):
                real(src, dst)
                count[0] = 1 if str(dst).endswith(".manifest") else count[0] + bool(count[0])
                if count[0] == renames:
                    os._exit(9)
            fileset.os = type(os)("os_for_test")
            fileset.os.__dict__.update(os.__dict__)
            fileset.os.replace = replace
            mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
        finally:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a writer")
@pytest.mark.parametrize("renames", [1, 2, 3])
def test_interrupted_commit_reads_new_set_and_next_save_finishes_it(tmp_path, renames):
    """A writer dying after the manifest's rename (1) and after 1 or 2 member renames
    leaves a committed set: readers get all of it, and the next save completes it."""
    prefix = str(tmp_path / "m")
    old = _module(2)
    _fill_module(old, 2)
    old.save_checkpoint(prefix, 1, save_optimizer_states=True)
    new = _module(5)
    _fill_module(new, 5)
    assert _save_and_die_after(new, prefix, renames) == 9
    assert len(_temps(tmp_path)) == 4 - renames  # the members not yet renamed
    assert _check_module(prefix) == 5
    sym, args, _ = mx.model.load_checkpoint(prefix, 1)
    assert sym.list_arguments()[1] == "fc1_weight" and float(args["fc1_bias"][0].asscalar()) == 5
    # a save to another epoch of the same prefix finishes the dead writer's renames
    _fill_module(new, 7)
    new.save_checkpoint(prefix, 2, save_optimizer_states=True)
    assert _temps(tmp_path) == []
    assert _check_module(prefix, 1) == 5
    assert _check_module(prefix, 2) == 7


# --------------------------------------------------------------------------- mixed sets


def test_parts_of_different_saves_are_refused(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    mod = _module(2)
    _fill_module(mod, 2)
    mod.save_checkpoint(a, 1, save_optimizer_states=True)
    _fill_module(mod, 4)
    mod.save_checkpoint(b, 1, save_optimizer_states=True)
    os.replace(b + "-0001.states", a + "-0001.states")  # new .states beside old .params
    with pytest.raises(MXNetError, match=r"a-0001\.states.*does not belong"):
        mx.mod.Module.load(a, 1, load_optimizer_states=True)
    mx.mod.Module.load(a, 1)  # without the states the rest is whole
    os.replace(b + "-0001.params", a + "-0001.params")
    with pytest.raises(MXNetError, match=r"a-0001\.params.*does not belong"):
        mx.model.load_checkpoint(a, 1)


def test_symbol_rewritten_by_a_later_epoch_loads_with_a_warning(tmp_path):
    """``-symbol.json`` is shared by every epoch, as in MXNet: a later epoch may rewrite
    it; loading an earlier epoch then warns instead of failing."""
    prefix = str(tmp_path / "m")
    args = {"fc0_weight": mx.nd.ones((3, 4)), "fc0_bias": mx.nd.ones((3,))}
    mx.model.save_checkpoint(prefix, 1, _sym(0), args, {})
    mx.model.save_checkpoint(prefix, 2, _sym(2).get_internals()["fc0_output"], args, {})
    with pytest.warns(UserWarning, match="rewritten after the checkpoint"):
        sym, _, _ = mx.model.load_checkpoint(prefix, 1)
    assert sym.list_outputs() == ["fc0_output"]


def test_files_written_by_mxnet_without_a_manifest_load(tmp_path):
    prefix = str(tmp_path / "m")
    _sym(0).save(prefix + "-symbol.json")
    mx.nd.save(prefix + "-0003.params", {"arg:fc0_weight": mx.nd.ones((3, 4))})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sym, args, aux = mx.model.load_checkpoint(prefix, 3)
    assert list(args) == ["fc0_weight"] and aux == {}


def test_bucketing_and_block_save_are_sets(tmp_path):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(3, in_units=4))
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((1, 4)))
    net.export(str(tmp_path / "e"), epoch=2)
    assert _files(tmp_path) == ["e-0002.manifest", "e-0002.params", "e-symbol.json"]
    record = json.loads((tmp_path / "e-0002.manifest").read_text())
    assert [e["name"] for e in record["files"]] == ["e-symbol.json", "e-0002.params"]
    net.save(str(tmp_path / "b"))
    net2 = mx.gluon.nn.HybridSequential()
    net2.add(mx.gluon.nn.Dense(3, in_units=4))
    net2.load(str(tmp_path / "b"))
    np.testing.assert_array_equal(net2[0].weight.data().asnumpy(),
                                  net[0].weight.data().asnumpy())
    assert _temps(tmp_path) == []


# --------------------------------------------------------------------------- kill test


def _net(k):
    """A hybridized net of architecture k%2 (width 3 or 4), ready to export."""
    net = mx.gluon.nn.HybridSequential(prefix="n%d_" % (k % 2))
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(3 + k % 2, in_units=4))
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((1, 4)))
    return net


def _trainer():
    net = mx.gluon.nn.Dense(3, in_units=4, prefix="t_")
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"momentum": 0.9})
    with mx.autograd.record():
        loss = net(mx.nd.ones((1, 4))).sum()
    loss.backward()
    trainer.step(1)
    return net, trainer


class _Kinds:
    """Per kind: ``save(k)`` in the writer and ``load() -> k`` in the reader."""

    def __init__(self, d):
        self.d = d
        self.mods = [_module(0), _module(1)]
        self.nets = [_net(0), _net(1)]
        self.dense, self.trainer = _trainer()

    def save(self, kind, k):
        d = self.d
        if kind == "module":
            mod = self.mods[k % 2]
            _fill_module(mod, k)
            mod.save_checkpoint(os.path.join(d, "mod"), 1, save_optimizer_states=True)
        elif kind == "model":
            mod = self.mods[k % 2]
            _fill_module(mod, k)
            args, auxs = mod.get_params()
            mx.model.save_checkpoint(os.path.join(d, "model"), 1, mod.symbol, args, auxs)
        elif kind == "export":
            net = self.nets[k % 2]
            for p in net.collect_params().values():
                p.set_data(mx.nd.full(p.shape, k))
            net.export(os.path.join(d, "exp"), epoch=1)
        elif kind == "save_parameters":
            for p in self.dense.collect_params().values():
                p.set_data(mx.nd.full(p.shape, k))
            self.dense.save_parameters(os.path.join(d, "dense.params"))
        else:
            self.trainer._updaters[0].states[0] = mx.nd.full((3, 4), k)
            self.trainer.save_states(os.path.join(d, "trainer.states"))

    def load(self, kind):
        d = self.d
        if kind == "module":
            return _check_module(os.path.join(d, "mod"))
        if kind in ("model", "export"):
            name = {"model": "model", "export": "exp"}[kind]
            sym, args, _ = mx.model.load_checkpoint(os.path.join(d, name), 1)
            values = {float(v.asnumpy().ravel()[0]) for v in args.values()}
            assert len(values) == 1
            k = int(values.pop())
            params = [n for n in sym.list_arguments() if n in args]
            assert sorted(params) == sorted(args), (params, list(args))
            weight = [n for n in args if n.endswith("weight")][0]
            assert args[weight].shape == (3 + k % 2, 4), (weight, k)
            assert weight.startswith(("fc%d" if kind == "model" else "n%d_") % (k % 2))
            return k
        if kind == "save_parameters":
            self.dense.load_parameters(os.path.join(d, "dense.params"))
            values = {float(p.data().asnumpy().ravel()[0])
                      for p in self.dense.collect_params().values()}
            assert len(values) == 1
            return int(values.pop())
        self.trainer.load_states(os.path.join(d, "trainer.states"))
        state = self.trainer._updaters[0].states[0].asnumpy()
        assert (state == state.flat[0]).all()
        return int(state.flat[0])


KINDS = ("module", "model", "export", "save_parameters", "trainer_states")


def _writer(kinds, kind, start, fd, pause=0.0):
    """Child: save k = start, start+1, ... forever, reporting each finished k on ``fd``."""
    k = start
    try:
        os.write(fd, b"s\n")  # started: the kill delay counts from here
        while True:
            kinds.save(kind, k)
            os.write(fd, b"%d\n" % k)
            k += 1
            time.sleep(pause)
    finally:
        os._exit(1)


def _kill_trial(kinds, kind, start, delay):
    """Fork a writer, SIGKILL it after ``delay`` s; the last k it finished (start-1 if none)."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        _writer(kinds, kind, start, wfd)
    os.close(wfd)
    done = os.read(rfd, 2)
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    while True:
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        done += chunk
    os.close(rfd)
    finished = [int(x) for x in done.split()[1:]]
    return finished[-1] if finished else start - 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill test forks writers")
def test_kill_writers_at_random_points(tmp_path, capsys):
    """Writers SIGKILLed at random moments: the reader loads the last finished save or
    the one in flight, never a mix and never an error; the next writer removes what the
    killed ones left."""
    rng = random.Random(32)
    kinds = _Kinds(str(tmp_path))
    trials, report = 40, {}
    for kind in KINDS:
        t0 = time.perf_counter()
        for k in (1, 2, 3):
            kinds.save(kind, k)
        per_save = (time.perf_counter() - t0) / 3
        assert kinds.load(kind) == 3
        last, outcomes = 3, {"old": 0, "new": 0, "temps_left": 0, "pending_commit": 0}
        for _ in range(trials):
            finished = _kill_trial(kinds, kind, last + 1, rng.uniform(0, 3 * per_save))
            outcomes["temps_left"] += bool(_temps(tmp_path))
            outcomes["pending_commit"] += _pending_commit(str(tmp_path))
            k = kinds.load(kind)
            assert k in (finished, finished + 1), (kind, k, finished)
            outcomes["old" if k == finished else "new"] += 1
            last = max(k, finished)
        kinds.save(kind, last + 1)  # a live writer after the kills: nothing stale remains
        assert kinds.load(kind) == last + 1
        assert _temps(tmp_path) == [], _temps(tmp_path)
        report[kind] = outcomes
    with capsys.disabled():
        print("\nkill test (%d trials per kind):" % trials, json.dumps(report))
    assert sum(o["old"] for o in report.values()) > 0
    assert sum(o["new"] for o in report.values()) > 0
    assert sum(o["temps_left"] for o in report.values()) > 0


def _pending_commit(d):
    """1 when some manifest in ``d`` names a temporary that still exists (a killed commit)."""
    for n in os.listdir(d):
        if n.endswith(".manifest"):
            record = json.loads(open(os.path.join(d, n)).read())
            if any(os.path.exists(os.path.join(d, e["tmp"])) for e in record["files"]):
                return 1
    return 0


def test_manifests_that_are_not_ours_or_damaged(tmp_path):
    prefix = str(tmp_path / "m")
    args = {"fc0_weight": mx.nd.ones((3, 4))}
    mx.model.save_checkpoint(prefix, 1, _sym(0), args, {})
    manifest = tmp_path / "m-0001.manifest"
    record = json.loads(manifest.read_text())
    manifest.write_text("a note of the user's, not JSON")  # not ours: ignored
    assert list(mx.model.load_checkpoint(prefix, 1)[1]) == ["fc0_weight"]
    record["files"][1]["tmp"] = "../elsewhere.tmp-1"  # ours, but pointing outside
    manifest.write_text(json.dumps(record))
    with pytest.raises(MXNetError, match="is malformed"):
        mx.model.load_checkpoint(prefix, 1)
    mx.model.save_checkpoint(prefix, 1, _sym(0), args, {})  # a new save replaces it
    assert list(mx.model.load_checkpoint(prefix, 1)[1]) == ["fc0_weight"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a writer")
def test_reader_beside_a_live_writer_sees_whole_sets(tmp_path):
    """Loads while another process saves every few milliseconds: each one is a whole
    set (a load that overlaps a commit is retried)."""
    kinds = _Kinds(str(tmp_path))
    kinds.save("module", 1)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        _writer(kinds, "module", 2, wfd, pause=0.005)
    os.close(wfd)
    seen, saved = [], b""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no part may look foreign to its set
            while saved.count(b"\n") < 9 and len(seen) < 400:
                seen.append(_check_module(os.path.join(str(tmp_path), "mod")))
                os.set_blocking(rfd, False)
                try:
                    saved += os.read(rfd, 65536)
                except BlockingIOError:
                    pass
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(rfd)
    assert seen == sorted(seen) and len(set(seen)) > 1, seen


def test_bucketing_module_checkpoint_is_a_set(tmp_path):
    def sym_gen(key):
        data = mx.sym.Variable("data")
        fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
        return mx.sym.SoftmaxOutput(fc, name="softmax"), ("data",), ("softmax_label",)

    prefix = str(tmp_path / "b")
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=5)
    mod.bind(data_shapes=[("data", (2, 4))], label_shapes=[("softmax_label", (2,))])
    mod.init_params(mx.init.Constant(0.5))
    mod.save_checkpoint(prefix, 1)
    record = json.loads((tmp_path / "b-0001.manifest").read_text())
    assert [e["name"] for e in record["files"]] == ["b.buckets", "b-5-symbol.json",
                                                    "b-0001.params"]
    mod2 = mx.mod.BucketingModule.load(prefix, 1, sym_gen=sym_gen, default_bucket_key=5)
    assert mod2._curr_module._arg_params["fc_weight"].asnumpy().tolist() == [[0.5] * 4] * 3
    (tmp_path / "b-0001.params").write_bytes((tmp_path / "b-0001.params").read_bytes()[:-4])
    with pytest.raises(MXNetError, match=r"b-0001\.params.*does not belong"):
        mx.mod.BucketingModule.load(prefix, 1, sym_gen=sym_gen, default_bucket_key=5)

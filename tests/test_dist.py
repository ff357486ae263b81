"""Distributed kvstores on torch.distributed (gloo, loopback): 2 worker processes."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import launch
from mxtorch.base import MXNetError
from mxtorch.kvstore import dist

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "dist_scripts")
sys.path.insert(0, SCRIPTS)
import mlp_common as mc  # noqa: E402


def _env(**extra):
    """A clean environment for a worker: no inherited rendezvous variables."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DMLC_", "RANK", "WORLD_SIZE", "MASTER_", "LOCAL_"))}
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(HERE), env.get("PYTHONPATH", "")])
    env["MXTORCH_DIST_TIMEOUT"] = "30"
    env.update(extra)
    return env


def test_module_and_trainer_match_one_process(tmp_path):
    cmd = [sys.executable, "-m", "mxtorch.launch", "-n", "2",
           os.path.join(SCRIPTS, "train_mlp.py"), str(tmp_path), "both"]
    res = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=85)
    assert res.returncode == 0, res.stderr[-3000:]
    x, y = mc.dataset(2)
    ref_mod = {k: v.asnumpy() for k, v in
               mc.train_module(x, y, 2 * mc.BATCH, "local", 100).get_params()[0].items()}
    ref_gl = mc.gluon_arrays(mc.train_gluon(x, y, 2 * mc.BATCH, None, 200)[0])
    for kind, ref in (("module", ref_mod), ("gluon", ref_gl)):
        w0 = np.load(tmp_path / f"{kind}_rank0.npz")
        w1 = np.load(tmp_path / f"{kind}_rank1.npz")
        for k in ref:
            np.testing.assert_array_equal(w0[k], w1[k])  # identical on every worker
            np.testing.assert_allclose(w0[k], ref[k], rtol=1e-5, atol=1e-6)
    # rank 1 started from other weights (seed 101): rank 0's init was broadcast
    assert not np.allclose(mc.init_arrays(100)["fc1_weight"], mc.init_arrays(101)["fc1_weight"])
    # checkpoints and optimizer states: rank 0 only, complete
    names = sorted(os.listdir(tmp_path))
    assert "ckpt_rank0-0002.params" in names and "ckpt_rank0-0002.states" in names
    assert "trainer_rank0.states" in names
    assert not [n for n in names if "rank1" in n and not n.endswith(".npz")]
    assert not [n for n in names if ".tmp" in n]
    _, args, _ = mx.model.load_checkpoint(str(tmp_path / "ckpt_rank0"), 2)
    for k in ref_mod:
        np.testing.assert_array_equal(args[k].asnumpy(), np.load(tmp_path / "module_rank0.npz")[k])


def _start_workers(n, port, script, args, **extra):
    """Start ``n`` workers with only MXNet's DMLC_* rendezvous variables."""
    procs = []
    for rank in range(n):
        env = _env(DMLC_ROLE="worker", DMLC_PS_ROOT_URI="127.0.0.1",
                   DMLC_PS_ROOT_PORT=str(port), DMLC_NUM_WORKER=str(n),
                   DMLC_WORKER_ID=str(rank), **extra)
        procs.append(subprocess.Popen([sys.executable, script] + args, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    return procs


def test_killed_worker_ends_the_other_with_clear_error(tmp_path):
    port = launch._free_port()
    t0 = time.monotonic()
    procs = _start_workers(2, port, os.path.join(SCRIPTS, "train_mlp.py"), [str(tmp_path)],
                           KILL_RANK="1", KILL_STEP="3")
    try:
        _, err0 = procs[0].communicate(timeout=60)
        procs[1].wait(timeout=10)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert time.monotonic() - t0 < 60
    assert procs[1].returncode == -9
    assert procs[0].returncode != 0
    assert "MXNetError" in err0 and "distributed kvstore" in err0, err0[-2000:]
    assert "failed on worker rank 0 of 2" in err0


def test_launcher_stops_the_others_when_one_fails():
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "mxtorch.launch", "-n", "2",
                          os.path.join(SCRIPTS, "exit_early.py")],
                         env=_env(), capture_output=True, text=True, timeout=60)
    assert res.returncode == 3, res.stderr[-2000:]
    assert "worker 1 exited with status 3" in res.stderr
    assert time.monotonic() - t0 < 40  # not the 120 s rank 0 would sleep


def test_rendezvous_timeout_is_a_clear_error():
    code = "import mxtorch as mx; mx.kv.create('dist_sync')"
    procs = []
    for rank in (0, 1):  # each alone: rank 0 waits for a peer, rank 1 finds no rank 0
        env = _env(RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(launch._free_port()), MXTORCH_DIST_TIMEOUT="3")
        procs.append(subprocess.Popen([sys.executable, "-c", code], env=env,
                                      stderr=subprocess.PIPE, text=True))
    for rank, p in enumerate(procs):
        _, err = p.communicate(timeout=40)
        assert p.returncode != 0
        assert "rendezvous failed" in err and f"rank {rank} of 2" in err, err[-2000:]
        assert "within 3 s" in err


def test_rendezvous_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith(("DMLC_", "RANK", "WORLD_SIZE", "MASTER_")):
            monkeypatch.delenv(k)
    assert dist.rendezvous_env() == (0, 1, "127.0.0.1", 0)
    monkeypatch.setenv("DMLC_NUM_WORKER", "4")
    monkeypatch.setenv("DMLC_TASK_ID", "2")
    monkeypatch.setenv("DMLC_PS_ROOT_URI", "10.0.0.1")
    monkeypatch.setenv("DMLC_PS_ROOT_PORT", "9000")
    assert dist.rendezvous_env() == (2, 4, "10.0.0.1", 9000)
    monkeypatch.setenv("DMLC_ROLE", "server")
    with pytest.raises(MXNetError, match="needs no server"):
        dist.rendezvous_env()
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    monkeypatch.setenv("MASTER_PORT", "x")
    with pytest.raises(MXNetError, match="MASTER_PORT"):
        dist.rendezvous_env()
    monkeypatch.setenv("MASTER_PORT", "1234")
    assert dist.rendezvous_env() == (1, 3, "127.0.0.1", 1234)


def test_launcher_env_and_ssh_commands(tmp_path, capsys):
    env = launch.worker_env(1, 2, "h0", 7000)
    assert env["DMLC_WORKER_ID"] == "1" and env["RANK"] == "1"
    assert env["DMLC_NUM_WORKER"] == "2" and env["WORLD_SIZE"] == "2"
    assert env["MASTER_ADDR"] == env["DMLC_PS_ROOT_URI"] == "h0"
    hostfile = tmp_path / "hosts"
    hostfile.write_text("# cluster\nnodeA\n\nnodeB slots=2\n")
    assert launch.main(["-n", "3", "--launcher", "ssh", "-H", str(hostfile), "-p", "7000",
                        "--sync-dst-dir", "/job dir", "--dry-run", "train.py", "--lr",
                        "0.1"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("ssh -o StrictHostKeyChecking=no -p 22 nodeA ")
    assert " nodeB " in lines[1] and " nodeA " in lines[2]
    assert "DMLC_WORKER_ID=2" in lines[2] and "LOCAL_RANK=1" in lines[2]
    assert "MASTER_ADDR=nodeA" in lines[1] and "python3 train.py --lr 0.1" in lines[0]
    assert "'/job dir'" in lines[0]
    with pytest.raises(SystemExit):
        launch.main(["-n", "2", "--launcher", "ssh", "x.py"])

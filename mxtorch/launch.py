"""``python -m mxtorch.launch``: start distributed mxtorch workers (MXNet's ``tools/launch.py``).

Usage::

    python -m mxtorch.launch -n 2 train.py --lr 0.1
    python -m mxtorch.launch -n 4 --launcher ssh -H hosts.txt train.py

Every worker gets MXNet's rendezvous variables (``DMLC_ROLE=worker``,
``DMLC_PS_ROOT_URI``, ``DMLC_PS_ROOT_PORT``, ``DMLC_NUM_WORKER``, ``DMLC_WORKER_ID``) and
torchrun's (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``, ``LOCAL_RANK``).
Rank 0 hosts the rendezvous. There are no servers or scheduler: the dist kvstores
all-reduce among workers (``-s`` is accepted and ignored). When one worker exits with a
non-zero status, the launcher stops the others and exits with that status.
"""
from __future__ import annotations

import argparse
import os
import shlex
import signal
import socket
import subprocess
import sys
import time

__all__ = ["main", "worker_env", "ssh_commands"]

_GRACE_S = 5.0


def _free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def worker_env(rank: int, num_workers: int, root_uri: str, port: int,
               local_rank: int | None = None, local_size: int | None = None) -> dict:
    """The rendezvous variables of worker ``rank`` (DMLC_* and torchrun's)."""
    local_rank = rank if local_rank is None else local_rank
    local_size = num_workers if local_size is None else local_size
    return {
        "DMLC_ROLE": "worker", "DMLC_PS_ROOT_URI": root_uri, "DMLC_PS_ROOT_PORT": str(port),
        "DMLC_NUM_WORKER": str(num_workers), "DMLC_NUM_SERVER": "0",
        "DMLC_WORKER_ID": str(rank), "DMLC_TASK_ID": str(rank),
        "RANK": str(rank), "WORLD_SIZE": str(num_workers), "MASTER_ADDR": root_uri,
        "MASTER_PORT": str(port), "LOCAL_RANK": str(local_rank),
        "LOCAL_WORLD_SIZE": str(local_size),
    }


def _command(cmd: list[str]) -> list[str]:
    """A ``.py`` script runs under this Python; anything else runs as given."""
    if cmd and cmd[0].endswith(".py"):
        return [sys.executable] + cmd
    return list(cmd)


def _read_hosts(hostfile: str) -> list[str]:
    """Hosts from a hostfile: one per line, ``#`` comments and blank lines skipped."""
    with open(hostfile, encoding="utf-8") as f:
        hosts = [ln.split("#")[0].split()[0] for ln in f if ln.split("#")[0].strip()]
    if not hosts:
        raise SystemExit(f"mxtorch.launch: hostfile {hostfile} lists no hosts")
    return hosts


def ssh_commands(hosts: list[str], num_workers: int, cmd: list[str], port: int,
                 cwd: str, ssh_port: int = 22, extra_env: dict | None = None) -> list[list[str]]:
    """The ssh command lines starting worker i on ``hosts[i % len(hosts)]``.

    Rank 0 runs on ``hosts[0]``, which hosts the rendezvous.
    """
    out = []
    per_host: dict = {}
    for rank in range(num_workers):
        host = hosts[rank % len(hosts)]
        local = per_host.get(host, 0)
        per_host[host] = local + 1
        env = dict(extra_env or {})
        env.update(worker_env(rank, num_workers, hosts[0], port, local_rank=local))
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
        prog = " ".join(shlex.quote(c) for c in (["python3"] + cmd if cmd[0].endswith(".py")
                                                  else cmd))
        remote = f"cd {shlex.quote(cwd)} && env {exports} {prog}"
        out.append(["ssh", "-o", "StrictHostKeyChecking=no", "-p", str(ssh_port), host, remote])
    return out


def _start_local(n: int, cmd: list[str], port: int) -> list[subprocess.Popen]:
    """Start ``n`` local workers, each in its own session (so it can be stopped whole)."""
    procs = []
    for rank in range(n):
        env = dict(os.environ)
        env.update(worker_env(rank, n, "127.0.0.1", port))
        procs.append(subprocess.Popen(_command(cmd), env=env, start_new_session=True))
    return procs


def _stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM the workers still running (their process groups), SIGKILL after a grace."""
    for p in procs:
        if p.poll() is None:
            _signal(p, signal.SIGTERM)
    deadline = time.monotonic() + _GRACE_S
    for p in procs:
        try:
            p.wait(timeout=max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            _signal(p, signal.SIGKILL)
            p.wait()


def _signal(p: subprocess.Popen, sig: int) -> None:
    """Signal the process group of worker ``p`` (ignore one that is already gone)."""
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def supervise(procs: list[subprocess.Popen]) -> int:
    """Wait for the workers; on the first non-zero exit stop the rest and return its code."""
    try:
        while True:
            codes = [p.poll() for p in procs]
            bad = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
            if bad:
                rank, code = bad[0]
                print(f"mxtorch.launch: worker {rank} exited with status {code}; "
                      "stopping the other workers", file=sys.stderr, flush=True)
                _stop(procs)
                return code if code > 0 else 128 - code
            if all(c == 0 for c in codes):
                return 0
            time.sleep(0.05)
    except KeyboardInterrupt:
        _stop(procs)
        return 130


def _parser() -> argparse.ArgumentParser:
    """The command line, a subset of MXNet's ``tools/launch.py``."""
    ap = argparse.ArgumentParser(prog="python -m mxtorch.launch",
                                 description="Launch a distributed mxtorch training job.")
    ap.add_argument("-n", "--num-workers", required=True, type=int, help="number of workers")
    ap.add_argument("-s", "--num-servers", type=int, default=0,
                    help="ignored: mxtorch needs no servers (all-reduce among workers)")
    ap.add_argument("--launcher", choices=["local", "ssh"], default="local")
    ap.add_argument("-H", "--hostfile", help="ssh: file with one host per line")
    ap.add_argument("-p", "--port", type=int, default=0,
                    help="rendezvous port (default: a free one for local)")
    ap.add_argument("--ssh-port", type=int, default=22)
    ap.add_argument("--sync-dst-dir", default=None, help="ssh: working directory remotely")
    ap.add_argument("--dry-run", action="store_true", help="ssh: print the commands only")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="script.py and its arguments")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv``, start the workers, supervise them; returns the exit status."""
    args = _parser().parse_args(argv)
    if not args.command:
        raise SystemExit("mxtorch.launch: no command to run")
    if args.num_workers < 1:
        raise SystemExit("mxtorch.launch: -n must be >= 1")
    if args.launcher == "local":
        port = args.port or _free_port()
        return supervise(_start_local(args.num_workers, args.command, port))
    if not args.hostfile:
        raise SystemExit("mxtorch.launch: --launcher ssh needs -H hostfile")
    hosts = _read_hosts(args.hostfile)
    cmds = ssh_commands(hosts, args.num_workers, args.command, args.port or 9091,
                        args.sync_dst_dir or os.getcwd(), args.ssh_port)
    if args.dry_run:
        for c in cmds:
            print(shlex.join(c))
        return 0
    procs = [subprocess.Popen(c, start_new_session=True) for c in cmds]
    return supervise(procs)


if __name__ == "__main__":
    sys.exit(main())

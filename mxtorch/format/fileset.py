"""Crash-safe writes: one file, or a checkpoint made of several files, never seen torn.

One file goes to a temporary in the same directory (``<name>.tmp-<pid>-<n>``), is fsynced
and renamed over the target. A *set* (a checkpoint's ``-symbol.json``, ``.params`` and
``.states``) is written as every member's temporary first, then a small JSON manifest
naming each member with its size and SHA-256 and the temporary that holds it is committed
by rename (the commit point), then the temporaries are renamed in order, the file a reader
opens last renamed last. A writer killed after the commit leaves temporaries that the
manifest still names: readers take them in place of the members they replace, and the
next writer to the same files finishes the renames. Temporaries of dead writers that no
manifest names are removed by the next write to the same file.

Nothing here imports torch; a member is written by a callback given the path to write.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import warnings
from typing import Any, Callable, Iterable, Sequence, TypeVar

from ..base import MXNetError

_COUNTER = itertools.count()
# "<final>.tmp-<pid>[-<n>]", possibly nested when a member's writer itself writes atomically
_TMP_SUFFIX = re.compile(r"\.tmp-(\d+)(?:-\d+)?(?:\.tmp-\d+(?:-\d+)?)*")
MANIFEST_FORMAT = "mxtorch-checkpoint-set"


def temp_name(final: str) -> str:
    """A temporary name beside ``final``, unique to this process and call."""
    return f"{final}.tmp-{os.getpid()}-{next(_COUNTER)}"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (a dead writer awaiting reaping)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's live process
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def _fsync_dir(dirname: str) -> None:
    """Make renames in ``dirname`` durable (best effort: not every platform can)."""
    try:
        fd = os.open(dirname or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def digest(path: str) -> tuple[int, str]:
    """``(size, sha256 hex)`` of the file at ``path``."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            size += len(chunk)
            h.update(chunk)
    return size, h.hexdigest()


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def clean_stale(finals: Iterable[str], finish_sets: bool = False) -> None:
    """Remove temporaries of dead writers beside ``finals``, first finishing the renames
    of committed sets that name them (of any committed set in the directory when
    ``finish_sets``: a later checkpoint completes an earlier one a kill interrupted)."""
    by_dir: dict[str, set[str]] = {}
    for final in finals:
        by_dir.setdefault(os.path.dirname(final), set()).add(os.path.basename(final))
    for dirname, bases in by_dir.items():
        try:
            names = os.listdir(dirname or ".")
        except OSError:
            continue
        stale: list[str] = []
        dead: set[str] = set()
        for name in names:
            head, sep, tail = name.partition(".tmp-")
            m = sep and _TMP_SUFFIX.fullmatch(sep + tail)
            if not m or (head not in bases and not finish_sets) \
                    or pid_alive(int(m.group(1))):
                continue
            dead.add(name)
            if head in bases:
                stale.append(name)
        if dead:
            _roll_forward_committed(dirname, dead, names)
            for name in stale:
                _remove(os.path.join(dirname, name))


def _roll_forward_committed(dirname: str, stale: set[str], names: list[str]) -> None:
    """Finish the renames of every manifest in ``dirname`` that names a stale temporary."""
    for name in names:
        if not name.endswith(".manifest"):
            continue
        try:
            entries = _read_entries(os.path.join(dirname, name))
        except MXNetError:  # damaged: its set is not ours to finish
            continue
        if entries and any(e["tmp"] in stale for e in entries):
            for e in entries:
                tmp = os.path.join(dirname, e["tmp"])
                if os.path.exists(tmp) and _matches(tmp, e):
                    os.replace(tmp, os.path.join(dirname, e["name"]))
            _fsync_dir(dirname)


def write_file(final: str, blob: bytes) -> None:
    """Write ``blob`` to ``final`` through an fsynced temporary and an atomic rename."""
    clean_stale([final])
    tmp = temp_name(final)
    try:
        with open(tmp, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    finally:
        _remove(tmp)
    _fsync_dir(os.path.dirname(final))


def write_set(manifest: str, parts: Sequence[tuple[str, Callable[[str], object]]]) -> None:
    """Write the files ``parts`` (``(final, writer)`` pairs; ``writer(path)`` writes one
    member at ``path``) as one set: a reader sees all old members or all new ones.

    The members are renamed in the order given. On any error before the commit (a full
    disk, say) nothing is renamed and no temporary is left.
    """
    finals = [final for final, _ in parts]
    clean_stale(finals + [manifest], finish_sets=True)
    temps: list[str] = []
    try:
        entries: list[_Entry] = []
        for final, writer in parts:
            tmp = temp_name(final)
            temps.append(tmp)
            writer(tmp)
            if not os.path.exists(tmp):
                raise MXNetError(f"checkpoint: nothing was written for {final!r}")
            size, sha = digest(tmp)
            entries.append({"name": os.path.basename(final), "tmp": os.path.basename(tmp),
                            "size": size, "sha256": sha})
        record = {"format": MANIFEST_FORMAT, "version": 1, "files": entries}
        write_file(manifest, json.dumps(record, indent=1).encode("utf-8"))  # the commit
    except BaseException:
        for tmp in temps:
            _remove(tmp)
        raise
    for final, tmp in zip(finals, temps):
        os.replace(tmp, final)
    _fsync_dir(os.path.dirname(manifest))


# A manifest's member entry (JSON): name, tmp, size, sha256.
_Entry = dict[str, Any]


def _read_entries(manifest: str) -> list[_Entry] | None:
    """The member entries of ``manifest``, or None when it does not exist or is not ours."""
    try:
        with open(manifest, "rb") as f:
            record = json.loads(f.read(1 << 20).decode("utf-8"))
    except FileNotFoundError:
        return None
    except (ValueError, RecursionError):  # a file of the user's that happens to be so named
        return None
    except OSError as err:
        raise MXNetError(f"checkpoint manifest {manifest!r} is unreadable: {err}") from None
    if not isinstance(record, dict) or record.get("format") != MANIFEST_FORMAT:
        return None
    files = record.get("files")
    if not isinstance(files, list) or not all(_valid_entry(e) for e in files):
        raise MXNetError(f"checkpoint manifest {manifest!r} is malformed")
    return files


def _valid_entry(e: object) -> bool:
    """A member entry: a plain file name, its own temporary beside it, size and digest."""
    if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in
                                          ("name", "tmp", "sha256")):
        return False
    name = e["name"]
    return name not in ("", ".", "..") and "/" not in name and os.sep not in name and \
        e["tmp"].startswith(name + ".tmp-") and "/" not in e["tmp"] and \
        os.sep not in e["tmp"] and isinstance(e.get("size"), int)


def _matches(path: str, entry: _Entry) -> bool:
    try:
        if os.path.getsize(path) != entry["size"]:
            return False
        return digest(path) == (entry["size"], entry["sha256"])
    except FileNotFoundError:
        return False


class SetView:
    """The paths to read for the members of one saved set (``path(name)``).

    Without a manifest (files MXNet or an older writer made) every name is its own path.
    A member that differs from the manifest is read from the committed temporary that
    replaces it when there is one; otherwise a ``strict`` member raises MXNetError (the
    files do not belong together) and a loose one (a ``-symbol.json`` that later
    epochs share and may rewrite) is used as it is, with a warning. A member the
    manifest does not name was saved on its own and is used as it is.
    """

    def __init__(self, manifest: str):
        self.manifest = manifest
        self.warnings: list[str] = []  # given out by load_set once the read is known whole
        self.used_temporaries = False
        entries = _read_entries(manifest)
        self._entries = None if entries is None else {e["name"]: e for e in entries}

    def path(self, name: str, strict: bool = True) -> str:
        """The file to read for member ``name`` (a final name)."""
        if self._entries is None:
            return name
        entry = self._entries.get(os.path.basename(name))
        if entry is None:  # saved on its own, never claimed to belong to this set
            if strict and os.path.exists(name):
                self.warnings.append(f"{name!r} is not part of the checkpoint "
                                     f"{self.manifest!r} (it was saved separately); "
                                     "loading it as it is")
            return name
        if _matches(name, entry):
            return name
        tmp = os.path.join(os.path.dirname(self.manifest), entry["tmp"])
        if _matches(tmp, entry):
            self.used_temporaries = True  # the writer may rename it away before it is read
            return tmp
        if _matches(name, entry):  # the writer renamed it into place between the checks
            return name
        if strict:
            raise MXNetError(f"checkpoint: {name!r} does not belong to the set recorded in "
                             f"{self.manifest!r} (missing, or replaced after that save)")
        self.warnings.append(f"{name!r} was rewritten after the checkpoint "
                             f"{self.manifest!r} was saved; loading it as it is now")
        return name


def _manifest_bytes(manifest: str) -> bytes | None:
    try:
        with open(manifest, "rb") as f:
            return f.read(1 << 20)
    except FileNotFoundError:
        return None


_T = TypeVar("_T")


def load_set(manifest: str, loader: Callable[[SetView], _T], attempts: int = 5) -> _T:
    """``loader(SetView(manifest))``, retried while a writer commits a new set."""
    for attempt in range(attempts):
        before = _manifest_bytes(manifest)
        view = SetView(manifest)
        try:
            result = loader(view)
        except (OSError, MXNetError):
            if attempt + 1 == attempts or (_manifest_bytes(manifest) == before
                                           and not view.used_temporaries):
                raise
            continue
        if _manifest_bytes(manifest) == before:
            for message in view.warnings:
                warnings.warn(message, stacklevel=3)
            return result
    raise MXNetError(f"checkpoint {manifest!r} kept changing while it was read")

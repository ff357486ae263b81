"""Profiler setting methods: MXNet 1.9.1's ``mx.profiler`` on ``torch.profiler``.

While the profiler runs, every operator call is timed under its MXNet name
(``FullyConnected``, ``_plus_scalar``; ``MyOp::pure_python`` for a custom operator) and
wrapped in ``torch.profiler.record_function``, so a ``torch.profiler`` session sees the
MXNet names with torch's kernels beneath; mx.profiler runs such a session itself and puts
those kernels (``aten::addmm``) and memory counters in the Chrome trace it writes (open it
in chrome://tracing or https://ui.perfetto.dev). ``dumps()`` prints MXNet's aggregate table.

The instrumentation exists only while the profiler runs: ``set_state('run')`` puts timed
wrappers in place of the operators' computes and NDArray's operator methods, and
``set_state('stop')`` puts the originals back, so a stopped profiler costs nothing.
Symbol programs (executors, hybridized blocks) compiled while it runs keep their timed
calls, which record nothing once it stops; those compiled before it started show torch's
kernels in the trace but not the MXNet operator names above them.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import warnings

from ..base import MXNetError, c_str, c_str_array, check_call, py_str  # MXNet's
from .instrument import INSTRUMENTS, SCOPE
from .recorder import DEFAULTS, REC
from .stats import SORT_KEYS, as_json, table

__all__ = ["set_config", "profiler_set_config", "set_state", "profiler_set_state", "dump",
           "dump_profile", "dumps", "pause", "resume", "set_kvstore_handle", "Domain", "Task",
           "Frame", "Event", "Counter", "Marker", "scope"]

profiler_kvstore_handle = None


def set_kvstore_handle(handle):
    """Set the kvstore whose server processes ``profile_process='server'`` refers to."""
    global profiler_kvstore_handle
    profiler_kvstore_handle = handle


def _parse_bool(key: str, value) -> bool:
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise MXNetError(f"Invalid Parameter format for {key} expect boolean but value="
                         f"'{value}'")
    return bool(value)


def _check_process(profile_process: str) -> None:
    if profile_process == "worker":
        return
    if profile_process == "server":
        # MXNet: server profiling is sent to a dist kvstore's parameter servers
        raise MXNetError("profile_process='server' needs a kvstore with parameter server "
                         "processes; mxtorch's kvstores (local, device and the "
                         "torch.distributed dist_*) have none: profile each worker")
    raise MXNetError(f"Invalid profile_process {profile_process!r}: use 'worker' or 'server'")


def set_config(**kwargs):
    """Set up the configure of profiler (only accepts keyword arguments).

    Parameters
    ----------
    filename : string,
        output file for profile data
    profile_all : boolean,
        all profile types enabled
    profile_symbolic : boolean,
        whether to profile symbolic operators
    profile_imperative : boolean,
        whether to profile imperative operators
    profile_memory : boolean,
        whether to profile memory usage
    profile_api : boolean,
        whether to profile the C API (mxtorch has no C API: nothing to record)
    continuous_dump : boolean,
        whether to periodically dump profiling data to file
    dump_period : float,
        seconds between profile data dumps
    aggregate_stats : boolean,
        whether to maintain aggregate stats in memory for console
        dump.  Has some negative performance impact.
    profile_process : string
        whether to profile kvstore `server` or `worker`.
        server can only be profiled when kvstore is of type dist.
        if this is not passed, defaults to `worker`
    """
    config = dict(DEFAULTS)
    for key, value in kwargs.items():
        if key not in DEFAULTS:
            raise MXNetError(f"Cannot find argument '{key}', Possible Arguments:\n----------"
                             f"------\n" + "\n".join(sorted(DEFAULTS)))
        if key == "filename":
            config[key] = str(value)
        elif key == "profile_process":
            config[key] = str(value)
        elif key == "dump_period":
            config[key] = float(value)
        else:
            config[key] = _parse_bool(key, value)
    _check_process(config["profile_process"])
    if config["continuous_dump"] and config["dump_period"] <= 0:
        raise MXNetError("Check failed: !continuous_dump || dump_period > 0")
    with REC.lock:
        REC._stop_timer()
        REC.config = config
        if config["filename"] and os.path.exists(config["filename"]):
            os.unlink(config["filename"])
        REC.dumps_done = 0
        if config["aggregate_stats"]:
            if REC.stats is None:
                REC.stats = {}
        else:
            REC.stats = None
        if REC.output:
            REC._start_timer()


def profiler_set_config(mode='symbolic', filename='profile.json'):
    """Set up the configure of profiler (Deprecated).

    Parameters
    ----------
    mode : string, optional
        Indicates whether to enable the profiler, can
        be 'symbolic', or 'all'. Defaults to `symbolic`.
    filename : string, optional
        The name of output trace file. Defaults to 'profile.json'.
    """
    warnings.warn('profiler.profiler_set_config() is deprecated. '
                  'Please use profiler.set_config() instead')
    set_config(**{"profile_" + mode: True, "filename": filename})


def _set_recording(on: bool) -> None:
    """Start or stop the instrumentation and the torch.profiler session."""
    if on:
        INSTRUMENTS.install()
        if REC.session is None:
            REC.start_session()
    else:
        if REC.session is not None:
            REC.end_session()
        INSTRUMENTS.remove()


def set_state(state='stop', profile_process='worker'):
    """Set up the profiler state to 'run' or 'stop'.

    Parameters
    ----------
    state : string, optional
        Indicates whether to run the profiler, can
        be 'stop' or 'run'. Default is `stop`.
    profile_process : string
        whether to profile kvstore `server` or `worker`.
        server can only be profiled when kvstore is of type dist.
        if this is not passed, defaults to `worker`
    """
    if state not in ("run", "stop"):
        raise KeyError(state)
    _check_process(profile_process)
    with REC.lock:
        run = state == "run"
        if run == REC.running and not REC.paused:
            return
        REC.running, REC.paused = run, False
        if run:
            REC.output = True
            REC._start_timer()
        _set_recording(run)


def profiler_set_state(state='stop'):
    """Set up the profiler state to 'run' or 'stop' (Deprecated).

    Parameters
    ----------
    state : string, optional
        Indicates whether to run the profiler, can
        be 'stop' or 'run'. Default is `stop`.
    """
    warnings.warn('profiler.profiler_set_state() is deprecated. '
                  'Please use profiler.set_state() instead')
    set_state(state)


def dump(finished=True, profile_process='worker'):
    """Dump profile and stop profiler. Use this to save profile
    in advance in case your program cannot exit normally.

    Parameters
    ----------
    finished : boolean
        Indicates whether to stop statistic output (dumping) after this dump.
        Default is True
    profile_process : string
        whether to profile kvstore `server` or `worker`.
        server can only be profiled when kvstore is of type dist.
        if this is not passed, defaults to `worker`
    """
    _check_process(profile_process)
    with REC.lock:
        if not REC.output:
            raise MXNetError("Profiler hasn't been run. Config and start profiler first")
        REC.write(finished is True)


def dump_profile():
    """Dump profile and stop profiler. Use this to save profile
    in advance in case your program cannot exit normally."""
    warnings.warn('profiler.dump_profile() is deprecated. '
                  'Please use profiler.dump() instead')
    dump(True)


def dumps(reset=False, format='table', sort_by='total', ascending=False):  # noqa: A002 - MXNet's
    """Return a printable string of aggregate profile stats.

    Parameters
    ----------
    reset: boolean
        indicates whether to clean aggeregate statistical data collected up to this point
    format: string
        whether to return the aggregate stats in table of json format
        can take 'table' or 'json'
        defaults to 'table'
    sort_by: string
        can take 'total', 'avg', 'min', 'max', or 'count'
        by which stat to sort the entries in each category
        defaults to 'total'
    ascending: boolean
        whether to sort ascendingly
        defaults to False
    """
    assert format in ('table', 'json'), \
        "Invalid value provided for format: {0}. Support: 'table', 'json'".format(format)
    assert sort_by in SORT_KEYS, \
        "Invalid value provided for sort_by: {0}. " \
        "Support: 'total', 'avg', 'min', 'max', 'count'".format(sort_by)
    assert ascending in (False, True), \
        "Invalid value provided for ascending: {0}. Support: False, True".format(ascending)
    assert reset in (False, True), \
        "Invalid value provided for reset: {0}. Support: False, True".format(reset)
    with REC.lock:
        # MXNet: the events so far are written first (which gathers torch's as well)
        REC.write(False)
        stats = REC.stats
        if stats is None:
            return ""
        text = (table if format == "table" else as_json)(stats, SORT_KEYS[sort_by], ascending)
        if reset:
            stats.clear()
    return text


def pause(profile_process='worker'):
    """Pause profiling.

    Parameters
    ----------
    profile_process : string
        whether to profile kvstore `server` or `worker`.
        server can only be profiled when kvstore is of type dist.
        if this is not passed, defaults to `worker`
    """
    _check_process(profile_process)
    with REC.lock:
        if REC.running and not REC.paused:
            REC.paused = True
            _set_recording(False)


def resume(profile_process='worker'):
    """Resume paused profiling.

    Parameters
    ----------
    profile_process : string
        whether to profile kvstore `server` or `worker`.
        server can only be profiled when kvstore is of type dist.
        if this is not passed, defaults to `worker`
    """
    _check_process(profile_process)
    with REC.lock:
        if REC.running and REC.paused:
            REC.paused = False
            _set_recording(True)


class Domain(object):
    """Profiling domain, used to group sub-objects like tasks, counters, etc into categories
    Serves as part of 'categories' for chrome://tracing

    Parameters
    ----------
    name : string
        Name of the domain
    """
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def new_task(self, name):
        """Create new Task object owned by this domain

        Parameters
        ----------
        name : string
            Name of the task
        """
        return Task(self, name)

    def new_frame(self, name):
        """Create new Frame object owned by this domain

        Parameters
        ----------
        name : string
            Name of the frame
        """
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """Create new Counter object owned by this domain

        Parameters
        ----------
        name : string
            Name of the counter
        value : int, optional
            Initial value of the counter
        """
        return Counter(self, name, value)

    def new_marker(self, name):
        """Create new Marker object owned by this domain

        Parameters
        ----------
        name : string
            Name of the marker
        """
        return Marker(self, name)


class _Duration(object):
    """A named time span recorded between ``start()`` and ``stop()``."""

    def __init__(self, category, name):
        self.name = name
        self._category = category
        self._start = None

    def start(self):
        """Start timing scope for this object"""
        self._start = REC.now()

    def stop(self):
        """Stop timing scope for this object"""
        start, self._start = self._start, None
        if start is not None and REC.recording:
            REC.duration(self._category, self.name, start, REC.now())

    def __str__(self):
        return self.name


class Task(_Duration):
    """Profiling Task class.

    A task is a logical unit of work performed by a particular thread.
    Tasks can nest; thus, tasks typically correspond to functions, scopes, or a case block
    in a switch statement. All passes through a task are aggregated into one statistic.

    Parameters
    ----------
    domain : Domain object
        Domain to which this object belongs
    name : string
        Name of the task
    """
    def __init__(self, domain, name):
        super().__init__(domain.name, name)


class Frame(_Duration):
    """Profiling Frame class.

    Use the frame API to insert calls to the desired places in your code and analyze
    performance per frame, where frame is the time period between frame begin and end
    points (one video frame, one training step).

    Parameters
    ----------
    domain : Domain object
        Domain to which this object belongs
    name : string
        Name of the frame
    """
    def __init__(self, domain, name):
        super().__init__(domain.name + ",frame", name)


class Event(_Duration):
    """Profiling Event class.

    The event API is used to observe when demarcated events occur in your application, or to
    identify how long it takes to execute demarcated regions of code. It is per-thread and
    records only while the profiler runs (not while paused).

    Parameters
    ----------
    name : string
        Name of the event
    """
    def __init__(self, name):
        super().__init__("event", name)


class Counter(object):
    """Profiling Counter class.

    The counter event can track a value as it changes over time.

    Parameters
    ----------
    domain : Domain object
        Domain to which this object belongs
    name : string
        Name of the counter
    value: integer, optional
        Initial value of the counter
    """
    def __init__(self, domain, name, value=None):
        self.name = name
        self.domain = domain
        self._value = 0
        if value is not None:
            self.set_value(value)

    def _changed(self):
        if REC.recording:
            REC.counter(self.domain.name, self.name, self._value)

    def set_value(self, value):
        """Set counter value.

        Parameters
        ----------
        value : int
            Value for the counter
        """
        self._value = int(value)
        self._changed()

    def increment(self, delta=1):
        """Increment counter value.

        Parameters
        ----------
        value_change : int
            Amount by which to add to the counter
        """
        self._value += int(delta)
        self._changed()

    def decrement(self, delta=1):
        """Decrement counter value.

        Parameters
        ----------
        value_change : int
            Amount by which to subtract from the counter
        """
        self._value -= int(delta)
        self._changed()

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


_MARKER_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


class Marker(object):
    """Set marker for an instant in time.

    The marker event marks a particular instant in time across some scope boundaries.

    Parameters
    ----------
    domain : Domain object
        Domain to which this object belongs
    name : string
        Name of the marker
    """
    def __init__(self, domain, name):
        self.name = name
        self.domain = domain

    def mark(self, scope='process'):
        """Set up the profiler state to record operator.

        Parameters
        ----------
        scope : string, optional
            Indicates what scope the marker should refer to.
            Can be 'global', 'process', thread', task', and 'marker'
            Default is `process`.
        """
        if scope not in _MARKER_SCOPES:
            raise MXNetError(f"Invalid marker scope '{scope}': use one of "
                             f"{sorted(_MARKER_SCOPES)}")
        if REC.recording:
            cat = self.domain.name + ",instant_marker"
            REC.emit({"name": self.name, "cat": cat, "ph": "i", "ts": REC.now(),
                       "s": _MARKER_SCOPES[scope]})
            if REC.stats is not None:
                REC.stats.setdefault(cat, {})


@contextlib.contextmanager
def scope(name='<unk>:', append_mode=True):
    """Assign the profiler scope (MXNet 2.0): operator events recorded inside carry it as
    their ``scope`` argument in the trace.

    Parameters
    ----------
    name : str
        Name of the profiler scope (a ':' is appended when missing).
    append_mode : bool
        Whether to append the new scope to the current one.
    """
    name = name if name.endswith(":") else name + ":"
    if append_mode and SCOPE.get() != "<unk>:":
        name = SCOPE.get() + name
    token = SCOPE.set(name)
    try:
        yield name
    finally:
        SCOPE.reset(token)


@atexit.register
def _dump_at_exit() -> None:
    """MXNet writes the last of the trace when the process ends."""
    with REC.lock:
        if REC.running:
            REC.running = False
            _set_recording(False)
        REC.write(True)

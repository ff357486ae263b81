"""The profiler's state: configuration, recorded Chrome trace events, aggregate stats, the
torch.profiler session whose kernels and memory events join the trace, and the trace file."""
from __future__ import annotations

import json
import os
import tempfile
import threading
import time

import torch

from .stats import Stat

__all__ = ["Recorder", "DEFAULTS", "REC"]

DEFAULTS = {"profile_all": False, "profile_symbolic": True, "profile_imperative": True,
            "profile_memory": True, "profile_api": True, "filename": "profile.json",
            "continuous_dump": True, "dump_period": 1.0, "aggregate_stats": False,
            "profile_process": "worker"}
class Recorder:
    """The profiler's state: configuration, the events not yet written, aggregate stats,
    the torch.profiler session and the trace file being written."""

    def __init__(self):
        self.config = dict(DEFAULTS)
        self.running = False
        self.paused = False
        self.output = False          # MXNet's "enable output": a dump may write
        self.dumps_done = 0
        self.events: list = []       # the events not yet written (JSON text or tuples)
        self.quoted: dict[tuple, tuple] = {}
        self.stats: dict[str, dict[str, Stat]] | None = None
        self.lock = threading.RLock()
        self.local = threading.local()   # .labels: the operator labels being timed
        self.session = None
        self.pid = os.getpid()
        # microseconds since the epoch = perf_counter microseconds + offset
        self.offset = time.time_ns() / 1000 - time.perf_counter_ns() / 1000
        self.timer = None

    @property
    def recording(self) -> bool:
        return self.running and not self.paused

    def now(self) -> float:
        """Microseconds since the epoch (the clock of torch's trace events too)."""
        return time.perf_counter_ns() / 1000 + self.offset

    # -------------------------------------------------------------- events
    def emit(self, event: dict) -> None:
        event.setdefault("pid", self.pid)
        event.setdefault("tid", threading.get_native_id())
        self.events.append(json.dumps(event))

    def _quoted(self, cat: str, name: str) -> tuple[str, str]:
        """The JSON strings of a category and a name (made once: events are frequent)."""
        key = (cat, name)
        q = self.quoted.get(key)
        if q is None:
            q = self.quoted[key] = (json.dumps(cat), json.dumps(name))
        return q

    def duration(self, cat: str, name: str, start: float, stop: float,
                 args: dict | None = None) -> None:
        """A complete event from ``start`` to ``stop`` (epoch microseconds), aggregated."""
        qc, qn = self._quoted(cat, name)
        self.events.append(("X", qc, qn, start, stop - start, threading.get_native_id(),
                            args))
        self.aggregate(cat, name, stop - start, counter=False)

    def counter(self, cat: str, name: str, value: int) -> None:
        """A counter's new value (a Chrome trace "C" event), aggregated."""
        qc, qn = self._quoted(cat, name)
        self.events.append(("C", qc, qn, time.perf_counter_ns(), value,
                            threading.get_native_id()))
        self.aggregate(cat, name, value, counter=True)

    def _serialize(self, ev) -> str:
        """One recorded event as JSON text (events are kept as tuples until written: a
        counter may change a hundred thousand times a second)."""
        if isinstance(ev, str):
            return ev
        if ev[0] == "X":
            _, qc, qn, start, dur, tid, args = ev
            extra = f', "args": {json.dumps(args)}' if args else ""
            return (f'{{"name": {qn}, "cat": {qc}, "ph": "X", "ts": {start:.3f}, '
                    f'"dur": {dur:.3f}, "pid": {self.pid}, "tid": {tid}{extra}}}')
        _, qc, qn, ns, value, tid = ev
        return (f'{{"name": {qn}, "cat": {qc}, "ph": "C", "ts": {ns / 1000 + self.offset:.3f}, '
                f'"args": {{{qn}: {value}}}, "pid": {self.pid}, "tid": {tid}}}')

    def aggregate(self, cat: str, name: str, value: float, counter: bool) -> None:
        if self.stats is not None:
            stat = self.stats.setdefault(cat, {}).get(name)
            if stat is None:
                stat = self.stats[cat][name] = Stat(counter)
            stat.add(value)

    # -------------------------------------------------------------- torch session
    def start_session(self) -> None:
        """Start a torch.profiler session (its kernels and memory events join the trace)."""
        cfg = self.config
        activities = [torch.profiler.ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        memory = bool(cfg["profile_memory"] or cfg["profile_all"])
        self.session = torch.profiler.profile(activities=activities, profile_memory=memory)
        self.session.start()

    def end_session(self) -> None:
        """Stop the torch.profiler session and take its kernel and memory events."""
        session, self.session = self.session, None
        if session is None:
            return
        session.stop()
        fd, path = tempfile.mkstemp(suffix=".json", prefix="mxtorch-profile-")
        os.close(fd)
        try:
            session.export_chrome_trace(path)
            with open(path, encoding="utf-8") as f:
                trace = json.load(f)
        finally:
            os.unlink(path)
        base = trace.get("baseTimeNanoseconds", 0) / 1000
        for ev in trace.get("traceEvents", []):
            self._take_torch_event(ev, base)

    def _take_torch_event(self, ev: dict, base: float) -> None:
        cat = ev.get("cat")
        if ev.get("ph") == "X" and cat in ("cpu_op", "kernel", "gpu_memcpy", "gpu_memset",
                                           "cuda_runtime", "cuda_driver"):
            args = {k: v for k, v in ev.get("args", {}).items() if k in ("Input Dims",
                                                                         "device", "stream")}
            self.emit({"name": ev["name"], "cat": cat, "ph": "X", "ts": ev["ts"] + base,
                       "dur": ev.get("dur", 0), "pid": self.pid, "tid": ev.get("tid"),
                       **({"args": args} if args else {})})
        elif ev.get("name") == "[memory]" and "Total Allocated" in ev.get("args", {}):
            a = ev["args"]
            device = "cpu/0" if a.get("Device Type", 0) == 0 else f"gpu/{a.get('Device Id', 0)}"
            name = f"Memory: {device}"
            value = a["Total Allocated"]
            self.emit({"name": name, "cat": "Device Storage", "ph": "C", "ts": ev["ts"] + base,
                       "pid": self.pid, "tid": ev.get("tid"), "args": {name: value}})
            self.aggregate("Device Storage", name, value, counter=True)

    # -------------------------------------------------------------- the file
    def write(self, finished: bool) -> None:
        """MXNet's DumpProfile: write the events gathered since the last dump; a continuous
        dump appends to the file and leaves it open for more, the last one closes it."""
        with self.lock:
            if not self.output:
                return
            if self.session is not None:
                self.end_session()
                if self.recording:
                    self.start_session()
            continuous = bool(self.config["continuous_dump"])
            if finished:
                self._stop_timer()
            first = self.dumps_done == 0
            self.dumps_done += 1
            last = finished or not continuous
            n = len(self.events)     # events appended meanwhile stay for the next dump
            events = self.events[:n]
            del self.events[:n]
            header = first or not continuous
            fname = self.config["filename"]
            with open(fname, "a" if not header else "w", encoding="utf-8") as f:
                if header:
                    f.write('{\n    "traceEvents": [\n')
                    events.insert(0, json.dumps({"ph": "M", "name": "process_name",
                                                 "pid": self.pid,
                                                 "args": {"name": "mxtorch"}}))
                elif events:
                    f.write(",\n")
                f.write(",\n".join(map(self._serialize, events)))
                if last:
                    f.write('\n    ],\n    "displayTimeUnit": "ms"\n}\n')
            self.output = continuous and not last
            if last:
                self.dumps_done = 0   # a later run starts a new file

    def _start_timer(self) -> None:
        """Continuous dump: write every ``dump_period`` seconds while output is on."""
        if self.timer is not None or not self.config["continuous_dump"]:
            return
        stop = threading.Event()
        period = float(self.config["dump_period"])

        def loop():
            while not stop.wait(period):
                with self.lock:
                    if not self.output:
                        return
                    if self.events:
                        self._append_only()
        thread = threading.Thread(target=loop, name="DumpProfileTimer", daemon=True)
        self.timer = (thread, stop)
        thread.start()

    def _append_only(self) -> None:
        """The timer's dump: our own events only (torch's session stays open)."""
        session, self.session = self.session, None
        try:
            self.write(False)
        finally:
            self.session = session

    def _stop_timer(self) -> None:
        if self.timer is not None:
            self.timer[1].set()
            self.timer = None


REC = Recorder()

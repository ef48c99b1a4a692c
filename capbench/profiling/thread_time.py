"""Where a JVM's threads spent a profiled step, by the kernel's own accounting: each thread's time on a CPU and its
run delay (runnable, waiting for a CPU: on a node at its quota, the rest of each period the quota was used up in;
on a busy host, its turn), read from /proc/PID/task/TID/schedstat at the step's start and end (capbench/hosts/thread_times.py).
The rest of each thread's wall-clock time it was off the CPU and not runnable: blocked on a monitor, parked, in I/O
or idle. No sampler is involved, so a thread descheduled while it holds a monitor is seen as runnable, which the
monitor table alone cannot tell from a lock held by a thread at work (issue 54)."""
from __future__ import annotations

import re

from capbench.profiling.names import REQUEST_THREAD_PREFIX

# Request threads as the kernel names them (15 characters): the nodes' own Executor's, and those of a connector's
# default executor, as an application that brings its own Tomcat names them ("http-nio-8080-exec-12" is
# "http-nio-8080-e").
REQUEST_THREAD = re.compile(rf"^{re.escape(REQUEST_THREAD_PREFIX)}\d|^https?-[a-z0-9]+-\d+-e")
# A thread's group: its name without the number that tells it from its siblings ("GC Thread#1", "C2 CompilerThre").
NUMBERED = re.compile(r"[#-]?\d+$")
# A runnable request thread that waits for a CPU longer than it runs on one: a thread holding a monitor is then
# descheduled for most of the time it holds it, and the monitor's waits are the CPU's.
STARVED_SHARE = 0.5


def parse(text: str) -> dict[int, dict]:
    """`grep -H ""` over /proc/PID/task/*/comm and .../schedstat → tid: {name, cpu_ns, delay_ns} (threads whose
    two lines were both read; a thread that ended between the two files is left out)."""
    threads: dict[int, dict] = {}
    for line in text.splitlines():
        path, _, value = line.partition(":")
        parts = path.split("/")
        if len(parts) != 6 or not parts[4].isdigit():
            continue
        thread = threads.setdefault(int(parts[4]), {})
        if parts[5] == "comm":
            thread["name"] = value
        elif parts[5] == "schedstat":
            fields = value.split()
            if len(fields) >= 2 and fields[0].isdigit() and fields[1].isdigit():
                thread["cpu_ns"], thread["delay_ns"] = int(fields[0]), int(fields[1])
    return {tid: t for tid, t in threads.items() if {"name", "cpu_ns", "delay_ns"} <= t.keys()}


def group(name: str) -> str:
    return "request threads" if REQUEST_THREAD.match(name) else NUMBERED.sub("", name) or name


def _row(name: str, threads: int, cpu_ns: int, delay_ns: int, seconds: float) -> dict:
    cpu_s, delay_s = cpu_ns / 1e9, delay_ns / 1e9
    runnable = cpu_s + delay_s
    return {"name": name, "threads": threads, "cpu_s": round(cpu_s, 3), "run_delay_s": round(delay_s, 3),
            "off_cpu_s": round(max(0.0, threads * seconds - runnable), 3),
            "run_delay_share": round(delay_s / runnable, 3) if runnable else None}


def table(before: str, after: str, seconds: float, top: int) -> dict:
    """The step's thread time over `seconds` (thread_seconds): `thread_time` rows {name, threads, cpu_s, run_delay_s, off_cpu_s, run_delay_share}
    per group of threads, ordered by the time they were runnable (on a CPU or waiting for one), and the request
    threads' row alone as `request_threads` (None where the JVM has none by Tomcat's names). A thread started during
    the step counts from zero and is taken to have lived the whole step (its off-CPU time is then an upper
    bound); one that ended is lost."""
    start, end = parse(before), parse(after)
    sums: dict[str, list[int]] = {}
    for tid, now in end.items():
        then = start.get(tid) if start.get(tid, {}).get("name") == now["name"] else None
        cpu = now["cpu_ns"] - (then["cpu_ns"] if then else 0)
        delay = now["delay_ns"] - (then["delay_ns"] if then else 0)
        found = sums.setdefault(group(now["name"]), [0, 0, 0])
        found[0] += 1
        found[1] += max(0, cpu)
        found[2] += max(0, delay)
    rows = [_row(name, *figures, seconds) for name, figures in sums.items()]
    rows.sort(key=lambda r: (-(r["cpu_s"] + r["run_delay_s"]), r["name"]))
    request = next((r for r in rows if r["name"] == "request threads"), None)
    return {"thread_time": rows[:top], "thread_seconds": round(seconds, 3),
            "request_threads": request and {**request, "seconds": round(seconds, 3)}}

"""The step's thread time from two readings of the kernel's per-thread accounting (capbench/profiling/thread_time.py)."""
import os
import subprocess
import threading
import time

from capbench.hosts import thread_times
from capbench.profiling import thread_time

BEFORE = """/proc/7/task/7/comm:java
/proc/7/task/7/schedstat:1000000 0 3
/proc/7/task/31/comm:http-exec-1
/proc/7/task/31/schedstat:1000000000 500000000 100
/proc/7/task/32/comm:http-exec-2
/proc/7/task/32/schedstat:2000000000 1000000000 200
/proc/7/task/12/comm:GC Thread#0
/proc/7/task/12/schedstat:300000000 100000000 50
/proc/7/task/40/comm:http-nio-8080-P
/proc/7/task/40/schedstat:10000000 1000000 9
"""
# Ten seconds later: the request threads ran 1.5 s and 1 s and waited 4.5 s and 3 s for a CPU; a third one
# started during the step; GC's thread ran 0.2 s; the poller barely; thread 7's schedstat was not read.
AFTER = """/proc/7/task/7/comm:java
/proc/7/task/31/comm:http-exec-1
/proc/7/task/31/schedstat:2500000000 5000000000 900
/proc/7/task/32/comm:http-exec-2
/proc/7/task/32/schedstat:3000000000 4000000000 800
/proc/7/task/33/comm:http-exec-3
/proc/7/task/33/schedstat:500000000 500000000 80
/proc/7/task/12/comm:GC Thread#0
/proc/7/task/12/schedstat:500000000 150000000 70
/proc/7/task/40/comm:http-nio-8080-P
/proc/7/task/40/schedstat:20000000 2000000 19
grep: /proc/7/task/41/comm: No such file or directory
"""


def test_request_threads_are_tomcats_executors_by_their_kernel_names():
    assert thread_time.group("http-exec-12") == thread_time.group("http-exec-1") == "request threads"  # the nodes'
    assert thread_time.group("http-nio-8080-e") == thread_time.group("http-nio-80-exe") == "request threads"
    assert thread_time.group("https-jsse-nio-") != "request threads"  # no port: Tomcat's names say which
    assert thread_time.group("http-nio-8080-P") == "http-nio-8080-P"  # the poller
    assert thread_time.group("GC Thread#1") == "GC Thread" and thread_time.group("C2 CompilerThre") == "C2 CompilerThre"


def test_the_steps_time_per_group_is_the_difference_of_the_two_readings():
    found = thread_time.table(BEFORE, AFTER, 10.0, top=10)
    rows = {r["name"]: r for r in found["thread_time"]}
    assert set(rows) == {"request threads", "GC Thread", "http-nio-8080-P"}  # thread 7: no schedstat at the end
    request = found["request_threads"]
    assert request == {"name": "request threads", "threads": 3, "cpu_s": 3.0, "run_delay_s": 8.0,
                       "off_cpu_s": 19.0, "run_delay_share": 0.727, "seconds": 10.0}
    assert rows["GC Thread"] == {"name": "GC Thread", "threads": 1, "cpu_s": 0.2, "run_delay_s": 0.05,
                                 "off_cpu_s": 9.75, "run_delay_share": 0.2}
    assert [r["name"] for r in found["thread_time"]][0] == "request threads"  # most runnable time first
    assert thread_time.table(BEFORE, AFTER, 10.0, top=1)["thread_time"] == [rows["request threads"]]


def test_a_tid_reused_by_another_thread_counts_from_zero_and_a_jvm_without_tomcat_has_no_request_row():
    reused = BEFORE.replace("/proc/7/task/12/comm:GC Thread#0", "/proc/7/task/12/comm:Reference Handl")
    rows = {r["name"]: r for r in thread_time.table(reused, AFTER, 10.0, top=10)["thread_time"]}
    assert rows["GC Thread"]["cpu_s"] == 0.5
    plain = "\n".join(line for line in AFTER.splitlines() if "/task/3" not in line)
    assert thread_time.table(plain, plain, 10.0, top=10)["request_threads"] is None
    assert thread_time.parse("not a line\n/proc/x/task/y/comm:a\n/proc/7/task/8/schedstat:1 x 2\n") == {}


def test_this_machines_kernel_counts_a_busy_threads_cpu_time_between_two_readings(monkeypatch):
    """capbench/hosts/thread_times.py's command run here on this test's own process: a thread named as a request thread
    that spins 0.3 s of CPU is found with that time (and the readings parse as the kernel writes them)."""
    class ThisMachine:
        def exec(self, node, argv, check=True, timeout=None):
            return subprocess.run(argv, capture_output=True, check=check, timeout=timeout)

    monkeypatch.setattr(thread_times, "backend", ThisMachine)
    go, done, named, release = (threading.Event() for _ in range(4))

    def spin():
        with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as comm:
            comm.write("http-exec-1")  # the kernel's name for the thread, as a JVM sets its threads'
        named.set()
        go.wait()
        until = time.thread_time() + 0.3
        while time.thread_time() < until:
            pass
        done.set()
        release.wait()  # alive at the second reading

    worker = threading.Thread(target=spin)
    worker.start()
    named.wait(timeout=30)
    try:
        before = thread_times.read("here", str(os.getpid()))
        go.set()
        done.wait(timeout=30)
        after = thread_times.read("here", str(os.getpid()))
    finally:
        go.set()
        release.set()
        worker.join(timeout=30)
    found = thread_time.table(before[1], after[1], after[0] - before[0], top=50)
    request = found["request_threads"]
    assert request is not None, found["thread_time"]
    assert request["threads"] == 1 and 0.29 <= request["cpu_s"] <= 0.6, request
    assert after[0] > before[0]

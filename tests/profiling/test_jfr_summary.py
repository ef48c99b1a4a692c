"""The profile's reading of a real recording: a small program (Contended.java) recorded by the JDK's own Flight
Recorder, started and written by capbench/hosts/jfr.py as on a node, then read by JfrSummary.java and drawn by the
converter."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from capbench.hosts import jfr
from capbench.profiling import summary

PROGRAM = Path(__file__).resolve().parent / "Contended.java"


WHOLE = (0.0, 4e9)  # epoch seconds: any event of the recording


class ThisMachine:
    """The backend's exec, run here: the JDK's jcmd for jattach (both send the JVM the same diagnostic command),
    so that capbench/hosts/jfr.py starts and stops the recording as it does on a node."""

    def exec(self, node, argv, check=True, timeout=None):
        if argv[0] == "jattach":
            argv = ["jcmd", argv[1], *argv[3:]]
        return subprocess.run(argv, capture_output=True, check=check, timeout=timeout)


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("jfr") / "contended.jfr"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jfr, "backend", ThisMachine)
        program = subprocess.Popen(["java", str(PROGRAM)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert program.stdout.readline().strip() == "ready"
            pid = str(program.pid)
            jfr.prime("here", pid)
            jfr.start("here", pid, "contended")
            program.stdin.write("go\n")
            program.stdin.flush()
            assert program.stdout.readline().strip() == "done"
            path.write_bytes(jfr.stop("here", pid, "contended"))
        finally:
            program.stdin.close()
            program.wait(timeout=60)
    return path


@pytest.fixture(scope="module")
def cpu_stacks(recording) -> Path:
    return recording.with_name("contended-cpu.collapsed")


@pytest.fixture(scope="module")
def tables(recording, cpu_stacks) -> dict:
    return summary.summarize(recording, WHOLE, cpu_stacks)


def names(rows: list[dict]) -> list[str]:
    return [r["name"] for r in rows]


def test_the_cpu_samples_name_the_method_that_spins(tables):
    assert tables["cpu_samples"] > 50 and 2 <= tables["seconds"] < 30  # the program runs two seconds
    assert tables["cpu_self"][0]["name"] == "Contended.spin"
    total = {r["name"]: r["count"] for r in tables["cpu_total"]}
    # work() calls spin(): every sample in spin is in work's total too, and no sample counts a method twice
    assert total["Contended.work"] >= total["Contended.spin"] > tables["cpu_samples"] / 2
    assert max(total.values()) <= tables["cpu_samples"]
    # The application's methods (neither the JDK's nor the server's) counted apart: the program's own.
    own = {r["name"]: r["count"] for r in tables["cpu_application"]}
    assert own["Contended.spin"] == total["Contended.spin"] and not any(n.startswith("java.") for n in own)


def test_the_monitor_waited_on_and_the_parks_blocker_are_named_by_class(tables):
    monitor = tables["monitors_ms"][0]
    assert monitor["name"] == "Contended$Shared"
    assert monitor["count"] > 10 and monitor["total"] > monitor["largest"] >= 10  # ms, above the threshold
    assert "Contended$Borrow" in names(tables["parks_ms"])
    # Each wait's stack starts in the code that waited, the JDK's parking machinery left out.
    assert monitor["stack"][0] == "Contended.work"
    park = next(r for r in tables["parks_ms"] if r["name"] == "Contended$Borrow")
    assert park["stack"][0] == "Contended.work"
    # The executor's thread without a task is idle, not waiting for a resource: counted apart.
    assert tables["idle_parks"] >= 1
    assert "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject" not in names(tables["parks_ms"])


def test_allocation_exceptions_and_gc_are_counted(tables):
    # Each Payload holds a byte[4096], by far the most bytes (array classes written as Java writes them).
    assert tables["allocation_bytes"][0]["name"] == "byte[]"
    thrown = tables["exceptions"][0]
    assert thrown["name"] == "java.lang.IllegalStateException" and thrown["count"] > 10
    assert thrown["stack"][0] == "Contended.work"  # where it was thrown, the constructor's frames left out
    # Counted between the first and the last of the JVM's periodic counts (each second), so fewer than thrown.
    assert 0 < tables["throwables_created"] <= thrown["count"]
    assert tables["gc_pauses_ms"] and tables["gc_pauses_ms"][0]["count"] >= 1


def test_live_objects_are_named_by_what_holds_them_on_their_path_from_a_gc_root(tables):
    # The Kept arrays the registry keeps: their paths (written when the recording was) pass through the JDK's list
    # to the Registry, held by Contended's static field; the Payloads died young and are gone from the samples.
    held = tables["held_by"][0]
    assert tables["old_objects"] >= held["count"] >= 5
    assert held["name"] == "Contended$Kept <- Contended$Registry"
    assert held["stack"][:2] == ["byte[]", "Contended$Kept.bytes"]
    assert "Contended$Registry.kept" in held["stack"] and held["stack"][-1].startswith("GC root: ")


def test_the_cpu_graphs_stacks_are_the_tables_samples_root_first(tables, cpu_stacks):
    # One line a stack, its count last: the samples the tables count, and no others (the JDK's native-method
    # samples, such as the main thread waiting on its input, are not CPU).
    lines = [line.rsplit(" ", 1) for line in cpu_stacks.read_text().splitlines()]
    assert sum(int(count) for _, count in lines) == tables["cpu_samples"]
    # Each frame marked with how it ran (compiled, inlined, interpreted: the graph's colours).
    spinning = [[re.sub(r"_\[[0ij]\]$", "", f) for f in frames.split(";")] for frames, _ in lines
                if re.search(r";Contended\.spin_\[[0ij]\]$", frames)]
    assert spinning and all(frames.index("Contended.work") < len(frames) - 1 for frames in spinning)


def test_flame_graphs_are_pages_that_name_the_program(recording, cpu_stacks, tables, tmp_path):
    drawn = summary.flame_graphs(recording, WHOLE, cpu_stacks, lambda kind: tmp_path / f"contended-{kind}.html", "a test")
    assert set(drawn) == {"cpu", "alloc", "lock"}
    cpu = (tmp_path / drawn["cpu"]).read_text()
    # The pages keep their names prefix-compressed ("Contended.work", then a mark and "spin"): the ends are whole.
    assert cpu.startswith("<!DOCTYPE html>") and "spin'" in cpu and "a test: cpu" in cpu
    assert "Shared'" in (tmp_path / drawn["lock"]).read_text()


def test_only_the_window_asked_for_is_read(recording, tmp_path):
    # A window in 2001 (epoch seconds): nothing of this recording ended in it.
    before = (1e9, 1e9 + 1)
    stacks = tmp_path / "empty-cpu.collapsed"
    assert summary.summarize(recording, before, stacks)["cpu_samples"] == 0 and stacks.read_text() == ""
    drawn = summary.flame_graphs(recording, before, stacks, lambda kind: tmp_path / f"empty-{kind}.html", "a test")
    assert "spin'" not in (tmp_path / drawn["cpu"]).read_text()
    assert "Shared'" not in (tmp_path / drawn["lock"]).read_text()


def test_a_file_that_is_not_a_recording_is_a_clear_error(tmp_path):
    bad = tmp_path / "not.jfr"
    bad.write_text("no recording here")
    with pytest.raises(summary.ProfileError, match="not.jfr"):
        summary.summarize(bad, WHOLE, tmp_path / "not-cpu.collapsed")


# The first rows of a node's `jattach PID jcmd GC.class_histogram` (captured from node1 of the cluster, after a
# bench), and rows further down (from a session bench's histogram).
HISTOGRAM = """\
Connected to remote JVM
JVM response code = 0
 num     #instances         #bytes  class name (module)
-------------------------------------------------------
   1:         53850        5464808  [B (java.base@17.0.21.1)
   2:           745        1457272  [C (java.base@17.0.21.1)
   3:         51444        1234656  java.lang.String (java.base@17.0.21.1)
   8:           245         427184  [Ljava.util.concurrent.ConcurrentHashMap$Node; (java.base@17.0.21.1)
   9:          7433         409344  [Ljava.lang.Object; (java.base@17.0.21.1)
  14:          5003         240144  org.apache.tomcat.util.buf.ByteChunk
  17:          2000         176000  org.apache.catalina.session.StandardSession
  19:          3954          94896  java.util.concurrent.ConcurrentHashMap$Node (java.base@17.0.21.1)
 700:             1            152  org.apache.catalina.session.StandardManager
"""


def test_heap_holders_are_read_in_the_histograms_order_with_arrays_named_as_java_does():
    holders = summary.heap_holders(HISTOGRAM, top=4)
    assert holders == [{"name": "byte[]", "instances": 53850, "bytes": 5464808},
                       {"name": "char[]", "instances": 745, "bytes": 1457272},
                       {"name": "java.lang.String", "instances": 51444, "bytes": 1234656},
                       {"name": "java.util.concurrent.ConcurrentHashMap$Node[]", "instances": 245, "bytes": 427184}]
    # Below the JDK's arrays and strings, the server's own objects: its buffers, the session manager and its
    # sessions (a WORKLOAD=session bench of 2000 users, 2026-11-27).
    assert summary.heap_holders(HISTOGRAM, top=3, not_the_jdks=True) == [
        {"name": "org.apache.tomcat.util.buf.ByteChunk", "instances": 5003, "bytes": 240144},
        {"name": "org.apache.catalina.session.StandardSession", "instances": 2000, "bytes": 176000},
        {"name": "org.apache.catalina.session.StandardManager", "instances": 1, "bytes": 152}]
    assert summary.readable("[[J") == "long[][]" and summary.readable("[Ljava.lang.Object;") == "java.lang.Object[]"

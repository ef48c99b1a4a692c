"""The CPU profile tells the truth: a small program (Hot.java) whose time goes to one named method doing what v3
does, sampled by async-profiler as capbench/hosts/cpu_profiler.py does on a node (the JDK's jcmd loads the agent here, as
jattach does there), then read into the tables (capbench/profiling/stacks.py)."""
from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from capbench.analysis import profile_facts
from capbench.hosts import cpu_profiler
from capbench.profiling import stacks
from capbench.profiling.names import own_prefixes
from capbench.rundata.layout import ROOT

PROGRAM = Path(__file__).resolve().parent / "Hot.java"
LIBRARY = ROOT / ".capbench" / "tools" / "async-profiler" / "libasyncProfiler.so"  # the Makefile's


class ThisMachine:
    """The backend's exec, run here: jcmd's JVMTI.agent_load for jattach's load (both ask the JVM to load an agent
    with its options; jcmd's own parser takes key=value apart unless the options are quoted)."""

    def exec(self, node, argv, check=True, timeout=None):
        if argv[:1] == ["jattach"] and argv[2] == "load":
            argv = ["jcmd", argv[1], "JVMTI.agent_load", argv[3], f'"{argv[5]}"']
        return subprocess.run(argv, capture_output=True, check=check, timeout=timeout)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> tuple[str, str, bytes, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cpu_profiler, "backend", ThisMachine)
        patch.setattr(cpu_profiler, "LIBRARY", str(LIBRARY))
        program = subprocess.Popen(["java", str(PROGRAM)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert program.stdout.readline().strip() == "ready"
            pid = str(program.pid)
            event = cpu_profiler.start("here", pid, 1_000_000)
            program.stdin.write("go\n")
            program.stdin.flush()
            assert program.stdout.readline().strip() == "done"
            collapsed, cpu_ns, page = cpu_profiler.stop("here", pid, f"capbench-test-{pid}", "Hot at 2 threads")
        finally:
            program.stdin.close()
            program.wait(timeout=60)
    return event, collapsed, page, cpu_ns


def test_the_named_hot_method_is_the_top_application_frame(sampled):
    event, collapsed, _, cpu_ns = sampled
    assert event in cpu_profiler.EVENTS
    tables = stacks.tables(collapsed, 10, cpu_ns)
    # Two threads of 1.5 s of CPU time each at a sample a millisecond of it: thousands, enough to rank (besides
    # them, the JIT compiler's threads, which a busy machine makes a larger share: the shares below are of the
    # program's own samples).
    assert tables["cpu_samples"] >= stacks.MIN_TO_RANK and tables["cpu_ranked"], tables["cpu_samples"]
    own = sum(r["count"] for r in tables["cpu_application_self"])
    # The application's innermost frame: Hot.grind holds most of the program's samples (StringBuilder's copies
    # and the JIT's stubs under it); the allocated bytes' native call, after it, few.
    top = tables["cpu_application_self"][0]
    assert top["name"] == "Hot.grind" and top["count"] > 0.8 * own, tables["cpu_application_self"]
    assert profile_facts.hottest_application(tables).endswith(" in Hot.grind")
    native = sum(r["count"] for r in tables["cpu_total"] if "getCurrentThreadAllocatedBytes" in r["name"])
    assert native < 0.1 * own, tables["cpu_total"]
    # Weighed by the CPU time each sample stood for: at least the interval each (a millisecond), about 3 s for the
    # two threads' 1.5 s each, and the same method on top.
    assert tables["cpu_time_ms"] >= tables["cpu_samples"] * 0.99 and top["total"] > 0.8 * sum(
        r["total"] for r in tables["cpu_application_self"]), (tables["cpu_time_ms"], tables["cpu_application_self"])


def test_its_own_flame_graph_is_a_page(sampled):
    _, _, page, _ = sampled
    # The page keeps its frames' names in pieces ("Hot", "grind"); its heading is the title given.
    assert page.startswith(b"<!DOCTYPE html>") and b"<h1>Hot at 2 threads" in page and b"grind" in page


def test_too_few_samples_rank_nothing():
    few = "java/lang/Thread.run_[j];Hot.work_[j];Hot.grind_[j] 40\njava/lang/Thread.run_[j];Hot.work_[j] 2\n"
    tables = stacks.tables(few, 10)
    assert tables["cpu_samples"] == 42 and not tables["cpu_ranked"]
    assert profile_facts.hottest(tables).startswith("too few CPU samples to rank (42, fewer than 300")
    assert profile_facts.hottest_application(tables) is None


def test_collapsed_frames_are_named_as_the_jdks_reader_names_them():
    text = ("java/lang/Thread.run_[j];capbench/web/GrindServlet.doGet_[j];capbench/grinder/ReusingGrinder.grind_[j];"
            "java/lang/AbstractStringBuilder.append_[i];jshort_disjoint_arraycopy 70\n"
            "java/lang/Thread.run_[j];org/apache/tomcat/util/net/NioEndpoint$Poller.run_[j];epoll_wait;"
            "finish_task_switch.isra.0_[k] 20\n"
            "start_thread;CompileBroker::compiler_thread_loop;Compile::Optimize 10\nbroken line\n")
    tables = stacks.tables(text, 10)
    assert tables["cpu_samples"] == 100
    assert [r["name"] for r in tables["cpu_self"]] == ["jshort_disjoint_arraycopy", "finish_task_switch.isra.0_[k]",
                                                      "Compile::Optimize"]
    # The application's own methods: not the JDK's, not the server's, not native; innermost, the Grinder's.
    assert [(r["name"], r["count"]) for r in tables["cpu_application"]] == [
        ("capbench.grinder.ReusingGrinder.grind", 70), ("capbench.web.GrindServlet.doGet", 70)]
    assert [(r["name"], r["count"]) for r in tables["cpu_application_self"]] == [
        ("capbench.grinder.ReusingGrinder.grind", 70)]


def test_each_method_is_weighed_by_the_cpu_time_its_samples_stood_for():
    """The same profile dumped twice, as samples and as each sample's CPU time: a sample the quota delayed stands
    for more than the interval, so the tables order and share by CPU time and keep the samples beside it."""
    samples = ("java/lang/Thread.run_[j];capbench/grinder/Hot.grind_[j] 300\n"
               "java/lang/Thread.run_[j];capbench/grinder/Hot.copy_[j] 200\n")
    cpu_ns = ("java/lang/Thread.run_[j];capbench/grinder/Hot.grind_[j] 300000000\n"
              "java/lang/Thread.run_[j];capbench/grinder/Hot.copy_[j] 900000000\n")
    tables = stacks.tables(samples, 10, cpu_ns)
    assert tables["cpu_samples"] == 500 and tables["cpu_time_ms"] == 1200.0
    assert [(r["name"], r["count"], r["total"]) for r in tables["cpu_self"]] == [
        ("capbench.grinder.Hot.copy", 200, 900.0), ("capbench.grinder.Hot.grind", 300, 300.0)]
    assert profile_facts.hottest(tables) == "75 % of 1.2 s of CPU time (500 samples) in capbench.grinder.Hot.copy"
    # Without the CPU time, the samples are the weight.
    plain = stacks.tables(samples, 10)
    assert "cpu_time_ms" not in plain and plain["cpu_self"][0] == {"name": "capbench.grinder.Hot.grind",
                                                                   "count": 300, "total": 300}


def test_the_services_own_code_is_told_from_its_framework_by_the_archives_own_classes(tmp_path):
    """A Spring Boot JAR keeps its own classes in BOOT-INF/classes, its libraries in BOOT-INF/lib (a WAR in
    WEB-INF/classes and WEB-INF/lib): the framework's filters are on every stack, so the application's table is
    theirs, and the own table names the service's methods under them."""
    jar = tmp_path / "orders.jar"
    with zipfile.ZipFile(jar, "w") as zipped:
        for name in ("BOOT-INF/classes/shop/orders/OrdersController.class", "BOOT-INF/classes/shop/orders/db/Q.class",
                     "BOOT-INF/classes/shop/Main.class", "BOOT-INF/classes/application.properties",
                     "BOOT-INF/lib/spring-web.jar", "org/springframework/boot/loader/launch/JarLauncher.class"):
            zipped.writestr(name, b"")
    own = own_prefixes(str(jar))
    assert own == ("shop.",)
    spring = ("java/lang/Thread.run_[j];org/springframework/web/filter/OncePerRequestFilter.doFilter_[j];"
              "org/springframework/web/servlet/DispatcherServlet.doDispatch_[j]")
    text = (f"{spring};shop/orders/OrdersController.orders_[j];org/postgresql/core/PGStream.receive_[j] 200\n"
            f"{spring};org/springframework/http/converter/json/Jackson.write_[j] 250\n")
    tables = stacks.tables(text, 10, own=own)
    assert tables["cpu_application"][0]["name"] == "org.springframework.web.filter.OncePerRequestFilter.doFilter"
    assert [(r["name"], r["count"]) for r in tables["cpu_own"]] == [("shop.orders.OrdersController.orders", 200)]
    assert profile_facts.hottest_own(tables) == "its own code: 44 % under shop.orders.OrdersController.orders"
    assert stacks.tables(text, 10)["cpu_own"] == [] and own_prefixes(str(tmp_path / "missing.jar")) == ()

"""The profile at a capacity: once a target's capacity is found, more steps at that rate, not counted in its
search, in pairs: one as the search measured it, one with JDK Flight Recorder recording on every node in
rotation, and async-profiler sampling its CPU (CPU_PROFILER=async: capbench/hosts/cpu_profiler.py). What the second lost
against the first (achieved rate, p99) is the profile's overhead, measured; the first pair's recordings are kept
(.jfr, for Mission Control; the CPU samples' stacks and async-profiler's flame graph), summarized into tables and
drawn as flame graphs; after the load has stopped, each node's heap is counted by class (a full collection:
never during a step)."""
from __future__ import annotations

import statistics
import subprocess
import time
from typing import Callable

from capbench.analysis import profile_facts
from capbench.engine.progress import say
from capbench.hosts import cpu_profiler, jfr, jvm, thread_times, topology
from capbench.hosts.backend import ClusterError
from capbench.hosts.topology import ROOT
from capbench.profiling import stacks as cpu_stacks, summary as read, thread_time
from capbench.profiling.names import own_prefixes
from capbench.rundata.records import StepRecord
from capbench.rundata.run import RunRecord, node_cpus

# A JVM's first recording loads the recorder (1.8 s on an idle node of half a core), and its code is compiled
# as its events first fire: steps for about half a minute after it were slower (an unprofiled step at v3's
# capacity achieved 490 of 890/s). Each node records once before the search (load_recorders), whose warm-up
# absorbs that, and each step of a pair starts this long after the recorder was last started.
SETTLE_S = 3
SAMPLES_WANTED = 3000  # CPU samples a profiled step aims at (CPU_PROFILER_INTERVAL_US=auto)
MIN_INTERVAL_NS = 1_000_000  # the kernel's CPU-time timers tick no finer than a millisecond or a few


def load_recorders(nodes: tuple[str, ...]) -> None:
    """Loads the recorder of each node's JVM (what cannot be loaded is said by the profile step, which tries
    again)."""
    _primed(nodes, [])


def wanted(settings, kind) -> bool:
    """Whether the run profiles at each capacity: JFR, auto meaning the kind's default."""
    mode = settings.jfr.at_capacity
    return kind.needs.profiles_by_default if mode == "auto" else mode == "on"


def _step_figures(record: StepRecord) -> dict:
    return {"step": record.step, "passed": record.passed, "achieved_rps": record.result.achieved_rps,
            "answered_ok": record.result.responses - record.result.errors.get("status", 0),
            "p99_ms": record.result.latency_ms.get("p99")}


def overhead(unprofiled: dict, profiled: dict) -> dict:
    """The profiled step against its unprofiled twin at the same rate: achieved and p99, as ratios."""
    def ratio(key: str) -> float | None:
        a, b = unprofiled.get(key), profiled.get(key)
        return round(b / a, 3) if a and b is not None else None
    return {"achieved_ratio": ratio("achieved_rps"), "p99_ratio": ratio("p99_ms")}


def profile_at_capacity(bench, target: str, label: str) -> None:
    """`label`'s profile at its capacity, on the nodes in rotation for `target` (profile, below)."""
    capacity = bench.capacity(label)
    if not capacity:
        return
    seconds = bench.settings.jfr.seconds
    profile(bench, capacity, {label: topology.IN_ROTATION[target]}, lambda phase: {
        label: bench.steps.measure(target, 0, capacity, phase, label=label, duration_s=seconds)})


def profile(bench, rate: float, nodes_of: dict[str, tuple[str, ...]],
            measure: Callable[[str], dict[str, StepRecord]], top: int = read.TOP) -> None:
    """JFR_PAIRS pairs of steps at `rate`, an unprofiled and a profiled one, their order alternating (unprofiled
    first, then profiled first, ...) so that a drift of the machine favours neither. `measure(phase)` measures
    one step of every label in nodes_of (their records by label; a duet measures two builds' slots at once),
    and each label's nodes record while it is profiled. The first profiled step's recordings are kept and
    read (tables of `top` rows), the later ones' discarded; bench.profiles[label]. A node whose JVM
    refuses to record is said and left out; the steps are recorded whatever happens."""
    own = bench.settings.jfr
    problems: list[tuple[str, str]] = []  # (node, what went wrong)
    pids = _primed(tuple(node for nodes in nodes_of.values() for node in nodes), problems)
    pairs: dict[str, list[dict]] = {label: [] for label in nodes_of}
    read_nodes: dict[str, dict] = {}
    for number in range(own.pairs):
        pair: dict[str, dict] = {label: {} for label in nodes_of}
        for phase in ("unprofiled", "profiled") if number % 2 == 0 else ("profiled", "unprofiled"):
            name = f"capbench-pair-{number + 1}"
            recording = _started(pids, name, problems) if phase == "profiled" else {}
            sampling: dict[str, dict] = {}
            kept = phase == "profiled" and number == 0  # the recordings read
            try:
                time.sleep(SETTLE_S)  # before either step: the two start alike
                if phase == "profiled" and own.cpu == "async":
                    sampling = _sampling(bench, pids, problems)
                started = _thread_times(recording if kept else {}, problems)
                records = measure(phase)
                ended = _thread_times({node: recording[node] for node in started}, problems)
            except BaseException:  # interrupted or failed: no recording left running on a node
                for node, pid in recording.items():
                    _discarded(node, pid, name, problems)
                _sampled(sampling, pids, name, "", problems)
                raise
            sampled = _sampled(sampling, pids, name, f"{rate:g}/s", problems)
            for label, record in records.items():
                pair[label][phase] = _step_figures(record)
            for label, nodes in nodes_of.items():
                for node in (n for n in nodes if n in recording):
                    if kept:
                        read_nodes[node] = _read_node(bench, node, recording[node], name, records[label],
                                                      f"{label} at {rate:g}/s", problems, top, sampled.get(node),
                                                      (started.get(node), ended.get(node)))
                    else:
                        _discarded(node, recording[node], name, problems)
        for label, figures in pair.items():
            pairs[label].append({**figures, "overhead": overhead(figures["unprofiled"], figures["profiled"])})
    for label, nodes in nodes_of.items():
        own_pairs = pairs[label]
        found = {"offered_rps": rate, "seconds": own.seconds, "unprofiled": own_pairs[0]["unprofiled"],
                 "profiled": own_pairs[0]["profiled"], "pairs": own_pairs, "overhead": overall(own_pairs),
                 "nodes": {node: read_nodes[node] for node in nodes if node in read_nodes},
                 "problems": [f"{node}: {text}" for node, text in problems if node in nodes]}
        bench.profiles[label] = found
        say(f"{label} profiled at {rate:g}/s: {describe_overhead(found['overhead'])}"
            + (f"; {'; '.join(found['problems'])}" if found["problems"] else ""))
        for node, read_ in found["nodes"].items():
            if read_.get("tables"):
                say(f"  {node}: {profile_facts.headline(read_['tables'])}")


def overall(pairs: list[dict]) -> dict:
    """The overhead over the pairs: the median of each ratio, and the lowest and highest."""
    out: dict = {"pairs": len(pairs)}
    for key in ("achieved_ratio", "p99_ratio"):
        values = [p["overhead"][key] for p in pairs if p["overhead"][key] is not None]
        out[key] = round(statistics.median(values), 3) if values else None
        out[key.replace("ratio", "range")] = [min(values), max(values)] if values else None
    return out


def describe_overhead(found: dict) -> str:
    """'achieved 0.98× and p99 1.2× the unprofiled step's', with the pairs' median and range where several, and
    what a costly profile means for its tables (capbench/analysis/profile_facts.py)."""
    if found["pairs"] == 1:
        text = f"achieved {found['achieved_ratio']}× and p99 {found['p99_ratio']}× the unprofiled step's"
    else:
        def shown(key: str) -> str:
            low_high = found[key.replace("ratio", "range")]
            return f"{found[key]}×" + (f" ({low_high[0]}–{low_high[1]})" if low_high else "")
        text = (f"achieved {shown('achieved_ratio')} and p99 {shown('p99_ratio')} the unprofiled step's "
                f"(median of {found['pairs']} pairs, their order alternating; lowest–highest)")
    cost = profile_facts.overhead_cost(found)
    return f"{text}: {cost}" if cost else text


def _primed(nodes: tuple[str, ...], problems: list[tuple[str, str]]) -> dict[str, str]:
    """Each node's JVM pid, its recorder loaded (capbench/hosts/jfr.py's prime)."""
    pids: dict[str, str] = {}
    for node in nodes:
        try:
            pid = jvm.java_pid(node)
            jfr.prime(node, pid)
            pids[node] = pid
        except (ClusterError, OSError, subprocess.TimeoutExpired) as problem:
            problems.append((node, f"not recorded: {problem}"))
    return pids


def _started(pids: dict[str, str], name: str, problems: list[tuple[str, str]]) -> dict[str, str]:
    """The nodes whose recording `name` started."""
    started = {}
    for node, pid in pids.items():
        try:
            jfr.start(node, pid, name)
            started[node] = pid
        except (ClusterError, OSError, subprocess.TimeoutExpired) as problem:
            problems.append((node, f"not recorded: {problem}"))
    return started


def _thread_times(pids: dict[str, str], problems: list[tuple[str, str]]) -> dict[str, tuple[float, str]]:
    """Each node's JVM threads' CPU time and run delay now (capbench/hosts/thread_times.py)."""
    found = {}
    for node, pid in pids.items():
        try:
            found[node] = thread_times.read(node, pid)
        except (ClusterError, OSError, subprocess.TimeoutExpired) as problem:
            problems.append((node, f"no thread time: {problem}"))
    return found


def _discarded(node: str, pid: str, name: str, problems: list[tuple[str, str]]) -> None:
    try:
        jfr.discard(node, pid, name)
    except (ClusterError, OSError, subprocess.TimeoutExpired) as problem:
        problems.append((node, str(problem)))


def _interval_ns(bench, node: str) -> int:
    """CPU_PROFILER_INTERVAL_US, or about SAMPLES_WANTED samples over the step at the node's quota."""
    own = bench.settings.jfr
    if own.cpu_interval_us:
        return own.cpu_interval_us * 1000
    cores = node_cpus(RunRecord.read(bench.paths.run_json)).get(node, 1.0) if bench.paths.run_json.exists() else 1.0
    return max(MIN_INTERVAL_NS, round(cores * own.seconds * 1e9 / SAMPLES_WANTED))


def _sampling(bench, pids: dict[str, str], problems: list[tuple[str, str]]) -> dict[str, dict]:
    """async-profiler started on each node: its event and interval, or why not (that node's CPU table is JFR's).
    One interval for every node profiled together, the finest any of them needs: a sample then stands for the same
    CPU time on each, so a duet's two builds (and a cluster's nodes) compare sample for sample."""
    sampling = {}
    interval = min((_interval_ns(bench, node) for node in pids), default=MIN_INTERVAL_NS)
    for node, pid in pids.items():
        try:
            sampling[node] = {"by": "async-profiler", "event": cpu_profiler.start(node, pid, interval),
                              "interval_us": interval // 1000}
        except (ClusterError, OSError, subprocess.TimeoutExpired) as problem:
            sampling[node] = {"by": "JFR", "why": f"async-profiler did not start: {problem}"}
            problems.append((node, f"its CPU table is JFR's: {sampling[node]['why']}"))
    return sampling


def _sampled(sampling: dict[str, dict], pids: dict[str, str], name: str, title: str,
             problems: list[tuple[str, str]]) -> dict[str, dict]:
    """Each node's sampler stopped: what started it, with its stacks and flame graph (or why none)."""
    sampled = {}
    for node, started in sampling.items():
        if started["by"] != "async-profiler":
            sampled[node] = started
            continue
        try:
            collapsed, cpu_ns, page = cpu_profiler.stop(node, pids[node], name, f"{node} at {title}: cpu")
            sampled[node] = {**started, "collapsed": collapsed, "cpu_ns": cpu_ns, "page": page}
        except (ClusterError, OSError, subprocess.TimeoutExpired) as problem:
            sampled[node] = {"by": "JFR", "why": f"async-profiler's samples were lost: {problem}"}
            problems.append((node, f"its CPU table is JFR's: {sampled[node]['why']}"))
    return sampled


def _cpu_from_sampler(bench, stem: str, sampled: dict, out: dict, top: int) -> None:
    """The CPU tables and graph from async-profiler's samples in place of JFR's; how they were sampled, or why
    they are JFR's."""
    out["cpu_profiler"] = {k: v for k, v in sampled.items() if k not in ("collapsed", "cpu_ns", "page")}
    if sampled["by"] != "async-profiler":
        return
    bench.paths.profile_file(stem, "-cpu.collapsed").write_text(sampled["collapsed"])
    bench.paths.profile_file(stem, "-cpu-ns.collapsed").write_text(sampled["cpu_ns"])
    bench.paths.profile_file(stem, "-cpu.html").write_bytes(sampled["page"])
    out["tables"].update(cpu_stacks.tables(sampled["collapsed"], top, sampled["cpu_ns"], _own_code(bench)))
    out["flame_graphs"]["cpu"] = bench.paths.profile_file(stem, "-cpu.html").name


def _own_code(bench) -> tuple[str, ...]:
    """The packages of the application's own classes (a Spring Boot JAR's or a WAR's; capbench/profiling/names.py), from
    the cluster's APP_JAR or APP_WAR."""
    settings = bench.cluster_settings()
    archive = settings.get("APP_JAR") or settings.get("APP_WAR")
    return own_prefixes(str(ROOT / archive)) if archive else ()


def _read_node(bench, node: str, pid: str, name: str, step: StepRecord, title: str, problems: list[tuple[str, str]],
               top: int, sampled: dict | None = None, clock: tuple = (None, None)) -> dict:
    """One node's recording stopped and kept, read over the profiled step's window; its heap counted by class
    (the load has stopped), the histogram's text kept beside the recording; its threads' time over the step from
    clock (what _thread_times read before and after it, or None), the two readings kept beside it too."""
    stem = f"step-{step.step:03d}-{node}"
    window = (step.result.start_epoch, step.result.end_epoch)
    out: dict = {}
    try:
        path = bench.paths.profile_file(stem, ".jfr")
        path.write_bytes(jfr.stop(node, pid, name))
        out["recording"] = path.name
        stacks = bench.paths.profile_file(stem, "-cpu.collapsed")
        out["tables"] = read.summarize(path, window, stacks, top)
        sampled = sampled or {"by": "JFR", "why": "CPU_PROFILER=jfr"}
        jfr_cpu = stacks if sampled["by"] == "JFR" else None
        page_of = lambda kind: bench.paths.profile_file(stem, f"-{kind}.html")  # noqa: E731
        out["flame_graphs"] = read.flame_graphs(path, window, jfr_cpu, page_of, f"{node}, {title}")
        _cpu_from_sampler(bench, stem, sampled, out, top)
        if all(clock):
            bench.paths.profile_file(stem, "-threads.txt").write_text(f"{clock[0][1]}\n\n{clock[1][1]}")
            out["tables"].update(thread_time.table(clock[0][1], clock[1][1], clock[1][0] - clock[0][0], top))
        histogram = jfr.class_histogram(node, pid)
        bench.paths.profile_file(stem, "-histogram.txt").write_text(histogram)
        out["heap_holders"] = read.heap_holders(histogram)
        out["heap_classes_not_the_jdks"] = read.heap_holders(histogram, not_the_jdks=True)
    except (ClusterError, OSError, subprocess.TimeoutExpired, read.ProfileError) as problem:
        problems.append((node, str(problem)))
    return out


def brief(profiles: dict) -> dict:
    """The profiles without their tables: what summary.json keeps (profiles.json keeps them whole)."""
    return {label: {**found, "nodes": {node: {k: v for k, v in read_.items() if k in ("recording", "flame_graphs")}
                                       for node, read_ in found["nodes"].items()}}
            for label, found in profiles.items()}

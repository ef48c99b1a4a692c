"""The CPU tables from collapsed stacks (async-profiler's output with its `ann` marks: a line per distinct stack, its
frames from the thread's root ';'-separated, then its count), in the shape of JfrSummary.java's: samples, the frames samples were
in (self), the methods on their stacks (total, once a sample), the application's methods among those, and the
service's own code among the application's (capbench/profiling/names.own_prefixes)."""
from __future__ import annotations

from collections import Counter

from capbench.profiling.names import PLATFORM, SERVER

MIN_TO_RANK = 300  # samples: fewer rank nothing (one sample more moves a 30-sample row by 3 points)


JAVA_FRAMES = ("_[j]", "_[i]", "_[0]", "_[1]")  # the `ann` option's marks: JIT-compiled, inlined, interpreted, C1
KERNEL_FRAME = "_[k]"


def parse(text: str) -> list[tuple[list[tuple[str, bool]], int]]:
    """(frames from the root as (name, whether a Java method), count) per line; a line that does not end in a count
    is skipped."""
    stacks = []
    for line in text.splitlines():
        frames, _, count = line.rpartition(" ")
        if frames and count.isdigit():
            stacks.append(([frame(f) for f in frames.split(";")], int(count)))
    return stacks


def frame(text: str) -> tuple[str, bool]:
    """A frame as async-profiler's `ann` marks it: a Java method named as the JDK's reader names it
    (capbench.grinder.ReusingGrinder.grind), else a native or kernel symbol as it is."""
    for mark in JAVA_FRAMES:
        if text.endswith(mark):
            return text[:-len(mark)].replace("/", "."), True
    return text, False


def application(name: str, is_java: bool) -> bool:
    return is_java and not name.startswith(PLATFORM) and not name.startswith(SERVER)


def _counted(stacks: list[tuple[list[tuple[str, bool]], int]],
             own: tuple[str, ...] = ()) -> tuple[int, dict[str, Counter]]:
    """The whole, and per table the methods' sums of the stacks' values (samples, or ns of CPU time)."""
    counters = {key: Counter() for key in ("cpu_self", "cpu_total", "cpu_application", "cpu_application_self",
                                           "cpu_own")}
    whole = 0
    for frames, value in stacks:
        whole += value
        counters["cpu_self"][frames[-1][0]] += value
        for name, is_java in set(frames):
            counters["cpu_total"][name] += value
            if application(name, is_java):
                counters["cpu_application"][name] += value
                if own and name.startswith(own):
                    counters["cpu_own"][name] += value
        innermost = next((name for name, is_java in reversed(frames) if application(name, is_java)), None)
        if innermost:
            counters["cpu_application_self"][innermost] += value
    return whole, counters


def tables(text: str, top: int, cpu_ns: str | None = None, own: tuple[str, ...] = ()) -> dict:
    """cpu_samples; rows {name, count, total}: cpu_self (the frame running), cpu_total (a method anywhere on the
    stack, once a sample), cpu_application (the application's methods, anywhere) and cpu_application_self (the
    application's innermost method on each stack: where its own code spends, the JDK's and native work it called
    included), cpu_own (the methods of the packages `own`, anywhere: empty without them); and whether the samples are enough to rank (MIN_TO_RANK). `count` is samples; `total`, by which the
    rows are ordered (ties by name), is the CPU time in ms the samples stood for where `cpu_ns` gives the same
    profile dumped with each sample's CPU time (async-profiler's `total`: a sample the quota delayed stands for more
    than the interval), with cpu_time_ms the whole; else the samples again."""
    samples, counts = _counted(parse(text), own)
    out: dict = {"cpu_samples": samples, "cpu_ranked": samples >= MIN_TO_RANK}
    weights: dict = counts
    if cpu_ns is not None:
        whole_ns, by_ns = _counted(parse(cpu_ns), own)
        out["cpu_time_ms"] = round(whole_ns / 1e6, 1)
        weights = {key: {name: round(ns / 1e6, 3) for name, ns in counter.items()} for key, counter in by_ns.items()}
    for key, counter in counts.items():
        weight = weights[key]
        ranked = sorted(counter, key=lambda name: (-weight.get(name, 0), name))[:top]
        out[key] = [{"name": name, "count": counter[name], "total": weight.get(name, 0)} for name in ranked]
    return out

"""The CPU tables from collapsed stacks (async-profiler's output with its `ann` marks: a line per distinct stack, its
frames from the thread's root ';'-separated, then its count), in the shape of JfrSummary.java's: samples, the frames samples were
in (self), the methods on their stacks (total, once a sample), and the application's own methods among those."""
from __future__ import annotations

from collections import Counter

from profiling.names import PLATFORM, SERVER

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


def tables(text: str, top: int) -> dict:
    """cpu_samples; rows {name, count, total} by count (ties by name): cpu_self (the frame running), cpu_total (a
    method anywhere on the stack, once a sample), cpu_application (the application's methods, anywhere) and
    cpu_application_self (the application's innermost method on each stack: where its own code spends, the JDK's
    and native work it called included); and whether the samples are enough to rank (MIN_TO_RANK)."""
    own, total, app, app_own = Counter(), Counter(), Counter(), Counter()
    samples = 0
    for frames, count in parse(text):
        samples += count
        own[frames[-1][0]] += count
        for name, is_java in set(frames):
            total[name] += count
            if application(name, is_java):
                app[name] += count
        innermost = next((name for name, is_java in reversed(frames) if application(name, is_java)), None)
        if innermost:
            app_own[innermost] += count
    def rows(counter: Counter) -> list[dict]:
        ranked = sorted(counter.items(), key=lambda item: (-item[1], item[0]))[:top]
        return [{"name": name, "count": count, "total": count} for name, count in ranked]
    return {"cpu_samples": samples, "cpu_ranked": samples >= MIN_TO_RANK, "cpu_self": rows(own),
            "cpu_total": rows(total), "cpu_application": rows(app), "cpu_application_self": rows(app_own)}

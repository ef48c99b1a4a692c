"""The names capbench knows (capbench/commands/setting_names.py): the code's own tables, any node's keys, and
what make's command line named, read back from MAKEFLAGS as make writes it."""
from __future__ import annotations

import pytest

from capbench.commands.setting_names import closest, known, make_line


@pytest.mark.parametrize("name", ["STEP_S", "QUICK_STEP_S", "HOLD_S", "TOMCAT_MAX_THREADS", "APP_START_S", "NODES",
                                  "NODE1_CPUS", "NODE16_WEIGHT", "NODE_CPUS", "NODE2_TOMCAT_PROTOCOL", "NODE1_IMAGE",
                                  "MAXTHREADS", "FAULT", "DUET_A", "GATE_DROP_PCT", "PROFILE", "LB_STICKY",
                                  "BENCH_NET_PREFIX", "RUN", "TAG"])
def test_known_names(name):
    assert known(name)


@pytest.mark.parametrize("name", ["STEPS_S", "HOLD_SS", "NODE17_CPUS", "NODE1_CPU", "NODE1_FROB", "TOMCAT_THREADS",
                                  "PATH", "HOME"])
def test_unknown_names(name):
    assert not known(name)


def test_the_closest_names_are_offered():
    assert closest("STEPS_S") == ["STEP_S"]
    assert closest("TOMCAT_MAX_THREAD")[0] == "TOMCAT_MAX_THREADS"
    assert closest("ZZZZ") == []


@pytest.mark.parametrize(("makeflags", "named"), [
    (None, {}), ("", {}), ("s", {}), ("s --no-print-directory", {}),
    (" -- STEP_S=10", {"STEP_S": "10"}),
    (" --no-print-directory -- Y=c=d X=a\\ b STEPS_S=10", {"Y": "c=d", "X": "a b", "STEPS_S": "10"}),
    ("s -j2 --jobserver-auth=3,4 -- A=1", {"A": "1"}),
    (" -- APP_JAR_ARGS=--port\\ 8080\\ --x", {"APP_JAR_ARGS": "--port 8080 --x"}),
])
def test_makes_command_line_read_from_makeflags(makeflags, named):
    assert make_line(makeflags) == named

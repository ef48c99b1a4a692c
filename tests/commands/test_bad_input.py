"""Bad input, through the real entry points (the bench and tune commands make runs, and make itself): each is
refused before anything starts — exit status 2, one line per problem naming the value and what is allowed, no
results folder made, nothing on the cluster touched (these run with no cluster at all)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, named

MALFORMED_YAML = "grid:\n  MAXTHREADS: [4, 16\n"
WRONG_SHAPE_YAML = "- MAXTHREADS\n- 4\n"
UNKNOWN_PARAMETER_YAML = "grid:\n  MAXTHREAD: [4, 16]\n"

# (command, environment, what the one line must say)
BAD = [
    # rates
    ("bench cluster", {"START_RATE": "0"}, "START_RATE='0' is not allowed: use a number above 0"),
    ("bench cluster", {"START_RATE": "-50"}, "START_RATE='-50' is not allowed"),
    ("bench cluster", {"START_RATE": "1e3"}, "START_RATE='1e3' is not allowed"),
    ("bench failover", {"FAILOVER_RATE": "fast"}, "FAILOVER_RATE='fast' is not allowed: use auto or a number"),
    ("bench stress", {"STRESS_CAPACITY": "0"}, "STRESS_CAPACITY='0' is not allowed: use auto or a number above 0"),
    ("bench stress", {"STRESS_HIGH": "1"}, "STRESS_HIGH='1' is not allowed: use a number above 1 to 10"),
    ("bench selfcheck", {"SELFCHECK_RATE": "max"}, "SELFCHECK_RATE='max' is not allowed: use auto or a number"),
    ("bench cluster", {"GROWTH": "1"}, "GROWTH='1' is not allowed: use a number above 1 to 10"),
    # durations
    ("bench cluster", {"STEP_S": "0"}, "STEP_S='0' is not allowed: use an integer from 1 to 3600"),
    ("bench cluster", {"STEP_S": "1h"}, "STEP_S='1h' is not allowed"),
    ("bench cluster", {"WARMUP_S": "-1"}, "WARMUP_S='-1' is not allowed: use an integer from 0 to 3600"),
    ("bench cluster", {"HOLD_S": "-1"}, "HOLD_S='-1' is not allowed: use an integer from 0 to 3600"),
    ("bench cluster", {"QUICK": "1", "QUICK_HOLD_S": "420"}, "HOLD_S='420' is not allowed with STEP_S=5 and "
     "MAX_STEPS=24: its 84 windows are as many steps as a whole search may take; use a HOLD_S of at most 60 s"),
    ("bench cluster", {"STATE_BETWEEN": "x"}, "STATE_BETWEEN='x' is not allowed: use one of carry, expire, restart"),
    # the profile
    ("bench single", {"CPU_PROFILER": "x"}, "CPU_PROFILER='x' is not allowed: use one of async, jfr"),
    ("bench single", {"CPU_PROFILER_INTERVAL_US": "50"},
     "CPU_PROFILER_INTERVAL_US='50' is not allowed: use auto or an integer from 100 to 100000"),
    ("bench cluster", {"TIMEOUT_S": "0"}, "TIMEOUT_S='0' is not allowed: use an integer from 1 to 600"),
    ("bench failover", {"FAULT_FOR_S": "0"}, "FAULT_FOR_S='0' is not allowed: use an integer from 1 to 3600"),
    ("bench failover", {"FAULT_AT_S": "80", "FAULT_FOR_S": "20"}, "FAILOVER_S='90' is not allowed: use more than"),
    ("bench stress", {"STRESS_OVER_S": "4"}, "STRESS_OVER_S='4' is not allowed: use an integer from 5 to 3600"),
    # variants and levels
    ("bench single", {"VARIANT": "v4"}, "VARIANT='v4' is not allowed: use one of v1, v1-nosync, v2, v3"),
    ("bench variants", {"VARIANTS": "v1 v1"}, "VARIANTS='v1 v1' is not allowed: use one or more of v1, v1-nosync"),
    ("bench variants", {"VARIANTS": ""}, "VARIANTS='' is not allowed"),
    ("bench single", {"LEVEL": "17"}, "LEVEL='17' is not allowed: use an integer from 1 to 16"),
    ("bench single", {"LEVEL": "ten"}, "LEVEL='ten' is not allowed"),
    ("bench single", {"WORKLOAD": "sql"}, "WORKLOAD='sql' is not allowed: use one of grind, query, session"),
    ("bench single", {"WORKLOAD": "session", "SESSION_KB": "2048"},
     "SESSION_KB='2048' is not allowed: use an integer from 0 to 1024"),
    ("bench single", {"WORKLOAD": "session", "SCENARIO": "single"},
     "WORKLOAD='session' is not allowed with SCENARIO='single': sessions belong to users"),
    ("bench single", {"WORKLOAD": "query", "QUERY_ROWS": "5000"},
     "QUERY_ROWS='5000' is not allowed: use an integer from 1 to 1000"),
    ("bench variants", {"WORKLOAD": "query"}, "WORKLOAD='query' cannot run make bench-variants: it compares"),
    ("bench sessions", {}, "WORKLOAD='grind' cannot run make bench-sessions: it measures node1 by the size of its "
     "users' sessions (SESSION_SIZES); use WORKLOAD=session"),
    ("bench sessions", {"WORKLOAD": "session", "SESSION_SIZES": "64 32"},
     "SESSION_SIZES='64 32' is not allowed: use one or more rising integers from 0 to 1024"),
    ("bench single", {"QUERY_WRITE_PCT": "150"}, "QUERY_WRITE_PCT='150' is not allowed: use an integer from 0 to 100"),
    ("tune", {"POOLSIZE": "0,4"}, "DB_POOL_SIZE='0' is not allowed: use an integer from 1 to 200"),
    ("tune", {"POOLSCOPE": "thread"}, "DB_CONNECTION_SCOPE='thread' is not allowed: use one of request call"),
    ("make up", {"PROFILE": "homogeneous", "NODES": "6", "DB_POOL_SIZE": "200"},
     "DB_POOL_SIZE='200' is not allowed with 6 nodes and 1 pool(s) each: the database would hold 1200 connections"),
    ("make up", {"DB_POOL_TIMEOUT_MS": "100"}, "DB_POOL_TIMEOUT_MS='100' is not allowed: use an integer from 250"),
    ("bench usl", {"USL_LEVELS": "1 2 3"}, "USL_LEVELS='1 2 3' is not allowed: use at least 4 rising integers"),
    ("bench usl", {"USL_LEVELS": "8 4 2 1"}, "USL_LEVELS='8 4 2 1' is not allowed"),
    ("bench usl", {"LOAD_HOSTS": "2"}, "LOAD_HOSTS='2' cannot run make bench-usl with USL_LEVELS starting at 1: each load host"),
    ("bench cluster", {"LOAD_HOSTS": "9"}, "LOAD_HOSTS='9' is not allowed: use a number of load hosts from 1 to 8"),
    # profiles and cluster settings
    ("bench cluster", {"PROFILE": "huge"},
     "PROFILE='huge' is not a profile: use one of homogeneous, hosts, lab, small"),
    ("bench cluster", {"PROFILE": "../../etc/passwd"}, "PROFILE='../../etc/passwd' is not a profile"),
    ("tune", {"WEIGHTS": "equal,profile"}, "WEIGHTS='equal,profile' is bench-cluster's choice of balancings: make "
     "tune sweeps the nodes' weights as NODEWEIGHTS="),
    ("tune", {"MAXTHREADS": "0"}, "TOMCAT_MAX_THREADS='0' is not allowed: use an integer from 1 to 10000"),
    ("tune", {"MAXTHREADS": "4,x"}, "MAXTHREADS"),
    ("tune", {"PROTOCOL": "apr"}, "TOMCAT_PROTOCOL='apr' is not allowed: use one of nio nio2"),
    ("tune", {"TLS": "lb,sometimes"}, "TLS='sometimes' is not allowed"),
    ("tune", {"HTTP": "1.1,3"}, "HTTP=3: HTTP='3' is not allowed: use one of 1.1, 2"),
    ("tune", {"CONNECTIONLIFE": "keep,per-user", "LOADGEN": "oha"},
     "CONNECTIONLIFE=per-user: CONNECTION_LIFE='per-user' cannot run with LOADGEN=oha"),
    # node names
    ("bench failover", {"FAULT_NODE": "node4"}, "FAULT_NODE='node4' is not allowed: use one of node1, node2, node3"),
    ("bench stress", {"STRESS_TARGET": "lb"}, "STRESS_TARGET='lb' is not allowed: use one of cluster, node1"),
    ("tune", {"MAXTHREADS": "4,16", "TUNE_TARGET": "node7"}, "TUNE_TARGET='node7' is not allowed"),
    ("make node-maint", {"NODE": "node9"}, "NODE='node9' is not a node: use one of node1 node2 node3"),
    # SLO values
    ("bench cluster", {"SLO_P99_MS": "0"}, "SLO_P99_MS='0' is not allowed: use a number above 0"),
    ("bench cluster", {"SLO_FAILURE_PCT": "101"}, "SLO_FAILURE_PCT='101' is not allowed: use a number from 0 to 100"),
    ("bench cluster", {"SLO_ACHIEVED_PCT": "most"}, "SLO_ACHIEVED_PCT='most' is not allowed"),
    # sweep files and malformed YAML
    ("tune", {"SWEEP": "/nonexistent/sweep.yaml"}, "SWEEP='/nonexistent/sweep.yaml' is not a file"),
    ("tune", {"SWEEP": "{malformed}"}, "is not valid YAML"),
    ("tune", {"SWEEP": "{wrong_shape}"}, "has the wrong shape"),
    ("tune", {"SWEEP": "{unknown_parameter}"}, "unknown parameter MAXTHREAD"),
    ("tune", {"SWEEP": "{unknown_parameter}", "MAXTHREADS": "4"}, "not both"),
    # the rest of the make line
    ("bench cluster", {"LOADGEN": "ab"}, "LOADGEN='ab' is not allowed: use one of auto, oha, wrk2, capload"),
    ("bench cluster", {"HTTP": "3"}, "HTTP='3' is not allowed: use one of 1.1, 2"),
    ("bench cluster", {"CONNECTION_LIFE": "per-visit"},
     "CONNECTION_LIFE='per-visit' is not allowed: use one of keep, per-user, per-request"),
    ("bench cluster", {"CONNECTION_LIFE": "per-request", "HTTP": "2", "LOADGEN": "oha"},
     "CONNECTION_LIFE='per-request' cannot run with HTTP=2 and LOADGEN=oha: oha opens a connection per request over "
     "HTTP/1.1 only; use LOADGEN=capload"),
    ("bench cluster", {"CONNECTION_LIFE": "per-user", "LOADGEN": "oha"},
     "CONNECTION_LIFE='per-user' cannot run with LOADGEN=oha: oha keeps each connection for the step or opens one "
     "per request; use LOADGEN=capload (or auto)"),
    ("bench usl", {"LOADGEN": "capload"}, "LOADGEN='capload' cannot run make bench-usl"),
    ("bench cluster", {"WEIGHTS": "heavy"}, "WEIGHTS='heavy' is not allowed: use one of profile, equal, auto"),
    ("bench cluster", {"QUICK": "yes"}, "QUICK='yes' is not allowed: use one of 0, 1"),
    ("bench cluster", {"REPEATS": "0"}, "REPEATS='0' is not allowed: use an integer from 1 to 20"),
    ("bench cluster", {"MONITOR": "maybe"}, "MONITOR='maybe' is not allowed: use one of on, off"),
    ("bench cluster", {"CONNECTIONS": "5000"}, "CONNECTIONS='5000' is not allowed: use auto or an integer"),
    ("bench failover", {"FAULT": "reboot"}, "FAULT='reboot' is not allowed: use one of kill, freeze, partition, delay"),
    ("bench cluster", {"WRK2": "/nonexistent/wrk2"}, "WRK2='/nonexistent/wrk2' is not an executable file"),
    ("make status", {"BACKEND": "kubernetes"}, "BACKEND='kubernetes' is not allowed: use compose, vagrant or swarm"),
    ("make status", {"BACKEND": "swarm", "SWARM_HOSTS": "/nonexistent/hosts"},
     "no Swarm hosts file at /nonexistent/hosts: `make swarm-lab` writes one"),
    ("make swarm-lab", {"HOSTS": "9"}, "HOSTS='9' is not allowed: a whole number of engines from 1 to 8"),
    ("make bench-everything", {}, "'bench-everything' is not a bench: use one of bench-single, bench-cluster"),
    ("bench cluster", {"NODE2_WEIGHT": "0"}, "NODE2_WEIGHT='0' is not allowed: use an integer from 1 to 256"),
    # make gate
    ("gate", {"GATE_BENCH": "usl"}, "GATE_BENCH='usl' is not allowed: use one of single, cluster"),
    ("gate", {"GATE_DROP_PCT": "100"}, "GATE_DROP_PCT='100' is not allowed: use a number from 0 to below 100"),
    ("gate", {"GATE_P99_MS": "250ms"}, "GATE_P99_MS='250ms' is not allowed: use empty, or [TARGET:]MS@RATE"),
    ("gate", {"GATE_BENCH": "single", "GATE_P99_MS": "cluster:250@800"}, "GATE_P99_MS's target 'cluster' is not one of single's: use node1"),
    ("gate", {"GATE_MODE": "history", "BASELINE": "release-9"},
     "BASELINE='release-9' is neither a baseline tag (tags: none) nor a run"),
    ("gate", {"BASELINE": "release-9"}, "BASELINE='release-9' is not a baseline whose build was kept"),
    ("gate", {"GATE_P99_MS": "250@800"}, "GATE_P99_MS cannot be judged with GATE_MODE=duet"),
    ("gate", {"REPEATS": "0"}, "REPEATS='0' is not allowed: use an integer from 1 to 20"),
    ("gate", {"GATE_REPEATS": "three"}, "GATE_REPEATS='three' is not allowed: use an integer from 1 to 20"),
]


def command(what: str) -> list[str]:
    kind, _, arg = what.partition(" ")
    if kind == "bench":
        return [sys.executable, "-m", "capbench.commands.bench", arg, "--check-only"]
    if kind == "tune":
        return [sys.executable, "-m", "capbench.commands.tune", "--check-only"]
    if kind == "gate":
        return [sys.executable, "-m", "capbench.commands.gate", "--check-only"]
    return ["make", "--no-print-directory", arg]


@pytest.fixture
def sweeps(tmp_path: Path) -> dict[str, str]:
    files = {}
    for name, text in (("malformed", MALFORMED_YAML), ("wrong_shape", WRONG_SHAPE_YAML),
                       ("unknown_parameter", UNKNOWN_PARAMETER_YAML)):
        (tmp_path / f"{name}.yaml").write_text(text)
        files[name] = str(tmp_path / f"{name}.yaml")
    return files


def test_the_table_covers_every_kind_of_input():
    assert len(BAD) >= 30


@pytest.mark.parametrize("what, env, message", BAD, ids=[f"{w}:{' '.join(f'{k}={v}' for k, v in e.items())}"
                                                         for w, e, _ in BAD])
def test_bad_input_is_refused_in_one_line_before_anything_starts(what, env, message, sweeps, tmp_path):
    env = {k: v.format(**sweeps) for k, v in env.items()}
    results = tmp_path / "results"
    # No cluster, no Docker needed: a refusal must come before either is asked for.
    full_env = {**os.environ, "RESULTS_DIR": str(results), "COMPOSE_PROJECT_NAME": "capbench-bad-input",
                "BACKEND": "compose", **env}
    for key in ("MAXTHREADS", "PROTOCOL", "SWEEP", "TUNE_TARGET"):  # only what the row gives
        if key not in env:
            full_env.pop(key, None)
    done = subprocess.run(command(what), cwd=ROOT, env=named(full_env), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("make")]
    assert any(message in line for line in lines), done.stderr
    assert all(line.startswith("capbench: ") or line.startswith("Makefile:") for line in lines), done.stderr
    assert len(lines) <= 2, done.stderr  # the one problem (tune may name the setting and its sweep parameter)
    assert not results.exists(), "a results folder was made"

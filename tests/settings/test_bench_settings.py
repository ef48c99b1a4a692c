"""Bench settings and the harness's refusals: every bad value named with what is allowed, before anything
starts (no results folder, no cluster touched)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from capbench.commands.bench import checked, choose_driver
from capbench.kinds import KINDS, MODULES, read_settings
from capbench.settings.bench import SettingsError, check_for_driver
from conftest import ROOT


def settings(**env: str):
    return read_settings(environ=env)


def test_defaults_load():
    s = settings()
    assert (s.variant, s.level, s.scenario, s.loadgen) == ("v1", 13, "session", "auto")
    assert (s.slo.failure_pct, s.slo.p99_ms, s.slo.achieved_pct) == (1, 500, 95)
    assert s.connections is None and s.kinds["selfcheck"].selfcheck_rate is None and not s.quick


def test_quick_uses_the_quick_durations():
    s = settings(QUICK="1")
    assert (s.step_s, s.warmup_s, s.precision_pct) == (5, 5, 7)


def test_make_line_overrides():
    s = settings(VARIANT="v3", LEVEL="14", CONNECTIONS="64", SLO_P99_MS="250.5")
    assert (s.variant, s.level, s.connections, s.slo.p99_ms) == ("v3", 14, 64, 250.5)


BAD = [
    ({"VARIANT": "v4"}, "VARIANT='v4' is not allowed: use one of v1, v1-nosync, v2, v3"),
    ({"LEVEL": "0"}, "LEVEL='0' is not allowed: use an integer from 1 to 16"),
    ({"LEVEL": "17"}, "LEVEL='17'"),
    ({"LEVEL": "013"}, "LEVEL='013'"),
    ({"SCENARIO": "burst"}, "SCENARIO='burst' is not allowed: use one of session, single"),
    ({"LOADGEN": "ab"}, "LOADGEN='ab' is not allowed: use one of auto, oha, wrk2"),
    ({"START_RATE": "0"}, "START_RATE='0' is not allowed: use a number above 0 to 1000000"),
    ({"START_RATE": "-5"}, "START_RATE='-5'"),
    ({"START_RATE": "fast"}, "START_RATE='fast'"),
    ({"GROWTH": "1"}, "GROWTH='1' is not allowed: use a number above 1 to 10"),
    ({"PRECISION_PCT": "0.1"}, "PRECISION_PCT='0.1' is not allowed: use a number from 0.5 to 50"),
    ({"STEP_S": "0"}, "STEP_S='0' is not allowed: use an integer from 1 to 3600"),
    ({"STEP_S": "2.5"}, "STEP_S='2.5'"),
    ({"WARMUP_S": "-1"}, "WARMUP_S='-1'"),
    ({"CONNECTIONS": "0"}, "CONNECTIONS='0' is not allowed: use auto or an integer from 1 to 4000"),
    ({"CONNECTIONS": "5000"}, "CONNECTIONS='5000'"),
    ({"THREADS": "0"}, "THREADS='0'"),
    ({"REPEATS": "0"}, "REPEATS='0' is not allowed: use an integer from 1 to 20"),
    ({"MAX_STEPS": "1"}, "MAX_STEPS='1'"),
    ({"SLO_FAILURE_PCT": "101"}, "SLO_FAILURE_PCT='101' is not allowed: use a number from 0 to 100"),
    ({"SLO_P99_MS": "0"}, "SLO_P99_MS='0'"),
    ({"SLO_ACHIEVED_PCT": "0"}, "SLO_ACHIEVED_PCT='0'"),
    ({"QUICK": "yes"}, "QUICK='yes' is not allowed: use one of 0, 1"),
    ({"MONITOR": "1"}, "MONITOR='1' is not allowed: use one of on, off"),
    ({"THINK_MS": "-3"}, "THINK_MS='-3'"),
    ({"USERS": "0"}, "USERS='0'"),
    ({"SELFCHECK_RATE": "0"}, "SELFCHECK_RATE='0' is not allowed: use auto or a number above 0 to 1000000"),
    ({"TIMEOUT_S": "0"}, "TIMEOUT_S='0'"),
    ({"USL_LEVELS": "1 2 4"}, "USL_LEVELS='1 2 4' is not allowed: use at least 4 rising integers from 1 to 4000"),
    ({"USL_LEVELS": "1 2 2 4"}, "USL_LEVELS='1 2 2 4'"),
    ({"USL_LEVELS": "0 1 2 4"}, "USL_LEVELS='0 1 2 4'"),
    ({"USL_LEVELS": "1,2,4,8"}, "USL_LEVELS='1,2,4,8'"),
    ({"USL_LEVELS": "1 2 4 4001"}, "USL_LEVELS='1 2 4 4001'"),
]


@pytest.mark.parametrize("env, message", BAD, ids=[next(iter(e)) + "=" + next(iter(e.values())) for e, _ in BAD])
def test_bad_value_refused_with_what_is_allowed(env, message):
    with pytest.raises(SettingsError) as refused:
        settings(**env)
    assert message in str(refused.value)


def test_every_bad_value_reported_at_once():
    with pytest.raises(SettingsError) as refused:
        settings(VARIANT="x", LEVEL="99", START_RATE="0")
    assert len(str(refused.value).splitlines()) == 3


def test_the_wrk2_make_wrk2_built_is_used_when_wrk2_is_asked_for_not_by_auto(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "tools").mkdir()
    built = tmp_path / "tools" / "wrk2"
    built.write_text("#!/bin/sh\n")
    built.chmod(0o755)
    monkeypatch.setattr("capbench.load.drivers.BUILT_WRK2", built)
    assert choose_driver(settings(LOADGEN="wrk2"), {})[1] == built
    assert choose_driver(settings(), {})[0].name == "oha"


def test_wrk2_steps_must_outlast_its_calibration():
    with pytest.raises(SettingsError, match="STEP_S='10' is too short for wrk2: its first 10 s are calibration"):
        check_for_driver(settings(STEP_S="10"), "wrk2")
    assert check_for_driver(settings(QUICK="1"), "wrk2").step_s == 20  # QUICK takes wrk2's shortest
    assert check_for_driver(settings(STEP_S="3"), "oha").step_s == 3


def test_driver_choice(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no wrk2 on PATH
    monkeypatch.setattr("capbench.load.drivers.BUILT_WRK2", tmp_path / "wrk2")  # nor one make wrk2 built
    assert choose_driver(settings(), {})[0].name == "oha"
    with pytest.raises(SettingsError, match="LOADGEN='wrk2' but no wrk2 binary"):
        choose_driver(settings(LOADGEN="wrk2"), {})
    with pytest.raises(SettingsError, match="WRK2='/nonexistent/wrk' is not an executable file"):
        choose_driver(settings(), {"WRK2": "/nonexistent/wrk"})
    fake = tmp_path / "wrk2"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    driver, binary = choose_driver(settings(), {"WRK2": str(fake)})
    assert driver.name == "wrk2" and binary == fake
    assert choose_driver(settings(), {})[0].name == "wrk2"  # found on PATH
    assert choose_driver(settings(LOADGEN="oha"), {"WRK2": str(fake)})[0].name == "oha"
    # TLS at the balancer: auto takes oha, which verifies the certificate (an explicit wrk2 is refused later).
    assert choose_driver(settings(), {"WRK2": str(fake)}, tls="lb")[0].name == "oha"
    # HTTP/2 on the client's leg: auto takes oha; wrk2, which speaks HTTP/1.1 only, is refused in one line.
    assert choose_driver(settings(HTTP="2"), {"WRK2": str(fake)})[0].name == "oha"
    with pytest.raises(SettingsError, match="^HTTP='2' cannot run with LOADGEN=wrk2: wrk2 speaks HTTP/1.1 only"):
        check_for_driver(settings(HTTP="2"), "wrk2")
    assert check_for_driver(settings(HTTP="2"), "oha").http == "2"
    # A connection per request: auto takes oha; wrk2, which keeps its connections for the step, is refused.
    assert choose_driver(settings(CONNECTION_LIFE="per-request"), {"WRK2": str(fake)})[0].name == "oha"
    with pytest.raises(SettingsError, match="^CONNECTION_LIFE='per-request' cannot run with LOADGEN=wrk2: wrk2 keeps"):
        check_for_driver(settings(CONNECTION_LIFE="per-request"), "wrk2")
    assert check_for_driver(settings(CONNECTION_LIFE="per-request"), "oha").connection_life == "per-request"
    # A connection per user's session, and per request over HTTP/2: auto takes capload, which alone opens them.
    assert choose_driver(settings(CONNECTION_LIFE="per-user"), {"WRK2": str(fake)})[0].name == "capload"
    assert choose_driver(settings(CONNECTION_LIFE="per-request", HTTP="2"), {})[0].name == "capload"
    assert choose_driver(settings(LOADGEN="capload"), {"WRK2": str(fake)})[0].name == "capload"
    for driver_name in ("oha", "wrk2"):
        with pytest.raises(SettingsError, match=f"^CONNECTION_LIFE='per-user' cannot run with LOADGEN={driver_name}"):
            check_for_driver(settings(CONNECTION_LIFE="per-user"), driver_name)
    assert check_for_driver(settings(CONNECTION_LIFE="per-user", HTTP="2"), "capload").http == "2"
    # bench-usl's closed loops: oha even where wrk2 would be chosen; an explicit wrk2 is refused.
    assert choose_driver(settings(), {"WRK2": str(fake)}, closed_loop=True)[0].name == "oha"
    with pytest.raises(SettingsError, match="LOADGEN='wrk2' cannot run make bench-usl"):
        choose_driver(settings(LOADGEN="wrk2"), {"WRK2": str(fake)}, closed_loop=True)


def test_usl_levels():
    assert settings().kinds["usl"].usl_levels == (1, 2, 4, 8, 16, 32)
    assert settings(QUICK="1").kinds["usl"].usl_levels == (1, 2, 4, 8)
    assert settings(USL_LEVELS="2  3 5 7 11").kinds["usl"].usl_levels == (2, 3, 5, 7, 11)


def bench(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "capbench.commands.bench", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_cli_refuses_bad_input_in_one_line_before_anything(tmp_path):
    done = bench("cluster", VARIANT="v7", RESULTS_DIR=str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip() == ("capbench: VARIANT='v7' is not allowed: use one of v1, v1-nosync, v2, v3")
    assert list(tmp_path.iterdir()) == []


def test_cli_refuses_an_unknown_profile(tmp_path):
    done = bench("cluster", "--check-only", PROFILE="huge", RESULTS_DIR=str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip() == ("capbench: PROFILE='huge' is not a profile: use one of homogeneous, hosts, lab, "
                                   "small "
                                   "(files in cluster/profiles/)")


@pytest.mark.docker
def test_cli_refuses_a_cluster_that_is_not_up(tmp_path):
    done = bench("single", COMPOSE_PROJECT_NAME="capbench-not-up", RESULTS_DIR=str(tmp_path))
    assert done.returncode == 2
    assert "capbench: the cluster is not up (node1, node2, node3, lb, load, controller, db not running and healthy): " \
           "run make up first" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_cli_unknown_kind():
    done = bench("everything")
    assert done.returncode == 2
    assert done.stderr == ("capbench: 'bench-everything' is not a bench: use one of " +
                           ", ".join(f"bench-{kind}" for kind in KINDS) + "\n")
    # each kind is named as its module, so make bench-<name> runs kinds/<name>.py
    assert set(KINDS) == {module.rsplit(".", 1)[1] for module in MODULES} >= {"single", "cluster"}


def test_bench_sessions_takes_a_scenario_file_in_place_of_its_workload():
    scenario = str(ROOT / "examples" / "scenarios" / "tomcat-examples-sessions.yaml")
    checked_settings, driver, _ = checked(environ={"SCENARIO_FILE": scenario, "LOADGEN": "oha"},
                                          kind=KINDS["sessions"])
    assert checked_settings.user_scenario.name == "tomcat-examples-sessions.yaml" and driver.name == "oha"
    assert KINDS["sessions"].planned_searches(checked_settings) == 1
    with pytest.raises(SettingsError, match="WORKLOAD='grind' cannot run make bench-sessions: .* use "
                                            "WORKLOAD=session or a SCENARIO_FILE of your application's requests"):
        checked(environ={}, kind=KINDS["sessions"])
    with pytest.raises(SettingsError, match="SCENARIO_FILE='.*' cannot run make bench-variants"):
        checked(environ={"SCENARIO_FILE": scenario}, kind=KINDS["variants"])

"""Shared helpers for the Python tests: run the project's own scripts exactly as make does; and the one Compose
cluster of the integration tests (project capbench-it, its own bench network and a random stats port, so a
cluster of yours is untouched), brought up once on first use by the backend's own script and torn down when
the session ends, pass or fail. A test that needs other settings (a bench with other settings, a changed
tunable) has make or up.sh bring the cluster to them, as a user's next bench would;
integration/test_teardown.py checks, last, that taking it down leaves nothing behind."""
from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A wrk2 binary for the wrk2 cases: WRK2=/path, else the one `make wrk2` built. CI has neither: make wrk2 downloads
# wrk2's pinned source from GitHub, which CI's machines cannot reach.
BUILT_WRK2 = ROOT / ".capbench" / "tools" / "wrk2" / "wrk2"
NO_WRK2 = pytest.mark.skipif(not (os.environ.get("WRK2") or BUILT_WRK2.is_file()),
                             reason="no wrk2 binary: WRK2 is unset and make wrk2 has not built one (it downloads "
                             "wrk2's pinned source from GitHub, which CI cannot reach)")
COMPOSE = str(ROOT / "cluster" / "compose" / "compose.sh")
UP = str(ROOT / "cluster" / "compose" / "up.sh")
PROJECT = "capbench-it"
# The integration tests check what the benches do, not how well two runs agree: their QUICK searches stop at
# 30 % (QUICK's own 7 % is for runs meant to be compared, capbench/settings/bench.py), start at 100/s, below every node's
# capacity here but the pool of one's, and step for 3 s instead of 5 (a test that counts on longer steps says so);
# each saves a step or two of every search, or two seconds of every step, which keeps make test within its time.
# Every capacity a test asserts is bracketed by its own steps, whatever the precision.
# The hold is one window (3 s, as the confirm step it replaced): a QUICK hold of 15 s would add about 15 s to every
# search of the suite; the hold's own figures are checked where a test asks for them (test_sessions.py).
SEARCH_FOR_TESTS = {"QUICK_PRECISION_PCT": "30", "START_RATE": "100", "QUICK_STEP_S": "3", "QUICK_HOLD_S": "3"}
IT_ENV = {"COMPOSE_PROJECT_NAME": PROJECT, "STATS_PORT": "0", "BENCH_NET_PREFIX": "10.89.1", "BACKEND": "compose",
          **SEARCH_FOR_TESTS}


def run(args: list[str], env: dict[str, str] | None = None, timeout: float = 600,
        check: bool = True) -> subprocess.CompletedProcess:
    """Runs a command from the repository root with extra environment; raises with its output on failure. Each
    setting in env is given twice: as a user gives it to make or capbench (CAPBENCH_KEY: a plain variable of the
    environment changes nothing there, capbench/commands/configuration.py) and plain, as the scripts the tests run
    directly read it (cluster/compose/up.sh, compose.sh)."""
    full_env = {**os.environ, **named(env or {})}
    done = subprocess.run(args, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done


def named(env: dict[str, str]) -> dict[str, str]:
    """env with each setting also spelt CAPBENCH_KEY."""
    from capbench.commands.configuration import PREFIX, is_setting

    return {**env, **{PREFIX + key: value for key, value in env.items() if is_setting(key)}}


def compose(*args: str, env: dict[str, str] | None = None, timeout: float = 600,
            check: bool = True) -> subprocess.CompletedProcess:
    return run([COMPOSE, *args], env=env, timeout=timeout, check=check)


def it_up(cluster_env: dict[str, str] = IT_ENV, **settings: str) -> None:
    """An integration tests' cluster (the first by default) brought to these settings over the defaults (up.sh, as
    make up does)."""
    run([UP], env={**cluster_env, **settings}, timeout=900)


def it_down(env: dict[str, str] = IT_ENV) -> None:
    compose("down", "--remove-orphans", "--timeout", "10", env=env, timeout=180, check=False)


# A second cluster, for tests that need nothing of the first's state (integration/test_variants.py,
# test_metrics.py, test_sessions.py, test_your_application.py, test_faults.py): it
# runs on the other worker, beside the Swarm lab, so its minutes are not the first cluster's.
IT2_ENV = {**IT_ENV, "COMPOSE_PROJECT_NAME": f"{PROJECT}2", "BENCH_NET_PREFIX": "10.89.2"}


# Claims that need a quiet machine (tests/claims/): only `make test-claims` collects them (CAPBENCH_CLAIMS=1).
collect_ignore = [] if os.environ.get("CAPBENCH_CLAIMS") == "1" else ["claims"]

# Integration tests that bring up hosts of their own (VMs, a swarm lab, the second Compose cluster) rather than the
# first Compose cluster.
OWN_HOSTS = ("test_vagrant.py", "test_swarm.py", "test_variants.py", "test_metrics.py", "test_sessions.py",
             "test_your_application.py")
# Last of the cluster's tests, in this order: TLS's (it leaves the cluster with TLS=both, which the JAR's test
# re-creates anyway: restoring it would cost a bring-up of the nodes), the executable JAR's (it leaves the JAR on
# the nodes: no test after it needs the Grinder), then the teardown check.
RUN_LAST = ("test_tls.py", "test_executable_jar.py", "test_teardown.py")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups from the marks
def pytest_collection_modifyitems(config, items):
    """make test runs two workers (pytest -n 2 --dist loadgroup): on one, every test that runs Docker or Compose
    (marked docker) and the Compose cluster's, in their order; on the other, the integration tests with hosts of
    their own (OWN_HOSTS: the VM, the swarm lab, the second cluster; and any test that asks for the second
    cluster), which thus take no minutes of the cluster's own. The unit tests belong to no group: xdist gives
    them to whichever worker runs out of work first (a worker takes more when two or fewer of its tests are
    left), so they fill the shorter worker's end. (Placed on the other worker, they made it the longer by about
    three minutes: CI of d196a54 ran 41 minutes, the cluster's worker about 35.) Without -n the groups change
    nothing."""
    for item in items:
        path = Path(str(item.fspath))
        integration = path.parent.name == "integration"
        if item.get_closest_marker("docker") is not None or (
                integration and path.name not in OWN_HOSTS and "second_cluster" not in item.fixturenames):
            item.add_marker(pytest.mark.xdist_group("cluster"))
        elif integration:
            item.add_marker(pytest.mark.xdist_group("elsewhere"))
    # TLS's, the JAR's test and the teardown check run last of the cluster's tests.
    items.sort(key=lambda item: RUN_LAST.index(item.fspath.basename) + 1 if item.fspath.basename in RUN_LAST else 0)


@pytest.fixture(scope="session")
def cluster():
    it_down()  # what an earlier, killed session may have left
    try:
        it_up()
        yield
    finally:
        it_down()


@pytest.fixture(scope="session")
def second_cluster():
    """The second cluster's settings (IT2_ENV), up with the defaults; torn down when the session ends."""
    it_down(IT2_ENV)
    try:
        run([UP], env=IT2_ENV, timeout=900)
        yield IT2_ENV
    finally:
        it_down(IT2_ENV)


def only_run(results: Path) -> Path:
    """The one run a bench wrote into its results folder."""
    runs = [p for p in results.iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def steps_of(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]


def sigint_as_default() -> None:
    """For a child a test interrupts: SIGINT back to its default disposition. A runner started in the
    background by a shell without job control (`bash .ci/run &`) passes SIGINT on ignored, and a Python started
    so never turns it into KeyboardInterrupt: the interrupt would be lost, not tested."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def assert_capacity_from_the_steps(steps: list[dict], label: str, capacity: float | None,
                                   repeat: int | None = None, set_aside: int = 0) -> None:
    """A search's capacity as the steps of its run show it: a passing search, confirm or hold step at that rate and a
    failing one above it (the bracket the search found), no failure of that search at or below it after its
    first recheck (a transient set aside) or its vote (an unsteady rate measured again). An invalid step (the
    generator lagged) is no verdict: it is measured again as a retry, whose pass stands for the step it retried.
    A positive number alone would pass a search that never found an edge. With repeats, give `repeat`: each
    repeat's search has its own bracket (a lower repeat's failure sits below the median). A duet's search opened
    again `set_aside` times (its summary's set_aside_rps) is judged on the steps of its last search only: an
    earlier one's failures belong to slower minutes (CI, 2026-11-27: 972.7/s failed, was set aside at 778.1, and
    the search opened again passed 972.7 twice)."""
    chosen = [s for s in steps if s.get("label") == label and (repeat is None or s["repeat"] == repeat)]
    chosen = chosen[steps_of_the_last_search(chosen, set_aside):]
    own = [s for s in chosen if s["phase"] in ("search", "recheck", "retry", "confirm", "hold", "repeat")]
    assert capacity, (label, capacity)
    assert any(s["passed"] and s["offered_rps"] == capacity for s in own), (label, capacity)
    above = [s["offered_rps"] for s in own if not s["passed"] and s["offered_rps"] > capacity]
    assert above, f"{label}: no failing step above {capacity}/s: not a capacity but a lower bound"
    rechecked = {s["offered_rps"] for s in own if s["phase"] in ("recheck", "retry") and s["passed"]}
    voted = {s["offered_rps"] for s in own if s["phase"] == "repeat"}  # unsteady near the knee: a majority of 3
    contradicting = [s for s in own if s["valid"] and not s["passed"] and s["offered_rps"] <= capacity
                     and s["offered_rps"] not in rechecked | voted]
    assert not contradicting, (label, capacity, contradicting)


def steps_of_the_last_search(steps: list[dict], set_aside: int) -> int:
    """Where a slot's last search began among its steps of one pair: after the `set_aside`-th time its
    companion steps failed COMPANION_FAILURES times in a row (capbench/search/lockstep.py's rule for opening a search
    again). Fails when the steps show fewer such times than the summary says."""
    from capbench.search.lockstep import COMPANION, COMPANION_FAILURES
    failed_in_a_row, opened = 0, 0
    for index, s in enumerate(steps):
        if opened == set_aside:
            return index
        if s["phase"] != COMPANION:
            continue
        failed_in_a_row = failed_in_a_row + 1 if s["valid"] and not s["passed"] else 0
        if failed_in_a_row == COMPANION_FAILURES:
            failed_in_a_row, opened = 0, opened + 1
    assert opened == set_aside, f"the summary says {set_aside} searches set aside; the companion steps show {opened}"
    return len(steps)

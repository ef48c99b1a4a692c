"""Two load hosts on the Compose cluster (LOAD_HOSTS=2): a step's rate sent in even shares from one agreed instant,
both generators named in the record with their tool, CPU and PCP archive; then load2 held to a twentieth of a
CPU, and the invalid step's reason names it. The cluster goes back to one load host at the end."""
from __future__ import annotations

import json
import sys

import pytest

from conftest import IT_ENV as ENV, PROJECT, it_up, run

pytestmark = pytest.mark.usefixtures("cluster")  # the session's one cluster (tests/conftest.py)
TWO = {"LOAD_HOSTS": "2"}
LOAD2_CONTAINER = f"{PROJECT}-load2-1"


@pytest.fixture(scope="module")
def two_load_hosts():
    it_up(**TWO)
    try:
        yield
    finally:
        it_up()  # one load host again: load2 removed as an orphan


def selfcheck(results, rate: str):
    done = run([sys.executable, "-m", "load.bench", "selfcheck"],
               env={**ENV, **TWO, "RESULTS_DIR": str(results), "SELFCHECK_RATE": rate, "STEP_S": "8",
                    "LOADGEN": "oha"}, timeout=300, check=False)
    [run_dir] = [p for p in results.iterdir() if p.is_dir()]
    [step] = [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    return done, run_dir, step


def test_two_load_hosts_send_even_shares_from_one_instant(two_load_hosts, tmp_path):
    done, run_dir, step = selfcheck(tmp_path, "1000")
    shares = step["generators"]
    assert [g["host"] for g in shares] == ["load", "load2"], shares
    for share in shares:
        assert share["offered_rps"] == 500 and share["tool"].startswith("oha 1.16")
        assert share["achieved_rps"] == pytest.approx(500, rel=0.01), share  # within 1 % of R/2
        assert 0 <= share["start_skew_ms"] < 1000, share  # both started within a second of the instant
        assert share["loadhost"]["cpu_pct"] > 0 and share["connections"] >= 1
    assert step["responses"] == sum(g["responses"] for g in shares)
    assert step["achieved_rps"] == pytest.approx(sum(g["achieved_rps"] for g in shares), abs=0.02)
    assert step["connections"] == sum(g["connections"] for g in shares)
    assert done.returncode == 0, done.stdout + done.stderr
    run_json = json.loads((run_dir / "run.json").read_text())
    assert set(run_json["load_hosts"]) == {"load", "load2"}
    assert {"load", "load2"} <= {p.name for p in (run_dir / "pcp").iterdir() if p.is_dir()}  # PCP logs both


def test_a_starved_load_host_is_named_in_the_invalid_steps_reason(two_load_hosts, tmp_path):
    run(["docker", "update", "--cpus", "0.05", LOAD2_CONTAINER])
    try:
        done, _, step = selfcheck(tmp_path, "300")
    finally:
        run(["docker", "update", "--cpu-quota", "-1", LOAD2_CONTAINER])
    assert not step["valid"] and step["invalid_reason"].startswith("load2: "), step["invalid_reason"]
    [starved] = [g for g in step["generators"] if g["host"] == "load2"]
    assert starved["loadhost"]["cpus_available"] == 0.05 and starved["loadhost"]["throttled_periods"] > 0
    assert done.returncode == 1

"""Two load hosts on the Compose cluster (LOAD_HOSTS=2), through the generator's self-check: a step's rate sent in
even shares from one agreed instant, both generators named in the record with their tool, CPU and PCP archive;
then load2 held to a twentieth of a CPU, and the invalid step's reason names it. The cluster goes back to one load
host at the end.

The self-check's own tolerance (1 %) and a start within a second are claims for a quiet machine (tests/claims/):
here the other worker's benches share our two cores. So the rate is a modest 400/s, each share must come within
10 % of its 200/s, and both must start within half the 8 s step, so that their halves overlap for most of it."""
from __future__ import annotations

import json
import sys

import pytest

from capbench.rundata import hlog
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
    done = run([sys.executable, "-m", "capbench.commands.bench", "selfcheck"],
               env={**ENV, **TWO, "RESULTS_DIR": str(results), "SELFCHECK_RATE": rate, "STEP_S": "8",
                    "LOADGEN": "oha"}, timeout=300, check=False)
    [run_dir] = [p for p in results.iterdir() if p.is_dir()]
    [step] = [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    return done, run_dir, step


def test_two_load_hosts_send_even_shares_from_one_instant(two_load_hosts, tmp_path):
    done, run_dir, step = selfcheck(tmp_path, "400")
    shares = step["generators"]
    assert [g["host"] for g in shares] == ["load", "load2"], shares
    assert step["valid"], step["invalid_reason"]
    for share in shares:
        assert share["offered_rps"] == 200 and share["tool"].startswith("oha 1.16")
        assert share["achieved_rps"] == pytest.approx(200, rel=0.1), share
        assert 0 <= share["start_skew_ms"] < 4000, share
        assert share["loadhost"]["cpu_pct"] > 0 and share["connections"] >= 1
    assert "self-check at 400/s" in done.stdout
    run_json = json.loads((run_dir / "run.json").read_text())
    assert set(run_json["load_hosts"]) == {"load", "load2"}
    assert {"load", "load2"} <= {p.name for p in (run_dir / "pcp").iterdir() if p.is_dir()}  # PCP logs both
    # The step's histogram kept whole, read back with hdrh's reader: its p99 is the one recorded; each host's part
    # is kept beside it, and the parts hold the step's requests.
    whole = hlog.read(run_dir / "latency" / "step-001.hlog")
    assert whole.get_value_at_percentile(99) / 1000.0 == step["latency_ms"]["p99"]
    parts = [hlog.read(run_dir / "latency" / f"step-001-{host}.hlog") for host in ("load", "load2")]
    assert sum(part.get_total_count() for part in parts) == whole.get_total_count() > 0


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

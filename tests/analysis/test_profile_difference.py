"""What B spends more on than A (capbench/analysis/profile_difference.py): CPU samples per thousand requests, method by
method, from two profiles recorded together."""
from __future__ import annotations

from capbench.analysis.duet_common import common_rate
from capbench.analysis.profile_difference import grew, samples_per_s, totals


def rows(**counts: int) -> list[dict]:
    return [{"name": name, "count": count, "total": float(count)} for name, count in counts.items()]


def test_methods_that_grew_per_request_come_first_and_the_others_are_left_out():
    # B served fewer requests (900 against 1000) in the same seconds: its counts are scaled by its own requests.
    a = {"cpu_self": rows(grind=200, parse=100, log=50), "cpu_total": [], "cpu_application": rows(grind=200)}
    b = {"cpu_self": rows(grind=360, parse=90, log=45), "cpu_total": [], "cpu_application": rows(grind=360)}
    found = grew(a, b, 1000, 900, top=200)
    assert found["self"] == [{"name": "grind", "a": 200.0, "b": 400.0, "grew": 200.0, "a_at_most": False}]
    assert found["total"] == [] and found["application"][0]["grew"] == 200.0


def test_a_method_with_fewer_than_min_samples_in_b_is_chance_and_left_out():
    a = {"cpu_self": rows(grind=10)}
    b = {"cpu_self": rows(grind=20, once=1, twice=2, thrice=3)}
    assert [r["name"] for r in grew(a, b, 1000, 1000, top=200)["self"]] == ["grind", "thrice"]


def test_a_method_missing_from_as_cut_table_counts_at_its_last_row_and_says_so():
    a = {"cpu_self": rows(grind=50, parse=10)}  # cut at 2 rows: a method below held at most 10 samples
    b = {"cpu_self": rows(lock=40, grind=50)}
    [lock] = grew(a, b, 1000, 1000, top=2)["self"]
    assert lock == {"name": "lock", "a": 10.0, "b": 40.0, "grew": 30.0, "a_at_most": True}
    # A whole table (fewer rows than asked for): a method missing from it was not sampled at all.
    assert grew(a, b, 1000, 1000, top=3)["self"][0] == {"name": "lock", "a": 0.0, "b": 40.0, "grew": 40.0,
                                                       "a_at_most": False}


def test_the_samples_per_thousand_requests_and_the_rate_both_builds_are_profiled_at():
    assert totals({"cpu_samples": 300}, 1200) == 250.0
    assert samples_per_s({"cpu_samples": 300, "seconds": 10.1}) == 29.7 and samples_per_s({"cpu_samples": 3}) is None
    assert common_rate(80, 900.0, 600.0) == 480.0 and common_rate(100, 900.0, 600.0) == 600.0
    assert common_rate(80, None, 600.0) is None and common_rate(80, 900.0, 0) is None


def test_the_slots_compare_sample_for_sample_only_when_one_sampler_took_both_at_one_interval():
    from capbench.analysis.profile_difference import sampled_by
    async_1666 = {"by": "async-profiler", "event": "itimer", "interval_us": 1666}
    assert sampled_by(async_1666, dict(async_1666)) == {"by": "async-profiler", "event": "itimer", "interval_us": 1666}
    assert sampled_by({"by": "JFR", "why": "CPU_PROFILER=jfr"}, {"by": "JFR"}) == {"by": "JFR"}
    mixed = sampled_by(async_1666, {"by": "JFR", "why": "async-profiler did not start"})
    assert mixed["by"] == "mixed" and "A's CPU was sampled by async-profiler, B's by JFR" in mixed["why"]
    assert sampled_by(async_1666, {**async_1666, "interval_us": 833})["by"] == "mixed"

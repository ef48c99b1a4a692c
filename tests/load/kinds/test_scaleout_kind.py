"""bench-scaleout's summary and console: X(N), the ideal, E(N), the harness's CPU at each point, a point the
balancer limited left out of the fit with its reason, and the report's figure from that summary."""
from __future__ import annotations

import json
from types import SimpleNamespace

from load.kinds.scaleout import KIND, TARGETS
from report import build


def target(repeats, lb_cores=0.2, busy=60.0):
    return {"capacity_rps": sorted(repeats)[len(repeats) // 2], "repeats": repeats, "min_rps": min(repeats),
            "max_rps": max(repeats), "metrics_at_capacity": {"step": 1, "lb": {"haproxy_cpu_cores": lb_cores},
                                                            "load": {"machine_cpu_busy_pct": busy}}}


def test_points_e_and_a_balancer_bound_point_left_out(tmp_path, capsys):
    steps = tmp_path / "steps.jsonl"
    steps.write_text(json.dumps({"label": TARGETS[0], "passed": True, "offered_rps": 500.0, "step": 1,
                                 "loadhost": {"cpu_pct": 31.0}}) + "\n")
    caps = {1: [490.0, 500.0, 510.0], 2: [960.0, 980.0, 1000.0], 3: [1300.0, 1350.0, 1400.0]}
    summary = {"driver": {"name": "oha"},
               "targets": {t: target(caps[k], lb_cores=0.95 if k == 3 else 0.2) for k, t in enumerate(TARGETS, 1)}}
    KIND.summarize(SimpleNamespace(paths=SimpleNamespace(steps=steps)), summary)
    points = summary["scaleout"]["points"]
    assert [(p["n"], p["capacity_rps"], p["ideal_rps"], p["efficiency"]) for p in points] == \
        [(1, 500.0, 500.0, 1.0), (2, 980.0, 1000.0, 0.98), (3, 1350.0, 1500.0, 0.9)]
    assert points[0]["generator_cpu_pct"] == 31.0 and points[0]["machine_idle_pct"] == 40.0
    assert points[2]["limited_by"].startswith("the balancer used 95 % of a core")
    # Two points the harness did not limit cannot carry a three-parameter fit: said, not faked.
    assert summary["scaleout"]["fit"]["left_out"] == [{"n": 3, "reason": points[2]["limited_by"]}]
    assert "too few points" in summary["scaleout"]["fit"]["error"]
    KIND.console(summary)
    out = capsys.readouterr().out
    assert "left out: the balancer used 95 %" in out and "USL over N: no fit: too few points" in out
    section = build.usl_section({**summary, "kind": "scaleout"})
    assert section["what"] == "nodes in rotation" and len(section["points"]) == 6 and section["fit"] is None

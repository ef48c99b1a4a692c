"""bench-variants in rounds: every variant once a round in the order drawn for it, compared within each round
(capbench/analysis/rounds.py) on node1 and on the cluster; on the console and the report."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from capbench.kinds import KINDS
from capbench.kinds.variants import compare_rounds, print_rounds, round_table

ORDERS = [["v3", "v1"], ["v1", "v3"], ["v3", "v1"]]
# Round 2 ran on a machine a third slower: v3 still beat v1 within it.
NODE1 = {"v1": [300.0, 200.0, 310.0], "v3": [600.0, 420.0, 590.0]}
CLUSTER = {"v1": [700.0, 500.0, None], "v3": [1500.0, 1000.0, 1450.0]}


def targets() -> dict:
    return {f"{target} {v}": {"searches": [{"repeat": r, "capacity_rps": c} for r, c in enumerate(caps, 1)]}
            for target, table in (("node1", NODE1), ("cluster", CLUSTER)) for v, caps in table.items()}


def test_each_round_holds_each_variants_capacity_of_that_repeat():
    assert round_table(targets(), "node1", ["v1", "v3"], 3) == [{"v1": 300.0, "v3": 600.0}, {"v1": 200.0, "v3": 420.0},
                                                                {"v1": 310.0, "v3": 590.0}]
    assert round_table(targets(), "cluster", ["v1", "v3"], 3)[2] == {"v1": None, "v3": 1450.0}


def test_variants_are_compared_within_their_rounds_and_said(capsys):
    found = compare_rounds(targets(), ["v1", "v3"], ORDERS, 5.0)
    node1 = found["node1"]
    assert node1["best"] == "v3" and node1["wins"] == {"v1": 0, "v3": 3} and node1["verdict"].startswith("significant")
    assert node1["vs_baseline_pct"]["v3"] == 100.0  # 600/300, 420/200, 590/310: the median ratio, 2.0
    # A round without v1's cluster capacity leaves v1 out of the standings, not the round's best.
    assert found["cluster"]["round_best"] == ["v3", "v3", "v3"]
    print_rounds(found)
    out = capsys.readouterr().out
    assert "round 2: v1 200.0, v3 420.0*" in out and "rounds won: v1 0, v3 3" in out


def test_the_report_shows_the_rounds(tmp_path):
    from capbench.report import build
    data = Path(__file__).parents[1] / "report" / "data"
    source = next(p for p in data.iterdir() if p.is_dir())
    run = tmp_path / source.name
    shutil.copytree(source, run)
    summary = json.loads((run / "summary.json").read_text())
    summary["variants"] = {"variants": {v: {"node1_rps": NODE1[v][0], "cluster_rps": CLUSTER[v][0]} for v in ("v1", "v3")},
                           "orders": ORDERS, "rounds": compare_rounds(targets(), ["v1", "v3"], ORDERS, 5.0)}
    (run / "summary.json").write_text(json.dumps(summary))
    html = build.build(run, KINDS["variants"].shows.section).read_text()
    assert "node1, round by round" in html and "cluster, round by round" in html
    assert "<td>2</td><td>v1, v3</td>" in html and "<b>420.0</b>" in html
    assert "rounds won: v1 0, v3 3" in html and "v3 +100.0 %" in html

"""make gate's settings: each key by its own rule (none is "any text"), then what depends on the bench and the
mode (capbench/settings/bench.py's GateKeys and gate_settings)."""
from __future__ import annotations

import pytest

from capbench.analysis import gate_verdict
from capbench.kinds import KINDS
from capbench.settings.bench import GateKeys, gate_settings
from capbench.settings.fields import declared

BENCHES = {"single": ("node1",), "cluster": ("node1", "node2", "node3", "cluster")}


def test_the_defaults_are_a_duet_on_the_cluster():
    chosen = gate_settings({}, BENCHES)
    assert (chosen.mode, chosen.bench, chosen.drop_pct, chosen.repeats, chosen.rounds) == ("duet", "cluster", 10.0, 3, 5)
    chosen = gate_settings({"GATE_MODE": "history", "GATE_P99_MS": "250@800, node1:300@400"}, BENCHES)
    assert chosen.bench == "cluster" and chosen.drop_pct == 10.0 and chosen.baseline is None
    assert chosen.p99 == (gate_verdict.P99Threshold("cluster", 250, 800), gate_verdict.P99Threshold("node1", 300, 400))


def test_every_key_is_refused_by_its_own_rule_each_on_its_line():
    with pytest.raises(gate_verdict.GateSettingsError) as refused:
        gate_settings({"GATE_MODE": "later", "GATE_BENCH": "usl", "GATE_REPEATS": "three", "GATE_DROP_PCT": "100",
                       "GATE_P99_MS": "250", "CALIBRATE_ROUNDS": "11", "BASELINE": "release 9"}, BENCHES)
    assert str(refused.value).splitlines() == [
        "GATE_MODE='later' is not allowed: use one of history, duet",
        "GATE_BENCH='usl' is not allowed: use one of single, cluster",
        "GATE_REPEATS='three' is not allowed: use an integer from 1 to 20",
        "GATE_DROP_PCT='100' is not allowed: use a number from 0 to below 100",
        "GATE_P99_MS='250' is not allowed: use empty, or [TARGET:]MS@RATE items separated by spaces, MS and RATE "
        "above 0 (e.g. 250@800 or node1:250@400)",
        "CALIBRATE_ROUNDS='11' is not allowed: use an integer from 1 to 10",
        "BASELINE='release 9' is not allowed: use empty, or a baseline's tag or a run id (1 to 64 letters, digits, "
        "'.', '_' or '-')"]


def test_what_depends_on_the_bench_and_the_mode():
    with pytest.raises(gate_verdict.GateSettingsError, match="GATE_P99_MS's target 'node9' is not one of cluster's"):
        gate_settings({"GATE_MODE": "history", "GATE_P99_MS": "node9:1@2"}, BENCHES)
    with pytest.raises(gate_verdict.GateSettingsError, match="cannot be judged with GATE_MODE=duet"):
        gate_settings({"GATE_P99_MS": "250@800"}, BENCHES)


def test_no_key_takes_any_text_and_the_benches_are_the_gated_kinds():
    assert all(s.rule.allowed != "any text" for s in declared(GateKeys))
    assert set(gate_verdict.BENCHES) == {kind.name for kind in KINDS.values() if kind.needs.gated}

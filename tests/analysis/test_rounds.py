"""Points compared within their rounds (capbench/analysis/rounds.py): a round's speed divides out, the verdict asks for
the best to beat the runner-up in every round and beyond the band the rounds' ratios span."""
import pytest

from capbench.analysis import rounds

# Three settings over three rounds; the machine ran 30 % slower in round 2, for all of them alike.
DRIFTING = [{"A": 500.0, "B": 450.0, "C": 300.0},
            {"A": 350.0, "B": 320.0, "C": 210.0},
            {"A": 510.0, "B": 470.0, "C": 305.0}]


def test_a_round_s_speed_divides_out_and_the_best_that_beat_the_runner_up_every_time_is_significant():
    judged = rounds.compare(DRIFTING, precision_pct=5, baseline="C")
    assert judged["best"] == "A" and judged["runner_up"] == "B" and judged["beat_runner_up"] == 3
    assert judged["wins"] == {"A": 3, "B": 0, "C": 0} and judged["round_best"] == ["A", "A", "A"]
    # A/B per round: 1.111, 1.094, 1.085: median +9.4 %, half their range 1.3 % (the precision's 5 % is larger)
    assert judged["margin_pct"] == 9.4 and judged["band_pct"] == 5
    assert judged["verdict"] == "significant: A beat B in all 3 rounds, by 9.4 % (median), beyond the band ±5.0 %"
    assert judged["vs_baseline_pct"] == {"A": 66.7, "B": 52.4, "C": 0.0} and judged["within_band"] == ["A"]
    # Across rounds the same figures would rank nothing: A's own capacity moved 31 % between rounds 1 and 2.
    assert max(r["A"] for r in DRIFTING) / min(r["A"] for r in DRIFTING) > 1.3


def test_a_best_that_lost_a_round_cannot_be_told_and_one_inside_the_band_is_within_it():
    table = [{"A": 500.0, "B": 400.0}, {"A": 380.0, "B": 400.0}, {"A": 520.0, "B": 400.0}]
    judged = rounds.compare(table, precision_pct=3)
    assert judged["best"] == "A" and judged["beat_runner_up"] == 2 and judged["wins"] == {"A": 2, "B": 1}
    # ratios 1.25, 0.95, 1.3: median +25 %, band 17.5 %: beyond the band but not in every round
    assert judged["margin_pct"] == 25.0 and judged["band_pct"] == 17.5
    assert judged["verdict"] == "cannot tell: A is 25.0 % over B (median) but ahead in 2 of 3 rounds only"
    close = rounds.compare([{"A": 402.0, "B": 400.0}, {"A": 404.0, "B": 400.0}], precision_pct=5)
    assert close["verdict"].startswith("within the noise band: A and B cannot be told apart (A ahead in 2 of 2")
    assert close["within_band"] == ["A", "B"]


def test_a_point_without_a_capacity_in_a_round_is_left_out_of_the_ranking():
    table = [{"A": 300.0, "B": None}, {"A": 320.0, "B": 500.0}]
    judged = rounds.compare(table, precision_pct=5)
    assert judged["best"] == "A" and judged["runner_up"] is None and judged["wins"] == {"A": 1, "B": 1}
    assert rounds.compare([{"A": None}, {"A": None}], 5)["best"] is None


@pytest.mark.parametrize("table", [DRIFTING])
def test_standings_are_each_rounds_capacity_over_its_geometric_mean(table):
    stand = rounds.standings(table)
    for number in range(len(table)):
        product = 1.0
        for label in stand:
            product *= stand[label][number]
        assert product == pytest.approx(1.0)

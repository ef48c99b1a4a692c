"""A findings record's JSON (capbench/rundata/findings.py): nested records rebuilt by their declared types, a field a record
predates taking its default, entries no field names dropped, and update() refusing a field the record lacks."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from capbench.rundata.findings import Findings


@dataclass
class Point:
    n: int
    x: float | None = None


@dataclass
class Curve(Findings):
    kind = "curve"
    points: list[Point] = field(default_factory=list)
    by_name: dict[str, Point] = field(default_factory=dict)
    best: Point | None = None
    note: str = ""


def test_nested_records_come_back_as_their_types():
    curve = Curve([Point(1, 5.0)], {"a": Point(2)}, Point(3, 7.5), "x")
    assert Curve.from_json(curve.to_json()) == curve
    assert Curve.in_summary({"curve": curve.to_json(), "other": 1}) == curve


def test_a_field_the_record_predates_takes_its_default_and_unknown_entries_are_dropped():
    assert Curve.from_json({"points": [{"n": 1}], "gone": 3}) == Curve([Point(1)])
    assert Curve.from_json(None) == Curve() == Curve.in_summary({})


def test_update_decodes_and_refuses_a_field_the_record_lacks():
    curve = Curve()
    curve.update({"best": {"n": 4, "x": 1.0}, "note": "y"})
    assert curve.best == Point(4, 1.0) and curve.note == "y"
    with pytest.raises(KeyError, match="Curve has no field 'points_'"):
        curve.update({"points_": []})

"""E's caveat: said above 1 and below 0.5 only, in one wording for every place that shows E."""
from __future__ import annotations

import pytest

from capbench.analysis import efficiency


@pytest.mark.parametrize("e, starts", [(1.125, "E > 1 (superlinear): usually the nodes alone were measured colder"),
                                       (0.45, "E < 0.5: the cluster wastes over half its nodes' capacity")])
def test_a_superlinear_or_wasteful_e_gets_its_caveat(e, starts):
    assert efficiency.caveat(e).startswith(starts)


@pytest.mark.parametrize("e", [1.0, 0.5, 0.781, None, "n/a"])
def test_an_ordinary_or_unknown_e_gets_none(e):
    assert efficiency.caveat(e) is None

"""Each kind's part of report.html is a Jinja2 fragment in a file beside its module (capbench/report/sections.py's
fragment_beside): every one is there, inside the package (so a wheel carries it), and compiles."""
from pathlib import Path

import jinja2
import pytest

import capbench
from capbench.kinds import KINDS

SECTIONS = [(name, kind.shows.section) for name, kind in KINDS.items() if kind.shows.section and kind.shows.section.fragments]


def test_the_kinds_with_a_report_section_have_their_fragments():
    assert {"cluster", "duet", "failover", "overhead", "scaleout", "sessions", "stress", "variants"} <= \
        {name for name, _ in SECTIONS}


@pytest.mark.parametrize(("name", "section"), SECTIONS, ids=[name for name, _ in SECTIONS])
def test_each_fragment_is_a_file_of_the_package_that_compiles(name, section):
    package = Path(capbench.__file__).parent
    for path in section.fragments:
        assert path.is_file() and package in path.parents, path
    jinja2.Environment(autoescape=True).parse(section.template())  # a syntax error raises

"""report.html from a small results folder of ours (tests/report/data/README.md says which run), rendered
offline in headless Chromium: every figure present and drawn, the table, E, the hints; `make report`'s
refusals."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from report import build
from report.__main__ import main as report_main

DATA = Path(__file__).parent / "data"
RUN = next(p for p in DATA.iterdir() if p.is_dir())
FIGURES = {"capacity-node1.png", "capacity-node2.png", "capacity-node3.png", "capacity-cluster.png",
           "single-vs-cluster.png", "load-balance.png", "latency-spectrum.png", "usl.png"}
# matplotlib's default colours for node1 (tab:blue) and the cluster (tab:purple): only the figures draw them.
FIGURE_COLOURS = {(31, 119, 180), (148, 103, 189)}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("results") / RUN.name
    shutil.copytree(RUN, run)
    return build.build(run)


def test_every_figure_is_made_and_inlined(report):
    made = {p.name for p in (report.parent / "figures").glob("*.png")}
    assert made == FIGURES
    html = report.read_text()
    assert html.count('src="data:image/png;base64,') == len(FIGURES)
    assert not re.search(r'(src|href)="(https?:)?//', html), "the page must not load anything from a network"


def test_the_page_has_the_table_e_hints_and_profile(report):
    html = report.read_text()
    for target in ("node1", "node2", "node3", "cluster"):
        assert f"<td>{target}</td>" in html
    assert "E = X<sub>cluster</sub> / ΣX<sub>i</sub> = 0." in html
    assert "CPU saturated" in html and "cpu_pct_of_quota = " in html
    assert "too few points to fit the USL" in html  # a cluster run has N = 1 and 3 only: said, not fitted
    assert "Serial" in html or "G1" in html or "Parallel" in html  # the GC the JVMs actually used


def test_it_renders_offline_in_headless_chromium(report, tmp_path):
    shot = tmp_path / "report.png"
    done = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-background-networking", "--window-size=1200,9000",
                           f"--screenshot={shot}", report.as_uri()], capture_output=True, timeout=120)
    assert done.returncode == 0 and shot.is_file(), done.stderr.decode()[-500:]
    image = Image.open(shot).convert("RGB")
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20)}
    assert FIGURE_COLOURS <= colours, "the figures were not drawn"
    # Below the text: most of the page is figures, not blank space or broken-image icons.
    non_white = sum(count for count, colour in image.getcolors(maxcolors=1 << 20) if colour != (255, 255, 255))
    assert non_white > 0.05 * image.width * image.height


def test_make_report_refuses_what_is_not_a_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    assert report_main(["build", "nosuchrun"]) == 2
    assert "matches 0 folders" in capsys.readouterr().err
    (tmp_path / "20260101T000000Z-abc-single").mkdir()
    assert report_main(["build", "20260101T000000Z"]) == 2
    assert "missing run.json, summary.json, steps.jsonl" in capsys.readouterr().err

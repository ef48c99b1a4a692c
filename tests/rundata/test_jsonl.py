"""JSON-lines files (steps.jsonl, history.jsonl): one whole line per append even when writers end together; a line
torn by a crash or damaged by hand reported and skipped, and the next append not glued to it."""
from __future__ import annotations

import subprocess
import sys

from capbench.rundata import jsonl

# Four writers, each a process of its own (not a fork of the test's: a fork of pytest-xdist's worker, whose other
# threads may hold a lock at that instant, once hung in CI for 14 minutes).
WRITER = """import sys, time
from pathlib import Path
from capbench.rundata import jsonl
path = Path(sys.argv[1])
while not path.with_suffix(".go").exists():  # all four begin together
    time.sleep(0.001)
for i in range(500):
    jsonl.append(path, {"run_id": f"p{sys.argv[2]}-{i}", "padding": "x" * 5000})
"""


def test_concurrent_appends_never_interleave(tmp_path):
    path = tmp_path / "records.jsonl"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(n)]) for n in range(4)]
    path.with_suffix(".go").touch()
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0, 0, 0]
    lines = jsonl.read(path)
    assert len(lines) == 2000 and all(len(line["padding"]) == 5000 for line in lines)


def test_a_torn_line_is_reported_and_skipped_and_the_next_append_stays_whole(tmp_path, capsys):
    path = tmp_path / "records.jsonl"
    jsonl.append(path, {"run_id": "whole"})
    with path.open("a") as f:
        f.write('{"run_id": "tor')  # a crash in the middle of a write
    assert [line["run_id"] for line in jsonl.read(path)] == ["whole"]
    assert f"{path} line 2 is damaged" in capsys.readouterr().err
    jsonl.append(path, {"run_id": "after"})  # not glued to the torn line
    assert [line["run_id"] for line in jsonl.read(path)] == ["whole", "after"]


def test_lines_damaged_by_hand_are_skipped_not_fatal(tmp_path, capsys):
    path = tmp_path / "records.jsonl"
    path.write_text('{"run_id": "a"}\n[1, 2]\nnot json at all\n\x00\x00\n\n{"run_id": "b"}\n')
    assert [line["run_id"] for line in jsonl.read(path)] == ["a", "b"]
    assert capsys.readouterr().err.count("is damaged") == 3

"""JSON-lines files (steps.jsonl, history.jsonl): one whole line per append even when writers end together; a line
torn by a crash or damaged by hand reported and skipped, and the next append not glued to it."""
from __future__ import annotations

import multiprocessing

from capbench.rundata import jsonl


def _append_many(args) -> None:
    path, n = args
    for i in range(50):
        jsonl.append(path, {"run_id": f"p{n}-{i}", "padding": "x" * 5000})


def test_concurrent_appends_never_interleave(tmp_path):
    path = tmp_path / "records.jsonl"
    with multiprocessing.Pool(4) as pool:
        pool.map(_append_many, [(path, n) for n in range(4)])
    lines = jsonl.read(path)
    assert len(lines) == 200 and all(len(line["padding"]) == 5000 for line in lines)


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

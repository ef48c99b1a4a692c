"""Reading and writing the results' JSON files, in one place: JSON written whole or not at all; JSON-lines files
(steps.jsonl, history.jsonl) appended a whole line at a time under a lock, and read back with a damaged line
(torn by a crash, edited by hand) reported and skipped, never fatal."""
from __future__ import annotations

import fcntl
import json
import os
import sys
from pathlib import Path


def write_json(path: Path, data: dict) -> None:
    """Whole or not at all: written beside, then renamed over."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def read_json(path: Path) -> dict | None:
    """The file's object, or None when it is missing or not JSON."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def append(path: Path, record: dict) -> None:
    """One whole line, under an exclusive lock (two writers cannot interleave), on disk when this returns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as out:
        fcntl.flock(out.fileno(), fcntl.LOCK_EX)
        try:
            # A line torn by a crash has no newline: end it, or this line would be glued to it and lost too.
            size = out.seek(0, os.SEEK_END)
            torn = size > 0 and os.pread(out.fileno(), 1, size - 1) != b"\n"
            out.write((b"\n" if torn else b"") + (json.dumps(record) + "\n").encode())
            out.flush()
            os.fsync(out.fileno())
        finally:
            fcntl.flock(out.fileno(), fcntl.LOCK_UN)


def read(path: Path) -> list[dict]:
    """The lines that parse as JSON objects; a damaged one is reported on stderr and skipped."""
    if not path.exists():
        return []
    lines = []
    for number, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            line = None
        if not isinstance(line, dict):
            print(f"capbench: warning: {path} line {number} is damaged (not a JSON object), skipped: "
                  f"{text[:80]!r}", file=sys.stderr)
            continue
        lines.append(line)
    return lines


def write_all(path: Path, records: list[dict]) -> None:
    """Replaces a JSON-lines file whole (e.g. step records with figures added after the run)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.replace(tmp, path)

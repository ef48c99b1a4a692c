"""make gate GATE_MODE=duet, and make gate-aa: the baseline build (DUET_A) and the candidate (DUET_B) measured
together in one bench-duet run (load/kinds/duet.py), judged from the pairs' ratios (analysis/duet_verdict.py)
at GATE_DROP_PCT, written as every gate's outputs (report/pipeline.py).

make gate-aa runs the same duet with B = A: its interval's reach from 1 (the A/A band) is the smallest drop this
machine can show, recorded in results/aa-band.json; a duet gate refuses a tolerance below the last band measured,
as it could only call noise a drop (or never call one)."""
from __future__ import annotations

import time

from analysis import duet_verdict
from analysis.gate_verdict import Check, Gate, GateSettings
from hosts.cluster_settings import SettingsRefused
from load import bench as bench_command
from load.bench_settings import SettingsError
from load.kinds import KINDS
from load.progress import say
from load.session import refuse
from rundata import jsonl
from rundata.layout import gate_latest_dir, results_dir
from rundata.records import read_steps
from rundata.summary import Summary

INTERRUPTED = 130
CHECK = "capacity B/A"


def aa_path():
    return results_dir() / "aa-band.json"


def tolerance_problem(drop_pct: float, band: dict | None) -> str | None:
    """Why GATE_DROP_PCT is below what this machine can show (the last A/A band), or None."""
    if band is None or band.get("band_pct") is None or drop_pct >= band["band_pct"]:
        return None
    return (f"GATE_DROP_PCT='{drop_pct:g}' is below this machine's A/A band of {band['band_pct']:g} % (make gate-aa, "
            f"run {band['run_id']}): two equal builds' ratios already reach that far from 1, so a smaller drop cannot "
            f"be told from noise here; use GATE_DROP_PCT={band['band_pct']:g} or more, or measure the band again")


def pairs_of(summary: dict) -> list[duet_verdict.Pair]:
    return [duet_verdict.Pair.from_dict(p) for p in (summary.get("duet") or {}).get("pairs", [])]


def judge(summary: dict, drop_pct: float, aa: bool) -> Gate:
    """The gate's one capacity check from the run's pairs; an A/A gate notes its band."""
    duet = summary.get("duet") or {}
    pairs = pairs_of(summary)
    said = duet_verdict.judge(pairs, drop_pct)
    builds = duet.get("builds") or [{}, {}]
    figures = {**said.as_dict(), "tolerance_pct": drop_pct, "pairs": [p.as_dict() for p in pairs],
               "a": builds[0].get("text", ""), "b": builds[1].get("text", ""),
               "common": (duet.get("common") or {}).get("intervals") or {}}
    notes = [] if summary.get("status") == "complete" else [f"the run is {summary.get('status')}: "
                                                             f"{summary.get('error')}"]
    if aa and said.interval is not None:
        figures["aa_band_pct"] = duet_verdict.aa_band_pct(said.interval)
        notes.append(f"A/A band {figures['aa_band_pct']:g} %: the smallest drop a duet on this machine can show")
    how = "measured together in this run (a duet: A = " + (builds[0].get("text") or "as configured") + ")"
    return Gate(summary.get("run_id", ""), None, how, drop_pct, [Check(CHECK, said.verdict, said.message, figures)],
                notes)


def run(chosen: GateSettings, environ: dict[str, str], check_only: bool, aa: bool) -> int:
    kind = KINDS["duet"]
    if aa:
        environ = {**environ, "DUET_B": environ.get("DUET_A", "")}
    try:
        settings, driver, wrk2_local = bench_command.checked(False, environ, kind)
        problem = None if aa else tolerance_problem(chosen.drop_pct, jsonl.read_json(aa_path()))
        if problem:
            raise SettingsError(problem)
    except (SettingsError, SettingsRefused) as problem:
        return refuse(problem)
    code, paths = bench_command.run(kind, settings, driver, wrk2_local, "make gate-aa" if aa else "make gate",
                                    check_only)
    if paths is None or code == INTERRUPTED:
        return code
    summary = jsonl.read_json(paths.summary) or {}
    result = judge(summary, chosen.drop_pct, aa)
    from report import pipeline  # its libraries only once there is a verdict to write
    pipeline.write(result, kind.name, Summary.from_json(summary), read_steps(paths.steps), paths.root / "gate",
                   gate_latest_dir())
    [check] = result.checks
    print(f"\ngate: {result.run_id}: B = {check.figures['b'] or 'as configured'} against A = "
          f"{check.figures['a'] or 'as configured'}, measured together")
    print(f"  {check.verdict.upper():<16}{check.name:<16}{check.message}")
    for note in result.notes:
        print(f"  note: {note}")
    print(f"gate: {result.verdict.upper()} (exit {result.code}); files in {paths.root / 'gate'}, copied to "
          f"{gate_latest_dir()}")
    if aa and "aa_band_pct" in check.figures:
        jsonl.write_json(aa_path(), {"run_id": result.run_id, "band_pct": check.figures["aa_band_pct"],
                                     "interval": check.figures["interval"], "pairs": len(check.figures["pairs"]),
                                     "measured_epoch": time.time()})
        say(f"A/A band {check.figures['aa_band_pct']:g} % recorded in {aa_path()}: duet gates refuse a smaller "
            "GATE_DROP_PCT")
    return result.code

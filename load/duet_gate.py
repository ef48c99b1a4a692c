"""make gate (a duet unless GATE_MODE=history), and make gate-aa: the baseline build (DUET_A) and the candidate
(DUET_B) measured together in one bench-duet run (load/kinds/duet.py), judged from the pairs' ratios
(analysis/duet_verdict.py) at GATE_DROP_PCT, written as every gate's outputs (report/pipeline.py). With neither
named, A is the build of the accepted baseline (make baseline keeps it: load/duet_baseline.py) and B this one.

make gate-aa runs the same duet with B = A: its interval's reach from 1 (the A/A band) is the smallest drop this
machine can show, recorded in results/aa-band.json; a duet gate refuses a tolerance below the last band measured,
as it could only call noise a drop (or never call one)."""
from __future__ import annotations

import time
from dataclasses import replace

from analysis import duet_verdict
from analysis.gate_verdict import CANNOT_TELL, Check, Gate, GateSettings
from hosts.cluster_settings import SettingsRefused, cluster_settings
from load import bench as bench_command, duet_baseline
from load.bench_settings import SettingsError
from load.duet import app_key
from load.kinds import KINDS
from load.progress import say
from load.session import refuse
from rundata import jsonl
from rundata.history import read_history
from rundata.layout import gate_latest_dir, history_path, results_dir
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


def judge(summary: dict, drop_pct: float, aa: bool, baseline: str | None = None) -> Gate:
    """The gate's one capacity check from the run's pairs; an A/A gate notes its band. `baseline`: how A was
    chosen when it is the accepted baseline's build ("" when none was accepted: then nothing is compared and the
    gate cannot tell)."""
    duet = summary.get("duet") or {}
    pairs = pairs_of(summary)
    said = duet_verdict.judge(pairs, drop_pct)
    if baseline == "":
        said = replace(said, verdict=CANNOT_TELL, message=f"no build accepted as a baseline yet, so this build "
                       f"was measured against itself ({said.message}); make baseline RUN=<this run> keeps it")
    builds = duet.get("builds") or [{}, {}]
    figures = {**said.as_dict(), "tolerance_pct": drop_pct, "pairs": [p.as_dict() for p in pairs],
               "a": builds[0].get("text", ""), "b": builds[1].get("text", ""),
               "common": (duet.get("common") or {}).get("intervals") or {}}
    notes = [] if summary.get("status") == "complete" else [f"the run is {summary.get('status')}: "
                                                             f"{summary.get('error')}"]
    if aa and said.interval is not None:
        figures["aa_band_pct"] = duet_verdict.aa_band_pct(said.interval)
        notes.append(f"A/A band {figures['aa_band_pct']:g} %: the smallest drop a duet on this machine can show")
    how = ("measured together in this run (a duet: A = " + (builds[0].get("text") or "as configured")
           + (f", {baseline}" if baseline else "") + ")")
    return Gate(summary.get("run_id", ""), None, how, drop_pct, [Check(CHECK, said.verdict, said.message, figures)],
                notes)


def with_baseline(chosen: GateSettings, environ: dict[str, str], settings) -> tuple[dict[str, str], str]:
    """The environment with DUET_A the build of the accepted baseline (BASELINE's, else the last kept for a
    cluster like this one) where it differs from this one, and how it was chosen ("" when none was accepted)."""
    cluster = cluster_settings()
    mark = duet_baseline.chosen_mark(read_history(history_path())[1], chosen.baseline,
                                      app_key(cluster))
    if mark is None:
        if chosen.baseline:
            raise SettingsError(f"BASELINE='{chosen.baseline}' is not a baseline whose build was kept (a tag, or the "
                                "prefix of a run accepted with make baseline since builds are kept)")
        return {**environ, "DUET_A": ""}, ""
    try:
        words = duet_baseline.baseline_words(mark, settings.as_dict(), cluster)
    except duet_baseline.BuildNotKept as problem:
        raise SettingsError(str(problem)) from None
    text = " ".join(f"{key}={value}" for key, value in words.items())
    how = (f"the baseline run {mark.run_id}" + (f" ({mark.tag})" if mark.tag else "") + f", accepted {mark.time}"
           + ("" if words else ": the same build as this one"))
    say(f"gate: A is the baseline's build ({how}): {text or 'as configured'}")
    return {**environ, "DUET_A": text}, how


def run(chosen: GateSettings, environ: dict[str, str], check_only: bool, aa: bool) -> int:
    kind = KINDS["duet"]
    if aa:
        environ = {**environ, "DUET_B": environ.get("DUET_A", "")}
    baseline = None
    try:
        settings, driver, wrk2_local = bench_command.checked(False, environ, kind)
        if not aa and "DUET_A" not in environ and "DUET_B" not in environ:  # no builds named: the baseline's
            environ, baseline = with_baseline(chosen, environ, settings)
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
    result = judge(summary, chosen.drop_pct, aa, baseline)
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

"""make gate (a duet unless GATE_MODE=history), and make gate-aa: the baseline build (DUET_A) and the candidate
(DUET_B) measured together in one bench-duet run (capbench/kinds/duet.py), judged from the pairs' ratios
(capbench/analysis/duet_verdict.py) at GATE_DROP_PCT, written as every gate's outputs (capbench/report/pipeline.py). With neither
named, A is the build of the accepted baseline (make baseline keeps it: capbench/duet/baseline.py) and B this one.

make gate-aa runs the same duet with B = A: its interval's reach from 1 (the A/A band), recorded in
results/aa-band.json, is how far equal builds look apart here, a false-alarm figure. What a gate can call is
make gate-calibrate's (capbench/commands/gate_calibration.py): a duet gate refuses a tolerance below the smallest drop its
calibration calls with 80 % power, and says with every verdict what it can call."""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

from capbench.analysis import duet_blocks, duet_common, duet_verdict
from capbench.analysis.gate_verdict import ABOVE, CANNOT_TELL, Check, Gate, GateSettings, let_through
from capbench.commands import bench as bench_command, gate_calibration
from capbench.duet import baseline as duet_baseline
from capbench.duet.builds import app_key
from capbench.duet.findings import DuetFindings
from capbench.engine.progress import say
from capbench.engine.session import refuse
from capbench.hosts.cluster_settings import SettingsRefused, cluster_settings
from capbench.kinds import KINDS
from capbench.rundata import jsonl
from capbench.rundata.history import read_history
from capbench.rundata.layout import aa_band_path, gate_latest_dir, history_path
from capbench.rundata.records import read_steps
from capbench.rundata.summary import Summary
from capbench.settings.bench import SettingsError

INTERRUPTED = 130
CHECK = "capacity B/A"
SLO_CHECK = "SLO at a common rate"


def record_band(check: Check, summary: Summary) -> None:
    """An A/A gate's band in results/aa-band.json, from a complete run only: a band from part of a duet says less
    than it seems."""
    if "aa_band_pct" not in check.figures:
        return
    if summary.status != "complete":
        say(f"A/A band {check.figures['aa_band_pct']:g} % not recorded: the run is {summary.status}")
        return
    jsonl.write_json(aa_band_path(), {"run_id": summary.run_id, "band_pct": check.figures["aa_band_pct"],
                                 "figure": check.figures["figure"], "interval": check.figures["interval"],
                                 "pairs": len(check.figures["pairs"]), "blocks": len(check.figures["blocks"]),
                                 "measured_epoch": time.time()})
    say(f"A/A band {check.figures['aa_band_pct']:g} % recorded in {aa_band_path()}")


def nothing_passed(pairs: list[duet_verdict.Pair], said: duet_verdict.DuetVerdict) -> duet_verdict.DuetVerdict:
    """FELL where B met the SLO at no rate in any pair and A did: B lost everything a search can see (the
    stored-baseline gate calls a build without a capacity fallen too); else `said`."""
    if not pairs or any(p.b.capacity_rps for p in pairs) or not any(p.a.capacity_rps for p in pairs):
        return said
    a_best = max(p.a.capacity_rps for p in pairs if p.a.capacity_rps)
    return replace(said, verdict=duet_verdict.FELL, message=f"B met the SLO at no rate in any of its {len(pairs)} "
                   f"searches, where A's capacity reached {a_best:g}/s: a drop beyond any tolerance ({said.message})")


def judge(summary: Summary, drop_pct: float, aa: bool, baseline: str | None = None) -> Gate:
    """The gate's one capacity check from the run's blocks (its pairs' where it ran none); an A/A gate notes its
    band. `baseline`: how A was chosen when it is the accepted baseline's build ("" when none was accepted: then
    nothing is compared and the gate cannot tell)."""
    duet = summary.findings(DuetFindings)
    pairs = [duet_verdict.Pair.from_dict(p) for p in duet.pairs]
    blocks = [duet_blocks.Block.from_dict(k) for k in duet.blocks]
    said = nothing_passed(pairs, duet_blocks.judge(blocks, drop_pct) if blocks
                          else duet_verdict.judge(pairs, drop_pct))
    bound = [t.testbed_bound["sentence"] for t in summary.targets.values() if t.testbed_bound]
    if bound:  # both builds measured at the testbed's ceiling: their ratio is the testbed's, near 1 whatever they do
        said = replace(said, verdict=CANNOT_TELL, message=f"testbed-bound: {'; '.join(bound)} (what its pairs "
                       f"said: {said.message})")
    lost = [e["sentence"] for e in summary.events or []]
    if lost:  # its blocks measured the builds on a bench that was losing a machine or node
        said = replace(said, verdict=CANNOT_TELL, message=f"the run is {summary.status}: {'; '.join(lost)} "
                       f"(what its blocks said: {said.message})")
    if baseline == "":
        said = replace(said, verdict=CANNOT_TELL, message=f"no build accepted as a baseline yet, so this build "
                       f"was measured against itself ({said.message}); make baseline RUN=<this run> keeps it")
    a, b = (build.text for build in duet.builds) if duet.builds else ("", "")
    figures = {**said.as_dict(), "tolerance_pct": drop_pct, "figure": "blocks" if blocks else "pairs",
               "pairs": [p.as_dict() for p in pairs], "blocks": [k.as_dict() for k in blocks], "a": a, "b": b,
               "common": duet.common["intervals"] if duet.common else {}}
    notes = [] if summary.status == "complete" else [f"the run is {summary.status}: {summary.error}"]
    if aa and said.interval is not None:
        figures["aa_band_pct"] = duet_verdict.aa_band_pct(said.interval)
        notes.append(f"A/A band {figures['aa_band_pct']:g} %: how far two equal builds' interval reached from 1 "
                     "(what a gate can call is make gate-calibrate's)")
    how = ("measured together in this run (a duet: A = " + (a or "as configured")
           + (f", {baseline}" if baseline else "") + ")")
    checks = [Check(CHECK, said.verdict, said.message, figures)]
    broken = duet_common.slo_broken(duet.common)
    if broken:
        checks.append(Check(SLO_CHECK, ABOVE, broken, {"common": duet.common}))
    return Gate(summary.run_id, None, how, drop_pct, checks, notes)


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


def prepared(chosen: GateSettings, environ: dict[str, str], aa: bool) -> int | Callable[[bool], int]:
    """The duet gate checked: a refusal's exit status, or what runs it (check_only: its check alone), sharing
    what was checked."""
    kind = KINDS["duet"]
    if aa:
        environ = {**environ, "DUET_B": environ.get("DUET_A", "")}
    baseline = None
    try:
        settings, driver, wrk2_local = bench_command.checked(False, environ, kind)
        if not aa and "DUET_A" not in environ and "DUET_B" not in environ:  # no builds named: the baseline's
            environ, baseline = with_baseline(chosen, environ, settings)
            settings, driver, wrk2_local = bench_command.checked(False, environ, kind)
        calibration = gate_calibration.calibration_for(settings, cluster_settings())
        problem = None if aa else gate_calibration.tolerance_problem(chosen.drop_pct, calibration)
        if problem:
            raise SettingsError(problem)
    except (SettingsError, SettingsRefused) as problem:
        return refuse(problem)
    return lambda check_only: run(kind, settings, driver, wrk2_local, chosen, environ, aa, baseline, calibration,
                                  check_only)


def run(kind, settings, driver, wrk2_local, chosen: GateSettings, environ: dict[str, str], aa: bool, baseline,
        calibration, check_only: bool) -> int:
    code, paths = bench_command.run(kind, settings, driver, wrk2_local, "make gate-aa" if aa else "make gate",
                                    check_only)
    if paths is None or code == INTERRUPTED:
        return code
    summary = Summary.from_json(jsonl.read_json(paths.summary) or {})
    result = judge(summary, chosen.drop_pct, aa, baseline)
    result.notes.append(gate_calibration.power_note(chosen.drop_pct, calibration))
    let_through(result, environ)
    from capbench.report import pipeline  # its libraries only once there is a verdict to write
    pipeline.write(result, kind.name, summary, read_steps(paths.steps), paths.gate,
                   gate_latest_dir())
    check = result.checks[0]
    print(f"\ngate: {result.run_id}: B = {check.figures['b'] or 'as configured'} against A = "
          f"{check.figures['a'] or 'as configured'}, measured together")
    for each in result.checks:
        print(f"  {each.verdict.upper():<16}{each.name:<22}{each.message}")
    for note in result.notes:
        print(f"  note: {note}")
    print(f"gate: {result.verdict.upper()} (exit {result.code}); files in {paths.gate.root}, copied to "
          f"{gate_latest_dir().root}")
    if aa:
        record_band(check, summary)
    return result.code

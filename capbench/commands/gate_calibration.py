"""make gate-calibrate (python -m capbench.commands.gate --calibrate): what a duet gate can call on this machine with these
settings (capbench/analysis/gate_power.py says how it is computed). CALIBRATE_ROUNDS rounds; in each, in an order drawn at
random, an A/A duet (DUET_A on both slots) and one duet of each known 5 % drop from DUET_A: its slot's CPU quota
5 % smaller, and, where the nodes run the Grinder, 5 % more work per request (WORK_PCT=105). Each is a whole
bench-duet run, judged at GATE_DROP_PCT as make gate judges one. Written to results/gate-calibration.json after
every duet (a stopped calibration keeps what it measured, marked incomplete): each duet's figure, the false alarms,
the power on each known drop, the smallest drop called with 80 % power, the settings and the machine it holds for,
and the date. A duet gate refuses a tolerance below that smallest drop, and uses no calibration made with other
settings, on another machine, or left incomplete."""
from __future__ import annotations

import json
import random
import time
from dataclasses import asdict
from typing import Callable

from capbench.analysis import duet_blocks, gate_power
from capbench.analysis.duet_verdict import FELL
from capbench.analysis.gate_verdict import GateSettings
from capbench.commands import bench as bench_command
from capbench.duet.builds import TWIN_KEYS, parse_words
from capbench.engine.calibration_probe import machine
from capbench.engine.progress import say
from capbench.engine.session import refuse
from capbench.hosts.cluster_settings import SettingsRefused, cluster_settings
from capbench.kinds import KINDS
from capbench.rundata import jsonl
from capbench.rundata.layout import gate_calibration_path
from capbench.settings.bench import SettingsError

KNOWN_DROP_PCT = 5
AA, QUOTA, WORK = "A/A", "quota 5 % smaller", "5 % more work per request"
INTERRUPTED = 130


def figure_settings(settings, cluster: dict[str, str]) -> dict:
    """What a duet's figure and its noise depend on: the shared bench settings, the duet's own but its builds,
    the twin slots' node settings and application, and the machine. As JSON reads it back, to compare."""
    kind_fields = {name for kind in settings.kinds.values() for name in asdict(kind)}
    shared = {k: v for k, v in settings.as_dict().items() if k not in kind_fields}
    duet = {f"duet_{k}": v for k, v in asdict(settings.kinds["duet"]).items() if k not in ("a", "b")}
    slots = {f"NODE1_{k}": cluster.get(f"NODE1_{k}") for k in TWIN_KEYS}
    apps = {k: cluster.get(k) for k in ("APP_WAR", "APP_JAR", "APP_HEALTH", "APP_JAR_ARGS") if cluster.get(k)}
    return json.loads(json.dumps({**shared, **duet, **slots, **apps, "machine": machine()}))


def known_drops(a_text: str, settings, cluster: dict[str, str]) -> dict[str, str]:
    """Each calibration duet's B, by what it is: A itself, A on a quota 5 % smaller (where the twins have one),
    A asking 5 % more work per request (where the nodes run the Grinder)."""
    a = parse_words(a_text)
    builds = {AA: a_text}
    quota = float(a.get("CPUS") or cluster.get("NODE1_CPUS") or 0)
    if quota > 0:
        builds[QUOTA] = words({**a, "CPUS": f"{round(quota * (1 - KNOWN_DROP_PCT / 100), 3):g}"})
    if settings.workload == "grind" and settings.user_scenario is None and not cluster.get("APP_JAR"):
        work = int(a.get("WORK_PCT") or settings.work_pct)
        builds[WORK] = words({**a, "WORK_PCT": str(round(work * (1 + KNOWN_DROP_PCT / 100)))})
    return builds


def words(values: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in values.items())


def one_duet(known: str, b_text: str, summary: dict, tolerance_pct: float) -> dict:
    """What one calibration duet measured: its blocks' interval and the gate's verdict on it."""
    blocks = [duet_blocks.Block.from_dict(k) for k in (summary.get("duet") or {}).get("blocks") or []]
    said = duet_blocks.judge(blocks, tolerance_pct)
    i = said.interval
    return {"known": known, "b": b_text, "run_id": summary.get("run_id"), "status": summary.get("status"),
            "verdict": said.verdict, "ratio": round(i.ratio, 4) if i else None,
            "interval": [round(i.low, 4), round(i.high, 4)] if i else None, "blocks": i.pairs if i else 0,
            "se": round(gate_power.standard_error(i.low, i.high, i.pairs), 5) if i else None}


def figures(duets: list[dict], tolerance_pct: float, blocks: int) -> dict:
    """The calibration's verdicts: false alarms and power at the tolerance, and the smallest drop called with
    80 % power (None until a duet gave an interval)."""
    by_known: dict[str, list[dict]] = {}
    for d in duets:
        by_known.setdefault(d["known"], []).append(d)
    called = {known: f"{sum(d['verdict'] == FELL for d in own)}/{len(own)}" for known, own in by_known.items()}
    errors = [d["se"] for d in duets if d["se"]]
    se = gate_power.pooled(errors) if errors else None
    return {"called_fell": called, "false_alarms": called.get(AA),
            "mean_ratio": {known: round(sum(d["ratio"] for d in own if d["ratio"]) / n, 4)
                           for known, own in by_known.items() if (n := sum(1 for d in own if d["ratio"]))},
            "se_log": round(se, 5) if se else None,
            "smallest_drop_pct": round(gate_power.drop_called(se, blocks), 1) if se else None,
            "drop_called_at_tolerance_pct": round(gate_power.drop_called(se, blocks, tolerance_pct), 1) if se else None}


def prepared(chosen: GateSettings, environ: dict[str, str]) -> int | Callable[[bool], int]:
    """The calibration checked, every duet's B among it: a refusal's exit status, or what runs it (check_only: its
    check alone), sharing what was checked."""
    kind = KINDS["duet"]
    try:
        settings, driver, wrk2_local = bench_command.checked(False, environ, kind)
        if not settings.kinds["duet"].blocks:
            raise SettingsError("DUET_BLOCKS='0': make gate-calibrate calibrates the blocks' figure, which a duet "
                                "gate judges; give DUET_BLOCKS 3 or more")
        cluster = cluster_settings()
        builds = known_drops(settings.kinds["duet"].a, settings, cluster)
        # Every duet's B checked before the first is measured, its settings kept for its runs.
        each = {known: bench_command.checked(False, {**environ, "DUET_B": b_text}, kind)[0]
                for known, b_text in builds.items()}
    except (SettingsError, SettingsRefused, ValueError) as problem:
        return refuse(problem)
    return lambda check_only: run(kind, settings, driver, wrk2_local, chosen, cluster, builds, each, check_only)


def run(kind, settings, driver, wrk2_local, chosen: GateSettings, cluster: dict[str, str], builds: dict[str, str],
        each: dict, check_only: bool) -> int:
    if check_only:
        return bench_command.run(kind, settings, driver, wrk2_local, "make gate-calibrate", True)[0]
    blocks = settings.kinds["duet"].blocks
    record = {"measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": machine(),
              "settings": figure_settings(settings, cluster), "tolerance_pct": chosen.drop_pct,
              "rounds": chosen.rounds, "builds": builds, "complete": False, "duets": []}
    draw = random.Random()
    say(f"gate-calibrate: {chosen.rounds} rounds of {', '.join(builds)}; A = {settings.kinds['duet'].a or 'as configured'}")
    for number in range(1, chosen.rounds + 1):
        order = list(builds)
        draw.shuffle(order)
        for known in order:
            say(f"gate-calibrate: round {number}/{chosen.rounds}: {known} (B = {builds[known] or 'as configured'})")
            code, paths = bench_command.run(kind, each[known], driver, wrk2_local, "make gate-calibrate")
            if paths is not None:
                summary = jsonl.read_json(paths.summary) or {}
                record["duets"].append(one_duet(known, builds[known], summary, chosen.drop_pct))
                record.update(figures(record["duets"], chosen.drop_pct, blocks))
                jsonl.write_json(gate_calibration_path(), record)
            if code == INTERRUPTED or paths is None:
                say(f"gate-calibrate: stopped; what was measured is in {gate_calibration_path()}, marked incomplete")
                return code or 1
    record["complete"] = True
    jsonl.write_json(gate_calibration_path(), record)
    print_calibration(record)
    return 0


def print_calibration(record: dict) -> None:
    print(f"\ngate-calibrate: {len(record['duets'])} duets on {record['machine']}, {record['measured']}")
    print(f"{'known':<28}{'B':<26}{'B/A':>8}{'interval':>18}{'verdict':>14}")
    for d in record["duets"]:
        interval = f"[{d['interval'][0]:.3f}, {d['interval'][1]:.3f}]" if d["interval"] else "-"
        print(f"{d['known']:<28}{d['b'] or 'as configured':<26}{d['ratio'] or '-':>8}{interval:>18}{d['verdict']:>14}")
    print(f"called FELL at {record['tolerance_pct']:g} %: " + ", ".join(f"{k} {v}" for k, v in record["called_fell"].items()))
    print(f"the smallest drop called with 80 % power: {record['smallest_drop_pct']} % (standard error of the log "
          f"ratio {record['se_log']}); at a tolerance of {record['tolerance_pct']:g} %: a drop of "
          f"{record['drop_called_at_tolerance_pct']} %")
    print(f"recorded in {gate_calibration_path()}: make gate refuses a GATE_DROP_PCT below {record['smallest_drop_pct']} % "
          "with these settings on this machine")


def calibration_for(settings, cluster: dict[str, str]) -> dict | None:
    """The complete calibration made with these settings on this machine, or None."""
    found = jsonl.read_json(gate_calibration_path())
    if not found or not found.get("complete") or found.get("smallest_drop_pct") is None:
        return None
    return found if found.get("settings") == figure_settings(settings, cluster) else None


def tolerance_problem(drop_pct: float, calibration: dict | None) -> str | None:
    """Why GATE_DROP_PCT is below the smallest drop this machine calls with 80 % power, or None."""
    if calibration is None or drop_pct >= calibration["smallest_drop_pct"]:
        return None
    return (f"GATE_DROP_PCT='{drop_pct:g}' is below {calibration['smallest_drop_pct']:g} %, the smallest drop a duet "
            f"gate calls with 80 % power on this machine with these settings (make gate-calibrate, "
            f"{calibration['measured']}): it would watch for drops it misses more often than it calls; use "
            f"GATE_DROP_PCT={calibration['smallest_drop_pct']:g} or more, or settings that resolve more (more "
            "DUET_BLOCKS or DUET_WINDOWS) calibrated again")


def power_note(drop_pct: float, calibration: dict | None) -> str:
    """What the gate can call, in the calibration's words, printed with every duet verdict."""
    if calibration is None:
        return ("no calibration with these settings on this machine: what this gate can call is not known (make "
                "gate-calibrate measures it)")
    at = gate_power.drop_called(calibration["se_log"], calibration["settings"]["duet_blocks"], drop_pct)
    return (f"calibrated {calibration['measured']} (make gate-calibrate): this machine calls a drop of "
            f"{calibration['smallest_drop_pct']:g} % with 80 % power; at this tolerance of {drop_pct:g} %, a drop of "
            f"{at:.1f} %; known 5 % drops called FELL at {calibration['tolerance_pct']:g} %: "
            + ", ".join(f"{k} {v}" for k, v in calibration["called_fell"].items()))

"""Capacity across changes: results/history.jsonl gets one line per run (time, git sha, config hash,
capacities, E, driver), and two runs of the same configuration are compared with the noise band their repeats
and the search's resolution give.

A change counts as significant only when both runs have repeats (REPEATS ≥ 2) and it is larger than the noise
band: the widest of the two runs' repeat spreads ((max - min) / median of each target's capacities) and the
search's precision (the capacity is only known to within that step, see load/search.py). With a single
repeat on either side the run-to-run noise is unmeasured (on our shared machines two runs of the same code
have differed by 25 %): a change beyond the precision is then "cannot tell", not significant."""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from rundata.run import EARLIER_BACKEND, backend_of
from rundata.summary import HISTORY_SCHEMA

# Settings that do not change what is measured, only how long or how often: left out of the config hash.
NOT_CONFIG = {"repeats", "max_steps", "selfcheck_rate", "monitor"}


def config_hash(run: dict) -> str:
    """What makes two runs comparable: the kind, the bench settings, the driver, the cluster's settings and what
    runs the hosts (VMs are not containers; runs from before the Vagrant backend are Compose runs)."""
    settings = {k: v for k, v in run.get("settings", {}).items() if k not in NOT_CONFIG
                and (k != "usl_levels" or run.get("kind") == "usl")}  # the levels matter to bench-usl only
    basis = {"kind": run.get("kind"), "settings": settings, "driver": (run.get("driver") or {}).get("name"),
             "profile": run.get("profile"), "cluster": run.get("cluster_settings", {})}
    if backend_of(run) != EARLIER_BACKEND:  # the hash of a run from before backends were recorded stays as it was
        basis["backend"] = backend_of(run)
    return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()[:12]


def history_line(run: dict, summary: dict) -> dict:
    targets = summary.get("targets", {})
    return {"schema": HISTORY_SCHEMA, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "run_id": summary.get("run_id"),
            "kind": summary.get("kind"), "status": summary.get("status"), "git_sha": run.get("git_sha"),
            "backend": backend_of(run),
            "config_hash": config_hash(run), "driver": summary.get("driver"),
            "workload": "{variant} level {level}".format(**{"variant": "?", "level": "?", **run.get("settings", {})}),
            "precision_pct": run.get("settings", {}).get("precision_pct"),
            "capacities": {t: v.get("capacity_rps") for t, v in targets.items()},
            "repeats": {t: v.get("repeats", []) for t, v in targets.items()},
            "cluster_rps": summary.get("cluster_rps"), "efficiency": summary.get("efficiency"),
            "cluster_over_node1": summary.get("cluster_over_node1"),
            "usl": {k: (summary.get("usl_fit") or {}).get(k) for k in ("sigma", "kappa", "lam", "peak_n",
                                                                       "r_squared")} if "usl_fit" in summary
            else None}


class CompareError(ValueError):
    """The runs asked for are not in the history, or cannot be compared."""


def pick(history: list[dict], a: str | None, b: str | None) -> tuple[dict, dict]:
    """Runs A and B by id (or unique prefix); by default the last two complete runs with the same config."""
    def find(run_id: str) -> dict:
        matches = [h for h in history if h.get("run_id", "").startswith(run_id)]
        if len(matches) != 1:
            known = ", ".join(h.get("run_id", "?") for h in history[-5:]) or "none"
            raise CompareError(f"'{run_id}' matches {len(matches)} runs in the history (last ones: {known})")
        return matches[0]
    if a and b:
        return find(a), find(b)
    if a or b:
        raise CompareError("give both A= and B=, or neither (then the last two comparable runs are compared)")
    complete = [h for h in history if h.get("status") == "complete" and any(h.get("capacities", {}).values())]
    for newer in reversed(complete):
        older = [h for h in complete if h["config_hash"] == newer["config_hash"] and h is not newer
                 and complete.index(h) < complete.index(newer)]
        if older:
            return older[-1], newer
    raise CompareError("no two complete runs with capacities and the same configuration in the history: run "
                       "the same bench twice, or name two runs with A= and B=")


def _spread_pct(caps: list[float]) -> float:
    if len(caps) < 2:
        return 0.0
    ordered = sorted(caps)
    median = ordered[len(ordered) // 2] if len(ordered) % 2 else (ordered[len(ordered) // 2 - 1] +
                                                                  ordered[len(ordered) // 2]) / 2
    return 100 * (ordered[-1] - ordered[0]) / median


@dataclass(frozen=True)
class Change:
    target: str
    a_rps: float | None
    b_rps: float | None
    change_pct: float | None
    band_pct: float
    significant: bool | None  # None: beyond the precision, but the run-to-run noise was not measured
    basis: str  # how the band was made


def compare(a: dict, b: dict) -> list[Change]:
    precision = max(a.get("precision_pct") or 0.0, b.get("precision_pct") or 0.0)
    changes = []
    for target in [t for t in a.get("capacities", {}) if t in b.get("capacities", {})]:
        ca, cb = a["capacities"][target], b["capacities"][target]
        ra, rb = a.get("repeats", {}).get(target, []), b.get("repeats", {}).get(target, [])
        spread = max(_spread_pct(ra), _spread_pct(rb))
        band = max(precision, spread)
        repeated = len(ra) > 1 and len(rb) > 1
        basis = (f"repeat spread {spread:.1f} %" if spread >= precision else f"search precision {precision:g} %") + \
            ("" if repeated else "; one repeat: run-to-run noise unmeasured, run both with REPEATS=3")
        change = round(100 * (cb - ca) / ca, 1) if ca and cb else None
        beyond = change is not None and abs(change) > band
        changes.append(Change(target, ca, cb, change, round(band, 1),
                              beyond if repeated or not beyond else None, basis))
    return changes


def series(lines: list[dict]) -> dict[tuple[str, str], list[int]]:
    """Which runs to join with a line: per target, the runs of one configuration (x = position among the runs
    with capacities). A line between two configurations would read as a trend that is really a change of
    workload."""
    joined: dict[tuple[str, str], list[int]] = {}
    for i, line in enumerate(lines):
        for target, capacity in line.get("capacities", {}).items():
            if capacity:
                joined.setdefault((target, line.get("config_hash", "")), []).append(i)
    return joined


def plot(lines: list[dict], path: Path) -> Path:
    """Capacity per target over the runs that found one (x: run order, labelled with git sha, kind and
    workload); runs of one configuration joined; one grey dot per repeat."""
    from report import figures  # matplotlib only when plotting
    plt = figures.plt
    lines = [line for line in lines if any((line.get("capacities") or {}).values())]
    fig, ax = plt.subplots(figsize=(11, 5))
    labelled: set[str] = set()
    for (target, _), xs in series(lines).items():
        colour = figures.colour_of(target.split()[0])
        ax.plot(xs, [lines[i]["capacities"][target] for i in xs], "o-", color=colour,
                label=None if target in labelled else target)
        labelled.add(target)
        for i in xs:
            reps = lines[i].get("repeats", {}).get(target, [])
            ax.plot([i] * len(reps), reps, ".", color="grey", markersize=4)
    ax.set_xticks(range(len(lines)), [f"{line.get('git_sha', '?')}\n{line.get('kind', '')}\n"
                                      f"{line.get('workload', '')}" for line in lines], fontsize=7, rotation=45)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("capacity, requests/s")
    ax.set_title("capacity across runs (lines join runs of one configuration; grey dots: each repeat)")
    ax.legend(fontsize=8)
    return figures.save(fig, path)

"""results/history.png: capacity per target across the runs of results/history.jsonl (make history)."""
from __future__ import annotations

from pathlib import Path

from capbench.analysis import calibration
from capbench.analysis.history import machine_flags, series
from capbench.report import figures
from capbench.rundata.history import HistoryLine

# The history line's marks of a figure that is not the application's capacity: how each is ringed.
RINGED = {"testbed_bound": ("testbed-bound: the testbed's ceiling", {"marker": "s", "markeredgecolor": "tab:red"}),
          "held_short": ("held short of its hold", {"marker": "D", "markeredgecolor": "tab:orange"})}


def plot(lines: list[HistoryLine], path: Path) -> Path:
    """Capacity per target over the runs that found one (x: run order, labelled with git sha, kind, workload, the
    run's status where it lost a machine or node, and the machine where several appear); runs of one configuration
    and machine joined; one grey dot per repeat; a red note above a run whose machine or calibration changed since
    the last run of its configuration; a testbed-bound or held-short figure ringed, a smoke run shaded."""
    plt = figures.plt
    lines = [line for line in lines if any(line.capacities.values())]
    fig, ax = plt.subplots(figsize=(11, 5))
    labelled: set[str] = set()
    for (target, _, _), xs in series(lines).items():
        colour = figures.colour_of(target.split()[0])
        ax.plot(xs, [lines[i].capacities[target] for i in xs], "o-", color=colour,
                label=None if target in labelled else target)
        labelled.add(target)
        for i in xs:
            reps = lines[i].repeats.get(target, [])
            ax.plot([i] * len(reps), reps, ".", color="grey", markersize=4)
            for key, (_, style) in RINGED.items():
                if target in (getattr(lines[i], key) or {}):  # a figure that is not the application's capacity
                    ax.plot([i], [lines[i].capacities[target]], linestyle="none", markerfacecolor="none",
                            markersize=13, markeredgewidth=1.6, **style)
    for i, line in enumerate(lines):
        if line.smoke:  # a smoke run's figures say the testbed works, not what a target carries
            ax.axvspan(i - 0.45, i + 0.45, color="grey", alpha=0.12, linewidth=0)
    for key, (label, style) in RINGED.items():
        if any(getattr(line, key) for line in lines):
            ax.plot([], [], linestyle="none", markerfacecolor="none", markersize=9, label=label, **style)
    top = max(max(filter(None, line.capacities.values())) for line in lines) if lines else 1.0
    for i, tags in machine_flags(lines).items():
        ax.axvline(i, color="tab:red", linestyle=":", linewidth=1)
        ax.annotate("\n".join(tags), (i, top * 1.02), ha="center", va="bottom", fontsize=7, color="tab:red")
    machines = {calibration.machine(calibration.of(line)) for line in lines}
    ax.set_xticks(range(len(lines)), [f"{line.git_sha or '?'}\n{line.kind or ''}\n{line.workload or ''}"
                                      + ("\n" + line.status.upper() if line.lost else "")
                                      + ("\nSMOKE" if line.smoke else "")
                                      + (f"\n{calibration.machine(calibration.of(line)) or 'machine ?'}"
                                         if len(machines) > 1 else "") for line in lines], fontsize=7, rotation=45)
    ax.set_xlim(-0.6, len(lines) - 0.4)  # room for a note above the first or last run
    ax.set_ylim(bottom=0, top=top * 1.18)
    ax.set_ylabel("capacity, requests/s")
    ax.set_title("capacity across runs (lines join runs of one configuration and machine; grey dots: each repeat;\n"
                 f"red: machine or calibration changed beyond ±{calibration.CALIBRATION_NOISE_PCT:g} % since the "
                 "configuration's previous run;\nringed: not the application's capacity; shaded: a smoke run)",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the runs, never over one
    return figures.save(fig, path)

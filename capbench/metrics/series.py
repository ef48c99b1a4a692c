"""pmrep's CSV read back: {(metric, instance): one value per row}, and the small rules for summing a metric's
instances per row, picking instances by their labels or process name, and reducing rows to one figure."""
from __future__ import annotations

import csv
import re
import statistics
from datetime import datetime, timezone
from pathlib import Path

from capbench.rundata.workload import HARNESS_CONTEXT, SERVLETS

Series = dict[tuple[str, str], list[float | None]]
RAW_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"  # pmrep -f for the raw (-u) exports


def read_csv(path: Path) -> Series:
    """{(metric, instance): values per row}; instance "" for a metric without instances; None where empty."""
    series: Series = {}
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return series
    header, body = rows[0], rows[1:]
    for col, name in enumerate(header[1:], start=1):
        metric, _, instance = name.partition("-")
        series[(metric, instance)] = [float(row[col]) if col < len(row) and row[col] != "" else None
                                      for row in body]
    return series


def row_epochs(path: Path) -> list[float]:
    """The Time column of a raw (-u) export, as epochs."""
    with path.open(newline="") as f:
        rows = list(csv.reader(f))[1:]
    return [datetime.strptime(row[0], RAW_TIME_FORMAT).replace(tzinfo=timezone.utc).timestamp() for row in rows]


def labels(instance: str) -> dict[str, str]:
    """'3 code:5xx proxy:nodes server:node1' → {'code': '5xx', 'proxy': 'nodes', 'server': 'node1'}."""
    text = instance.split(" ", 1)[1] if " " in instance else ""
    return dict(re.findall(r"(\w+):(.*?)(?= \w+:|$)", text))


def application_deployed(series: Series, metric: str) -> bool:
    """Whether the nodes ran a user's application: a WAR (APP_WAR), the Grinder then beside it at HARNESS_CONTEXT;
    or an executable JAR with an embedded Tomcat (APP_JAR), whose servlets are all its own (no grind servlet)."""
    instances = [labels(instance) for (name, instance) in series if name == metric]
    return (any(found.get("module") == HARNESS_CONTEXT for found in instances)
            or (bool(instances) and not any(found.get("servlet") == "grind" for found in instances)))


def serving_servlets(series: Series, metric: str):
    """Which of `metric`'s servlet instances served the bench's traffic: with a user's application, every
    servlet of its web module(s); else the Grinder's workload servlets (grind, query, session), not its health
    and info."""
    if application_deployed(series, metric):
        return lambda instance: labels(instance).get("module") not in (HARNESS_CONTEXT, None)
    return lambda instance: labels(instance).get("servlet") in SERVLETS


def process_name(instance: str) -> str:
    """'000007 /usr/bin/java' → '/usr/bin/java'."""
    return instance.split(" ", 1)[1] if " " in instance else instance


def row_sums(series: Series, metric_names: tuple[str, ...], keep) -> list[float | None]:
    """Per row, the sum over the chosen metrics' instances (None where none had a value)."""
    columns = [values for (metric, instance), values in series.items() if metric in metric_names and keep(instance)]
    if not columns:
        return []
    sums = []
    for row in zip(*columns):
        present = [v for v in row if v is not None]
        sums.append(sum(present) if present else None)
    return sums


def mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def peak(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def scaled(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor

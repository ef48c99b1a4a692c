"""Bench settings: load/bench.env overridden by the environment (make passes its command-line variables there),
each value checked before anything starts. A bad value gives one line naming it and what is allowed."""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from hosts.topology import NODES

BENCH_ENV = Path(__file__).resolve().parent / "bench.env"
VARIANTS = ("v1", "v1-nosync", "v2", "v3")
SCENARIOS = ("session", "single")
WORKLOADS = ("grind", "query", "session")
LOADGENS = ("auto", "oha", "wrk2")
WEIGHTS = ("profile", "equal", "auto")
FAULTS = ("kill", "freeze")
MAX_CONNECTIONS = 4000  # HAProxy's frontend maxconn (haproxy/haproxy.cfg)
USL_MIN_LEVELS = 4  # the USL has three unknowns: fewer levels leave nothing to judge its fit by (report/usl.py)
# wrk2 spends its first 10 s calibrating and resets its latency histogram after them; 10 s more are measured.
WRK2_CALIBRATION_S = 10
WRK2_MIN_STEP_S = 2 * WRK2_CALIBRATION_S


class SettingsError(ValueError):
    """Raised with every problem found, one per line."""


@dataclass(frozen=True)
class Slo:
    failure_pct: float
    p99_ms: float
    achieved_pct: float


@dataclass(frozen=True)
class Query:
    """What each /query request asks of the shared database (webapp: QueryRequest's bounds)."""
    rows: int = 10
    join: int = 0
    write_pct: int = 0
    calls: int = 1


@dataclass(frozen=True)
class BenchSettings:
    variant: str
    level: int
    scenario: str
    session_requests: int
    think_ms: int
    users: int
    loadgen: str
    connections: int | None  # None: auto, from the rate and the think time
    threads: int
    timeout_s: int
    start_rate: float
    growth: float
    precision_pct: float
    step_s: int
    warmup_s: int
    max_steps: int
    repeats: int
    slo: Slo
    quick: bool
    monitor: bool
    selfcheck_rate: float | None  # None: auto, twice the highest cluster capacity measured so far
    workload: str = "grind"  # grind: the Grinder (VARIANT, LEVEL); query: the shared database (QUERY_*); session
    query: Query = Query()
    session_kb: int = 4  # WORKLOAD=session: what each user's HttpSession keeps
    usl_levels: tuple[int, ...] = (1, 2, 4, 8, 16, 32)  # make bench-usl: closed connections per step
    session_sizes: tuple[int, ...] = (0, 16, 32, 64)  # make bench-sessions: the kB per user's session, in turn
    variants: tuple[str, ...] = VARIANTS  # make bench-variants
    weights: str = "profile"  # make bench-cluster: the balancer's weights (WEIGHTS)
    fault: str = "kill"  # make bench-failover: what happens to FAULT_NODE
    fault_node: str = "node1"
    fault_at_s: int = 20  # into the failover step
    fault_for_s: int = 20  # how long the node stays dead or frozen
    failover_s: int = 90  # the failover step's length
    failover_rate: float | None = None  # None: auto, FAILOVER_LOAD_PCT of the other nodes' capacity
    failover_load_pct: float = 50
    stress_target: str = "cluster"  # make bench-stress
    stress_capacity: float | None = None  # None: auto, measured first
    stress_low: float = 0.5  # × capacity before and after the overload
    stress_high: float = 2.0  # × capacity during it
    stress_base_s: int = 30
    stress_over_s: int = 60
    stress_recover_s: int = 60

    def as_dict(self) -> dict:
        return asdict(self)


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=value lines; comments and blank lines skipped; the value is everything after '=' (no quoting)."""
    values = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Z][A-Z0-9_]*)=(.*)$", line)
        if match:
            values[match.group(1)] = match.group(2).strip()
    return values


class _Checker:
    """Collects errors so a user sees all of them at once."""

    def __init__(self, raw: dict[str, str]):
        self.raw = raw
        self.errors: list[str] = []

    def _bad(self, key: str, allowed: str) -> None:
        self.errors.append(f"{key}='{self.raw.get(key, '')}' is not allowed: use {allowed}")

    def integer(self, key: str, low: int, high: int, also: str = "") -> int:
        text = self.raw.get(key, "")
        if re.fullmatch(r"0|[1-9][0-9]{0,8}", text) and low <= int(text) <= high:
            return int(text)
        self._bad(key, (f"{also} or " if also else "") + f"an integer from {low} to {high}")
        return low

    def number(self, key: str, low: float, high: float, low_open: bool = False, also: str = "") -> float:
        text = self.raw.get(key, "")
        value = float(text) if re.fullmatch(r"[0-9]{1,9}(\.[0-9]+)?", text) else None
        below = value is not None and (value <= low if low_open else value < low)
        if value is None or below or value > high:
            bound = f"above {low:.10g}" if low_open else f"from {low:.10g}"
            self._bad(key, (f"{also} or " if also else "") + f"a number {bound} to {high:.10g}")
            return high
        return value

    def levels(self, key: str, minimum: int, high: int) -> tuple[int, ...]:
        """Space-separated integers from 1 to high, rising, at least `minimum` of them."""
        text = self.raw.get(key, "")
        values = tuple(int(v) for v in text.split()) if re.fullmatch(r"[1-9][0-9]{0,8}( +[1-9][0-9]{0,8})*",
                                                                     text) else ()
        if len(values) < minimum or any(b <= a for a, b in zip(values, values[1:])) or values[-1] > high:
            self._bad(key, f"at least {minimum} rising integers from 1 to {high}, space-separated "
                           "(e.g. '1 2 4 8 16 32')")
            return tuple(range(1, minimum + 1))
        return values

    def sizes(self, key: str, high: int) -> tuple[int, ...]:
        """Space-separated integers from 0 to high, rising, at least one."""
        text = self.raw.get(key, "")
        values = tuple(int(v) for v in text.split()) if re.fullmatch(r"[0-9]{1,9}( +[0-9]{1,9})*", text) else ()
        if not values or any(b <= a for a, b in zip(values, values[1:])) or values[-1] > high:
            self._bad(key, f"one or more rising integers from 0 to {high}, space-separated (e.g. '0 16 32 64')")
            return (0,)
        return values

    def choices(self, key: str, choices: tuple[str, ...]) -> tuple[str, ...]:
        """Space-separated, each one of `choices`, none twice, at least one."""
        values = tuple(self.raw.get(key, "").split())
        if not values or len(set(values)) != len(values) or any(v not in choices for v in values):
            self._bad(key, "one or more of " + ", ".join(choices) + ", space-separated, each once")
            return choices
        return values

    def choice(self, key: str, choices: tuple[str, ...]) -> str:
        value = self.raw.get(key, "")
        if value not in choices:
            self._bad(key, "one of " + ", ".join(choices))
            return choices[0]
        return value


def raw_settings(environ: dict[str, str] | None = None, env_file: Path = BENCH_ENV) -> dict[str, str]:
    """bench.env's keys, each as the environment gives it or else as the file does, unchecked."""
    environ = os.environ if environ is None else environ
    raw = read_env_file(env_file)
    for key in list(raw):
        if key in environ:
            raw[key] = environ[key].strip()
    return raw


def load_settings(environ: dict[str, str] | None = None, env_file: Path = BENCH_ENV) -> BenchSettings:
    """Reads bench.env, lets the environment override each of its keys, validates everything."""
    raw = raw_settings(environ, env_file)
    check = _Checker(raw)
    quick = check.choice("QUICK", ("0", "1")) == "1"
    connections = None if raw.get("CONNECTIONS") == "auto" else check.integer(
        "CONNECTIONS", 1, MAX_CONNECTIONS, also="auto")
    settings = BenchSettings(
        variant=check.choice("VARIANT", VARIANTS),
        level=check.integer("LEVEL", 1, 16),
        workload=check.choice("WORKLOAD", WORKLOADS),
        query=Query(rows=check.integer("QUERY_ROWS", 1, 1000), join=check.integer("QUERY_JOIN", 0, 1),
                    write_pct=check.integer("QUERY_WRITE_PCT", 0, 100), calls=check.integer("QUERY_CALLS", 1, 20)),
        session_kb=check.integer("SESSION_KB", 0, 1024),
        scenario=check.choice("SCENARIO", SCENARIOS),
        session_requests=check.integer("SESSION_REQUESTS", 1, 1000),
        think_ms=check.integer("THINK_MS", 0, 60000),
        users=check.integer("USERS", 1, 1_000_000),
        loadgen=check.choice("LOADGEN", LOADGENS),
        connections=connections,
        threads=check.integer("THREADS", 1, 64),
        timeout_s=check.integer("TIMEOUT_S", 1, 600),
        start_rate=check.number("START_RATE", 0, 1_000_000, low_open=True),
        growth=check.number("GROWTH", 1, 10, low_open=True),
        precision_pct=check.number(
            "QUICK_PRECISION_PCT" if quick else "PRECISION_PCT", 0.5, 50),
        step_s=check.integer("QUICK_STEP_S" if quick else "STEP_S", 1, 3600),
        warmup_s=check.integer("QUICK_WARMUP_S" if quick else "WARMUP_S", 0, 3600),
        max_steps=check.integer("MAX_STEPS", 2, 200),
        repeats=check.integer("REPEATS", 1, 20),
        slo=Slo(
            failure_pct=check.number("SLO_FAILURE_PCT", 0, 100),
            p99_ms=check.number("SLO_P99_MS", 0, 600_000, low_open=True),
            achieved_pct=check.number("SLO_ACHIEVED_PCT", 0, 100, low_open=True),
        ),
        quick=quick,
        monitor=check.choice("MONITOR", ("on", "off")) == "on",
        selfcheck_rate=None if raw.get("SELFCHECK_RATE") == "auto" else check.number(
            "SELFCHECK_RATE", 0, 1_000_000, low_open=True, also="auto"),
        variants=check.choices("VARIANTS", VARIANTS),
        weights=check.choice("WEIGHTS", WEIGHTS),
        session_sizes=check.sizes("SESSION_SIZES", 1024),
        usl_levels=check.levels("QUICK_USL_LEVELS" if quick else "USL_LEVELS", USL_MIN_LEVELS, MAX_CONNECTIONS),
        fault=check.choice("FAULT", FAULTS),
        fault_node=check.choice("FAULT_NODE", NODES),
        fault_at_s=check.integer("FAULT_AT_S", 5, 3600),
        fault_for_s=check.integer("FAULT_FOR_S", 1, 3600),
        failover_s=check.integer("QUICK_FAILOVER_S" if quick else "FAILOVER_S", 10, 7200),
        failover_rate=None if raw.get("FAILOVER_RATE") == "auto" else check.number(
            "FAILOVER_RATE", 0, 1_000_000, low_open=True, also="auto"),
        failover_load_pct=check.number("FAILOVER_LOAD_PCT", 1, 100),
        stress_target=check.choice("STRESS_TARGET", ("cluster", *NODES)),
        stress_capacity=None if raw.get("STRESS_CAPACITY") == "auto" else check.number(
            "STRESS_CAPACITY", 0, 1_000_000, low_open=True, also="auto"),
        stress_low=check.number("STRESS_LOW", 0, 1, low_open=True),
        stress_high=check.number("STRESS_HIGH", 1, 10, low_open=True),
        stress_base_s=check.integer("QUICK_STRESS_BASE_S" if quick else "STRESS_BASE_S", 5, 3600),
        stress_over_s=check.integer("STRESS_OVER_S", 5, 3600),
        stress_recover_s=check.integer("QUICK_STRESS_RECOVER_S" if quick else "STRESS_RECOVER_S", 10, 3600),
    )
    if not check.errors and settings.fault_at_s + settings.fault_for_s >= settings.failover_s:
        check.errors.append(
            f"FAILOVER_S='{settings.failover_s}' is not allowed: use more than FAULT_AT_S + FAULT_FOR_S "
            f"({settings.fault_at_s} + {settings.fault_for_s}), so the step sees the node come back")
    if not check.errors and settings.workload == "session" and settings.scenario != "session":
        check.errors.append(f"WORKLOAD='session' is not allowed with SCENARIO='{settings.scenario}': sessions belong "
                            "to users, and only SCENARIO=session sends a user id")
    if check.errors:
        raise SettingsError("\n".join(check.errors))
    return settings


def check_for_driver(settings: BenchSettings, driver_name: str) -> BenchSettings:
    """Driver-specific limits: wrk2's steps must outlast its calibration (QUICK raises them to the minimum)."""
    if driver_name == "wrk2":
        if settings.quick and settings.step_s < WRK2_MIN_STEP_S:
            return replace(settings, step_s=WRK2_MIN_STEP_S)
        if settings.step_s < WRK2_MIN_STEP_S:
            raise SettingsError(
                f"STEP_S='{settings.step_s}' is too short for wrk2: its first 10 s are calibration, "
                f"use at least {WRK2_MIN_STEP_S}")
    return settings

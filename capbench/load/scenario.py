"""The scenario: what each request asks for. `session` is the study's user: SESSION_REQUESTS requests in
succession with THINK_MS between them and one user id, then a new session with a random id drawn from a
generated dataset, so nothing benefits from a single hot key. `single` sends one URL.

wrk2 (Lua) keeps each session's requests together; oha picks a URL at random per request, so with oha each
request draws its own user from the same dataset (same users, same shares, no ordering). The think time is
kept by the number of connections: at rate R, each of C connections sends every C/R seconds, so
C = R x think time gives each user that pause (see connections_for)."""
from __future__ import annotations

import math
import random
from dataclasses import asdict

from capbench.hosts.balancer_address import base_url
from capbench.hosts.cluster_settings import grinder_path
from capbench.rundata import workload
from capbench.settings.bench import MAX_CONNECTIONS, BenchSettings

DATASET_SEED = 20081212  # fixed, so every run asks for the same users
MIN_CONNECTIONS = 16


def target_url(host: str, settings: BenchSettings, port: int = 8080) -> str:
    """The URL every request of the bench asks for (the scenario adds the user): the Grinder's, beside a user's
    application (APP_WAR) at its own path; `port`: the balancer's, or a node's own (a duet's slot)."""
    base = f"{base_url(host, port)}{grinder_path()}"
    if settings.workload == "query":
        q = settings.query
        return f"{base}/query?rows={q.rows}&join={q.join}&write={q.write_pct}&calls={q.calls}"
    if settings.workload == "session":
        return f"{base}/session?kb={settings.session_kb}"
    work = f"&work={settings.work_pct}" if settings.work_pct != 100 else ""
    return f"{base}/grind?variant={settings.variant}&level={settings.level}{work}"


def workload_name(settings: BenchSettings) -> str:
    """The workload in a few words, for the console and the report: "v1 level 13", "query 10 rows × 1"."""
    return workload.describe(asdict(settings))


def user_ids(count: int, seed: int = DATASET_SEED) -> list[str]:
    """`count` distinct user ids, the same for the same count and seed."""
    rng = random.Random(seed)
    return [f"u{n:07d}-{rng.getrandbits(32):08x}" for n in range(count)]


def connections_for(rate: float, settings: BenchSettings) -> int:
    """CONNECTIONS when set; else enough users that each pauses THINK_MS between requests at this rate."""
    if settings.connections is not None:
        return settings.connections
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, math.ceil(rate * settings.think_ms / 1000)))

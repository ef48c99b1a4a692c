"""A run's workload in a few words, from its settings as run.json records them (capbench/settings/bench.py's BenchSettings):
what the console, the report and the history call it."""
from __future__ import annotations

# The servlets a bench's requests go to, one per WORKLOAD (capbench/settings/bench.py); checks and /health go to none.
SERVLETS = ("grind", "query", "session")
# Where the Grinder's servlets sit when a user's application is deployed on the nodes (APP_WAR), so that the
# harness keeps its /info, /health and /grind: cluster/settings.sh's APP_CONTEXT_RESERVED, which the shell
# deploys it at (tests/config/test_app.py holds the two equal).
HARNESS_CONTEXT = "/capbench"


def describe(settings: dict) -> str:
    """ "v1 level 13" for the Grinder, "query 10 rows joined × 5, 20 % writes" for the shared database, "session
    16 kB" for the users' sessions, "requests of shop.yaml" for a SCENARIO_FILE's."""
    if settings.get("scenario_file"):
        return f"requests of {settings['scenario_file'].rsplit('/', 1)[-1]}"
    if settings.get("workload") == "session":
        return f"session {settings.get('session_kb', '?')} kB"
    if settings.get("workload") == "query":
        q = settings.get("query") or {}
        return (f"query {q.get('rows', '?')} rows{' joined' if q.get('join') else ''} × {q.get('calls', '?')}"
                + (f", {q['write_pct']} % writes" if q.get("write_pct") else ""))
    work = settings.get("work_pct", 100)
    return f"{settings.get('variant', '?')} level {settings.get('level', '?')}" + (f", work {work} %" if work != 100 else "")

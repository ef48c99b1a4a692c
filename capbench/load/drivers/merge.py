"""Several load hosts sending one step (LOAD_HOSTS > 1): the step's plan split into their shares, and their
parts merged into one StepResult. The merge is exact: each generator's corrected latency histograms (oha's from
its per-request rows, wrk2's whole histogram from capbench.lua's done()) are added count by count, so every
percentile is that of all their requests together; averaging the generators' percentiles would not be (the
p99 of two halves is not the mean of their p99s). Counts (responses, failures by kind, the unanswered, the late)
are summed; achieved is the sum of what each achieved."""
from __future__ import annotations

from dataclasses import replace

from capbench.load.drivers import DriverError, GeneratorRun, StepPlan
from capbench.load.drivers.latency import StepLatency, figures, new_histogram
from capbench.rundata.records import Generator, StepResult, Tool, empty_errors


def shares(plan: StepPlan, count: int, whole_rates: bool) -> list[StepPlan]:
    """Each load host's plan: the rate and the connections split as evenly as they go (each host at least one
    connection), the same duration. whole_rates: a tool that takes only whole requests/s (wrk2's -R) gets
    whole shares summing to the rate rounded (one host, too)."""
    if whole_rates and plan.rate > 0:
        base, extra = divmod(round(plan.rate), count)
        rates = [float(base + (i < extra)) for i in range(count)]
    else:
        rates = [plan.rate / count] * count
    base, extra = divmod(plan.connections, count)
    return [replace(plan, rate=rate, connections=max(1, base + (i < extra))) for i, rate in enumerate(rates)]


def generator(host: str, result: StepResult, start_at: float | None) -> Generator:
    named = result.tool.version  # oha's version line names it; wrk2's calls itself "wrk"
    named = named if named.startswith(result.tool.name) else f"{result.tool.name} {named}"
    return Generator(host=host, tool=named,
                     offered_rps=result.offered_rps, connections=result.connections,
                     achieved_rps=result.achieved_rps, responses=result.responses, failures=result.failures,
                     unanswered=result.unanswered, behind_schedule=result.behind_schedule,
                     start_skew_ms=None if start_at is None else round(1000.0 * (result.start_epoch - start_at), 1),
                     loadhost=result.loadhost)


def _sum(values: list) -> int | None:
    return None if any(v is None for v in values) else sum(values)


def _merged(histograms: list):
    if any(h is None for h in histograms):
        return None
    total = new_histogram()
    for histogram in histograms:
        total.add(histogram)
    return total


def combine(hosts: list[str], runs: list[GeneratorRun], offered_rps: float,
            start_at: float | None = None) -> tuple[StepResult, StepLatency | None]:
    """One StepResult of the step from each load host's part (in the order of `hosts`), each named in its
    `generators`, and the step's latency book they add up to; one part is returned as it is. The step's offered
    rate stays the one the harness asked for (its search's), also where a tool's whole shares round it: each
    generator records its own."""
    results = [run.result for run in runs]
    shares_ = [generator(host, result, start_at) for host, result in zip(hosts, results)]
    if len(runs) == 1:
        return replace(results[0], offered_rps=offered_rps, generators=shares_), runs[0].book
    without = [host for host, run in zip(hosts, runs) if run.book is None]
    if without:
        raise DriverError(f"no latency histogram from {', '.join(without)} to merge (an older capbench.lua?): "
                          "several load hosts need each one's whole histogram")
    first = results[0]
    book = StepLatency(first.duration_s, runs[0].book.ramp_s)
    for run in runs:
        book.merge(run.book)
    latency, spectrum = figures(book.steady)
    errors, messages = empty_errors(), {}
    for result in results:
        for kind, count in result.errors.items():
            errors[kind] += count
        for message, count in result.error_messages.items():
            messages[message] = messages.get(message, 0) + count
    responses = sum(r.responses for r in results)
    services = [r.mean_service_ms for r in results]
    lag, send_lag = _merged([run.lag for run in runs]), _merged([run.send_lag for run in runs])
    behind = _sum([r.behind_schedule for r in results])
    loaded = [r for r in results if r.loadhost is not None]
    return StepResult(
        offered_rps=offered_rps, duration_s=first.duration_s,
        connections=sum(r.connections for r in results), achieved_rps=round(sum(r.achieved_rps for r in results), 2),
        responses=responses, latency_ms=latency, errors=errors, error_messages=messages,
        start_epoch=min(r.start_epoch for r in results), end_epoch=max(r.end_epoch for r in results),
        tool=Tool(first.tool.name, first.tool.version, first.tool.argv),
        intended=_sum([r.intended for r in results]), sent=_sum([r.sent for r in results]),
        mean_service_ms=round(sum(m * r.responses for m, r in zip(services, results)) / responses, 3)
        if responses and None not in services else None,
        send_lag_ms_p99=send_lag.get_value_at_percentile(99) / 1000.0 if send_lag and responses else None,
        unanswered=_sum([r.unanswered for r in results]), behind_schedule=behind,
        schedule_lag_ms_p99=lag.get_value_at_percentile(99) / 1000.0 if lag and behind is not None and responses
        else None,
        p99_without_generator_lag_ms=figures(book.without_lag)[0].get("p99")
        if all(r.p99_without_generator_lag_ms is not None for r in results) else None,
        latency_by_second=book.seconds() if any(r.latency_by_second for r in results) else [],
        ramp_s=first.ramp_s, ramp_p99_ms=book.ramp_p99(),
        window_p99_ms=book.window_p99s() if any(r.window_p99_ms for r in results) else [],
        loadhost=max(loaded, key=lambda r: r.loadhost.cpu_pct).loadhost if loaded else None,
        notes=[f"{host}: {note}" for host, result in zip(hosts, results) for note in result.notes],
        latency_spectrum_ms=spectrum, generators=shares_), book

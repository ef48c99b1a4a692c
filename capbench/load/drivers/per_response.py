"""A step's figures from one row per answered request (due, sent, end, corrected duration, status), for the
generators that give such rows (oha's SQLite, capload's TSV): percentiles, slow responses and the generator's
own lag from those rows with HdrHistogram, the same way wrk2 records them; failures from the tool's counts by
message."""
from __future__ import annotations

from capbench.load.drivers import DriverError, Envelope, GeneratorRun, StepPlan
from capbench.load.drivers.latency import StepLatency, figures, new_histogram, record_ms, unanswered_count
from capbench.rundata.records import GENERATOR_LATE_MS, SLOW_MS, StepResult, Tool, empty_errors, socket_errors

# Error messages (Rust's io and hyper errors, Go's net and net/http errors) to the study's kinds; the first
# matching fragment wins.
ERROR_FRAGMENTS = (
    ("timeout", "timeout"), ("timed out", "timeout"),
    ("reset", "read"), ("closed before message completed", "read"), ("incomplete", "read"),
    ("end of file", "read"), ("eof", "read"), ("parse", "read"), ("malformed", "read"),
    ("broken pipe", "write"), ("write", "write"),
    ("refused", "connect"), ("unreachable", "connect"), ("no route", "connect"), ("dns", "connect"),
    ("tcp connect", "connect"), ("trying to connect", "connect"), ("dial tcp", "connect"),
)


def classify_error(message: str) -> str:
    lowered = message.lower()
    for fragment, kind in ERROR_FRAGMENTS:
        if fragment in lowered:
            return kind
    return "other"


def schedule_lags(stamps: list[float], failed: int, rate: float) -> list[float]:
    """How late oha handed out each request against its schedule (ms), in the order of `stamps`. oha's producer
    sleeps until request i is due (i / rate from the start) and then stamps it with the time it woke, so a
    producer starved of CPU stamps late and its latency correction cannot see it; the schedule can. The k-th
    stamp in time order is request k + (the failed requests before it, which have no row): taking all `failed`
    as earlier gives each stamp the latest due time it can have, so each lag is a lower bound, and a slow server
    (which delays the send, not the stamp) adds nothing."""
    order = sorted(range(len(stamps)), key=stamps.__getitem__)
    lags = [0.0] * len(stamps)
    for k, index in enumerate(order):
        lags[index] = max(0.0, 1000.0 * (stamps[index] - (k + failed) / rate))
    return lags


def failed_statuses(distribution: dict[str, int], success: tuple[int, ...] | None) -> int:
    """Responses whose status is not a success, from oha's statusCodeDistribution ({"200": n, ...}): with a
    scenario's `success` list, any status not in it; without one, any status of 400 or more (the study's rule)."""
    return sum(count for status, count in distribution.items()
               if (int(status) not in success if success is not None else int(status) >= 400))


def run_from_rows(statuses: dict[str, int], messages: dict[str, int], cut: int, rows: list[tuple], plan: StepPlan,
                  envelope: Envelope, tool: Tool, lags: list[float] | None = None) -> GeneratorRun:
    """A generator's part of a step from its counts (statuses as {"200": n}, errors by message; `cut`: requests
    in flight when the step ended, neither answered nor failed) and its per-response rows (stamp, sent, end,
    latency from the stamp, status): its StepResult, and its histograms for a merge with other load hosts'.
    `lags`: each stamp's lateness against its due time (ms) where the tool knows it; else the schedule's lower
    bound (schedule_lags)."""
    if sum(statuses.values()) != len(rows):
        raise DriverError(f"{tool.name} counted {sum(statuses.values())} responses but stored {len(rows)} rows")
    errors = empty_errors()
    errors["status"] = failed_statuses(statuses, plan.success)
    for message, count in messages.items():
        errors[classify_error(message)] += count

    responses = len(rows)
    no_response = socket_errors(errors)
    intended = round(plan.rate * plan.duration_s) if plan.rate > 0 else None
    if lags is None:
        lags = schedule_lags([row[0] for row in rows], no_response, plan.rate) if plan.rate > 0 else [0.0] * responses
    # The verdict's latency runs from the schedule (the tool's own correction plus its lag behind the schedule), so a
    # late generator can only make the server look worse; the same without that lag says whether it did.
    book = StepLatency(plan.duration_s, plan.ramp_s)
    lag, send_lag = new_histogram(), new_histogram()  # send lag: stamped to sent, waiting for a free connection
    service_total = 0.0
    for (stamp, sent, end, duration, _status), lag_ms in zip(rows, lags):
        book.add(stamp - lag_ms / 1000.0, duration * 1000.0 + lag_ms, lag_ms)
        record_ms(lag, lag_ms)
        record_ms(send_lag, (sent - stamp) * 1000.0)
        service_total += end - sent
        if duration * 1000.0 + lag_ms > SLOW_MS:
            errors["slow"] += 1
    unanswered = unanswered_count(intended, responses, no_response)
    book.add_unanswered(unanswered, plan.rate)
    latency, spectrum = figures(book.steady)
    late = sum(lag_ms > GENERATOR_LATE_MS for lag_ms in lags) if plan.rate > 0 else None
    result = StepResult(
        offered_rps=plan.rate, duration_s=plan.duration_s, connections=plan.connections,
        achieved_rps=round(responses / plan.duration_s, 2), responses=responses, latency_ms=latency,
        errors=errors, error_messages=messages, start_epoch=envelope.start_epoch, end_epoch=envelope.end_epoch,
        tool=tool, intended=intended, sent=responses + no_response, unanswered=unanswered if intended else None,
        mean_service_ms=round(1000.0 * service_total / responses, 3) if responses else None,
        send_lag_ms_p99=send_lag.get_value_at_percentile(99) / 1000.0 if responses else None,
        behind_schedule=late, schedule_lag_ms_p99=lag.get_value_at_percentile(99) / 1000.0 if late is not None
        and responses else None,
        p99_without_generator_lag_ms=figures(book.without_lag)[0].get("p99") if late is not None else None,
        latency_by_second=book.seconds(), ramp_s=plan.ramp_s, ramp_p99_ms=book.ramp_p99(),
        window_p99_ms=book.window_p99s(),
        loadhost=envelope.usage(), latency_spectrum_ms=spectrum,
        notes=[f"{unanswered} requests unanswered at the end of the step (in flight, queued or never sent), in the "
               f"latency tail at their least possible age; {tool.name} cut {cut} connections, idle or busy"]
        if unanswered or cut else [])
    return GeneratorRun(result, book, lag if late is not None else None, send_lag)

#!/usr/bin/env bash
# A delivery pipeline's capacity stage: measure this build with capbench's gate and pass or fail on its verdict.
# Any CI can call it from the repository, on a machine where `make setup` has run (once: Docker, the tools):
#   examples/ci/capacity-gate.sh [make settings ...]     e.g.  QUICK=1 DUET_BLOCKS=8  (the baseline's build and
#                                                         this one measured together)
#   examples/ci/capacity-gate.sh "DUET_A=VARIANT=v3" "DUET_B=VARIANT=v2"       (two builds named)
#   examples/ci/capacity-gate.sh GATE_MODE=history GATE_BENCH=single QUICK=1 GATE_P99_MS=250@400
# Exit status: the gate's (0 holds, 3 fell, 5 p99 above its threshold, 2 bad settings), except "cannot tell" (4),
# which stays 4 unless GATE_CANNOT_TELL=pass lets the build through (a machine that changed, too few repeats).
# Afterwards: $RESULTS_DIR/gate/junit.xml (RESULTS_DIR defaults to results) for the CI's test report; metrics.prom
# beside it (Prometheus text) copied into TEXTFILE_DIR for node_exporter's textfile collector and pushed to
# PUSHGATEWAY_URL, when those are set.
set -uo pipefail
cd "$(dirname "$0")/../.."
for setting in "$@"; do  # capbench checks them all; RESULTS_DIR is read here too
    if [[ $setting =~ ^[A-Z][A-Z0-9_]*= ]]; then export "${setting?}"; fi
done
out="${RESULTS_DIR:-results}/gate"

rm -f "$out"/junit.xml "$out"/gate.json "$out"/metrics.om "$out"/metrics.prom  # never report an earlier gate's
# capbench checks the settings, builds what changed, brings the cluster up and measures; its exit status is the
# gate's own (make would turn every failure into 2).
.venv/bin/capbench gate "$@"
code=$?

if [ -f "$out/metrics.prom" ]; then
    if [ -n "${TEXTFILE_DIR:-}" ]; then
        # Written beside, then renamed: the collector never reads half a file.
        cp "$out/metrics.prom" "$TEXTFILE_DIR/capbench.prom.$$" && mv "$TEXTFILE_DIR/capbench.prom.$$" "$TEXTFILE_DIR/capbench.prom"
    fi
    if [ -n "${PUSHGATEWAY_URL:-}" ]; then
        curl --fail --silent --show-error --data-binary @"$out/metrics.prom" \
            "$PUSHGATEWAY_URL/metrics/job/capbench_gate" || echo "capacity-gate: the push to $PUSHGATEWAY_URL failed" >&2
    fi
fi

case $code in
    0) echo "capacity-gate: capacity holds" ;;
    3) echo "capacity-gate: capacity fell beyond the tolerance: failing the build" >&2 ;;
    5) echo "capacity-gate: a p99 threshold was broken: failing the build" >&2 ;;
    4) if [ "${GATE_CANNOT_TELL:-fail}" = pass ]; then
           echo "capacity-gate: the gate cannot tell (see its checks); GATE_CANNOT_TELL=pass lets the build through"
           code=0
       else
           echo "capacity-gate: the gate cannot tell (see its checks): failing; GATE_CANNOT_TELL=pass would let it through" >&2
       fi ;;
    *) echo "capacity-gate: capbench gate exited $code (2: bad settings or the cluster not up; 130: interrupted)" >&2 ;;
esac
exit "$code"

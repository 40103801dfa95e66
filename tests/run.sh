#!/bin/bash
# Run every unit test binary and every integration test script, then print
# the summary line CI reads:  "N passed, N failed[, N skipped]".
# `tests/run.sh linux` (make check-linux) runs tests/linux/*.sh instead:
# the Lodge test kernel's tests, minutes each on a PVM host.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
export TOP BUILD
results=$(mktemp)
# One etcd cluster for every pool test of the run (tests/pool-lib.sh),
# started by the first that needs it, stopped here at the end.
export LODGE_POOL_FIXTURE
LODGE_POOL_FIXTURE=$(mktemp -d /tmp/lodge-pool.XXXXXX)
pool_fixture_stop() { (T=/nonexistent; . "$TOP/tests/pool-lib.sh"; pool_etcd_stop "$LODGE_POOL_FIXTURE"); rm -rf "$LODGE_POOL_FIXTURE"; }
trap 'rm -f "$results"; pool_fixture_stop' EXIT
# make check SANITIZE=1: ASan and UBSan reports from every process (the
# detached lodge-hyps included) go to files, each a failure at the end.
# Leaks are not counted: lodge and lodge-hyp exit without freeing on purpose.
if [ "${SANITIZE:-}" = 1 ]; then
	san=$BUILD/sanitizer
	rm -rf "$san"
	mkdir -p "$san"
	export ASAN_OPTIONS="detect_leaks=0:log_path=$san/asan"
	export UBSAN_OPTIONS="print_stacktrace=1:log_path=$san/ubsan"
fi

run_one() {   # run_one LABEL CMD...: run a test, echo its lines, keep its verdicts
	local label=$1 out rc
	shift
	echo "== $label"
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/   /'
	printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP): ' >>"$results"
	if [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL: '; then
		echo "FAIL: $label: exited with status $rc" | tee -a "$results"
	fi
}

if [ "${1:-}" = linux ]; then
	for t in "$TOP"/tests/linux/*.sh; do
		[ -f "$t" ] || continue
		run_one "linux $(basename "$t" .sh)" bash "$t"
	done
else
	for t in "$BUILD"/tests/test-*; do
		[ -x "$t" ] || continue
		run_one "unit $(basename "$t")" "$t"
	done
	for t in "$TOP"/tests/integ/*.sh; do
		[ -f "$t" ] || continue
		run_one "integ $(basename "$t" .sh)" bash "$t"
	done
fi

if [ "${SANITIZE:-}" = 1 ]; then
	for f in "$san"/*; do
		[ -f "$f" ] || continue
		echo "FAIL: sanitizer: $(grep -m1 -E 'ERROR|runtime error' "$f" | cut -c1-200) (full report: $f)" | tee -a "$results"
	done
fi

passed=$(grep -c '^PASS: ' "$results")
failed=$(grep -c '^FAIL: ' "$results")
skipped=$(grep -c '^SKIP: ' "$results")
echo
if [ "$failed" -gt 0 ]; then echo "Failed:"; grep '^FAIL: ' "$results" | sed 's/^/  /'; fi
if [ "$skipped" -gt 0 ]; then echo "Skipped:"; grep '^SKIP: ' "$results" | sed 's/^/  /'; fi
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]

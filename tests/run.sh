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
# T=PATTERN (make check T=net): only the tests whose label (e.g. "integ
# net", "unit test-virtio") matches the extended regular expression.
FILTER=${T:-}
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

# A test that hangs names itself and fails instead of holding CI until its
# limit: TEST_TIMEOUT seconds each (the slowest, an install from a cold
# template cache, takes about 6 minutes on a loaded machine).  A test script
# that needs longer says so in its header, on a line of its own
#     # test-timeout: SECONDS
# which is its limit unless TEST_TIMEOUT is higher.  The test gets its limit
# as TEST_LIMIT, to end its own waits before it.  timeout(1) sends SIGTERM
# to the test's process group; the test's EXIT trap (lib.sh's integ_exit)
# still ends what it started.
TEST_TIMEOUT=${TEST_TIMEOUT:-1200}

# test_limit FILE: the seconds FILE's "# test-timeout:" line asks, if any.
test_limit() {
	case $1 in *.sh) sed -n 's/^# test-timeout: *\([0-9][0-9]*\).*/\1/p' "$1" | head -1 ;; esac
}

run_one() {   # run_one LABEL CMD...: run a test, echo its lines, keep its verdicts
	local label=$1 out rc t0 limit own
	shift
	if [ -n "$FILTER" ] && ! printf '%s\n' "$label" | grep -Eq -- "$FILTER"; then return; fi
	echo "== $label"
	t0=$SECONDS
	limit=$TEST_TIMEOUT
	own=$(test_limit "${!#}")
	if [ -n "$own" ] && [ "$own" -gt "$limit" ]; then limit=$own; fi
	out=$(TEST_LIMIT=$limit timeout --kill-after=30 "$limit" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/   /'
	printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP): ' >>"$results"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "FAIL: $label: did not end within $limit s (its limit: TEST_TIMEOUT or its test-timeout line), stopped" | tee -a "$results"
	elif [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL: '; then
		echo "FAIL: $label: exited with status $rc" | tee -a "$results"
	fi
	echo "   ($((SECONDS - t0)) s)"
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

#!/bin/bash
# The dashboard's own CPU time per refresh with 1, 10 and 50 Mini-OS
# domains, at its fastest refresh (0.1 s), printed as a Markdown table.
#
#   tests/bench/tui.sh [SECONDS]      (default 60 per measurement; TUI_BENCH_SECS)
#
# Two figures per row:
#  - batch: `lodge top -b -d 0.1 -n R` (sampling, rates, sorting and the
#    text table; R refreshes exactly), its user+sys time over R;
#  - screen: the interactive dashboard in an 80x24 tmux pane, its
#    utime+stime from /proc/PID/stat over SECONDS, divided by the refreshes
#    it can have made (SECONDS / 0.1: an upper bound on the count, so the
#    per-refresh figure is, if anything, too low by the sampling time
#    itself, a few per cent).  This includes curses' diffing and output.
# Target: under 2 ms per refresh at 50 domains.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
LODGE=$BUILD/lodge
MINIOS=${MINIOS:-$BUILD/minios/minios.elf}
SECS=${1:-${TUI_BENCH_SECS:-60}}
DELAY=0.1
COUNTS="1 10 50"

for f in "$LODGE" "$MINIOS"; do
	[ -e "$f" ] || { echo "tui bench: $f not built (make)" >&2; exit 1; }
done
[ -c /dev/kvm ] || { echo "tui bench: no /dev/kvm" >&2; exit 1; }
command -v tmux >/dev/null || { echo "tui bench: tmux not installed" >&2; exit 1; }

ROOT=$(mktemp -d /tmp/lodge-bench-tui.XXXXXX)
S=lodge-bench-tui-$$
lodge() { timeout 30 "$LODGE" --root "$ROOT" "$@"; }
cleanup() {
	tmux kill-session -t "$S" 2>/dev/null
	for d in "$ROOT"/run/lodge/*/; do
		[ -d "$d" ] && lodge destroy "$(basename "$d")" >/dev/null 2>&1
	done
	rm -rf "$ROOT"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkdir -p "$ROOT/etc/lodge/domains"

running=0
start_upto() {   # start_upto N: create domains until N run, each booted
	local i end
	while [ $running -lt "$1" ]; do
		i=$running
		printf 'name = "b%d"\nmemory = 32\nvcpus = 1\nkernel = "%s"\n' $i "$MINIOS" \
			>"$ROOT/etc/lodge/domains/b$i.cfg"
		lodge create "b$i" >/dev/null || { echo "tui bench: could not create b$i" >&2; exit 1; }
		end=$((SECONDS + 30))
		until grep -q 'Lodge Mini-OS' "$ROOT/run/lodge/b$i/console.log" 2>/dev/null; do
			[ $SECONDS -lt $end ] || { echo "tui bench: b$i did not boot in 30 s" >&2; exit 1; }
			sleep 0.05
		done
		running=$((running + 1))
	done
}

clk_tck=$(getconf CLK_TCK)
cpu_ticks() {    # utime + stime of PID, in clock ticks
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

batch_ms() {     # CPU ms per refresh of lodge top -b
	local n t
	n=$(awk -v s="$SECS" -v d=$DELAY 'BEGIN { printf "%d", s / d }')
	t=$( { TIMEFORMAT='%U %S'; time "$LODGE" --root "$ROOT" top -b -d $DELAY -n "$n" >/dev/null; } 2>&1 | tail -1)
	awk -v t="$t" -v n="$n" 'BEGIN { split(t, a, " "); printf "%.3f", (a[1] + a[2]) * 1000 / n }'
}

screen_ms() {    # CPU ms per refresh of the dashboard on an 80x24 screen
	local pid t0 t1
	tmux kill-session -t "$S" 2>/dev/null
	tmux new-session -d -s "$S" -x 80 -y 24 "exec env TERM=xterm $LODGE --root $ROOT -d $DELAY"
	sleep 2          # start-up and the first full screen are not refreshes
	pid=$(tmux display-message -p -t "$S" '#{pane_pid}')
	t0=$(cpu_ticks "$pid")
	sleep "$SECS"
	t1=$(cpu_ticks "$pid")
	tmux kill-session -t "$S" 2>/dev/null
	awk -v a="$t0" -v b="$t1" -v hz="$clk_tck" -v s="$SECS" -v d=$DELAY \
		'BEGIN { printf "%.3f", (b - a) * 1000 / hz / (s / d) }'
}

echo "Dashboard CPU time per refresh (refresh every ${DELAY} s, ${SECS} s per figure, $(nproc) host CPUs)"
echo
echo "| domains | batch (lodge top -b), ms/refresh | screen (80x24 in tmux), ms/refresh | target |"
echo "|--------:|---------------------------------:|-----------------------------------:|-------:|"
for n in $COUNTS; do
	start_upto "$n"
	b=$(batch_ms)
	s=$(screen_ms)
	echo "| $n | $b | $s | < 2 |"
done

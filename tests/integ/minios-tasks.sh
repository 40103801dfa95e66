#!/bin/bash
# Mini-OS's commands for save/restore and migration tests: counter counts
# in the background, memfill + memcheck agree, and dirty makes progress
# while the guest still answers ping through a tap on a bridge (in a
# network namespace this test makes and removes).
. "$(dirname "$0")/../lib.sh"

integ_begin "Mini-OS tasks" kvm minios
NS=
at_exit '[ -n "$NS" ] && ip netns del "$NS" 2>/dev/null'

# counter in the background: the shell still runs commands, Ctrl-C stops it.
mkfifo "$T/c.in"
timeout 60 "$HYP" --kernel "$MINIOS" --memory 64 --cmdline 'run="counter 50"' \
	<"$T/c.in" >"$T/c.out" 2>&1 &
exec 8>"$T/c.in"
if wait_for "$T/c.out" '^counter 20.?$' 30; then
	n=$(grep -Ec '^counter [0-9]+.?$' "$T/c.out")
	seq_ok=$(grep -E '^counter [0-9]+.?$' "$T/c.out" | tr -d '\r' |
		awk '{ if ($2 != NR) bad = 1 } END { print bad ? "no" : "yes" }')
	if [ "$seq_ok" = yes ]; then
		pass "counter prints counter 1, 2, ... in the background ($n lines)"
	else
		fail "counter counts by one" "$(grep -E '^counter' "$T/c.out" | head -5 | tr '\r\n' '  ')"
	fi
else
	fail "counter counts" "$(tail -3 "$T/c.out")"
fi
echo "uptime" >&8
if wait_for "$T/c.out" '^uptime: ' 10; then
	pass "the console still runs commands while counter runs"
else
	fail "commands while counter runs" "$(tail -3 "$T/c.out")"
fi
printf '\003' >&8
if wait_for "$T/c.out" 'tasks: stopped' 10; then
	sleep 0.3
	a=$(grep -Ec '^counter' "$T/c.out"); sleep 0.5; b=$(grep -Ec '^counter' "$T/c.out")
	if [ "$a" = "$b" ]; then pass "Ctrl-C stops the counter"; else fail "Ctrl-C stops the counter" "$a then $b lines"; fi
else
	fail "Ctrl-C stops the counter" "$(tail -3 "$T/c.out")"
fi
echo "poweroff" >&8
exec 8>&-

# memfill and memcheck; a second fill with another seed is checked too.
timeout 120 "$HYP" --kernel "$MINIOS" --memory 64 \
	--cmdline 'run="memfill 16 7; memcheck; memfill 8 99; memcheck; memcheck; poweroff"' \
	</dev/null >"$T/m.out" 2>&1
if grep -Eq '^memfill: 16 MiB at 0x[0-9a-f]+ seed 7' "$T/m.out" &&
   grep -Eq '^memfill: 8 MiB at 0x[0-9a-f]+ seed 99' "$T/m.out" &&
   [ "$(grep -c '^memcheck: ok 16 MiB' "$T/m.out")" = 1 ] &&
   [ "$(grep -c '^memcheck: ok 8 MiB' "$T/m.out")" = 2 ] && ! grep -q 'memcheck: BAD' "$T/m.out"; then
	pass "memfill then memcheck: ok"
else
	fail "memfill then memcheck" "$(grep -E '^mem(fill|check)' "$T/m.out" | tr '\r\n' '  ')"
fi

# dirty in the background while the host pings the guest over a bridge.
if [ "$(id -u)" -ne 0 ]; then skip "dirty while answering ping" "needs root"; exit 0; fi
if ! ip netns add "lodge-tasks-$$" 2>/dev/null; then skip "dirty while answering ping" "cannot create network namespaces"; exit 0; fi
NS=lodge-tasks-$$
in_ns() { ip netns exec "$NS" "$@"; }
in_ns ip link set lo up
in_ns "$BUILD/lodge" bridge-create lbr0 || { fail "bridge-create" "could not create lbr0"; exit 0; }
in_ns ip addr add 10.78.0.1/24 dev lbr0
mkfifo "$T/d.in"
in_ns timeout 90 "$HYP" --kernel "$MINIOS" --memory 128 --net "tap=vif-t.0,bridge=lbr0" \
	--cmdline 'ip=10.78.0.2/24 run="dirty 32; counter 1000"' <"$T/d.in" >"$T/d.out" 2>&1 &
exec 9>"$T/d.in"
if wait_for "$T/d.out" '^dirty: pass [0-9]+' 30; then
	first=$(grep -E '^dirty: pass' "$T/d.out" | tail -1 | tr -dc '0-9')
	if in_ns ping -c 5 -i 0.3 -W 5 10.78.0.2 >"$T/ping.out" 2>&1; then
		pass "the guest answers ping while dirty runs ($(grep -o '[0-9]*% packet loss' "$T/ping.out"))"
	else
		fail "ping while dirty runs" "$(tail -2 "$T/ping.out")"
	fi
	sleep 1.5
	last=$(grep -E '^dirty: pass' "$T/d.out" | tail -1 | tr -dc '0-9')
	if [ "$last" -gt "$first" ] && grep -Eq '^counter [0-9]+' "$T/d.out"; then
		pass "dirty makes progress (pass $first, then $last) beside counter"
	else
		fail "dirty makes progress" "pass $first then $last; $(tail -3 "$T/d.out" | tr '\r\n' '  ')"
	fi
else
	fail "dirty makes progress" "$(tail -3 "$T/d.out")"
fi
echo "dirty stop" >&9
if wait_for "$T/d.out" '^dirty: stopped after [0-9]+ passes, ok' 20; then
	pass "dirty stop finds every page holding its last pass"
else
	fail "dirty stop checks the pages" "$(grep -a 'dirty: stopped' "$T/d.out")"
fi
echo "poweroff" >&9
exec 9>&-

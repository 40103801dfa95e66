#!/bin/bash
# The console agent beyond the everyday lifecycle, with real Mini-OS
# domains: on_crash = "preserve" keeps a crashed domain for inspection
# until destroyed; one interactive console at a time, --force takes it
# over; a client of another protocol version gets a clear error; lodge
# autostart starts exactly the domains marked autostart; a dashboard
# killed with SIGKILL takes no domain with it.
. "$(dirname "$0")/../lib.sh"

integ_begin "console agent" kvm minios

state_is() { [ "$(field "$1" 5)" = "$2" ]; }
# A console client in the background, its input a fifo held open on fd
# 7 so it stays attached until killed or detached; sets bg.
mkfifo "$TMPDIR_TEST/in"
exec 7<>"$TMPDIR_TEST/in"
console_bg() {  # OUT ERR NAME [--force]
	timeout 120 "$LODGE" --root "$ROOT" console ${4:+"$4"} "$3" <&7 >"$1" 2>"$2" &
	bg=$!
}

# --- on_crash = "preserve": a triple fault keeps the domain, its registers
# and its console log until lodge destroy.
domain_cfg crash 'on_crash = "preserve"'
if lodge create crash && wait_until 30 booted crash; then
	( echo crash; sleep 0.5 ) | lodge console crash >/dev/null 2>&1
	wait_until 30 state_is crash crashed
	sleep 2          # preserved: still there a while later
	log=$RUN/crash/lodge-hyp.log
	if state_is crash crashed && [ "$(lodge list | awk '$1 == "crash" { print $5 }')" = ----c- ]; then
		pass "on_crash = preserve: a triple-faulted domain stays listed as crashed"
	else
		fail "on_crash = preserve keeps it listed as crashed" "$(lodge list -o tsv | grep crash)"
	fi
	# On PVM the triple fault reaches lodge-hyp as a KVM internal error.
	if grep -Eq 'domain crash stopped \(vcpu0 (triple fault|KVM internal error \(suberror [0-9]+\))\): preserved until lodge destroy' \
		"$log" 2>/dev/null &&
	   grep -Eq 'vcpu0: rip [0-9a-f]{16} rsp [0-9a-f]{16}' "$log" &&
	   grep -Eq 'vcpu0: cr0 [0-9a-f]+ cr2 [0-9a-f]{16} cr3' "$log"; then
		pass "on_crash = preserve: the reason and its registers are in its log"
	else
		fail "crashed domain's registers in its log" "$(tail -5 "$log" 2>&1)"
	fi
	if console_log crash | grep -q 'minios: triple fault' && console_log crash | grep -q 'Lodge Mini-OS'; then
		pass "on_crash = preserve: its console log is kept"
	else
		fail "crashed domain's console log kept" "$(console_log crash | tail -3)"
	fi
	msg=$(lodge pause crash 2>&1); rc=$?
	if [ $rc -ne 0 ] && grep -q 'domain crash is not running' <<<"$msg"; then
		pass "a crashed domain refuses pause, saying why"
	else
		fail "crashed domain refuses pause" "$msg"
	fi
	if lodge destroy crash && [ ! -d "$RUN/crash" ] && [ -z "$(field crash 1)" ]; then
		pass "lodge destroy ends a preserved crashed domain and its runtime dir"
	else
		fail "destroy a preserved crashed domain" "$(ls "$RUN" 2>&1)"
	fi
else
	fail "on_crash = preserve" "could not create and boot the domain: $(console_log crash | tail -3)"
fi

# --- One interactive console at a time; --force takes it over.
domain_cfg con
lodge create con && wait_until 30 booted con
console_bg "$TMPDIR_TEST/c1.out" "$TMPDIR_TEST/c1.err" con
first=$bg
wait_for "$TMPDIR_TEST/c1.out" 'minios> ' 30
msg=$( (sleep 1) | lodge console con 2>&1 >/dev/null); rc=$?
if [ $rc -ne 0 ] && tr -d '\r' <<<"$msg" |
   grep -qx 'lodge: error: the console is in use by another client (lodge console --force takes it over)' &&
   kill -0 "$first" 2>/dev/null; then
	pass "a second console is refused with a clear message, the first stays"
else
	fail "a second console is refused" "exit $rc: $msg"
fi
out=$( (sleep 0.5; echo "echo takeover-ok"; sleep 1) | lodge console --force con 2>/dev/null | tr -d '\r')
if grep -q '^takeover-ok' <<<"$out"; then
	pass "console --force takes it over and the guest answers"
else
	fail "console --force takes it over" "$(tail -3 <<<"$out")"
fi
if wait_until 10 sh -c "! kill -0 $first 2>/dev/null" &&
   tr -d '\r' <"$TMPDIR_TEST/c1.out" | grep -q '^\[lodge: console taken over by another client\]'; then
	pass "the first console gets the takeover message and ends"
else
	fail "the first console is told of the takeover" "$(tr -d '\r' <"$TMPDIR_TEST/c1.out" | tail -2)"
fi

# --- Another protocol version: a clear error from lodge-hyp itself.
reply=$(timeout 10 python3 - "$RUN/con/control" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"lodge/99 status\n")
print(s.makefile("rb").readline().decode().rstrip("\n"))
PY
)
if [ "$reply" = "error protocol version 99 not supported (lodge-hyp speaks 1)" ] && state_is con running; then
	pass "a client of another protocol version gets a clear error"
else
	fail "another protocol version" "reply '$reply'"
fi
lodge destroy con

# --- A dashboard killed with SIGKILL takes no domain with it.
domain_cfg dash
if lodge create dash && wait_until 30 booted dash; then
	TERM=xterm script -qfec "exec $LODGE --root $ROOT top -d 0.5" "$TMPDIR_TEST/top.out" <&7 >/dev/null 2>&1 &
	spid=$!
	wait_for "$TMPDIR_TEST/top.out" 'dash' 15
	tpid=$(pgrep -P "$spid" | head -1)
	if [ -n "$tpid" ] && [ "$(cat /proc/"$tpid"/comm 2>/dev/null)" = lodge ]; then
		kill -9 "$tpid"
		wait_until 10 sh -c "! kill -0 $tpid 2>/dev/null"
		sleep 0.5
		out=$( (sleep 0.5; echo "echo still-here"; sleep 1) | lodge console dash 2>/dev/null | tr -d '\r')
		if ! kill -0 "$tpid" 2>/dev/null && lodge list >/dev/null && state_is dash running &&
		   grep -q '^still-here' <<<"$out"; then
			pass "a dashboard killed with SIGKILL leaves the domain running, listed, answering"
		else
			fail "a killed dashboard leaves the domain" "$(lodge list -o tsv); $(tail -2 <<<"$out")"
		fi
	else
		fail "a killed dashboard leaves the domain" "the dashboard did not start: $(tail -c 300 "$TMPDIR_TEST/top.out")"
	fi
	kill "$spid" 2>/dev/null
	lodge destroy dash
else
	fail "a killed dashboard leaves the domain" "could not create and boot the domain"
fi

# --- lodge autostart starts the domains marked autostart, not the others.
domain_cfg auto1 'autostart = true'
domain_cfg auto2 'autostart = true'
domain_cfg manual 'autostart = false'
domain_cfg plain
out=$(lodge autostart 2>&1); rc=$?
if [ $rc -eq 0 ] && state_is auto1 running && state_is auto2 running &&
   [ -z "$(field manual 1)" ] && [ -z "$(field plain 1)" ] &&
   [ "$(grep -c '^started ' <<<"$out")" = 2 ] && grep -qx 'started auto1' <<<"$out"; then
	pass "autostart starts the domains marked autostart and not the others"
else
	fail "autostart" "exit $rc: $out; $(lodge list -o tsv | cut -f1,5 | tr '\n' ' ')"
fi
wait_until 30 booted auto1
out=$(lodge autostart 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -z "$out" ] && [ "$(lodge list -o tsv | grep -c '^auto[12]	')" = 2 ]; then
	pass "autostart again starts nothing already running"
else
	fail "autostart again" "exit $rc: $out"
fi
lodge destroy auto1
lodge destroy auto2

#!/bin/bash
# The console agent with real domains: create from a config, list, console,
# pause/unpause, shutdown through the guest's own power-button handler,
# reboot, destroy; a killed CLI leaves the domain running (and its console
# free); a killed lodge-hyp leaves a stale entry that list reports and
# cleans.  More of the agent (preserve, console takeover, protocol
# version, autostart, a killed dashboard): agent.sh.
. "$(dirname "$0")/../lib.sh"

integ_begin "domain lifecycle" kvm minios

cat >"$ROOT/etc/lodge/domains/web.cfg" <<CFG
# a Mini-OS web server that is not one
name = "web"
memory = 64
vcpus = 2
kernel = "$MINIOS"
on_reboot = "restart"
CFG

# field NAME COLUMN: a column of lodge list -o tsv for a domain
console_shows() { lodge console --log "$1" 2>/dev/null | grep -q -- "$2"; }
booted() { console_shows "$1" 'minios> '; }

if lodge create web; then pass "create from a config"; else fail "create from a config" "exit $?"; exit 0; fi
wait_until 30 booted web

if [ "$(field web 4)" = 2 ] && [ "$(field web 3)" = 64 ] && [ "$(field web 5)" = running ]; then
	pass "list shows it running with 2 vCPUs and 64 MiB"
else
	fail "list shows it running" "$(lodge list -o tsv)"
fi
if lodge list | head -2 | tail -1 | grep -q '^Domain-0'; then
	pass "list shows Domain-0 first"
else
	fail "list shows Domain-0 first" "$(lodge list | head -3)"
fi
if console_shows web 'Lodge Mini-OS' && console_shows web 'smp: 2 of 2 CPUs up'; then
	pass "console keeps the boot log from before anyone attached"
else
	fail "console keeps the boot log" "$(lodge console --log web | head -5)"
fi
out=$( (sleep 0.5; echo "echo lodge-console-ok"; sleep 1) | lodge console web 2>/dev/null)
if grep -q '^lodge-console-ok' <<<"$(tr -d '\r' <<<"$out")"; then
	pass "console accepts a command and shows its output"
else
	fail "console accepts a command" "$(tail -3 <<<"$out")"
fi

# Pause: CPU time stops growing while the guest burns CPU; unpause resumes.
( echo "burn 30"; sleep 0.5 ) | lodge console web >/dev/null 2>&1
sleep 1
lodge pause web
t1=$(field web 6); sleep 1.5; t2=$(field web 6)
if [ "$(field web 5)" = paused ] && [ "$t1" = "$t2" ]; then
	pass "pause stops its CPU time from growing"
else
	fail "pause stops its CPU time" "state $(field web 5), time $t1 -> $t2"
fi
lodge unpause web
sleep 1.5; t3=$(field web 6)
if [ "$(field web 5)" = running ] && awk -v a="$t2" -v b="$t3" 'BEGIN { exit !(b > a) }'; then
	pass "unpause resumes it"
else
	fail "unpause resumes it" "state $(field web 5), time $t2 -> $t3"
fi

# Reboot: on_reboot = restart brings it back with a new boot log.
lodge reboot web
if wait_until 30 sh -c "[ \$($LODGE --root $ROOT console --log web 2>/dev/null | grep -c 'Lodge Mini-OS') -ge 2 ]" &&
   [ "$(field web 5)" = running ]; then
	pass "reboot returns it running with a new boot log"
else
	fail "reboot returns it running" "$(lodge console --log web | grep -c 'Lodge Mini-OS') banners, state $(field web 5)"
fi
wait_until 30 sh -c "$LODGE --root $ROOT console --log web | tail -c 200 | grep -q 'minios> '"

# Shutdown: the guest's ACPI power-button handler powers it off.  A
# console attached meanwhile sees the handler's own lines, the last words
# lodge-hyp sends before the domain and its console log go.
con=$TMPDIR_TEST/shutdown-console.out
mkfifo "$TMPDIR_TEST/shutdown-console.in"
exec 7<>"$TMPDIR_TEST/shutdown-console.in"     # its input, held open
timeout 60 "$LODGE" --root "$ROOT" console web <&7 >"$con" 2>/dev/null &
conpid=$!
wait_for "$con" 'minios> ' 30
if lodge shutdown -w -t 30 web && [ ! -d "$RUN/web" ] &&
   wait_for "$con" 'minios: power button pressed' 10 && grep -q 'minios: powering off' "$con"; then
	pass "shutdown powers the guest off through its own handler"
else
	fail "shutdown through the guest's handler" \
		"still there: $(lodge list -o tsv | grep web); console: $(tr -d '\r' <"$con" | tail -3)"
fi
kill "$conpid" 2>/dev/null; wait "$conpid" 2>/dev/null
exec 7>&-

# Destroy removes the domain and its runtime directory.
lodge create web && wait_until 30 booted web
lodge destroy web
if [ -z "$(field web 1)" ] && [ ! -d "$RUN/web" ]; then
	pass "destroy removes it and its runtime dir"
else
	fail "destroy removes it" "$(ls "$RUN" 2>&1)"
fi

# A CLI killed mid-session leaves the domain running and findable.
lodge create web && wait_until 30 booted web
exec 7<>"$TMPDIR_TEST/shutdown-console.in"     # input held open: it stays attached
"$LODGE" --root "$ROOT" console web <&7 >"$TMPDIR_TEST/killed-console.out" 2>/dev/null &
clipid=$!
wait_for "$TMPDIR_TEST/killed-console.out" 'minios> ' 30
kill -9 "$clipid"; wait "$clipid" 2>/dev/null
exec 7>&-
sleep 0.5
out=$( (sleep 0.5; echo "echo after-kill-ok"; sleep 1) | lodge console web 2>&1 | tr -d '\r')
if [ "$(field web 5)" = running ] && grep -q '^after-kill-ok' <<<"$out"; then
	pass "a CLI killed with SIGKILL mid-session leaves the domain running, its console free"
else
	fail "a killed CLI leaves the domain running" "$(lodge list -o tsv); $(tail -2 <<<"$out")"
fi

# lodge-hyp killed: list reports the stale entry and cleans it.
pid=$(lodge list -o tsv | awk -F'\t' '$1 == "web" { print $9 }')
kill -9 "$pid"
sleep 0.3
err=$(lodge list 2>&1 >/dev/null)
if grep -q 'domain web is gone' <<<"$err" && [ ! -d "$RUN/web" ] && [ -z "$(field web 1)" ]; then
	pass "a killed lodge-hyp leaves a stale entry that list reports and cleans"
else
	fail "stale entry reported and cleaned" "$err; $(ls "$RUN")"
fi

# Refusals before any process starts, leaving nothing behind.
lodge create web && wait_until 30 booted web
msg=$(lodge create web 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'domain web is already running' <<<"$msg"; then
	pass "create with a name that is taken fails"
else
	fail "create with a name that is taken" "$rc: $msg"
fi
lodge destroy web
# In range for a config (up to 4 TiB) but above what this host has.
big=$(awk '/^MemTotal:/ { m = int($2 / 1024) * 2 + 1024; print (m > 4194304 ? 4194304 : m) }' /proc/meminfo)
sed "s/^memory = 64/memory = $big/; s/^name = \"web\"/name = \"big\"/" \
	"$ROOT/etc/lodge/domains/web.cfg" >"$ROOT/etc/lodge/domains/big.cfg"
msg=$(lodge create big 2>&1); rc=$?
if [ $rc -ne 0 ] && tr -d '\r' <<<"$msg" |
   grep -Eqx "lodge: error: $ROOT/etc/lodge/domains/big.cfg:[0-9]+: memory: $big MiB is more than this host has available \([0-9]+ MiB\)" &&
   [ ! -d "$RUN/big" ]; then
	pass "create with more memory than the host has available fails with FILE:LINE: memory:, nothing left"
else
	fail "create with too much memory" "$rc: $msg"
fi
# lodge check refuses it too, with the same line (once it passed it).
chk=$(lodge check big 2>&1); rc=$?
if [ $rc -eq 1 ] && [ "$(sed -E 's/\([0-9]+ MiB\)//' <<<"$chk")" = "$(tr -d '\r' <<<"$msg" | sed -E 's/^lodge: error: //; s/\([0-9]+ MiB\)//')" ]; then
	pass "lodge check refuses the same memory with the same FILE:LINE: memory: line"
else
	fail "lodge check on too much memory" "$rc: $chk"
fi
sed 's#^kernel = .*#kernel = "/nonexistent/kernel"#; s/^name = "web"/name = "nok"/' \
	"$ROOT/etc/lodge/domains/web.cfg" >"$ROOT/etc/lodge/domains/nok.cfg"
msg=$(lodge create nok 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'nok.cfg:[0-9]*: kernel' <<<"$msg" && [ ! -d "$RUN/nok" ]; then
	pass "create with a kernel that does not exist fails with file:line, nothing left"
else
	fail "create with a missing kernel" "$rc: $msg"
fi

# create -p: held before the guest's first instruction (xl create -p), so
# not one byte on its console until unpause.
if lodge create -p web >/dev/null && [ "$(field web 5)" = paused ] && ! console_shows web 'Lodge Mini-OS' &&
   [ -z "$(lodge console --log web 2>/dev/null)" ]; then
	if lodge unpause web && wait_until 30 booted web && [ "$(field web 5)" = running ]; then
		pass "create -p holds the guest before its first instruction (an empty console), unpause boots it"
	else
		fail "create -p then unpause" "state $(field web 5): $(lodge console --log web 2>&1 | tail -2)"
	fi
else
	fail "create -p" "state $(field web 5), console: $(lodge console --log web 2>&1 | head -2)"
fi
lodge destroy web >/dev/null 2>&1
exit 0

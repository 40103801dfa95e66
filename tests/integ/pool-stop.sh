#!/bin/bash
# Stopping a pool's domains (issue 24, src/pool/README.md "Stopping"):
# two hosts on the run's etcd cluster.  `lodge shutdown` of a pool domain
# from any host records desired stopped in the pool first, then the
# owner's agent asks the guest to power off (its own handler's lines on
# its console) and lets it go; it stays stopped across the agents'
# reconcile passes (counted in their debug lines, not waited for by the
# clock), HA or not, and `lodge create` runs it again.  A guest that
# powers itself off follows its on_poweroff: destroy, stopped (HA too);
# restart, it runs on; an admin's shutdown stops that one too.  A guest
# that ignores the button is destroyed after shutdown_timeout.
# `lodge pool-forget` is refused while the domain runs, then drops its
# keys; `lodge create --local` on a pool host makes a plain domain the
# pool does not know (refused for a name the pool has), made and shut
# down with a warning when etcd does not answer.  An HA guest that
# crashes runs again on its host; a plain one is stopped.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-stop kvm root minios
pool_etcd_up
pool_test_prefix
TTL=3
pool_hosts_up --no-agents "a b" $TTL 2 1
# a guest that ignores the power button is destroyed after this on a
echo 'shutdown_timeout = 3' >>"$(pool_root a)/etc/lodge/lodge.conf"
# LODGE_DEBUG: each agent logs its reconcile passes ("reconciled: ...")
for h in a b; do LODGE_DEBUG=1 pool_agent_start "$h"; done
pool_wait_agents "a b"

cfg() {   # NAME HA [MORE LINE]: a Mini-OS config in host a's domains_dir
	printf 'name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\nha = %s\n%s' "$1" "$MINIOS" "$2" "${3:-}" \
		>"$(pool_root a)/etc/lodge/domains/$1.cfg"
}
desired() { pool_etcdctl get "$PREFIX/domains/$1/desired" --print-value-only; }
passes() { grep -c 'reconciled:' "$T/agent-$1.log"; }
# two_passes: both agents reconcile twice more (a key of no domain written
# under the prefix wakes them: an event, no clock).
two_passes() {
	local a0 b0
	a0=$(passes a) b0=$(passes b)
	pool_etcdctl put "$PREFIX/test-poke" "$RANDOM" >/dev/null
	wait_until 20 eval '[ $(passes a) -gt $a0 ] && [ $(passes b) -gt $b0 ]' || return 1
	a0=$(passes a) b0=$(passes b)
	pool_etcdctl put "$PREFIX/test-poke" "$RANDOM" >/dev/null
	wait_until 20 eval '[ $(passes a) -gt $a0 ] && [ $(passes b) -gt $b0 ]'
}
prompt() {   # HOST NAME: its console log shows the Mini-OS shell's prompt
	pool_lh "$1" console --log "$2" 2>/dev/null | tail -c 200 | grep -q 'minios> '
}
# console_on HOST NAME FILE: NAME's console on HOST attached, its output
# in FILE, its input held open on fd 7 (CONPID its pid).
console_on() {
	rm -f "$T/con.in"; mkfifo "$T/con.in"
	exec 7<>"$T/con.in"
	timeout 60 "$LODGE" --root "$(pool_root "$1")" console "$2" <&7 >"$3" 2>/dev/null &
	CONPID=$!
}
console_off() { kill "$CONPID" 2>/dev/null; wait "$CONPID" 2>/dev/null; exec 7>&-; }
say() {   # HOST NAME LINE: LINE typed into NAME's shell on HOST
	(sleep 0.5; echo "$3"; sleep 1) | timeout 10 "$LODGE" --root "$(pool_root "$1")" console "$2" >/dev/null 2>&1
}

pool_create_on a s1:0 s2:1
[ "$(pool_runs_on s1)$(pool_runs_on s2)" = aa ] || { fail "pool-stop: setup" "$(pool_lh a list --pool | tr '\n' '|')"; exit 1; }

# ---- lodge shutdown of a non-HA pool domain, asked on b (it runs on a)
con=$T/s1-console.out
console_on a s1 "$con"
wait_for "$con" 'minios> ' 30
out=$(pool_lh b shutdown s1 2>&1); rc=$?
first=$(desired s1)
if [ $rc -eq 0 ] && [ -z "$out" ] && [ "$first" = stopped ] &&
   wait_for "$con" 'minios: power button pressed' 20 && wait_for "$con" 'minios: powering off' 10 &&
   wait_until 20 eval '[ "$(pool_dom_field s1 3)" = stopped ] && [ -z "$(pool_runs_on s1)" ]'; then
	pass "pool-stop: lodge shutdown on b: desired stopped in the pool first, then s1 powered itself off on a (its console: power button pressed, powering off)"
else
	fail "pool-stop: shutdown s1" "rc $rc: $out; desired '$first'; s1 $(pool_dom_field s1 3) on '$(pool_runs_on s1)'; console: $(tr -d '\r' <"$con" | tail -3 | tr '\n' '|')"
fi
console_off

# ---- the HA one, asked on a with --wait: stopped, restarted nowhere
out=$(pool_lh a shutdown -w -t 30 s2 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -z "$(pool_runs_on s2)" ] && [ "$(pool_dom_field s2 3)" = stopped ] &&
   [ -n "$(pool_event_ms a s2 shutdown-asked)" ] && [ -n "$(pool_event_ms a s2 powered-off)" ]; then
	pass "pool-stop: lodge shutdown --wait of an HA domain: it powered itself off (a's event log: shutdown-asked, powered-off)"
else
	fail "pool-stop: shutdown s2 (HA)" "rc $rc: $out; s2 $(pool_dom_field s2 3) on '$(pool_runs_on s2)'"
fi

if two_passes && [ -z "$(pool_runs_on s1)$(pool_runs_on s2)" ] && [ "$(pool_hyps s1)$(pool_hyps s2)" = 00 ] &&
   [ "$(pool_dom_field s1 3)$(pool_dom_field s2 3)" = stoppedstopped ] &&
   ! pool_etcdctl get --prefix "$PREFIX/domains/s" --keys-only | grep -qE '/(owner|state)$'; then
	pass "pool-stop: both stay stopped across two reconcile passes of each agent (no owner, listed stopped, no lodge-hyp)"
else
	fail "pool-stop: stays stopped" "s1 $(pool_dom_field s1 3) on '$(pool_runs_on s1)', s2 $(pool_dom_field s2 3) on '$(pool_runs_on s2)'; $(tail -n 5 "$T/agent-a.log" | tr '\n' '|')"
fi

out=$(pool_lh a shutdown s1 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q 's1 is stopped already' &&
	pass "pool-stop: shutdown of a stopped pool domain: refused in one line ($out)" ||
	fail "pool-stop: shutdown stopped" "rc $rc: $out"

# ---- started again: placed as usual
out=$(pool_lh a create s2 2>&1) && w=$(pool_runs_on s2) && [ -n "$w" ] && [ "$(pool_dom_field s2 3)" = running ] &&
	pass "pool-stop: lodge create runs the stopped HA domain again ($out)" || fail "pool-stop: create again" "$out"

# ---- pool-forget: refused while it runs, then drops every key
out=$(pool_lh a pool-forget s2 2>&1); rc=$?
if [ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "s2 runs on host $w" &&
   [ -n "$(pool_etcdctl get "$PREFIX/domains/s2/config" --keys-only)" ] && [ "$(pool_runs_on s2)" = "$w" ]; then
	pass "pool-stop: pool-forget of a running domain refused in one line, nothing changed ($out)"
else
	fail "pool-stop: pool-forget refused" "rc $rc: $out"
fi
out=$(pool_lh a pool-forget nosuch 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'no domain nosuch in the pool' &&
	pass "pool-stop: pool-forget of a name the pool lacks: refused ($out)" || fail "pool-stop: pool-forget nosuch" "rc $rc: $out"
pool_lh a destroy s2 >/dev/null 2>&1
out=$(pool_lh b pool-forget s2 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -z "$(pool_etcdctl get --prefix "$PREFIX/domains/s2/" --keys-only)" ] &&
   [ -z "$(pool_dom_field s2 1)" ] && [ -n "$(pool_dom_field s1 1)" ]; then
	pass "pool-stop: destroyed, then pool-forget drops its keys (list --pool no longer shows it; s1 kept)"
else
	fail "pool-stop: pool-forget" "rc $rc: $out; keys: $(pool_etcdctl get --prefix "$PREFIX/domains/s2/" --keys-only | tr '\n' ' ')"
fi

# ---- a guest that powers itself off follows its on_poweroff, HA or not
cfg s3 1
cfg s4 1 'on_poweroff = "restart"
'
pool_lh a create s3 --on a >/dev/null || fail "pool-stop: create s3" "refused"
pool_lh a create s4 --on a >/dev/null || fail "pool-stop: create s4" "refused"
wait_until 30 prompt a s3; wait_until 30 prompt a s4
pid4=$(pool_lh a list -o tsv -H | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "pid") c = i } $1 == "s4" { print $c }')
say a s3 poweroff
say a s4 poweroff
if wait_until 20 eval '[ "$(pool_dom_field s3 3)" = stopped ]' && two_passes && [ -z "$(pool_runs_on s3)" ] &&
   [ "$(desired s3)" = stopped ]; then
	pass "pool-stop: an HA guest that powers itself off (on_poweroff destroy) is stopped, restarted nowhere"
else
	fail "pool-stop: s3 poweroff" "s3 $(pool_dom_field s3 3) on '$(pool_runs_on s3)'"
fi
if wait_until 20 eval '[ -n "$(pool_event_ms a s4 powered-off)" ]' && [ "$(pool_runs_on s4)" = a ] &&
   [ "$(pool_dom_field s4 3)" = running ] && [ "$(desired s4)" = running ]; then
	pass "pool-stop: a guest with on_poweroff restart that powers itself off runs on, on a"
else
	fail "pool-stop: s4 poweroff" "s4 $(pool_dom_field s4 3) on '$(pool_runs_on s4)' (pid was $pid4)"
fi
wait_until 30 prompt a s4
out=$(pool_lh b shutdown -w -t 30 s4 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$(pool_runs_on s4)" ] && [ "$(pool_dom_field s4 3)" = stopped ] &&
   grep -q 's4: powered off and started again (its on_poweroff); stopped as asked: destroyed' "$T/agent-a.log" &&
	pass "pool-stop: an admin's shutdown stops it even so: its new boot (on_poweroff restart) destroyed at once" ||
	fail "pool-stop: shutdown s4" "rc $rc: $out; s4 $(pool_dom_field s4 3) on '$(pool_runs_on s4)'; $(grep s4 "$T/agent-a.log" | tail -3 | tr '\n' '|')"

# ---- a guest deaf to the button: destroyed after a's shutdown_timeout (3 s)
cfg s5 0 "cmdline = 'pwrbtn=ignore'
"
pool_lh a create s5 --on a >/dev/null || fail "pool-stop: create s5" "refused"
wait_until 30 prompt a s5
out=$(pool_lh a shutdown -w -t 30 s5 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -z "$(pool_runs_on s5)" ] && [ "$(pool_dom_field s5 3)" = stopped ] &&
   grep -q 's5: still running 3 s after it was asked to power off: destroyed' "$T/agent-a.log"; then
	pass "pool-stop: a guest that ignores the button is destroyed after shutdown_timeout (3 s)"
else
	fail "pool-stop: s5 deaf" "rc $rc: $out; s5 $(pool_dom_field s5 3) on '$(pool_runs_on s5)'"
fi

# ---- lodge create --local on a pool host: the pool knows nothing of it
cfg loc 0
out=$(pool_lh a create --local loc 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$(pool_runs_on loc)" = a ] && [ -z "$(pool_etcdctl get --prefix "$PREFIX/domains/loc/" --keys-only)" ] &&
   [ -z "$(pool_dom_field loc 1)" ] && two_passes && [ "$(pool_runs_on loc)" = a ]; then
	pass "pool-stop: create --local: runs on a, not in etcd nor in list --pool, left alone by the agents' passes"
else
	fail "pool-stop: create --local" "rc $rc: $out; loc runs on '$(pool_runs_on loc)'"
fi
out=$(pool_lh a create --local s1 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q 'the pool has a domain s1' && [ -z "$(pool_runs_on s1)" ] &&
	pass "pool-stop: create --local of a name the pool has: refused in one line ($out)" ||
	fail "pool-stop: create --local s1" "rc $rc: $out"
out=$(pool_lh a create --local --on b loc 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q -- '--local and --on' &&
	pass "pool-stop: create --local --on refused ($out)" || fail "pool-stop: --local --on" "rc $rc: $out"
# lodge rename on a pool host: a pool domain keeps its name, and a local
# one takes no name the pool has (its agents would take it for a copy)
out2=$(pool_lh a rename loc s1 2>&1); rc2=$?
out3=$(pool_lh a rename s1 s1b 2>&1); rc3=$?
if [ $rc2 -ne 0 ] && echo "$out2" | grep -q 'the pool has a domain s1' && [ "$(pool_runs_on loc)" = a ] &&
   [ $rc3 -ne 0 ] && echo "$out3" | grep -q 's1 is the pool.s domain: it keeps its name' &&
   [ -n "$(pool_dom_field s1 1)" ] && [ -e "$(pool_root a)/etc/lodge/domains/s1.cfg" ]; then
	pass "pool-stop: rename of the local loc onto the pool's s1, and of the pool's s1: refused in one line each ($out2; $out3)"
else
	fail "pool-stop: rename on a pool host" "rc $rc2: $out2; rc $rc3: $out3; loc on '$(pool_runs_on loc)'"
fi
out=$(pool_lh a shutdown -w -t 30 loc 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$(pool_runs_on loc)" ] && [ -z "$(pool_dom_field loc 1)" ] &&
	pass "pool-stop: shutdown of the local domain: shut down on a, as on a host in no pool" ||
	fail "pool-stop: shutdown loc" "rc $rc: $out"

# ---- the pool out of reach (a's lodge.conf names a port nobody serves;
# its agent keeps its own): a local domain is made and shut down all the same
conf=$(pool_root a)/etc/lodge/lodge.conf
cp "$conf" "$T/lodge.conf.a"
sed -i "s|^pool_etcd *=.*|pool_etcd = \"http://127.0.0.1:$(pool_free_port)\"|" "$conf"
out=$(pool_lh a create --local loc 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q 'warning: cannot ask the pool whether it has a domain loc' && [ "$(pool_runs_on loc)" = a ]; then
	pass "pool-stop: create --local with the pool out of reach: made, with a warning"
else
	fail "pool-stop: create --local, no pool" "rc $rc: $out"
fi
out=$(pool_lh a shutdown -w -t 30 loc 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q 'warning: the pool does not answer.*loc is stopped here only' && [ -z "$(pool_runs_on loc)" ]; then
	pass "pool-stop: shutdown of a local domain with the pool out of reach: shut down here, with a warning"
else
	fail "pool-stop: shutdown loc, no pool" "rc $rc: $out; loc runs on '$(pool_runs_on loc)'"
fi
cp "$T/lodge.conf.a" "$conf"

# ---- an HA guest that crashes (on_crash destroy) runs again; a plain one is stopped
cfg s6 1
cfg s7 0
pool_lh a create s6 --on a >/dev/null || fail "pool-stop: create s6" "refused"
pool_lh a create s7 --on a >/dev/null || fail "pool-stop: create s7" "refused"
wait_until 30 prompt a s6; wait_until 30 prompt a s7
say a s6 crash
say a s7 crash
crashes() { awk -v d="$1" '$2 == d && $3 == "crashed"' "$(pool_root a)/var/log/lodge/lodge.log" | wc -l; }
boots() { awk -v d="$1" '$2 == d && $3 == "created"' "$(pool_root a)/var/log/lodge/lodge.log" | wc -l; }
if wait_until 20 eval '[ $(crashes s6) -ge 1 ] && [ $(boots s6) -ge 2 ] && [ "$(pool_dom_field s6 3)" = running ]' &&
   [ "$(pool_runs_on s6)" = a ] && [ "$(pool_hyps s6)" = 1 ]; then
	pass "pool-stop: an HA guest that crashed runs again on a, still its owner (event log: crashed, created again)"
else
	fail "pool-stop: s6 crash" "s6 $(pool_dom_field s6 3) on '$(pool_runs_on s6)', $(crashes s6) crashes, $(boots s6) boots; $(grep s6 "$T/agent-a.log" | tail -3 | tr '\n' '|')"
fi
if wait_until 20 eval '[ "$(pool_dom_field s7 3)" = stopped ]' && [ "$(crashes s7)" -ge 1 ] && [ -z "$(pool_runs_on s7)" ]; then
	pass "pool-stop: a non-HA guest that crashed is stopped"
else
	fail "pool-stop: s7 crash" "s7 $(pool_dom_field s7 3) on '$(pool_runs_on s7)'"
fi

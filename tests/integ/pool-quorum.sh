#!/bin/bash
# The pool and etcd's quorum (issue 24): three hosts (own --root each) on a
# three-member cluster of the test's own.  One member killed: the pool
# goes on (a create is placed, no host fences).  A second one killed, no
# quorum: a create is refused in one line, every host fences its HA
# domains by the fence deadline (one line of c's says how), the non-HA
# ones run on, and list --pool and create say that etcd has lost its
# quorum, since when, and what that means, with no stale rows.  The members
# back: the pool recovers (every host up, the HA domain runs again, once).
. "$(dirname "$0")/../lib.sh"
integ_begin pool-quorum kvm root minios
pool_etcd_up own
pool_test_prefix
TTL=3
pool_hosts_up "a b c" $TTL 2 1

pool_minios_cfg hac 1; pool_minios_cfg plainb 0; pool_minios_cfg more 0; pool_minios_cfg late 0
pool_lh a create hac --on c >/dev/null && pool_lh a create plainb --on b >/dev/null ||
	{ fail pool-quorum "cannot create the domains"; exit 1; }

# ---- one member of three gone: the pool goes on
pool_member_kill 1
out=$(pool_lh a create more 2>&1) && [ -n "$(pool_runs_on more)" ] &&
	pass "pool-quorum: one etcd member killed, a create is still placed ($(pool_runs_on more))" ||
	fail "pool-quorum: one member" "$out"
sleep $((2 * TTL))
! grep -q 'fence:' "$T"/agent-*.log && pool_all_up && [ "$(pool_runs_on hac)" = c ] &&
	pass "pool-quorum: ... and for two lease TTLs no host fences, all stay up" ||
	fail "pool-quorum: one member, fencing" "$(grep -h 'fence:\|cannot' "$T"/agent-*.log | tr '\n' '|')"

# ---- no quorum
pool_member_kill 2
t0=$(now_us)
out=$(LODGE_TIMEOUT=60 pool_lh a create late 2>&1); rc=$?
secs=$((($(now_us) - t0) / 1000000))
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && [ -z "$(pool_runs_on late)" ] && echo "$out" | grep -q 'has lost its quorum' &&
	pass "pool-quorum: no quorum, a create is refused in one line after ${secs} s ($out)" ||
	fail "pool-quorum: no quorum create" "rc $rc: $out"
fence_end='fence: hac \(destroyed\|ended by its own watchdog\|had already ended by its watchdog\)'
wait_until $((3 * TTL)) eval '[ -z "$(pool_runs_on hac)" ]' && wait_until 5 grep -q "$fence_end" "$T/agent-c.log" &&
	pass "pool-quorum: no quorum, c fenced its HA domain" ||
	fail "pool-quorum: no quorum fence" "hac runs on '$(pool_runs_on hac)': $(grep -h fence "$T"/agent-c.log | tr '\n' '|')"
# one line says how hac's fence ended (destroyed, or its watchdog first), and
# nothing says 'no domain named' or 'no time left'
[ "$(grep -c "$fence_end" "$T/agent-c.log")" = 1 ] && ! grep -q 'fence: no domain named\|no time left' "$T"/agent-*.log &&
	pass "pool-quorum: c's log says in one line how hac was fenced: $(grep -o "$fence_end.*" "$T/agent-c.log" | cut -c1-90)..." ||
	fail "pool-quorum: fence lines" "$(grep -h 'fence:\|no time left' "$T"/agent-*.log | tr '\n' '|')"
# lodge list --pool says what is wrong, since when, what it means; no stale rows
out=$(LODGE_TIMEOUT=60 pool_lh c list --pool 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q 'has lost its quorum' &&
	echo "$out" | grep -q 'since [0-9][0-9]:[0-9][0-9]:[0-9][0-9]' && echo "$out" | grep -q 'fenced' && ! echo "$out" | grep -qw running &&
	pass "pool-quorum: no quorum, list --pool says so in one line, no stale rows ($out)" ||
	fail "pool-quorum: list --pool without quorum" "rc $rc: $(echo "$out" | tr '\n' '|')"
[ "$(pool_runs_on plainb)" = b ] && [ "$(pool_runs_on more)" != "" ] &&
	pass "pool-quorum: no quorum, the non-HA domains run on" || fail "pool-quorum: non-HA" "plainb on '$(pool_runs_on plainb)'"

# ---- quorum back
pool_member_start 1
pool_member_start 2
wait_until 60 pool_etcd_healthy || fail "pool-quorum: etcd" "the members did not come back"
recovered() { pool_all_up && [ -n "$(pool_runs_on hac)" ] && [ "$(pool_dom_field hac 3)" = running ]; }
wait_until $((10 * TTL)) recovered && [ "$(pool_hyps hac)" = 1 ] && [ "$(pool_runs_on plainb)" = b ] &&
	pass "pool-quorum: quorum back, the pool recovers: all hosts up, the HA domain runs again on $(pool_runs_on hac), once" ||
	fail "pool-quorum: recovery" "$(pool_lh a pool-list 2>&1 | tr '\n' '|') hac on '$(pool_runs_on hac)' ($(pool_hyps hac))"

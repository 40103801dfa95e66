#!/bin/bash
# An interrupted migration of an HA domain (issue 34, defect 2;
# src/pool/README.md "Migration's hand-over"): hosts a and b in network
# namespaces of their own take migrations on their veths.  a's agent dies
# (SIGKILL, at a named point through LODGE_POOL_TEST_DIE_AT: no clock)
# after the guest has moved to b: killed by its migration's child the
# moment the stream is handed over (the agent never learns the guest
# moved: b's claim once a's lease ends is the only way on), once before
# it wrote the hand-over and once just after.  Each way the guest runs on b alone, never booted
# anew (b's event log: migrated-in, no created; one lodge-hyp), b owns it
# (its agent fed the copy's watchdog until it could claim it once a's
# lease ended), and `lodge migrate` exits 0 saying it migrated only then.
# Then pool-leave of b, which runs both, migrates them to a and leaves.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-migrate-kill kvm root minios
pool_etcd_up
pool_test_prefix
TTL=3 FENCE=2 PORT=8003

owner() { pool_etcdctl get --print-value-only "$PREFIX/domains/$1/owner"; }
migrate_ok() { pool_etcdctl get --print-value-only "$PREFIX/hosts/$1" | grep -q '"migrate":"[^"]'; }
both_up() { pool_all_up && migrate_ok a && migrate_ok b; }
head -c 32 /dev/urandom | base64 >"$T/secret" && chmod 600 "$T/secret"
pool_hosts_up --ns --no-agents "a b" $TTL $FENCE 1
n=0
for h in a b; do
	n=$((n + 1))
	printf 'migration_secret_file = "%s"\nmigration_listen = "%s:%s"\n' \
		"$T/secret" "$POOL_NET.$((10 + n))" $PORT >>"$(pool_root "$h")/etc/lodge/lodge.conf"
done
pool_agent_start b
evlog() { awk -v d="$2" -v e="$3" '$2 == d && $3 == e' "$(pool_root "$1")/var/log/lodge/lodge.log" 2>/dev/null | wc -l; }

# one POINT NAME: a's agent started to die at POINT, NAME created on a
# and migrated to b from b; the command's status and line, and where and
# how NAME runs once the dust settles.
one() {
	local point=$1 name=$2 out rc
	LODGE_POOL_TEST_DIE_AT=$point pool_agent_start a
	pool_wait_agents "a b" both_up
	pool_create_on a "$name:1"
	out=$(LODGE_TIMEOUT=130 pool_lh b migrate "$name" b 2>&1); rc=$?
	grep -q "$name: LODGE_POOL_TEST_DIE_AT=$point: this agent dies here" "$T/agent-a.log" ||
		{ fail "pool-migrate-kill: $point" "a's agent did not die at $point: $(tail -n 4 "$T/agent-a.log" | tr '\n' '|')"; return; }
	{ wait "${POOL_AGENT[a]}"; } 2>/dev/null
	# the truth when it returned: b owns the copy that moved, not a new boot
	if [ $rc -eq 0 ] && echo "$out" | grep -Eq "^migrated $name from a to b in [0-9]+ ms$" && [ "$(owner "$name")" = b ] &&
		[ "$(evlog b "$name" migrated-in)" = 1 ] && [ "$(evlog b "$name" created)" = 0 ]; then
		pass "pool-migrate-kill: a's agent killed $point: lodge migrate exits 0 once b owns the copy that moved ($out)"
	else
		fail "pool-migrate-kill: $point: command" "rc $rc, said: $out; owner $(owner "$name"); b's event log: $(grep " $name " "$(pool_root b)/var/log/lodge/lodge.log" | cut -d' ' -f3,4 | tr '\n' '|')"
	fi
	# settled: a's lease has ended (a lost), b owns and runs the guest
	wait_until $((4 * TTL)) eval '[ "$(pool_host_state a b)" = lost ] && [ "$(pool_dom_field '"$name"' 3)" = running ]'
	if [ "$(pool_runs_on "$name")" = b ] && [ "$(pool_hyps "$name")" = 1 ] && [ "$(evlog b "$name" migrated-in)" = 1 ] &&
		[ "$(evlog b "$name" created)" = 0 ] && [ "$(evlog b "$name" destroyed)" = 0 ]; then
		pass "pool-migrate-kill: a's agent killed $point: $name runs on b alone, never booted anew (b's event log: migrated-in, no created, no watchdog end)"
	else
		fail "pool-migrate-kill: $point: guest" "runs on '$(pool_runs_on "$name")', $(pool_hyps "$name") lodge-hyps; b's log: $(grep " $name " "$(pool_root b)/var/log/lodge/lodge.log" | cut -d' ' -f3,4 | tr '\n' '|')"
	fi
}
one before-claim h3
if grep -q 'h3: migrated here, its source gone before the hand-over: b.s now' "$T/agent-b.log" &&
	! grep -q 'h3: handed over to b' "$T/agent-a.log"; then
	pass "pool-migrate-kill: before-claim: a never handed h3 over; b's agent claimed it once a's lease ended (its log says so)"
else
	fail "pool-migrate-kill: before-claim: claim" "b: $(grep 'h3:' "$T/agent-b.log" | tail -n 3 | tr '\n' '|'); a: $(grep 'h3:' "$T/agent-a.log" | tail -n 3 | tr '\n' '|')"
fi
one before-handover h1
one after-handover h2

# ---- pool-leave of b, which runs all three: it migrates them to a, then leaves
LODGE_POOL_TEST_DIE_AT= pool_agent_start a
pool_wait_agents "a b" both_up
out=$(LODGE_TIMEOUT=300 pool_lh b pool-leave 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -qx 'migrated h1 to a' && echo "$out" | grep -qx 'migrated h2 to a' &&
	echo "$out" | grep -qx 'migrated h3 to a' && echo "$out" | grep -q 'host b left the pool' &&
	[ "$(pool_runs_on h1)$(pool_runs_on h2)$(pool_runs_on h3)" = aaa ] &&
	[ "$(evlog a h1 migrated-in)$(evlog a h2 migrated-in)$(evlog a h3 migrated-in)" = 111 ] && ! pool_lh a pool-list -o tsv -H | grep -q "^b	"; then
	pass "pool-leave of b with h1, h2 and h3 running: all migrated to a (a's event log: migrated-in), then b left ($(echo "$out" | tr '\n' ';'))"
else
	fail "pool-migrate-kill: pool-leave" "rc $rc, said: $(echo "$out" | tr '\n' '|'); h1 on '$(pool_runs_on h1)', h2 on '$(pool_runs_on h2)', h3 on '$(pool_runs_on h3)'"
fi

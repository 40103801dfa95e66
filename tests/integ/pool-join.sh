#!/bin/bash
# Joining and leaving a pool (issue 24, src/pool/README.md): three Lodge
# "hosts" (their own --root) join a pool on the test run's etcd cluster,
# their agents register under leases, pool-list shows them from any of
# them; a killed agent's host is lost within its lease; a new agent waits
# for the old lease before it speaks for the host; pool-leave is refused
# while the host owns a pool domain it cannot migrate away (one that is
# no domain at all, here: pool-migrate-kill.sh has the migrating leave)
# and ends its agent otherwise.
# Refused with one line and nothing changed: joining an unreachable
# etcd, a pool of another protocol, a name that is up already; an agent
# whose timings break the fencing rule.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-join root
pool_etcd_up
pool_test_prefix
TTL=3

conf() { cat "$(pool_root "$1")/etc/lodge/lodge.conf" 2>/dev/null; }

# ---- refusals: one line, no lodge.conf written
dead=$(pool_free_port)
out=$(pool_lh a pool-join --etcd "http://127.0.0.1:$dead" --host a --prefix "$PREFIX" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "127.0.0.1:$dead" && [ -z "$(conf a)" ]; then
	pass "pool-join: an unreachable etcd is refused in one line naming it, lodge.conf untouched"
else
	fail "pool-join: unreachable etcd" "rc $rc, said: $out; lodge.conf: $(conf a)"
fi

pool_etcdctl put "$PREFIX-other/version" 99 >/dev/null
out=$(pool_lh a pool-join --etcd "$POOL_ETCD_URLS" --host a --prefix "$PREFIX-other" 2>&1); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q 'protocol 99' && [ -z "$(conf a)" ] &&
   [ -z "$(pool_etcdctl get --prefix "$PREFIX-other/members/" --keys-only)" ]; then
	pass "pool-join: a pool of another protocol version is refused, nothing written"
else
	fail "pool-join: other protocol" "rc $rc, said: $out"
fi
pool_etcdctl del --prefix "$PREFIX-other/" >/dev/null

out=$(pool_lh a pool-join --etcd "ftp://x" 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'ftp://x' && [ -z "$(conf a)" ] &&
	pass "pool-join: a URL that is not etcd's http://HOST:PORT is refused" ||
	fail "pool-join: bad URL" "rc $rc, said: $out"

# ---- three hosts join; the pool's record in their lodge.conf
ok=1
for h in a b c; do
	mkdir -p "$(pool_root "$h")"
	pool_lh "$h" pool-join --etcd "$POOL_ETCD_URLS" --host "$h" --prefix "$PREFIX" >/dev/null || ok=0
	pool_host_timing "$h" $TTL 2 1
	conf "$h" | grep -q "^pool_host = \"$h\"" || ok=0
done
[ $ok = 1 ] && [ "$(pool_etcdctl get --prefix "$PREFIX/members/" --keys-only | grep -c .)" = 3 ] &&
	pass "pool-join: three hosts joined, each lodge.conf names its pool and host" ||
	fail "pool-join: three hosts" "members: $(pool_etcdctl get --prefix "$PREFIX/members/" --keys-only | tr '\n' ' ')"

# The fencing rule, checked before the agent speaks to etcd.
cp "$(pool_root a)/etc/lodge/lodge.conf" "$T/a.conf"
sed -i 's/^pool_fence_deadline = .*/pool_fence_deadline = 3/' "$(pool_root a)/etc/lodge/lodge.conf"
out=$(pool_lh a pool-agent 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'pool_fence_deadline (3 s) must be at most pool_lease_ttl - 1' &&
	pass "pool-agent: a fence deadline the lease cannot cover is refused at start" ||
	fail "pool-agent: timing rule" "rc $rc, said: $out"
cp "$T/a.conf" "$(pool_root a)/etc/lodge/lodge.conf"

# all_up VIEWER: a, b and c up as VIEWER's pool-list shows them.  The
# agents run for as long as the test (not under lodge_at's timeout).
all_up() { [ "$(pool_host_state a "$1")$(pool_host_state b "$1")$(pool_host_state c "$1")" = upupup ]; }

for h in a b c; do pool_agent_start "$h"; done
if wait_until 20 all_up a && all_up b && all_up c; then
	pass "pool-agent: three agents up; pool-list from each host shows all three up"
else
	fail "pool-agent: three up" "$(pool_lh a pool-list 2>&1 | tr '\n' '|') logs: $(cat "$T"/agent-*.log | tr '\n' '|')"
fi
json=$(pool_lh b pool-list -o json)
echo "$json" | python3 -c 'import json,sys; h=json.load(sys.stdin); assert len(h)==3 and all(x["cpus"]>0 and x["memory_mib"]>0 for x in h)' 2>/dev/null &&
	pass "pool-list -o json: each host with its CPUs and memory" || fail "pool-list json" "$json"

# ---- a joined name that is up cannot be joined again
out=$(lodge_at "$T/intruder" "" pool-join --etcd "$POOL_ETCD_URLS" --host b --prefix "$PREFIX" 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'host b is up in the pool' && [ ! -e "$T/intruder/etc/lodge/lodge.conf" ] &&
	pass "pool-join: a host name that is up in the pool is refused" ||
	fail "pool-join: name taken" "rc $rc, said: $out"

# ---- kill -9 one agent: its host is lost once its lease ends
# Lost because its lease ended: since the kill its record in etcd did
# nothing but go (etcd deleting it with the lease; before that at most a
# renewal the agent had sent as it was killed), and a shows it lost.
pool_agent_kill c
t0=$(now_us)
rev=$(pool_rev)
if wait_until $((4 * TTL + 5)) eval '[ "$(pool_host_state c a)" = lost ]'; then
	ms=$((($(now_us) - t0) / 1000))
	states=$(pool_states_since "$rev" "$PREFIX/hosts/c")
	[[ $states =~ ^(up )*gone\ $ ]] &&
		pass "pool: a killed agent's host is lost once its lease has ended, its record gone with it ($ms ms, TTL ${TTL} s)" ||
		fail "pool: lost host" "seen lost after $ms ms, c's record said since the kill: '$states'"
else
	fail "pool: lost host" "c still $(pool_host_state c a)"
fi

# A new agent for c, started while the old lease may live on, comes up.
pool_agent_start c
wait_until $((2 * TTL + 5)) eval '[ "$(pool_host_state c a)" = up ]' &&
	pass "pool-agent: started again, the host is up again" ||
	fail "pool-agent: again" "c is $(pool_host_state c a): $(tail -n 3 "$T/agent-c.log" | tr '\n' '|')"

# ---- pool-leave: refused while the host owns a pool domain
pool_etcdctl put "$PREFIX/domains/web/owner" b >/dev/null
rev=$(pool_rev)
out=$(pool_lh b pool-leave 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'web could not be migrated away' && conf b | grep -q '^pool_etcd' &&
	pool_etcdctl get "$PREFIX/members/b" --keys-only | grep -q . && [ "$(pool_host_state b)" = up ] &&
	pass "pool-leave: refused while the host owns a pool domain, nothing changed (b up again)" ||
	fail "pool-leave: refused" "rc $rc, said: $out; b is $(pool_host_state b)"
states=$(pool_states_since "$rev" "$PREFIX/hosts/b")
[ "$states" = "leaving up " ] && pass "pool-leave refused: b's record said leaving (no placement there) while it looked, then up" ||
	fail "pool-leave refused: states" "b's record said: '$states'"
pool_etcdctl del "$PREFIX/domains/web/owner" >/dev/null

rev=$(pool_rev)
out=$(pool_lh b pool-leave 2>&1); rc=$?
agent_gone() { ! kill -0 "${POOL_AGENT[b]}" 2>/dev/null; }
if [ $rc -eq 0 ] && wait_until 10 agent_gone && ! conf b | grep -Eq '^pool_(etcd|host|prefix) ' &&
   ! pool_lh a pool-list -o tsv -H | grep -q "^b	" && grep -q 'has left the pool' "$T/agent-b.log"; then
	wait "${POOL_AGENT[b]}"
	pass "pool-leave: the host leaves: its agent ends at once, lodge.conf forgets the pool, pool-list no longer shows it"
	states=$(pool_states_since "$rev" "$PREFIX/hosts/b")
	[ "$states" = "leaving gone " ] && pass "pool-leave: b was shown leaving until its record went" ||
		fail "pool-leave: states" "b's record said: '$states'"
else
	fail "pool-leave" "rc $rc, said: $out; list: $(pool_lh a pool-list 2>&1 | tr '\n' '|')"
fi

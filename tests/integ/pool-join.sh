#!/bin/bash
# Joining and leaving a pool (issue 24, src/pool/README.md): three Lodge
# "hosts" (their own --root) join a pool on the test run's etcd cluster,
# their agents register under leases, pool-list shows them from any of
# them; a killed agent's host is lost within its lease; a new agent waits
# for the old lease before it speaks for the host; pool-leave is refused
# while the host owns a pool domain and ends its agent otherwise.
# Refused with one line and nothing changed: joining an unreachable
# etcd, a pool of another protocol, a name that is up already; an agent
# whose timings break the fencing rule.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-join root
pool_etcd_up
PREFIX=$(pool_prefix)
at_exit 'pool_etcdctl del --prefix "$PREFIX/" >/dev/null 2>&1'
TTL=3

host_root() { echo "$T/host-$1"; }
lh() { local h=$1; shift; lodge_at "$(host_root "$h")" "" "$@"; }
conf() { cat "$(host_root "$1")/etc/lodge/lodge.conf" 2>/dev/null; }

# ---- refusals: one line, no lodge.conf written
dead=$(pool_free_port)
out=$(lh a pool-join --etcd "http://127.0.0.1:$dead" --host a --prefix "$PREFIX" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "127.0.0.1:$dead" && [ -z "$(conf a)" ]; then
	pass "pool-join: an unreachable etcd is refused in one line naming it, lodge.conf untouched"
else
	fail "pool-join: unreachable etcd" "rc $rc, said: $out; lodge.conf: $(conf a)"
fi

pool_etcdctl put "$PREFIX-other/version" 99 >/dev/null
out=$(lh a pool-join --etcd "$POOL_ETCD_URLS" --host a --prefix "$PREFIX-other" 2>&1); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q 'protocol 99' && [ -z "$(conf a)" ] &&
   [ -z "$(pool_etcdctl get --prefix "$PREFIX-other/members/" --keys-only)" ]; then
	pass "pool-join: a pool of another protocol version is refused, nothing written"
else
	fail "pool-join: other protocol" "rc $rc, said: $out"
fi
pool_etcdctl del --prefix "$PREFIX-other/" >/dev/null

out=$(lh a pool-join --etcd "ftp://x" 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'ftp://x' && [ -z "$(conf a)" ] &&
	pass "pool-join: a URL that is not etcd's http://HOST:PORT is refused" ||
	fail "pool-join: bad URL" "rc $rc, said: $out"

# ---- three hosts join; the pool's record in their lodge.conf
ok=1
for h in a b c; do
	mkdir -p "$(host_root "$h")"
	lh "$h" pool-join --etcd "$POOL_ETCD_URLS" --host "$h" --prefix "$PREFIX" >/dev/null || ok=0
	printf 'pool_lease_ttl = %s\npool_fence_deadline = 2\npool_restart_delay = 1\n' $TTL >>"$(host_root "$h")/etc/lodge/lodge.conf"
	conf "$h" | grep -q "^pool_host = \"$h\"" || ok=0
done
[ $ok = 1 ] && [ "$(pool_etcdctl get --prefix "$PREFIX/members/" --keys-only | grep -c .)" = 3 ] &&
	pass "pool-join: three hosts joined, each lodge.conf names its pool and host" ||
	fail "pool-join: three hosts" "members: $(pool_etcdctl get --prefix "$PREFIX/members/" --keys-only | tr '\n' ' ')"

# The fencing rule, checked before the agent speaks to etcd.
cp "$(host_root a)/etc/lodge/lodge.conf" "$T/a.conf"
sed -i 's/^pool_fence_deadline = .*/pool_fence_deadline = 3/' "$(host_root a)/etc/lodge/lodge.conf"
out=$(lh a pool-agent 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'pool_fence_deadline (3 s) must be at most pool_lease_ttl - 1' &&
	pass "pool-agent: a fence deadline the lease cannot cover is refused at start" ||
	fail "pool-agent: timing rule" "rc $rc, said: $out"
cp "$T/a.conf" "$(host_root a)/etc/lodge/lodge.conf"

declare -A AGENT
# The agent runs for as long as the test (not under lodge_at's timeout).
agent_start() { "$LODGE" --root "$(host_root "$1")" pool-agent 2>>"$T/agent-$1.log" & AGENT[$1]=$!; }
agent_kill() {   # only the agent this test started ($!), never anything else
	case ${AGENT[$1]:-} in ''|*[!0-9]*) return 1 ;; esac
	{ kill -KILL "${AGENT[$1]}"; wait "${AGENT[$1]}"; } 2>/dev/null
}
host_state() {   # HOST (as seen from VIEWER): its state in pool-list
	lh "${2:-a}" pool-list -o tsv -H 2>/dev/null | awk -F'\t' -v h="$1" '$1 == h { print $2 }'
}
all_up() { [ "$(host_state a "$1")$(host_state b "$1")$(host_state c "$1")" = upupup ]; }

for h in a b c; do agent_start "$h"; done
if wait_until 20 all_up a && all_up b && all_up c; then
	pass "pool-agent: three agents up; pool-list from each host shows all three up"
else
	fail "pool-agent: three up" "$(lh a pool-list 2>&1 | tr '\n' '|') logs: $(cat "$T"/agent-*.log | tr '\n' '|')"
fi
json=$(lh b pool-list -o json)
echo "$json" | python3 -c 'import json,sys; h=json.load(sys.stdin); assert len(h)==3 and all(x["cpus"]>0 and x["memory_mib"]>0 for x in h)' 2>/dev/null &&
	pass "pool-list -o json: each host with its CPUs and memory" || fail "pool-list json" "$json"

# ---- a joined name that is up cannot be joined again
out=$(lodge_at "$T/intruder" "" pool-join --etcd "$POOL_ETCD_URLS" --host b --prefix "$PREFIX" 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'host b is up in the pool' && [ ! -e "$T/intruder/etc/lodge/lodge.conf" ] &&
	pass "pool-join: a host name that is up in the pool is refused" ||
	fail "pool-join: name taken" "rc $rc, said: $out"

# ---- kill -9 one agent: its host is lost once its lease ends
agent_kill c
t0=$(now_us)
if wait_until $((2 * TTL + 5)) eval '[ "$(host_state c a)" = lost ]'; then
	ms=$((($(now_us) - t0) / 1000))
	[ $ms -le $(((TTL + 2) * 1000)) ] &&
		pass "pool: a killed agent's host is lost after its lease ($ms ms, TTL ${TTL} s)" ||
		fail "pool: lost host" "seen lost after $ms ms, TTL ${TTL} s"
else
	fail "pool: lost host" "c still $(host_state c a)"
fi

# A new agent for c, started while the old lease may live on, comes up.
agent_start c
wait_until $((2 * TTL + 5)) eval '[ "$(host_state c a)" = up ]' &&
	pass "pool-agent: started again, the host is up again" ||
	fail "pool-agent: again" "c is $(host_state c a): $(tail -n 3 "$T/agent-c.log" | tr '\n' '|')"

# ---- pool-leave: refused while the host owns a pool domain
pool_etcdctl put "$PREFIX/domains/web/owner" b >/dev/null
rev=$(pool_rev)
out=$(lh b pool-leave 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'runs pool domains (web)' && conf b | grep -q '^pool_etcd' &&
	pool_etcdctl get "$PREFIX/members/b" --keys-only | grep -q . && [ "$(host_state b)" = up ] &&
	pass "pool-leave: refused while the host owns a pool domain, nothing changed (b up again)" ||
	fail "pool-leave: refused" "rc $rc, said: $out; b is $(host_state b)"
states=$(pool_states_since "$rev" "$PREFIX/hosts/b")
[ "$states" = "leaving up " ] && pass "pool-leave refused: b's record said leaving (no placement there) while it looked, then up" ||
	fail "pool-leave refused: states" "b's record said: '$states'"
pool_etcdctl del "$PREFIX/domains/web/owner" >/dev/null

rev=$(pool_rev)
out=$(lh b pool-leave 2>&1); rc=$?
agent_gone() { ! kill -0 "${AGENT[b]}" 2>/dev/null; }
if [ $rc -eq 0 ] && wait_until 10 agent_gone && ! conf b | grep -Eq '^pool_(etcd|host|prefix) ' &&
   ! lh a pool-list -o tsv -H | grep -q "^b	" && grep -q 'has left the pool' "$T/agent-b.log"; then
	wait "${AGENT[b]}"
	pass "pool-leave: the host leaves: its agent ends at once, lodge.conf forgets the pool, pool-list no longer shows it"
	states=$(pool_states_since "$rev" "$PREFIX/hosts/b")
	[ "$states" = "leaving gone " ] && pass "pool-leave: b was shown leaving until its record went" ||
		fail "pool-leave: states" "b's record said: '$states'"
else
	fail "pool-leave" "rc $rc, said: $out; list: $(lh a pool-list 2>&1 | tr '\n' '|')"
fi

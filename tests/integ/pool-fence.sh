#!/bin/bash
# Fencing (issue 24, src/pool/README.md "Fencing"): three Lodge hosts,
# each in a network namespace of its own with its --root and agent,
# reach the run's etcd cluster over veths.  Host c runs an HA and a
# non-HA Mini-OS domain.  c's veth goes down: c pauses, then destroys its
# HA domain before another host starts it (the two hosts' event logs
# compared), its non-HA domain runs on; the link back up: c rejoins, does
# not start what now runs elsewhere, and owns its non-HA domain again.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-fence kvm root minios
pool_etcd_up
PREFIX=$(pool_prefix)
at_exit 'pool_etcdctl del --prefix "$PREFIX/" >/dev/null 2>&1'
TTL=3 FENCE=2

host_root() { echo "$T/host-$1"; }
lh() { local h=$1; shift; lodge_at "$(host_root "$h")" "${POOL_NS[$h]}" "$@"; }
declare -A AGENT
agent_start() {
	ip netns exec "${POOL_NS[$1]}" "$LODGE" --root "$(host_root "$1")" pool-agent 2>>"$T/agent-$1.log" &
	AGENT[$1]=$!
}
host_state() { lh a pool-list -o tsv -H 2>/dev/null | awk -F'\t' -v h="$1" '$1 == h { print $2 }'; }
dom_field() { lh a list --pool -o tsv -H 2>/dev/null | awk -F'\t' -v d="$1" -v c="$2" '$1 == d { print $c }'; }
all_up() { [ "$(host_state a)$(host_state b)$(host_state c)" = upupup ]; }
runs_on() {
	local h r=""
	for h in a b c; do lh "$h" list -o tsv -H 2>/dev/null | cut -f1 | grep -qx "$1" && r+="$h"; done
	echo "$r"
}
# event_ms HOST DOMAIN EVENT: when HOST's event log has DOMAIN's first EVENT (ms since the epoch)
event_ms() {
	local line
	line=$(awk -v d="$2" -v e="$3" '$2 == d && $3 == e { print $1; exit }' "$(host_root "$1")/var/log/lodge/lodge.log" 2>/dev/null)
	[ -n "$line" ] && echo $(($(date -d "$line" +%s%N) / 1000000))
}

n=0
for h in a b c; do
	n=$((n + 1))
	pool_host_ns "$h" $n
	integ_root "$(host_root "$h")" "${POOL_NS[$h]}"
	mkdir -p "$(host_root "$h")/etc/lodge/domains"
	lh "$h" pool-join --etcd "$POOL_ETCD_NET_URLS" --host "$h" --prefix "$PREFIX" >/dev/null ||
		{ fail pool-fence "host $h cannot join over its veth"; exit 1; }
	printf 'pool_lease_ttl = %s\npool_fence_deadline = %s\npool_restart_delay = 1\n' $TTL $FENCE \
		>>"$(host_root "$h")/etc/lodge/lodge.conf"
	agent_start "$h"
done
wait_until 20 all_up || { fail pool-fence "agents not up: $(cat "$T"/agent-*.log | tr '\n' '|')"; exit 1; }
pass "pool-fence: three hosts in their own namespaces reach etcd over their veths, all up"

for d in hac plainc; do
	ha=1; [ $d = plainc ] && ha=0
	printf 'name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\nha = %s\n' "$d" "$MINIOS" $ha \
		>"$(host_root a)/etc/lodge/domains/$d.cfg"
	lh a create "$d" --on c >/dev/null || { fail pool-fence "create $d on c"; exit 1; }
done

# ---- c's link to etcd cut
rev=$(pool_rev)
ip link set "${POOL_VETH[c]}" down
# one look per try: where hac runs (a paused copy on c counts as c)
moved() { WHERE=$(runs_on hac); [ -n "$WHERE" ] && [ "$WHERE" != c ]; }
if wait_until $((3 * TTL)) moved; then
	fenced=$(event_ms c hac destroyed) started=$(event_ms "$WHERE" hac created)
	if [ -n "$fenced" ] && [ -n "$started" ] && [ "$fenced" -lt "$started" ]; then
		pass "pool-fence: cut off, c destroyed its HA domain $((started - fenced)) ms before $(runs_on hac) started it (event logs)"
	else
		fail "pool-fence: order" "c destroyed at '${fenced}', $(runs_on hac) created at '${started}'"
	fi
	grep -q 'fence: hac paused' "$T/agent-c.log" && pass "pool-fence: c paused its HA domain first, as soon as a renewal failed" ||
		fail "pool-fence: pause" "$(tail -n 8 "$T/agent-c.log" | tr "\n" "|")"
else
	fail "pool-fence: HA restart" "hac runs on '$(runs_on hac)'; c: $(tail -n 5 "$T/agent-c.log" | tr '\n' '|')"
fi
[ "$(runs_on plainc)" = c ] && [ "$(lh c list -o tsv -H | awk -F'\t' '$1 == "plainc" { print $5 }')" != p ] &&
	[ "$(dom_field plainc 3)" = lost ] &&
	pass "pool-fence: c's non-HA domain keeps running there, shown lost by the pool" ||
	fail "pool-fence: non-HA" "runs on '$(runs_on plainc)', pool says $(dom_field plainc 3)"

# ---- the link back: c rejoins, restarts nothing that runs elsewhere, owns plainc again
where=$(runs_on hac)
ip link set "${POOL_VETH[c]}" up
wait_until $((3 * TTL)) eval '[ "$(host_state c)" = up ] && [ "$(dom_field plainc 3)" = running ]' &&
	[ "$(dom_field plainc 2)" = c ] &&
	pass "pool-fence: the link back, c is up again and owns its non-HA domain again" ||
	fail "pool-fence: rejoin" "c is $(host_state c), plainc $(dom_field plainc 3) on $(dom_field plainc 2)"
# fenced, from its return until it had reconciled; up after
states=$(pool_states_since "$rev" "$PREFIX/hosts/c")
case $states in
*"fenced up ") pass "pool-fence: c's record said fenced when it came back, up once it had reconciled ($states)" ;;
*) fail "pool-fence: fenced state" "c's record said: '$states'" ;;
esac
sleep "$TTL"   # a few of c's passes
[ "$(runs_on hac)" = "$where" ] && pass "pool-fence: c did not start its old HA domain again (it runs on $where alone)" ||
	fail "pool-fence: twice" "hac runs on $(runs_on hac)"

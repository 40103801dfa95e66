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
pool_test_prefix
TTL=3 FENCE=2
pool_hosts_up --ns "a b c" $TTL $FENCE 1
pass "pool-fence: three hosts in their own namespaces reach etcd over their veths, all up"

pool_create_on c hac:1 plainc:0

# ---- c's link to etcd cut
rev=$(pool_rev)
ip link set "${POOL_VETH[c]}" down
# one look per try: where hac runs (a paused copy on c counts as c)
moved() { WHERE=$(pool_runs_on hac); [ -n "$WHERE" ] && [ "$WHERE" != c ]; }
if wait_until $((3 * TTL)) moved; then
	fenced=$(pool_event_ms c hac destroyed) started=$(pool_event_ms "$WHERE" hac created)
	if [ -n "$fenced" ] && [ -n "$started" ] && [ "$fenced" -lt "$started" ]; then
		pass "pool-fence: cut off, c destroyed its HA domain $((started - fenced)) ms before $(pool_runs_on hac) started it (event logs)"
	else
		fail "pool-fence: order" "c destroyed at '${fenced}', $(pool_runs_on hac) created at '${started}'"
	fi
	grep -q 'fence: hac paused' "$T/agent-c.log" && pass "pool-fence: c paused its HA domain first, as soon as a renewal failed" ||
		fail "pool-fence: pause" "$(tail -n 8 "$T/agent-c.log" | tr "\n" "|")"
else
	fail "pool-fence: HA restart" "hac runs on '$(pool_runs_on hac)'; c: $(tail -n 5 "$T/agent-c.log" | tr '\n' '|')"
fi
[ "$(pool_runs_on plainc)" = c ] && [ "$(pool_lh c list -o tsv -H | awk -F'\t' '$1 == "plainc" { print $5 }')" != p ] &&
	[ "$(pool_dom_field plainc 3)" = lost ] &&
	pass "pool-fence: c's non-HA domain keeps running there, shown lost by the pool" ||
	fail "pool-fence: non-HA" "runs on '$(pool_runs_on plainc)', pool says $(pool_dom_field plainc 3)"

# ---- the link back: c rejoins, restarts nothing that runs elsewhere, owns plainc again
where=$(pool_runs_on hac)
ip link set "${POOL_VETH[c]}" up
wait_until $((3 * TTL)) eval '[ "$(pool_host_state c)" = up ] && [ "$(pool_dom_field plainc 3)" = running ]' &&
	[ "$(pool_dom_field plainc 2)" = c ] &&
	pass "pool-fence: the link back, c is up again and owns its non-HA domain again" ||
	fail "pool-fence: rejoin" "c is $(pool_host_state c), plainc $(pool_dom_field plainc 3) on $(pool_dom_field plainc 2)"
# fenced, from its return until it had reconciled; up after
states=$(pool_states_since "$rev" "$PREFIX/hosts/c")
case $states in
*"fenced up ") pass "pool-fence: c's record said fenced when it came back, up once it had reconciled ($states)" ;;
*) fail "pool-fence: fenced state" "c's record said: '$states'" ;;
esac
sleep "$TTL"   # a few of c's passes
[ "$(pool_runs_on hac)" = "$where" ] && pass "pool-fence: c did not start its old HA domain again (it runs on $where alone)" ||
	fail "pool-fence: twice" "hac runs on $(pool_runs_on hac)"

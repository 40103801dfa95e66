#!/bin/bash
# Live migration in a pool (issue 24, src/pool/README.md "Migration's
# hand-over"): hosts a and b, each in a network namespace with its own
# --root, agent and bridge lbr0, reach the run's etcd over veths and take
# migrations on their veth's address (lodge.conf's migration_listen and a
# shared secret); both lbr0 are joined to a third namespace, lan, whose
# bridge has an address to ping from.  An HA Mini-OS domain on a is moved
# to b by `lodge migrate NAME b` run on b: lan's ping keeps answering,
# ownership follows (one transaction), b's agent feeds its watchdog, no
# copy is left on a.  Refused with one line and nothing changed: a host
# that is not up, the host it runs on.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-migrate kvm root minios
pool_etcd_up
PREFIX=$(pool_prefix)
at_exit 'pool_etcdctl del --prefix "$PREFIX/" >/dev/null 2>&1'
TTL=3 FENCE=2 PORT=8002

host_root() { echo "$T/host-$1"; }
lh() { local h=$1; shift; lodge_at "$(host_root "$h")" "${POOL_NS[$h]}" "$@"; }
declare -A AGENT
agent_start() {
	ip netns exec "${POOL_NS[$1]}" "$LODGE" --root "$(host_root "$1")" pool-agent 2>>"$T/agent-$1.log" &
	AGENT[$1]=$!
}
host_state() { lh a pool-list -o tsv -H 2>/dev/null | awk -F'\t' -v h="$1" '$1 == h { print $2 }'; }
dom_field() { lh a list --pool -o tsv -H 2>/dev/null | awk -F'\t' -v d="$1" -v c="$2" '$1 == d { print $c }'; }
runs_on() {
	local h r=""
	for h in a b; do lh "$h" list -o tsv -H 2>/dev/null | cut -f1 | grep -qx "$1" && r+="$h"; done
	echo "$r"
}
owner() { pool_etcdctl get --print-value-only "$PREFIX/domains/$1/owner"; }
owner_lease() { pool_etcdctl get -w json "$PREFIX/domains/$1/owner" | python3 -c 'import json,sys; print(json.load(sys.stdin)["kvs"][0].get("lease", 0))' 2>/dev/null; }
host_lease() { pool_etcdctl get -w json "$PREFIX/hosts/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["kvs"][0].get("lease", 0))' 2>/dev/null; }
migrate_ok() { [ -n "$(pool_etcdctl get --print-value-only "$PREFIX/hosts/$1" | grep -o '"migrate":"[^"]')" ]; }

# ---- the lan, and two hosts with a bridge each on it
NSL=lp-lan-$$
netns_add "$NSL"
l() { ip netns exec "$NSL" "$@"; }
l ip link set lo up
l ip link add lan0 type bridge && l ip link set lan0 up && l ip addr add 10.79.0.1/24 dev lan0 ||
	{ fail pool-migrate "cannot make the lan bridge"; exit 1; }
head -c 32 /dev/urandom | base64 >"$T/secret" && chmod 600 "$T/secret"
n=0
for h in a b; do
	n=$((n + 1))
	pool_host_ns "$h" $n
	ns=${POOL_NS[$h]}
	ip -n "$ns" link add lbr0 type bridge && ip -n "$ns" link set lbr0 up &&
		ip link add "up$h$$" netns "$ns" type veth peer name "la$h" netns "$NSL" &&
		ip -n "$ns" link set "up$h$$" master lbr0 up && l ip link set "la$h" master lan0 up ||
		{ fail pool-migrate "cannot join host $h's bridge to the lan"; exit 1; }
	integ_root "$(host_root "$h")" "$ns"
	mkdir -p "$(host_root "$h")/etc/lodge/domains"
	lh "$h" pool-join --etcd "$POOL_ETCD_NET_URLS" --host "$h" --prefix "$PREFIX" >/dev/null ||
		{ fail pool-migrate "host $h cannot join over its veth"; exit 1; }
	printf 'pool_lease_ttl = %s\npool_fence_deadline = %s\npool_restart_delay = 1\n' $TTL $FENCE \
		>>"$(host_root "$h")/etc/lodge/lodge.conf"
	printf 'migration_secret_file = "%s"\nmigration_listen = "%s:%s"\nkernel_dirs = [ "%s" ]\nbridges = [ "lbr0" ]\n' \
		"$T/secret" "$POOL_NET.$((10 + n))" $PORT "$(dirname "$MINIOS")" >>"$(host_root "$h")/etc/lodge/lodge.conf"
	agent_start "$h"
done
both_up() { [ "$(host_state a)$(host_state b)" = upup ] && migrate_ok a && migrate_ok b; }
wait_until 20 both_up || { fail pool-migrate "agents not up: $(cat "$T"/agent-*.log | tr '\n' '|')"; exit 1; }
pass "pool-migrate: hosts a and b up, each taking migrations on its veth's address"

cat >"$(host_root a)/etc/lodge/domains/mig.cfg" <<CFG
name = "mig"
memory = 32
vcpus = 1
kernel = "$MINIOS"
cmdline = "ip=10.79.0.10/24"
vif = [ "bridge=lbr0,mac=02:4c:00:00:79:10" ]
ha = 1
CFG
lh a create mig --on a >/dev/null || { fail pool-migrate "create mig on a: $(tail -n 3 "$T/agent-a.log" | tr '\n' '|')"; exit 1; }

# ---- refusals first: nothing changes
out=$(lh b migrate mig nosuch 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q 'no host nosuch in the pool' &&
	[ "$(owner mig)" = a ] && [ -z "$(pool_etcdctl get --keys-only "$PREFIX/domains/mig/migrate")" ] &&
	pass "pool-migrate: to a host that is not in the pool: refused in one line, nothing changed ($out)" ||
	fail "pool-migrate: refused (no host)" "rc $rc, said: $out; owner $(owner mig)"
out=$(lh b migrate mig a 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'runs on a already' && [ "$(owner mig)" = a ] &&
	pass "pool-migrate: to the host it runs on: refused ($out)" ||
	fail "pool-migrate: refused (same host)" "rc $rc, said: $out"

# ---- the move, lan pinging the guest throughout
l ping -n -i 0.1 -w 90 10.79.0.10 >"$T/ping.out" 2>&1 &
ping_pid=$!
wait_for "$T/ping.out" 'icmp_seq=5 ' 20 || fail "pool-migrate: lan pings the guest on a" "$(tail -n 3 "$T/ping.out" | tr '\n' '|')"
out=$(LODGE_TIMEOUT=130 lh b migrate mig b 2>&1); rc=$?
seq_end=$(grep -o 'icmp_seq=[0-9]*' "$T/ping.out" | tail -1 | tr -dc '0-9')
if [ $rc -eq 0 ] && echo "$out" | grep -Eq '^migrated mig from a to b in [0-9]+ ms$'; then
	pass "pool-migrate: lodge migrate mig b, asked on b: $out"
else
	fail "pool-migrate: migrate" "rc $rc, said: $out; a: $(tail -n 4 "$T/agent-a.log" | tr '\n' '|') b: $(tail -n 4 "$T/agent-b.log" | tr '\n' '|')"
fi
[ "$(owner mig)" = b ] && [ -n "$(host_lease b)" ] && [ "$(owner_lease mig)" = "$(host_lease b)" ] &&
	[ "$(dom_field mig 2)" = b ] && [ -z "$(pool_etcdctl get --keys-only "$PREFIX/domains/mig/migrate")" ] &&
	pass "pool-migrate: ownership followed: owner b under b's lease, list --pool shows it on b, the request gone" ||
	fail "pool-migrate: ownership" "owner $(owner mig) lease $(owner_lease mig) (b's $(host_lease b)), list: $(dom_field mig 2)"
[ "$(runs_on mig)" = b ] && pass "pool-migrate: it runs on b alone" || fail "pool-migrate: where" "runs on '$(runs_on mig)'"
if [ -n "$seq_end" ] && wait_until 15 sh -c "grep -o 'icmp_seq=[0-9]*' '$T/ping.out' | tr -dc '0-9\n' | awk '\$1 > $seq_end + 20 { f = 1 } END { exit !f }'"; then
	kill $ping_pid 2>/dev/null; wait $ping_pid 2>/dev/null
	sent=$(grep -o 'icmp_seq=[0-9]*' "$T/ping.out" | tail -1 | tr -dc '0-9') got=$(grep -c 'bytes from' "$T/ping.out")
	pass "pool-migrate: lan's ping kept answering through the move ($got replies to $sent pings, 20 after the move)"
else
	kill $ping_pid 2>/dev/null; wait $ping_pid 2>/dev/null
	fail "pool-migrate: ping" "last answered before: $seq_end; $(tail -n 3 "$T/ping.out" | tr '\n' '|')"
fi
# b's agent feeds the HA guest's watchdog: it outlives a fence deadline
sleep $((FENCE + 1))
[ "$(runs_on mig)" = b ] && [ "$(dom_field mig 3)" = running ] &&
	pass "pool-migrate: $((FENCE + 1)) s later it still runs on b (b's agent feeds its watchdog)" ||
	fail "pool-migrate: watchdog on b" "runs on '$(runs_on mig)', pool says $(dom_field mig 3); b: $(tail -n 4 "$T/agent-b.log" | tr '\n' '|')"

# ---- a migration b refuses (a kernel outside what b lends): the guest
# stays on a, owned by a, and the command says why in one line
mkdir -p "$T/kern" && cp "$MINIOS" "$T/kern/minios.elf"
printf 'name = "far"\nmemory = 32\nvcpus = 1\nkernel = "%s"\n' "$T/kern/minios.elf" >"$(host_root a)/etc/lodge/domains/far.cfg"
lh a create far --on a >/dev/null || fail "pool-migrate: create far on a" "$(tail -n 3 "$T/agent-a.log" | tr '\n' '|')"
out=$(LODGE_TIMEOUT=130 lh a migrate far b 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q 'far was not migrated to b: .*will not take domain far: .*kernel_dirs' &&
	grep -q 'far: migration to .* failed' "$T/agent-a.log" &&
	[ "$(owner far)" = a ] && [ "$(runs_on far)" = a ] && [ -z "$(pool_etcdctl get --keys-only "$PREFIX/domains/far/migrate")" ] &&
	pass "pool-migrate: refused by b: far runs on a, owned by a, the request gone; said in one line ($out)" ||
	fail "pool-migrate: refused by b" "rc $rc, said: $out; owner $(owner far), runs on $(runs_on far); a: $(tail -n 3 "$T/agent-a.log" | tr '\n' '|')"

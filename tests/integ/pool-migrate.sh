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
pool_test_prefix
TTL=3 FENCE=2 PORT=8002

owner() { pool_etcdctl get --print-value-only "$PREFIX/domains/$1/owner"; }
owner_lease() { pool_etcdctl get -w json "$PREFIX/domains/$1/owner" | python3 -c 'import json,sys; print(json.load(sys.stdin)["kvs"][0].get("lease", 0))' 2>/dev/null; }
host_lease() { pool_etcdctl get -w json "$PREFIX/hosts/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["kvs"][0].get("lease", 0))' 2>/dev/null; }
migrate_ok() { pool_etcdctl get --print-value-only "$PREFIX/hosts/$1" | grep -q '"migrate":"[^"]'; }

# ---- the lan, and two hosts with a bridge each on it
NSL=lp-lan-$$
netns_add "$NSL"
l() { ip netns exec "$NSL" "$@"; }
l ip link set lo up
l ip link add lan0 type bridge && l ip link set lan0 up && l ip addr add 10.79.0.1/24 dev lan0 ||
	{ fail pool-migrate "cannot make the lan bridge"; exit 1; }
head -c 32 /dev/urandom | base64 >"$T/secret" && chmod 600 "$T/secret"
pool_hosts_up --ns --no-agents "a b" $TTL $FENCE 1
n=0
for h in a b; do
	n=$((n + 1))
	ns=${POOL_NS[$h]}
	ip -n "$ns" link add lbr0 type bridge && ip -n "$ns" link set lbr0 up &&
		ip link add "up$h$$" netns "$ns" type veth peer name "la$h" netns "$NSL" &&
		ip -n "$ns" link set "up$h$$" master lbr0 up && l ip link set "la$h" master lan0 up ||
		{ fail pool-migrate "cannot join host $h's bridge to the lan"; exit 1; }
	printf 'migration_secret_file = "%s"\nmigration_listen = "%s:%s"\nbridges = [ "lbr0" ]\n' \
		"$T/secret" "$POOL_NET.$((10 + n))" $PORT >>"$(pool_root "$h")/etc/lodge/lodge.conf"
	pool_agent_start "$h"
done
both_up() { pool_all_up && migrate_ok a && migrate_ok b; }
pool_wait_agents "a b" both_up
pass "pool-migrate: hosts a and b up, each taking migrations on its veth's address"

cat >"$(pool_root a)/etc/lodge/domains/mig.cfg" <<CFG
name = "mig"
memory = 32
vcpus = 1
kernel = "$MINIOS"
cmdline = "ip=10.79.0.10/24"
vif = [ "bridge=lbr0,mac=02:4c:00:00:79:10" ]
ha = 1
CFG
pool_lh a create mig --on a >/dev/null || { fail pool-migrate "create mig on a: $(tail -n 3 "$T/agent-a.log" | tr '\n' '|')"; exit 1; }

# ---- refusals first: nothing changes
out=$(pool_lh b migrate mig nosuch 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q 'no host nosuch in the pool' &&
	[ "$(owner mig)" = a ] && [ -z "$(pool_etcdctl get --keys-only "$PREFIX/domains/mig/migrate")" ] &&
	pass "pool-migrate: to a host that is not in the pool: refused in one line, nothing changed ($out)" ||
	fail "pool-migrate: refused (no host)" "rc $rc, said: $out; owner $(owner mig)"
out=$(pool_lh b migrate mig a 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'runs on a already' && [ "$(owner mig)" = a ] &&
	pass "pool-migrate: to the host it runs on: refused ($out)" ||
	fail "pool-migrate: refused (same host)" "rc $rc, said: $out"

# ---- the move, lan pinging the guest throughout
l ping -n -i 0.1 -w 90 10.79.0.10 >"$T/ping.out" 2>&1 &
ping_pid=$!
wait_for "$T/ping.out" 'icmp_seq=5 ' 20 || fail "pool-migrate: lan pings the guest on a" "$(tail -n 3 "$T/ping.out" | tr '\n' '|')"
out=$(LODGE_TIMEOUT=130 pool_lh b migrate mig b 2>&1); rc=$?
seq_end=$(grep -o 'icmp_seq=[0-9]*' "$T/ping.out" | tail -1 | tr -dc '0-9')
if [ $rc -eq 0 ] && echo "$out" | grep -Eq '^migrated mig from a to b in [0-9]+ ms$'; then
	pass "pool-migrate: lodge migrate mig b, asked on b: $out"
else
	fail "pool-migrate: migrate" "rc $rc, said: $out; a: $(tail -n 4 "$T/agent-a.log" | tr '\n' '|') b: $(tail -n 4 "$T/agent-b.log" | tr '\n' '|')"
fi
[ "$(owner mig)" = b ] && [ -n "$(host_lease b)" ] && [ "$(owner_lease mig)" = "$(host_lease b)" ] &&
	[ "$(pool_dom_field mig 2)" = b ] && [ -z "$(pool_etcdctl get --keys-only "$PREFIX/domains/mig/migrate")" ] &&
	pass "pool-migrate: ownership followed: owner b under b's lease, list --pool shows it on b, the request gone" ||
	fail "pool-migrate: ownership" "owner $(owner mig) lease $(owner_lease mig) (b's $(host_lease b)), list: $(pool_dom_field mig 2)"
[ "$(pool_runs_on mig)" = b ] && pass "pool-migrate: it runs on b alone" || fail "pool-migrate: where" "runs on '$(pool_runs_on mig)'"
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
[ "$(pool_runs_on mig)" = b ] && [ "$(pool_dom_field mig 3)" = running ] &&
	pass "pool-migrate: $((FENCE + 1)) s later it still runs on b (b's agent feeds its watchdog)" ||
	fail "pool-migrate: watchdog on b" "runs on '$(pool_runs_on mig)', pool says $(pool_dom_field mig 3); b: $(tail -n 4 "$T/agent-b.log" | tr '\n' '|')"

# ---- a migration b refuses (a kernel outside what b lends): the guest
# stays on a, owned by a, and the command says why in one line
mkdir -p "$T/kern" && cp "$MINIOS" "$T/kern/minios.elf"
printf 'name = "far"\nmemory = 32\nvcpus = 1\nkernel = "%s"\n' "$T/kern/minios.elf" >"$(pool_root a)/etc/lodge/domains/far.cfg"
pool_lh a create far --on a >/dev/null || fail "pool-migrate: create far on a" "$(tail -n 3 "$T/agent-a.log" | tr '\n' '|')"
out=$(LODGE_TIMEOUT=130 pool_lh a migrate far b 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q 'far was not migrated to b: .*will not take domain far: .*kernel_dirs' &&
	grep -q 'far: migration to .* failed' "$T/agent-a.log" &&
	[ "$(owner far)" = a ] && [ "$(pool_runs_on far)" = a ] && [ -z "$(pool_etcdctl get --keys-only "$PREFIX/domains/far/migrate")" ] &&
	pass "pool-migrate: refused by b: far runs on a, owned by a, the request gone; said in one line ($out)" ||
	fail "pool-migrate: refused by b" "rc $rc, said: $out; owner $(owner far), runs on $(pool_runs_on far); a: $(tail -n 3 "$T/agent-a.log" | tr '\n' '|')"

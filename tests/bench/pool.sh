#!/bin/bash
# The pool's benchmark (issue 24), on a three-member etcd cluster of its
# own and three Lodge hosts (their own --root) with lease TTL 3 s, fence
# deadline 2 s, restart delay 1 s:
#   - a host's death (its agent and lodge-hyps killed) to its HA domain
#     running elsewhere: target under 2 TTLs + 1 s;
#   - lodge create of a Mini-OS domain placed in the pool against a local
#     create on a host in no pool (medians of 5): target under 1.5x;
#   - etcd traffic of an idle host per minute: the members' gRPC bytes
#     (etcd_network_client_grpc_{received,sent}_bytes_total, which carry
#     the JSON gateway's calls too) over 60 s of three idle agents, / 3.
# Prints a markdown table.  Needs root, KVM, etcd-server.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/lib.sh"
integ_begin pool-bench kvm root minios >/dev/null
pool_etcd_up own
TTL=3 PREFIX=/lodge-bench
host_root() { echo "$T/host-$1"; }
lh() { local h=$1; shift; lodge_at "$(host_root "$h")" "" "$@"; }
declare -A AGENT
agent_start() { "$LODGE" --root "$(host_root "$1")" pool-agent 2>>"$T/agent-$1.log" & AGENT[$1]=$!; }
runs_on() {
	local h r=""
	for h in a b c; do lh "$h" list -o tsv -H 2>/dev/null | cut -f1 | grep -qx "$1" && r+="$h"; done
	echo "$r"
}
ms_of() { local t0; t0=$(now_us); "$@" >/dev/null 2>&1; echo $((($(now_us) - t0) / 1000)); }
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cfg() { printf 'name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\nha = %s\n' "$2" "$MINIOS" "$3" >"$1/$2.cfg"; }

for h in a b c; do
	integ_root "$(host_root "$h")"
	mkdir -p "$(host_root "$h")/etc/lodge/domains"
	lh "$h" pool-join --etcd "$POOL_ETCD_URLS" --host "$h" --prefix "$PREFIX" >/dev/null || exit 1
	printf 'pool_lease_ttl = %s\npool_fence_deadline = 2\npool_restart_delay = 1\n' $TTL >>"$(host_root "$h")/etc/lodge/lodge.conf"
	agent_start "$h"
done
wait_until 20 eval '[ "$(lh a pool-list -o tsv -H | awk -F"\t" "\$2 == \"up\"" | wc -l)" = 3 ]' || exit 1

# ---- idle traffic: 60 s of three agents that have nothing to do
grpc_bytes() {
	local u sum=0 v
	for u in ${POOL_ETCD_URLS//,/ }; do
		v=$(curl -s "$u/metrics" | awk '/^etcd_network_client_grpc_(received|sent)_bytes_total/ { s += $2 } END { printf "%d", s }')
		sum=$((sum + ${v:-0}))
	done
	echo $sum
}
b0=$(grpc_bytes); sleep 60; b1=$(grpc_bytes)
idle=$(((b1 - b0) / 3))

# ---- placement: a pool create against a local one (a root in no pool)
mkdir -p "$T/local/etc/lodge/domains"
integ_root "$T/local"
pool_ms=() local_ms=()
for i in 1 2 3 4 5; do
	cfg "$(host_root a)/etc/lodge/domains" "p$i" 0
	pool_ms+=("$(ms_of lh a create "p$i")")
	cfg "$T/local/etc/lodge/domains" "l$i" 0
	local_ms+=("$(ms_of lodge_at "$T/local" "" create "l$i")")
done
pm=$(median "${pool_ms[@]}") lm=$(median "${local_ms[@]}")

# ---- a host's death to its HA domain running elsewhere
cfg "$(host_root a)/etc/lodge/domains" hab 1
lh a create hab --on c >/dev/null
mapfile -t hyps < <(ps -eo pid=,args= | awk -v r="--runtime-dir $(host_root c)/run/lodge " '$0 ~ /lodge-hyp / && index($0, r) && $1 > 1 { print $1 }')
{ kill -KILL "${AGENT[c]}"; wait "${AGENT[c]}"; } 2>/dev/null
[ ${#hyps[@]} -gt 0 ] && kill -KILL "${hyps[@]}" 2>/dev/null
t0=$(now_us)
wait_until $((5 * TTL)) eval 'w=$(runs_on hab); [ -n "$w" ] && [ "$w" != c ]'
ha_ms=$((($(now_us) - t0) / 1000))

echo "| measure | value | target |"
echo "|---|---|---|"
echo "| host death to its HA domain running elsewhere (TTL $TTL s) | $ha_ms ms | < $((2 * TTL + 1))000 ms |"
echo "| lodge create placed in a 3-host pool (median of 5) | $pm ms | |"
echo "| lodge create on a host in no pool (median of 5) | $lm ms | |"
echo "| pool create / local create | $(awk -v p="$pm" -v l="$lm" 'BEGIN { printf "%.2fx", p / (l ? l : 1) }') | < 1.5x |"
echo "| etcd traffic of an idle host | $idle bytes/min | |"

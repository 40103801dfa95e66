#!/bin/bash
# HA restart in a pool (issue 24, src/pool/README.md "HA"): three hosts
# (own --root each) on the run's etcd cluster; host c runs two HA and one
# non-HA Mini-OS domain.  Its agent and its lodge-hyps are killed (-9):
# within two lease TTLs its HA domains run on the other hosts, its non-HA
# one is shown lost, and no domain runs twice (every lodge-hyp of this
# test's roots on the machine counted).  c's agent started again: c is up,
# and it restarts nothing that now runs elsewhere.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-ha kvm root minios
pool_etcd_up
PREFIX=$(pool_prefix)
at_exit 'pool_etcdctl del --prefix "$PREFIX/" >/dev/null 2>&1'
TTL=3

host_root() { echo "$T/host-$1"; }
lh() { local h=$1; shift; lodge_at "$(host_root "$h")" "" "$@"; }
declare -A AGENT
agent_start() { "$LODGE" --root "$(host_root "$1")" pool-agent 2>>"$T/agent-$1.log" & AGENT[$1]=$!; }
agent_kill() {   # only the agent this test started ($!), never anything else
	case ${AGENT[$1]:-} in ''|*[!0-9]*) return 1 ;; esac
	{ kill -KILL "${AGENT[$1]}"; wait "${AGENT[$1]}"; } 2>/dev/null
}
host_state() { lh a pool-list -o tsv -H 2>/dev/null | awk -F'\t' -v h="$1" '$1 == h { print $2 }'; }
dom_field() { lh a list --pool -o tsv -H 2>/dev/null | awk -F'\t' -v d="$1" -v c="$2" '$1 == d { print $c }'; }
all_up() { [ "$(host_state a)$(host_state b)$(host_state c)" = upupup ]; }
# hyps DOMAIN: how many lodge-hyp supervisors of this test's roots run DOMAIN
# (the sandboxed child of each shares its command line: parents only).
hyps() {
	local pid ppid args n=0
	while read -r pid ppid args; do
		case " $args " in *"lodge-hyp "*"--name $1 "*"--runtime-dir $T/"*) ;; *) continue ;; esac
		case "$(ps -o args= -p "$ppid" 2>/dev/null)" in *lodge-hyp*) continue ;; esac
		n=$((n + 1))
	done < <(ps -eo pid=,ppid=,args=)
	echo $n
}
runs_on() {
	local h r=""
	for h in a b c; do lh "$h" list -o tsv -H 2>/dev/null | cut -f1 | grep -qx "$1" && r+="$h"; done
	echo "$r"
}

for h in a b c; do
	integ_root "$(host_root "$h")"
	mkdir -p "$(host_root "$h")/etc/lodge/domains"
	lh "$h" pool-join --etcd "$POOL_ETCD_URLS" --host "$h" --prefix "$PREFIX" >/dev/null ||
		{ fail pool-ha "host $h cannot join"; exit 1; }
	printf 'pool_lease_ttl = %s\npool_fence_deadline = 2\npool_restart_delay = 1\n' $TTL >>"$(host_root "$h")/etc/lodge/lodge.conf"
	agent_start "$h"
done
wait_until 20 all_up || { fail pool-ha "agents not up: $(cat "$T"/agent-*.log | tr '\n' '|')"; exit 1; }

for n in ha1 ha2 plain; do
	ha=1; [ $n = plain ] && ha=0
	printf 'name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\nha = %s\n' "$n" "$MINIOS" $ha \
		>"$(host_root a)/etc/lodge/domains/$n.cfg"
	lh a create "$n" --on c >/dev/null || { fail pool-ha "create $n on c"; exit 1; }
done
[ "$(runs_on ha1)$(runs_on ha2)$(runs_on plain)" = ccc ] && pass "pool-ha: two HA and one plain domain run on c" ||
	fail "pool-ha: setup" "$(lh a list --pool | tr '\n' '|')"

# ---- c dies: its agent and its lodge-hyps, -9
# root_hyps ROOT: the lodge-hyps (supervisors and children) whose runtime
# directory is ROOT's, each pid a number above 1 and its command line
# checked: nothing else on the machine is ever signalled.
root_hyps() {
	local pid args
	while read -r pid args; do
		case $pid in ''|*[!0-9]*) continue ;; esac
		[ "$pid" -gt 1 ] || continue
		case " $args " in *"lodge-hyp "*"--runtime-dir $1/run/lodge "*) echo "$pid" ;; esac
	done < <(ps -eo pid=,args=)
}
pids=$(root_hyps "$(host_root c)")
agent_kill c
[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
t0=$(now_us)
ha_elsewhere() {
	local a1 a2
	a1=$(runs_on ha1) a2=$(runs_on ha2)
	[ -n "$a1" ] && [ -n "$a2" ] && [ "${a1/c/}" = "$a1" ] && [ "${a2/c/}" = "$a2" ] &&
		[ "$(dom_field ha1 3)$(dom_field ha2 3)" = runningrunning ]
}
if wait_until $((4 * TTL)) ha_elsewhere; then
	ms=$((($(now_us) - t0) / 1000))
	[ $ms -le $((2 * TTL * 1000)) ] &&
		pass "pool-ha: c's HA domains run on $(runs_on ha1) and $(runs_on ha2) ${ms} ms after its death (2 TTLs: $((2 * TTL)) s)" ||
		fail "pool-ha: HA restart time" "${ms} ms, more than 2 TTLs ($((2 * TTL)) s)"
else
	fail "pool-ha: HA restart" "$(lh a list --pool 2>&1 | tr '\n' '|') $(tail -n 4 "$T"/agent-a.log "$T"/agent-b.log | tr '\n' '|')"
fi
[ "$(dom_field plain 3)" = lost ] && [ "$(dom_field plain 2)" = c ] && [ -z "$(runs_on plain)" ] &&
	pass "pool-ha: c's non-HA domain is shown lost on c, restarted nowhere" ||
	fail "pool-ha: non-HA" "plain: $(dom_field plain 3) on $(dom_field plain 2), runs on '$(runs_on plain)'"
[ "$(host_state c)" = lost ] && pass "pool-ha: c is shown lost" || fail "pool-ha: c state" "$(host_state c)"
[ "$(hyps ha1)$(hyps ha2)$(hyps plain)" = 110 ] &&
	pass "pool-ha: nothing runs twice (lodge-hyps on the machine: ha1 1, ha2 1, plain 0)" ||
	fail "pool-ha: twice" "ha1 $(hyps ha1), ha2 $(hyps ha2), plain $(hyps plain)"

# ---- c comes back: up, and nothing of what runs elsewhere restarted on it
where1=$(runs_on ha1) where2=$(runs_on ha2)
agent_start c
wait_until $((2 * TTL + 5)) eval '[ "$(host_state c)" = up ]' || fail "pool-ha: c back" "c is $(host_state c)"
# Two of its reconcile passes (one per renewal, TTL/3 apart) have run by then.
wait_until 5 eval 'grep -c "is up in the pool" "$T/agent-c.log" | grep -q 2' && sleep "$TTL"
[ "$(runs_on ha1)" = "$where1" ] && [ "$(runs_on ha2)" = "$where2" ] && [ "$(hyps ha1)$(hyps ha2)" = 11 ] &&
	pass "pool-ha: c rejoined and restarted nothing that runs elsewhere" ||
	fail "pool-ha: rejoin" "ha1 on $(runs_on ha1), ha2 on $(runs_on ha2)"

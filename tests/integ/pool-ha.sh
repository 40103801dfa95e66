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
pool_test_prefix
TTL=3
pool_hosts_up "a b c" $TTL 2 1

pool_create_on c ha1:1 ha2:1 plain:0
[ "$(pool_runs_on ha1)$(pool_runs_on ha2)$(pool_runs_on plain)" = ccc ] && pass "pool-ha: two HA and one plain domain run on c" ||
	fail "pool-ha: setup" "$(pool_lh a list --pool | tr '\n' '|')"

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
pids=$(root_hyps "$(pool_root c)")
pool_agent_kill c
[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
t0=$(now_us)
ha_elsewhere() {
	local a1 a2
	a1=$(pool_runs_on ha1) a2=$(pool_runs_on ha2)
	[ -n "$a1" ] && [ -n "$a2" ] && [ "${a1/c/}" = "$a1" ] && [ "${a2/c/}" = "$a2" ] &&
		[ "$(pool_dom_field ha1 3)$(pool_dom_field ha2 3)" = runningrunning ]
}
if wait_until $((4 * TTL)) ha_elsewhere; then
	ms=$((($(now_us) - t0) / 1000))
	[ $ms -le $((2 * TTL * 1000)) ] &&
		pass "pool-ha: c's HA domains run on $(pool_runs_on ha1) and $(pool_runs_on ha2) ${ms} ms after its death (2 TTLs: $((2 * TTL)) s)" ||
		fail "pool-ha: HA restart time" "${ms} ms, more than 2 TTLs ($((2 * TTL)) s)"
else
	fail "pool-ha: HA restart" "$(pool_lh a list --pool 2>&1 | tr '\n' '|') $(tail -n 4 "$T"/agent-a.log "$T"/agent-b.log | tr '\n' '|')"
fi
[ "$(pool_dom_field plain 3)" = lost ] && [ "$(pool_dom_field plain 2)" = c ] && [ -z "$(pool_runs_on plain)" ] &&
	pass "pool-ha: c's non-HA domain is shown lost on c, restarted nowhere" ||
	fail "pool-ha: non-HA" "plain: $(pool_dom_field plain 3) on $(pool_dom_field plain 2), runs on '$(pool_runs_on plain)'"
[ "$(pool_host_state c)" = lost ] && pass "pool-ha: c is shown lost" || fail "pool-ha: c state" "$(pool_host_state c)"
[ "$(pool_hyps ha1)$(pool_hyps ha2)$(pool_hyps plain)" = 110 ] &&
	pass "pool-ha: nothing runs twice (lodge-hyps on the machine: ha1 1, ha2 1, plain 0)" ||
	fail "pool-ha: twice" "ha1 $(pool_hyps ha1), ha2 $(pool_hyps ha2), plain $(pool_hyps plain)"

# ---- c comes back: up, and nothing of what runs elsewhere restarted on it
where1=$(pool_runs_on ha1) where2=$(pool_runs_on ha2)
pool_agent_start c
wait_until $((2 * TTL + 5)) eval '[ "$(pool_host_state c)" = up ]' || fail "pool-ha: c back" "c is $(pool_host_state c)"
# Two of its reconcile passes (one per renewal, TTL/3 apart) have run by then.
wait_until 5 eval 'grep -c "is up in the pool" "$T/agent-c.log" | grep -q 2' && sleep "$TTL"
[ "$(pool_runs_on ha1)" = "$where1" ] && [ "$(pool_runs_on ha2)" = "$where2" ] && [ "$(pool_hyps ha1)$(pool_hyps ha2)" = 11 ] &&
	pass "pool-ha: c rejoined and restarted nothing that runs elsewhere" ||
	fail "pool-ha: rejoin" "ha1 on $(pool_runs_on ha1), ha2 on $(pool_runs_on ha2)"

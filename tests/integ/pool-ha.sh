#!/bin/bash
# HA restart in a pool (issue 24, src/pool/README.md "HA"): three hosts
# (own --root each) on the run's etcd cluster; host c runs two HA and one
# non-HA Mini-OS domain.  Its agent and its lodge-hyps are killed (-9):
# once its lease has ended (and not before: etcd's history) its HA domains
# run on the other hosts (how soon is tests/bench/pool.sh's), its non-HA
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
# handover_revs REV: from etcd's history since REV (no watch left running),
# "GONE HA1 HA2": the revision c's host record went (its lease ended) and
# those at which ha1's and ha2's owner became another host; 0 for not seen.
handover_revs() {
	ETCDCTL_API=3 timeout 2 etcdctl --endpoints="$POOL_ETCD_URLS" watch --rev="$1" --prefix "$PREFIX/" -w json 2>/dev/null |
		python3 -c '
import base64, json, sys
pre, gone, owned = sys.argv[1], 0, {}
for line in sys.stdin:
    try:
        events = json.loads(line).get("Events") or []
    except ValueError:
        continue
    for e in events:
        kv = e["kv"]
        key, value = base64.b64decode(kv["key"]).decode(), base64.b64decode(kv.get("value", "")).decode()
        if key == pre + "/hosts/c" and e.get("type") == 1 and not gone:
            gone = kv["mod_revision"]
        for d in ("ha1", "ha2"):
            if key == "%s/domains/%s/owner" % (pre, d) and e.get("type", 0) == 0 and value not in ("", "c"):
                owned.setdefault(d, kv["mod_revision"])
print(gone, owned.get("ha1", 0), owned.get("ha2", 0))' "$PREFIX"
}
mapfile -t pids < <(root_hyps "$(pool_root c)")
rev=$(pool_rev)
pool_agent_kill c
[ ${#pids[@]} -gt 0 ] && kill -KILL "${pids[@]}" 2>/dev/null
t0=$(now_us)
ha_elsewhere() {
	local a1 a2
	a1=$(pool_runs_on ha1) a2=$(pool_runs_on ha2)
	[ -n "$a1" ] && [ -n "$a2" ] && [ "${a1/c/}" = "$a1" ] && [ "${a2/c/}" = "$a2" ] &&
		[ "$(pool_dom_field ha1 3)$(pool_dom_field ha2 3)" = runningrunning ]
}
if wait_until $((10 * TTL)) ha_elsewhere; then
	ms=$((($(now_us) - t0) / 1000))
	read -r gone own1 own2 <<<"$(handover_revs "$rev")"
	[ "${gone:-0}" -gt 0 ] && [ "${own1:-0}" -gt "$gone" ] && [ "${own2:-0}" -gt "$gone" ] &&
		pass "pool-ha: c's HA domains run on $(pool_runs_on ha1) and $(pool_runs_on ha2), taken over after c's lease ended (etcd revisions: c's record gone at $gone, new owners at $own1 and $own2; ${ms} ms after its death)" ||
		fail "pool-ha: HA restart after the lease" "etcd revisions: c's record gone at '$gone', ha1's new owner at '$own1', ha2's at '$own2'"
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

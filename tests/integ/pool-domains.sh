#!/bin/bash
# Domains in a pool (issue 24, src/pool/README.md "Placement", "The
# agent"): three Lodge hosts (their own --root, one etcd cluster) and
# their agents; `lodge create` on any of them places Mini-OS domains by
# the memory not yet placed on each host (or --on HOST), the placed
# host's agent claims each by transaction and starts it; `lodge list
# --pool` from any host shows all with their hosts, and each runs on its
# host alone.  Refused with one line and nothing left in the pool: a
# domain that fits no host, --on a host that is not up, a name the pool
# has, a config the host's own checks refuse.  A guest that ends by
# itself is shown stopped.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-domains kvm root minios
pool_etcd_up
pool_test_prefix
TTL=3
# d joins but its agent never runs: "a host that is not up" below
pool_hosts_up --no-agents "a b c d" $TTL 2 1
for h in a b c; do pool_agent_start "$h"; done
pool_wait_agents "a b c"

cfg() {   # NAME MEMORY [MORE]: a Mini-OS config in host a's domains_dir
	printf 'name = "%s"\nmemory = %s\nvcpus = 1\nkernel = "%s"\n%s' "$1" "$2" "$MINIOS" "${3:-}" \
		>"$(pool_root a)/etc/lodge/domains/$1.cfg"
}

# ---- five domains: each on the host with the most memory not yet placed
cfg p1 64; cfg p2 32; cfg p3 32; cfg p4 32; cfg p5 32
ok=1
for n in p1 p2 p3 p4 p5; do
	out=$(pool_lh a create "$n" 2>&1) || { ok=0; echo "$out"; }
done
want="p1:a p2:b p3:c p4:b p5:c"
got=""
for n in p1 p2 p3 p4 p5; do got+="$n:$(pool_dom_field "$n" 2) "; done
[ $ok = 1 ] && [ "${got% }" = "$want" ] &&
	pass "pool create: five domains spread by the memory not yet placed on each host ($want)" ||
	fail "pool create: placement" "got $got, want $want"

# Each runs on its host alone: every root's own list.
ok=1 where=""
for n in p1 p2 p3 p4 p5; do
	w=$(pool_runs_on "$n"); where+="$n:$w "
	[ "$w" = "$(pool_dom_field "$n" 2)" ] || ok=0
done
[ $ok = 1 ] && pass "pool create: each domain's lodge-hyp runs on its host and no other ($where)" ||
	fail "pool create: where they run" "$where"

ok=1
for h in a b c; do
	n=$(pool_lh "$h" list --pool -o tsv -H | awk -F'\t' '$3 == "running"' | wc -l)
	[ "$n" = 5 ] || ok=0
done
json=$(pool_lh c list --pool -o json)
[ $ok = 1 ] && echo "$json" | python3 -c '
import json, sys
d = {x["name"]: x for x in json.load(sys.stdin)}
assert d["p1"]["host"] == "a" and d["p1"]["memory_mib"] == 64 and d["p2"]["state"] == "running", d' 2>/dev/null &&
	pass "list --pool from every host shows the five running with their hosts (and as JSON)" ||
	fail "list --pool" "$(pool_lh c list --pool 2>&1 | tr '\n' '|')"

placed=$(pool_lh b pool-list -o tsv -H | awk -F'\t' '$1 == "b" { print $6 " " $7 }')
[ "$placed" = "64 p2,p4" ] && pass "pool-list: each host's placed memory and domains (b: $placed)" ||
	fail "pool-list placed" "b: $placed"

# ---- refusals: one line, nothing left in the pool
refused() {   # LABEL PATTERN NAME ARGS...: create refused, NAME not in the pool
	local label=$1 pat=$2 name=$3 out rc
	shift 3
	out=$(pool_lh a create "$@" 2>&1); rc=$?
	if [ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q -- "$pat" &&
	   [ -z "$(pool_etcdctl get --prefix "$PREFIX/domains/$name/" --keys-only)" ]; then
		pass "pool create refused: $label"
	else
		fail "pool create refused: $label" "rc $rc, said: $out; keys: $(pool_etcdctl get --prefix "$PREFIX/domains/$name/" --keys-only | tr '\n' ' ')"
	fi
}
cfg huge 4000000
refused "a domain that fits no host" "fits on no host that is up" huge huge
cfg q1 32
refused "--on a host that is not up" "host d is not up in the pool (lost)" q1 q1 --on d
refused "--on a host not in the pool" "no host zz in the pool" q1 q1 --on zz
out=$(pool_lh a create p1 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'a domain p1 is in the pool already' && [ "$(pool_runs_on p1)" = a ] &&
	pass "pool create refused: a name the pool has (its domain untouched)" ||
	fail "pool create refused: name taken" "rc $rc, said: $out"
cfg nobridge 32 'vif = [ "bridge=lpnobr0" ]
'
refused "the host's own check (a bridge it lacks), in its words" "lpnobr0" nobridge nobridge --on b

out=$(pool_lh a create q1 --on c 2>&1) && [ "$(pool_dom_field q1 2)" = c ] && [ "$(pool_runs_on q1)" = c ] &&
	pass "pool create --on c: placed and run there" || fail "pool create --on" "$out"

# ---- a guest that ends by itself (its lodge-hyp killed): shown stopped, its owner gone
# hyp_pids ROOT NAME: NAME's lodge-hyps under ROOT, each a checked pid above 1.
hyp_pids() {
	local pid args
	while read -r pid args; do
		case $pid in ''|*[!0-9]*) continue ;; esac
		[ "$pid" -gt 1 ] || continue
		case " $args " in *"lodge-hyp "*"--name $2 "*"--runtime-dir $1/run/lodge "*) echo "$pid" ;; esac
	done < <(ps -eo pid=,args=)
}
mapfile -t pids < <(hyp_pids "$(pool_root c)" q1)
[ ${#pids[@]} -gt 0 ] && kill -KILL "${pids[@]}"
wait_until $((2 * TTL + 5)) eval '[ "$(pool_dom_field q1 3)" = stopped ]' &&
	[ -z "$(pool_etcdctl get "$PREFIX/domains/q1/owner" --keys-only)" ] && [ -z "$(pool_runs_on q1)" ] &&
	pass "pool: a domain whose lodge-hyp ended is shown stopped, its ownership released" ||
	fail "pool: ended by itself" "q1 is $(pool_dom_field q1 3)"

# ---- a stopped pool domain created again: placed and run anew
out=$(pool_lh a create q1 2>&1) && w=$(pool_runs_on q1) && [ -n "$w" ] && [ "$(pool_dom_field q1 3)" = running ] &&
	pass "pool create: a stopped domain of the pool starts again (on $w)" || fail "pool create again" "$out"

# ---- destroy from any host: the domain stops where it runs
out=$(pool_lh a destroy p2 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$(pool_runs_on p2)" ] && [ "$(pool_dom_field p2 3)" = stopped ] &&
	pass "pool destroy on host a: p2 stopped on b, where it ran" ||
	fail "pool destroy" "rc $rc: $out; p2 runs on '$(pool_runs_on p2)', $(pool_dom_field p2 3)"

#!/bin/bash
# The pool and etcd's quorum (issue 24): three hosts (own --root each) on a
# three-member cluster of the test's own.  One member killed: the pool
# goes on (a create is placed, no host fences).  A second one killed, no
# quorum: a create is refused in one line, every host fences its HA
# domains by the fence deadline, the non-HA ones run on.  The members
# back: the pool recovers (every host up, the HA domain runs again, once).
. "$(dirname "$0")/../lib.sh"
integ_begin pool-quorum kvm root minios
pool_etcd_up own
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
		{ fail pool-quorum "host $h cannot join"; exit 1; }
	printf 'pool_lease_ttl = %s\npool_fence_deadline = 2\npool_restart_delay = 1\n' $TTL >>"$(host_root "$h")/etc/lodge/lodge.conf"
	agent_start "$h"
done
wait_until 20 all_up || { fail pool-quorum "agents not up: $(cat "$T"/agent-*.log | tr '\n' '|')"; exit 1; }

cfg() { printf 'name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\nha = %s\n' "$1" "$MINIOS" "$2" \
	>"$(host_root a)/etc/lodge/domains/$1.cfg"; }
cfg hac 1; cfg plainb 0; cfg more 0; cfg late 0
lh a create hac --on c >/dev/null && lh a create plainb --on b >/dev/null ||
	{ fail pool-quorum "cannot create the domains"; exit 1; }

# ---- one member of three gone: the pool goes on
pool_member_kill 1
out=$(lh a create more 2>&1) && [ -n "$(runs_on more)" ] &&
	pass "pool-quorum: one etcd member killed, a create is still placed ($(runs_on more))" ||
	fail "pool-quorum: one member" "$out"
sleep $((2 * TTL))
! grep -q 'fence:' "$T"/agent-*.log && all_up && [ "$(runs_on hac)" = c ] &&
	pass "pool-quorum: ... and for two lease TTLs no host fences, all stay up" ||
	fail "pool-quorum: one member, fencing" "$(grep -h 'fence:\|cannot' "$T"/agent-*.log | tr '\n' '|')"

# ---- no quorum
pool_member_kill 2
t0=$(now_us)
out=$(LODGE_TIMEOUT=60 lh a create late 2>&1); rc=$?
secs=$((($(now_us) - t0) / 1000000))
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && [ -z "$(runs_on late)" ] &&
	pass "pool-quorum: no quorum, a create is refused in one line after ${secs} s ($out)" ||
	fail "pool-quorum: no quorum create" "rc $rc: $out"
wait_until $((3 * TTL)) eval '[ -z "$(runs_on hac)" ]' && grep -q 'fence: hac \(destroyed\|ended by its watchdog\)' "$T/agent-c.log" &&
	pass "pool-quorum: no quorum, c fenced its HA domain" ||
	fail "pool-quorum: no quorum fence" "hac runs on '$(runs_on hac)': $(grep -h fence "$T"/agent-c.log | tr '\n' '|')"
[ "$(runs_on plainb)" = b ] && [ "$(runs_on more)" != "" ] &&
	pass "pool-quorum: no quorum, the non-HA domains run on" || fail "pool-quorum: non-HA" "plainb on '$(runs_on plainb)'"

# ---- quorum back
pool_member_start 1
pool_member_start 2
wait_until 60 pool_etcd_healthy || fail "pool-quorum: etcd" "the members did not come back"
recovered() { all_up && [ -n "$(runs_on hac)" ] && [ "$(dom_field hac 3)" = running ]; }
wait_until $((10 * TTL)) recovered && [ "$(hyps hac)" = 1 ] && [ "$(runs_on plainb)" = b ] &&
	pass "pool-quorum: quorum back, the pool recovers: all hosts up, the HA domain runs again on $(runs_on hac), once" ||
	fail "pool-quorum: recovery" "$(lh a pool-list 2>&1 | tr '\n' '|') hac on '$(runs_on hac)' ($(hyps hac))"

#!/bin/bash
# The watchdog (issue 24, src/pool/README.md "Fencing"): host c's pool
# agent alone is killed (-9), its lodge-hyps live on.  The lodge-hyp of
# c's HA domain, no longer fed, ends it by the fence deadline, before
# another host starts it once c's lease has ended (the two hosts' event
# logs compared); c's non-HA domain, which has no watchdog, runs on; no
# domain runs twice.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-watchdog kvm root minios
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
		{ fail pool-watchdog "host $h cannot join"; exit 1; }
	printf 'pool_lease_ttl = %s\npool_fence_deadline = 2\npool_restart_delay = 1\n' $TTL >>"$(host_root "$h")/etc/lodge/lodge.conf"
	agent_start "$h"
done
wait_until 20 all_up || { fail pool-watchdog "agents not up: $(cat "$T"/agent-*.log | tr '\n' '|')"; exit 1; }

event_ms() {   # HOST DOMAIN EVENT: when HOST's event log first has it (ms since the epoch)
	local when
	when=$(awk -v d="$2" -v e="$3" '$2 == d && $3 == e { print $1; exit }' "$(host_root "$1")/var/log/lodge/lodge.log" 2>/dev/null)
	[ -n "$when" ] && echo $(($(date -d "$when" +%s%N) / 1000000))
}
for n in hac plainc; do
	ha=1; [ $n = plainc ] && ha=0
	printf 'name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\nha = %s\n' "$n" "$MINIOS" $ha \
		>"$(host_root a)/etc/lodge/domains/$n.cfg"
	lh a create "$n" --on c >/dev/null || { fail pool-watchdog "create $n on c"; exit 1; }
done

# Armed from the start: lodge started c's HA domain with the fence deadline.
args=$(ps -eo args= | grep -F -- "--runtime-dir $(host_root c)/run/lodge " | grep -F -- '--name hac ' | head -n1)
case "$args" in *"--watchdog 2 "*) pass "pool-watchdog: an HA domain of the pool starts with its watchdog armed (--watchdog 2)" ;;
*) fail "pool-watchdog: armed at start" "lodge-hyp: $args" ;; esac

agent_kill c
moved() { WHERE=$(runs_on hac); [ -n "$WHERE" ] && [ "$WHERE" != c ]; }
if wait_until $((4 * TTL)) moved; then
	ended=$(event_ms c hac destroyed) started=$(event_ms "$WHERE" hac created)
	who=$(awk '$2 == "hac" && $3 == "destroyed" { print $4; exit }' "$(host_root c)/var/log/lodge/lodge.log")
	if [ "$who" = watchdog ] && [ -n "$started" ] && [ "$ended" -lt "$started" ]; then
		pass "pool-watchdog: c's agent killed, its HA domain's watchdog ended it $((started - ended)) ms before $WHERE started it"
	else
		fail "pool-watchdog: order" "destroyed by '$who' at '$ended', started on $WHERE at '$started'"
	fi
else
	fail "pool-watchdog: HA restart" "hac runs on '$(runs_on hac)'"
fi
[ "$(runs_on plainc)" = c ] && pass "pool-watchdog: c's non-HA domain (no watchdog) runs on" ||
	fail "pool-watchdog: non-HA" "plainc runs on '$(runs_on plainc)'"
[ "$(hyps hac)$(hyps plainc)" = 11 ] && pass "pool-watchdog: nothing runs twice (lodge-hyps on the machine)" ||
	fail "pool-watchdog: twice" "hac $(hyps hac), plainc $(hyps plainc)"

# ---- lodge-hyp alone: never fed, each boot ends by --watchdog
mkdir -p "$T/wd/run" "$T/wd/log"
t0=$(now_us)
"$HYP" --kernel "$MINIOS" --memory 32 --name wdt --runtime-dir "$T/wd/run" --event-log "$T/wd/log" --watchdog 1 --detach
gone() { [ ! -e "$T/wd/run/wdt" ]; }
if wait_until 10 gone && grep -q '^[^ ]* wdt destroyed watchdog ' "$T/wd/log/lodge.log"; then
	ms=$((($(now_us) - t0) / 1000))
	[ $ms -ge 900 ] && pass "lodge-hyp --watchdog 1, never fed: the domain ended by its watchdog after ${ms} ms" ||
		fail "lodge-hyp --watchdog" "ended after $ms ms, before its second"
else
	fail "lodge-hyp --watchdog" "still there: $(cat "$T/wd/log/lodge.log" 2>/dev/null | tr '\n' '|')"
fi
out=$("$HYP" --kernel "$MINIOS" --name wdx --runtime-dir "$T/wd/run" --watchdog 0 --detach 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q -- '--watchdog 0 is out of range' && pass "lodge-hyp --watchdog 0 is refused" ||
	fail "lodge-hyp --watchdog 0" "rc $rc: $out"

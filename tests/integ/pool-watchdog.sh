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
pool_test_prefix
TTL=3
pool_hosts_up "a b c" $TTL 2 1

pool_create_on c hac:1 plainc:0

# Armed from the start: lodge started c's HA domain with the fence deadline.
args=$(ps -eo args= | awk -v r="--runtime-dir $(pool_root c)/run/lodge " 'index($0, r) && index($0, "--name hac ")' | head -n1)
case "$args" in *"--watchdog 2 "*) pass "pool-watchdog: an HA domain of the pool starts with its watchdog armed (--watchdog 2)" ;;
*) fail "pool-watchdog: armed at start" "lodge-hyp: $args" ;; esac

pool_agent_kill c
moved() { WHERE=$(pool_runs_on hac); [ -n "$WHERE" ] && [ "$WHERE" != c ]; }
if wait_until $((4 * TTL)) moved; then
	ended=$(pool_event_ms c hac destroyed) started=$(pool_event_ms "$WHERE" hac created)
	who=$(awk '$2 == "hac" && $3 == "destroyed" { print $4; exit }' "$(pool_root c)/var/log/lodge/lodge.log")
	if [ "$who" = watchdog ] && [ -n "$started" ] && [ "$ended" -lt "$started" ]; then
		pass "pool-watchdog: c's agent killed, its HA domain's watchdog ended it $((started - ended)) ms before $WHERE started it"
	else
		fail "pool-watchdog: order" "destroyed by '$who' at '$ended', started on $WHERE at '$started'"
	fi
else
	fail "pool-watchdog: HA restart" "hac runs on '$(pool_runs_on hac)'"
fi
[ "$(pool_runs_on plainc)" = c ] && pass "pool-watchdog: c's non-HA domain (no watchdog) runs on" ||
	fail "pool-watchdog: non-HA" "plainc runs on '$(pool_runs_on plainc)'"
[ "$(pool_hyps hac)$(pool_hyps plainc)" = 11 ] && pass "pool-watchdog: nothing runs twice (lodge-hyps on the machine)" ||
	fail "pool-watchdog: twice" "hac $(pool_hyps hac), plainc $(pool_hyps plainc)"

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
	fail "lodge-hyp --watchdog" "still there: $(tr '\n' '|' 2>/dev/null <"$T/wd/log/lodge.log")"
fi
out=$("$HYP" --kernel "$MINIOS" --name wdx --runtime-dir "$T/wd/run" --watchdog 0 --detach 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q -- '--watchdog 0 is out of range' && pass "lodge-hyp --watchdog 0 is refused" ||
	fail "lodge-hyp --watchdog 0" "rc $rc: $out"

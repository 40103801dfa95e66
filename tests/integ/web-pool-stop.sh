#!/bin/bash
# The web page's stop of a pool domain (issue 34; src/pool/README.md
# "Stopping"): two hosts on the run's etcd cluster, lodge web on host a.
# A logged-in admin's Shut down of an HA domain that runs on a, and
# Destroy of one that runs on b, go through the pool (pool_stop_domain:
# desired stopped in etcd, its owner's agent stops it): each is stopped
# in the pool's view (lodge list --pool), stays stopped across both
# agents' reconcile passes (HA brings back no domain a user stopped), and
# the owner's event log names the web user (via=web-USER on its
# shutdown-asked or destroyed line), as does its agent's log.  A local
# stop from the web would leave the one on b running (not a's) and the
# one on a restarted by its agent (HA).
. "$(dirname "$0")/../lib.sh"
integ_begin web-pool-stop kvm root minios cmd:curl cmd:python3
pool_etcd_up
pool_test_prefix
pool_hosts_up --no-agents "a b" 3 2 1
# LODGE_DEBUG: each agent logs its reconcile passes ("reconciled: ...")
for h in a b; do LODGE_DEBUG=1 pool_agent_start "$h"; done
pool_wait_agents "a b"

passes() { grep -c 'reconciled:' "$T/agent-$1.log"; }
# two_passes: both agents reconcile twice more (a key of no domain
# written under the prefix wakes them: an event, no clock).
two_passes() {
	local i a0 b0
	for i in 1 2; do
		a0=$(passes a) b0=$(passes b)
		pool_etcdctl put "$PREFIX/test-poke" "$RANDOM" >/dev/null
		wait_until 20 eval '[ $(passes a) -gt $a0 ] && [ $(passes b) -gt $b0 ]' || return 1
	done
}
desired() { pool_etcdctl get "$PREFIX/domains/$1/desired" --print-value-only; }
# evline HOST NAME EVENT: the WHO field of NAME's first EVENT line in HOST's event log
evwho() { awk -v d="$2" -v e="$3" '$2 == d && $3 == e { print $4; exit }' "$(pool_root "$1")/var/log/lodge/lodge.log" 2>/dev/null; }
prompt() { pool_lh "$1" console --log "$2" 2>/dev/null | tail -c 200 | grep -q 'minios> '; }

pool_create_on a wa:1
pool_create_on b wb:1
if ! wait_until 30 prompt a wa || ! wait_until 30 prompt b wb || [ "$(pool_runs_on wa)$(pool_runs_on wb)" != ab ]; then
	fail "web-pool-stop: setup" "wa on '$(pool_runs_on wa)', wb on '$(pool_runs_on wb)'"
	exit 1
fi

PORT=$(pool_free_port)
URL=http://127.0.0.1:$PORT
J='Content-Type: application/json'
printf 'vera-secret-12\n' | pool_lh a web-passwd vera >/dev/null 2>&1
"$LODGE" --root "$(pool_root a)" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
up() { curl -s -o /dev/null "$URL/"; }
wait_until 20 up || { fail "web-pool-stop: web" "lodge web did not answer: $(cat "$T/web.log")"; exit 1; }
curl -s -o "$T/login" -c "$T/jar" -H "$J" -d '{"user":"vera","password":"vera-secret-12"}' "$URL/api/login"
CSRF=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' "$T/login" 2>/dev/null)
[ -n "$CSRF" ] || { fail "web-pool-stop: login" "$(cat "$T/login")"; exit 1; }
post() { curl -s -o "$T/body" -w '%{http_code}' -b "$T/jar" -H "X-CSRF-Token: $CSRF" -H "$J" -d '{}' "$URL/api/domains/$1/$2"; }

# ---- Shut down of the HA domain that runs on a, the web's own host
c=$(post wa shutdown)
if [ "$c" = 200 ] && [ "$(desired wa)" = stopped ] &&
   wait_until 30 eval '[ "$(pool_dom_field wa 3)" = stopped ] && [ -z "$(pool_runs_on wa)" ]'; then
	pass "web-pool-stop: Shut down of HA wa (on a) from the web: desired stopped in the pool, wa powered off, list --pool says stopped"
else
	fail "web-pool-stop: shutdown wa" "HTTP $c $(cat "$T/body"); desired '$(desired wa)'; wa $(pool_dom_field wa 3) on '$(pool_runs_on wa)'"
fi

# ---- Destroy of the HA domain that runs on b, asked on a's web page
c=$(post wb destroy)
if [ "$c" = 200 ] && [ "$(desired wb)" = stopped ] &&
   wait_until 30 eval '[ "$(pool_dom_field wb 3)" = stopped ] && [ -z "$(pool_runs_on wb)" ]'; then
	pass "web-pool-stop: Destroy of HA wb (on b) from a's web page: desired stopped in the pool, ended on b, list --pool says stopped"
else
	fail "web-pool-stop: destroy wb" "HTTP $c $(cat "$T/body"); desired '$(desired wb)'; wb $(pool_dom_field wb 3) on '$(pool_runs_on wb)'"
fi

# ---- HA brings neither back
if two_passes && [ -z "$(pool_runs_on wa)$(pool_runs_on wb)" ] && [ "$(pool_hyps wa)$(pool_hyps wb)" = 00 ] &&
   [ "$(pool_dom_field wa 3)$(pool_dom_field wb 3)" = stoppedstopped ]; then
	pass "web-pool-stop: both stay stopped across two reconcile passes of each agent (HA restarts no domain a user stopped)"
else
	fail "web-pool-stop: stays stopped" "wa $(pool_dom_field wa 3) on '$(pool_runs_on wa)', wb $(pool_dom_field wb 3) on '$(pool_runs_on wb)'; $(tail -n 4 "$T/agent-a.log" | tr '\n' '|')"
fi

# ---- the logs name the user's stop
wa_who=$(evwho a wa shutdown-asked) wb_who=$(evwho b wb destroyed)
if [[ $wa_who == *,via=web-vera ]] && [[ $wb_who == *,via=web-vera ]] &&
   grep -q 'wa: asked to power off on a (asked on host a via web-vera' "$T/agent-a.log" &&
   grep -q 'wb: destroyed on b (asked on host a via web-vera)' "$T/agent-b.log"; then
	pass "web-pool-stop: the owners' event logs name the web user (wa shutdown-asked $wa_who, wb destroyed $wb_who), as their agents' logs do"
else
	fail "web-pool-stop: who stopped" "a's wa shutdown-asked '$wa_who', b's wb destroyed '$wb_who'; agents: $(grep -hE 'w[ab]: ' "$T"/agent-[ab].log | tail -n 6 | tr '\n' '|')"
fi

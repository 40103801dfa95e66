#!/bin/bash
# A pool domain whose lodge-hyp dies (issue 34, defect 1; src/pool/README.md
# "Stopping"): kill -9 of its supervisor and child together (as the OOM
# killer or a crash of lodge-hyp would) leaves no event-log line.  Its
# owner knows the end from that boot's own evidence, never from a line of
# an older boot (h1 was destroyed once before, so its log has one): an HA
# domain is started again on its owner, with a backoff when it dies again
# soon after (a second kill: "restart 2 in a row", a delay); a plain one
# is recorded stopped.  `lodge list --pool` says why h1 ended.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-hyp-death kvm root minios
pool_etcd_up
pool_test_prefix
TTL=3
pool_hosts_up "a b" $TTL 2 1

# h1's older boot, destroyed: its "destroyed" line is in b's event log
pool_create_on b h1:1
pool_lh a destroy h1 >/dev/null && pool_lh a pool-forget h1 >/dev/null ||
	{ fail "pool-hyp-death: setup" "cannot destroy and forget h1"; exit 1; }
pool_create_on b h1:1 p1:0
grep -q ' h1 destroyed ' "$(pool_root b)/var/log/lodge/lodge.log" && [ "$(pool_runs_on h1)$(pool_runs_on p1)" = bb ] &&
	pass "pool-hyp-death: h1 (HA, destroyed once before) and p1 (plain) run on b" ||
	fail "pool-hyp-death: setup" "$(pool_lh a list --pool 2>&1 | tr '\n' '|')"

# dom_hyps NAME: the pids of NAME's lodge-hyps (supervisor and child) on
# b's root, each a number above 1 with its command line checked.
dom_hyps() {
	local pid args
	while read -r pid args; do
		case $pid in ''|*[!0-9]*) continue ;; esac
		[ "$pid" -gt 1 ] || continue
		case " $args " in *"lodge-hyp "*"--name $1 "*"--runtime-dir $(pool_root b)/run/lodge "*) echo "$pid" ;; esac
	done < <(ps -eo pid=,args=)
}
kill_hyps() {   # NAME: its lodge-hyps killed -9, all at once; their pids echoed
	local pids
	mapfile -t pids < <(dom_hyps "$1")
	[ ${#pids[@]} -gt 0 ] && kill -KILL "${pids[@]}" 2>/dev/null
	echo "${pids[*]}"
}
why() { pool_dom_field "$1" 6; }
# runs_again NAME OLDPIDS: NAME runs on b under lodge-hyps that are not OLDPIDS
runs_again() {
	local now p
	now=$(dom_hyps "$1")
	[ -n "$now" ] && [ "$(pool_runs_on "$1")" = b ] && [ "$(pool_dom_field "$1" 3)" = running ] || return 1
	for p in $2; do case " ${now//$'\n'/ } " in *" $p "*) return 1 ;; esac; done
}

# ---- h1 (HA) killed -9: started again on b, its row says why
old=$(kill_hyps h1)
if wait_until 30 runs_again h1 "$old"; then
	case $(why h1) in
	*"died without a word"*"restarted by b (1 in a row)"*)
		pass "pool-hyp-death: h1's lodge-hyp killed -9: b started it again; list --pool says: $(why h1)" ;;
	*) fail "pool-hyp-death: h1's why" "'$(why h1)'" ;;
	esac
else
	fail "pool-hyp-death: h1 restart" "$(pool_lh a list --pool 2>&1 | tr '\n' '|') $(tail -n 5 "$T/agent-b.log" | tr '\n' '|')"
fi
grep 'h1: ' "$T/agent-b.log" | grep -q '(destroyed)\|destroyed here outside' &&
	fail "pool-hyp-death: evidence" "b took an older boot's line: $(grep 'h1: ' "$T/agent-b.log" | tail -n 2 | tr '\n' '|')" ||
	pass "pool-hyp-death: b did not take the older boot's 'destroyed' line for this end"

# ---- again at once: a backoff (a delay said, restart 2 in a row), then it runs
old=$(kill_hyps h1)
if wait_until 30 runs_again h1 "$old"; then
	case $(why h1) in
	*"(2 in a row)"*) grep -q 'h1: HA: ended on b: .*started again in [0-9]* s (restart 2 in a row)' "$T/agent-b.log" &&
		pass "pool-hyp-death: killed again soon after its restart: started again after a backoff ($(grep -o 'started again in [0-9]* s (restart 2 in a row)' "$T/agent-b.log" | tail -n 1))" ||
		fail "pool-hyp-death: backoff" "$(grep 'h1: HA' "$T/agent-b.log" | tr '\n' '|')" ;;
	*) fail "pool-hyp-death: second why" "'$(why h1)'" ;;
	esac
else
	fail "pool-hyp-death: h1 second restart" "$(pool_lh a list --pool 2>&1 | tr '\n' '|') $(tail -n 5 "$T/agent-b.log" | tr '\n' '|')"
fi
[ "$(pool_hyps h1)" = 1 ] && pass "pool-hyp-death: one copy of h1 runs" || fail "pool-hyp-death: copies" "$(pool_hyps h1)"

# ---- p1 (plain) killed -9: recorded stopped, and why
kill_hyps p1 >/dev/null
if wait_until 30 eval '[ "$(pool_dom_field p1 3)" = stopped ]'; then
	[ -z "$(pool_runs_on p1)" ] && pass "pool-hyp-death: p1 (not HA) killed -9: recorded stopped, started nowhere" ||
		fail "pool-hyp-death: p1" "runs on $(pool_runs_on p1)"
else
	fail "pool-hyp-death: p1 stopped" "$(pool_lh a list --pool 2>&1 | tr '\n' '|')"
fi

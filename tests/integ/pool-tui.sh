#!/bin/bash
# The dashboard of a host in a pool (issue 24): a HOST column, and a row
# for each domain of the pool that another host runs.  Hosts a and b
# (own --root each) on the run's etcd cluster; d1 runs on a, d2 on b.
# `lodge top -b` on a and the dashboard itself in tmux (a real terminal)
# show both with their hosts; the pool's view is sampled by a child, so
# the dashboard keeps answering keys while etcd is slow (a frozen prefix
# would hang nothing either).  Its destroy of a pool domain goes through
# the pool, as lodge destroy does.  A pool of more domains than one job
# result holds (80 more, put in etcd directly: 12 KB of rows, past the
# job runner's 8 KiB) shows every one, the last as the first.  A host in
# no pool shows no HOST column (tui.sh).
. "$(dirname "$0")/../lib.sh"
integ_begin pool-tui kvm root minios cmd:tmux
pool_etcd_up
pool_test_prefix
tmux_begin "lodge-pooltui-$$"

pool_hosts_up "a b" 3 2 1
for d in d1:a:48 d2:b:40 d3:b:32; do
	IFS=: read -r n h m <<<"$d"
	printf 'name = "%s"\nmemory = %s\nvcpus = 1\nkernel = "%s"\n' "$n" "$m" "$MINIOS" >"$(pool_root a)/etc/lodge/domains/$n.cfg"
	pool_lh a create "$n" --on "$h" >/dev/null || { fail pool-tui "create $n on $h"; exit 1; }
done

# ---- lodge top -b on a
out=$(pool_lh a top -b -n 1 -d 0.2 2>&1)
hdr=$(echo "$out" | grep -E '^ +ID +NAME ')
d1=$(echo "$out" | awk '$2 == "d1"') d2=$(echo "$out" | awk '$2 == "d2"')
echo "$hdr" | grep -Eq '^ +ID +NAME +HOST +STATE' && echo "$d1" | grep -Eq '^ +[0-9]+ +d1 +a +running ' &&
	echo "$d2" | grep -Eq '^ +- +d2 +b +running +- +40 ' &&
	pass "lodge top -b on a pool host: a HOST column; d1 runs here on a, d2 on b with the pool's word and memory" ||
	fail "pool-tui: top -b" "$(echo "$out" | tail -n 4 | tr '\n' '|')"

# ---- the dashboard in tmux
tmux_open dashboard 100 24 "TERM=xterm $LODGE --root $(pool_root a) -d 0.5; sleep 30"
if shows 10 '^ +[0-9]+ d1 +a +run ' && shows 10 '^ +- d2 +b +run ' && screen | sed -n 3p | grep -q 'ID.*NAME.*HOST.*ST'; then
	pass "the dashboard on a pool host: a HOST column, d1 on a with its figures, d2's row on b"
else
	fail "pool-tui: dashboard" "$(screen | sed -n 3,8p | tr '\n' '|')"
fi
# d2 moves its state in the pool: the row follows (stopped from b's side)
pool_lh b destroy d2 >/dev/null 2>&1
if shows 10 '^ +- d2 +- +stopp' || shows 2 '^ +- d2 +b +stopp'; then
	pass "the dashboard follows the pool: d2 destroyed on b shows stopped"
else
	fail "pool-tui: follows" "$(screen | sed -n 3,8p | tr '\n' '|')"
fi
# 80 columns: the names give way (down to 10), every column still fits
tmux_open dashboard 80 24 "TERM=xterm $LODGE --root $(pool_root a) -d 0.5; sleep 30"
if shows 10 '^ +[0-9]+ d1 +a +run ' && screen | sed -n 3p | grep -q 'ID NAME.*HOST.*DISK/s' && [ "$(screen | wc -L)" -le 80 ]; then
	pass "the dashboard on a pool host at 80x24: every column fits, HOST among them"
else
	fail "pool-tui: 80 columns" "$(screen | sed -n 3,6p | tr '\n' '|')"
fi
# destroy from the dashboard goes through the pool, as lodge destroy does:
# d3, which b runs, destroyed from a's dashboard (desired stopped and how
# in etcd first; b's agent ends it)
press /; type_text d3; press Enter Home Down
if shows 10 '^ +- d3 +b +run '; then
	press D; shows 5 'Destroy d3\?' && press y
	stopped() { [ "$(pool_etcdctl get --print-value-only "$PREFIX/domains/d3/desired")" = stopped ] && [ -z "$(pool_runs_on d3)" ]; }
	wait_until 20 stopped && [ "$(pool_etcdctl get --print-value-only "$PREFIX/domains/d3/stop")" = destroy ] &&
		pass "the dashboard's destroy of a pool domain goes through the pool: d3 (on b) destroyed from a's dashboard, etcd says desired stopped by destroy" ||
		fail "pool-tui: destroy through the pool" "desired $(pool_etcdctl get --print-value-only "$PREFIX/domains/d3/desired"), runs on '$(pool_runs_on d3)'; $(screen | tail -n 2 | tr '\n' '|')"
else
	fail "pool-tui: select d3" "$(screen | sed -n 3,8p | tr '\n' '|')"
fi

# ---- more rows than an 8 KiB job result: far00..far79, stopped, placed on
# a host "far" that is not in the pool (no agent acts on them).  Put in
# two transactions (etcd takes 128 operations in one; no compares, these
# as the success branch, none as the failure one).
FAR=80
for half in 0 1; do
	for i in $(seq $((half * FAR / 2)) $(((half + 1) * FAR / 2 - 1))); do
		n=$(printf 'far%02d' "$i")
		printf 'put %s stopped\nput %s far\n' "$PREFIX/domains/$n/desired" "$PREFIX/domains/$n/placement"
	done | { echo; cat; echo; echo; } | pool_etcdctl txn >/dev/null || fail "pool-tui: many rows" "etcdctl txn"
done
far_rows() { pool_lh a top -b -n 1 -d 0.2 2>/dev/null | awk '$1 == "-" && $2 ~ /^far[0-9][0-9]$/ && $3 == "far" && $4 == "stopped"'; }
far_all() { [ "$(far_rows | awk '{ print $2 }' | sort -u | wc -l)" -eq "$FAR" ]; }
if wait_until 20 far_all && far_rows | grep -q ' far00 ' && far_rows | grep -q ' far79 '; then
	pass "lodge top -b: a pool of $FAR more domains (rows past 8 KiB) shows every one, far00 to far79, on host far, stopped"
else
	fail "pool-tui: many rows, top -b" "$(far_rows | wc -l) of $FAR far rows: $(far_rows | tail -n 2 | tr '\n' '|')"
fi
tmux_open dashboard 100 24 "TERM=xterm $LODGE --root $(pool_root a) -d 0.5; sleep 30"
# all counted in the header (d1, d2, d3 and the 80), then the last found
shows 10 "domains $((FAR + 3)):" && press / && type_text far79 && press Enter
if shows 10 '^ +- far79 +far +stopp'; then
	pass "the dashboard: all $((FAR + 3)) of the pool's domains counted, the last of them (past 8 KiB of rows) shown, far79 on far, stopped"
else
	fail "pool-tui: many rows, dashboard" "$(screen | sed -n 2,6p | tr '\n' '|')"
fi
press q

#!/bin/bash
# The dashboard of a host in a pool (issue 24): a HOST column, and a row
# for each domain of the pool that another host runs.  Hosts a and b
# (own --root each) on the run's etcd cluster; d1 runs on a, d2 on b.
# `lodge top -b` on a and the dashboard itself in tmux (a real terminal)
# show both with their hosts; the pool's view is sampled by a child, so
# the dashboard keeps answering keys while etcd is slow (a frozen prefix
# would hang nothing either).  Its destroy of a pool domain goes through
# the pool, as lodge destroy does.  A host in no pool shows no HOST column
# (tui.sh).
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
press q

#!/bin/bash
# The dashboard of a pool host when etcd stops answering (issue 33, 4/5):
# it keeps the pool's last sample, and says on a line of its own how old
# that sample is and why no newer one came (while its question is out,
# "pool as of 3 s ago: etcd has not answered for 2 s"; once it failed,
# "pool as of 8 s ago: the pool's etcd cannot be reached..."), within 80x24, in bold on a terminal
# without colour (vt100); once etcd answers again the line goes.  A
# cluster of the test's own, frozen by SIGSTOP to its members' pids and
# thawed by SIGCONT; host a joins it with no agent (nothing here runs a
# guest: the pool's rows are put in etcd directly).  As root, in a
# network namespace of its own: the fixture's bridge stays in it.
if [ "$(id -u)" = 0 ] && [ -z "${POOL_TUI_STALE_NETNS:-}" ] && command -v unshare >/dev/null; then
	POOL_TUI_STALE_NETNS=1 exec unshare --net bash "$0" "$@"
fi
[ -n "${POOL_TUI_STALE_NETNS:-}" ] && ip link set lo up
. "$(dirname "$0")/../lib.sh"
integ_begin pool-tui-stale root cmd:tmux
pool_etcd_up own
pool_test_prefix
tmux_begin "lodge-pooltuistale-$$"

# members SIG: SIG to each member of this test's cluster, by its pid, only
# a pid whose command line is an etcd of this cluster's data dir.
members() {
	local i p
	for i in $(seq 1 "$POOL_ETCD_MEMBERS"); do
		p=${POOL_ETCD_PIDS[$((i - 1))]:-}
		case $p in ''|*[!0-9]*) continue ;; esac
		[ "$p" -gt 1 ] || continue
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "--data-dir $POOL_ETCD_DIR/m$i.etcd" &&
			kill "-$1" "$p" 2>/dev/null
	done
}
# thawed before the fixture's stop, whatever way the test ends
at_exit 'members CONT'

pool_hosts_up --no-agents a 3 2 1
printf 'put %s stopped\nput %s far\n' "$PREFIX/domains/st1/desired" "$PREFIX/domains/st1/placement" |
	{ echo; cat; echo; echo; } | pool_etcdctl txn >/dev/null || { fail pool-tui-stale "etcdctl txn"; exit 1; }

row='^ +- st1 +far +stopp'
stale='^pool as of [0-9]+ (s|min) ago: '
tmux_open dash 80 24 "TERM=vt100 $LODGE --root $(pool_root a) -d 0.5; sleep 30"
if shows 20 "$row" && lacks 'pool as of|pool not read'; then
	pass "a pool host's dashboard at 80x24: st1's row from etcd, on far, stopped; no word of an old sample"
else
	fail "pool-tui-stale: first sample" "$(screen | sed -n 3,8p | tr '\n' '|')"
	exit 1
fi

# ---- etcd frozen: no answer at all (connections are taken, never answered)
members STOP
# first the job out and waiting (etcd's client waits 5 s, then asks
# whether any member answers at all, 2 s more)
if shows 20 "${stale}etcd has not answered for [0-9]+ s"; then
	pass "etcd stopped: while the dashboard's question is out, how old the sample is and how long etcd has not answered: '$(screen | grep -E "$stale")'"
else
	fail "pool-tui-stale: etcd slow" "$(screen | tail -n 5 | tr '\n' '|')"
fi
age() { screen | sed -nE 's/^pool as of ([0-9]+) s ago: .*/\1/p' | head -n 1; }
if shows 30 "${stale}the pool's etcd cannot be reached"; then
	line=$(screen | grep -E "$stale")
	if has "$row" && [ "$(screen | wc -L)" -le 80 ] && [ "$(screen | grep -nE "$stale" | cut -d: -f1)" -lt 23 ]; then
		pass "etcd stopped: the last sample stays (st1's row) with how old it is and why, above the status line, within 80 columns: '$line'"
	else
		fail "pool-tui-stale: the old sample" "$(screen | tr '\n' '|')"
	fi
else
	fail "pool-tui-stale: etcd stopped" "no '${stale}...cannot be reached' line: $(screen | tail -n 5 | tr '\n' '|')"
fi
first=$(age)
older() { local now; now=$(age); [ -n "$now" ] && [ -n "$first" ] && [ "$now" -gt "$first" ]; }
if wait_until 20 older; then
	pass "... and the age grows while etcd stays stopped ($first s, then $(age) s)"
else
	fail "pool-tui-stale: the age" "from '$first' to '$(age)': $(screen | grep -E 'pool as of' | tr '\n' '|')"
fi

# ---- etcd answers again: the line goes, the rows are the pool's again
members CONT
if hides 30 'pool as of|pool not read' && has "$row"; then
	pass "etcd answering again: the line is gone and st1's row is fresh"
else
	fail "pool-tui-stale: etcd back" "$(screen | tail -n 5 | tr '\n' '|')"
fi
press q

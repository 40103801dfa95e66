# shellcheck shell=bash
# The pool tests' fixture (issue 24, src/pool/README.md): a three-member
# etcd cluster of Debian's etcd-server, sourced by tests/lib.sh.
#
# pool_etcd_up: the cluster is up and answers; sets
#   POOL_ETCD_URLS      the members' client URLs on loopback, comma-separated
#   POOL_ETCD_DIR       its directory (data dirs, logs, pids, env)
#   POOL_ETCD_PIDS      the members' pids (member N: ${POOL_ETCD_PIDS[N-1]})
#   POOL_ETCD_NET_URLS  the same members on the fixture's bridge ($POOL_BRIDGE,
#                       $POOL_NET.1/24), for hosts in network namespaces
#                       (pool_host_ns) to reach over their veths
# or skips the test (etcd not installed, not root).  Under tests/run.sh
# ($LODGE_POOL_FIXTURE set) one cluster serves every pool test of the run
# and run.sh stops it at the end (pool_etcd_stop); a test run alone has
# its own, stopped at its exit.  Each test keeps to its own key prefix
# (pool_prefix), so they share the cluster without seeing each other.
#
# Members listen on loopback ports picked free at start; nothing here
# uses or touches a system etcd.service (2379/2380).

POOL_ETCD_MEMBERS=3

pool_port_free() { ! ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }

# pool_etcd_start DIR: three members in DIR, each its own data dir; the
# URLs and pids written to DIR/env.  The members are started in their
# own session, children of a subshell that has gone (so not of the test's
# shell): a test's exit, which ends its own processes, leaves a shared
# cluster running, and the shell says nothing when one is killed.
pool_etcd_start() {
	local dir=$1 base i try cluster= urls= pids=()
	mkdir -p "$dir"
	for try in $(seq 1 50); do
		base=$((20000 + (RANDOM % 1200) * 10))   # below the ephemeral ports (32768-)
		for i in 1 2 3 4 5 6; do pool_port_free $((base + i)) || continue 2; done
		break
	done
	# The bridge the hosts' namespaces reach etcd on: named and numbered
	# after the ports, so two clusters on the machine never share one.
	local idx=$(((base - 20000) / 10)) br net neturls=
	br=lpool$idx net=10.$((100 + idx / 250)).$((idx % 250))
	ip link add "$br" type bridge 2>/dev/null && ip addr add "$net.1/24" dev "$br" && ip link set "$br" up ||
		{ br= net=; }
	for i in $(seq 1 $POOL_ETCD_MEMBERS); do
		cluster+="${cluster:+,}m$i=http://127.0.0.1:$((base + 2 * i))"
		urls+="${urls:+,}http://127.0.0.1:$((base + 2 * i - 1))"
		[ -n "$net" ] && neturls+="${neturls:+,}http://$net.1:$((base + 2 * i - 1))"
	done
	for i in $(seq 1 $POOL_ETCD_MEMBERS); do
		# the member's command line kept: pool_member_start runs it again
		printf '%q ' etcd --name "m$i" --data-dir "$dir/m$i.etcd" \
			--listen-client-urls "http://127.0.0.1:$((base + 2 * i - 1))${net:+,http://$net.1:$((base + 2 * i - 1))}" \
			--advertise-client-urls "http://127.0.0.1:$((base + 2 * i - 1))" \
			--listen-peer-urls "http://127.0.0.1:$((base + 2 * i))" \
			--initial-advertise-peer-urls "http://127.0.0.1:$((base + 2 * i))" \
			--initial-cluster "$cluster" --initial-cluster-token "lodge-test-$base" \
			--initial-cluster-state new >"$dir/m$i.cmd"
		pool_member_run "$dir" "$i"
		pids+=("$(cat "$dir/m$i.pid")")
	done
	printf 'POOL_ETCD_URLS=%s\nPOOL_ETCD_PIDS=(%s)\nPOOL_ETCD_BASE=%s\nPOOL_ETCD_NET_URLS=%s\nPOOL_BRIDGE=%s\nPOOL_NET=%s\n' \
		"$urls" "${pids[*]}" "$base" "$neturls" "$br" "$net" >"$dir/env"
}

# pool_member_run DIR N: member N of DIR's cluster started (again) from its
# command line, its pid in DIR/mN.pid.
pool_member_run() {
	(eval "exec setsid $(cat "$1/m$2.cmd")" >>"$1/m$2.log" 2>&1 </dev/null &
	 echo $! >"$1/m$2.pid")
}

# pool_etcd_healthy: every member up and the cluster with a leader.
pool_etcd_healthy() {
	ETCDCTL_API=3 etcdctl --endpoints="$POOL_ETCD_URLS" --command-timeout=2s endpoint health >/dev/null 2>&1
}

# pool_etcd_up own: a cluster of the test's own, never shared (for a test
# that kills members).
pool_etcd_up() {
	local shared=${LODGE_POOL_FIXTURE:-} lock
	[ "${1:-}" = own ] && shared=
	command -v etcd >/dev/null || { skip "$INTEG_LABEL" "etcd (etcd-server) not installed"; exit 0; }
	command -v etcdctl >/dev/null || { skip "$INTEG_LABEL" "etcdctl (etcd-client) not installed"; exit 0; }
	if [ -n "$shared" ]; then
		POOL_ETCD_DIR=$shared
		mkdir -p "$shared"
		# A directory as the lock, not flock: the members started under a
		# flock would inherit its descriptor and hold it for good.  One
		# left by a test killed mid-start is broken after a minute.
		for lock in $(seq 600); do mkdir "$shared/.lock" 2>/dev/null && break; sleep 0.1; done
		[ -f "$shared/env" ] || pool_etcd_start "$shared"
		rmdir "$shared/.lock" 2>/dev/null
	else
		POOL_ETCD_DIR=$(mktemp -d "$T/etcd.XXXXXX")
		pool_etcd_start "$POOL_ETCD_DIR"
		at_exit "pool_etcd_stop '$POOL_ETCD_DIR'"
	fi
	. "$POOL_ETCD_DIR/env"
	at_exit pool_procs_end
	wait_until 60 pool_etcd_healthy || {
		fail "$INTEG_LABEL" "the test's etcd cluster did not come up: $(tail -n 3 "$POOL_ETCD_DIR"/m1.log | tr '\n' ' ')"
		exit 1
	}
}

# pool_hosts_local: at a test's exit, before lib.sh's integ_exit destroys
# each root's domains, its roots forget the pool (their pool_* lines
# removed): a pool host's destroy goes through the pool, whose agents are
# gone by then, and left the lodge-hyps running.  Only roots under $T.
pool_hosts_local() {
	local r
	for r in "${INTEG_ROOTS[@]}"; do
		case $r in "$T"/*) ;; *) continue ;; esac
		[ -f "$r/etc/lodge/lodge.conf" ] && sed -i '/^pool_/d' "$r/etc/lodge/lodge.conf"
	done
}

# pool_procs_end: the last step of a pool test's exit (at_exit, from
# pool_etcd_up): every pool agent and lodge-hyp still running whose
# command line names this test's own directory ($T) is killed, whatever
# way the test ended; each pid a number above 1, its command line read
# from /proc.  An agent the test started with & is its child and has had
# its SIGTERM from integ_exit; a lodge-hyp is nobody's child.
pool_procs_end() {
	local pid args
	[ -n "${T:-}" ] && [ -d "$T" ] || return 0
	while read -r pid args; do
		case $pid in ''|*[!0-9]*) continue ;; esac
		[ "$pid" -gt 1 ] && [ "$pid" != $$ ] || continue
		case " $args " in
		*" lodge-hyp "*"--runtime-dir $T/"*|*"/lodge-hyp "*"--runtime-dir $T/"*|*"/lodge --root $T/"*" pool-agent "*)
			kill -KILL "$pid" 2>/dev/null ;;
		esac
	done < <(ps -eo pid=,args=)
}

# pool_etcd_stop DIR: the members of DIR's cluster killed (each checked to
# be an etcd with DIR's data dir: a pid may have been reused), DIR removed.
pool_etcd_stop() {
	local dir=$1 p POOL_ETCD_PIDS=() POOL_BRIDGE=
	[ -f "$dir/env" ] || return 0
	. "$dir/env"
	[ -n "$POOL_BRIDGE" ] && ip link del "$POOL_BRIDGE" 2>/dev/null
	for p in "${POOL_ETCD_PIDS[@]}"; do
		case $p in ''|*[!0-9]*) continue ;; esac
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "--data-dir $dir/" && kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$dir"
}

# pool_rev: etcd's revision now.  pool_states_since REV KEY: what KEY (a
# host's record) said since REV, in order, from etcd's history (no watch
# left running): its state for each put, "gone" for a delete.
pool_rev() {
	pool_etcdctl get / --limit 1 -w json | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])'
}
pool_states_since() {
	ETCDCTL_API=3 timeout 2 etcdctl --endpoints="$POOL_ETCD_URLS" watch --rev="$1" "$2" 2>/dev/null |
		awk '$0 == "PUT" { want = 2; next } $0 == "DELETE" { print "gone"; want = 0; next }
		     want == 2 { want = 1; next }
		     want == 1 { if (match($0, /"state":"[a-z]*"/)) print substr($0, RSTART + 9, RLENGTH - 10); want = 0 }' |
		uniq | tr '\n' ' '
}

# pool_prefix: this test's own key prefix in the shared cluster.
pool_prefix() { echo "/lodge-test/$(basename "$0" .sh)-$$"; }

# pool_etcdctl ARGS...: etcdctl (v3) on the test's cluster.
pool_etcdctl() { ETCDCTL_API=3 etcdctl --endpoints="$POOL_ETCD_URLS" --command-timeout=5s "$@"; }

# pool_member_kill N: member N (1-3) killed, by its pid.
# Only a pid whose command line is an etcd of this cluster's data dir.
pool_member_kill() {
	local p=${POOL_ETCD_PIDS[$(($1 - 1))]:-}
	case $p in ''|*[!0-9]*) return 1 ;; esac
	tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "--data-dir $POOL_ETCD_DIR/m$1.etcd" &&
		kill -KILL "$p" 2>/dev/null
}

# pool_member_start N: member N, killed, started again with its data dir
# (POOL_ETCD_PIDS updated).
pool_member_start() {
	pool_member_run "$POOL_ETCD_DIR" "$1"
	POOL_ETCD_PIDS[$1 - 1]=$(cat "$POOL_ETCD_DIR/m$1.pid")
	sed -i "s/^POOL_ETCD_PIDS=.*/POOL_ETCD_PIDS=(${POOL_ETCD_PIDS[*]})/" "$POOL_ETCD_DIR/env"
}

# pool_free_port: a loopback port nobody listens on (for "a member that is down").
pool_free_port() {
	local p
	while :; do
		p=$((10000 + RANDOM % 10000))
		pool_port_free "$p" && { echo "$p"; return; }
	done
}

# pool_host_ns NAME N: a Lodge "host" NAME in a network namespace of its
# own ($POOL_NS_NAME), reaching etcd over a veth ($POOL_VETH_NAME, on the
# root side, in $POOL_BRIDGE) at $POOL_NET.(10+N); deleted at the test's
# exit (the veth with it).  Skips the test where that cannot be made.
declare -A POOL_NS POOL_VETH
pool_host_ns() {
	local name=$1 n=$2 ns veth
	[ -n "${POOL_BRIDGE:-}" ] || { skip "$INTEG_LABEL" "no bridge for the pool's hosts (cannot create one)"; exit 0; }
	ns=lp-$name-$$ veth=lp$$$name
	netns_add "$ns"
	ip link add "$veth" type veth peer name eth0 netns "$ns" &&
		ip link set "$veth" master "$POOL_BRIDGE" up &&
		ip -n "$ns" addr add "$POOL_NET.$((10 + n))/24" dev eth0 &&
		ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up ||
		{ skip "$INTEG_LABEL" "cannot give namespace $ns a veth"; exit 0; }
	at_exit "ip link del '$veth' 2>/dev/null"
	POOL_NS[$name]=$ns POOL_VETH[$name]=$veth
}

# A pool test's hosts: each a Lodge root of its own, $T/host-NAME, joined
# to the test's prefix ($PREFIX, set and its keys removed at the test's
# exit by pool_test_prefix).  POOL_HOSTS names them, in order.
POOL_HOSTS=
declare -A POOL_AGENT
pool_test_prefix() {
	PREFIX=$(pool_prefix)
	at_exit 'pool_etcdctl del --prefix "$PREFIX/" >/dev/null 2>&1'
}

# pool_root HOST: HOST's root.  pool_lh HOST ARGS...: lodge on HOST's root,
# in HOST's namespace where pool_host_ns gave it one.
pool_root() { echo "$T/host-$1"; }
pool_lh() { local h=$1; shift; lodge_at "$(pool_root "$h")" "${POOL_NS[$h]:-}" "$@"; }

# pool_agent_start HOST: HOST's pool agent in the background (in HOST's
# namespace, if any), its stderr in $T/agent-HOST.log, its pid ($!) in
# POOL_AGENT[HOST].  pool_agent_kill HOST: that agent killed (-9) and
# reaped: only the pid this test started, a number above 1, never another.
pool_agent_start() {
	if [ -n "${POOL_NS[$1]:-}" ]; then
		ip netns exec "${POOL_NS[$1]}" "$LODGE" --root "$(pool_root "$1")" pool-agent 2>>"$T/agent-$1.log" &
	else
		"$LODGE" --root "$(pool_root "$1")" pool-agent 2>>"$T/agent-$1.log" &
	fi
	POOL_AGENT[$1]=$!
}
pool_agent_kill() {
	local p=${POOL_AGENT[$1]:-}
	case $p in ''|*[!0-9]*) return 1 ;; esac
	[ "$p" -gt 1 ] || return 1
	{ kill -KILL "$p"; wait "$p"; } 2>/dev/null
}

# pool_host_state HOST [VIEWER]: HOST's state in the pool (up, leaving,
# fenced...), as VIEWER's (default a) pool-list shows it.  pool_dom_field DOMAIN COLUMN: a column
# of DOMAIN's row in host a's list --pool (2 host, 3 state).
pool_host_state() { pool_lh "${2:-a}" pool-list -o tsv -H 2>/dev/null | awk -F'\t' -v h="$1" '$1 == h { print $2 }'; }
pool_dom_field() { pool_lh a list --pool -o tsv -H 2>/dev/null | awk -F'\t' -v d="$1" -v c="$2" '$1 == d { print $c }'; }

# pool_all_up [HOST...]: every HOST (default: $POOL_HOSTS) is up.
pool_all_up() {
	local h all
	if [ $# -eq 0 ]; then read -ra all <<<"$POOL_HOSTS"; set -- "${all[@]}"; fi
	for h in "$@"; do [ "$(pool_host_state "$h")" = up ] || return 1; done
}

# pool_runs_on DOMAIN: the hosts (of $POOL_HOSTS, run together) whose own
# lodge list shows DOMAIN.
pool_runs_on() {
	local h r=""
	for h in $POOL_HOSTS; do pool_lh "$h" list -o tsv -H 2>/dev/null | cut -f1 | grep -qx "$1" && r+="$h"; done
	echo "$r"
}

# pool_hyps DOMAIN: how many lodge-hyp supervisors of this test's roots run
# DOMAIN (the sandboxed child of each shares its command line: parents only).
pool_hyps() {
	local pid ppid args n=0
	while read -r pid ppid args; do
		case " $args " in *"lodge-hyp "*"--name $1 "*"--runtime-dir $T/"*) ;; *) continue ;; esac
		case "$(ps -o args= -p "$ppid" 2>/dev/null)" in *lodge-hyp*) continue ;; esac
		n=$((n + 1))
	done < <(ps -eo pid=,ppid=,args=)
	echo $n
}

# pool_event_ms HOST DOMAIN EVENT: when HOST's event log first has it (ms
# since the epoch); nothing if it has not.
pool_event_ms() {
	local when
	when=$(awk -v d="$2" -v e="$3" '$2 == d && $3 == e { print $1; exit }' "$(pool_root "$1")/var/log/lodge/lodge.log" 2>/dev/null)
	[ -n "$when" ] && echo $(($(date -d "$when" +%s%N) / 1000000))
}

# pool_hosts_up [--ns] [--no-agents] "HOSTS" TTL FENCE RESTART: each host of
# HOSTS made (appended to POOL_HOSTS): with --ns in a namespace of its own
# (pool_host_ns, host N of HOSTS at $POOL_NET.(10+N)) joining over its veth
# ($POOL_ETCD_NET_URLS), else on the loopback URLs; an integ_root with a
# domains dir, joined to $PREFIX with its lease TTL, fence deadline and
# restart delay in lodge.conf.  Then, unless --no-agents, each host's agent
# started and all of them up within 20 s.  The test fails and ends on the
# first host that cannot be made.
pool_hosts_up() {
	local ns=0 agents=1 h n=0 urls=$POOL_ETCD_URLS how=""
	while :; do
		case $1 in --ns) ns=1 urls=$POOL_ETCD_NET_URLS how=" over its veth" ;; --no-agents) agents=0 ;; *) break ;; esac
		shift
	done
	local hosts=$1 ttl=$2 fence=$3 restart=$4
	for h in $hosts; do
		n=$((n + 1))
		[ $ns = 1 ] && pool_host_ns "$h" $n
		integ_root "$(pool_root "$h")" "${POOL_NS[$h]:-}"
		mkdir -p "$(pool_root "$h")/etc/lodge/domains"
		pool_lh "$h" pool-join --etcd "$urls" --host "$h" --prefix "$PREFIX" >/dev/null ||
			{ fail "$INTEG_LABEL" "host $h cannot join$how"; exit 1; }
		pool_host_timing "$h" "$ttl" "$fence" "$restart"
		# Mini-OS is the tests' kernel: lent by lodge.conf, as a pool
		# config's kernel must be (SECURITY.md, "The pool's etcd").
		printf 'kernel_dirs = [ "%s" ]\n' "$(dirname "$MINIOS")" >>"$(pool_root "$h")/etc/lodge/lodge.conf"
		POOL_HOSTS+="${POOL_HOSTS:+ }$h"
		[ $agents = 1 ] && pool_agent_start "$h"
	done
	[ $agents = 1 ] && pool_wait_agents "$hosts"
	return 0
}

# pool_host_timing HOST TTL FENCE RESTART: HOST's lodge.conf given its lease
# TTL, fence deadline and restart delay.
pool_host_timing() {
	printf 'pool_lease_ttl = %s\npool_fence_deadline = %s\npool_restart_delay = %s\n' "$2" "$3" "$4" \
		>>"$(pool_root "$1")/etc/lodge/lodge.conf"
}

# pool_wait_agents "HOSTS" [CHECK]: every one of HOSTS up within 20 s (or
# CHECK true), else the test fails with the agents' logs and ends.
pool_wait_agents() {
	local hosts check=${2:-}
	read -ra hosts <<<"$1"
	if [ -n "$check" ]; then wait_until 20 "$check"; else wait_until 20 pool_all_up "${hosts[@]}"; fi ||
		{ fail "$INTEG_LABEL" "agents not up: $(cat "$T"/agent-*.log | tr '\n' '|')"; exit 1; }
}

# pool_minios_cfg NAME HA: a 32 MiB Mini-OS domain NAME (ha = HA, 1 or 0)
# in host a's domains_dir.  pool_create_on HOST NAME:HA...: each made so
# and created on HOST through the pool; the test fails and ends on the
# first that is not.
pool_minios_cfg() {
	printf 'name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\nha = %s\n' "$1" "$MINIOS" "$2" \
		>"$(pool_root a)/etc/lodge/domains/$1.cfg"
}
pool_create_on() {
	local host=$1 d
	shift
	for d; do
		pool_minios_cfg "${d%:*}" "${d#*:}"
		pool_lh a create "${d%:*}" --on "$host" >/dev/null || { fail "$INTEG_LABEL" "create ${d%:*} on $host"; exit 1; }
	done
}

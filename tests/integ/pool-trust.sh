#!/bin/bash
# The pool's etcd is a trust boundary (issue 31, defect 1; SECURITY.md
# "The pool's etcd"): a config an etcd writer puts under domains/NAME/
# (etcdctl put, no lodge create) is started by the placed host's agent
# only with what that host's lodge.conf lends (storage_dirs, kernel_dirs,
# bridges, or its own config of the domain).  A disk outside storage_dirs,
# a kernel outside kernel_dirs, a bridge lodge.conf does not name and a
# Lodge network on such a bridge are each refused: the domain's state in etcd says why, the agent's log has
# the line, no lodge-hyp starts and the disk is never opened (no lock on it
# in /proc/locks, no descriptor of it in the agent).  A config within what
# the host lends, put the same way, runs.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-trust kvm root minios
pool_etcd_up
pool_test_prefix
TTL=3
pool_hosts_up "a" $TTL 2 1
AGENT=${POOL_AGENT[a]}

# A root-only file outside storage_dirs: the attack's target.
mkdir -m 700 "$T/root-only" && head -c 1M /dev/zero >"$T/root-only/file" && chmod 600 "$T/root-only/file"
mkdir -p "$T/kern" && cp "$MINIOS" "$T/kern/evil.elf"
BR=lpt$$ NETBR=lpn$$
for b in "$BR" "$NETBR"; do
	ip link add "$b" type bridge && ip link set "$b" up && at_exit "ip link del '$b' 2>/dev/null" ||
		{ fail pool-trust "cannot make bridge $b"; exit 1; }
done
# A Lodge network of the host's (its config and its bridge, up), which
# lodge.conf's bridges does not name.
mkdir -p "$(pool_root a)/etc/lodge/networks"
printf 'subnet = "10.251.%s.0/24"\nbridge = "%s"\n' $(($$ % 250)) "$NETBR" >"$(pool_root a)/etc/lodge/networks/evnet.cfg"

# put_domain NAME TEXT: the attack: config, desired, placement written
# straight into etcd, as any etcd writer can.
put_domain() {
	local cfg
	cfg=$(python3 -c 'import json, sys; print(json.dumps({"text": sys.argv[1], "file": "/nowhere/x.cfg",
		"memory_mib": 32, "vcpus": 1, "ha": 0}))' "$2")
	pool_etcdctl put "$PREFIX/domains/$1/config" "$cfg" >/dev/null &&
		pool_etcdctl put "$PREFIX/domains/$1/desired" running >/dev/null &&
		pool_etcdctl put "$PREFIX/domains/$1/placement" a >/dev/null
}
state_of() { pool_etcdctl get "$PREFIX/domains/$1/state" --print-value-only; }
failed_with() { state_of "$1" | grep -q "\"state\":\"failed\".*$2"; }

# file_opened FILE: a lock on FILE's inode in /proc/locks, or a descriptor
# of it held by the agent or any lodge-hyp of this test.
file_opened() {
	local ino pid fd
	ino=$(stat -c %i "$1")
	grep -q ":$ino " /proc/locks && return 0
	for pid in "$AGENT" $(pgrep -f "lodge-hyp .*--runtime-dir $T/"); do
		for fd in /proc/"$pid"/fd/*; do
			[ "$(readlink "$fd" 2>/dev/null)" = "$1" ] && return 0
		done
	done
	return 1
}

refused() {   # LABEL NAME PATTERN TEXT
	local label=$1 name=$2 pat=$3
	put_domain "$name" "$4" || { fail "pool-trust: $label" "etcdctl put failed"; return; }
	if wait_until 20 failed_with "$name" "$pat" &&
	   grep -q "$name: cannot start it here: .*$pat" "$T/agent-a.log" &&
	   [ "$(pool_hyps "$name")" = 0 ] && ! file_opened "$T/root-only/file"; then
		pass "pool-trust: $label: refused, etcd's state and the agent's log say why, nothing started"
	else
		fail "pool-trust: $label" "state: $(state_of "$name"); hyps: $(pool_hyps "$name"); log: $(grep "$name" "$T/agent-a.log" | tail -n 2 | tr '\n' '|'); opened: $(file_opened "$T/root-only/file" && echo yes || echo no)"
	fi
}

refused "a disk outside storage_dirs" evdisk "disk $T/root-only/file (vda) is not this host's to give.*storage_dirs" \
	"name = \"evdisk\"
memory = 32
kernel = \"$MINIOS\"
disk = [ 'file:$T/root-only/file,vda,w' ]
"
refused "a kernel outside kernel_dirs" evkern "kernel $T/kern/evil.elf is not this host's to give.*kernel_dirs" \
	"name = \"evkern\"
memory = 32
kernel = \"$T/kern/evil.elf\"
"
refused "a bridge lodge.conf does not lend" evbr "bridge $BR, which is not this host's to give" \
	"name = \"evbr\"
memory = 32
kernel = \"$MINIOS\"
vif = [ 'bridge=$BR' ]
"
refused "a Lodge network whose bridge lodge.conf does not lend" evnet "bridge $NETBR (network evnet's), which is not this host's to give" \
	"name = \"evnet\"
memory = 32
kernel = \"$MINIOS\"
vif = [ 'network=evnet' ]
"

# What the host lends, put the same way: runs (the check refuses no more).
STORE=$(pool_root a)/var/lib/lodge/images
mkdir -p "$STORE" && head -c 1M /dev/zero >"$STORE/ok.img"
put_domain okdom "name = \"okdom\"
memory = 32
kernel = \"$MINIOS\"
disk = [ 'file:$STORE/ok.img,vda,w' ]
"
wait_until 20 eval 'state_of okdom | grep -q "\"state\":\"running\""' && [ "$(pool_hyps okdom)" = 1 ] &&
	pass "pool-trust: a config within storage_dirs and kernel_dirs, put by an etcd writer, runs" ||
	fail "pool-trust: lent config" "state: $(state_of okdom); log: $(grep okdom "$T/agent-a.log" | tail -n 2 | tr '\n' '|')"
pool_lh a destroy okdom >/dev/null 2>&1

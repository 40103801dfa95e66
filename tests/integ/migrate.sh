#!/bin/bash
# Live migration between two "hosts" on this machine: network namespaces
# hostA and hostB, each with its own --root and its own bridge lbr0, both
# bridges joined to a shared L2 segment (a third namespace, lan, with a
# bridge and an address to ping from); the migration stream runs over a
# separate veth pair (10.79.9.0/24); the disk is a sparse file on a path
# both configs name (shared storage).  Cases: an idle guest moves and its
# console carries on; a guest dirtying memory moves and its pages hold;
# the guest answers ping from lan across the hand-over (RARP/ARP); a
# receiver killed mid-migration leaves the guest running on the source
# and nothing on the target; a wrong secret is refused, and so is a
# non-loopback listener without one; a bridge the target lacks is refused
# before any memory moves.  What hostB lends an incoming domain: the idle
# guest's config is on both hosts (hostB lends what its own config names);
# the others are allowed by hostB's lodge.conf (storage_dirs, kernel_dirs,
# bridges); a guest whose disk is in neither is refused, naming the disk
# (its config signed with the migration secret proves only its sender).
. "$(dirname "$0")/../lib.sh"

integ_begin "live migration" kvm root minios
if [ ! -x "$LODGE" ] || [ ! -x "$HYP" ]; then skip "live migration" "lodge or lodge-hyp not built"; exit 0; fi
NSA=lodge-mig-a-$$ NSB=lodge-mig-b-$$ NSL=lodge-mig-l-$$
netns_add "$NSA" "$NSB" "$NSL"
RA=$T/hostA RB=$T/hostB
integ_root "$RA" "$NSA"
integ_root "$RB" "$NSB"
IPA=10.79.9.1 IPB=10.79.9.2 PORT=8002

a() { ip netns exec "$NSA" "$@"; }
b() { ip netns exec "$NSB" "$@"; }
l() { ip netns exec "$NSL" "$@"; }
la() { a timeout 60 "$LODGE" --root "$RA" "$@"; }
lb() { b timeout 60 "$LODGE" --root "$RB" "$@"; }

# hyp_pids ROOT [NAME]: the lodge-hyp processes (supervisor and sandboxed
# child) running for ROOT's domains (or one of them), by their command line.
hyp_pids() {
	local root=$1 name=$2 p args
	for p in /proc/[0-9]*; do
		args=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		case $args in *" --runtime-dir $root/run/lodge "*) ;; *) continue ;; esac
		[ -n "$name" ] && case $args in *" --name $name "*) ;; *) continue ;; esac
		echo "${p#/proc/}"
	done
}
descendants() {  # PID: its children, grandchildren, ...
	local c
	while read -r c; do
		echo "$c"; descendants "$c"
	done < <(awk -v p="$1" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null)
}
# What destroy left of either host: found by command line, so only ours.
at_exit 'for p in $(hyp_pids "$RA") $(hyp_pids "$RB"); do kill -9 "$p" 2>/dev/null; done'

# state ROOT NAME: the domain's state column in lodge list (empty: not listed)
state() { timeout 20 "$LODGE" --root "$1" list -o tsv 2>/dev/null | awk -F'\t' -v n="$2" '$1 == n { print $5 }'; }
running_on() { [ "$(state "$1" "$2")" = running ]; }
conlog() { timeout 20 "$LODGE" --root "$1" console --log "$2" 2>/dev/null | tr -d '\r'; }
shows() { conlog "$1" "$2" | grep -Eq -- "$3"; }
# say ROOT NAME CMD: type CMD on the domain's console
say() { (sleep 0.3; echo "$3"; sleep 0.7) | timeout 5 "$LODGE" --root "$1" console "$2" >/dev/null 2>&1; }
last_counter() { conlog "$1" "$2" | grep -E '^counter [0-9]+$' | tail -1 | awk '{ print $2 }'; }
first_counter() { conlog "$1" "$2" | grep -E '^counter [0-9]+$' | head -1 | awk '{ print $2 }'; }
counter_past() { local n; n=$(last_counter "$1" "$2"); [ -n "$n" ] && [ "$n" -gt "$3" ]; }
nothing_on_b() {  # NAME: no domain, no runtime dir, no lodge-hyp, no tap on hostB
	[ -z "$(state "$RB" "$1")" ] && [ ! -e "$RB/run/lodge/$1" ] && [ -z "$(hyp_pids "$RB" "$1")" ] &&
		! b ip -o link show | grep -q "vif-$1"
}
src_ended() {  # NAME: the source's lodge-hyp is gone and so is its runtime dir
	[ -z "$(hyp_pids "$RA" "$1")" ] && [ ! -e "$RA/run/lodge/$1" ]
}
gone_from_a() {  # NAME: runtime dir removed (by lodge-hyp, not by lodge list), no lodge-hyp left, not listed
	[ ! -e "$RA/run/lodge/$1" ] && [ -z "$(hyp_pids "$RA" "$1")" ] && [ -z "$(state "$RA" "$1")" ]
}
one_line() { tr '\r\n' '  ' | cut -c1-600; }

# ---- the two hosts, the lan, the management link ----------------------------------------
for ns in "$NSA" "$NSB" "$NSL"; do ip netns exec "$ns" ip link set lo up; done
l ip link add lan0 type bridge && l ip link set lan0 up && l ip addr add 10.79.0.1/24 dev lan0
for h in A B; do
	ns=$NSA; [ $h = B ] && ns=$NSB
	if ! ip netns exec "$ns" "$LODGE" bridge-create lbr0 >/dev/null; then
		fail "bridge-create on host$h" "could not create lbr0"; exit 0
	fi
	ip link add "up$h" netns "$ns" type veth peer name "la$h" netns "$NSL"
	ip netns exec "$ns" ip link set "up$h" master lbr0 up
	l ip link set "la$h" master lan0 up
done
ip link add mg0 netns "$NSA" type veth peer name mg0 netns "$NSB"
a ip addr add $IPA/24 dev mg0 && a ip link set mg0 up
b ip addr add $IPB/24 dev mg0 && b ip link set mg0 up
if ! a ping -c 1 -W 5 $IPB >/dev/null 2>&1; then fail "management link" "hostA cannot ping hostB"; exit 0; fi

head -c 32 /dev/urandom | base64 >"$T/secret" && chmod 600 "$T/secret"
head -c 32 /dev/urandom | base64 >"$T/wrong" && chmod 600 "$T/wrong"
mkdir -p "$T/shared"
truncate -s 64M "$T/shared/shared-disk.img"
truncate -s 64M "$T/private.img"
for r in "$RA" "$RB"; do
	mkdir -p "$r/etc/lodge/domains"
	printf 'migration_secret_file = "%s"\nmigration_listen = "0.0.0.0:%s"\n' "$T/secret" $PORT >"$r/etc/lodge/lodge.conf"
done
printf 'storage_dirs = [ "%s" ]\nkernel_dirs = [ "%s" ]\nbridges = [ "lbr0" ]\n' "$T/shared" "$(dirname "$MINIOS")" \
	>>"$RB/etc/lodge/lodge.conf"
# domain NAME MEMORY LASTIP RUN [BRIDGE [DISK]]: a config on hostA
domain() {
	cat >"$RA/etc/lodge/domains/$1.cfg" <<CFG
name = "$1"
memory = $2
kernel = "$MINIOS"
cmdline = "ip=10.79.0.$3/24 run=\\"$4\\""
disk = [ "file:${6:-$T/shared/shared-disk.img},xvda,w" ]
vif = [ "bridge=${5:-lbr0},mac=02:4c:00:00:79:$3" ]
on_reboot = "destroy"
CFG
}
# boot NAME: create on hostA and wait for its first run= command to show
boot() {
	if ! la create "$1" >"$T/$1.create" 2>&1 || ! wait_until 40 shows "$RA" "$1" "$2"; then
		fail "$1 boots on hostA" "$(cat "$T/$1.create"; conlog "$RA" "$1" | tail -3 | one_line)"
		return 1
	fi
}
# migrate NAME OUTFILE [ARGS...]: lodge migrate from hostA to hostB
migrate() {
	local name=$1 out=$2
	shift 2
	a timeout 120 "$LODGE" --root "$RA" migrate "$@" "$name" "$IPB:$PORT" >"$out" 2>&1
}
summary() {  # OUTFILE: "downtime D ms, R rounds" from the last line
	sed -n 's/.*\(downtime [0-9.]* ms, [0-9]* rounds, [0-9]* pages\).*/\1/p' "$1" | tail -1
}

# ---- a listener that must not start ------------------------------------------------------------
mkdir -p "$T/nosecret/etc/lodge"
msg=$(b timeout 10 "$LODGE" --root "$T/nosecret" migrate-receive --listen $IPB:8003 2>&1); rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'without a migration secret' <<<"$msg" &&
   ! grep -q '^listening' <<<"$msg"; then
	pass "migrate-receive on a non-loopback address without a secret refuses to start (exit $rc)"
else
	fail "non-loopback listener without a secret refused" "exit $rc: $msg"
fi

# ---- the receiver on hostB: address from lodge.conf, secret from lodge.conf --------------------
# (ip netns exec execs lodge: $! is the receiver itself; cleanup ends it)
b "$LODGE" --root "$RB" migrate-receive --listen $IPB:$PORT >"$T/recv.out" 2>&1 &
recv_pid=$!
if wait_for "$T/recv.out" "^listening on $IPB:$PORT \\(secret required\\)" 15; then
	pass "migrate-receive on hostB listens with lodge.conf's secret"
else
	fail "migrate-receive listens" "$(cat "$T/recv.out")"; exit 0
fi

# ---- case 1 and 3: an idle guest moves while lan pings it ---------------------------------------
# Its disk is outside hostB's storage_dirs: hostB's own config of idle
# lends it (the same file, written another way).
mkdir -p "$T/idle"
truncate -s 64M "$T/idle/disk.img"
domain idle 64 10 "memfill 16 5; counter 200" lbr0 "$T/idle/disk.img"
sed "s|$T/idle/disk.img|$T/idle/../idle/disk.img|" "$RA/etc/lodge/domains/idle.cfg" >"$RB/etc/lodge/domains/idle.cfg"
if boot idle '^counter 5$'; then
	# authentication first: a wrong secret is refused, the guest stays
	migrate idle "$T/wrong.out" --secret-file "$T/wrong"; rc=$?
	if [ $rc -ne 0 ] && grep -Eq 'could not prove|refused us|authentication failed' "$T/wrong.out" &&
	   ! grep -q '^round' "$T/wrong.out" && running_on "$RA" idle && nothing_on_b idle; then
		pass "a migration with the wrong secret is refused, the guest stays on hostA ($(grep -o 'refused us.*\|could not prove.*' "$T/wrong.out" | head -1))"
	else
		fail "wrong secret refused" "exit $rc: $(one_line <"$T/wrong.out"); hostA: $(state "$RA" idle), hostB: $(state "$RB" idle)"
	fi
	if grep -q 'does not know the migration secret' "$T/recv.out" && kill -0 $recv_pid 2>/dev/null; then
		pass "the receiver logs the refused peer and keeps listening"
	else
		fail "receiver after a refused peer" "$(one_line <"$T/recv.out")"
	fi

	l ping -n -i 0.1 -w 60 10.79.0.10 >"$T/ping.out" 2>&1 &
	ping_pid=$!
	if ! wait_for "$T/ping.out" 'icmp_seq=5 ' 15; then
		fail "lan pings the guest before migration" "$(one_line <"$T/ping.out")"
	fi
	before=$(last_counter "$RA" idle)
	if migrate idle "$T/idle.out" && grep -Eq "^migrated idle to $IPB:$PORT in [0-9]+ ms, downtime [0-9.]+ ms, [0-9]+ rounds, [0-9]+ pages$" "$T/idle.out"; then
		pass "an idle guest migrates from hostA to hostB ($(summary "$T/idle.out"))"
	else
		fail "idle guest migrates" "$(one_line <"$T/idle.out")"
	fi
	seq_end=$(grep -o 'icmp_seq=[0-9]*' "$T/ping.out" | tail -1 | tr -dc '0-9')
	if grep -Eq '^round [0-9]+: [0-9]+ pages sent, [0-9]+ dirty, [0-9.]+ MiB/s$' "$T/idle.out"; then
		pass "migrate prints its progress ($(grep '^round' "$T/idle.out" | tail -1))"
	else
		fail "migrate progress lines" "$(one_line <"$T/idle.out")"
	fi
	if wait_until 10 running_on "$RB" idle; then
		pass "lodge list on hostB shows it running"
	else
		fail "running on hostB" "$(timeout 10 "$LODGE" --root "$RB" list 2>&1 | one_line)"
	fi
	# The event logs of both hosts: gone out from one, come in on the other.
	if wait_for "$RA/var/log/lodge/lodge.log" " idle migrated-out uid=0,pid=[0-9]+ downtime " 10 &&
	   wait_for "$RB/var/log/lodge/lodge.log" " idle migrated-in uid=0,pid=[0-9]+ id " 10; then
		pass "the event logs say idle migrated out of hostA and in on hostB"
	else
		fail "migration in the event logs" "$(cat "$RA/var/log/lodge/lodge.log" "$RB/var/log/lodge/lodge.log" 2>&1 | tail -4)"
	fi
	if wait_for "$T/recv.out" "^received idle from $IPA$" 10; then
		pass "the receiver reports: received idle from $IPA"
	else
		fail "receiver reports the domain" "$(one_line <"$T/recv.out")"
	fi
	# The source must end cleanly: its lodge-hyp exits and removes its
	# runtime dir itself (lodge list is not run first: it would clean up a
	# stale one), and is not killed by its own sandbox.
	if wait_until 10 src_ended idle; then :; fi
	src_dir=$(ls "$RA/run/lodge/idle" 2>&1); src_log=$(one_line 2>/dev/null <"$RA/run/lodge/idle/lodge-hyp.log")
	list_err=$(timeout 20 "$LODGE" --root "$RA" list 2>&1 >/dev/null)
	if [ ! -e "$RA/run/lodge/idle" ] && [ -z "$(hyp_pids "$RA" idle)" ] && ! grep -q 'is gone' <<<"$list_err" &&
	   [ -z "$(state "$RA" idle)" ]; then
		pass "lodge list on hostA no longer shows it; its lodge-hyp ended cleanly and removed its runtime dir"
	elif [ -n "$src_log" ]; then
		fail "source lodge-hyp ends cleanly after the hand-over" "runtime dir left behind (${src_dir//$'\n'/ }); lodge list on hostA: '$list_err'; its lodge-hyp.log: $src_log"
	else
		fail "gone from hostA" "state '$(state "$RA" idle)'; lodge list: '$list_err'; hyp: $(hyp_pids "$RA" idle | one_line)"
	fi
	wait_until 10 counter_past "$RB" idle 0 || true      # its first tick here
	first=$(first_counter "$RB" idle)
	if [ -n "$before" ] && [ -n "$first" ] && [ "$first" -gt "$before" ] && wait_until 10 counter_past "$RB" idle $((first + 5)); then
		pass "its console continues on hostB: counter $before seen on hostA, then $first, ... $(last_counter "$RB" idle) on hostB"
	else
		fail "counter continues on hostB" "last on hostA $before, first on hostB '$first', last $(last_counter "$RB" idle)"
	fi
	say "$RB" idle memcheck
	if wait_until 10 shows "$RB" idle '^memcheck: ok 16 MiB$'; then
		pass "memcheck on hostB: ok 16 MiB"
	else
		fail "memcheck on hostB" "$(conlog "$RB" idle | grep memcheck | one_line)"
	fi
	# ping: replies after the hand-over mean lan0 learnt the guest's new port
	# (a background job ignores SIGINT, so count the replies ourselves)
	if [ -n "$seq_end" ] && wait_until 15 sh -c "grep -o 'icmp_seq=[0-9]*' '$T/ping.out' | tr -dc '0-9\n' | awk '\$1 > $seq_end + 20 { f = 1 } END { exit !f }'"; then
		kill $ping_pid 2>/dev/null
		wait $ping_pid 2>/dev/null
		tx=$(grep -o 'icmp_seq=[0-9]*' "$T/ping.out" | tr -dc '0-9\n' | sort -n | tail -1)
		rx=$(grep -o 'icmp_seq=[0-9]*' "$T/ping.out" | sort -u | wc -l)
		[ "$rx" -gt "$tx" ] && tx=$rx      # a reply to the highest sequence may be on its way
		if [ -n "$tx" ] && [ $((tx - rx)) -le 10 ]; then
			pass "the guest answers ping from lan during and after the migration ($rx of $tx replies, $((tx - rx)) lost, $((tx - seq_end)) after the hand-over)"
		else
			fail "ping across the migration" "$rx of $tx replies: $(tail -2 "$T/ping.out" | one_line)"
		fi
	else
		kill $ping_pid 2>/dev/null
		wait $ping_pid 2>/dev/null
		fail "ping replies after the hand-over" "last reply before the end of migrate: seq $seq_end; $(tail -3 "$T/ping.out" | one_line)"
	fi
	if l bridge fdb show br lan0 2>/dev/null | grep -q '02:4c:00:00:79:10 dev laB'; then
		pass "the lan bridge has found the guest's MAC on hostB's port (RARP/gratuitous ARP)"
	else
		fail "lan bridge learns the new port" "$(l bridge fdb show br lan0 | grep -i 02:4c | one_line)"
	fi
	lb destroy idle >/dev/null 2>&1
fi

# ---- case 7: a disk hostB does not lend ---------------------------------------------------------
domain stray 64 14 "counter 200" lbr0 "$T/private.img"
if boot stray '^counter 3$'; then
	migrate stray "$T/stray.out"; rc=$?
	if [ $rc -ne 0 ] && grep -q "its disk $T/private.img (xvda) is not this host's to give" "$T/stray.out" &&
	   ! grep -q '^round' "$T/stray.out" && running_on "$RA" stray && nothing_on_b stray &&
	   grep -q "refused domain from $IPA: its disk $T/private.img" "$T/recv.out"; then
		pass "hostB refuses a domain whose disk neither its config nor storage_dirs lends, naming the disk; it stays on hostA"
	else
		fail "disk hostB does not lend refused" "exit $rc: $(one_line <"$T/stray.out"); hostA: $(state "$RA" stray), hostB: $(state "$RB" stray)"
	fi
	la destroy stray >/dev/null 2>&1
fi

# ---- case 6: a bridge hostB does not have -----------------------------------------------------
a "$LODGE" bridge-create lbr1 >/dev/null
domain nobr 64 11 "counter 200" lbr1
if boot nobr '^counter 3$'; then
	migrate nobr "$T/nobr.out"; rc=$?
	if [ $rc -ne 0 ] && grep -q "bridge 'lbr1' does not exist" "$T/nobr.out" && ! grep -q '^round' "$T/nobr.out" &&
	   running_on "$RA" nobr && nothing_on_b nobr; then
		pass "the receiver refuses a domain whose bridge it lacks, before any memory moves; the guest stays on hostA"
	else
		fail "bridge missing on the receiver refused" "exit $rc: $(one_line <"$T/nobr.out"); hostA: $(state "$RA" nobr), hostB: $(state "$RB" nobr)"
	fi
	la destroy nobr >/dev/null 2>&1
fi

# ---- case 2: a guest dirtying memory in a loop moves ------------------------------------------
domain dirty 128 12 "memfill 16 7; dirty 32; counter 500"
if boot dirty '^dirty: pass [0-9]+'; then
	wait_until 20 shows "$RA" dirty '^dirty: pass ([3-9]|[1-9][0-9]+)$'
	if migrate dirty "$T/dirty.out" && grep -q '^migrated dirty to' "$T/dirty.out" &&
	   wait_until 10 running_on "$RB" dirty; then
		pass "a guest running dirty 32 migrates to hostB ($(summary "$T/dirty.out"))"
	else
		fail "dirtying guest migrates" "$(one_line <"$T/dirty.out")"
	fi
	p1=$(conlog "$RB" dirty | grep -E '^dirty: pass' | tail -1 | tr -dc '0-9')
	if wait_until 15 sh -c "'$LODGE' --root '$RB' console --log dirty 2>/dev/null | tr -d '\r' | grep -E '^dirty: pass' | tail -1 | tr -dc '0-9' | awk '\$1 > ${p1:-0}+0 { f = 1 } END { exit !f }'"; then
		pass "dirty keeps making passes on hostB"
	else
		fail "dirty continues on hostB" "$(conlog "$RB" dirty | tail -3 | one_line)"
	fi
	say "$RB" dirty "dirty stop"
	if wait_until 20 shows "$RB" dirty '^dirty: stopped after [0-9]+ passes, ok$'; then
		pass "after the migration: $(conlog "$RB" dirty | grep -E '^dirty: stopped' | tail -1)"
	else
		fail "dirty stop after the migration" "$(conlog "$RB" dirty | grep -E 'dirty: (stopped|BAD)|BAD' | one_line)"
	fi
	say "$RB" dirty memcheck
	if wait_until 10 shows "$RB" dirty '^memcheck: ok 16 MiB$'; then
		pass "memcheck after migrating a dirtying guest: ok 16 MiB"
	else
		fail "memcheck after the dirty migration" "$(conlog "$RB" dirty | grep memcheck | one_line)"
	fi
	if wait_until 10 gone_from_a dirty; then
		pass "the dirtying guest is gone from hostA"
	else
		fail "dirtying guest gone from hostA" "runtime dir: $(ls "$RA/run/lodge" 2>&1); lodge-hyp.log: $(one_line <"$RA/run/lodge/dirty/lodge-hyp.log" 2>/dev/null); list: $(state "$RA" dirty)"
	fi
	lb destroy dirty >/dev/null 2>&1
fi

# ---- case 4: the receiver dies mid-migration --------------------------------------------------
# The management link is throttled so pre-copy of a dirtying guest takes
# seconds a round; after the first progress line the receiver and the
# incoming lodge-hyp on hostB are killed.
domain victim 256 13 "memfill 32 9; dirty 32; counter 200"
if boot victim '^dirty: pass [0-9]+'; then
	a tc qdisc add dev mg0 root tbf rate 80mbit burst 64kb latency 100ms 2>/dev/null ||
		echo "note: no tbf qdisc; pre-copy is not throttled" >&2
	a timeout 120 "$LODGE" --root "$RA" migrate victim "$IPB:$PORT" >"$T/victim.out" 2>&1 &
	mig_pid=$!
	if wait_for "$T/victim.out" '^round 1:' 60; then
		killed="$recv_pid $(hyp_pids "$RB" victim | tr '\n' ' ')"
		# shellcheck disable=SC2046 # pids: one word each
		kill -9 $recv_pid $(descendants $recv_pid) $(hyp_pids "$RB" victim) 2>/dev/null
		wait $recv_pid 2>/dev/null
		i=0
		while kill -0 $mig_pid 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
		wait $mig_pid; rc=$?
		if grep -q 'migrated victim' "$T/victim.out"; then
			fail "receiver killed mid-migration" "the migration finished before the kill: $(one_line <"$T/victim.out")"
		elif [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'cannot migrate domain victim .*(it runs on here)' "$T/victim.out"; then
			pass "migrate fails when hostB's receiver and lodge-hyp ($killed) die after $(grep -c '^round' "$T/victim.out") rounds (exit $rc): $(grep -o 'cannot migrate.*' "$T/victim.out" | cut -c1-160)"
		else
			fail "migrate reports the lost receiver" "exit $rc: $(one_line <"$T/victim.out")"
		fi
		before=$(last_counter "$RA" victim)
		if running_on "$RA" victim && wait_until 10 counter_past "$RA" victim $((${before:-0} + 5)); then
			pass "the guest still runs on hostA: lodge list shows it running, counter $before then $(last_counter "$RA" victim)"
		else
			fail "guest still runs on hostA" "state '$(state "$RA" victim)', counter $before then $(last_counter "$RA" victim)"
		fi
		if wait_until 15 nothing_on_b victim; then
			pass "nothing is left on hostB: no domain, no runtime dir, no lodge-hyp, no tap"
		else
			fail "nothing left on hostB" "list: $(state "$RB" victim); run: $(ls "$RB/run/lodge" 2>&1); hyp: $(hyp_pids "$RB" victim | one_line); $(b ip -o link show | grep vif | one_line)"
		fi
		say "$RA" victim "dirty stop"
		if wait_until 20 shows "$RA" victim '^dirty: stopped after [0-9]+ passes, ok$'; then
			pass "its memory on hostA is intact after the failed migration (dirty stop: ok)"
		else
			fail "memory intact after the failed migration" "$(conlog "$RA" victim | grep -E 'dirty: stopped|BAD' | one_line)"
		fi
	else
		fail "receiver killed mid-migration" "no progress line: $(one_line <"$T/victim.out")"
		kill $mig_pid 2>/dev/null
	fi
	a tc qdisc del dev mg0 root 2>/dev/null
	la destroy victim >/dev/null 2>&1
fi
exit 0

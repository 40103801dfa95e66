#!/bin/bash
# Hot-plug of vifs into a running Mini-OS, on a bridge in this test's own
# network namespace: lodge network-attach makes the tap, puts it on the
# bridge and hands it to lodge-hyp; the guest probes the NIC (eth0, as it
# has no other; its address ip= from its command line) and answers ping
# through it;
# network-detach takes it back once the guest ejected it and the tap
# Lodge made is gone; refusals (a MAC the domain has, a vif that is not
# there) are one line and change nothing; attaching and detaching 20
# times leaves no descriptor, thread or tap behind.
. "$(dirname "$0")/../lib.sh"

integ_begin "vif hot-plug" kvm minios root netns

conlog() { lodge console --log "$1" 2>/dev/null | tr -d '\r'; }
shows() { conlog "$1" | grep -Eq -- "$2"; }
count() { conlog "$1" | grep -Ec -- "$2"; }
at_least() { local n=$1; shift; [ "$("$@")" -ge "$n" ]; }
added() { count n "net: eth0 added"; }
removed() { count n "net: eth0 removed"; }
vifs() { lodge network-list n 2>/dev/null | tail -n +2 | awk '{ print $2 }' | tr '\n' ' '; }
domain_pid() { local p c; p=$(field "$1" 9); c=$(pgrep -P "$p" | head -1); echo "${c:-$p}"; }

in_ns ip link set lo up
if ! lodge bridge-create hbr0 >/dev/null 2>&1 || ! in_ns ip addr add 10.82.0.1/24 dev hbr0; then
	fail "vif hot-plug" "cannot make bridge hbr0 in $NS"
	exit 0
fi
printf 'name = "n"\nmemory = 64\nvcpus = 1\nkernel = "%s"\nextra = "ip=10.82.0.2/24"\n' "$MINIOS" >"$DOMS/n.cfg"
if ! lodge create n >/dev/null 2>&1 || ! wait_until 30 shows n 'hotplug: PCI hot-plug on GPE 1'; then
	fail "vif hot-plug" "the guest did not boot: $(conlog n | tail -3)"
	exit 0
fi
pid=$(field n 9)
track_pid "$pid" $(pgrep -P "$pid")

# ---- 1. attach: the guest probes the NIC and answers ping through it -----------
out=$(lodge network-attach n bridge=hbr0 2>&1); rc=$?
tap=$(grep -o 'vif [^ ]*' <<<"$out" | awk '{ print $2 }')
if [ $rc -eq 0 ] && wait_until 10 shows n 'net: eth0 added \(slot [0-9]+\): ip 10.82.0.2'; then
	pass "network-attach: the guest probes the new NIC ($out)"
else
	fail "network-attach" "rc $rc: $out; console: $(conlog n | tail -3)"
fi
link=$(in_ns ip link show "$tap" 2>&1)
grep -q 'master hbr0' <<<"$link" && pass "its tap $tap is on the bridge" || fail "tap on the bridge" "$link"
in_ns ping -c 1 -W 5 10.82.0.2 >/dev/null 2>&1 && pass "the guest answers ping through the hot-plugged vif" ||
	fail "ping through the hot-plugged vif" "$(conlog n | tail -3)"
[ "$(vifs)" = "$tap " ] && pass "lodge network-list shows it" || fail "network-list" "$(lodge network-list n 2>&1)"

# ---- 2. refusals ----------------------------------------------------------------
mac=$(lodge network-list n 2>/dev/null | awk 'NR == 2 { print $3 }')
before=$(vifs)
o=$(lodge network-attach n "bridge=hbr0,mac=$mac" 2>&1); r=$?
[ $r -ne 0 ] && [ "$(wc -l <<<"$o")" -eq 1 ] && grep -q 'already' <<<"$o" && [ "$(vifs)" = "$before" ] &&
	pass "refused: a MAC the domain has ($o)" || fail "refused: a MAC the domain has" "rc $r: $o"
o=$(lodge network-detach n 5 2>&1); r=$?
[ $r -ne 0 ] && grep -q 'has no vif 5' <<<"$o" && [ "$(vifs)" = "$before" ] &&
	pass "refused: a detach of a vif that is not there ($o)" || fail "refused: detach of no vif" "rc $r: $o"
o=$(lodge network-detach n 02:00:00:00:00:09 2>&1); r=$?
[ $r -ne 0 ] && grep -q 'no vif with MAC' <<<"$o" && pass "refused: a MAC the domain has not ($o)" ||
	fail "refused: detach of an unknown MAC" "rc $r: $o"

# ---- 3. detach: ejected, the tap gone ------------------------------------------
out=$(lodge network-detach n "$mac" 2>&1); rc=$?
if [ $rc -eq 0 ] && shows n "net: eth0 removed" && [ -z "$(vifs)" ] && ! in_ns ip link show "$tap" >/dev/null 2>&1; then
	pass "network-detach by MAC: the guest ejected it, the tap Lodge made is gone"
else
	fail "network-detach" "rc $rc: $out; tap: $(in_ns ip link show "$tap" 2>&1 | head -1)"
fi
EVLOG=$ROOT/var/log/lodge/lodge.log
if wait_until 10 grep -Eq " n network-detach uid=0,pid=[0-9]+ vif $tap in PCI slot [0-9]+, ejected by the guest$" "$EVLOG" &&
	grep -Eq " n network-attach uid=0,pid=[0-9]+ vif $tap in PCI slot [0-9]+$" "$EVLOG"; then
	pass "the event log has the network-attach and the network-detach, with who asked"
else
	fail "event log: network-attach/-detach" "$(tail -3 "$EVLOG" 2>&1)"
fi

# ---- 4. 20 rounds: no leaks ------------------------------------------------------
dp=$(domain_pid n)
fds0=$(ls "/proc/$dp/fd" | wc -l); tasks0=$(ls "/proc/$dp/task" | wc -l)
base=$(added)
ok=0
for i in $(seq 1 20); do
	lodge network-attach n bridge=hbr0 >/dev/null 2>&1 || break
	wait_until 10 at_least $((base + i)) added || break
	in_ns ping -c 1 -W 5 10.82.0.2 >/dev/null 2>&1 || break
	lodge network-detach n 0 >/dev/null 2>&1 || break
	ok=$i
done
fds1=$(ls "/proc/$dp/fd" | wc -l); tasks1=$(ls "/proc/$dp/task" | wc -l)
[ "$ok" -eq 20 ] && pass "20 attaches and detaches, the guest answering ping each time" ||
	fail "20 vif rounds" "stopped at $((ok + 1)): $(conlog n | tail -3)"
[ "$fds1" -eq "$fds0" ] && [ "$tasks1" -eq "$tasks0" ] &&
	pass "no descriptor or thread leaked ($fds0/$tasks0 before, $fds1/$tasks1 after)" ||
	fail "leaks after 20 vif rounds" "fds $fds0 -> $fds1, threads $tasks0 -> $tasks1"
taps=$(in_ns ip -o link show master hbr0 2>/dev/null | wc -l)
[ "$taps" -eq 0 ] && pass "no tap left on the bridge" || fail "taps left" "$(in_ns ip -o link show master hbr0)"
lodge destroy n >/dev/null 2>&1

# ---- 5. a vif it started with, watched by libpcap, detached ---------------------
printf 'name = "b"\nmemory = 64\nvcpus = 1\nkernel = "%s"\nextra = "ip=10.82.0.3/24"\nvif = [ "bridge=hbr0" ]\n' \
	"$MINIOS" >"$DOMS/b.cfg"
if lodge create b >/dev/null 2>&1 && wait_until 30 shows b 'hotplug: PCI hot-plug' &&
	in_ns ping -c 1 -W 5 10.82.0.3 >/dev/null 2>&1; then
	track_pid "$(field b 9)" $(pgrep -P "$(field b 9)")
	out=$(lodge network-detach b 0 2>&1); rc=$?
	cp "$RUN/b/lodge-hyp.log" "$T/b-hyp.log" 2>/dev/null
	if [ $rc -eq 0 ] && shows b 'net: eth0 removed' && { [ "$(field b 5)" = "r-----" ] || [ "$(field b 5)" = running ]; } &&
		! grep -q seccomp "$RUN/b/lodge-hyp.log" 2>/dev/null; then
		pass "a boot vif under the address watch detaches; the domain runs on ($out)"
	else
		fail "detach of a watched boot vif" "rc $rc: $out; state $(field b 5); $(tail -5 "$T/b-hyp.log" 2>&1)"
	fi
	lodge destroy b >/dev/null 2>&1
else
	fail "a domain with a boot vif" "$(conlog b | tail -2)"
fi

# ---- 6. the address watch follows: a detached vif's watcher goes, the indexes
# stay right; a vif attached later is shown as not watched, with the reason ----
printf 'name = "c"\nmemory = 64\nvcpus = 1\nkernel = "%s"\nextra = "ip=10.82.0.5/24 ip1=10.82.0.6/24"\n' "$MINIOS" \
	>"$DOMS/c.cfg"
printf 'vif = [ "bridge=hbr0", "bridge=hbr0" ]\n' >>"$DOMS/c.cfg"
# addr_rows IDX: lodge addr c's rows of vif IDX; claims IDX ADDR: one is ADDR's
addr_rows() { lodge addr c 2>/dev/null | tail -n +2 | awk -v i="$1" '$1 == i'; }
claims() { addr_rows "$1" | grep -qF " $2 "; }
if lodge create c >/dev/null 2>&1 && wait_until 30 shows c 'hotplug: PCI hot-plug' &&
	in_ns ping -c 1 -W 5 10.82.0.5 >/dev/null 2>&1 && in_ns ping -c 1 -W 5 10.82.0.6 >/dev/null 2>&1; then
	track_pid "$(field c 9)" $(pgrep -P "$(field c 9)")
	dp=$(domain_pid c)
	if wait_until 10 claims 0 10.82.0.5 && wait_until 10 claims 1 10.82.0.6; then
		pass "lodge addr: each boot vif's address under its index ($(addr_rows 0 | head -1); $(addr_rows 1 | head -1))"
	else
		fail "lodge addr before the detach" "$(lodge addr c 2>&1)"
	fi
	lodge network-detach c 0 >/dev/null 2>&1
	in_ns ping -c 1 -W 5 10.82.0.6 >/dev/null 2>&1
	if wait_until 10 claims 0 10.82.0.6 && [ -z "$(addr_rows 1)" ] && ! lodge addr c 2>&1 | grep -q '10.82.0.5\|disappeared'; then
		pass "after detaching vif 0, vif 1 is vif 0 in lodge addr, with its own address"
	else
		fail "lodge addr after the detach" "$(lodge addr c 2>&1)"
	fi
	grep -qx netwatch /proc/"$dp"/task/*/comm 2>/dev/null && [ "$(grep -lx netwatch /proc/"$dp"/task/*/comm | wc -l)" = 1 ] &&
		pass "the watcher's thread runs on" || fail "watcher thread after the detach" "$(cat /proc/"$dp"/task/*/comm)"
	lodge network-attach c bridge=hbr0 >/dev/null 2>&1
	if wait_until 10 eval 'addr_rows 1 | grep -q "not watched: attached while the domain runs"' && claims 0 10.82.0.6; then
		pass "a vif attached later: lodge addr says it is not watched and why, vif 0 unchanged"
	else
		fail "lodge addr after an attach" "$(lodge addr c 2>&1)"
	fi
	lodge destroy c >/dev/null 2>&1
else
	fail "a domain with two boot vifs" "$(conlog c | tail -2)"
fi

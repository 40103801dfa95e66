#!/bin/bash
# virtio-net on taps and bridges, inside network namespaces this test makes
# and removes (the host's own interfaces are never touched): the host pings
# a Mini-OS guest, two guests ping each other, a burst arrives complete and
# in order, taps go with their domain, bad input leaves nothing behind.
. "$(dirname "$0")/../lib.sh"

integ_begin "virtio-net" kvm root minios netns
pids=()
NA= NB=    # the namespaces of the host NIC case, made further down
at_exit 'for n in $NA $NB; do ip netns del "$n" 2>/dev/null; done'

in_ns ip link set lo up
in_ns "$LODGE" bridge-create lbr0 || { fail "bridge-create" "could not create lbr0"; exit 0; }
in_ns ip addr add 10.77.0.1/24 dev lbr0
pass "bridge created over netlink"

# guest NAME IP TAP [MAC]: a Mini-OS guest on lbr0, console on a fifo.
guest() {
	local name=$1 ip=$2 tap=$3 mac=${4:+,mac=$4}
	mkfifo "$T/$name.in"
	in_ns "$HYP" --kernel "$MINIOS" --memory 64 --cmdline "ip=$ip/24" \
		--net "tap=$tap,bridge=lbr0$mac" <"$T/$name.in" >"$T/$name.out" 2>&1 &
	pids+=($!)
	eval "exec {fd_$name}>\"$T/$name.in\""
}
say() { local fd; eval "fd=\$fd_$1"; echo "$2" >&"$fd"; }

guest a 10.77.0.2 vif-a.0 02:4c:00:00:00:0a
guest b 10.77.0.3 vif-b.0
if wait_for "$T/a.out" 'minios> ' 30 && wait_for "$T/b.out" 'minios> ' 30; then
	pass "two guests boot with virtio-net"
else
	fail "two guests boot with virtio-net" "$(tail -2 "$T/a.out" "$T/b.out")"
fi

if in_ns ip link show vif-a.0 | grep -q 'master lbr0' && in_ns ip link show vif-a.0 | grep -q 'state UP\|,UP'; then
	pass "tap attached to the bridge and up"
else
	fail "tap attached to the bridge" "$(in_ns ip link show vif-a.0)"
fi
if grep -q '02:4c:00:00:00:0a' "$T/a.out"; then pass "guest sees the configured MAC"; else fail "configured MAC" "$(grep -i mac "$T/a.out")"; fi

if in_ns ping -c 3 -W 5 10.77.0.2 >"$T/ping.out" 2>&1; then
	pass "the host pings a guest through bridge, tap and virtio-net"
else
	fail "the host pings a guest" "$(tail -2 "$T/ping.out")"
fi

say a "ping 10.77.0.3 3"
if wait_for "$T/a.out" 'ping: 3/3 replies' 30; then
	pass "two guests on one bridge ping each other"
else
	fail "two guests ping each other" "$(grep ping "$T/a.out" | tail -2)"
fi

# A burst of 2000 numbered frames from guest a, captured on the bridge.
in_ns python3 - >"$T/burst.out" 2>&1 <<'PY' &
import socket, struct
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88b5))
s.bind(("lbr0", 0))
s.settimeout(20)
seqs = []
try:
    while len(seqs) < 2000:
        f = s.recv(2048)
        seqs.append(struct.unpack(">I", f[14:18])[0])
except socket.timeout:
    pass
print("got", len(seqs), "in-order" if seqs == list(range(len(seqs))) else "out-of-order")
PY
cap=$!
sleep 1
say a "net-send 2000 1000"
wait $cap
if grep -q 'got 2000 in-order' "$T/burst.out"; then
	pass "a burst of 2000 frames arrives complete and in order"
else
	fail "burst complete and in order" "$(cat "$T/burst.out")"
fi

# Deleting a bridge with vifs attached is refused.
msg=$(in_ns "$LODGE" bridge-delete lbr0 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'still has 2 interfaces attached' <<<"$msg"; then
	pass "deleting a bridge with vifs attached is refused"
else
	fail "bridge delete refused while in use" "$rc: $msg"
fi

# When a domain ends its tap is gone; the bridge stays.
say a "poweroff"
sleep 1
kill "${pids[0]}" 2>/dev/null
wait "${pids[0]}" 2>/dev/null
if ! in_ns ip link show vif-a.0 >/dev/null 2>&1 && in_ns ip link show lbr0 >/dev/null 2>&1; then
	pass "the domain's tap is gone when it ends; the bridge stays"
else
	fail "tap gone with its domain" "$(in_ns ip -br link)"
fi

# Bad input: clear errors, no half-made interfaces.
expect_bad() {   # NAME PATTERN NETSPEC
	local out rc
	out=$(in_ns timeout 20 "$HYP" --kernel "$MINIOS" --memory 64 --net "$3" </dev/null 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 1 ] && grep -q -- "$2" <<<"$out" && ! in_ns ip link show vif-bad.0 >/dev/null 2>&1; then
		pass "$1"
	else
		fail "$1" "$rc: $out"
	fi
}
expect_bad "bridge name over IFNAMSIZ refused" "is not an interface name (1 to 15 characters" "tap=vif-bad.0,bridge=a-very-long-bridge-name"
expect_bad "malformed MAC refused" "malformed MAC address" "tap=vif-bad.0,bridge=lbr0,mac=02:00:zz:00:00:01"
expect_bad "multicast MAC refused" "malformed MAC address" "tap=vif-bad.0,bridge=lbr0,mac=01:00:5e:00:00:01"
expect_bad "bridge that does not exist refused, no tap left" "no bridge named nosuchbr" "tap=vif-bad.0,bridge=nosuchbr"
msg=$(in_ns "$LODGE" bridge-create a-very-long-bridge-name 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q "is not an interface name (1 to 15 characters" <<<"$msg"; then
	pass "bridge-create refuses a name over IFNAMSIZ"
else
	fail "bridge-create long name" "$msg"
fi

# Two domains never share a MAC: the second create is refused.
R=$T/root
mkdir -p "$R/etc/lodge/domains"
for n in m1 m2; do
	printf 'name = "%s"\nmemory = 32\nkernel = "%s"\nvif = [ "bridge=lbr0,mac=02:4c:00:00:00:77" ]\n' \
		"$n" "$MINIOS" >"$R/etc/lodge/domains/$n.cfg"
done
in_ns "$LODGE" --root "$R" create m1 >/dev/null 2>&1
msg=$(in_ns "$LODGE" --root "$R" create m2 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'already used by domain m1' <<<"$msg" && [ ! -d "$R/run/lodge/m2" ]; then
	pass "a second domain with the same MAC is refused"
else
	fail "duplicate MAC refused" "$rc: $msg"
fi
in_ns "$LODGE" --root "$R" destroy m1 >/dev/null 2>&1

say b "poweroff"
sleep 1
kill "${pids[1]}" 2>/dev/null; wait "${pids[1]}" 2>/dev/null
if in_ns "$LODGE" bridge-delete lbr0 && ! in_ns ip link show lbr0 >/dev/null 2>&1; then
	pass "an empty bridge is deleted"
else
	fail "empty bridge deleted" "$(in_ns ip -br link)"
fi

# One guest with two vifs on two bridges: both interfaces answer the host's
# ping, each through its own bridge and tap.
in_ns "$LODGE" bridge-create lbr1 && in_ns "$LODGE" bridge-create lbr2
in_ns ip addr add 10.79.1.1/24 dev lbr1
in_ns ip addr add 10.79.2.1/24 dev lbr2
mkfifo "$T/c.in"
in_ns "$HYP" --kernel "$MINIOS" --memory 64 --cmdline "ip=10.79.1.2/24 ip1=10.79.2.2/24" \
	--net "tap=vif-c.0,bridge=lbr1,mac=02:4c:00:00:00:c0" --net "tap=vif-c.1,bridge=lbr2,mac=02:4c:00:00:00:c1" \
	<"$T/c.in" >"$T/c.out" 2>&1 &
cpid=$!
pids+=("$cpid")
exec {fd_c}>"$T/c.in"
if wait_for "$T/c.out" 'minios> ' 30 && grep -q 'net: eth0 mac 02:4c:00:00:00:c0 ip 10.79.1.2' "$T/c.out" &&
   grep -q 'net: eth1 mac 02:4c:00:00:00:c1 ip 10.79.2.2' "$T/c.out" &&
   in_ns ip link show vif-c.0 | grep -q 'master lbr1' && in_ns ip link show vif-c.1 | grep -q 'master lbr2' &&
   in_ns ping -c 3 -W 5 10.79.1.2 >"$T/ping1.out" 2>&1 && in_ns ping -c 3 -W 5 10.79.2.2 >"$T/ping2.out" 2>&1; then
	pass "one guest with two vifs on two bridges: both answer ping"
else
	fail "two vifs on two bridges" "$(grep -E '^net:' "$T/c.out" | tr '\n' '|') $(tail -1 "$T/ping1.out" "$T/ping2.out" 2>/dev/null | tr '\n' '|')"
fi

# A guest that posts no receive buffers: flooded, lodge-hyp drops (the
# tap's bounded queue does, counted as its tx_dropped) and its memory does
# not grow; when the guest takes frames again it answers again.
say c "net-rx stop"
if wait_for "$T/c.out" 'net-rx: stopped' 20; then
	rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$cpid/status"; }
	dropped() { in_ns cat /sys/class/net/vif-c.0/statistics/tx_dropped; }
	rss0=$(rss) drop0=$(dropped)
	in_ns python3 - >"$T/flood.out" 2>&1 <<'PY'
import socket
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("lbr1", 0))
frame = bytes.fromhex("024c000000c0") + bytes.fromhex("024c000000ff") + b"\x88\xb5" + bytes(986)
sent = 0
for i in range(100000):
    try:
        s.send(frame)
        sent += 1
    except OSError:
        pass
print("sent", sent)
PY
	sleep 1
	rss1=$(rss) drop1=$(dropped)
	sent=$(awk '/^sent/ { print $2 }' "$T/flood.out")
	why=
	[ -n "$sent" ] && [ "$sent" -ge 50000 ] || why="flood: $(tail -1 "$T/flood.out");"
	[ -n "$sent" ] && [ $((drop1 - drop0)) -ge $((sent - 5000)) ] || why="$why $((drop1 - drop0)) of $sent frames counted dropped;"
	[ $((rss1 - rss0)) -lt 2048 ] || why="$why resident memory grew from $rss0 to $rss1 KiB;"
	if [ -z "$why" ]; then
		pass "a guest posting no receive buffers: $((drop1 - drop0)) of $sent frames dropped, lodge-hyp resident $rss0 -> $rss1 KiB"
	else
		fail "drops when the guest posts no receive buffers" "$why"
	fi
	say c "net-rx start"
	if wait_for "$T/c.out" 'net-rx: started' 20 && in_ns ping -c 3 -W 5 10.79.1.2 >"$T/ping3.out" 2>&1; then
		pass "the guest answers again once it takes frames"
	else
		fail "guest answers after net-rx start" "$(tail -1 "$T/ping3.out")"
	fi
else
	fail "drops when the guest posts no receive buffers" "no net-rx: $(tail -2 "$T/c.out")"
fi
say c "poweroff"
sleep 1
kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null

# A host NIC on a bridge (what Xen's network-bridge did): its addresses and
# default route move onto the bridge and back; refused for the NIC that
# carries the ssh session unless forced.
NA=lodge-nic-a-$$ NB=lodge-nic-b-$$
ip netns add "$NA" && ip netns add "$NB"
ip link add vA netns "$NA" type veth peer name vB netns "$NB"
ip netns exec "$NA" sh -c 'ip link set lo up; ip link set vA up; ip addr add 10.88.0.2/24 dev vA; ip route add default via 10.88.0.1'
ip netns exec "$NB" sh -c 'ip link set vB up; ip addr add 10.88.0.1/24 dev vB'
a() { ip netns exec "$NA" "$@"; }
msg=$(a env SSH_CONNECTION="10.88.0.1 50000 10.88.0.2 22" "$LODGE" bridge-create xbr0 --nic vA 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'carries this ssh session' <<<"$msg" && a ip -br addr show vA | grep -q 10.88.0.2 &&
   ! a ip link show xbr0 >/dev/null 2>&1; then
	pass "the NIC carrying the ssh session is not moved without --force"
else
	fail "ssh session guard" "$rc: $msg"
fi
if a "$LODGE" bridge-create xbr0 --nic vA && a ip -br addr show xbr0 | grep -q 10.88.0.2 &&
   a ip route | grep -q 'default via 10.88.0.1 dev xbr0' && a ip link show vA | grep -q 'master xbr0' &&
   a ping -c 1 -W 3 10.88.0.1 >/dev/null; then
	pass "a host NIC joins a bridge with its address and default route"
else
	fail "NIC onto a bridge" "$(a ip -br addr; a ip route)"
fi
if a "$LODGE" bridge-delete xbr0 >/dev/null && a ip -br addr show vA | grep -q 10.88.0.2 &&
   a ip route | grep -q 'default via 10.88.0.1 dev vA' && ! a ip link show xbr0 >/dev/null 2>&1 &&
   a ping -c 1 -W 3 10.88.0.1 >/dev/null; then
	pass "deleting the bridge gives the NIC its address and route back"
else
	fail "NIC back from the bridge" "$(a ip -br addr; a ip route)"
fi
ip netns del "$NA"; ip netns del "$NB"

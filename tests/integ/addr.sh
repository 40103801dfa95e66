#!/bin/bash
# Network visibility: each domain's lodge-hyp watches its vifs with libpcap
# and learns the addresses its guest claims.  In network namespaces this
# test makes and removes: a Mini-OS guest with a static address and one
# that takes a lease from busybox udhcpd on another "host" of the bridge
# are listed by lodge addr and lodge list -l once their first packet has
# passed (the delay said, not judged: a loaded host may take longer); a guest claiming another's address, or sending from another's
# MAC, takes nothing from it, and two domains claiming one address are
# both shown with a conflict warning; the traffic view (lodge addr -t and
# the dashboard's detail view) counts the packets of a peer the guest
# pinged; lodge capture writes a file tcpdump reads, prints lines, stops
# on SIGINT, and refuses bad filters and vif-less domains.
. "$(dirname "$0")/../lib.sh"

integ_begin "addresses" kvm root minios
if ! command -v busybox >/dev/null || ! busybox --list | grep -qx udhcpd; then
	skip "addresses" "busybox with udhcpd not installed (make deps)"; exit 0
fi
integ_netns
NSD=lodge-dhcpd-$$
R=$ROOT
at_exit 'ip netns del "$NSD" 2>/dev/null'

# The bridge in $NS; the DHCP server on a veth in $NSD, a host of its own.
in_ns ip link set lo up
in_ns "$LODGE" bridge-create abr0 >/dev/null && in_ns ip addr add 10.79.0.1/24 dev abr0
ip netns add "$NSD"
ip link add dh0 netns "$NS" type veth peer name dh1 netns "$NSD"
in_ns ip link set dh0 master abr0 up
ip netns exec "$NSD" sh -c 'ip link set lo up; ip link set dh1 up; ip addr add 10.79.0.254/24 dev dh1'
cat >"$T/udhcpd.conf" <<EOF
start 10.79.0.100
end 10.79.0.120
interface dh1
lease_file $T/udhcpd.leases
pidfile $T/udhcpd.pid
option subnet 255.255.255.0
opt lease 3600
EOF
touch "$T/udhcpd.leases"
ip netns exec "$NSD" busybox udhcpd -f "$T/udhcpd.conf" >"$T/udhcpd.out" 2>&1 &

mkdir -p "$R/etc/lodge/domains"
domain() {   # domain NAME EXTRA [MAC]: a Mini-OS config on abr0 (no MAC: no vif)
	{
		printf 'name = "%s"\nmemory = 32\nkernel = "%s"\nextra = "%s"\n' "$1" "$MINIOS" "$2"
		[ -n "${3:-}" ] && printf 'vif = [ "bridge=abr0,mac=%s" ]\n' "$3"
	} >"$R/etc/lodge/domains/$1.cfg"
}
MAC_ST=02:4c:00:00:20:01 MAC_DH=02:4c:00:00:20:02 MAC_EV=02:4c:00:00:20:03
domain st "ip=10.79.0.2/24" $MAC_ST
domain dh "ip=dhcp" $MAC_DH
domain ev "ip=10.79.0.4/24" $MAC_EV
domain nv ""
for d in st dh ev nv; do
	if ! lodge create $d >"$T/create-$d.out" 2>&1; then
		fail "addresses" "create $d: $(tail -1 "$T/create-$d.out")"
		exit 0
	fi
done
con() { echo "$R/run/lodge/$1/console.log"; }
say() { ( echo "$2"; sleep "${3:-1}" ) | lodge console "$1" >/dev/null 2>&1; }
# addr_of DOMAIN ADDRESS [HOW]: lodge addr lists it (learned HOW)
addr_of() { lodge addr "$1" 2>/dev/null | awk -v a="$2" -v h="${3:-}" '$4 == a && (h == "" || $5 == h) { ok = 1 } END { exit !ok }'; }
# since_ms T0: milliseconds since T0 (a $(now_us))
since_ms() { echo $((($(now_us) - $1) / 1000)); }
wait_for "$(con st)" 'minios> ' 20; wait_for "$(con ev)" 'minios> ' 20

# The static guest's first frame: its ARP reply to the host's first ping.
# Not listed before it, listed after it (the delay from the ping's reply).
if ! addr_of st 10.79.0.2 && in_ns ping -c 1 -W 3 10.79.0.2 >/dev/null && t0=$(now_us) &&
   wait_until 20 addr_of st 10.79.0.2 arp; then
	pass "a static guest's address is listed by lodge addr after its first packet ($(since_ms "$t0") ms after the ping's reply)"
else
	fail "static address listed" "$(lodge addr st 2>&1 | tr '\n' '|')"
fi

# The DHCP guest: the server's ACK for its MAC is what counts.
if wait_for "$(con dh)" 'dhcp: lease 10\.79\.0\.[0-9]+/24 from 10\.79\.0\.254' 20; then
	pass "Mini-OS takes a lease from udhcpd on another host of the bridge"
	t0=$(now_us)
	lease=$(grep -aoE 'dhcp: lease [0-9.]+' "$(con dh)" | tail -1 | awk '{ print $3 }')
	if wait_until 20 addr_of dh "$lease" dhcp; then
		pass "a DHCP guest's leased address is listed, learned from the server's ACK (listed $(since_ms "$t0") ms after the guest printed its lease)"
	else
		fail "leased address listed" "$lease: $(lodge addr dh 2>&1 | tr '\n' '|')"
	fi
else
	fail "DHCP lease" "$(grep -a dhcp "$(con dh)"; cat "$T/udhcpd.out")"
	lease=none
fi
row() { lodge list -l 2>/dev/null | awk -v n="$1" '$1 == n { print $NF }'; }
if [ "$(row st)" = 10.79.0.2 ] && [ "$(row dh)" = "$lease" ] && [ "$(row nv)" = - ]; then
	pass "lodge list -l shows each domain's addresses"
else
	fail "list -l addresses" "$(lodge list -l | tr '\n' '|')"
fi
if lodge list -o tsv | awk -F'\t' '$1 == "st" && $NF == "10.79.0.2" { ok = 1 } END { exit !ok }'; then
	pass "lodge list -o tsv ends with the addresses"
else
	fail "list tsv addresses" "$(lodge list -o tsv | tr '\n' '|')"
fi

# A guest announcing an address from its own MAC claims it (the positive
# control), announcing another's address takes nothing from that one, and
# from another's MAC claims nothing for anyone.
lodge capture ev -c 1 -t 10 arp and host 10.79.0.99 >"$T/forged.out" 2>&1 &
cap=$!
sleep 0.5
say ev "arp-announce 10.79.0.50; arp-announce 10.79.0.2; arp-announce 10.79.0.99 $MAC_ST"
wait $cap
if wait_until 20 addr_of ev 10.79.0.50 arp; then
	pass "an address a guest announces from its own MAC is its"
else
	fail "own announcement learned" "$(lodge addr ev 2>&1 | tr '\n' '|')"
fi
sleep 1
if addr_of st 10.79.0.2 arp && [ "$(row st)" = 10.79.0.2 ]; then
	pass "a guest announcing another's address does not take it from that guest"
else
	fail "address not moved" "$(lodge addr st 2>&1 | tr '\n' '|')"
fi
if grep -q "$MAC_ST > ff:ff:ff:ff:ff:ff ARP who-has 10.79.0.99" "$T/forged.out" &&
   ! addr_of st 10.79.0.99 && ! addr_of ev 10.79.0.99; then
	pass "a frame with a forged source MAC claims nothing for either guest"
else
	fail "forged MAC" "$(cat "$T/forged.out"; lodge addr st; lodge addr ev)"
fi

# ev's own ARP for st's address credits ev with it too (ev's watcher sees
# a well-formed claim from ev's MAC; st's watcher cannot see it at all):
# neither domain's watcher can tell the owner, so the agent, which sees
# both, shows the address under both with a conflict marker and lodge
# list -l warns, naming both.
if addr_of ev 10.79.0.2 arp &&
   lodge addr ev | awk '$4 == "10.79.0.2" && /CONFLICT: also claimed by st$/ { ok = 1 } END { exit !ok }' &&
   lodge addr st | awk '$4 == "10.79.0.2" && /CONFLICT: also claimed by ev$/ { ok = 1 } END { exit !ok }' &&
   ! lodge addr ev | awk '$4 == "10.79.0.50" && /CONFLICT/ { bad = 1 } END { exit !bad }'; then
	pass "an address two domains claim is shown under both, each naming the other"
else
	fail "conflict marker" "$(lodge addr ev 2>&1 | tr '\n' '|') $(lodge addr st 2>&1 | tr '\n' '|')"
fi
warn=$(lodge list -l 2>&1 >/dev/null)
if grep -Eq "warning: address 10\.79\.0\.2 on bridge abr0 is claimed by (st and ev|ev and st)" <<<"$warn" &&
   ! grep -q '10\.79\.0\.50' <<<"$warn" && [ "$(row st)" = 10.79.0.2 ]; then
	pass "lodge list -l warns of an address two domains on one bridge claim"
else
	fail "list -l conflict warning" "$warn"
fi

# lodge capture -w: a pcap file tcpdump reads.  (The announcements moved
# the host's ARP entry and the bridge's idea of where st's MAC is: ask again.)
in_ns ip neigh flush dev abr0
in_ns ping -c 1 -W 3 10.79.0.2 >/dev/null
in_ns ping -c 30 -i 0.1 10.79.0.2 >/dev/null &
png=$!
if lodge capture st -c 10 -w "$T/f.pcap" 2>"$T/cap.err" && [ "$(tcpdump -nr "$T/f.pcap" 2>/dev/null | wc -l)" -eq 10 ] &&
   grep -q '10 packets captured' "$T/cap.err"; then
	pass "lodge capture -c 10 -w writes 10 packets that tcpdump -r reads"
else
	fail "capture to a file" "$(cat "$T/cap.err"; tcpdump -nr "$T/f.pcap" 2>&1 | tail -3)"
fi
lodge capture st icmp -c 2 >"$T/lines.out" 2>&1
if [ "$(grep -c '10.79.0.[12] > 10.79.0.[12] ICMP echo' "$T/lines.out")" -eq 2 ]; then
	pass "lodge capture with a filter prints one line a packet"
else
	fail "capture lines" "$(cat "$T/lines.out")"
fi
# SIGINT after a second, straight to lodge (ip netns exec execs it); a
# capture that ignored it would be killed 5 s later and fail here.
timeout --preserve-status -s INT -k 5 1 ip netns exec "$NS" "$LODGE" --root "$R" capture st >"$T/int.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -qE '^lodge: [0-9]+ packets? captured' "$T/int.out"; then
	pass "SIGINT ends a capture cleanly with its count"
else
	fail "capture SIGINT" "$rc: $(tail -2 "$T/int.out")"
fi
wait $png

# The traffic view: st pings the host (10.79.0.1) N times, and its
# watcher's last interval counts at least N packets with that peer: the
# 2N requests and replies, which may straddle two one-second intervals
# (under PVM a ping takes up to ~0.2 s), and a burst spread over more is
# sent again.  The view is polled while the guest pings, as an interval's
# view lasts only until the next closes.  lodge addr -t prints it, and so
# does the dashboard's detail view.
N=5
peer_pkts() {   # peer_pkts DOMAIN ADDRESS: its packets in lodge addr -t's last interval
	lodge addr -t "$1" 2>/dev/null | awk -v a="$2" '/^    [0-9a-f]/ && $1 == a { n = $2 } END { print n + 0 }'
}
peer_seen() { [ "$(peer_pkts st 10.79.0.1)" -ge $N ]; }
ok=
for try in 1 2 3 4; do
	say st "ping 10.79.0.1 $N" 0.3 &
	wait_until 5 peer_seen && ok=1
	wait $!
	[ -n "$ok" ] && break
done
if [ -n "$ok" ] && lodge addr -t st | grep -Eq '^0 +[^ ]+ +[0-9]+ pkt/s [0-9]+ B/s, [0-9]+ dropped by the watcher'; then
	pass "lodge addr -t shows a peer the guest pinged $N times with at least $N packets, and the vif's rates"
else
	fail "traffic view peers" "$(lodge addr -t st 2>&1 | tr '\n' '|')"
fi
if command -v tmux >/dev/null; then
	tmux_begin "lodge-addr-tui-$$"
	tmux_open dashboard 100 40 "ip netns exec $NS $LODGE --root $R -d 0.5; sleep 30"
	# The detail view's peer line: "    10.79.0.1   ...   40 pkts ...".
	screen_peer() { screen | awk -v n=$N '$1 == "10.79.0.1" && $3 == "pkts" && $2 >= n { ok = 1 } END { exit !ok }'; }
	shows 10 ' st '
	press /; type_text st; press Enter Home Down Enter
	ok=
	if shows 10 'console \(last lines\)'; then
		for try in 1 2 3 4 5; do
			say st "ping 10.79.0.1 $N" 0.3 &
			wait_until 5 screen_peer && ok=1
			wait $!
			[ -n "$ok" ] && break
		done
	fi
	if [ -n "$ok" ] && screen | grep -Eq '^  traffic .*pkt/s .*B/s, [0-9]+ dropped by the watcher'; then
		pass "the dashboard's detail view shows the pinged peer with at least $N packets, and pkt/s, B/s, drops"
	else
		fail "dashboard traffic view" "$(screen | tr '\n' '|')"
	fi
	tmux kill-server 2>/dev/null
else
	skip "dashboard traffic view" "tmux not installed"
fi

msg=$(lodge capture st 'tcp port' 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q "filter 'tcp port': .*syntax error" <<<"$msg"; then
	pass "a malformed filter is refused with pcap's message"
else
	fail "malformed filter" "$rc: $msg"
fi
msg=$(lodge capture nv 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'domain nv has no vifs' <<<"$msg"; then
	pass "capture of a domain without vifs is refused clearly"
else
	fail "capture without vifs" "$rc: $msg"
fi
msg=$(lodge capture st 3 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'domain st has no vif 3' <<<"$msg"; then
	pass "capture of a vif the domain does not have is refused"
else
	fail "capture of a missing vif" "$rc: $msg"
fi

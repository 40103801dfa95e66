#!/bin/bash
# Networks behind the host (issue 21), in namespaces this test makes and
# removes: $NS is the "host", with an uplink veth to an "internet"
# namespace.  A NAT network there: a Mini-OS guest takes an address by DHCP
# in the range and the same one after a reboot, its name resolves from the
# host through dnsmasq, it pings the internet namespace through the NAT
# (a capture there sees the uplink's address as the source), lodge addr
# lists dnsmasq's lease, and two guests ping each other.  An isolated
# network's guest reaches the host's DHCP but not the uplink; a routed
# network's guest is seen upstream with its own address.  dnsmasq killed
# -9 is reported dead by network-list and brought back by network-start;
# network-delete is refused while a vif is on the network, and once the
# domains are gone leaves no bridge, no dnsmasq and `nft list ruleset`
# byte for byte as before.  Every bad input is one line and leaves nothing.
. "$(dirname "$0")/../lib.sh"

integ_begin "networks" kvm root minios cmd:dnsmasq:dnsmasq-base cmd:dig:bind9-dnsutils cmd:tcpdump cmd:nft:nftables netns
# dnsmasq drops to its own user and rereads the hosts files as that user.
chmod 755 "$T"
NSI=lodge-inet-$$
netns_add "$NSI"
in_inet() { ip netns exec "$NSI" "$@"; }
UP_HOST=198.51.100.1 UP_INET=198.51.100.2
in_ns ip link set lo up
ip link add up0 netns "$NS" type veth peer name up1 netns "$NSI"
in_ns sh -c "ip addr add $UP_HOST/24 dev up0 && ip link set up0 up && ip route add default via $UP_INET"
in_inet sh -c "ip link set lo up && ip addr add $UP_INET/24 dev up1 && ip link set up1 up"
# The routed network's way back: the internet knows it is behind the host.
in_inet ip route add 10.78.0.0/24 via "$UP_HOST"
RULES_BEFORE=$(in_ns nft list ruleset)
# After the domains (integ_exit destroys them first): no dnsmasq outlives the test.
at_exit 'for n in nat0 iso0 rt0 fwd0 auto0 nr0; do lodge network-delete $n >/dev/null 2>&1; done'
# The host's resolver, as the host namespace sees it (ip netns exec binds
# /etc/netns/NS/resolv.conf): a dnsmasq in the internet namespace that
# knows one name.
mkdir -p "/etc/netns/$NS"
at_exit 'rm -rf "/etc/netns/$NS"'
echo "nameserver $UP_INET" >"/etc/netns/$NS/resolv.conf"
in_inet dnsmasq --keep-in-foreground --conf-file=/dev/null --listen-address="$UP_INET" --bind-interfaces \
	--no-resolv --no-hosts --pid-file= --address=/probe.example/192.0.2.7 2>"$T/upstream.err" &

con() { echo "$RUN/$1/console.log"; }
# count DOMAIN PATTERN: how many lines of its console match
count() { grep -acE -- "$2" "$(con "$1")" 2>/dev/null; }
# more DOMAIN PATTERN N: its console has more than N lines matching PATTERN
more() { [ "$(count "$1" "$2")" -gt "$3" ]; }
# say DOMAIN COMMAND PATTERN SECS: type COMMAND at its prompt and wait for
# one more line matching PATTERN than there was before.
say() {
	local before
	before=$(count "$1" "$3")
	echo "$2" | lodge console "$1" >/dev/null 2>&1
	wait_until "$4" more "$1" "$3" "$before"
}
# capture FILE: one ICMP echo request seen on the internet's side, in the
# background ($cap), once tcpdump says it listens.
capture() {
	in_inet timeout 30 tcpdump -n -l -i up1 -c 1 "icmp[icmptype] == icmp-echo" >"$1" 2>"$1.err" &
	cap=$!
	wait_for "$1.err" 'listening on' 10
}
domain() {   # domain NAME NETWORK
	printf 'name = "%s"\nmemory = 32\nkernel = "%s"\nextra = "ip=dhcp"\nvif = [ "network=%s" ]\n' \
		"$1" "$MINIOS" "$2" >"$DOMS/$1.cfg"
}
lease_of() { grep -aoE 'dhcp: lease [0-9.]+' "$(con "$1")" | tail -1 | awk '{ print $3 }'; }
in_range() {   # in_range ADDR LO HI (last octets)
	local o=${1##*.}
	[ -n "$1" ] && [ "$o" -ge "$2" ] && [ "$o" -le "$3" ]
}
net_row() { lodge network-list -o tsv -H 2>/dev/null | awk -F'\t' -v n="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next } $1 == n { print $k[c] }'; }

# ---- a dnsmasq that cannot start ---------------------------------------------------
# Port 53 held on every address: the network is refused with dnsmasq's own
# words, and nothing is left of it, IPv4 forwarding included.
ip netns exec "$NS" python3 -c "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('0.0.0.0', 53))
print('ready', flush=True); time.sleep(60)" >"$T/port53" 2>&1 &
holder=$!                  # ip netns exec execs python3: this is its pid
wait_for "$T/port53" ready 10
out=$(lodge network-create busy0 --subnet 10.72.0.0/24 2>&1)
rc=$?
kill "$holder"
wait "$holder" 2>/dev/null
if [ $rc -ne 0 ] && printf '%s' "$out" | grep -q 'dnsmasq failed.*Address already in use' &&
   [ ! -e "$ROOT/etc/lodge/networks/busy0.cfg" ] && ! in_ns ip link show lnet-busy0 >/dev/null 2>&1 &&
   [ "$(in_ns nft list ruleset)" = "$RULES_BEFORE" ] && [ "$(in_ns cat /proc/sys/net/ipv4/ip_forward)" = 0 ]; then
	pass "a network whose dnsmasq cannot listen is refused in its words, and leaves nothing, forwarding off"
else
	fail "dnsmasq refused" "$out"
fi

# ---- a NAT network -----------------------------------------------------------------
if lodge network-create nat0 --subnet 10.77.0.0/24 --dhcp-range 10.77.0.50-10.77.0.99 --domain lodge \
	>"$T/create.out" 2>&1 && in_ns ip -4 addr show lnet-nat0 | grep -q 'inet 10.77.0.1/24' &&
   [ "$(net_row nat0 dnsmasq)" = running ] && [ "$(net_row nat0 rules)" = yes ]; then
	pass "network-create: the bridge holds the gateway 10.77.0.1/24, dnsmasq runs, the rules are in place"
else
	fail "network-create" "$(cat "$T/create.out"; lodge network-list 2>&1)"
	exit 0
fi
if grep -q 'IPv4 forwarding turned on' "$T/create.out" && [ "$(in_ns cat /proc/sys/net/ipv4/ip_forward)" = 1 ]; then
	pass "IPv4 forwarding is turned on, with a notice"
else
	fail "forwarding notice" "$(cat "$T/create.out"; in_ns cat /proc/sys/net/ipv4/ip_forward)"
fi

# lodge --complete INDEX WORDS...: what bash completion offers
got=$(in_ns "$LODGE" --complete 4 lodge --root "$ROOT" network-start "" | sort | tr '\n' ' ')
if [ "$got" = "nat0 " ] && [ -z "$(in_ns "$LODGE" --complete 4 lodge --root "$ROOT" network-create "")" ]; then
	pass "network-start <TAB> offers the networks (network-create's new name: nothing)"
else
	fail "completion" "$got"
fi

domain g1 nat0
domain g2 nat0
for d in g1 g2; do
	lodge create $d >"$T/create-$d.out" 2>&1 || { fail "create $d" "$(cat "$T/create-$d.out")"; exit 0; }
done
if wait_for "$(con g1)" 'dhcp: router 10\.77\.0\.1' 20 && A1=$(lease_of g1) && in_range "$A1" 50 99; then
	pass "a Mini-OS guest takes an address by DHCP in the range ($A1), the gateway as its router"
else
	fail "DHCP in the range" "$(grep -a dhcp "$(con g1)")"
fi
wait_for "$(con g2)" 'dhcp: router' 20
A2=$(lease_of g2)
if grep -qx "[0-9a-f:]*,$A1,g1" "$ROOT/var/lib/lodge/networks/nat0.hosts" && [ "$A1" != "$A2" ]; then
	pass "each domain's MAC has its fixed address in dnsmasq's hosts file"
else
	fail "fixed addresses" "$A1 $A2: $(cat "$ROOT/var/lib/lodge/networks/nat0.hosts")"
fi
if [ "$(in_ns dig +short +time=2 @10.77.0.1 g1.lodge)" = "$A1" ] && [ "$(in_ns dig +short +time=2 @10.77.0.1 g2.lodge)" = "$A2" ]; then
	pass "NAME.DOMAIN resolves from the host through dnsmasq"
else
	fail "DNS" "$(in_ns dig +short +time=2 @10.77.0.1 g1.lodge 2>&1)"
fi
# ... and from a guest, through the server its lease names.
if say g1 "resolve g2.lodge" 'resolve: g2\.lodge' 10 && grep -aq "resolve: g2.lodge is $A2" "$(con g1)" &&
   say g1 "resolve nosuch.lodge" 'resolve: nosuch\.lodge' 10 && grep -aq 'resolve: nosuch.lodge: not found (rcode 3)' "$(con g1)"; then
	pass "a guest resolves another's NAME.DOMAIN, and an unknown name is NXDOMAIN"
else
	fail "DNS from a guest" "$(grep -a resolve "$(con g1)" | tr '\n' '|')"
fi
# Only a network made with --dns-forward asks the host's resolver.
lodge network-create fwd0 --subnet 10.75.0.0/24 --dns-forward >/dev/null 2>&1
upstream() { [ "$(in_ns dig +short +time=1 +tries=1 @"$1" probe.example)" = 192.0.2.7 ]; }
if wait_until 5 upstream 10.75.0.1 && in_ns dig +time=2 +tries=1 @10.77.0.1 probe.example | grep -q 'status: REFUSED'; then
	pass "dnsmasq answers for its own names only, unless made with --dns-forward"
else
	fail "dns forwarding" "$(in_ns dig +time=2 +tries=1 @10.77.0.1 probe.example 2>&1 | grep -E 'status|timed out'; in_ns dig +short +time=2 @10.75.0.1 probe.example 2>&1; cat "$T/upstream.err")"
fi
lodge network-delete fwd0 >/dev/null 2>&1
lease_listed() { lodge addr g1 2>/dev/null | awk -v a="$A1" '$4 == a && $5 == "lease" { ok = 1 } END { exit !ok }'; }
if wait_until 5 lease_listed && [ "$(net_row nat0 leases)" -ge 2 ]; then
	pass "lodge addr lists dnsmasq's lease (lease) and network-list counts the leases"
else
	fail "lease listed" "$(lodge addr g1 2>&1 | tr '\n' '|') $(lodge network-list 2>&1 | tr '\n' '|')"
fi

# The dashboard's networks view (N): the network, its dnsmasq, leases and
# vifs, and each lease.
if command -v tmux >/dev/null; then
	tmux_begin "lodge-nettui-$$"
	tmux_open dashboard 100 30 "ip netns exec $NS env TERM=xterm $LODGE --root $ROOT -d 0.5; sleep 30" \
		</dev/null >/dev/null 2>&1
	if shows 10 'Domain-0' && press N &&
	   shows 10 '^nat0 +nat +lnet-nat0 +10\.77\.0\.0/24 +running +2 +2 ' &&
	   shows 5 "^nat0 +[0-9a-f:]{17} +$A1 +g1\$"; then
		pass "the dashboard's networks view shows the network, its dnsmasq, leases, vifs and each lease"
	else
		fail "dashboard networks view" "$(screen | head -12)"
	fi
	tmux kill-server 2>/dev/null
else
	skip "dashboard networks view" "tmux not installed"
fi

# Through the NAT: the internet sees the uplink's address, never 10.77.
capture "$T/nat.cap"
if say g1 "ping $UP_INET 3" 'ping: [0-9]+/3 replies' 20 && grep -aq 'ping: 3/3 replies' "$(con g1)"; then
	pass "the guest pings the internet namespace through the NAT"
else
	fail "NAT ping" "$(grep -a 'ping' "$(con g1)" | tail -2)"
fi
wait "$cap"
if grep -q "IP $UP_HOST > $UP_INET: ICMP echo request" "$T/nat.cap"; then
	pass "a capture in the internet namespace sees the uplink's address as the source"
else
	fail "masquerade" "$(cat "$T/nat.cap")"
fi
before=$(count g1 'ping: 3/3 replies')
if say g1 "ping $A2 3" 'ping: [0-9]+/3 replies' 20 && [ "$(count g1 'ping: 3/3 replies')" -gt "$before" ]; then
	pass "two guests on one network ping each other"
else
	fail "guest to guest" "$(grep -a 'ping' "$(con g1)" | tail -2)"
fi

# Saved and restored (host-stop and host-start do this): back on its
# network's bridge, which this host's config of it names by network=.
if lodge save g2 "$T/g2.save" >"$T/save.out" 2>&1 && lodge restore "$T/g2.save" >>"$T/save.out" 2>&1 &&
   before=$(count g1 'ping: 3/3 replies') && say g1 "ping $A2 3" 'ping: [0-9]+/3 replies' 20 &&
   [ "$(count g1 'ping: 3/3 replies')" -gt "$before" ]; then
	pass "a domain on a network is saved and restored onto the network's bridge"
else
	fail "save and restore" "$(cat "$T/save.out"; grep -a ping "$(con g1)" | tail -1)"
fi

# The same address after a reboot: dnsmasq's hosts file, not luck.
leases=$(count g1 'dhcp: lease')
lodge reboot g1 >/dev/null 2>&1
if wait_until 30 more g1 'dhcp: lease' "$leases" && [ "$(lease_of g1)" = "$A1" ]; then
	pass "after a reboot the guest gets its fixed address again ($A1)"
else
	fail "fixed address after reboot" "$(grep -a 'dhcp: lease' "$(con g1)" | tr '\n' '|')"
fi

# dnsmasq killed: reported, then brought back.
pid=$(net_row nat0 dnsmasq_pid)
kill -9 "$pid" 2>/dev/null
dead() { [ "$(net_row nat0 dnsmasq)" = dead ]; }
if wait_until 5 dead; then
	pass "network-list reports dnsmasq dead after kill -9"
else
	fail "dead dnsmasq" "$(lodge network-list 2>&1)"
fi
if lodge network-start nat0 >"$T/restart.out" 2>&1 && [ "$(net_row nat0 dnsmasq)" = running ] &&
   [ "$(net_row nat0 dnsmasq_pid)" != "$pid" ] && [ "$(in_ns dig +short +time=2 @10.77.0.1 g1.lodge)" = "$A1" ]; then
	pass "network-start brings dnsmasq back, names and all"
else
	fail "network-start repair" "$(cat "$T/restart.out"; lodge network-list 2>&1)"
fi

# dnsmasq is its own user's; a caller who is not root changes nothing.
lodge network-create nr0 --subnet 10.73.0.0/24 --isolated >/dev/null 2>&1
pid=$(net_row nr0 dnsmasq_pid)
out=$(in_ns su nobody -s /bin/sh -c "$LODGE --root $ROOT network-stop nr0" 2>&1)
if [ -n "$pid" ] && [ "$(ps -o user= -p "$pid")" = dnsmasq ] && printf '%s' "$out" | grep -q 'not permitted' &&
   [ "$(net_row nr0 dnsmasq_pid)" = "$pid" ] && [ "$(net_row nr0 rules)" = yes ]; then
	pass "dnsmasq runs as its own user; network-stop by another user is refused and stops nothing"
else
	fail "not root" "$(ps -o user= -p "$pid"): $out; $(lodge network-list 2>&1)"
fi
lodge network-delete nr0 >/dev/null 2>&1

# ---- isolated and routed --------------------------------------------------------------
lodge network-create iso0 --subnet 10.76.0.0/24 --isolated >/dev/null 2>&1
lodge network-create rt0 --subnet 10.78.0.0/24 --routed >/dev/null 2>&1
domain g3 iso0
domain g4 rt0
for d in g3 g4; do
	lodge create $d >"$T/create-$d.out" 2>&1 || fail "create $d" "$(cat "$T/create-$d.out")"
done
if wait_for "$(con g3)" 'dhcp: lease 10\.76\.0\.' 20 && ! grep -aq 'dhcp: router' "$(con g3)"; then
	pass "an isolated network's guest gets an address from the host's dnsmasq, and no router"
else
	fail "isolated DHCP" "$(grep -a dhcp "$(con g3)")"
fi
# Told the gateway is its router anyway, it still gets nowhere.
say g3 "route 10.76.0.1" 'route: via' 5
if say g3 "ping 10.76.0.1 1" 'ping: [0-9]+/1 replies' 10 && grep -aq 'ping: 1/1 replies' "$(con g3)" &&
   say g3 "ping $UP_INET 2" 'ping: [0-9]+/2 replies' 15 && grep -aq 'ping: 0/2 replies' "$(con g3)" &&
   in_ns nft list chain inet lodge iso0_forward | grep -qE 'iifname "lnet-iso0" counter packets [1-9]'; then
	pass "an isolated network's guest reaches the host but not the uplink (dropped by its forward chain)"
else
	fail "isolated" "$(grep -a 'ping' "$(con g3)" | tr '\n' '|') $(in_ns nft list chain inet lodge iso0_forward 2>&1 | tr '\n' '|')"
fi
if wait_for "$(con g4)" 'dhcp: router 10\.78\.0\.1' 20; then
	A4=$(lease_of g4)
	capture "$T/routed.cap"
	say g4 "ping $UP_INET 3" 'ping: [0-9]+/3 replies' 20
	wait "$cap"
	if grep -aq 'ping: 3/3 replies' "$(con g4)" && grep -q "IP $A4 > $UP_INET: ICMP echo request" "$T/routed.cap"; then
		pass "a routed network's guest is seen upstream with its own address ($A4)"
	else
		fail "routed" "$(grep -a ping "$(con g4)" | tail -1) $(cat "$T/routed.cap")"
	fi
else
	fail "routed DHCP" "$(grep -a dhcp "$(con g4)")"
fi

# ---- bad input: one line, nothing made ------------------------------------------------
nets_before=$(ls "$ROOT/etc/lodge/networks")
links_before=$(in_ns ip -o link show | awk -F': ' '{ print $2 }' | sort)
in_ns ip route add 10.99.0.0/16 dev lo
bad() {   # bad LABEL PATTERN ARGS...
	local label=$1 pat=$2 out
	shift 2
	if out=$(lodge network-create "$@" 2>&1); then
		fail "refused: $label" "accepted"
	elif [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && printf '%s' "$out" | grep -qE -- "$pat"; then
		pass "refused in one line: $label"
	else
		fail "refused: $label" "$out"
	fi
}
bad "a subnet overlapping another network" "overlaps network nat0" bad1 --subnet 10.77.0.128/25
bad "a subnet overlapping a host route" "overlaps the host's route 10.99.0.0/16" bad1 --subnet 10.99.3.0/24
bad "a malformed CIDR" "not a subnet" bad1 --subnet 10.70.0/24
bad "a prefix out of range" "a prefix of /8 to /30" bad1 --subnet 10.70.0.0/31
bad "host bits set" "host bits set" bad1 --subnet 10.70.0.1/24
bad "a DHCP range outside the subnet" "not within the subnet" bad1 --subnet 10.70.0.0/24 --dhcp-range 10.70.1.2-10.70.1.9
bad "a DHCP range holding the gateway" "not within the subnet" bad1 --subnet 10.70.0.0/24 --dhcp-range 10.70.0.1-10.70.0.9
bad "a name too long for its bridge" "too long for its bridge" averylongnetname --subnet 10.70.0.0/24
bad "a name nft would read as syntax" "not a network name" 'x;flush' --subnet 10.70.0.0/24
bad "a bridge name with a quote" "is not an interface name" bad1 --subnet 10.70.0.0/24 --bridge 'a"b'
bad "a network that exists" "exists already" nat0 --subnet 10.70.0.0/24
bad "a bridge that exists" "interface up0 exists already" bad1 --subnet 10.70.0.0/24 --bridge up0
bad "a bad DNS domain" "not a DNS domain" bad1 --subnet 10.70.0.0/24 --domain 'a..b'
if [ "$(ls "$ROOT/etc/lodge/networks")" = "$nets_before" ] &&
   [ "$(in_ns ip -o link show | awk -F': ' '{ print $2 }' | sort)" = "$links_before" ]; then
	pass "no refused network left a file or an interface"
else
	fail "refusals left something" "$(ls "$ROOT/etc/lodge/networks")"
fi
in_ns ip route del 10.99.0.0/16 dev lo
printf 'subnet = "10.70.0.0/24"\ndhcp_range = "10.70.0.2-10.71.0.9"\n' >"$ROOT/etc/lodge/networks/badf.cfg"
if out=$(lodge network-start badf 2>&1); then
	fail "a bad file is refused" "started"
elif printf '%s' "$out" | grep -q "badf.cfg:2: dhcp_range: DHCP range"; then
	pass "a network file's error names FILE:LINE: KEY"
else
	fail "a bad file's message" "$out"
fi
if lodge network-delete badf >"$T/badf.out" 2>&1 && [ ! -e "$ROOT/etc/lodge/networks/badf.cfg" ] &&
   grep -q "badf.cfg:2: dhcp_range" "$T/badf.out"; then
	pass "network-delete removes a network whose file does not read, saying why"
else
	fail "delete a bad file" "$(cat "$T/badf.out")"
fi
printf 'name = "g5"\nmemory = 32\nkernel = "%s"\nvif = [ "network=nat0,bridge=lnet-nat0" ]\n' "$MINIOS" >"$DOMS/g5.cfg"
out=$(lodge create g5 2>&1); rc=$?
if [ $rc -ne 0 ] && printf '%s' "$out" | grep -q "both a bridge and a network"; then
	pass "a vif naming a bridge and a network is refused"
else
	fail "vif bridge and network" "$out"
fi
printf 'name = "g5"\nmemory = 32\nkernel = "%s"\nvif = [ "network=nonet" ]\n' "$MINIOS" >"$DOMS/g5.cfg"
out=$(lodge create g5 2>&1); rc=$?
if [ $rc -ne 0 ] && printf '%s' "$out" | grep -q "no network named nonet"; then
	pass "a vif on a network that does not exist is refused"
else
	fail "vif on no network" "$out"
fi

# ---- delete ------------------------------------------------------------------------------
if out=$(lodge network-delete nat0 2>&1); then
	fail "delete with vifs" "deleted"
elif printf '%s' "$out" | grep -qE "vifs? (is|are) on its bridge lnet-nat0" && [ "$(net_row nat0 dnsmasq)" = running ]; then
	pass "network-delete is refused while domains' vifs are on it, and the network runs on"
else
	fail "delete with vifs" "$out"
fi
for d in g1 g2 g3 g4; do lodge destroy $d >/dev/null 2>&1; done

# Autostart: the network comes up before the domain that needs it.
lodge network-create auto0 --subnet 10.74.0.0/24 --isolated --autostart >/dev/null 2>&1
lodge network-stop auto0 >/dev/null 2>&1
domain g6 auto0
echo 'autostart = true' >>"$DOMS/g6.cfg"
lodge autostart >"$T/autostart.out" 2>&1
if [ "$(sed -n 1p "$T/autostart.out")" = "started network auto0" ] && grep -qx "started g6" "$T/autostart.out" &&
   [ "$(net_row auto0 dnsmasq)" = running ] && wait_for "$(con g6)" 'dhcp: lease 10\.74\.0\.' 20; then
	pass "lodge autostart starts an autostart network before the domains on it"
else
	fail "autostart" "$(cat "$T/autostart.out"; lodge network-list)"
fi
lodge destroy g6 >/dev/null 2>&1
rm -f "$DOMS/g6.cfg"
for n in nat0 iso0 rt0 auto0; do lodge network-delete $n >"$T/delete-$n.out" 2>&1 || fail "delete $n" "$(cat "$T/delete-$n.out")"; done
if [ -z "$(lodge network-list -o tsv)" ] && ! in_ns ip link show | grep -q lnet- &&
   ! pgrep -f "$RUN/.networks/" >/dev/null; then
	pass "network-delete removes the bridges and the dnsmasqs"
else
	fail "delete leftovers" "$(lodge network-list; in_ns ip link show | grep lnet-; pgrep -af "$RUN/.networks/")"
fi
if [ "$(in_ns nft list ruleset)" = "$RULES_BEFORE" ]; then
	pass "nft list ruleset is byte for byte what it was before the first network"
else
	fail "ruleset" "$(diff <(echo "$RULES_BEFORE") <(in_ns nft list ruleset) | head -20)"
fi

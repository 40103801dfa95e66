#!/bin/bash
# A network's nftables rules (src/lib/net/netfilter.c) on real packets, in
# namespaces of the test's own: "host" ($NS) has the network's bridge with
# the gateway 10.77.0.1 and an uplink veth (192.0.2.1) to "internet"
# (192.0.2.2, no route back to 10.77.0.0/24); "guest" (10.77.0.2) is joined
# to the bridge by a veth, a kernel endpoint standing in for a guest.  The
# rules are put in place by test-lib-netfilter's driver (netfilter_net_add,
# _del, _present, netfilter_ip_forward_on), as network.c will.
#   NAT       the guest pings internet; a capture there sees the uplink's
#             address as the source; internet cannot open a way in
#   routed    the source is the guest's own; internet reaches the guest
#   isolated  no reply, and the forward chain's drop counter shows why
#   the host's own table is left alone and, with every network deleted,
#   `nft list ruleset` is byte for byte what it was; a second add
#   replaces; of two networks, deleting one leaves the other's rules
#   intact; a name that is nft syntax is refused with nothing written;
#   a host forward policy of drop wins over our accept (as lodge.conf(5)
#   says).
. "$(dirname "$0")/../lib.sh"

integ_begin "netfilter" root cmd:nft:nftables cmd:tcpdump netns
NF=$BUILD/tests/test-lib-netfilter
if [ ! -x "$NF" ]; then skip "netfilter" "$NF not built (make $NF)"; exit 0; fi
G=lodge-nfg-$$ I=lodge-nfi-$$
netns_add "$G" "$I"
BR=nfbr$$ SUB=10.77.0.0/24
h() { ip netns exec "$NS" "$@"; }
g() { ip netns exec "$G" "$@"; }
i() { ip netns exec "$I" "$@"; }
nf() { h "$NF" "$@"; }

for ns in "$NS" "$G" "$I"; do ip netns exec "$ns" ip link set lo up; done
h ip link add "$BR" type bridge
h ip addr add 10.77.0.1/24 dev "$BR"
h ip link set "$BR" up
h ip link add gh netns "$NS" type veth peer name g0 netns "$G"
h ip link set gh master "$BR" up
g ip addr add 10.77.0.2/24 dev g0
g ip link set g0 up
g ip route add default via 10.77.0.1
h ip link add up0 type veth peer name in0 netns "$I"
h ip addr add 192.0.2.1/24 dev up0
h ip link set up0 up
i ip addr add 192.0.2.2/24 dev in0
i ip link set in0 up

# The host's own firewall, which must come through untouched.
h nft -f - <<'EOF'
table ip hostfw {
	chain hostforward {
		type filter hook forward priority 10; policy accept;
		ip daddr 203.0.113.9 drop
	}
}
EOF
h nft list ruleset >"$T/before"
if ! grep -q 'chain hostforward' "$T/before"; then fail "netfilter" "the host's own table was not made"; exit 0; fi

out=$(nf forward-on) && out2=$(nf forward-on)
if [ "$out" = 1 ] && [ "$out2" = 0 ] && [ "$(h cat /proc/sys/net/ipv4/ip_forward)" = 1 ] &&
	[ "$(g cat /proc/sys/net/ipv4/ip_forward)" = 0 ]; then
	pass "IPv4 forwarding turned on in the host namespace only: 1 the first time (tell the user), 0 after"
else
	fail "IPv4 forwarding turned on" "first '$out', second '$out2'"
fi

# capture: tcpdump in internet on in0, echo requests only, into $T/cap; ready when it listens.
CAP_PID=
capture() {
	: >"$T/cap"
	: >"$T/cap.err"
	i tcpdump -i in0 -n -l -p 'icmp[icmptype] == icmp-echo' >"$T/cap" 2>"$T/cap.err" &
	CAP_PID=$!
	wait_for "$T/cap.err" 'listening on' 20
}
capture_end() { kill "$CAP_PID" 2>/dev/null; wait "$CAP_PID" 2>/dev/null; }
g_pings() { g ping -c 1 -W 1 -q 192.0.2.2 >/dev/null 2>&1; }
i_pings_guest() { i ping -c 1 -W 1 -q 10.77.0.2 >/dev/null 2>&1; }
stateless() { h nft -s list ruleset; }

# ---- NAT -------------------------------------------------------------------------------------
if ! msg=$(nf add web "$BR" "$SUB" nat 2>&1); then
	fail "NAT network's rules put in place" "$msg"
	exit 0
fi
[ "$(nf present web)" = 1 ] && pass "present says 1 once the rules are in place" ||
	fail "present after add" "$(nf present web 2>&1)"
stateless >"$T/nat-once"
nf add web "$BR" "$SUB" nat
stateless >"$T/nat-twice"
if cmp -s "$T/nat-once" "$T/nat-twice" && [ "$(grep -c masquerade "$T/nat-twice")" = 3 ]; then
	pass "a second add replaces the network's rules, never duplicates them"
else
	fail "a second add replaces" "$(diff "$T/nat-once" "$T/nat-twice" | head -5)"
fi

if capture && wait_until 20 g_pings && wait_for "$T/cap" 'ICMP echo request' 10; then
	if grep -q '192\.0\.2\.1 > 192\.0\.2\.2: ICMP echo request' "$T/cap" && ! grep -q '10\.77\.0\.2' "$T/cap"; then
		pass "NAT: the guest pings the internet, which sees the uplink's address 192.0.2.1 as the source"
	else
		fail "NAT: the source seen upstream is the uplink's" "$(head -3 "$T/cap")"
	fi
else
	fail "NAT: the guest pings the internet" "$(head -3 "$T/cap" "$T/cap.err")"
fi
capture_end
i ip route add "$SUB" via 192.0.2.1
if ! i ping -c 2 -W 1 -q 10.77.0.2 >/dev/null 2>&1; then
	pass "NAT: the internet cannot open a way in to the guest (even with a route to the subnet)"
else
	fail "NAT: no way in from the internet" "internet's ping reached 10.77.0.2"
fi

# ---- routed ------------------------------------------------------------------------------------
nf add web "$BR" "$SUB" routed
if capture && wait_until 20 g_pings && wait_for "$T/cap" 'ICMP echo request' 10; then
	if grep -q '10\.77\.0\.2 > 192\.0\.2\.2: ICMP echo request' "$T/cap" && ! grep -q '192\.0\.2\.1 >' "$T/cap"; then
		pass "routed: the internet sees the guest's own address 10.77.0.2 as the source"
	else
		fail "routed: the guest's own address upstream" "$(head -3 "$T/cap")"
	fi
else
	fail "routed: the guest pings the internet" "$(head -3 "$T/cap" "$T/cap.err")"
fi
capture_end
if wait_until 10 i_pings_guest; then
	pass "routed: the internet reaches the guest (a routed network is reachable)"
else
	fail "routed: the internet reaches the guest" "no reply from 10.77.0.2"
fi
if ! h nft list chain inet lodge web_postrouting >/dev/null 2>&1; then
	pass "routed: the NAT network's postrouting chain went with the change of mode"
else
	fail "routed: no postrouting chain" "$(h nft list chain inet lodge web_postrouting)"
fi

# ---- isolated ----------------------------------------------------------------------------------
nf add web "$BR" "$SUB" isolated
drops() { h nft list chain inet lodge web_forward | awk -v br="\"$BR\"" '$1 == "iifname" && $2 == br && $3 == "counter" { print $5 }'; }
before_drops=$(drops)
if ! g ping -c 2 -W 1 -q 192.0.2.2 >/dev/null 2>&1; then
	after_drops=$(drops)
	if [ "${after_drops:-0}" -ge $((${before_drops:-0} + 2)) ]; then
		pass "isolated: no reply from the internet, and the forward chain's drop counter counted the pings ($before_drops -> $after_drops)"
	else
		fail "isolated: the drop counted" "counter $before_drops -> $after_drops"
	fi
else
	fail "isolated: no way out" "the guest's ping got a reply"
fi
if ! i ping -c 1 -W 1 -q 10.77.0.2 >/dev/null 2>&1; then
	pass "isolated: nothing forwarded in either"
else
	fail "isolated: nothing in" "internet reached the guest"
fi
if g ping -c 1 -W 5 -q 10.77.0.1 >/dev/null 2>&1; then
	pass "isolated: the guest still reaches the host (its DHCP and DNS are there)"
else
	fail "isolated: the guest reaches the host" "no reply from 10.77.0.1"
fi

# ---- delete --------------------------------------------------------------------------------------
nf del web
h nft list ruleset >"$T/after"
if cmp -s "$T/before" "$T/after"; then
	pass "deleting the last network leaves nft list ruleset byte for byte as it was (the host's table included)"
else
	fail "the ruleset as it was" "$(diff "$T/before" "$T/after" | head -5)"
fi
if [ "$(nf present web)" = 0 ] && nf del web; then
	pass "present says 0 after delete; deleting again is no error"
else
	fail "present after delete" "$(nf present web 2>&1)"
fi

# ---- two networks ---------------------------------------------------------------------------
nf add web "$BR" "$SUB" nat
stateless >"$T/web-alone"
nf add lab nflab$$ 10.78.0.0/24 isolated
if [ "$(stateless | grep -c 'chain lab_')" = 2 ] && nf del lab && stateless | cmp -s - "$T/web-alone"; then
	pass "of two networks, deleting one leaves the other's rules intact"
else
	fail "deleting one of two networks" "$(stateless | diff "$T/web-alone" - | head -5)"
fi
if capture && wait_until 20 g_pings && wait_for "$T/cap" '192\.0\.2\.1 > 192\.0\.2\.2' 10; then
	pass "... and the other still works (the guest's ping NATed)"
else
	fail "the remaining network still works" "$(head -3 "$T/cap")"
fi
capture_end

# ---- the host's forward policy drop wins ----------------------------------------------------
h nft add table ip hostdrop$$
h nft add chain ip hostdrop$$ hostforward '{ type filter hook forward priority 20; policy drop; }'
if ! g ping -c 2 -W 1 -q 192.0.2.2 >/dev/null 2>&1; then
	pass "a host forward chain with policy drop wins over our accept (the host's firewall must let the bridge through)"
else
	fail "the host's drop wins" "the guest got out past the host's policy drop"
fi
h nft delete table ip hostdrop$$

# ---- refusals -------------------------------------------------------------------------------------
stateless >"$T/pre-bad"
if ! msg=$(nf add 'x;flush ruleset' "$BR" "$SUB" nat 2>&1) && [[ $msg == *"network name"* ]] &&
	! msg2=$(nf add web 'br" accept' "$SUB" nat 2>&1) && [[ $msg2 == *"bridge name"* ]] &&
	stateless | cmp -s - "$T/pre-bad"; then
	pass "a name or bridge that is nft syntax is refused, one line, nothing written"
else
	fail "nft syntax refused" "$msg / $msg2"
fi

nf del web
h nft list ruleset >"$T/after"
if cmp -s "$T/before" "$T/after"; then
	pass "with both networks gone the ruleset is again byte for byte the host's"
else
	fail "the ruleset as it was at the end" "$(diff "$T/before" "$T/after" | head -5)"
fi

#!/bin/bash
# lodge install's network (issue 35, point 2): a network or a bridge named
# must exist, refused in one line before anything is written (in --dry-run
# too); with neither, the guest joins the network "default", made on first
# use as libvirt's: NAT on a private /24 that overlaps no route of the
# host (here one is taken by an address of the test's namespace, so the
# next candidate is picked), with DHCP: a Mini-OS guest on it gets a lease
# from its subnet.  The install itself runs when the template is cached.
. "$(dirname "$0")/../lib.sh"

integ_begin "install networks" root kvm minios cmd:dnsmasq cmd:nft netns
at_exit 'lodge network-delete default >/dev/null 2>&1'
IMAGES=$ROOT/var/lib/lodge/images
NETS=$ROOT/etc/lodge/networks
nothing_left() { [ ! -e "$DOMS/$1.cfg" ] && [ -z "$(ls -A "$IMAGES" 2>/dev/null)" ] && [ -z "$(ls -A "$NETS" 2>/dev/null)" ]; }

# ---- what must exist -------------------------------------------------------------------
for opt in "--network NOSUCH" "--bridge NOSUCH"; do
	for dry in --dry-run ""; do
		# shellcheck disable=SC2086
		out=$(lodge install web $opt $dry 2>&1)
		rc=$?
		if [ $rc -ne 0 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "NOSUCH" <<<"$out" && nothing_left web; then
			pass "install $opt ${dry:-(no dry run)} refused in one line, nothing written: $out"
		else
			fail "install $opt ${dry:-(no dry run)}" "exit $rc: $out"
		fi
	done
done

# ---- the default network ---------------------------------------------------------------
# libvirt's 192.168.122.0/24 is taken here: the default network goes next door.
in_ns ip link add taken0 type bridge
in_ns ip addr add 192.168.122.1/24 dev taken0
in_ns ip link set taken0 up
out=$(lodge install web --dry-run 2>&1)
if grep -q "^would create network default first (NAT, 192.168.123.0/24" <<<"$out" &&
   grep -q '"network=default"' <<<"$out" && nothing_left web; then
	pass "install --dry-run with no network option: would make the default network on a free /24 (192.168.123.0/24)"
else
	fail "install --dry-run, the default network" "$out"
fi

if ! command -v mmdebstrap >/dev/null || ! template_cached bookworm; then
	skip "install onto the default network" "no bookworm template: ${TEMPLATE_WHY:-mmdebstrap not installed}"
	exit 0
fi
if out=$(LODGE_TIMEOUT=300 lodge install web --size 2G 2>&1) &&
   grep -q "network default was created first: NAT, 192.168.123.0/24" <<<"$out" &&
   grep -q '"network=default"' "$DOMS/web.cfg" && lodge check web >/dev/null 2>&1 &&
   in_ns ip -4 addr show lnet-default | grep -q 'inet 192.168.123.1/24'; then
	pass "install with no network option made the default network (192.168.123.1 on lnet-default) and the config lodge check takes"
else
	fail "install onto the default network" "$(tail -3 <<<"$out"); $(lodge check web 2>&1)"
fi
out=$(lodge install web2 --size 2G 2>&1)
if ! grep -q "created first" <<<"$out" && grep -q '"network=default"' "$DOMS/web2.cfg" 2>/dev/null &&
   [ "$(ls "$NETS"/*.cfg 2>/dev/null | wc -l)" = 1 ]; then
	pass "a second install joins the same default network"
else
	fail "a second install" "$out"
fi
# A guest on it gets an address (Mini-OS stands in for the Debian guest,
# whose kernel cannot boot on every host's KVM).
printf 'name = "g1"\nmemory = 32\nkernel = "%s"\nextra = "ip=dhcp"\nvif = [ "network=default" ]\n' "$MINIOS" >"$DOMS/g1.cfg"
if lodge create g1 >"$T/g1.out" 2>&1 && wait_for "$RUN/g1/console.log" 'dhcp: lease 192\.168\.123\.' 30 &&
   grep -aq 'dhcp: router 192\.168\.123\.1' "$RUN/g1/console.log"; then
	pass "a guest on the default network gets a lease from it, the gateway its router"
else
	fail "a guest on the default network" "$(cat "$T/g1.out"; grep -a dhcp "$RUN/g1/console.log" 2>&1 | tail -2)"
fi
lodge destroy g1 >/dev/null 2>&1

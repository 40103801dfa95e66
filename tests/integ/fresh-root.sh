#!/bin/bash
# A fresh host (issue 35, point 3): on a --root with no /etc/lodge and no
# /var/lib/lodge/images yet, each command makes the directories it writes
# in, with the modes SECURITY.md gives them, and names itself in its
# messages: lodge web-passwd (ROOT/etc/lodge, the users file 0600), lodge
# install with its disk elsewhere (the seed is made in images/), and
# without (images/ and etc/lodge/domains/).
. "$(dirname "$0")/../lib.sh"

integ_begin "fresh root" root
rm -rf "$ROOT"
mkdir -p "$ROOT"
mode() { stat -c %a "$1" 2>/dev/null; }

# ---- lodge web-passwd ------------------------------------------------------------------
if out=$(echo 'a long password' | lodge web-passwd alice 2>&1) &&
   [ "$(mode "$ROOT/etc/lodge")" = 755 ] && [ "$(mode "$ROOT/etc/lodge/web-users")" = 600 ]; then
	pass "web-passwd on a fresh root makes /etc/lodge (0755) and web-users (0600)"
else
	fail "web-passwd on a fresh root" "$out; /etc/lodge $(mode "$ROOT/etc/lodge"), web-users $(mode "$ROOT/etc/lodge/web-users")"
fi
out=$(echo short | lodge web-passwd bob 2>&1)
case $out in
"lodge web-passwd: error: "*) pass "web-passwd's error names web-passwd: $out" ;;
*) fail "web-passwd's error names web-passwd" "$out" ;;
esac

# ---- lodge install -----------------------------------------------------------------------
if ! command -v mmdebstrap >/dev/null; then
	skip "install on a fresh root" "mmdebstrap not installed"
	exit 0
fi
if ! template_cached bookworm; then
	skip "install on a fresh root" "no bookworm template: $TEMPLATE_WHY"
	exit 0
fi
rm -rf "${ROOT:?}/etc" "${ROOT:?}/var/lib/lodge/images"
integ_netns
lodge bridge-create lodgebr0 >/dev/null
mkdir -p "$T/disks"
if out=$(lodge install web2 --bridge lodgebr0 --disk "$T/disks/web2.img" --size 2G 2>&1) &&
   [ -f "$ROOT/var/lib/lodge/images/web2-seed.img" ] && [ -f "$ROOT/etc/lodge/domains/web2.cfg" ] &&
   [ "$(mode "$ROOT/var/lib/lodge/images")" = 755 ] && [ "$(mode "$ROOT/etc/lodge/domains")" = 755 ]; then
	pass "install with its disk elsewhere on a fresh root: images/ (0755) for its seed, domains/ (0755) for its config"
else
	fail "install with its disk elsewhere on a fresh root" "$(echo "$out" | tail -2)"
fi
rm -rf "${ROOT:?}/etc" "${ROOT:?}/var/lib/lodge/images"
if out=$(lodge install web --bridge lodgebr0 --size 2G 2>&1) &&
   [ -f "$ROOT/var/lib/lodge/images/web.img" ] && [ -f "$ROOT/var/lib/lodge/images/web-seed.img" ] &&
   lodge check web >/dev/null 2>&1; then
	pass "install on a fresh root: disk, seed and a config lodge check takes"
else
	fail "install on a fresh root" "$(echo "$out" | tail -2)"
fi

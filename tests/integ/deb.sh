#!/bin/bash
# The Debian package, as an admin gets it: `make deb` builds it and lintian
# finds nothing to say; installed with apt into a clean Debian 12 root (its
# dependencies from the Debian archive), it makes the lodge user and the
# host's directories, keeps lodge.conf as a conffile, enables the boot
# unit, and lodge --version, lodge check on the shipped example and
# lodge-hyp --probe work there; a purge leaves nothing of the package.
# It depends on or recommends what its commands run, and ships README.md.
#
# The clean root is made once with mmdebstrap and kept as a tarball in
# build/cache/ (LODGE_CACHE), with apt's lists and the downloaded packages,
# so a later run only extracts it and asks the archive what changed.
. "$(dirname "$0")/../lib.sh"

integ_begin "debian package" root cmd:dpkg-buildpackage cmd:lintian cmd:mmdebstrap cmd:unshare
SUITE=bookworm
MIRROR=http://deb.debian.org/debian
CACHE=${LODGE_CACHE:-$TOP/build/cache}
TARBALL=$CACHE/$SUITE-apt.tar
ARCHIVES=$CACHE/$SUITE-archives

# The archive, through apt's own downloader (and so apt's proxy settings).
if ! timeout 20 /usr/lib/apt/apt-helper download-file "$MIRROR/dists/$SUITE/InRelease" "$T/InRelease" \
	>"$T/reach.log" 2>&1; then
	skip "debian package" "the Debian archive ($MIRROR) is unreachable: $(tail -1 "$T/reach.log")"
	exit 0
fi

# ---- build -----------------------------------------------------------------
# Out of make check's environment: the package is built as a distribution
# builds it (no sanitizers, no outer make's job server).
if env -u SANITIZE -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$TOP" BUILD="$BUILD" deb >"$T/deb.log" 2>&1; then
	pass "make deb builds the package and lintian reports no errors or warnings"
else
	if ls "$BUILD"/deb/lodge_*.deb >/dev/null 2>&1; then
		fail "lintian reports no errors or warnings" "$(grep -E '^[EW]: ' "$T/deb.log" | head -5 | tr '\n' ' ')"
	else
		fail "make deb builds the package" "$(tail -5 "$T/deb.log" | tr '\n' ' ')"
	fi
	exit 0
fi
DEB_PKG=$(ls "$BUILD"/deb/lodge_*_amd64.deb)
VERSION=$(dpkg-deb -f "$DEB_PKG" Version)

# What its commands run (network-create: dnsmasq and nftables; install:
# mkfs.vfat, mcopy, mmdebstrap) is depended on or recommended, and the
# README comes with it (issue 35).
rel=$(dpkg-deb -f "$DEB_PKG" Depends Recommends | tr ',' '\n' | sed 's/^[A-Za-z-]*: *//; s/^ *//; s/ .*//')
missing=
for p in dnsmasq-base nftables dosfstools mtools mmdebstrap e2fsprogs; do
	grep -qx "$p" <<<"$rel" || missing+="$p "
done
if [ -z "$missing" ]; then
	pass "the package depends on or recommends what its commands run (dnsmasq-base, nftables, ...)"
else
	fail "the package names what its commands run" "neither depended on nor recommended: $missing"
fi
if dpkg-deb -c "$DEB_PKG" | grep -E ' \./usr/share/doc/lodge/README\.md(\.gz)?$' >/dev/null; then
	pass "the package ships README.md in /usr/share/doc/lodge"
else
	fail "the package ships README" "$(dpkg-deb -c "$DEB_PKG" | grep -o './usr/share/doc/lodge/.*' | tr '\n' ' ')"
fi

# ---- a clean Debian 12 -------------------------------------------------------
if [ ! -f "$TARBALL" ]; then
	mkdir -p "$CACHE"
	# Written beside and renamed: a run cut short leaves no half tarball
	# (mmdebstrap takes a name ending in .tar for a tarball).
	part=$CACHE/.$SUITE-apt.$$.tar
	if ! mmdebstrap --quiet --variant=apt --skip=cleanup/apt/lists "$SUITE" "$part" \
		"deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" \
		"deb ${MIRROR}-security $SUITE-security main" >"$T/mmdebstrap.log" 2>&1; then
		rm -rf "$part"
		fail "mmdebstrap makes a clean $SUITE root" "$(tail -3 "$T/mmdebstrap.log" | tr '\n' ' ')"
		exit 0
	fi
	mv "$part" "$TARBALL"
fi
R=$T/chroot
mkdir -p "$R" "$ARCHIVES/partial"
if ! tar -x -C "$R" -f "$TARBALL" 2>"$T/tar.log"; then
	fail "the cached clean root extracts" "$TARBALL: $(head -1 "$T/tar.log") (remove it to make it again)"
	exit 0
fi
cp "$DEB_PKG" "$R/tmp/"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null

# Everything inside runs in a mount namespace of its own: its mounts (proc,
# /dev with /dev/kvm, /sys, apt's package cache) go with it.
inside() {
	unshare --mount --propagation private /bin/bash -c '
		R=$1 ARCHIVES=$2; shift 2
		mount -t proc proc "$R/proc" && mount --rbind /dev "$R/dev" && mount --rbind /sys "$R/sys" &&
			mount --bind "$ARCHIVES" "$R/var/cache/apt/archives" || exit 125
		exec chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"' inside "$R" "$ARCHIVES" "$@"
}

# ---- install ------------------------------------------------------------------
if inside apt-get update -qq >"$T/apt.log" 2>&1 &&
	inside apt-get install -y -qq --no-install-recommends "/tmp/${DEB_PKG##*/}" >>"$T/apt.log" 2>&1; then
	pass "apt installs the package into a clean $SUITE, its dependencies from the archive"
else
	fail "apt installs the package into a clean $SUITE" "$(grep -E '^(E:|dpkg)' "$T/apt.log" | head -3 | tr '\n' ' ')"
	exit 0
fi

# ---- what the package made ---------------------------------------------------------
if inside getent passwd lodge | grep -q ':/nonexistent:/usr/sbin/nologin$'; then
	pass "the lodge system user (lodge-hyp's sandbox) is made"
else
	fail "the lodge system user is made" "$(inside getent passwd lodge)"
fi
modes=$(cd "$R" && stat -c '%n %a %U' etc/lodge etc/lodge/domains var/lib/lodge/images \
	var/lib/lodge/save var/lib/lodge/crash var/log/lodge 2>&1 | tr '\n' ',')
want='etc/lodge 755 root,etc/lodge/domains 755 root,var/lib/lodge/images 755 root,'
want+='var/lib/lodge/save 700 root,var/lib/lodge/crash 700 root,var/log/lodge 755 root,'
if [ "$modes" = "$want" ]; then
	pass "the host's directories are made (save and crash root only)"
else
	fail "the host's directories are made" "got '$modes'"
fi
conffiles=$(inside dpkg-query -W -f='${Conffiles}' lodge)
if grep -q '/etc/lodge/lodge.conf ' <<<"$conffiles" && grep -q '/etc/lodge/domains/minios.cfg ' <<<"$conffiles"; then
	pass "lodge.conf and the example domain are conffiles"
else
	fail "lodge.conf is a conffile" "conffiles: $conffiles"
fi
wants=$R/etc/systemd/system/multi-user.target.wants
if [ -L "$wants/lodge-domains.service" ] && [ ! -e "$wants/lodge-migrate-receive.service" ] &&
	grep -q '^ExecStart=/usr/sbin/lodge ' "$R/lib/systemd/system/lodge-domains.service"; then
	pass "the boot unit is enabled (and runs /usr/sbin/lodge), the migration listener is not"
else
	fail "the boot unit is enabled" "$(ls "$wants" 2>&1 | tr '\n' ' ') $(grep ExecStart "$R"/lib/systemd/system/*.service | tr '\n' ' ')"
fi

# ---- what an admin runs first ---------------------------------------------------------
out=$(inside lodge --version 2>&1)
if [ "$out" = "lodge $VERSION" ]; then
	pass "lodge --version says the package's version ($VERSION)"
else
	fail "lodge --version" "got '$out', want 'lodge $VERSION'"
fi
if out=$(inside lodge check /etc/lodge/domains/minios.cfg 2>&1); then
	pass "lodge check accepts the shipped example domain (its kernel in /usr/share/lodge)"
else
	fail "lodge check on the shipped example" "$out"
fi
if need_kvm "lodge-hyp --probe in the installed root"; then
	if out=$(inside lodge-hyp --probe 2>&1) && grep -q '^KVM backend: ' <<<"$out"; then
		pass "lodge-hyp --probe finds /dev/kvm: $(head -1 <<<"$out" | cut -d: -f2 | cut -c1-40)"
	else
		fail "lodge-hyp --probe in the installed root" "$out"
	fi
fi

# ---- purge ------------------------------------------------------------------------
left=
if inside apt-get purge -y -qq lodge >"$T/purge.log" 2>&1; then
	for f in usr/sbin/lodge usr/sbin/lodge-hyp etc/lodge var/log/lodge var/lib/lodge \
		lib/systemd/system/lodge-domains.service "$wants/lodge-domains.service"; do
		[ ! -e "$R/${f#"$R"/}" ] || left+=" $f"
	done
	if [ -z "$left" ]; then
		pass "a purge removes the package's files, directories and unit links"
	else
		fail "a purge removes the package's files" "left:$left"
	fi
else
	fail "apt-get purge lodge" "$(tail -3 "$T/purge.log" | tr '\n' ' ')"
fi

#!/bin/bash
# Debian's cloud kernel for Lodge guests, without installing it on the host:
# download the package linux-image-cloud-amd64 depends on, unpack it with
# dpkg-deb and write
#   OUT/vmlinuz          the bzImage (Linux/x86 boot protocol)
#   OUT/vmlinux          the uncompressed ELF, with its Xen PVH entry note
#   OUT/kernel-version   e.g. 6.1.0-57-cloud-amd64
#   OUT/modules/*.ko     virtio (ring, pci, blk, net, balloon) and ext4 with
#                        their dependencies, uncompressed
#   OUT/modules/order    the .ko files in load order
#   OUT/modules/builtin  the wanted modules this kernel has built in
# The .deb is kept in OUT/deb/; nothing is redone while the outputs are
# newer than it and than this script.  Quiet except for one summary line.
# Usage: share/debian/build-kernel.sh [OUT]   (default build/debian)
set -euo pipefail
me=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build/debian}
die() { echo "build-kernel: $*" >&2; exit 1; }

# The modules the guest needs; "?" marks one that may not exist in every
# kernel version (virtio_pci_legacy_dev is new in 5.16).
WANTED="virtio virtio_ring virtio_pci virtio_pci_modern_dev virtio_pci_legacy_dev? \
virtio_blk virtio_net virtio_balloon ext4"

for t in apt-cache apt-get dpkg-deb readelf od dd busybox; do
	command -v "$t" >/dev/null || die "needs $t (make deps)"
done
mkdir -p "$out/deb"
out=$(cd "$out" && pwd)

# ---- the package -------------------------------------------------------
meta=linux-image-cloud-amd64
pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
[ -n "$pkg" ] || die "apt-cache does not know $meta: no Debian package lists (apt-get update; is the archive reachable?)"
version=${pkg#linux-image-}
deb=$(ls "$out/deb/${pkg}"_*_amd64.deb 2>/dev/null | tail -1 || true)
if [ -z "$deb" ]; then
	log=$out/deb/download.log
	if ! (cd "$out/deb" && apt-get download "$pkg") >"$log" 2>&1; then
		if grep -Eqi 'resolv|connect|unreachable|timed out|Failed to fetch' "$log"; then
			die "cannot download $pkg: no network or Debian's archive unreachable ($(grep -E '^(E|Err):' "$log" | head -1))"
		fi
		die "apt-get download $pkg failed: $(tail -1 "$log")"
	fi
	rm -f "$log"
	deb=$(ls "$out/deb/${pkg}"_*_amd64.deb 2>/dev/null | tail -1 || true)
	[ -n "$deb" ] || die "apt-get download $pkg left no .deb in $out/deb"
fi

uptodate=1
for f in vmlinuz vmlinux kernel-version modules/order modules/builtin; do
	if [ ! -f "$out/$f" ] || [ ! "$out/$f" -nt "$deb" ] || [ ! "$out/$f" -nt "$me" ]; then uptodate=0; fi
done
if [ $uptodate = 1 ] && [ "$(cat "$out/kernel-version")" = "$version" ]; then
	echo "build-kernel: $version up to date in $out"
	exit 0
fi

scratch=$(mktemp -d "$out/.unpack.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
dpkg-deb -x "$deb" "$scratch" || die "cannot unpack $deb"
[ -f "$scratch/boot/vmlinuz-$version" ] || die "$deb has no boot/vmlinuz-$version"
cp "$scratch/boot/vmlinuz-$version" "$out/vmlinuz.new"

# ---- vmlinux: the payload of the bzImage ----------------------------------
# Setup header (Documentation/arch/x86/boot.rst): setup_sects at 0x1f1 (0
# means 4), payload_offset at 0x248 and payload_length at 0x24c, relative
# to the protected-mode code at (setup_sects + 1) * 512.
z=$out/vmlinuz.new
u8()  { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }
u32() { od -An -tu4 --endian=little -j "$2" -N4 "$1" | tr -d ' '; }
[ "$(dd if="$z" bs=1 skip=$((0x202)) count=4 status=none)" = HdrS ] || die "vmlinuz is not a bzImage (no HdrS)"
sects=$(u8 "$z" $((0x1f1))); [ "$sects" -ne 0 ] || sects=4
start=$(( (sects + 1) * 512 + $(u32 "$z" $((0x248))) ))
length=$(u32 "$z" $((0x24c)))
magic=$(od -An -tx1 -j "$start" -N4 "$z" | tr -d ' ')
# Every compressor but gzip has the uncompressed size appended (4 bytes).
payload() { dd if="$z" iflag=skip_bytes,count_bytes skip="$start" count="$((length - $1))" bs=1M status=none; }
case $magic in
	1f8b*)    comp=gzip; payload 0 | gzip -dc ;;
	fd377a58) comp=xz;   payload 4 | xz -dc ;;
	28b52ffd) comp=zstd; payload 4 | zstd -dcq ;;
	02214c18) comp=lz4;  command -v lz4 >/dev/null || die "the payload is lz4: needs lz4 (make deps)"
	          payload 4 | lz4 -dcq ;;
	*) die "unknown payload compression (magic $magic at offset $start)" ;;
esac >"$out/vmlinux.new" || die "cannot decompress the $comp payload of vmlinuz"
[ "$(od -An -tx1 -N5 "$out/vmlinux.new" | tr -d ' ')" = 7f454c4602 ] || die "the payload of vmlinuz is not an ELF64"
# XEN_ELFNOTE_PHYS32_ENTRY (18): the PVH entry point.
pvh=$(LC_ALL=C readelf -n "$out/vmlinux.new" | awk '$1 == "Xen" && /\(0x00000012\)|PHYS32_ENTRY/ { getline; print $3$4$5$6; exit }')
[ -n "$pvh" ] || die "vmlinux has no Xen PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY)"
pvh=0x${pvh:6:2}${pvh:4:2}${pvh:2:2}${pvh:0:2}   # the note's bytes, little-endian

# ---- modules ---------------------------------------------------------------
# The package ships no modules.dep (its postinst runs depmod); busybox's
# depmod makes one in the unpacked tree.
moddir=$scratch/lib/modules/$version
[ -d "$moddir/kernel" ] || die "$deb has no lib/modules/$version"
busybox depmod -b "$scratch" "$version" || die "depmod failed on the unpacked modules"
[ -s "$moddir/modules.dep" ] || die "depmod made no modules.dep"
rm -rf "$out/modules.new"
mkdir -p "$out/modules.new"
order=() builtin=()
# modpath NAME: the module's path relative to $moddir, "" if none.
modpath() {
	awk -F: -v n="$1" '{ b = $1; sub(/.*\//, "", b); sub(/\.ko(\.[a-z]+)?$/, "", b); gsub(/-/, "_", b)
	                     if (b == n) { print $1; exit } }' "$moddir/modules.dep"
}
# visit PATH: add PATH after everything modules.dep says it needs.
visit() {
	local p=$1 d deps
	case " ${order[*]} " in *" $p "*) return ;; esac
	read -ra deps < <(awk -F: -v p="$p" '$1 == p { print $2; exit }' "$moddir/modules.dep") || true   # a module modules.dep does not name needs nothing
	for d in "${deps[@]}"; do
		visit "$d"
	done
	order+=("$p")
}
for w in $WANTED; do
	n=${w%\?}
	p=$(modpath "$n")
	if [ -n "$p" ]; then
		visit "$p"
	elif grep -Eq "/$n\.ko$" "$moddir/modules.builtin"; then
		builtin+=("$n")
	elif [ "$n" = "$w" ]; then
		die "module $n is neither in $pkg nor built into its kernel"
	fi
done
: >"$out/modules.new/order"
for p in "${order[@]}"; do
	f=$(basename "$p")
	case $f in   # busybox insmod may not decompress: store them plain
		*.ko)     cp "$moddir/$p" "$out/modules.new/$f" ;;
		*.ko.xz)  f=${f%.xz};  xz -dc "$moddir/$p" >"$out/modules.new/$f" ;;
		*.ko.zst) f=${f%.zst}; zstd -dcq "$moddir/$p" >"$out/modules.new/$f" ;;
		*.ko.gz)  f=${f%.gz};  gzip -dc "$moddir/$p" >"$out/modules.new/$f" ;;
		*) die "unknown module file $p" ;;
	esac
	echo "$f" >>"$out/modules.new/order"
done
printf '%s\n' "${builtin[@]}" >"$out/modules.new/builtin"

# ---- install the results ---------------------------------------------------
rm -rf "$out/modules" "$out/.work"
mv "$out/modules.new" "$out/modules"
mv "$out/vmlinux.new" "$out/vmlinux"
mv "$out/vmlinuz.new" "$out/vmlinuz"
echo "$version" >"$out/kernel-version"
echo "build-kernel: $version: vmlinuz ($((($(stat -c %s "$out/vmlinuz") + 1023) / 1024)) KiB)," \
     "vmlinux ($comp payload, PVH entry $pvh), ${#order[@]} modules$( [ ${#builtin[@]} -eq 0 ] || echo " (built in: ${builtin[*]})")"

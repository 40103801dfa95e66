#!/bin/bash
# A busybox initramfs for the Debian guest kernel: OUT/initrd.img, a
# gzip-compressed newc cpio holding a static busybox, /init (from
# share/debian/init) and the modules build-kernel.sh collected in
# OUT/modules/ (loaded in the order of OUT/modules/order).  Runs
# build-kernel.sh first if OUT has no modules; does nothing while
# initrd.img is newer than everything it is made from.
# Usage: share/debian/build-initramfs.sh [OUT]   (default build/debian)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-$top/build/debian}
die() { echo "build-initramfs: $*" >&2; exit 1; }
command -v cpio >/dev/null || die "needs cpio (make deps)"

[ -f "$out/modules/order" ] || "$here/build-kernel.sh" "$out" >/dev/null
out=$(cd "$out" && pwd)
# The guest has no libc: only a static busybox will do.
busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || ! LC_ALL=C readelf -d "$busybox" 2>&1 | grep -q 'no dynamic section'; then
	die "no static busybox (apt-get install busybox-static)"
fi

img=$out/initrd.img
fresh=1
for src in "$out/modules/order" "$here/init" "$busybox" "$0"; do
	[ -f "$img" ] && [ "$img" -nt "$src" ] || fresh=0
done
if [ $fresh = 1 ]; then
	echo "build-initramfs: $img up to date"
	exit 0
fi

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{bin,dev,proc,sys,tmp,mnt/root,lib/modules}
cp "$busybox" "$tree/bin/busybox"
ln -s busybox "$tree/bin/sh"
install -m 0755 "$here/init" "$tree/init"
while read -r m; do
	cp "$out/modules/$m" "$tree/lib/modules/"
done <"$out/modules/order"
cp "$out/modules/order" "$tree/lib/modules/order"
# /init gets its stdin/stdout from /dev/console: in the archive when we
# may make device nodes, else /init reopens it once devtmpfs is mounted.
[ "$(id -u)" -ne 0 ] || mknod -m 600 "$tree/dev/console" c 5 1
(cd "$tree" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -9 -n >"$img.new"
mv "$img.new" "$img"
echo "build-initramfs: $img ($(( ($(stat -c %s "$img") + 1023) / 1024 )) KiB, busybox and $(wc -l <"$out/modules/order") modules)"

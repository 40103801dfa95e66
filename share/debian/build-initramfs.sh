#!/bin/bash
# A busybox initramfs for the Debian guest kernel: OUT/initrd.img
# (newc cpio, gzip) with the virtio modules build-kernel.sh collected.
# Usage: share/debian/build-initramfs.sh [OUT]   (default build/debian)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-$top/build/debian}
[ -f "$out/modules/order" ] || "$here/build-kernel.sh" "$out"
busybox=/bin/busybox
# The guest has no libc: only a static busybox will do.
if [ ! -x "$busybox" ] || ! LC_ALL=C readelf -d "$busybox" 2>&1 | grep -q 'no dynamic section'; then
	echo "build-initramfs: no static busybox (apt-get install busybox-static)" >&2
	exit 1
fi
if [ -f "$out/initrd.img" ] && [ "$out/initrd.img" -nt "$out/modules/order" ] && [ "$out/initrd.img" -nt "$here/init" ]; then
	exit 0
fi
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{bin,dev,proc,sys,mnt/root,lib/modules}
cp "$busybox" "$tree/bin/busybox"
ln -s busybox "$tree/bin/sh"
cp "$here/init" "$tree/init"
chmod 755 "$tree/init"
cp "$out"/modules/*.ko "$out/modules/order" "$tree/lib/modules/"
(cd "$tree" && find . | cpio -o -H newc --quiet | gzip -9) >"$out/initrd.img"
echo "build-initramfs: $out/initrd.img ($(du -k "$out/initrd.img" | cut -f1) KiB)"

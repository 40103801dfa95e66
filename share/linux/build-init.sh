#!/bin/bash
# A second initramfs for the Lodge test kernel (build-test-kernel.sh): its
# /init built from share/linux/init-NAME.c (-nostdlib -static, as init-spin
# is), with /dev/console for its stdio.  Cheap (one small gcc and a cpio),
# so it is kept apart from the kernel's build and its cache key.  Writes
#   OUT/initramfs-NAME.img
# Usage: share/linux/build-init.sh NAME [OUT]   (default build/linux, where
# build-test-kernel.sh left the kernel and its gen_init_cpio)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
die() { echo "build-init: $*" >&2; exit 1; }
[ $# -ge 1 ] && [[ $1 =~ ^[a-z0-9-]+$ ]] || die "usage: build-init.sh NAME [OUT] (share/linux/init-NAME.c)"
name=$1
out=${2:-$top/build/linux}
src=$here/init-$name.c
[ -f "$src" ] || die "no $src"
cpio_tool=$out/obj/usr/gen_init_cpio
[ -x "$cpio_tool" ] || die "no $cpio_tool: build the kernel first (share/linux/build-test-kernel.sh)"
gcc -static -nostdlib -no-pie -O2 -fno-asynchronous-unwind-tables -fno-stack-protector \
	-ffreestanding -fno-tree-loop-distribute-patterns -Wl,--build-id=none \
	-o "$out/obj/init-$name" "$src" || die "cannot build $src"
printf '%s\n' "dir /dev 0755 0 0" "nod /dev/console 0600 0 0 c 5 1" \
	"file /init $out/obj/init-$name 0755 0 0" >"$out/obj/initramfs-$name.list"
"$cpio_tool" -t 0 "$out/obj/initramfs-$name.list" >"$out/initramfs-$name.img.new" || die "gen_init_cpio failed"
mv "$out/initramfs-$name.img.new" "$out/initramfs-$name.img"

#!/bin/bash
# The Lodge test kernel: Linux from Debian's own linux-source-6.1 package,
# configured by `make tinyconfig` with share/linux/lodge-test.config merged
# over it, built as a PVH ELF vmlinux (lodge-hyp boots those), and an
# initramfs whose /init (share/linux/init-spin.c) spins in user mode and
# never makes a system call, so the kernel stays up after its boot (timers,
# ACPI events, hot-plug in its workqueues) with no user space in the way
# (share/linux/build-init.sh makes the initramfs of one that does).  Writes
#   OUT/vmlinux        the kernel (ELF, Xen PVH entry note)
#   OUT/initramfs.img  newc cpio: /init, /dev/console
#   OUT/config         the .config it was built with
#   OUT/version        "<package version> <sha256 of fragment+script+init>"
# Nothing is rebuilt while OUT/version matches.  Reproducible: the build's
# timestamp, user and host are fixed.  Quiet except for one summary line
# (the build's own output is in OUT/build.log).
# Usage: share/linux/build-test-kernel.sh [OUT]   (default build/linux)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-$top/build/linux}
die() { echo "build-test-kernel: $*" >&2; exit 1; }

pkg=linux-source-6.1
tarball=/usr/src/$pkg.tar.xz
frag=$here/lodge-test.config
init_c=$here/init-spin.c
pkgver=$(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null || true)
[ -n "$pkgver" ] && [ -f "$tarball" ] || die "needs Debian's $pkg (make deps, or apt-get install $pkg)"
for t in gcc make flex bison bc cpio; do
	command -v "$t" >/dev/null || die "needs $t (make deps)"
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
want="$pkgver $(cat "$frag" "$0" "$init_c" | sha256sum | cut -c1-16)"
if [ -f "$out/vmlinux" ] && [ -f "$out/initramfs.img" ] && [ "$(cat "$out/version" 2>/dev/null)" = "$want" ]; then
	echo "build-test-kernel: up to date in $out ($want)"
	exit 0
fi
rm -f "$out/version"
t0=$SECONDS

# ---- the source: unpacked once per package version --------------------------
src=$out/src/$pkg
obj=$out/obj
if [ "$(cat "$out/src/.version" 2>/dev/null)" != "$pkgver" ]; then
	rm -rf "$out/src" "$obj"    # objects of another version's tree: not ours
	mkdir -p "$out/src"
	tar -xJf "$tarball" -C "$out/src" || die "cannot unpack $tarball"
	[ -f "$src/Makefile" ] || die "$tarball has no $pkg/Makefile"
	echo "$pkgver" >"$out/src/.version"
fi

# ---- configure and build ---------------------------------------------------
log=$out/build.log
export KBUILD_BUILD_TIMESTAMP="Debian $pkgver" KBUILD_BUILD_USER=lodge KBUILD_BUILD_HOST=lodge-test \
       KBUILD_BUILD_VERSION=1
kmake() { make -C "$src" O="$obj" ARCH=x86_64 "$@" >>"$log" 2>&1; }
: >"$log"
mkdir -p "$obj"
kmake tinyconfig || die "make tinyconfig failed: $(tail -3 "$log" | tr '\n' ' ')"
(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" >>"$log" 2>&1) ||
	die "merge_config.sh failed: $(tail -3 "$log" | tr '\n' ' ')"
kmake olddefconfig || die "make olddefconfig failed: $(tail -3 "$log" | tr '\n' ' ')"
# Every line of the fragment must hold: a symbol that Kconfig dropped (a
# missing dependency, a name this version lacks) is a wrong test kernel.
bad=
while IFS= read -r line; do
	case $line in CONFIG_*=n) sym=${line%=n}
	                grep -qx "$sym=[ym]" "$obj/.config" && bad="$bad $line" ;;
	              CONFIG_*=*) grep -qx "$line" "$obj/.config" || bad="$bad $line" ;;
	esac
done <"$frag"
[ -z "$bad" ] || die "the kernel's Kconfig did not take from lodge-test.config:$bad"
kmake -j"$(nproc)" vmlinux || die "the kernel build failed: $(grep -m3 -E 'error|Error' "$log" | tr '\n' ' ')"

# ---- the initramfs: /init spins, /dev/console for its (unused) stdio -------
gcc -static -nostdlib -no-pie -O2 -fno-asynchronous-unwind-tables -Wl,--build-id=none \
	-o "$obj/init-spin" "$init_c" || die "cannot build $init_c"
kmake usr/gen_init_cpio || die "cannot build gen_init_cpio"
printf '%s\n' "dir /dev 0755 0 0" "nod /dev/console 0600 0 0 c 5 1" \
	"file /init $obj/init-spin 0755 0 0" >"$obj/initramfs.list"
"$obj/usr/gen_init_cpio" -t 0 "$obj/initramfs.list" >"$out/initramfs.img.new" || die "gen_init_cpio failed"

cp "$obj/vmlinux" "$out/vmlinux.new"
strip --strip-debug "$out/vmlinux.new"
readelf -n "$out/vmlinux.new" | grep -q 'Xen.*0x00000012\|PHYS32_ENTRY' || die "vmlinux has no PVH entry note (CONFIG_PVH)"
cp "$obj/.config" "$out/config"
mv "$out/vmlinux.new" "$out/vmlinux"
mv "$out/initramfs.img.new" "$out/initramfs.img"
echo "$want" >"$out/version"
echo "build-test-kernel: $(cat "$obj/include/config/kernel.release") from $pkg $pkgver in $((SECONDS - t0)) s" \
     "(-j$(nproc)): $out/vmlinux ($(( $(stat -c %s "$out/vmlinux") / 1024 )) KiB), initramfs.img"

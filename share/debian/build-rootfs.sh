#!/bin/bash
# A small ext4 root disk for the Debian guest (for hardware KVM hosts; on
# PVM a stock kernel never reaches userspace): a static busybox with its
# applet links, busybox init with an /etc/inittab whose start script prints
# "lodge-guest: rootfs up", then either powers off at once (lodge.poweroff
# on the kernel command line) or leaves a shell on the console, where
# "poweroff" shuts down cleanly.  Made with mkfs.ext4 -d: no root needed.
# Boot it with the initramfs and root=/dev/vda (see README).
# Usage: share/debian/build-rootfs.sh OUT.img [SIZE_MiB]   (default 32)
set -euo pipefail
img=${1:?usage: build-rootfs.sh OUT.img [SIZE_MiB]}
size=${2:-32}
die() { echo "build-rootfs: $*" >&2; exit 1; }
[[ $size =~ ^[0-9]+$ ]] && [ "$size" -ge 8 ] || die "SIZE_MiB must be a number, at least 8"
command -v mkfs.ext4 >/dev/null || PATH=$PATH:/sbin:/usr/sbin
command -v mkfs.ext4 >/dev/null || die "needs mkfs.ext4 (e2fsprogs)"
busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || ! LC_ALL=C readelf -d "$busybox" 2>&1 | grep -q 'no dynamic section'; then
	die "no static busybox (apt-get install busybox-static)"
fi

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,etc/init.d,tmp,root}
cp "$busybox" "$tree/bin/busybox"
for a in $("$busybox" --list-full); do   # bin/ls, sbin/init, usr/bin/...
	[ -e "$tree/$a" ] || ln -s /bin/busybox "$tree/$a"
done
cat >"$tree/etc/inittab" <<'EOF'
::sysinit:/etc/init.d/rcS
::respawn:/bin/cttyhack /bin/sh -l
::ctrlaltdel:/sbin/reboot
::shutdown:/bin/umount -a -r
EOF
cat >"$tree/etc/init.d/rcS" <<'EOF'
#!/bin/sh
# Run once by busybox init before the console shell.
[ -e /proc/self ] || mount -t proc proc /proc
[ -d /sys/kernel ] || mount -t sysfs sysfs /sys
[ -c /dev/null ] || mount -t devtmpfs devtmpfs /dev
mount -o remount,rw /
hostname lodge-guest
echo "lodge-guest: rootfs up ($(uname -r), root $(sed -n 's|^\(/dev/[^ ]*\) / .*|\1|p' /proc/mounts))"
case " $(cat /proc/cmdline) " in
*" lodge.poweroff "*) echo "lodge-guest: powering off"; poweroff ;;
esac
EOF
chmod 755 "$tree/etc/init.d/rcS"
echo 'root:x:0:0:root:/root:/bin/sh' >"$tree/etc/passwd"
echo 'root:x:0:' >"$tree/etc/group"
rm -f "$img"
truncate -s "${size}M" "$img"
mkfs.ext4 -q -F -L lodge-root -E root_owner=0:0 -d "$tree" "$img" ||
	die "mkfs.ext4 -d failed (e2fsprogs 1.43 or later needed)"
echo "build-rootfs: $img ($size MiB ext4, busybox init)"

#!/bin/bash
# A small ext4 root disk for the Debian guest (hardware KVM hosts): busybox
# with an /sbin/init that says it is up and powers off when asked.
# Usage: share/debian/build-rootfs.sh OUT.img [SIZE_MiB]
set -euo pipefail
img=${1:?usage: build-rootfs.sh OUT.img [SIZE_MiB]}
size=${2:-64}
busybox=/bin/busybox
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{bin,sbin,dev,proc,sys,etc,tmp}
cp "$busybox" "$tree/bin/busybox"
ln -s busybox "$tree/bin/sh"
cat >"$tree/sbin/init" <<'INIT'
#!/bin/sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
echo "lodge-guest: rootfs up"
exec setsid cttyhack sh
INIT
chmod 755 "$tree/sbin/init"
rm -f "$img"
mkfs.ext4 -q -F -L lodge-root -d "$tree" "$img" "${size}M"
echo "build-rootfs: $img"

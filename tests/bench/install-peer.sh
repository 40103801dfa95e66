#!/bin/bash
# The peer of `lodge install` in tests/bench/install.py: what xen-tools'
# xen-create-image does for a Debian guest in an image, by hand (xen-tools
# is not in bookworm): a 2 GiB sparse file made ext4 and loop-mounted,
# debootstrap into it, the kernel, ssh and the rest by apt-get in the
# chroot (xen-create-image's hooks install the kernel and ssh so), then the
# files xen-create-image writes (fstab by UUID, hostname, hosts, the
# network), the kernel and initrd copied out beside the domain's config,
# the config written, the image unmounted.  Run inside `unshare -m`
# (install.py does): every mount goes with the namespace, whatever happens.
#   install-peer.sh WORKDIR NAME CACHE_DIR PACKAGES MIRROR
set -eu
work=$1 name=$2 cache=$3 packages=$4 mirror=$5
[ -n "$work" ] && [ -n "$name" ] && [ -d "$cache" ] || { echo "usage: install-peer.sh WORKDIR NAME CACHE_DIR PACKAGES MIRROR" >&2; exit 2; }
# Never in its caller's mount namespace (the mounts below, and / made private).
# Either one unreadable counts as the same.
own_ns=$(readlink /proc/self/ns/mnt) caller_ns=$(readlink "/proc/$PPID/ns/mnt") || caller_ns=
[ -n "$own_ns" ] && [ -n "$caller_ns" ] && [ "$own_ns" != "$caller_ns" ] ||
	{ echo "install-peer.sh: run it under unshare -m (its mounts in a namespace of its own)" >&2; exit 2; }
img=$work/$name.img mnt=$work/$name.mnt log=$work/$name.log
mount --make-rprivate /
truncate -s 2G "$img"
mkfs.ext4 -q -F "$img"
mkdir -p "$mnt"
mount -o loop "$img" "$mnt"
# minbase: Priority required, and apt (what mmdebstrap's apt variant, the
# template's start, has).  One cache for debootstrap and apt: both name a
# .deb PACKAGE_VERSION_ARCH.deb.
debootstrap --variant=minbase --cache-dir="$cache" bookworm "$mnt" "$mirror" >"$log" 2>&1
# The template's sources: the release, its updates, its security updates.
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
	"$mirror" "$mirror" http://deb.debian.org/debian-security >"$mnt/etc/apt/sources.list"
mount -t proc proc "$mnt/proc"
mount -t sysfs sys "$mnt/sys"
mount --bind /dev "$mnt/dev"
mount --bind "$cache" "$mnt/var/cache/apt/archives"
chroot "$mnt" apt-get -q update >>"$log" 2>&1
IFS=, read -ra package_list <<<"$packages"
DEBIAN_FRONTEND=noninteractive chroot "$mnt" apt-get -q -y install "${package_list[@]}" >>"$log" 2>&1
chroot "$mnt" dpkg-query -W -f '${db:Status-Abbrev}\n' | grep -c '^ii' >"$work/$name.packages"
umount "$mnt/var/cache/apt/archives" "$mnt/dev" "$mnt/sys" "$mnt/proc"
uuid=$(blkid -o value -s UUID "$img")
printf 'UUID=%s\t/\text4\terrors=remount-ro\t0\t1\n' "$uuid" >"$mnt/etc/fstab"
echo "$name" >"$mnt/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$name" >"$mnt/etc/hosts"
mkdir -p "$mnt/etc/network"
printf 'auto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet dhcp\n' >"$mnt/etc/network/interfaces"
kernel=$(ls "$mnt"/boot/vmlinuz-* | sort -V | tail -1)
version=${kernel##*/vmlinuz-}
cp "$kernel" "$mnt/boot/initrd.img-$version" "$work/"
cat >"$work/$name.cfg" <<EOF
name = "$name"
memory = 512
vcpus = 1
kernel = "$work/vmlinuz-$version"
ramdisk = "$work/initrd.img-$version"
extra = "root=UUID=$uuid ro console=ttyS0"
disk = [ "file:$img,xvda,w" ]
vif = [ "bridge=xenbr0" ]
EOF
umount "$mnt"

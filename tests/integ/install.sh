#!/bin/bash
# lodge install (issue 20): a Debian guest cloned from its template into a
# 2 GiB sparse file and into a partition of a loop device, each checked in
# the image with e2fsprogs' debugfs as a user would (no mount): fstab names
# the clone's fresh UUID, no machine-id, no ssh host keys, no host name,
# the kernel's virtio and ext4 modules in its initrd (lsinitramfs),
# openssh-server and cloud-init installed (dpkg's status), the filesystem
# grown to the disk.  Then what must be refused or undone with one clear
# message, no disk or config left and the template intact: too small a
# size or partition, an unknown distribution, a mounted partition, a disk
# that fills up mid-clone, Ctrl-C mid-clone.  The template is built once
# and kept under build/cache (template_cached in tests/lib.sh); a second
# install's time is printed, for information (the benchmark judges it).
. "$(dirname "$0")/../lib.sh"

integ_begin "lodge install" root cmd:mmdebstrap cmd:debugfs cmd:dumpe2fs cmd:sfdisk cmd:curl cmd:mtype:mtools cmd:ssh-keygen:openssh-client
if ! template_cached bookworm; then
	skip "lodge install" "no bookworm template: $TEMPLATE_WHY"
	exit 0
fi
# lodge from here on in a network namespace of the test's own, where the
# default bridge the configs name exists (lodge check wants it).
integ_netns
lodge bridge-create lodgebr0 >/dev/null
# Installs with no network option join the default network, made by the first.
at_exit 'lodge network-delete default >/dev/null 2>&1; lodge network-delete lan >/dev/null 2>&1'
[ -n "$TEMPLATE_BUILT_S" ] && pass "the bookworm template built in ${TEMPLATE_BUILT_S} s (kept in build/cache; information)"
TPL=$(echo "$ROOT"/var/lib/lodge/templates/bookworm-*.img)
IMAGES=$ROOT/var/lib/lodge/images
tpl_sum=$(sha256sum <"$TPL")
tpl_uuid=$(dumpe2fs -h "$TPL" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')

# ---- template-list ------------------------------------------------------------------------
if lodge template-list -o json >"$T/list.json" && python3 - "$T/list.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
assert len(t) == 1 and t[0]["template"].startswith("bookworm-") and t[0]["dist"] == "bookworm", t
assert t[0]["size_bytes"] > 0 and t[0]["kernel"].endswith("-cloud-amd64"), t
EOF
then
	pass "template-list -o json: the bookworm template, its size and cloud kernel"
else
	fail "template-list -o json" "$(cat "$T/list.json")"
fi

# ---- the package cache: a rebuild fetches nothing ------------------------------------------------
# Every package the template has installed is in the cache as apt names
# its download (PACKAGE_VERSION_ARCH.deb, ':' as %3a): apt, finding it
# there, fetches it no more.
cache=$BUILD/cache/template-root/var/cache/lodge/$(basename "$TPL" .img)
debugfs -R "cat /var/lib/dpkg/status" "$TPL" 2>/dev/null | awk 'BEGIN { RS = ""; FS = "\n" }
	/\nStatus: install ok installed/ {
		p = v = a = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^Package: /) p = substr($i, 10)
			if ($i ~ /^Version: /) v = substr($i, 10)
			if ($i ~ /^Architecture: /) a = substr($i, 15)
		}
		gsub(/:/, "%3a", v)
		print p "_" v "_" a ".deb"
	}' >"$T/debs"
missing=
while read -r deb; do [ -f "$cache/$deb" ] || missing+=" $deb"; done <"$T/debs"
if [ "$(wc -l <"$T/debs")" -gt 100 ] && [ -z "$missing" ]; then
	pass "each of the template's $(wc -l <"$T/debs") packages is in the cache: a rebuild fetches none of them"
else
	fail "the package cache" "$(wc -l <"$T/debs") installed; not cached:${missing:- (none listed)}"
fi

# ---- checks of an installed disk (a file or a partition) -----------------------------------
in_image() { debugfs -R "$2" "$1" 2>/dev/null; }
installed() {   # installed IMG PACKAGE: dpkg's status in the image says installed
	in_image "$1" "cat /var/lib/dpkg/status" | awk -v p="$2" 'BEGIN { RS = "" }
		$0 ~ ("(^|\n)Package: " p "\n") && /\nStatus: install ok installed/ { ok = 1 } END { exit !ok }'
}
# check_disk LABEL IMG BYTES: every check of an installed guest's disk.
check_disk() {
	local label=$1 img=$2 bytes=$3 uuid blocks bsize initrd bad=
	uuid=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')
	blocks=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block count: *//p')
	bsize=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
	if [ -n "$uuid" ] && [ "$uuid" != "$tpl_uuid" ] &&
	   in_image "$img" "cat /etc/fstab" | grep -Eq "^UUID=${uuid}[[:space:]]+/[[:space:]]+ext4[[:space:]]"; then
		pass "$label: fstab names the clone's own fresh UUID ($uuid) as /"
	else
		fail "$label: fstab and UUID" "UUID '$uuid' (template's $tpl_uuid), fstab: $(in_image "$img" "cat /etc/fstab" | tr '\n' '|')"
	fi
	if [ -n "$blocks" ] && [ $((blocks * bsize)) -le "$bytes" ] && [ $((bytes - blocks * bsize)) -lt "$bsize" ]; then
		pass "$label: the filesystem fills the disk ($((blocks * bsize)) of $bytes bytes)"
	else
		fail "$label: filesystem size" "$blocks blocks of $bsize for a disk of $bytes bytes"
	fi
	in_image "$img" "dump /etc/machine-id $T/machine-id"
	if [ -f "$T/machine-id" ] && [ ! -s "$T/machine-id" ] &&
	   ! in_image "$img" "ls /etc/ssh" | grep -q ssh_host_ && in_image "$img" "ls /etc/ssh" | grep -q sshd_config &&
	   ! in_image "$img" "stat /etc/hostname" | grep -q "Inode:"; then
		pass "$label: /etc/machine-id empty, no ssh host keys, no /etc/hostname (the guest's first boot makes them)"
	else
		fail "$label: first-boot state" "machine-id $(stat -c %s "$T/machine-id" 2>&1), /etc/ssh: $(in_image "$img" "ls /etc/ssh" | tr -s ' \n' ' ')"
	fi
	rm -f "$T/machine-id"
	for p in openssh-server cloud-init linux-image-cloud-amd64 systemd-sysv; do installed "$img" $p || bad+=" $p"; done
	if [ -z "$bad" ]; then
		pass "$label: openssh-server, cloud-init, the cloud kernel and systemd installed (dpkg status in the image)"
	else
		fail "$label: packages" "not installed:$bad"
	fi
	initrd=$(in_image "$img" "ls -p /boot" | awk -F/ '$6 ~ /^initrd\.img-/ { print $6 }' | sort -V | tail -1)
	if ! command -v lsinitramfs >/dev/null; then
		skip "$label: the initrd's modules" "lsinitramfs (initramfs-tools-core) not installed"
	elif [ -n "$initrd" ] && in_image "$img" "dump /boot/$initrd $T/initrd" && lsinitramfs "$T/initrd" >"$T/initrd.list" &&
	     in_image "$img" "cat /lib/modules/${initrd#initrd.img-}/modules.builtin" >"$T/builtin" &&
	     bad= && for m in virtio_pci virtio_blk virtio_net ext4; do
		     grep -Eq "/$m\.ko(\.[a-z]+)?$" "$T/initrd.list" "$T/builtin" || bad+=" $m"
	     done && [ -z "$bad" ]; then
		# The cloud kernel has ext4 built in (its modules.builtin), the
		# generic one as a module: either way it mounts its root.
		pass "$label: its initrd ($initrd) holds virtio_pci, virtio_blk, virtio_net and ext4 (lsinitramfs; $(grep -q '/ext4\.ko' "$T/builtin" && echo "ext4 built into the kernel" || echo "ext4 a module"))"
	else
		fail "$label: the initrd's modules" "initrd '$initrd', missing:${bad:- (none listed)}"
	fi
	rm -f "$T/initrd" "$T/initrd.list" "$T/builtin"
	if e2fsck -fn "$img" >"$T/fsck.out" 2>&1; then
		pass "$label: e2fsck -fn finds the filesystem clean"
	else
		fail "$label: e2fsck -fn" "$(tail -3 "$T/fsck.out" | tr '\n' ' ')"
	fi
}
# nothing_left NAME: no config and no disk file of NAME.
nothing_left() { [ ! -e "$DOMS/$1.cfg" ] && [ ! -e "$IMAGES/$1.img" ]; }

# ---- into a 2 GiB sparse file ------------------------------------------------------------------
ssh-keygen -q -t ed25519 -N '' -C "web-key-$$" -f "$T/key" >/dev/null 2>&1
printf 'sesame-%s\n' "$$" >"$T/password"
t0=$EPOCHREALTIME
if lodge install web --size 2G -k "$T/key.pub" -p "$T/password" -P htop >"$T/web.out" 2>"$T/web.err"; then
	t1=$EPOCHREALTIME
	pass "install web into a 2 GiB file ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
else
	fail "install web" "$(cat "$T/web.err")"
	exit 0
fi
img=$IMAGES/web.img
if [ "$(stat -c %s "$img")" = 2147483648 ] && [ "$(du -B1 "$img" | cut -f1)" -lt 2147483648 ] &&
   grep -q '^bootloader = "lodge"' "$DOMS/web.cfg" && grep -qF "\"file:$img,vda,w\"" "$DOMS/web.cfg" &&
   lodge check web >/dev/null 2>&1; then
	pass "web: a 2 GiB sparse file ($(( $(du -B1 "$img" | cut -f1) >> 20 )) MiB used), its config (bootloader = \"lodge\") loads"
else
	fail "web: disk and config" "$(ls -ls "$img" 2>&1); $(cat "$DOMS/web.cfg"); $(lodge check web 2>&1)"
fi
check_disk "web" "$img" 2147483648
# Its cloud-init seed: the second disk, read-only, labelled cidata, with
# the hostname, the key, the package and the password's hash only.
seed=$IMAGES/web-seed.img
mtype -i "$seed" ::meta-data >"$T/meta-data" 2>/dev/null
mtype -i "$seed" ::user-data >"$T/user-data" 2>/dev/null
if grep -qF "\"file:$seed,vdb,r\"" "$DOMS/web.cfg" && [ "$(blkid -o value -s LABEL "$seed")" = cidata ] &&
   grep -q 'local-hostname: "web"' "$T/meta-data" && grep -q 'instance-id: "web-' "$T/meta-data" &&
   grep -qF "web-key-$$" "$T/user-data" && grep -q '"htop"' "$T/user-data" && grep -q 'hashed_passwd: "\$y\$' "$T/user-data" &&
   ! grep -qa "sesame-$$" "$seed"; then
	pass "web: its seed (vdb, read-only, cidata) holds its hostname, the key, htop and the password's hash only"
else
	fail "web: the seed disk" "$(grep disk "$DOMS/web.cfg"); $(cat "$T/meta-data"); $(head -c 400 "$T/user-data" | tr '\n' '|')"
fi
# A private key as --ssh-key: refused before anything is written.
if ! lodge install priv -k "$T/key" >"$T/priv.out" 2>&1 && [ "$(wc -l <"$T/priv.out")" = 1 ] &&
   grep -qi 'private' "$T/priv.out" && nothing_left priv && [ ! -e "$IMAGES/priv-seed.img" ]; then
	pass "a private key as --ssh-key is refused in one line, nothing made: $(cat "$T/priv.out")"
else
	fail "a private key as --ssh-key" "$(cat "$T/priv.out"); $(ls "$DOMS" "$IMAGES")"
fi

t0=$EPOCHREALTIME
if lodge install web2 >"$T/web2.out" 2>&1; then
	t1=$EPOCHREALTIME
	pass "a second install of bookworm took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s (information; the target is under 5 s)"
else
	fail "a second install" "$(cat "$T/web2.out")"
fi
uuid1=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')
uuid2=$(dumpe2fs -h "$IMAGES/web2.img" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')
if [ -n "$uuid2" ] && [ "$uuid1" != "$uuid2" ]; then
	pass "two clones have two UUIDs"
else
	fail "two clones' UUIDs" "$uuid1 and $uuid2"
fi

if lodge install dry --dry-run >"$T/dry.out" 2>&1 && grep -q "^would install dry" "$T/dry.out" && nothing_left dry; then
	pass "--dry-run says what it would do and writes nothing"
else
	fail "--dry-run" "$(cat "$T/dry.out"); $(ls "$DOMS" "$IMAGES")"
fi

# A guest on a Lodge network (issue 21): its vif names the network.
lodge network-create lan --subnet 10.77.0.0/24 >/dev/null
if lodge install onnet --dry-run --network lan >"$T/onnet.out" 2>&1 && grep -q "network=lan" "$T/onnet.out" &&
   nothing_left onnet; then
	pass "--network puts the guest's vif on a Lodge network (vif = [ 'network=lan' ])"
else
	fail "--network" "$(cat "$T/onnet.out")"
fi
if ! lodge install both --dry-run --network lan --bridge br0 >"$T/both.out" 2>&1 &&
   [ "$(wc -l <"$T/both.out")" = 1 ] && grep -q "one or the other" "$T/both.out"; then
	pass "--network with --bridge is refused in one line: $(cat "$T/both.out")"
else
	fail "--network with --bridge" "$(cat "$T/both.out")"
fi

# ---- into partitions of a loop device ----------------------------------------------------------
truncate -s 6G "$T/disk.img"
printf 'label: gpt\n,2600M,L\n,512M,L\n,2600M,L\n' | sfdisk -q "$T/disk.img" >/dev/null 2>&1
loop_attach LOOP "$T/disk.img" -P || LOOP=
[ -z "$LOOP" ] || [ -b "${LOOP}p3" ] || partx -a "$LOOP" 2>/dev/null   # no partition scan here: as blk.sh
if [ -z "$LOOP" ] || ! wait_until 10 test -b "${LOOP}p3"; then
	skip "install into a partition" "no loop device with partitions"
else
	P1=${LOOP}p1 P2=${LOOP}p2 P3=${LOOP}p3
	if lodge install part --disk "$P1" >"$T/part.out" 2>&1 && grep -qF "\"phy:$P1,vda,w\"" "$DOMS/part.cfg"; then
		pass "install part into $P1 (its config names phy:$P1)"
		check_disk "part ($P1)" "$P1" "$(blockdev --getsize64 "$P1")"
	else
		fail "install into $P1" "$(cat "$T/part.out")"
	fi
	before=$(head -c 1M "$P2" | sha256sum)
	if ! lodge install small --disk "$P2" >"$T/p2.out" 2>&1 && grep -q "too small" "$T/p2.out" && nothing_left small &&
	   [ "$(head -c 1M "$P2" | sha256sum)" = "$before" ]; then
		pass "a 512 MiB partition is refused before anything is written: $(head -1 "$T/p2.out")"
	else
		fail "a too small partition" "$(cat "$T/p2.out")"
	fi
	mkdir -p "$T/mnt"
	if mkfs.ext4 -q "$P3" && mount "$P3" "$T/mnt"; then
		at_exit 'umount "$T/mnt" 2>/dev/null'
		if ! lodge install mounted --disk "$P3" >"$T/p3.out" 2>&1 && grep -q "mounted" "$T/p3.out" &&
		   nothing_left mounted && mountpoint -q "$T/mnt"; then
			pass "a mounted partition is refused: $(head -1 "$T/p3.out")"
		else
			fail "a mounted partition" "$(cat "$T/p3.out")"
		fi
		# The whole disk, one of whose partitions is mounted: held.
		if ! lodge install whole --disk "$LOOP" >"$T/whole.out" 2>&1 && grep -q "in use on the host" "$T/whole.out" &&
		   nothing_left whole && mountpoint -q "$T/mnt"; then
			pass "a disk with a mounted partition is refused: $(head -1 "$T/whole.out")"
		else
			fail "a disk with a mounted partition" "$(cat "$T/whole.out")"
		fi
		umount "$T/mnt"
	else
		skip "a mounted partition" "cannot mount $P3"
	fi
fi

# ---- refused before anything is written --------------------------------------------------------
if ! lodge install tiny --size 512M >"$T/tiny.out" 2>&1 && grep -q "too small" "$T/tiny.out" && nothing_left tiny; then
	pass "too small a size is refused: $(head -1 "$T/tiny.out")"
else
	fail "too small a size" "$(cat "$T/tiny.out")"
fi
if ! lodge install nodist --dist nosuch >"$T/nodist.out" 2>&1 && grep -q "unknown distribution 'nosuch'" "$T/nodist.out" &&
   nothing_left nodist; then
	pass "an unknown distribution is refused: $(head -1 "$T/nodist.out")"
else
	fail "an unknown distribution" "$(cat "$T/nodist.out")"
fi
if ! lodge install web >"$T/again.out" 2>&1 && grep -q "has a config already" "$T/again.out"; then
	pass "a name that has a config is refused: $(head -1 "$T/again.out")"
else
	fail "a name taken" "$(cat "$T/again.out")"
fi

# ---- a disk that fills up mid-clone --------------------------------------------------------------
mkdir -p "$T/full"
if mount -t tmpfs -o size=200M "lodge-test-full-$$" "$T/full"; then
	at_exit 'umount "$T/full" 2>/dev/null'
	if ! lodge install full --disk "$T/full/full.img" >"$T/full.out" 2>&1 && grep -q "No space left" "$T/full.out" &&
	   [ -z "$(ls -A "$T/full")" ] && [ "$(df --output=used -B1M "$T/full" | tail -1 | tr -d ' ')" -lt 2 ] &&
	   nothing_left full; then
		pass "a disk that fills up mid-clone: nothing left on it, no config: $(grep "No space" "$T/full.out")"
	else
		fail "a full disk mid-clone" "$(cat "$T/full.out"); left: $(ls -A "$T/full")"
	fi
else
	skip "a full disk mid-clone" "cannot mount a tmpfs"
fi

# ---- Ctrl-C mid-clone -------------------------------------------------------------------------------
# SIGINT as soon as lodge says it is cloning (its progress lines, read as
# they come through a FIFO).  In the test's namespace as every other lodge
# here: an install with no network option makes the network "default",
# which must not reach the host (ip netns exec execs lodge: $! is its pid).
mkfifo "$T/cc.fifo"
ip netns exec "$NS" "$LODGE" --root "$ROOT" install cc 2>"$T/cc.fifo" >"$T/cc.out" &
pid=$!
sent=
while IFS= read -r line; do
	echo "$line" >>"$T/cc.err"
	if [ -z "$sent" ] && [[ $line == *"cloning the template"* ]]; then
		kill -INT "$pid"
		sent=1
	fi
done <"$T/cc.fifo"
wait "$pid"
rc=$?
if [ -n "$sent" ] && [ $rc -ne 0 ] && grep -q "cancelled" "$T/cc.err" && nothing_left cc &&
   ! ls -A "$IMAGES" | grep -qEv '^(web2?|web2?-seed|part-seed)\.img$'; then
	pass "Ctrl-C mid-clone: $(grep cancelled "$T/cc.err" | head -1)"
else
	fail "Ctrl-C mid-clone" "exit $rc, signal sent: ${sent:-no}; $(cat "$T/cc.err"); images: $(ls "$IMAGES")"
fi

if [ "$(sha256sum <"$TPL")" = "$tpl_sum" ]; then
	pass "the template is intact after all of it"
else
	fail "the template" "its contents changed"
fi

if lodge template-delete bookworm >"$T/del.out" 2>&1 && [ ! -e "$TPL" ] && [ "$(lodge template-list -o json)" = "[]" ] &&
   ! lodge template-delete bookworm >"$T/del2.out" 2>&1 && grep -q "no bookworm template" "$T/del2.out"; then
	pass "template-delete removes it (template-list then shows none); a second delete says there is none"
else
	fail "template-delete" "$(cat "$T/del.out" "$T/del2.out" 2>&1); $(lodge template-list 2>&1)"
fi

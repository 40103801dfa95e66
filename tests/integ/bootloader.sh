#!/bin/bash
# bootloader = "lodge": a domain boots the kernel its own disk holds, read
# at each start from the ext4 filesystem on its first disk (the whole disk,
# or the first Linux partition of an MBR or GPT table), as Xen's pygrub.
# The images are made without mmdebstrap (fast): mkfs.ext4 -d of a tree
# with Debian's cloud kernel (share/debian/build-kernel.sh) in
# /boot/vmlinuz-VERSION, an initrd, and the relative links Debian makes.
# Checked: the copies Lodge boots are byte-identical to what was put in;
# the kernel prints the guest's command line (root=UUID= of the
# filesystem) in its early boot, as far as PVM gets; a kernel written into
# the image while the domain runs (an upgrade) is the one the restart
# boots; a bad disk is one line at create and nothing left; the reader,
# stopped while it runs, holds only the disk and its outputs, under
# seccomp, in an empty root of its own.
. "$(dirname "$0")/../lib.sh"

integ_begin "bootloader = lodge" kvm root cmd:mkfs.ext4:e2fsprogs cmd:debugfs:e2fsprogs cmd:sfdisk:fdisk
if [ ! -x "$HYP" ]; then fail "bootloader = lodge" "$HYP not built"; exit 0; fi
debian_kernel_ready "bootloader = lodge" || exit 0
V9=6.1.0-9-cloud-amd64
V10=6.1.0-10-cloud-amd64
U_WHOLE=3b1f7f2e-0c5a-4d7e-9f10-0000000000a1
U_MBR=3b1f7f2e-0c5a-4d7e-9f10-0000000000a2
U_GPT=3b1f7f2e-0c5a-4d7e-9f10-0000000000a3

# The guest's tree: a kernel, its initrd (bytes: the early boot never
# reaches it on PVM), and Debian's links.
G=$T/guest
mkdir -p "$G/boot" "$G/etc"
cp "$DEB/vmlinuz" "$G/boot/vmlinuz-$V9"
head -c 3M /dev/urandom >"$G/boot/initrd.img-$V9"
ln -s "boot/vmlinuz-$V9" "$G/vmlinuz"
ln -s "boot/initrd.img-$V9" "$G/initrd.img"
echo guest >"$G/etc/hostname"

# image NAME SIZE: $T/NAME.img, SIZE bytes (truncate's units), sparse.
image() { rm -f "$T/$1.img"; truncate -s "$2" "$T/$1.img"; }
# mkext4 IMG UUID TREE [OFFSET SIZE]: an ext4 filesystem of TREE on IMG
# (at byte OFFSET, SIZE long, for a partition).
mkext4() {
	local extra=()
	[ -z "${4:-}" ] || extra=(-E "offset=$4")
	mkfs.ext4 -q -F -U "$2" "${extra[@]}" -d "$3" "$1" ${5:+"$5"} >"$T/mkfs.log" 2>&1 ||
		{ fail "mkfs.ext4 $1" "$(tail -1 "$T/mkfs.log")"; exit 0; }
}
image whole 64M && mkext4 "$T/whole.img" $U_WHOLE "$G"
image mbr 80M && printf '2048,,83\n' | sfdisk -q --label dos "$T/mbr.img" >/dev/null &&
	mkext4 "$T/mbr.img" $U_MBR "$G" $((2048 * 512)) 64M
# GPT: an EFI system partition first, the Linux filesystem second.
image gpt 96M && printf '2048,8192,U\n10240,,L\n' | sfdisk -q --label gpt "$T/gpt.img" >/dev/null &&
	mkext4 "$T/gpt.img" $U_GPT "$G" $((10240 * 512)) 64M

# cfg NAME IMG [EXTRA]: a domain booting from IMG; a crash (PVM's end of
# the early boot) preserves it, console log and all.
cfg() {
	{
		printf 'name = "%s"\nmemory = 256\nbootloader = "lodge"\n' "$1"
		printf 'disk = [ "file:%s,xvda,w" ]\non_crash = "preserve"\n' "$2"
		[ -z "${3:-}" ] || printf 'extra = "%s"\n' "$3"
	} >"$DOMS/$1.cfg"
}

# ---- the copies: byte-identical, from each layout ---------------------------
marker=lodge-test-$$-$RANDOM
cfg bl-whole "$T/whole.img"
cfg bl-mbr "$T/mbr.img"
# earlyprintk: the kernel prints its command line before its serial
# console driver starts, which PVM never reaches.
early="console=ttyS0 earlyprintk=serial,ttyS0,115200 lodge.test=$marker"
cfg bl-gpt "$T/gpt.img" "$early"
for d in whole mbr gpt; do
	if ! lodge create bl-$d >"$T/create-$d.out" 2>&1; then
		fail "bootloader ($d): create" "$(cat "$T/create-$d.out")"
		continue
	fi
	if cmp -s "$RUN/bl-$d/boot-kernel" "$G/boot/vmlinuz-$V9" && cmp -s "$RUN/bl-$d/boot-initrd" "$G/boot/initrd.img-$V9"; then
		pass "bootloader ($d): the kernel and initrd booted are byte-identical to the guest's /vmlinuz and /initrd.img"
	else
		fail "bootloader ($d): kernel and initrd byte-identical" \
			"$(ls -l "$RUN/bl-$d/" 2>&1 | tr '\n' ' ') $(cat "$T/create-$d.out")"
	fi
	case $d in
	whole) where="the whole disk" ;;
	mbr) where="partition 1 of its MBR partition table" ;;
	gpt) where="partition 2 of its GPT partition table" ;;
	esac
	case $d in
	whole) cmdline="root=UUID=$U_WHOLE ro console=ttyS0" ;;
	mbr) cmdline="root=UUID=$U_MBR ro console=ttyS0" ;;
	gpt) cmdline="root=UUID=$U_GPT $early" ;;
	esac
	if grep -qF "boots /vmlinuz with /initrd.img from its disk $T/$d.img ($where): $cmdline" "$T/create-$d.out"; then
		pass "bootloader ($d): create says which kernel, from $where, with root=UUID= of its filesystem"
	else
		fail "bootloader ($d): create says which kernel and command line" "$(cat "$T/create-$d.out")"
	fi
done
lodge destroy bl-whole >/dev/null 2>&1
lodge destroy bl-mbr >/dev/null 2>&1

# ---- the reader's confinement, seen while it runs ------------------------------
# LODGE_HYP_TEST_PAUSE_READER: the reader stops itself once confined (and
# before it reads); looked at, then continued.  It must hold the disk, its
# two copies and its pipe only (not the domain's control socket, id lock
# or logs), run under seccomp with no_new_privs as the sandbox's user, in
# a mount namespace of its own whose root is empty.
cfg bl-conf "$T/whole.img"
LODGE_HYP_TEST_PAUSE_READER=1 lodge create bl-conf >"$T/create-conf.out" 2>&1 &
CREATE_CONF=$!
# the stopped reader's pid (a lodge-hyp of this test's runtime directory)
reader_pid() {
	local s p
	for s in /proc/[0-9]*/status; do
		grep -q '^State:.*stopped' "$s" 2>/dev/null || continue
		p=${s#/proc/}; p=${p%/status}
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "--name bl-conf " &&
			tr '\0' ' ' <"/proc/$p/cmdline" | grep -qF -- "$RUN" && { echo "$p"; return 0; }
	done
	return 1
}
if wait_until 60 eval "reader_pid >/dev/null"; then
	R=$(reader_pid)
	PARENT=$(awk '/^PPid:/ { print $2 }' "/proc/$R/status")
	fds=$(for f in /proc/"$R"/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && echo "$n=$(readlink "$f")"; done | sort | tr '\n' ' ')
	disk_ok=no
	for f in /proc/"$R"/fd/*; do
		[ "$(stat -L -c %d:%i "$f" 2>/dev/null)" = "$(stat -c %d:%i "$T/whole.img")" ] && disk_ok=yes
	done
	want="$RUN/bl-conf/boot-kernel $RUN/bl-conf/boot-initrd"
	if [ "$(wc -w <<<"$fds")" = 4 ] && [ $disk_ok = yes ] && grep -qF "=$RUN/bl-conf/boot-kernel " <<<"$fds " &&
		grep -qF "=$RUN/bl-conf/boot-initrd " <<<"$fds " && grep -q '=pipe:' <<<"$fds" && ! grep -q 'socket:' <<<"$fds"; then
		pass "bootloader: the reader holds the disk, its two copies and its pipe, nothing else ($fds)"
	else
		fail "bootloader: the reader's descriptors" "want the disk, $want and a pipe only; got $fds (disk: $disk_ok)"
	fi
	st=$(grep -E '^(Uid|Seccomp|NoNewPrivs|CapEff):' "/proc/$R/status" | tr -s '\t' ' ' | tr '\n' ';')
	uid=$(awk '/^Uid:/ { print $2 }' "/proc/$R/status")
	if grep -q 'Seccomp: 2;' <<<"$st" && grep -q 'NoNewPrivs: 1;' <<<"$st" && grep -q 'CapEff: 0000000000000000;' <<<"$st" &&
		[ "$uid" != 0 ] && [ "$uid" = "$(id -u lodge 2>/dev/null || id -u nobody)" ]; then
		pass "bootloader: the reader runs under a seccomp filter, no_new_privs, as user $(id -nu "$uid"), no capabilities ($st)"
	else
		fail "bootloader: the reader's confinement" "$st"
	fi
	root_list=$(ls -A "/proc/$R/root/" 2>&1)
	if [ "$(readlink "/proc/$R/ns/mnt")" != "$(readlink "/proc/$PARENT/ns/mnt")" ] &&
		[ "$(readlink "/proc/$R/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] && [ -z "$root_list" ]; then
		pass "bootloader: the reader has a mount namespace of its own and an empty root"
	else
		fail "bootloader: the reader's root" "ns $(readlink "/proc/$R/ns/mnt"), parent's $(readlink "/proc/$PARENT/ns/mnt"); / holds: $root_list"
	fi
	kill -CONT "$R"
	if wait "$CREATE_CONF" && cmp -s "$RUN/bl-conf/boot-kernel" "$G/boot/vmlinuz-$V9"; then
		pass "bootloader: continued, the confined reader copies the kernel"
	else
		fail "bootloader: the confined reader's copy" "$(cat "$T/create-conf.out") $(grep -a 'seccomp\|reader' "$RUN/bl-conf/lodge-hyp.log" 2>/dev/null | tail -2)"
	fi
else
	fail "bootloader: the reader's confinement" "no stopped reader seen in 60 s: $(cat "$T/create-conf.out")"
fi
wait "$CREATE_CONF" 2>/dev/null
lodge destroy bl-conf >/dev/null 2>&1

# ---- the early boot: the guest's command line ---------------------------------
# PVM: ~2 min in the bzImage's decompressor (emulated kernel code).
# cmdline_seen NAME PATTERN: the kernel's "Command line:" line matches
cmdline_seen() { lodge console --log "$1" 2>/dev/null | grep -Eq "Command line: $2"; }
want_gpt="root=UUID=$U_GPT $early([[:space:]]|\$)"     # the console's lines end in \r\n
if wait_until 300 cmdline_seen bl-gpt "$want_gpt"; then
	pass "bootloader (GPT): the kernel booted prints root=UUID= of the partition's filesystem, then extra"
else
	fail "bootloader (GPT): the kernel's command line" \
		"want 'Command line: $want_gpt'; $(lodge console --log bl-gpt 2>&1 | grep -a 'Command line\|Linux version' | head -2)"
fi
lodge destroy bl-gpt >/dev/null 2>&1

# ---- an upgrade inside the guest: the restart boots the new kernel ------------
# No links: the newest /boot/vmlinuz-VERSION, by Debian's order (10 > 9).
rm "$G/vmlinuz" "$G/initrd.img"
image upg 96M && mkext4 "$T/upg.img" $U_WHOLE "$G"
cfg bl-upg "$T/upg.img"
if lodge create bl-upg >"$T/create-upg.out" 2>&1 && cmp -s "$RUN/bl-upg/boot-kernel" "$G/boot/vmlinuz-$V9"; then
	pass "bootloader: no /vmlinuz: /boot/vmlinuz-$V9, the only one"
else
	fail "bootloader: no /vmlinuz" "$(cat "$T/create-upg.out")"
fi
# What apt writes: a kernel of a newer version (Debian's kernel and a few
# bytes more: a different file that boots as well) and its initrd.
{ cat "$DEB/vmlinuz"; echo "upgraded $marker"; } >"$T/vmlinuz-$V10"
head -c 2M /dev/urandom >"$T/initrd.img-$V10"
printf 'cd boot\nwrite %s vmlinuz-%s\nwrite %s initrd.img-%s\n' "$T/vmlinuz-$V10" $V10 "$T/initrd.img-$V10" $V10 |
	debugfs -w -f - "$T/upg.img" >"$T/debugfs.log" 2>&1
upgraded() { cmp -s "$RUN/bl-upg/boot-kernel" "$T/vmlinuz-$V10" && cmp -s "$RUN/bl-upg/boot-initrd" "$T/initrd.img-$V10"; }
if lodge reboot bl-upg >"$T/reboot.out" 2>&1 && wait_until 60 upgraded; then
	pass "bootloader: after an upgrade in the image, the restart boots /boot/vmlinuz-$V10 (newer than $V9)"
else
	fail "bootloader: the restart boots the upgrade" \
		"$(cat "$T/reboot.out" "$T/debugfs.log") $(tail -3 "$RUN/bl-upg/lodge-hyp.log" 2>&1)"
fi
if grep -q "boots /boot/vmlinuz-$V10 with /boot/initrd.img-$V10 from its disk $T/upg.img (the whole disk)" \
	"$RUN/bl-upg/lodge-hyp.log" 2>/dev/null; then
	pass "bootloader: lodge-hyp.log says which kernel the restart booted"
else
	fail "bootloader: lodge-hyp.log says which kernel" "$(tail -3 "$RUN/bl-upg/lodge-hyp.log" 2>&1)"
fi
lodge destroy bl-upg >/dev/null 2>&1

# ---- an absolute link names the guest's file, never the host's ----------------
# The host has a file at the link's path too: a decoy.
mkdir -p "$T/host" "$T/esc/boot" "$T/esc$T/host"
echo "the host's file" >"$T/host/vmlinuz"
cp "$DEB/vmlinuz" "$T/esc$T/host/vmlinuz"
ln -s "$T/host/vmlinuz" "$T/esc/vmlinuz"
image esc 32M && mkext4 "$T/esc.img" $U_WHOLE "$T/esc"
cfg bl-esc "$T/esc.img"
if lodge create bl-esc >"$T/create-esc.out" 2>&1 && cmp -s "$RUN/bl-esc/boot-kernel" "$DEB/vmlinuz"; then
	pass "bootloader: /vmlinuz -> $T/host/vmlinuz is the guest's file of that path, not the host's"
else
	fail "bootloader: an absolute link stays in the guest" "$(cat "$T/create-esc.out")"
fi
lodge destroy bl-esc >/dev/null 2>&1

# ---- bad disks: one line at create, nothing started, nothing left -------------
# bad LABEL IMG PATTERN: lodge create fails with one line matching PATTERN.
bad() {
	local out=$T/bad.out n
	cfg bl-bad "$2"
	if lodge create bl-bad >"$out" 2>&1; then
		fail "bootloader, $1: refused" "it started: $(cat "$out")"
		lodge destroy bl-bad >/dev/null 2>&1
		return
	fi
	# On a PVM host create warns first that a Linux kernel boots slowly
	# there (emulate.sh checks that line): the refusal is the one other.
	n=$(grep -vc "this host's KVM is PVM" "$out")
	if [ "$n" -eq 1 ] && grep -q -- "$3" "$out" && [ ! -e "$RUN/bl-bad" ] &&
		! lodge list 2>/dev/null | grep -q bl-bad; then
		pass "bootloader, $1: one line ($(grep -v "KVM is PVM" "$out" | cut -c1-150)), nothing left"
	else
		fail "bootloader, $1" "want one line with '$3' and no $RUN/bl-bad; got $n: $(cat "$out") $(ls -a "$RUN" 2>&1 | tr '\n' ' ')"
	fi
}
# tree NAME: an empty guest tree to fill
tree() { rm -rf "${T:?}/$1"; mkdir -p "$T/$1/boot"; echo "$T/$1"; }
D=$(tree loop); ln -s vmlinuz "$D/vmlinuz"
image loop 8M && mkext4 "$T/loop.img" $U_WHOLE "$D"
bad "a symbolic link loop" "$T/loop.img" "cannot boot from its disk $T/loop.img: the whole disk: kernel /vmlinuz: a symbolic link loop"
D=$(tree dir); ln -s /boot "$D/vmlinuz"
image dir 8M && mkext4 "$T/dir.img" $U_WHOLE "$D"
bad "a link to a directory" "$T/dir.img" "kernel /vmlinuz is not a regular file (a directory)"
D=$(tree nokernel); echo x >"$D/boot/config-$V9"
image nokernel 8M && mkext4 "$T/nokernel.img" $U_WHOLE "$D"
bad "no kernel" "$T/nokernel.img" "the whole disk: no kernel on it"
D=$(tree big); truncate -s 129M "$D/boot/vmlinuz-$V9"
image big 8M && mkext4 "$T/big.img" $U_WHOLE "$D"
bad "a kernel over 128 MiB" "$T/big.img" "kernel /boot/vmlinuz-$V9 is 129 MiB, more than the 128 MiB Lodge takes"
image zeros 8M
bad "not a filesystem" "$T/zeros.img" "the whole disk: not an ext2/3/4 filesystem"
if command -v mkfs.vfat >/dev/null && image vfat 8M && mkfs.vfat "$T/vfat.img" >/dev/null 2>&1; then
	bad "a FAT filesystem" "$T/vfat.img" "the whole disk: not an ext2/3/4 filesystem"
fi
cp "$T/loop.img" "$T/corrupt.img"
printf '\007' | dd of="$T/corrupt.img" bs=1 seek=$((1024 + 0x18)) conv=notrunc status=none
bad "a corrupt superblock" "$T/corrupt.img" "cannot boot from its disk $T/corrupt.img: the whole disk: "
image past 64M && printf '2048,,83\n' | sfdisk -q --label dos "$T/past.img" >/dev/null && truncate -s 16M "$T/past.img"
bad "an MBR partition past the end of the disk" "$T/past.img" "partition 1 of its MBR partition table: it ends past the end of the disk"
image nolinux 16M && printf '2048,,7\n' | sfdisk -q --label dos "$T/nolinux.img" >/dev/null
bad "an MBR without a Linux partition" "$T/nolinux.img" "its MBR partition table has no Linux partition"
# xl's pygrub: the config is refused, pointing at "lodge".
printf 'name = "bl-bad"\nbootloader = "pygrub"\ndisk = [ "file:%s,xvda,w" ]\n' "$T/whole.img" >"$DOMS/bl-bad.cfg"
if ! lodge create bl-bad >"$T/bad.out" 2>&1 && [ "$(wc -l <"$T/bad.out")" -eq 1 ] &&
	grep -q "bootloader: 'pygrub' is Xen's: .* bootloader = \"lodge\"" "$T/bad.out" && [ ! -e "$RUN/bl-bad" ]; then
	pass "bootloader = \"pygrub\": one line pointing at \"lodge\""
else
	fail "bootloader = \"pygrub\"" "$(cat "$T/bad.out")"
fi

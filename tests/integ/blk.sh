#!/bin/bash
# virtio-blk with real guests: Lodge Mini-OS writes, flushes, reads and
# checksums through lodge-hyp's virtio-blk on file- and partition-backed
# disks; the host checks the bytes.
. "$(dirname "$0")/../lib.sh"

need_kvm "virtio-blk" || exit 0
if [ ! -f "$MINIOS" ]; then skip "virtio-blk" "Mini-OS not built"; exit 0; fi
T=$TMPDIR_TEST

# The pattern Mini-OS's blk-pattern writes: the byte at guest disk offset o
# is (o * 7 + seed) mod 256, so a sector written to the wrong place shows.
# expect_pattern FILE FILE_OFFSET LENGTH SEED [DISK_OFFSET (default FILE_OFFSET)]
expect_pattern() {
	python3 - "$@" <<'PY'
import sys
f, off, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
disk = int(sys.argv[5]) if len(sys.argv) > 5 else off
with open(f, 'rb') as fh:
    fh.seek(off)
    data = fh.read(n)
want = bytes(((disk + i) * 7 + seed) & 0xff for i in range(n))
sys.exit(0 if data == want else 1)
PY
}
# FNV-1a over little-endian 64-bit words, as Mini-OS's blk-sum computes it.
fnv1a64w() {   # FILE OFFSET LENGTH
	python3 - "$@" <<'PY'
import struct, sys
f, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f, 'rb') as fh:
    fh.seek(off)
    data = fh.read(n)
h = 0xcbf29ce484222325
for (w,) in struct.iter_unpack('<Q', data):
    h = ((h ^ w) * 0x100000001b3) & 0xffffffffffffffff
print("0x%016x" % h)
PY
}

# run_guest OUT CMDS DISKARGS...: boot Mini-OS with run="CMDS; poweroff".
run_guest() {
	local out=$1 cmds=$2
	shift 2
	timeout 60 "$HYP" --kernel "$MINIOS" --memory 128 --cmdline "run=\"$cmds; poweroff\"" "$@" \
		</dev/null >"$out" 2>&1
}

# 1. A flushed write survives lodge-hyp's SIGKILL right after the flush.
truncate -s 64M "$T/disk.img"
fifo=$T/in
mkfifo "$fifo"
"$HYP" --kernel "$MINIOS" --memory 64 --disk "$T/disk.img" <"$fifo" >"$T/kill.out" 2>&1 &
hyp=$!
exec 9>"$fifo"
if wait_for "$T/kill.out" 'minios> ' 30; then
	echo "blk-pattern vda 2048 256 17; blk-flush vda" >&9
	if wait_for "$T/kill.out" 'blk-flush: ok' 30; then
		kill -9 $hyp
		wait $hyp 2>/dev/null
		if expect_pattern "$T/disk.img" $((2048 * 512)) $((256 * 512)) 17; then
			pass "flushed pattern on the host after SIGKILL, byte for byte"
		else
			fail "flushed pattern on the host after SIGKILL" "bytes differ"
		fi
	else
		fail "flushed pattern on the host after SIGKILL" "no flush completion: $(tail -3 "$T/kill.out")"
	fi
else
	fail "flushed pattern on the host after SIGKILL" "no prompt: $(tail -3 "$T/kill.out")"
fi
exec 9>&-
kill -9 $hyp 2>/dev/null; wait $hyp 2>/dev/null

# 2. Reads: the guest's checksum of what the host wrote.
head -c $((1 << 20)) /dev/urandom | dd of="$T/disk.img" bs=512 seek=4096 conv=notrunc status=none
want=$(fnv1a64w "$T/disk.img" $((4096 * 512)) $((1 << 20)))
run_guest "$T/sum.out" "blk-sum vda 4096 2048" --disk "$T/disk.img"
if grep -q "blk-sum: fnv1a64w $want" "$T/sum.out"; then
	pass "guest reads what the host wrote (checksum of 1 MiB)"
else
	fail "guest reads what the host wrote" "want $want, got: $(grep blk-sum "$T/sum.out")"
fi

# 3. A read-only disk: the guest sees RO and its writes fail with an I/O error.
cp "$T/disk.img" "$T/ro.img"
before=$(md5sum <"$T/ro.img")
run_guest "$T/ro.out" "blk; blk-pattern vda 0 8 3" --disk "$T/ro.img,ro"
if grep -q 'vda: .*ro' "$T/ro.out" && grep -q 'blk-pattern: I/O error' "$T/ro.out" &&
   [ "$(md5sum <"$T/ro.img")" = "$before" ]; then
	pass "read-only disk rejects writes with an I/O error"
else
	fail "read-only disk rejects writes" "$(grep -E 'vda|blk-pattern' "$T/ro.out" | head -3)"
fi

# 4. A real ext4 image is presented byte-exact: the guest reads its superblock.
mkdir -p "$T/fs/etc" && echo lodge >"$T/fs/etc/motd"
if mkfs.ext4 -q -F -L lodgetest -d "$T/fs" "$T/ext4.img" 16M >/dev/null 2>&1; then
	run_guest "$T/ext4.out" "ext4 vda" --disk "$T/ext4.img,ro"
	if grep -q "ext4: magic 0xef53 label 'lodgetest'" "$T/ext4.out"; then
		pass "ext4 image: superblock magic and volume label read by the guest"
	else
		fail "ext4 image superblock" "$(grep ext4 "$T/ext4.out" | tail -2)"
	fi
else
	skip "ext4 image superblock" "mkfs.ext4 -d not available"
fi

# 5. Two disks appear in order, vda then vdb.
truncate -s 8M "$T/second.img"
run_guest "$T/two.out" "blk" --disk "$T/disk.img" --disk "$T/second.img,id=second"
if grep -q 'vda: 131072 sectors' "$T/two.out" && grep -q 'vdb: 16384 sectors.*second' "$T/two.out"; then
	pass "two disks in order: vda, vdb"
else
	fail "two disks in order" "$(grep -E '^vd' "$T/two.out")"
fi

# 6. A disk another domain opened writable is refused, with the reason.
"$HYP" --kernel "$MINIOS" --memory 64 --disk "$T/disk.img" </dev/null >"$T/a.out" 2>&1 &
a=$!
wait_for "$T/a.out" 'minios> ' 30
msg=$(timeout 20 "$HYP" --kernel "$MINIOS" --memory 64 --disk "$T/disk.img" </dev/null 2>&1 >/dev/null)
rc=$?
kill $a 2>/dev/null; wait $a 2>/dev/null
if [ $rc -eq 1 ] && grep -q "disk $T/disk.img is in use by another domain" <<<"$msg"; then
	pass "second domain on the same writable disk refused"
else
	fail "second domain on the same writable disk refused" "status $rc: $msg"
fi

# 7. A partition of a disk with a partition table, through a loop device:
#    the guest's writes land inside the partition and nowhere else.
if need_root "partition-backed disk"; then
	truncate -s 64M "$T/parted.img"
	printf 'label: dos\nstart=2048, size=32768, type=83\nstart=34816, size=32768, type=83\n' |
		sfdisk -q "$T/parted.img" >/dev/null 2>&1
	loop=$(losetup -f --show -P "$T/parted.img" 2>/dev/null)
	if [ -n "$loop" ]; then
		[ -b "${loop}p2" ] || partx -a "$loop" 2>/dev/null
		sleep 0.2
	fi
	if [ -n "$loop" ] && [ -b "${loop}p2" ]; then
		# Everything outside partition 2 must stay as it was.
		before=$(fnv1a64w "$T/parted.img" 0 $((34816 * 512)))
		run_guest "$T/part.out" "blk; blk-pattern vda 0 64 91; blk-flush vda" --disk "${loop}p2"
		sync
		after=$(fnv1a64w "$T/parted.img" 0 $((34816 * 512)))
		if grep -q 'vda: 32768 sectors' "$T/part.out" &&
		   expect_pattern "$T/parted.img" $((34816 * 512)) $((64 * 512)) 91 0; then
			if [ "$before" = "$after" ]; then
				pass "partition-backed disk: writes land inside the partition only"
			else
				fail "partition-backed disk" "bytes before the partition changed"
			fi
		else
			fail "partition-backed disk" "pattern not found at the partition: $(grep -E 'vda|blk' "$T/part.out" | head -3)"
		fi
		losetup -d "$loop"
	else
		[ -n "$loop" ] && losetup -d "$loop"
		skip "partition-backed disk" "no loop device with partitions on this host"
	fi
fi

# 8. On hardware KVM: the Debian guest mounts an ext4 root on a file-backed disk.
if need_hw_kvm "Debian guest on an ext4 root disk"; then
	if [ -x "$TOP/share/debian/build-rootfs.sh" ] && "$TOP/share/debian/build-kernel.sh" >/dev/null 2>&1 &&
	   "$TOP/share/debian/build-initramfs.sh" >/dev/null 2>&1 &&
	   "$TOP/share/debian/build-rootfs.sh" "$T/root.img" 64 >/dev/null 2>&1; then
		timeout 60 "$HYP" --kernel "$BUILD/debian/vmlinuz" --initrd "$BUILD/debian/initrd.img" \
			--memory 512 --disk "$T/root.img" --cmdline "console=ttyS0 root=/dev/vda" \
			</dev/null >"$T/deb.out" 2>&1
		if grep -q 'lodge-guest: rootfs up' "$T/deb.out"; then
			pass "Debian guest mounts an ext4 root on a file-backed disk"
		else
			fail "Debian guest mounts an ext4 root" "$(tail -5 "$T/deb.out")"
		fi
	else
		skip "Debian guest on an ext4 root disk" "could not build the Debian guest"
	fi
fi

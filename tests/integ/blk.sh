#!/bin/bash
# virtio-blk with real guests: Lodge Mini-OS writes, flushes, reads and
# checksums through lodge-hyp's virtio-blk on file- and partition-backed
# disks; the host checks the bytes.
. "$(dirname "$0")/../lib.sh"

integ_begin "virtio-blk" kvm minios

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

# 2a. blk-bench with a request size of 0 says so; it divided by it before.
run_guest "$T/bench0.out" "blk-bench vda read 1 0 1" --disk "$T/disk.img"
rc=$?
if [ $rc -eq 0 ] && grep -q 'blk-bench: REQ_KIB must be at least 1' "$T/bench0.out"; then
	pass "blk-bench refuses a request size of 0, and the guest powers off"
else
	fail "blk-bench with a request size of 0" "status $rc: $(tail -2 "$T/bench0.out" | tr '\n' ' ')"
fi

# 2b. A disk that is a file in memory (tmpfs: lodge-hyp's I/O thread copies
#     itself instead of handing each request to io_uring's workers): the
#     guest's writes land byte for byte, in many requests at once, and its
#     reads see the host's bytes.
if [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
	M=$(mktemp -d /dev/shm/lodge-test-blk.XXXXXX)
	at_exit 'rm -rf "$M"'
	truncate -s 64M "$M/disk.img"
	head -c $((1 << 20)) /dev/urandom | dd of="$M/disk.img" bs=512 seek=8192 conv=notrunc status=none
	want=$(fnv1a64w "$M/disk.img" $((8192 * 512)) $((1 << 20)))
	run_guest "$T/shm.out" "blk-pattern vda 2048 4096 29; blk-flush vda; blk-bench vda read 8 64 16; blk-sum vda 8192 2048" \
		--disk "$M/disk.img"
	if grep -q 'blk-flush: ok' "$T/shm.out" && expect_pattern "$M/disk.img" $((2048 * 512)) $((4096 * 512)) 29 &&
	   grep -q 'blk-bench: read 8 MiB' "$T/shm.out" && grep -q "blk-sum: fnv1a64w $want" "$T/shm.out"; then
		pass "a disk in tmpfs: 2 MiB written byte for byte, 16 reads in flight, the host's bytes read back"
	else
		fail "a disk in tmpfs" "$(grep -E 'blk-' "$T/shm.out" | head -4 | tr '\n' '|')"
	fi
else
	skip "a disk in tmpfs" "/dev/shm is not a tmpfs here"
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
	loop_attach loop "$T/parted.img" -P || loop=
	if [ -n "$loop" ]; then
		[ -b "${loop}p2" ] || partx -a "$loop" 2>/dev/null
		sleep 0.2
	fi
	if [ -n "$loop" ] && [ -b "${loop}p2" ]; then
		# Everything outside partition 2 must stay as it was.
		# Fill the space after partition 2 (sector 67584 to the end) so a
		# stray write there shows too, then write partition 2's first and
		# last sectors.
		head -c $(((131072 - 67584) * 512)) /dev/urandom |
			dd of="$T/parted.img" bs=512 seek=67584 conv=notrunc status=none
		before=$(fnv1a64w "$T/parted.img" 0 $((34816 * 512)))
		before_tail=$(fnv1a64w "$T/parted.img" $((67584 * 512)) $(((131072 - 67584) * 512)))
		run_guest "$T/part.out" "blk; blk-pattern vda 0 64 91; blk-pattern vda 32704 64 91; blk-flush vda" \
			--disk "${loop}p2"
		sync
		after=$(fnv1a64w "$T/parted.img" 0 $((34816 * 512)))
		after_tail=$(fnv1a64w "$T/parted.img" $((67584 * 512)) $(((131072 - 67584) * 512)))
		if grep -q 'vda: 32768 sectors' "$T/part.out" &&
		   expect_pattern "$T/parted.img" $((34816 * 512)) $((64 * 512)) 91 0 &&
		   expect_pattern "$T/parted.img" $(((34816 + 32704) * 512)) $((64 * 512)) 91 $((32704 * 512)); then
			if [ "$before" != "$after" ]; then
				fail "partition-backed disk" "bytes before the partition changed"
			elif [ "$before_tail" != "$after_tail" ]; then
				fail "partition-backed disk" "bytes after the partition changed"
			else
				pass "partition-backed disk: writes land inside the partition only (bytes before and after unchanged)"
			fi
		else
			fail "partition-backed disk" "pattern not found at the partition: $(grep -E 'vda|blk' "$T/part.out" | head -3)"
		fi
		loop_detach "$loop"
	else
		loop_detach "$loop"
		skip "partition-backed disk" "no loop device with partitions on this host"
	fi
fi

# 8. A size that is not a multiple of 512: rounded down, with one warning;
#    the guest sees 64 MiB, its last sector is usable, the 100 bytes past it
#    are never touched and a write beyond it is an I/O error.
truncate -s $((64 << 20)) "$T/odd.img"
printf '%100s' '' | tr ' ' '\252' >>"$T/odd.img"
tail_before=$(tail -c 100 "$T/odd.img" | md5sum)
run_guest "$T/odd.out" "blk; blk-pattern vda 131071 1 13; blk-pattern vda 131072 1 13" --disk "$T/odd.img"
warns=$(grep -c "disk $T/odd.img: size $(((64 << 20) + 100)) is not a multiple of 512; the last 100 bytes are not used" "$T/odd.out")
if [ "$warns" -eq 1 ] && [ "$(grep -c 'not a multiple of 512' "$T/odd.out")" -eq 1 ] &&
   grep -q 'vda: 131072 sectors (64 MiB)' "$T/odd.out" && grep -q 'blk-pattern: wrote 1 sectors' "$T/odd.out" &&
   grep -q 'blk-pattern: I/O error (status 1) writing sector 131072' "$T/odd.out" &&
   expect_pattern "$T/odd.img" $((131071 * 512)) 512 13 &&
   [ "$(tail -c 100 "$T/odd.img" | md5sum)" = "$tail_before" ] && [ "$(stat -c %s "$T/odd.img")" -eq $(((64 << 20) + 100)) ]; then
	pass "a 64 MiB + 100 byte image: one warning, the guest sees 64 MiB, the tail is untouched"
else
	fail "size rounded down to 512 bytes" "$warns warnings: $(grep -E 'multiple|vda|blk-pattern' "$T/odd.out" | tr '\n' '|')"
fi

# 9. DISCARD and WRITE_ZEROES (unmap) punch holes in a sparse file; plain
#    WRITE_ZEROES zeroes. Three 1 MiB regions get the pattern, then one of
#    each request; the file's allocated blocks drop by two regions, those two
#    are holes (SEEK_DATA), all three read back zeros in the guest and on
#    the host, and the bytes around them keep the pattern.
# is_hole FILE OFFSET LENGTH: no data in [OFFSET, OFFSET+LENGTH)
is_hole() {
	python3 - "$@" <<'PY'
import errno, os, sys
f, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(f, os.O_RDONLY)
try:
    data = os.lseek(fd, off, os.SEEK_DATA)
except OSError as e:
    data = None if e.errno == errno.ENXIO else -1
sys.exit(0 if data is None or data >= off + n else 1)
PY
}
is_zero() {   # FILE OFFSET LENGTH
	python3 -c 'import sys; f=open(sys.argv[1],"rb"); f.seek(int(sys.argv[2])); n=int(sys.argv[3]); sys.exit(0 if f.read(n) == bytes(n) else 1)' "$@"
}
probe=$T/punch-probe
head -c 65536 /dev/urandom >"$probe"
if fallocate -p -o 0 -l 65536 "$probe" 2>/dev/null && is_hole "$probe" 0 65536; then
	truncate -s 64M "$T/sparse.img"
	run_guest "$T/fill.out" "blk-pattern vda 8000 12000 23; blk-flush vda" --disk "$T/sparse.img"
	sync "$T/sparse.img"
	blocks0=$(stat -c %b "$T/sparse.img")
	run_guest "$T/discard.out" "blk-discard vda 8192 2048; blk-zeroes vda 12288 2048 unmap; blk-zeroes vda 16384 2048; blk-sum vda 8192 2048; blk-sum vda 12288 2048; blk-sum vda 16384 2048; blk-flush vda" \
		--disk "$T/sparse.img"
	sync "$T/sparse.img"
	blocks1=$(stat -c %b "$T/sparse.img")   # 512-byte units, as the sectors
	zsum=$(fnv1a64w /dev/zero 0 $((2048 * 512)))
	why=
	grep -q 'blk-discard: 2048 sectors' "$T/discard.out" || why="$why discard not done;"
	[ "$(grep -c 'blk-zeroes: 2048 sectors' "$T/discard.out")" -eq 2 ] || why="$why write-zeroes not done;"
	[ "$(grep -c "blk-sum: fnv1a64w $zsum" "$T/discard.out")" -eq 3 ] || why="$why the guest does not read zeros;"
	# Two regions of 2048 sectors freed, less up to 64 sectors the file
	# system may take for the extents the holes split.
	[ $((blocks0 - blocks1)) -ge $((2 * 2048 - 64)) ] || why="$why allocated blocks $blocks0 -> $blocks1;"
	is_hole "$T/sparse.img" $((8192 * 512)) $((2048 * 512)) || why="$why the discarded region is no hole;"
	is_hole "$T/sparse.img" $((12288 * 512)) $((2048 * 512)) || why="$why the unmapped zeroes are no hole;"
	for r in 8192 12288 16384; do
		is_zero "$T/sparse.img" $((r * 512)) $((2048 * 512)) || why="$why sector $r reads non-zero on the host;"
	done
	# What was not asked for keeps the pattern (sectors 8000-19999 had it).
	for r in "8000 192" "10240 2048" "14336 2048" "18432 1568"; do
		read -r at n <<<"$r"
		expect_pattern "$T/sparse.img" $((at * 512)) $((n * 512)) 23 || why="$why sectors $at+$n lost the pattern;"
	done
	if [ -z "$why" ]; then
		pass "DISCARD and WRITE_ZEROES: holes punched (blocks $blocks0 -> $blocks1), zeros read in the guest and on the host"
	else
		fail "DISCARD and WRITE_ZEROES" "$why $(grep -E 'blk-' "$T/discard.out" | tr '\n' '|')"
	fi
else
	skip "DISCARD and WRITE_ZEROES punch holes" "$(df --output=fstype "$T" | tail -1) under $T cannot punch holes"
fi

# 10. A guest FLUSH reaches the disk: on a loop device the kernel counts
#     what arrives (/sys/block/loopN/stat: field 7 sectors written, field 16
#     flush requests). The pattern is written into the page cache and nothing
#     is flushed; after blk-flush the loop device has seen the pattern's
#     sectors and a cache flush. (Test 1 cannot fail from a broken flush: the
#     page cache survives lodge-hyp's SIGKILL.)
if need_root "guest FLUSH reaches the disk"; then
	truncate -s 64M "$T/flush.img"
	loop_attach floop "$T/flush.img" || floop=
	fstat=/sys/block/${floop##*/}/stat
	if [ -n "$floop" ] && [ "$(wc -w <"$fstat" 2>/dev/null)" -ge 17 ]; then
		mkfifo "$T/flush.in"
		"$HYP" --kernel "$MINIOS" --memory 64 --disk "$floop" <"$T/flush.in" >"$T/flush.out" 2>&1 &
		fhyp=$!
		exec 8>"$T/flush.in"
		field() { awk -v f="$1" '{ print $f }' "$fstat"; }
		why=
		if wait_for "$T/flush.out" 'minios> ' 30; then
			w0=$(field 7) f0=$(field 16)
			echo "blk-pattern vda 2048 256 29" >&8
			wait_for "$T/flush.out" 'blk-pattern: wrote 256 sectors' 30 || why="no pattern written;"
			w1=$(field 7) f1=$(field 16)
			echo "blk-flush vda" >&8
			wait_for "$T/flush.out" 'blk-flush: ok' 30 || why="$why no flush completion;"
			w2=$(field 7) f2=$(field 16)
			[ "$f1" -eq "$f0" ] || why="$why a flush before the guest's ($f0 -> $f1);"
			[ "$f2" -gt "$f1" ] || why="$why the guest's FLUSH sent no cache flush to the device ($f1 -> $f2);"
			[ $((w2 - w0)) -ge 256 ] || why="$why only $((w2 - w0)) sectors reached the device by the flush's end;"
		else
			why="no prompt: $(tail -2 "$T/flush.out")"
		fi
		exec 8>&-
		kill $fhyp 2>/dev/null; wait $fhyp 2>/dev/null
		if [ -z "$why" ] && expect_pattern "$T/flush.img" $((2048 * 512)) $((256 * 512)) 29; then
			pass "a guest FLUSH reaches the disk: $((w2 - w0)) sectors written and $((f2 - f1)) cache flush(es) on the loop device"
		else
			fail "guest FLUSH reaches the disk" "${why:-pattern not in the backing file}"
		fi
		loop_detach "$floop"
	else
		loop_detach "$floop"
		skip "guest FLUSH reaches the disk" "no loop device with flush counters in its stat"
	fi
fi

# 11. ENOSPC on the host mid-run: the disk is a sparse 64 MiB file on a
#     4 MiB tmpfs, in a private mount namespace held by a sleeping process;
#     lodge create (so lodge-hyp) and every lodge command run inside it.
#     The write that fills the tmpfs fails in the guest with an I/O error,
#     the domain keeps running and answering, reads still work, and lodge
#     block-list counts the error.
if need_root "ENOSPC mid-run"; then
	R=$T/root
	LODGE=$BUILD/lodge
	mkdir -p "$R/etc/lodge/domains" "$T/small"
	cat >"$R/etc/lodge/domains/enospc.cfg" <<CFG
name = "enospc"
memory = 64
kernel = "$MINIOS"
disk = [ "$T/small/disk.img,raw,vda,rw" ]
CFG
	unshare -m --propagation private sh -c 'mount -t tmpfs -o size=4M lodge-enospc "$1" &&
		truncate -s 64M "$1/disk.img" && echo ready && exec sleep 600' sh "$T/small" >"$T/holder.out" 2>&1 &
	holder=$!
	lodge() { nsenter -t "$holder" -m timeout 30 "$LODGE" --root "$R" "$@"; }
	if wait_for "$T/holder.out" '^ready' 10 && lodge create enospc >"$T/enospc-create.out" 2>&1; then
		con=$R/run/lodge/enospc/console.log
		say() { ( echo "$1"; sleep "${2:-1}" ) | lodge console enospc >/dev/null 2>&1; }
		wait_for "$con" 'minios> ' 30
		say "blk-pattern vda 0 2048 5"
		wait_for "$con" 'blk-pattern: wrote 2048 sectors' 30
		e0=$(lodge block-list enospc | awk '$1 == "vda" { print $8 }')
		say "blk-pattern vda 4096 16384 7"
		wait_for "$con" 'blk-pattern: I/O error \(status 1\) writing sector' 60
		say "echo still-here; blk-sum vda 0 2048"
		wait_for "$con" 'blk-sum: fnv1a64w' 30
		e1=$(lodge block-list enospc | awk '$1 == "vda" { print $8 }')
		why=
		grep -q 'blk-pattern: I/O error (status 1) writing sector' "$con" || why="no I/O error in the guest;"
		grep -q '^still-here' "$con" || why="$why the guest does not answer after the error;"
		grep -q 'blk-sum: fnv1a64w' "$con" || why="$why no read after the error;"
		lodge list 2>/dev/null | grep -q '^enospc ' || why="$why the domain is not listed;"
		[ -n "$e0" ] && [ -n "$e1" ] && [ "$e1" -gt "$e0" ] || why="$why block-list errors $e0 -> $e1;"
		if [ -z "$why" ]; then
			pass "ENOSPC on the host: the guest gets an I/O error, keeps running, block-list counts it ($e0 -> $e1)"
		else
			fail "ENOSPC mid-run" "$why $(grep -E 'blk-|still' "$con" | tail -4 | tr '\n' '|')"
		fi
		lodge destroy enospc >/dev/null 2>&1
	else
		skip "ENOSPC mid-run" "cannot make a small tmpfs in a mount namespace: $(tail -1 "$T/holder.out" "$T/enospc-create.out" 2>/dev/null | tr '\n' ' ')"
	fi
	kill $holder 2>/dev/null; wait $holder 2>/dev/null
fi

# 12. On hardware KVM: the Debian guest mounts an ext4 root on a file-backed disk.
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

#!/bin/bash
# One writer or any number of readers of the same blocks, whatever name
# they are reached by (issue 17, defect 5): a file and a loop device over
# it, two nodes of one device, a partition and its whole disk; across two
# domains and across the disks of one.  Sibling partitions may serve two
# domains.
. "$(dirname "$0")/../lib.sh"

integ_begin "disk locks" kvm root minios

truncate -s 16M "$T/x.img"
loop_attach loop "$T/x.img" || loop=
if [ -z "$loop" ]; then skip "disk locks" "no loop device on this host"; exit 0; fi

# hold NAME DISK-ARGS...: a domain holding these disks, running (its
# prompt seen: its disks are open and locked).
hold() {
	local name=$1
	shift
	"$HYP" --kernel "$MINIOS" --memory 32 "$@" </dev/null >"$T/$name.out" 2>&1 &
	held=$!
	wait_for "$T/$name.out" 'minios> ' 30
}
release() { kill "$held" 2>/dev/null; wait "$held" 2>/dev/null; }
# refused LABEL PATTERN DISK-ARGS...: a domain with these disks must not
# start, saying PATTERN (grep -E).
refused() {
	local label=$1 pat=$2 msg rc
	shift 2
	msg=$(timeout 30 "$HYP" --kernel "$MINIOS" --memory 32 "$@" </dev/null 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 1 ] && grep -Eq -- "$pat" <<<"$msg"; then
		pass "$label: $(grep -E -- "$pat" <<<"$msg" | head -1 | sed 's/^lodge-hyp: error: //' | cut -c1-150)"
	else
		fail "$label" "status $rc: $msg"
	fi
}
# allowed LABEL DISK-ARGS...: a domain with these disks runs.
allowed() {
	local label=$1 first=$held
	shift
	if hold allowed "$@"; then
		pass "$label"
	else
		fail "$label" "$(grep -v '^$' "$T/allowed.out" | head -3 | tr '\n' '|')"
	fi
	release
	held=$first
}

# File and loop device, both orders, two domains.
if hold a "--disk" "$T/x.img"; then
	refused "a loop device over a file another domain writes" \
		"disk $loop is in use by another domain: $T/x.img \(the backing file of $loop\) is in use" --disk "$loop"
else
	fail "domain on x.img" "$(tail -2 "$T/a.out")"
fi
release
if hold a --disk "$loop"; then
	refused "a file another domain writes through a loop device" \
		"disk $T/x.img is in use by another domain" --disk "$T/x.img"
	# Another node of the same device is the same device.
	mknod "$T/alias" b $((0x$(stat -c %t "$loop"))) $((0x$(stat -c %T "$loop")))
	refused "another device node of a loop device another domain writes" \
		"disk $T/alias is in use by another domain" --disk "$T/alias"
	refused "a read-only file another domain writes through a loop device" \
		"disk $T/x.img is in use by another domain \(opened writable there\)" --disk "$T/x.img,ro"
else
	fail "domain on $loop" "$(tail -2 "$T/a.out")"
fi
release

# Not a lock, but the same open: a FIFO is no disk, and is refused at
# once rather than waited on (a read-only open of a FIFO waits for a writer).
mkfifo "$T/fifo"
refused "a FIFO as a read-only disk is refused at once" "disk $T/fifo is neither a regular file nor a block device" \
	--disk "$T/fifo,ro"

# One domain, both orders.
refused "one domain's two disks: a file and a loop device over it" \
	"disks $T/x.img and $loop of this domain are the same blocks" --disk "$T/x.img" --disk "$loop"
refused "one domain's two disks: a loop device and its file" \
	"disks $loop and $T/x.img of this domain are the same blocks" --disk "$loop" --disk "$T/x.img"

# Readers share.
if hold a --disk "$T/x.img,ro"; then
	allowed "two domains read a file and a loop device over it (both read-only)" --disk "$loop,ro"
else
	fail "read-only domain on x.img" "$(tail -2 "$T/a.out")"
fi
release
allowed "one domain reads a file and a loop device over it (both read-only)" --disk "$T/x.img,ro" --disk "$loop,ro"

# A loop device whose backing file is gone from its directory: it cannot
# be locked through the file, and says so once; the device still is.
truncate -s 16M "$T/gone.img"
loop_attach gloop "$T/gone.img" || gloop=
if [ -n "$gloop" ]; then
	rm "$T/gone.img"
	if hold a --disk "$gloop" && [ "$(grep -c "disk $gloop: cannot find the backing file of loop device $gloop (No such file or directory): it is locked as a device only" "$T/a.out")" = 1 ]; then
		refused "a loop device whose backing file is gone is still locked as a device" \
			"disk $gloop is in use by another domain" --disk "$gloop"
	else
		fail "a loop device whose backing file is gone" "$gloop: $(head -c 600 "$T/a.out" | tr '\n' '|'); $(ls -la "$T" | tr '\n' '|'); $(losetup -a | tr '\n' '|')"
	fi
	release
fi

# Partitions of a loop disk: siblings in two domains; not the whole disk
# nor its backing file beside one of them.
truncate -s 16M "$T/parted.img"
printf 'label: dos\nstart=2048, size=8192, type=83\nstart=10240, size=8192, type=83\n' |
	sfdisk -q "$T/parted.img" >/dev/null 2>&1
loop_attach ploop "$T/parted.img" -P || ploop=
if [ -n "$ploop" ] && { [ -b "${ploop}p2" ] || partx -a "$ploop" 2>/dev/null; } && wait_until 5 test -b "${ploop}p2"; then
	if hold a --disk "${ploop}p1"; then
		allowed "two domains write two partitions of one loop disk" --disk "${ploop}p2"
		refused "the whole loop disk while another domain writes a partition of it" \
			"disk $ploop is in use by another domain: $ploop \(the whole disk of ${ploop}p1\)|disk $ploop is in use by another domain" \
			--disk "$ploop"
		refused "the backing file of a partitioned loop disk while another domain writes a partition" \
			"disk $T/parted.img is in use by another domain" --disk "$T/parted.img"
	else
		fail "domain on ${ploop}p1" "$(tail -2 "$T/a.out")"
	fi
	release
	refused "one domain's two disks: a whole loop disk and its partition" \
		"disks $ploop and ${ploop}p2 of this domain are the same blocks" \
		--disk "$ploop" --disk "${ploop}p2"
else
	skip "partitions of a loop disk" "no loop device with partitions on this host"
fi

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

# ---- every start path locks (issue 31, defect 2) -------------------------------------------
# A domain restored from a file (lodge restore, lodge host-start) holds its
# disk's lock before its guest runs, as a created one does: /proc/locks
# shows it, and a second domain on the same blocks, by whatever name (the
# file, a ../store/./ alias, a hard link, a loop device over it), is
# refused naming the domain that holds them; and so does a live
# migration's receiver, from the hand-over on.  (The pool's HA restart is
# a create.)
mkdir -p "$T/store" "$ROOT/etc/lodge"
truncate -s 16M "$T/store/one.img"
ln "$T/store/one.img" "$T/store/link.img"
loop_attach oloop "$T/store/one.img" || oloop=
lcfg() {  # NAME DISK-SPEC: a domain config
	printf 'name = "%s"\nmemory = 32\nkernel = "%s"\ndisk = [ "%s,vda,w" ]\n' "$1" "$MINIOS" "$2" >"$DOMS/$1.cfg"
}
lfield() { timeout 20 "$LODGE" --root "${3:-$ROOT}" list -o tsv 2>/dev/null | awk -F'\t' -v n="$1" -v c="$2" '$1 == n { print $c }'; }
has_one() { [ -n "$(lfield one 1 "$1")" ]; }
# locked_by_one [ROOT]: /proc/locks has a write lock on one.img's device
# and inode, held by domain one's lodge-hyp (or its sandboxed child)
locked_by_one() {
	local ino dev pid p
	ino=$(stat -c %i "$T/store/one.img")
	dev=$(printf '%02x:%02x' $((0x$(stat -c %D "$T/store/one.img") >> 8)) $((0x$(stat -c %D "$T/store/one.img") & 0xff)))
	pid=$(lfield one 9 "${1:-$ROOT}")
	[ -n "$pid" ] || return 1
	while read -r p; do
		[ "$p" = "$pid" ] || [ "$(awk '/^PPid:/ { print $2 }' /proc/"$p"/status 2>/dev/null)" = "$pid" ] && return 0
	done < <(awk -v k="$dev:$ino" '$2 == "FLOCK" && $4 == "WRITE" && $6 == k { print $5 }' /proc/locks)
	return 1
}
# second_refused HOW: domain two, its disk one.img by the names above,
# each refused naming one; nothing of two left running.
second_refused() {
	local how=$1 spec label out rc
	for spec in "file:$T/store/one.img" "file:$T/store/../store/./one.img" "file:$T/store/link.img" \
		    ${oloop:+"phy:$oloop"}; do
		label="${spec#*:}"
		lcfg two "$spec"
		out=$(lodge create two 2>&1); rc=$?
		if [ $rc -ne 0 ] && grep -q "is in use by domain one" <<<"$out" && [ -z "$(lfield two 1)" ]; then
			pass "$how: a second domain on $label is refused: $(grep -o 'disk .*' <<<"$out" | head -1 | cut -c1-160)"
		else
			fail "$how: a second domain on $label is refused naming one" "exit $rc: $(tr '\n' '|' <<<"$out")"
			lodge destroy two >/dev/null 2>&1
		fi
	done
}
lcfg one "file:$T/store/one.img"
if lodge create one >"$T/one.out" 2>&1 && track_pid "$(lfield one 9)" && locked_by_one; then
	pass "a created domain holds its disk's lock (/proc/locks)"
	second_refused "created"
	if lodge save one "$T/one.sav" >"$T/one.out" 2>&1 && ! locked_by_one &&
	   lodge restore "$T/one.sav" >>"$T/one.out" 2>&1 && track_pid "$(lfield one 9)"; then
		if locked_by_one; then
			pass "a domain restored from a file holds its disk's lock (/proc/locks)"
		else
			fail "a domain restored from a file holds its disk's lock" "$(grep FLOCK /proc/locks | tr '\n' '|')"
		fi
		second_refused "restored"
	else
		fail "save and restore of one" "$(tr '\n' '|' <"$T/one.out")"
	fi
	printf 'on_host_shutdown = "save"\n' >"$ROOT/etc/lodge/lodge.conf"
	if lodge host-stop >"$T/one.out" 2>&1 && [ -z "$(lfield one 1)" ] &&
	   lodge host-start >>"$T/one.out" 2>&1 && track_pid "$(lfield one 9)" && locked_by_one; then
		pass "a domain host-start restores holds its disk's lock (/proc/locks)"
		lcfg two "file:$T/store/link.img"
		out=$(lodge create two 2>&1)
		if grep -q "is in use by domain one" <<<"$out" && [ -z "$(lfield two 1)" ]; then
			pass "after host-start: a second domain on a hard link is refused naming one"
		else
			fail "after host-start: a second domain on a hard link is refused" "$(tr '\n' '|' <<<"$out")"
		fi
	else
		fail "host-stop and host-start of one" "$(tr '\n' '|' <"$T/one.out"); $(grep FLOCK /proc/locks | tr '\n' '|')"
	fi
	rm -f "$ROOT/etc/lodge/lodge.conf"
	# Migrated in (to another root on this host, through its Unix
	# socket): the receiver holds the lock once the sender let go.
	RB=$T/b
	integ_root "$RB"
	mkdir -p "$RB/etc/lodge/domains"
	printf 'storage_dirs = [ "%s" ]\nkernel_dirs = [ "%s" ]\n' "$T/store" "$(dirname "$MINIOS")" >"$RB/etc/lodge/lodge.conf"
	"$LODGE" --root "$RB" migrate-receive >"$T/recv.out" 2>&1 &
	recv=$!
	if wait_for "$T/recv.out" '^listening on ' 15 &&
	   lodge migrate one "$RB/run/lodge/.migrate.sock" >"$T/one.out" 2>&1 && wait_until 10 has_one "$RB" &&
	   track_pid "$(lfield one 9 "$RB")" && wait_until 10 locked_by_one "$RB"; then
		pass "a domain migrated in holds its disk's lock (/proc/locks)"
		second_refused "migrated in"
	else
		fail "a domain migrated in holds its disk's lock" "$(tr '\n' '|' <"$T/one.out"); $(tail -2 "$T/recv.out" | tr '\n' '|'); $(grep FLOCK /proc/locks | tr '\n' '|')"
	fi
	kill "$recv" 2>/dev/null
	wait "$recv" 2>/dev/null
	timeout 20 "$LODGE" --root "$RB" destroy one >/dev/null 2>&1
	lodge destroy one >/dev/null 2>&1
else
	fail "a created domain holds its disk's lock" "$(tr '\n' '|' <"$T/one.out"); $(grep FLOCK /proc/locks | tr '\n' '|')"
fi
exit 0

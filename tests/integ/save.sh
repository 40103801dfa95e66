#!/bin/bash
# lodge save and lodge restore with real Mini-OS domains: memory and a
# running counter survive a round trip (plain and bzip2), --keep takes a
# snapshot that restores later, damaged files are refused leaving nothing,
# a full filesystem or a killed save leaves no file and the domain running,
# and a domain's disk and vif (on a bridge in a network namespace this test
# makes and removes) come back with it.
. "$(dirname "$0")/../lib.sh"

integ_begin "save and restore" kvm minios
NS=
MNTS=()
at_exit 'for m in "${MNTS[@]}"; do umount "$m" 2>/dev/null; done; [ -n "$NS" ] && ip netns del "$NS" 2>/dev/null'

# field NAME COLUMN: a column of lodge list -o tsv (5 state, 9 pid)
conlog() { lodge console --log "$1" 2>/dev/null | tr -d '\r'; }
shows() { conlog "$1" | grep -Eq -- "$2"; }
counters() { grep -E '^counter [0-9]+$' | awk '{ print $2 }'; }
last_counter() { conlog "$1" | counters | tail -1; }
# say NAME LINE: type LINE on the domain's console
say() { (sleep 0.3; echo "$2"; sleep 0.5) | timeout 3 "$LODGE" --root "$ROOT" console "$1" >/dev/null 2>&1; }
# track NAME: its lodge-hyp processes (not this shell's children) end at exit
track() { local p; p=$(field "$1" 9); [ -n "$p" ] && track_pid "$p" $(pgrep -P "$p"); }
ms() { grep -Eo '[0-9]+ ms\)' <<<"$1" | tr -dc '0-9'; }
is_gone() { [ -z "$(field "$1" 1)" ] && [ ! -e "$RUN/$1" ]; }
now_ms() { date +%s%3N; }
# counting NAME: the counter moves on within 5 s (COUNTED says from what to what)
counting() {
	local a b i
	a=$(last_counter "$1")
	for i in $(seq 25); do
		sleep 0.2
		b=$(last_counter "$1")
		[ -n "$b" ] && [ "$b" -gt "${a:-0}" ] && break
	done
	COUNTED="counter ${a:-none} then ${b:-none}"
	[ -n "$b" ] && [ "$b" -gt "${a:-0}" ]
}
memcheck_ok() {  # NAME MIB
	say "$1" memcheck
	wait_until 10 shows "$1" "^memcheck: ok $2 MiB" && ! shows "$1" 'memcheck: BAD'
}
mkcfg() {  # NAME MEMORY EXTRA [more lines]
	local name=$1 mem=$2 extra=$3
	shift 3
	{
		printf 'name = "%s"\nmemory = %s\nvcpus = 1\nkernel = "%s"\n' "$name" "$mem" "$MINIOS"
		printf "extra = '%s'\n" "$extra"
		printf '%s\n' "$@"
	} >"$ROOT/etc/lodge/domains/$name.cfg"
}

# ---- 1. A round trip: memory pattern and a running counter ------------------
mkcfg t 64 'run="memfill 16 7; counter 200"'
if ! lodge create t >/dev/null 2>&1 || ! wait_until 30 shows t '^counter 3$'; then
	fail "save and restore" "the guest did not boot: $(conlog t | tail -3)"
	exit 0
fi
track t
pid_t=$(field t 9)
# A console attached across the save sees the very last counter before it.
mkfifo "$T/cons.in"
timeout 30 "$LODGE" --root "$ROOT" console t <"$T/cons.in" >"$T/cons.out" 2>/dev/null &
cons=$!
exec 7>"$T/cons.in"
sleep 0.6
before_snap=$(last_counter t)
out=$(lodge save t "$T/t.sav" 2>&1); rc=$?
exec 7>&-
wait_until 5 sh -c "! kill -0 $cons 2>/dev/null"
last=$(tr -d '\r' <"$T/cons.out" | counters | tail -1)
[ -n "$last" ] || last=$before_snap
save_ms=$(ms "$out")
if [ $rc -eq 0 ] && grep -q "^saved domain t to $T/t.sav ([0-9.]* MiB, [0-9]* ms)$" <<<"$out" && [ -s "$T/t.sav" ]; then
	pass "save writes the file and says so ($(du -m "$T/t.sav" | cut -f1) MiB in $save_ms ms)"
else
	fail "save writes the file" "exit $rc: $out"
fi
if is_gone t && ! kill -0 "$pid_t" 2>/dev/null; then
	pass "the saved domain is gone until restored (not listed, no runtime dir, no lodge-hyp)"
else
	fail "the saved domain is gone" "list: $(field t 5), $(ls "$RUN" 2>&1), pid $pid_t $(kill -0 "$pid_t" 2>/dev/null && echo alive)"
fi
out=$(lodge restore "$T/t.sav" 2>&1); rc=$?
track t
if [ $rc -eq 0 ] && grep -q "^restored domain t from $T/t.sav ([0-9]* ms)$" <<<"$out" && [ "$(field t 5)" = running ]; then
	pass "restore brings it back running ($(ms "$out") ms)"
else
	fail "restore brings it back running" "exit $rc: $out; state $(field t 5)"
fi
wait_until 5 sh -c "$LODGE --root $ROOT console --log t 2>/dev/null | tr -d '\r' | grep -Eq '^counter [0-9]+\$'"
first=$(conlog t | counters | head -1)
if [ -n "$first" ] && [ -n "$last" ] && [ "$first" -gt "$last" ] && [ "$first" -le $((last + 3)) ]; then
	pass "the counter continues: counter $last before the save, counter $first first after the restore"
else
	fail "the counter continues" "last before the save '$last', first after the restore '$first'"
fi
if memcheck_ok t 16; then
	pass "memcheck after the restore: the 16 MiB pattern is intact"
else
	fail "memcheck after the restore" "$(conlog t | grep -E '^mem' | tail -2 | tr '\n' ' ')"
fi

# ---- 2. Compressed -------------------------------------------------------------
before=$(last_counter t)
out=$(lodge save -c t "$T/t.bz" 2>&1); rc=$?
csave_ms=$(ms "$out")
plain=$(stat -c %s "$T/t.sav" 2>/dev/null || echo 0)
comp=$(stat -c %s "$T/t.bz" 2>/dev/null || echo 0)
if [ $rc -eq 0 ] && grep -q ', bzip2, ' <<<"$out" && [ "$(head -c 3 "$T/t.bz")" = BZh ] &&
   [ "$comp" -gt 0 ] && [ $((comp * 10)) -lt "$plain" ]; then
	pass "save -c writes bzip2 ($comp bytes against $plain plain, $csave_ms ms)"
else
	fail "save -c writes bzip2" "exit $rc: $out; $comp bytes against $plain, starts '$(head -c 3 "$T/t.bz" | od -An -c)'"
fi
out=$(lodge restore "$T/t.bz" 2>&1); rc=$?
track t
wait_until 5 sh -c "$LODGE --root $ROOT console --log t 2>/dev/null | tr -d '\r' | grep -Eq '^counter [0-9]+\$'"
first=$(conlog t | counters | head -1)
if [ $rc -eq 0 ] && [ "$(field t 5)" = running ] && [ -n "$first" ] && [ "$first" -gt "${before:-0}" ] &&
   memcheck_ok t 16; then
	pass "a compressed save round-trips: memcheck ok, counter on from $before to $first ($(ms "$out") ms)"
else
	fail "a compressed save round-trips" "exit $rc: $out; state $(field t 5); counter $before then $first; $(conlog t | grep -E '^mem' | tail -1)"
fi

# ---- 3. --keep: a snapshot ---------------------------------------------------------
pid_t=$(field t 9)
out=$(lodge save -k t "$T/k.sav" 2>&1); rc=$?
snap=$(last_counter t)
if [ $rc -eq 0 ] && grep -q '; it runs on$' <<<"$out" && [ -s "$T/k.sav" ] && [ "$(field t 5)" = running ] &&
   [ "$(field t 9)" = "$pid_t" ] && counting t; then
	pass "save --keep leaves the domain running and counting ($(ms "$out") ms)"
else
	fail "save --keep leaves it running" "exit $rc: $out; state $(field t 5), pid $pid_t -> $(field t 9), $COUNTED"
fi
lodge destroy t >/dev/null 2>&1
wait_until 5 is_gone t
out=$(lodge restore "$T/k.sav" 2>&1); rc=$?
track t
wait_until 5 sh -c "$LODGE --root $ROOT console --log t 2>/dev/null | tr -d '\r' | grep -Eq '^counter [0-9]+\$'"
first=$(conlog t | counters | head -1)
if [ $rc -eq 0 ] && [ "$(field t 5)" = running ] && [ -n "$first" ] && [ -n "$snap" ] &&
   [ "$first" -le $((snap + 3)) ] && [ "$first" -gt 1 ] && memcheck_ok t 16; then
	pass "the snapshot restores after the original is destroyed: counter $first (snapshot at $snap), memcheck ok"
else
	fail "the snapshot restores" "exit $rc: $out; state $(field t 5); counter $first, snapshot at $snap"
fi

# ---- 5. A full filesystem: an error, the domain runs on, no file -------------------
if need_root "save onto a full filesystem"; then
	mkdir -p "$T/full" "$T/tiny"
	if mount -t tmpfs -o size=4m tmpfs "$T/full" && MNTS+=("$T/full") &&
	   mount -t tmpfs -o size=64k tmpfs "$T/tiny" && MNTS+=("$T/tiny"); then
		out=$(lodge save t "$T/full/t.sav" 2>&1); rc=$?
		if [ $rc -eq 1 ] && grep -q '^lodge: error: .*No space left on device' <<<"$out" &&
		   [ "$(field t 5)" = running ] && counting t && [ -z "$(ls -A "$T/full")" ]; then
			pass "a save onto a full 4 MiB filesystem fails (no space), the domain runs on and counts, no file"
		else
			fail "save onto a full filesystem" "exit $rc: $out; state $(field t 5), $COUNTED; files: $(ls -A "$T/full")"
		fi
		out=$(lodge save -c t "$T/tiny/t.bz" 2>&1); rc=$?
		if [ $rc -eq 1 ] && grep -q '^lodge: error: ' <<<"$out" && [ "$(field t 5)" = running ] &&
		   counting t && [ -z "$(ls -A "$T/tiny")" ]; then
			pass "a compressed save onto a full 64 KiB filesystem fails, the domain runs on, no file"
		else
			fail "compressed save onto a full filesystem" "exit $rc: $out; state $(field t 5), $COUNTED; files: $(ls -A "$T/tiny")"
		fi
		if grep -Eqi 'no space|disk full' <<<"$out"; then
			pass "the compressed save's error says the filesystem is full"
		else
			fail "the compressed save's error says the filesystem is full" "it says: $out"
		fi
	else
		skip "save onto a full filesystem" "cannot mount a tmpfs"
	fi
fi

# ---- 4. Damaged files are refused, nothing left behind ---------------------------
lodge destroy t >/dev/null 2>&1
wait_until 5 is_gone t
sz=$(stat -c %s "$T/t.sav")
head -c $((sz / 2)) "$T/t.sav" >"$T/trunc.sav"
cp "$T/t.sav" "$T/corrupt.sav"
# the complement of 16 bytes in the middle
head -c $((sz / 2 + 16)) "$T/t.sav" | tail -c 16 | perl -pe 's/(.)/chr(~ord($1) & 0xff)/gse' |
	dd of="$T/corrupt.sav" bs=1 seek=$((sz / 2)) conv=notrunc status=none
head -c 100000 /dev/urandom >"$T/garbage.sav"
: >"$T/empty.sav"
bsz=$(stat -c %s "$T/t.bz")
head -c $((bsz / 2)) "$T/t.bz" >"$T/trunc.bz"
head -c 1000000 /dev/urandom | bzip2 >"$T/other.bz"
# Saved by another Lodge: the HEAD section's version rewritten, its CRC-32
# made good again, so only the version is wrong.
python3 - "$T/t.sav" "$T/version.sav" <<'PY'
import struct, sys, zlib
d = bytearray(open(sys.argv[1], "rb").read())
hdr = 16                                   # magic and format
typ, ver, name, n = struct.unpack_from("<II24sQ", d, hdr)
p = hdr + 40
payload = bytes(d[p:p + n]).replace(b"lodge 0.", b"lodge 9.", 1)
crc = zlib.crc32(bytes(d[hdr:hdr + 40]) + payload)
out = d[:p] + payload + struct.pack("<I", crc) + d[p + n + 4:]
open(sys.argv[2], "wb").write(out)
PY
refused() {  # WHAT FILE PATTERN
	local out rc
	out=$(timeout 8 "$LODGE" --root "$ROOT" restore "$2" 2>&1); rc=$?
	wait_until 3 is_gone t
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -Eq -- "$3" <<<"$out" && is_gone t; then
		pass "$1 is refused: $(grep -E -- "$3" <<<"$out" | head -1)"
	else
		[ $rc -eq 124 ] && out="restore hung, killed after 8 s; $out"
		fail "$1 is refused, nothing left" "exit $rc: $out; list: $(field t 5); run: $(ls "$RUN" 2>&1)"
		track t
		lodge destroy t >/dev/null 2>&1
	fi
}
refused "a file truncated to half" "$T/trunc.sav" 'error: .*truncated'
refused "a file with 16 bytes flipped in the middle" "$T/corrupt.sav" 'error: .*(checksum mismatch|corrupt)'
refused "a garbage file" "$T/garbage.sav" 'error: .*not a Lodge saved domain'
refused "an empty file" "$T/empty.sav" 'error: .*(empty|truncated before its header)'
refused "a bzip2 file truncated to half" "$T/trunc.bz" 'error: .*(bzip2 data is corrupt or truncated|truncated)'
refused "a bzip2 file of something else (1 MB)" "$T/other.bz" 'error: .*not a Lodge saved domain'
refused "a file saved by another Lodge version" "$T/version.sav" 'error: .*saved by Lodge 9\.[0-9.]*; this is Lodge'

# ---- 6. lodge save killed mid-save ----------------------------------------------------
# What a SIGKILLed saver must leave: its compressor ends with it (it dies
# with its parent), lodge-hyp ends the save at the broken stream, there and
# then, mid-memory, and gives the domain back; not a save written to its
# end before the domain runs again.  Killed once the compressor has read
# 16 MiB of a stream of more than 128 MiB: mid-memory whatever the speed.
mkcfg big 256 'run="memfill 128 3; counter 200"'
if lodge create big >/dev/null 2>&1 && wait_until 40 shows big '^counter 2$'; then
	track big
	hyplog=$RUN/big/lodge-hyp.log
	"$LODGE" --root "$ROOT" save -c big "$T/big.bz" >"$T/saver.out" 2>&1 &
	saver=$!
	state_is() { [ "$(field big 5)" = "$1" ]; }
	# mid_stream: the saver's compressor (in $zip) has read 16 MiB of the stream
	zip=
	mid_stream() {
		local n
		zip=$(pgrep -P "$saver" | head -1)
		n=$(awk '$1 == "rchar:" { print $2 }' "/proc/$zip/io" 2>/dev/null)
		[ -n "$zip" ] && [ "${n:-0}" -ge $((16 << 20)) ]
	}
	# ended PID START: that process is gone: its pid free, another's, or a zombie's
	ended() {
		local s
		s=$(proc_start "$1") || return 0
		[ "$s" != "$2" ] || grep -q ') Z ' "/proc/$1/stat" 2>/dev/null
	}
	if wait_until 30 state_is paused && wait_until 60 mid_stream && state_is paused; then
		zstart=$(proc_start "$zip")
		track_pid "$zip"
		kill -9 $saver
		t0=$(now_ms)
		wait $saver 2>/dev/null
		wait_until 30 state_is running
		took=$(( $(now_ms) - t0 ))
		if wait_until 10 ended "$zip" "$zstart"; then
			pass "a save killed with SIGKILL mid-save (its compressor had read 16 MiB): the compressor ends with it"
		else
			fail "a save killed mid-save: its compressor ends with it" "pid $zip still runs: $(tr '\0' ' ' <"/proc/$zip/cmdline" 2>/dev/null)"
		fi
		if state_is running && wait_for "$hyplog" 'save of domain big failed: cannot write guest memory' 10 && counting big; then
			pass "a save killed mid-save: lodge-hyp ends it at the broken stream, mid-memory ($(grep -o 'cannot write guest memory: .*' "$hyplog" | tail -1)), and the domain runs again and counts (after $took ms)"
		else
			fail "a save killed mid-save: the save ends at the broken stream, the domain runs again" "state $(field big 5) after $took ms; $COUNTED; lodge-hyp.log: $(grep -i save "$hyplog" | tail -2 | tr '\n' '|')"
		fi
		if ! ls -A "$T" | grep -qE '^big\.bz'; then
			pass "a save killed mid-save leaves no file"
		else
			fail "a save killed mid-save leaves no file" "$(ls -la "$T" | grep big)"
		fi
	else
		fail "a save killed mid-save" "the save was not under way (state $(field big 5), compressor '$zip' read $(awk '$1 == "rchar:" { print $2 }' "/proc/$zip/io" 2>/dev/null) bytes: $(cat "$T/saver.out"))"
	fi
	lodge destroy big >/dev/null 2>&1
else
	fail "a save killed mid-save" "the 256 MiB guest did not boot: $(conlog big | tail -2)"
fi

# ---- 7. A disk and a vif on a bridge in a network namespace ----------------------------
if need_root "save and restore with a disk and a vif"; then
	if ip netns add "lodge-save-$$" 2>/dev/null; then
		NS=lodge-save-$$
		in_ns() { ip netns exec "$NS" "$@"; }
		in_ns ip link set lo up
		if in_ns "$LODGE" bridge-create lbr0 >/dev/null 2>&1 && in_ns ip addr add 10.81.0.1/24 dev lbr0; then
			truncate -s 16M "$T/disk.img"
			mkcfg n 64 'ip=10.81.0.2/24 run="blk-pattern vda 2048 256 17; blk-flush vda; blk-sum vda 2048 256; counter 500"' \
				"disk = [ 'file:$T/disk.img,vda,w' ]" "vif = [ 'bridge=lbr0,vifname=vif-sv.0' ]"
			if in_ns timeout 30 "$LODGE" --root "$ROOT" create n >/dev/null 2>&1 && wait_until 30 shows n '^counter 1$' &&
			   in_ns ping -c 1 -W 5 10.81.0.2 >/dev/null 2>&1; then
				track n
				sum1=$(conlog n | grep -o 'blk-sum: fnv1a64w 0x[0-9a-f]*' | head -1 | awk '{ print $3 }')
				host=$(fnv1a64w "$T/disk.img" $((2048 * 512)) $((256 * 512)))
				pid_n=$(field n 9)
				out=$(in_ns timeout 30 "$LODGE" --root "$ROOT" save n "$T/n.sav" 2>&1); rc=$?
				logn=$(tail -3 "$RUN/n/lodge-hyp.log" 2>/dev/null | tr '\n' ' ')
				if [ $rc -eq 0 ] && ! grep -q 'warning' <<<"$out" && [ ! -e "$RUN/n" ] &&
				   ! in_ns ip link show vif-sv.0 >/dev/null 2>&1; then
					pass "a domain with a disk and a vif saves and goes cleanly, tap and runtime dir gone ($(ms "$out") ms)"
				else
					fail "a domain with a disk and a vif saves and goes cleanly" "exit $rc: $(tr '\n' ' ' <<<"$out"); runtime dir $(ls "$RUN/n" 2>/dev/null | tr '\n' ' '); its lodge-hyp.log: $logn"
				fi
				wait_until 3 sh -c "! kill -0 $pid_n 2>/dev/null"
				out=$(in_ns timeout 30 "$LODGE" --root "$ROOT" restore "$T/n.sav" 2>&1); rc=$?
				track n
				if [ $rc -eq 0 ] && [ "$(field n 5)" = running ] && wait_until 5 shows n '^counter [0-9]+$'; then
					pass "a domain with a disk and a vif restores running ($(ms "$out") ms)"
				else
					fail "a domain with a disk and a vif restores" "exit $rc: $out; state $(field n 5)"
				fi
				say n "blk-sum vda 2048 256"
				wait_until 10 shows n 'blk-sum: fnv1a64w'
				sum2=$(conlog n | grep -o 'blk-sum: fnv1a64w 0x[0-9a-f]*' | tail -1 | awk '{ print $3 }')
				if [ -n "$sum1" ] && [ "$sum1" = "$host" ] && [ "$sum2" = "$sum1" ]; then
					pass "the disk is back: the guest reads the 128 KiB it wrote before the save (fnv1a64w $sum2)"
				else
					fail "the disk is back" "before the save $sum1, on the host $host, after the restore '$sum2'"
				fi
				link=$(in_ns ip link show vif-sv.0 2>&1)
				if grep -q 'master lbr0' <<<"$link" && grep -q ',UP' <<<"$link"; then
					pass "the vif is back on the bridge (vif-sv.0 up, master lbr0)"
				else
					fail "the vif is back on the bridge" "$link"
				fi
				if in_ns ping -c 3 -i 0.3 -W 5 10.81.0.2 >"$T/ping.out" 2>&1; then
					pass "the restored guest answers ping ($(grep -o '[0-9]*% packet loss' "$T/ping.out"))"
				else
					fail "the restored guest answers ping" "$(tail -2 "$T/ping.out")"
				fi
				in_ns timeout 10 "$LODGE" --root "$ROOT" destroy n >/dev/null 2>&1
			else
				fail "save and restore with a disk and a vif" "the guest did not come up: $(conlog n | tail -3 | tr '\n' ' ')"
				track n
			fi
		else
			fail "save and restore with a disk and a vif" "could not make bridge lbr0"
		fi
	else
		skip "save and restore with a disk and a vif" "cannot create network namespaces"
	fi
fi
exit 0

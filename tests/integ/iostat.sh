#!/bin/bash
# I/O accounting as a user reads it: lodge block-list and network-list
# count exactly the bytes a Mini-OS guest moved through virtio-blk and
# virtio-net, and the dashboard's batch mode shows a disk rate while the
# guest writes.  In a network namespace this test makes and removes.
. "$(dirname "$0")/../lib.sh"

integ_begin "I/O counters" kvm root minios netns
R=$ROOT
mkdir -p "$R/etc/lodge/domains"
in_ns ip link set lo up
in_ns "$LODGE" bridge-create iobr0 >/dev/null && in_ns ip addr add 10.78.0.1/24 dev iobr0
truncate -s 128M "$T/disk.img"
cat >"$R/etc/lodge/domains/io.cfg" <<CFG
name = "io"
memory = 64
kernel = "$MINIOS"
extra = "ip=10.78.0.2/24"
disk = [ "$T/disk.img,raw,vda,rw" ]
vif = [ "bridge=iobr0,mac=02:4c:00:00:10:01" ]
CFG
if ! lodge create io >"$T/create.out" 2>&1; then
	fail "I/O counters" "create: $(tail -1 "$T/create.out")"
	exit 0
fi
# say COMMANDS: type on the guest's console and wait for the prompt's echo
say() { ( echo "$1"; sleep "${2:-1}" ) | lodge console io >>"$T/console.out" 2>&1; }
# col CMD ROW_MATCH N: field N of the row of `lodge CMD io` whose first field is ROW_MATCH
col() { lodge "$1" io | awk -v m="$2" -v n="$3" '$1 == m { print $n }'; }

if ! wait_for "$R/run/lodge/io/console.log" 'minios> ' 30; then
	fail "I/O counters" "the guest did not boot: $(tail -3 "$R/run/lodge/io/console.log" | tr '\n' '|')"
	exit 0
fi
rd0=$(col block-list vda 5) wr0=$(col block-list vda 7)
say "blk-pattern vda 4096 64 5; blk-flush vda"
say "blk-sum vda 0 128"
# The counters move when the guest's requests complete: wait for them.
blk_counted() {
	rd1=$(col block-list vda 5) wr1=$(col block-list vda 7)
	[ $((wr1 - wr0)) -ge $((64 * 512)) ] && [ $((rd1 - rd0)) -ge $((128 * 512)) ]
}
wait_until 20 blk_counted
if [ -n "$wr0" ] && [ $((wr1 - wr0)) -eq $((64 * 512)) ]; then
	pass "block-list counts the bytes the guest wrote (64 sectors: 32768)"
else
	fail "block-list write bytes" "before $wr0, after $wr1: $(lodge block-list io | tr '\n' '|')"
fi
if [ -n "$rd0" ] && [ $((rd1 - rd0)) -eq $((128 * 512)) ]; then
	pass "block-list counts the bytes the guest read (128 sectors: 65536)"
else
	fail "block-list read bytes" "before $rd0, after $rd1"
fi
if lodge block-list io | awk '$1 == "vda" && $2 == "rw" && $3 == "file" && $NF == "'"$T/disk.img"'" { ok = 1 } END { exit !ok }'; then
	pass "block-list shows the disk's mode, kind and backing file"
else
	fail "block-list columns" "$(lodge block-list io | tr '\n' '|')"
fi

tx0=$(col network-list 0 7) rx0=$(col network-list 0 5)
in_ns ping -c 5 -i 0.2 -W 2 10.78.0.2 >/dev/null 2>&1
net_counted() {
	tx1=$(col network-list 0 7) rx1=$(col network-list 0 5)
	[ $((rx1 - rx0)) -ge 5 ] && [ $((tx1 - tx0)) -ge 5 ]
}
wait_until 10 net_counted
if [ -n "$rx0" ] && [ $((rx1 - rx0)) -ge 5 ] && [ $((tx1 - tx0)) -ge 5 ]; then
	pass "network-list counts 5 pings received and answered by the guest"
else
	fail "network-list packets" "rx $rx0 -> $rx1, tx $tx0 -> $tx1"
fi
if lodge network-list io | awk '$1 == "0" && $2 == "vif-io.0" && $3 == "02:4c:00:00:10:01" && $4 == "iobr0" { ok = 1 } END { exit !ok }'; then
	pass "network-list shows the vif, its MAC and bridge"
else
	fail "network-list columns" "$(lodge network-list io | tr '\n' '|')"
fi

# The dashboard's disk rate while the guest writes.  The rate is taken
# over the last half second, and the guest starts writing when it gets to
# it (seconds later on a loaded host): sample until one shows it.  The
# guest writes 8000 MiB (over its 128 MiB disk again and again) so that it
# still writes then however fast the host is; destroying it ends that.
bench=$(for i in $(seq 8); do printf 'blk-bench vda write 1000 64 4;'; done)
( echo "$bench"; sleep 0.3 ) | lodge console io >/dev/null 2>&1 &
console_pid=$!
wr=0
rate_shown() {   # DSKWR of io in a two-sample batch run (each try takes over 0.5 s)
	lodge top -b -n 2 -d 0.5 >"$T/top.out" 2>&1
	wr=$(awk '$2 == "io" { v = $12 } END { print v + 0 }' "$T/top.out")
	[ "$wr" -gt 0 ]
}
if wait_until 30 rate_shown; then
	pass "the dashboard shows the disk write rate ($((wr / 1024)) KiB/s)"
else
	fail "dashboard disk write rate" "$(grep -E 'DSKWR| io ' "$T/top.out" | tail -2 | tr '\n' '|')"
fi
if lodge destroy io >/dev/null && ! lodge block-list io 2>"$T/err" && grep -q "no domain named io is running" "$T/err"; then
	pass "block-list of a domain that is not running: one clear error"
else
	fail "block-list of a stopped domain" "$(cat "$T/err")"
fi
wait "$console_pid"        # its domain is gone: the console client has ended
in_ns "$LODGE" bridge-delete iobr0 >/dev/null 2>&1

#!/bin/bash
# Hot-plug of disks into a running Mini-OS, which serves the ACPI PCI
# hot-plug events as a guest does (src/minios/hotplug.c): lodge
# block-attach gives it a disk it lists and reads (the host's pattern);
# lodge block-detach asks for it back and, once the guest has ejected it,
# the lock is free and another domain opens the disk writable; a guest
# that ignores ejects makes the detach time out (the disk stays) until
# --force; every refusal is one line and changes nothing; 50 attaches and
# detaches with the guest reading in between leave no descriptor or
# thread behind in lodge-hyp.  Linux's own acpiphp sees the disk come and
# go in tests/linux/devices.sh.
. "$(dirname "$0")/../lib.sh"

integ_begin "hot-plug" kvm minios root

# field NAME COLUMN: a column of lodge list -o tsv (9: pid)
conlog() { lodge console --log "$1" 2>/dev/null | tr -d '\r'; }
shows() { conlog "$1" | grep -Eq -- "$2"; }
count() { conlog "$1" | grep -Ec -- "$2"; }
mkcfg() {  # NAME DISK...
	local name=$1
	shift
	{
		printf 'name = "%s"\nmemory = 64\nvcpus = 1\nkernel = "%s"\ndisk = [ ' "$name" "$MINIOS"
		local d sep=
		for d; do printf '%s"%s"' "$sep" "$d"; sep=', '; done
		printf ' ]\n'
	} >"$DOMS/$name.cfg"
}
# The domain's own process: the sandboxed child of its supervisor, or the
# one lodge list names if it has none.
domain_pid() { local p c; p=$(field "$1" 9); c=$(pgrep -P "$p" | head -1); echo "${c:-$p}"; }
# A line typed on h's console, through the one console kept open.
type_line() { echo "$1" >&7; }
# The n-th "blk-sum" answer on h's console; how many there are.
nth_sum() { conlog h | grep -o 'blk-sum: fnv1a64w 0x[0-9a-f]*' | sed -n "${1}p" | awk '{ print $3 }'; }
nsums() { conlog h | grep -c 'blk-sum: fnv1a64w'; }
# at_least N CMD...: CMD prints a number >= N
at_least() { local n=$1; shift; [ "$("$@")" -ge "$n" ]; }
added() { count h 'blk: vdb added'; }
# The event log: logged ERE (a line of it); by_root ARGS: lodge ARGS, its
# pid (bash execs it after saying its own pid) in $T/pid, as WHO says it.
EVLOG=$ROOT/var/log/lodge/lodge.log
logged() { grep -Eq -- "$1" "$EVLOG" 2>/dev/null; }
by_root() {
	timeout 60 bash -c 'echo $$ >&3; exec "$@"' - "$LODGE" --root "$ROOT" "$@" 3>"$T/pid"
}

# The disk that comes and goes lives under storage_dirs: a restore or an
# incoming migration lends a domain only disks its config names or those.
STORE=$T/store
mkdir -p "$STORE"
truncate -s 8M "$T/boot.img"
python3 - "$STORE/data.img" <<'PY'
import sys
with open(sys.argv[1], 'wb') as f:
    f.write(bytes((i * 13 + 5) % 251 for i in range(4 << 20)))
PY
want=$(fnv1a64w "$STORE/data.img" 0 $((64 * 512)))

# Members of this group may drive domains (lodge.conf control_group): the
# caller-access refusal below runs as one of them.
CONTROL=54331
printf 'control_group = "%s"\nstorage_dirs = [ "%s" ]\n' $CONTROL "$STORE" >"$ROOT/etc/lodge/lodge.conf"
chmod 755 "$T"
chmod -R a+rX "$ROOT" "$(dirname "$LODGE")" 2>/dev/null
mkcfg h "$T/boot.img,raw,vda,rw"
if ! lodge create h >/dev/null 2>&1 || ! wait_until 30 shows h '^hotplug: PCI hot-plug on GPE 1'; then
	fail "hot-plug" "the guest did not boot: $(conlog h | tail -3)"
	exit 0
fi
pid=$(field h 9)
track_pid "$pid" $(pgrep -P "$pid")
mkfifo "$T/cons.in"
"$LODGE" --root "$ROOT" console h <"$T/cons.in" >/dev/null 2>&1 &
track_pid $!
exec 7>"$T/cons.in"
at_exit 'exec 7>&-'
type_line "blk"
wait_until 10 shows h 'vda: 16384 sectors' || fail "hot-plug" "the console does not answer"

# ---- 1. attach: the guest lists the disk and reads the host's pattern --------
out=$(by_root block-attach h "$STORE/data.img,raw,vdb,rw" 2>&1); rc=$?
P_ATTACH=$(cat "$T/pid")
if [ $rc -eq 0 ] && wait_until 10 shows h 'blk: vdb added \(slot [0-9]+\): 8192 sectors, rw'; then
	pass "block-attach: the guest probes the new disk ($(conlog h | grep -o 'vdb added (slot [0-9]*)'))"
else
	fail "block-attach" "rc $rc: $out; console: $(conlog h | tail -3)"
fi
type_line "blk"
wait_until 10 shows h 'vdb: 8192 sectors \(4 MiB\), rw, id vdb' &&
	pass "the guest's disk list shows vdb" || fail "guest disk list" "$(conlog h | tail -3)"
type_line "blk-sum vdb 0 64"
wait_until 15 at_least 1 nsums
got=$(nth_sum 1)
[ "$got" = "$want" ] && pass "the guest reads the pattern the host wrote ($got)" ||
	fail "guest reads the host's pattern" "guest $got, host $want"
lodge block-list h 2>&1 | grep -Eq "^vdb +rw +file .*$STORE/data.img" &&
	pass "lodge block-list shows the attached disk" || fail "block-list after attach" "$(lodge block-list h 2>&1)"

if wait_until 10 logged " h block-attach uid=0,pid=$P_ATTACH disk $STORE/data.img in PCI slot [0-9]+$"; then
	pass "the event log has the block-attach and who asked ($(grep block-attach "$EVLOG" | tail -1 | cut -d' ' -f3-))"
else
	fail "event log: block-attach" "$(tail -3 "$EVLOG" 2>&1)"
fi

# ---- 2. refusals: one line, no change -----------------------------------------
listed() { lodge block-list h 2>/dev/null | tail -n +2 | awk '{ print $1 }' | tr '\n' ' '; }
before=$(listed)
refused() {  # LABEL EXPECTED-RE CMD...
	local label=$1 re=$2 o r
	shift 2
	o=$("$@" 2>&1); r=$?
	if [ $r -ne 0 ] && [ "$(wc -l <<<"$o")" -eq 1 ] && grep -Eq -- "$re" <<<"$o" && [ "$(listed)" = "$before" ]; then
		pass "refused: $label ($o)"
	else
		fail "refused: $label" "rc $r: $o (disks now: $(listed))"
	fi
}
truncate -s 1M "$T/other.img"
refused "a vdev already taken" 'has a disk vdb already' lodge block-attach h "$T/other.img,raw,vdb,rw"
refused "a disk this domain holds" 'used by domain h|in use' lodge block-attach h "$STORE/data.img,raw,vdc,rw"
mkcfg g "$T/other.img,raw,vda,rw"
if lodge create g >/dev/null 2>&1; then
	# shellcheck disable=SC2046 # pids: one word each
	track_pid $(field g 9) $(pgrep -P "$(field g 9)")
	refused "a disk another domain holds" 'used by domain g|in use by another domain' \
		lodge block-attach h "$T/other.img,raw,vdc,rw"
	lodge destroy g >/dev/null 2>&1
else
	fail "second domain" "cannot start g"
fi
refused "a detach of a disk that is not there" 'has no disk vdz' lodge block-detach h vdz
refused "a file the spec cannot name" 'No such file' lodge block-attach h "$T/nonexistent.img,raw,vdc,rw"
# A member of the control group who may not write the disk (root's, 0644):
# the kernel refuses the open, lodge-hyp never sees the disk.
truncate -s 1M "$T/secret.img"
chmod 0644 "$T/secret.img"
if command -v setpriv >/dev/null; then
	o=$(timeout 30 setpriv --reuid=65534 --regid=65534 --groups=$CONTROL "$LODGE" --root "$ROOT" \
		block-attach h "$T/secret.img,raw,vdc,rw" 2>&1); r=$?
	[ $r -ne 0 ] && grep -q 'cannot open disk .*Permission denied' <<<"$o" && [ "$(listed)" = "$before" ] &&
		pass "refused: a caller who may not write the disk ($o)" ||
		fail "refused: a caller who may not write the disk" "rc $r: $o"
	# One who may write it, but not the domain's runtime config (root's):
	# refused before anything changes, so the config never lags the guest.
	truncate -s 1M "$T/open.img"
	chmod 0666 "$T/open.img"
	o=$(timeout 30 setpriv --reuid=65534 --regid=65534 --groups=$CONTROL "$LODGE" --root "$ROOT" \
		block-attach h "$T/open.img,raw,vdc,rw" 2>&1); r=$?
	[ $r -ne 0 ] && grep -q 'not yours to rewrite' <<<"$o" && [ "$(listed)" = "$before" ] &&
		pass "refused: a caller who may not rewrite the runtime config ($o)" ||
		fail "refused: a caller who may not rewrite the runtime config" "rc $r: $o"
else
	skip "refused: a caller who may not write the disk" "setpriv (util-linux) not installed"
fi
# Every slot taken: the 31st device has none (boot disk, balloon, vdb: 28 more fit).
n=0
for i in $(seq 1 28); do
	truncate -s 1M "$T/fill$i.img"
	lodge block-attach h "$T/fill$i.img,raw,xvd$(printf '%b' "\\x$(printf %x $((96 + i)))"),rw" >/dev/null 2>&1 && n=$((n + 1))
done
before=$(listed)
truncate -s 1M "$T/fill29.img"
if [ $n -ge 13 ]; then
	# DOMAIN_DISKS_MAX may be reached before the slots run out: either refusal is one line.
	refused "no free slot (or no free disk)" 'no free PCI slot|disks already|the most it may have' \
		lodge block-attach h "$T/fill29.img,raw,hdz,rw"
else
	fail "filling the slots" "only $n more disks attached"
fi
for v in $(listed); do
	case $v in vda|vdb) ;; *) lodge block-detach h "$v" >/dev/null 2>&1 ;; esac
done
[ "$(listed)" = "vda vdb " ] && pass "the filler disks detached again" || fail "filler detach" "$(listed)"

# ---- 3. detach: the guest ejects, the lock is free -----------------------------
out=$(by_root block-detach h vdb 2>&1); rc=$?
P_DETACH=$(cat "$T/pid")
if [ $rc -eq 0 ] && shows h 'hotplug: slot [0-9]+ ejected' && ! lodge block-list h 2>/dev/null | grep -q '^vdb'; then
	pass "block-detach: the guest ejected vdb ($out)"
else
	fail "block-detach" "rc $rc: $out; console: $(conlog h | tail -3)"
fi
wait_until 10 logged " h block-detach uid=0,pid=$P_DETACH disk $STORE/data.img in PCI slot [0-9]+, ejected by the guest$" &&
	pass "the event log has the block-detach, who asked and that the guest ejected it" ||
	fail "event log: block-detach" "$(tail -3 "$EVLOG" 2>&1)"
flock -n -x "$STORE/data.img" true && pass "the disk's lock is free after the detach" ||
	fail "lock after detach" "still held"
mkcfg w "$STORE/data.img,raw,vda,rw"
if lodge create w >/dev/null 2>&1; then
	# shellcheck disable=SC2046 # pids: one word each
	track_pid $(field w 9) $(pgrep -P "$(field w 9)")
	pass "another domain opens the detached disk writable"
	lodge destroy w >/dev/null 2>&1
else
	fail "another domain opens the detached disk" "$(lodge create w 2>&1)"
fi

# ---- 4. a guest that ignores ejects: timeout, then --force ---------------------
lodge block-attach h "$STORE/data.img,raw,vdb,rw" >/dev/null 2>&1
wait_until 10 at_least 2 added
type_line "hotplug-ignore on"
wait_until 10 shows h 'hotplug: eject requests are ignored'
t0=$(date +%s%N)
out=$(by_root block-detach h vdb --timeout 2 2>&1); rc=$?
t1=$(date +%s%N)
P_TIMEOUT=$(cat "$T/pid")
if [ $rc -ne 0 ] && grep -q 'did not eject' <<<"$out" && [ $(((t1 - t0) / 1000000)) -ge 2000 ] &&
	lodge block-list h 2>/dev/null | grep -q '^vdb' && shows h 'eject request ignored'; then
	pass "a guest that ignores the eject: the detach times out after 2 s, the disk stays ($out)"
else
	fail "detach timeout" "rc $rc after $(((t1 - t0) / 1000000)) ms: $out"
fi
flock -n -x "$STORE/data.img" true && fail "lock after a timed-out detach" "free, but the disk stays" ||
	pass "the timed-out detach leaves the disk locked"
out=$(by_root block-detach h vdb --force 2>&1); rc=$?
P_FORCE=$(cat "$T/pid")
if [ $rc -eq 0 ] && grep -q 'warning: --force' <<<"$out" && ! lodge block-list h 2>/dev/null | grep -q '^vdb' &&
	flock -n -x "$STORE/data.img" true; then
	pass "--force removes the disk with a warning, the lock is free"
else
	fail "detach --force" "rc $rc: $out"
fi
if wait_until 10 logged " h block-detach uid=0,pid=$P_FORCE disk $STORE/data.img in PCI slot [0-9]+, forced without the guest's eject$" &&
	logged " h detach-timed-out uid=0,pid=$P_TIMEOUT disk $STORE/data.img in PCI slot [0-9]+: the guest did not eject it in time, it stays$"; then
	pass "the event log has the timed-out detach and the forced one, each with who asked"
else
	fail "event log: timed-out and forced detach" "$(tail -4 "$EVLOG" 2>&1)"
fi
type_line "hotplug-ignore off"
wait_until 10 shows h 'hotplug: eject requests are served'

# ---- 6. 50 attaches and detaches, the guest reading in between: no leaks ---------
dp=$(domain_pid h)
fds0=$(ls "/proc/$dp/fd" | wc -l); tasks0=$(ls "/proc/$dp/task" | wc -l)
sums=$(nsums)
base=$(added)
ok=0
for i in $(seq 1 50); do
	lodge block-attach h "$STORE/data.img,raw,vdb,rw" >/dev/null 2>&1 || break
	wait_until 10 at_least $((base + i)) added || break
	type_line "blk-sum vdb 0 64"
	wait_until 15 at_least $((sums + i)) nsums || break
	[ "$(nth_sum $((sums + i)))" = "$want" ] || break
	lodge block-detach h vdb >/dev/null 2>&1 || break
	ok=$i
done
fds1=$(ls "/proc/$dp/fd" | wc -l); tasks1=$(ls "/proc/$dp/task" | wc -l)
[ "$ok" -eq 50 ] && pass "50 attaches and detaches, the guest reading the pattern each time" ||
	fail "50 attach/detach" "stopped at $((ok + 1)): $(conlog h | tail -3)"
[ "$fds1" -eq "$fds0" ] && pass "no descriptor leaked in lodge-hyp ($fds0 before, $fds1 after)" ||
	fail "descriptors after 50 rounds" "$fds0 before, $fds1 after: $(ls -l "/proc/$dp/fd" | tail -5)"
[ "$tasks1" -eq "$tasks0" ] && pass "no thread leaked in lodge-hyp ($tasks0 before, $tasks1 after)" ||
	fail "threads after 50 rounds" "$tasks0 before, $tasks1 after"
flock -n -x "$STORE/data.img" true && pass "the disk is free after the 50th detach" || fail "lock after 50" "held"

# ---- 7. save and restore, migrate: the hot-plugged disk comes along, same slot -------
# console_on NAME: (re)attach the one console client to h's new process
console_on() {
	exec 7>&-
	"$LODGE" --root "$1" console h <"$T/cons.in" >/dev/null 2>&1 &
	track_pid $!
	exec 7>"$T/cons.in"
}
# guest_reads ROOT LABEL: h under ROOT reads the host's pattern from vdb
guest_reads() {
	local n0
	n0=$(lodge_at "$1" "" console --log h 2>/dev/null | tr -d '\r' | grep -c 'blk-sum: fnv1a64w')
	type_line "blk-sum $GNAME 0 64"
	wait_until 15 at_least $((n0 + 1)) sums_at "$1" &&
		[ "$(lodge_at "$1" "" console --log h 2>/dev/null | tr -d '\r' | grep -o 'blk-sum: fnv1a64w 0x[0-9a-f]*' |
			sed -n "$((n0 + 1))p" | awk '{ print $3 }')" = "$want" ]
}
sums_at() { lodge_at "$1" "" console --log h 2>/dev/null | tr -d '\r' | grep -c 'blk-sum: fnv1a64w'; }
slots_of() { lodge_at "$1" "" block-list h 2>/dev/null | tail -n +2 | awk '{ print $1 }' | tr '\n' ' '; }
n0=$(count h 'blk: vd. added')
added() { count h 'blk: vd. added'; }
# Detach vda first, so the slots no longer follow the config's order.
lodge block-detach h vda >/dev/null 2>&1 && lodge block-attach h "$STORE/data.img,raw,vdb,rw" >/dev/null 2>&1
wait_until 10 at_least $((n0 + 1)) added
# The guest names it as it probes it: vda is free again, so vda.
GNAME=$(conlog h | grep -o 'blk: vd. added' | tail -1 | awk '{ print $2 }')
cfg_before=$(grep -o 'slot=[0-9]*' "$RUN/h/config" | tr '\n' ' ')
if grep -q "vdev=vdb,access=w,slot=" "$RUN/h/config"; then
	pass "the runtime config keeps the hot-plugged disk and its slot ($cfg_before)"
else
	fail "runtime config after attach" "$(cat "$RUN/h/config")"
fi
out=$(lodge save h "$T/h.sav" 2>&1); rc=$?
if [ $rc -eq 0 ] && out2=$(lodge restore "$T/h.sav" 2>&1); then
	# shellcheck disable=SC2046 # pids: one word each
	track_pid $(field h 9) $(pgrep -P "$(field h 9)")
	console_on "$ROOT"
	if [ "$(slots_of "$ROOT")" = "vdb " ] && guest_reads "$ROOT" &&
		[ "$(grep -o 'slot=[0-9]*' "$RUN/h/config" | tr '\n' ' ')" = "$cfg_before" ]; then
		pass "save and restore: the hot-plugged disk is there, in the same slot, and the guest reads it"
	else
		fail "restore with a hot-plugged disk" "disks $(slots_of "$ROOT"); $(conlog h | tail -3)"
	fi
else
	fail "save and restore with a hot-plugged disk" "save rc $rc: $out; restore: $out2"
fi
# Live migration to another root on this host, through a socket.
RB=$T/rootb
mkdir -p "$RB/etc/lodge/domains"
printf 'storage_dirs = [ "%s" ]\nkernel_dirs = [ "%s" ]\n' "$STORE" "$(dirname "$MINIOS")" >"$RB/etc/lodge/lodge.conf"
integ_root "$RB"
lodge_at "$RB" "" migrate-receive --once --listen "$T/mig.sock" >"$T/recv.out" 2>&1 &
track_pid $!
wait_until 10 test -S "$T/mig.sock"
out=$(LODGE_TIMEOUT=120 lodge migrate h "$T/mig.sock" 2>&1); rc=$?
if [ $rc -eq 0 ] && wait_until 20 test -n "$(lodge_at "$RB" "" list -o tsv 2>/dev/null | awk -F'\t' '$1 == "h"')"; then
	p=$(lodge_at "$RB" "" list -o tsv 2>/dev/null | awk -F'\t' '$1 == "h" { print $9 }')
	track_pid "$p" $(pgrep -P "$p")
	console_on "$RB"
	if [ "$(slots_of "$RB")" = "vdb " ] && guest_reads "$RB"; then
		pass "migrate: the hot-plugged disk is there on the other side and the guest reads it"
	else
		fail "migrate with a hot-plugged disk" "disks $(slots_of "$RB")"
	fi
	lodge_at "$RB" "" destroy h >/dev/null 2>&1
else
	fail "migrate with a hot-plugged disk" "rc $rc: $out; $(cat "$T/recv.out")"
fi

lodge destroy h >/dev/null 2>&1   # gone already if it migrated

# ---- 8. Linux's acpiphp: tests/linux/devices.sh (make check-linux) ---------------
# The Lodge test kernel sees a block-attach'ed disk appear and ejects it on
# block-detach, on PVM hosts too: the kernel alone shows it.
exit 0

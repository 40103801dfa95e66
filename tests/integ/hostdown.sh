#!/bin/bash
# The host's shutdown and boot, as lodge-domains.service does them: its
# ExecStop and ExecStart, read from the shipped unit file and run on this
# test's root.  Two Mini-OS domains with a disk and a vif on a bridge are
# saved to ROOT/var/lib/lodge/save and gone; at "boot" they come back with
# their memory, counters, disks and vifs, the save files are removed, and
# an autostart domain starts after them.  A save that fails for one domain
# still saves the others, shuts that one down and exits non-zero.  With
# on_host_shutdown = "shutdown" the guests power off through their own
# power-button handler, and one that ignores the button is destroyed
# after shutdown_timeout.
. "$(dirname "$0")/../lib.sh"

integ_begin "host shutdown and boot" kvm root minios netns
UNIT=$TOP/share/systemd/lodge-domains.service
SAVE=$ROOT/var/lib/lodge/save
BR=lbr0

# The unit's command for KEY (ExecStart, ExecStop) as words: its program
# must be lodge; it runs as this test's lodge, on the test's root.
unit_cmd() {
	local line prog
	line=$(sed -n "s/^$1=//p" "$UNIT")
	read -r prog UNIT_ARGS <<<"$line"
	[ "$(basename "$prog")" = lodge ] && [ -n "$UNIT_ARGS" ] && [ "$(grep -c "^$1=" "$UNIT")" = 1 ]
}
# run_unit KEY: run it (in the test's namespace, where the bridge is), its
# stdout in $T/out, stderr in $T/err, exit status in RC, seconds in SECS.
run_unit() {
	local t0
	t0=$(date +%s%N)
	unit_cmd "$1" || { RC=99; echo "no single lodge $1= in $UNIT" >"$T/err"; return; }
	# shellcheck disable=SC2086
	in_ns timeout 300 "$LODGE" --root "$ROOT" $UNIT_ARGS >"$T/out" 2>"$T/err"
	RC=$?
	# lodge's messages end in CR LF today (for a terminal in raw mode).
	sed -i 's/\r$//' "$T/err"
	SECS=$((($(date +%s%N) - t0) / 1000000000))
}
outputs() { tr '\n' '|' <"$T/out"; echo -n ' stderr: '; tr '\n' '|' <"$T/err"; }
# Its error lines: stderr less lodge-hyp's warnings (a namespace of ip
# netns exec has no cgroup CPU controller mounted: no weight or cap).
errors() { grep -v '^lodge-hyp: warning: domain [a-z]* runs without weight or cap' "$T/err"; }

if unit_cmd ExecStart && [ "$UNIT_ARGS" = host-start ] && unit_cmd ExecStop && [ "$UNIT_ARGS" = host-stop ] &&
   ! grep -q '^KillMode=none' "$UNIT" && grep -q '^Type=oneshot' "$UNIT" && grep -q '^RemainAfterExit=yes' "$UNIT"; then
	pass "the unit: oneshot, RemainAfterExit, ExecStart lodge host-start, ExecStop lodge host-stop, no KillMode=none"
else
	fail "the unit's commands" "$(grep -E '^(Exec|Type|Remain|Kill)' "$UNIT" | tr '\n' '|')"
	exit 0
fi

running() { [ "$(field "$1" 5)" = running ]; }
conlog() { lodge console --log "$1" 2>/dev/null | tr -d '\r'; }
shows() { conlog "$1" | grep -Eq -- "$2"; }
say() { (sleep 0.3; echo "$2"; sleep 0.5) | in_ns timeout 5 "$LODGE" --root "$ROOT" console "$1" >/dev/null 2>&1; }
last_counter() { conlog "$1" | grep -Eo '^counter [0-9]+$' | awk '{ print $2 }' | tail -1; }
first_counter() { conlog "$1" | grep -Eo '^counter [0-9]+$' | awk '{ print $2 }' | head -1; }
blksum() { conlog "$1" | grep -o 'blk-sum: fnv1a64w 0x[0-9a-f]*' | tail -1 | awk '{ print $3 }'; }
none_running() { [ -z "$(lodge list -o tsv 2>/dev/null | awk -F'\t' '$1 != "Domain-0"')" ]; }
# mkdom NAME SEED [more lines]: 32 MiB, a disk and a vif hd-NAME.0 on the bridge
mkdom() {
	local name=$1 seed=$2
	shift 2
	truncate -s 8M "$T/$name.img"
	{
		printf 'name = "%s"\nmemory = 32\nkernel = "%s"\n' "$name" "$MINIOS"
		printf "extra = 'run=\"memfill 4 %s; blk-pattern vda 2048 64 %s; blk-flush vda; blk-sum vda 2048 64; counter 300\"'\n" "$seed" "$seed"
		printf "disk = [ 'file:%s,vda,w' ]\nvif = [ 'bridge=%s,vifname=hd-%s.0' ]\n" "$T/$name.img" "$BR" "$name"
		printf '%s\n' "$@"
	} >"$DOMS/$name.cfg"
}
boot() { lodge create "$1" >/dev/null && wait_until 30 shows "$1" '^counter 2$'; }

if ! in_ns "$LODGE" bridge-create "$BR" >/dev/null; then
	fail "host shutdown and boot" "cannot make bridge $BR in $NS"
	exit 0
fi
mkdir -p "$ROOT/etc/lodge"
printf 'on_host_shutdown = "save"\nshutdown_timeout = 60\n' >"$ROOT/etc/lodge/lodge.conf"
mkdom a 11
mkdom b 22
mkdom c 33 'autostart = true'
if boot a && boot b; then
	pass "two domains with a disk and a vif on $BR run"
else
	fail "two domains boot" "$(conlog a | tail -2 | tr '\n' ' ') / $(conlog b | tail -2 | tr '\n' ' ')"
	exit 0
fi
sum_a=$(blksum a) sum_b=$(blksum b)

# ---- 1. Host shutdown: both saved, gone ---------------------------------------------
run_unit ExecStop
if [ $RC -eq 0 ] && grep -Eq "^saved domain a to $SAVE/a.save \([0-9.]+ MiB, [0-9.]+ s\)$" "$T/out" &&
   grep -Eq "^saved domain b to $SAVE/b.save \([0-9.]+ MiB, [0-9.]+ s\)$" "$T/out" && [ "$(wc -l <"$T/out")" = 2 ] &&
   [ -z "$(errors)" ]; then
	pass "ExecStop saves both, one line each ($(tr '\n' ';' <"$T/out"))"
else
	fail "ExecStop saves both" "exit $RC: $(outputs)"
fi
if [ -s "$SAVE/a.save" ] && [ -s "$SAVE/b.save" ] && none_running && [ -z "$(ls "$RUN" 2>/dev/null)" ] &&
   ! in_ns ip link show hd-a.0 >/dev/null 2>&1 && [ "$(stat -c %a "$SAVE")" = 700 ]; then
	pass "the files are in ROOT/var/lib/lodge/save (mode 700), the domains and their taps gone"
else
	fail "saved and gone" "$(ls -la "$SAVE" 2>&1 | tr '\n' ' '); list: $(lodge list -o tsv 2>&1 | tr '\n' ' ')"
fi

# ---- 2. Host boot: restored, then autostart ------------------------------------------
run_unit ExecStart
if [ $RC -eq 0 ] && grep -Eq "^restored domain a from $SAVE/a.save \([0-9.]+ s\)$" "$T/out" &&
   grep -Eq "^restored domain b from $SAVE/b.save \([0-9.]+ s\)$" "$T/out" &&
   [ "$(tail -1 "$T/out")" = "started c" ] && [ "$(wc -l <"$T/out")" = 3 ] && [ -z "$(errors)" ]; then
	pass "ExecStart restores both, then starts the autostart one ($(tr '\n' ';' <"$T/out"))"
else
	fail "ExecStart restores and autostarts" "exit $RC: $(outputs)"
fi
if running a && running b && running c && [ ! -e "$SAVE/a.save" ] && [ ! -e "$SAVE/b.save" ]; then
	pass "a, b and c run; the save files are removed"
else
	fail "restored and running" "list: $(lodge list -o tsv 2>&1 | tr '\n' ' '); save dir: $(ls "$SAVE" 2>&1)"
fi
wait_until 10 shows a '^counter [0-9]+$'
wait_until 10 shows b '^counter [0-9]+$'
first_a=$(first_counter a) first_b=$(first_counter b)
say a memcheck
say b memcheck
if wait_until 10 shows a '^memcheck: ok 4 MiB' && wait_until 10 shows b '^memcheck: ok 4 MiB' &&
   [ "${first_a:-0}" -gt 2 ] && [ "${first_b:-0}" -gt 2 ]; then
	pass "the consoles answer: memcheck ok on both, counters go on (a from $first_a, b from $first_b)"
else
	fail "state survived" "counters a ${first_a:-none} b ${first_b:-none}; $(conlog a | tail -2 | tr '\n' ' ') / $(conlog b | tail -2 | tr '\n' ' ')"
fi
say a "blk-sum vda 2048 64"
say b "blk-sum vda 2048 64"
wait_until 10 shows a 'blk-sum: fnv1a64w'
wait_until 10 shows b 'blk-sum: fnv1a64w'
bl=$(lodge block-list a 2>&1)
if [ -n "$sum_a" ] && [ "$(blksum a)" = "$sum_a" ] && [ "$(blksum b)" = "$sum_b" ] &&
   grep -Eq "^vda +rw .* $T/a.img$" <<<"$bl"; then
	pass "the disks are back: block-list a shows vda on a.img, both guests read what they wrote before the save"
else
	fail "disks back" "sums a $sum_a -> $(blksum a), b $sum_b -> $(blksum b); block-list: $(tr '\n' '|' <<<"$bl")"
fi
nl=$(lodge network-list b 2>&1)
link=$(in_ns ip link show hd-b.0 2>&1)
if grep -Eq "^0 +hd-b.0 .* $BR " <<<"$nl" && grep -q "master $BR" <<<"$link" && grep -q ',UP' <<<"$link" &&
   in_ns ip link show hd-a.0 2>&1 | grep -q "master $BR"; then
	pass "the vifs are back: network-list b shows hd-b.0 on $BR, both taps up on the bridge"
else
	fail "vifs back" "network-list: $(tr '\n' '|' <<<"$nl"); link: $link"
fi

# ---- 3. A save that fails for one domain, one that would not restore -------------------
wait_until 30 shows c '^counter 2$'
mkdir -p "$SAVE/b.save/x"                     # b's file cannot take its name
# x, created from a file of its own, has a disk outside storage_dirs: its
# save is signed with this host's key, which host-start trusts to name
# what it named (issue 31, defect 8): it is saved and comes back.
truncate -s 1M "$T/x.img"
printf 'name = "x"\nmemory = 32\nkernel = "%s"\ndisk = [ "file:%s,vda,w" ]\n' "$MINIOS" "$T/x.img" >"$T/x.cfg"
lodge create "$T/x.cfg" >/dev/null && wait_until 30 shows x 'minios> '
run_unit ExecStop
if [ $RC -ne 0 ] && grep -q "^saved domain a to $SAVE/a.save " "$T/out" && grep -q "^saved domain c to $SAVE/c.save " "$T/out" &&
   grep -Eq "^lodge: error: shut down domain b \([0-9.]+ s\): .*cannot name $SAVE/b.save.*; shut down instead$" "$T/err" &&
   [ "$(errors | grep -c 'domain b')" = 1 ] && none_running; then
	pass "one save fails: the others are saved, that one shut down, one line on stderr, exit $RC"
else
	fail "one save fails" "exit $RC: $(outputs); list: $(lodge list -o tsv 2>&1 | tr '\n' ' ')"
fi
if grep -q "^saved domain x to $SAVE/x.save " "$T/out" && [ "$(errors | wc -l)" = 1 ]; then
	pass "a domain created from a config of its own (its disk outside storage_dirs) is saved, signed by this host"
else
	fail "a domain of this host's own is saved" "exit $RC: $(outputs)"
fi
rm -rf "$SAVE/b.save"
run_unit ExecStart
if [ $RC -eq 0 ] && [ "$(wc -l <"$T/out")" = 3 ] && grep -q "^restored domain x from $SAVE/x.save " "$T/out" &&
   running a && running c && running x && [ -z "$(field b 1)" ]; then
	pass "the next boot restores a, c and x (c not started twice), b stays off ($(tr '\n' ';' <"$T/out"))"
else
	fail "boot after a failed save" "exit $RC: $(outputs)"
fi
lodge destroy x >/dev/null 2>&1

# ---- 4. A saved file that does not restore: kept, the domain not booted afresh ----------
lodge destroy c >/dev/null 2>&1
head -c 4096 /dev/urandom >"$SAVE/c.save"
run_unit ExecStart
if [ $RC -ne 0 ] && [ -s "$SAVE/c.save" ] && [ -z "$(field c 1)" ] &&
   grep -q "$SAVE/c.save is kept; while it is, autostart does not boot domain c afresh" "$T/err" &&
   grep -q "domain c is not started afresh: $SAVE/c.save holds its saved state" "$T/err"; then
	pass "a file that does not restore is kept and its domain not autostarted afresh, exit $RC"
else
	fail "a file that does not restore" "exit $RC: $(outputs)"
fi
rm -f "$SAVE/c.save"

# ---- 5. on_host_shutdown = "shutdown": clean power-offs, the deaf destroyed at the timeout ---
printf 'on_host_shutdown = "shutdown"\nshutdown_timeout = 8\n' >"$ROOT/etc/lodge/lodge.conf"
mkdom d 44 "cmdline = 'pwrbtn=ignore run=\"counter 300\"'"
mkdom e 55 "cmdline = 'pwrbtn=ignore run=\"counter 300\"'"
boot b && boot d && boot e
# Watch b's and d's consoles through the stop (input held open: they stay attached).
for n in b d; do
	mkfifo "$T/$n.in"
	exec {fd}<>"$T/$n.in"
	timeout 60 "$LODGE" --root "$ROOT" console "$n" <&$fd >"$T/$n.con" 2>/dev/null &
	wait_for "$T/$n.con" 'minios> |counter' 10
done
EVLOG=$ROOT/var/log/lodge/lodge.log
evlog_from=$(($(wc -l <"$EVLOG" 2>/dev/null || echo 0) + 1))
run_unit ExecStop
if grep -Eq '^shut down domain a \([0-9.]+ s\)$' "$T/out" && grep -Eq '^shut down domain b \([0-9.]+ s\)$' "$T/out" &&
   [ "$(wc -l <"$T/out")" = 2 ] && grep -q 'minios: power button pressed' "$T/b.con" && grep -q 'minios: powering off' "$T/b.con"; then
	pass "the guests power off through their power-button handlers ($(tr '\n' ';' <"$T/out"))"
else
	fail "guests shut down" "exit $RC: $(outputs); b's console: $(tr -d '\r' <"$T/b.con" | tail -3 | tr '\n' '|')"
fi
# d and e ignore the button, at the same time: both are asked before either
# is destroyed (in the event log's order), one shutdown_timeout for both;
# one after the other, e would be asked only once d was destroyed.
# before_both EVENT_A EVENT_B: in the event log since the stop, d's and e's
# EVENT_A both come before the first of their EVENT_B.
before_both() {
	tail -n +"$evlog_from" "$EVLOG" 2>/dev/null | awk -v a="$1" -v b="$2" '
		($2 == "d" || $2 == "e") && $3 == a && !first_b { seen[$2] = 1 }
		($2 == "d" || $2 == "e") && $3 == b && !first_b { first_b = NR }
		END { exit !(seen["d"] && seen["e"] && first_b) }'
}
if [ $RC -ne 0 ] && grep -qxF 'lodge: error: destroyed domain d: domain d was not shut down within 8 s (shutdown_timeout)' "$T/err" &&
   grep -qxF 'lodge: error: destroyed domain e: domain e was not shut down within 8 s (shutdown_timeout)' "$T/err" &&
   grep -q 'minios: power button pressed (ignored)' "$T/d.con" &&
   [ "$(errors | wc -l)" = 2 ] && [ "$SECS" -ge 8 ] && before_both shutdown-asked destroyed && none_running &&
   [ -z "$(ls -A "$SAVE")" ]; then
	pass "the two that ignore the button are both asked before either is destroyed after shutdown_timeout (${SECS} s in all), exit $RC"
else
	fail "destroyed after the timeout" "exit $RC after $SECS s: $(outputs); event log: $(tail -n +"$evlog_from" "$EVLOG" 2>/dev/null | awk '$2 == "d" || $2 == "e" { print $2, $3 }' | tr '\n' '|'); d's console: $(tr -d '\r' <"$T/d.con" | tail -2 | tr '\n' '|'); list: $(lodge list -o tsv 2>&1 | tr "\n" " "); save dir: $(ls -A "$SAVE" | tr "\n" " ")"
fi
out=$(in_ns timeout 30 "$LODGE" --root "$ROOT" host-stop 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -z "$out" ]; then
	pass "host-stop with no domain running says nothing and exits 0"
else
	fail "host-stop with nothing to do" "exit $rc: $out"
fi

# ---- 6. lodge-hyp leaves the cgroup of whoever started it --------------------------------
# Started from a cgroup standing in for a unit's or a login session's (the
# CPU controller's hierarchy: on cgroup v2 the one systemd tracks units
# by), neither lodge-hyp process stays there: both are in the domain's own
# cgroup, so stopping that unit or session signals neither.  (Outside the
# test's namespace: ip netns exec mounts a /sys without cgroups.)
MNT=$(awk '$0 ~ / - cgroup2 / { print $5 }' /proc/self/mountinfo | while read -r m; do
	grep -qw cpu "$m/cgroup.controllers" 2>/dev/null && echo "$m"; done | head -1)
[ -n "$MNT" ] || MNT=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)cpu(,|$)/ { print $5; exit }' /proc/self/mountinfo)
if [ -z "$MNT" ]; then
	skip "lodge-hyp leaves its starter's cgroup" "no cgroup CPU controller mounted"
else
	UNITCG=$MNT/lodge-hd-unit-$$
	at_exit 'for p in $(cat "$UNITCG/cgroup.procs" 2>/dev/null); do echo "$p" >"$MNT/cgroup.procs"; done; rmdir "$UNITCG" 2>/dev/null'
	printf 'name = "s"\nmemory = 32\nkernel = "%s"\n' "$MINIOS" >"$DOMS/s.cfg"
	mkdir -p "$UNITCG"
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" --root "$3" create s' sh "$UNITCG" "$LODGE" "$ROOT" >/dev/null 2>&1
	dom=$(lodge_at "$ROOT" "" list -o tsv 2>/dev/null | awk -F'\t' '$1 == "s" { print $9 }')
	sup=$(awk '$1 == "PPid:" { print $2 }' "/proc/$dom/status" 2>/dev/null)
	cg=$(cat "$RUN/s/cgroup" 2>/dev/null)
	left=$(tr '\n' ' ' 2>/dev/null <"$UNITCG/cgroup.procs")
	if [ -n "$dom" ] && [ -n "$cg" ] && [ -z "$left" ] && grep -qx "$dom" "$cg/cgroup.procs" && grep -qx "$sup" "$cg/cgroup.procs"; then
		pass "started from another cgroup, the supervisor ($sup) and the domain ($dom) are both in ${cg#"$MNT"/}, none left behind"
	else
		fail "lodge-hyp leaves its starter's cgroup" "domain $dom, supervisor $sup; left in the starter's: '$left'; in ${cg:-no cgroup}: $(tr '\n' ' ' <"$cg/cgroup.procs" 2>&1)"
	fi
	lodge_at "$ROOT" "" destroy s >/dev/null 2>&1
	if [ -n "$cg" ] && wait_until 10 test ! -e "$cg"; then
		pass "the domain's cgroup goes with it (its supervisor left it first)"
	else
		fail "the domain's cgroup goes" "$cg: $(tr '\n' ' ' 2>&1 <"$cg/cgroup.procs")"
	fi
fi

# ---- 7. systemd-analyze verify: clean, lodge installed where the unit says -----------------
if command -v systemd-analyze >/dev/null && [ -d /usr/lib/systemd/system ]; then
	prog=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$UNIT")
	V=$T/verify
	mkdir -p "$V$(dirname "$prog")" "$V/etc/systemd/system" "$V/usr/lib/systemd"
	cp "$LODGE" "$V$prog" && cp -a /usr/lib/systemd/system "$V/usr/lib/systemd/" && cp "$UNIT" "$V/etc/systemd/system/"
	out=$(systemd-analyze verify --man=no --root="$V" "$V/etc/systemd/system/lodge-domains.service" 2>&1); rc=$?
	if [ $rc -eq 0 ] && [ -z "$out" ]; then
		pass "systemd-analyze verify: clean"
	else
		fail "systemd-analyze verify" "exit $rc: $out"
	fi
else
	skip "systemd-analyze verify" "systemd-analyze (systemd) not installed"
fi
exit 0

#!/bin/bash
# lodge dump-core NAME FILE (xl dump-core): a running Mini-OS writes a
# known pattern at a known address (its mark command, minios_mark in
# nm's list); the core is an ELF file gdb opens, with the pattern where
# the guest put it and each vCPU's rip inside Mini-OS's text; the domain
# runs on (a paused one stays paused).  Bad input: a domain that does not
# exist, a directory that does not exist, one the caller may not write,
# a caller of the stats group, a disk that fills up: one message, a
# non-zero exit, no file left behind.
. "$(dirname "$0")/../lib.sh"

integ_begin "dump-core" kvm root minios "cmd:gdb:gdb" "cmd:setpriv:util-linux" "cmd:nm:binutils"

CONTROL=54331 STATS=54332
printf 'control_group = "%s"\nstats_group = "%s"\n' $CONTROL $STATS >"$ROOT/etc/lodge/lodge.conf"
printf 'name = "dc"\nmemory = 64\nvcpus = 2\nkernel = "%s"\n' "$MINIOS" >"$DOMS/dc.cfg"
marked() { console_log dc | grep -q "mark: '$1' at"; }
# gdb_core ARGS...: gdb in batch mode, no init files, on ARGS
gdb_core() { timeout 60 gdb -nx -batch "$@" 2>&1; }

mark_addr=$(nm "$MINIOS" | awk '$3 == "minios_mark" { print "0x" $1 }')
text_lo=$(nm "$MINIOS" | awk '$3 == "_start32" { print "0x" $1 }')
text_hi=$(nm "$MINIOS" | awk '$3 == "_end" { print "0x" $1 }')
[ -n "$mark_addr" ] && [ -n "$text_lo" ] && [ -n "$text_hi" ] ||
	{ fail "dump-core" "no minios_mark, _start32 or _end in nm $MINIOS"; exit 0; }

lodge create dc >/dev/null || { fail "dump-core" "create failed"; exit 0; }
wait_until 30 booted dc || { fail "dump-core" "Mini-OS did not boot: $(console_log dc | tail -3)"; exit 0; }
pattern="lodge-core-$$-pattern"
( echo "mark $pattern"; sleep 0.3 ) | lodge console dc >/dev/null 2>&1
wait_until 10 marked "$pattern" || { fail "dump-core" "mark did not run: $(console_log dc | tail -2)"; exit 0; }

out=$(lodge dump-core dc "$T/dc.core" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -s "$T/dc.core" ] && [ "$(od -An -c -N4 "$T/dc.core" | tr -d ' ')" = '177ELF' ]; then
	pass "dump-core writes an ELF file: $out"
else
	fail "dump-core writes an ELF file" "rc $rc: $out"
fi
info=$(gdb_core -ex 'x/s minios_mark' -ex 'info registers rip' -ex 'info threads' "$MINIOS" "$T/dc.core")
if grep -q "<minios_mark>:[[:space:]]*\"$pattern\"" <<<"$info"; then
	pass "gdb reads the pattern the guest wrote, at minios_mark ($mark_addr)"
else
	fail "gdb reads the pattern" "$info"
fi
rip=$(awk '$1 == "rip" { print $2 }' <<<"$info")
if [ -n "$rip" ] && ((rip >= text_lo && rip < text_hi)) && [ "$(grep -c 'LWP [12]' <<<"$info")" -ge 2 ]; then
	pass "gdb shows rip $rip inside Mini-OS ($text_lo-$text_hi) and a thread per vCPU"
else
	fail "gdb shows rip inside Mini-OS and 2 threads" "$info"
fi
# Without the kernel's symbols: the core alone, by address.
info=$(gdb_core -ex "x/s $mark_addr" -ex 'info registers rip' -c "$T/dc.core")
if grep -q "\"$pattern\"" <<<"$info" && grep -q '^rip' <<<"$info"; then
	pass "gdb reads the core alone: the pattern at $mark_addr, and rip"
else
	fail "gdb reads the core alone" "$info"
fi
if [ "$(field dc 5)" = running ] && ( echo "echo still-here"; sleep 0.3 ) | lodge console dc 2>/dev/null | grep -q still-here; then
	pass "the domain runs on after dump-core"
else
	fail "the domain runs on after dump-core" "state $(field dc 5)"
fi
lodge pause dc
if lodge dump-core dc "$T/paused.core" >/dev/null 2>&1 && [ "$(field dc 5)" = paused ]; then
	pass "a paused domain stays paused after dump-core"
else
	fail "a paused domain stays paused" "state $(field dc 5)"
fi
lodge unpause dc

# ---- bad input ---------------------------------------------------------------
# one_message RC OUT: a non-zero exit and exactly one line said
one_message() { [ "$1" -ne 0 ] && [ "$(grep -c . <<<"$2")" -eq 1 ]; }
out=$(lodge dump-core nosuch "$T/nosuch.core" 2>&1); rc=$?
if one_message $rc "$out" && grep -qi 'nosuch' <<<"$out" && [ ! -e "$T/nosuch.core" ] && ! ls -A "$T" | grep -qv -e '^root$' -e 'core$' -e '^in$'; then
	pass "a domain that does not exist: one message ($out), no file"
else
	fail "a domain that does not exist" "rc $rc: $out; $(ls "$T")"
fi
out=$(lodge dump-core dc "$T/no/such/dir/x.core" 2>&1); rc=$?
if one_message $rc "$out" && grep -q "$T/no/such/dir/x.core" <<<"$out"; then
	pass "a directory that does not exist: one message ($out)"
else
	fail "a directory that does not exist" "rc $rc: $out"
fi
# A user of the control group may dump, but only where it may write.
chmod 755 "$T"
chmod -R a+rX "$ROOT" "$(dirname "$LODGE")" 2>/dev/null
mkdir -p "$T/rootonly" "$T/open"
chmod 755 "$T/rootonly"
chmod 1777 "$T/open"
as_group() { local g=$1; shift; timeout 30 setpriv --reuid=65534 --regid=65534 --groups="$g" "$LODGE" --root "$ROOT" "$@"; }
as_control() { as_group $CONTROL "$@"; }
# The guest's memory is not for those who may only read its status.
out=$(as_group $STATS dump-core dc "$T/open/stats.core" 2>&1); rc=$?
if one_message $rc "$out" && grep -qi 'permission denied' <<<"$out" && [ -z "$(ls -A "$T/open")" ]; then
	pass "the stats group may not dump a core: one message ($out), nothing left"
else
	fail "the stats group may not dump a core" "rc $rc: $out; $(ls -A "$T/open")"
fi
out=$(as_control dump-core dc "$T/rootonly/x.core" 2>&1); rc=$?
if one_message $rc "$out" && grep -qi 'permission denied' <<<"$out" && [ -z "$(ls -A "$T/rootonly")" ]; then
	pass "into a directory the caller cannot write: one message ($out), nothing left"
else
	fail "into a directory the caller cannot write" "rc $rc: $out; $(ls -A "$T/rootonly")"
fi
out=$(as_control dump-core dc "$T/open/x.core" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$(stat -c %u "$T/open/x.core")" = 65534 ]; then
	pass "the file is made with the caller's rights (owned by uid 65534)"
else
	fail "the file is the caller's" "rc $rc: $out; $(stat -c %u "$T/open/x.core" 2>&1)"
fi
# A file system that fills up half way: the error, and no partial core.
mkdir -p "$T/small"
if mount -t tmpfs -o size=2m lodge-core-test "$T/small" 2>/dev/null; then
	at_exit umount "$T/small"
	( echo "touch 16"; sleep 0.3 ) | lodge console dc >/dev/null 2>&1
	wait_until 10 eval 'console_log dc | grep -q "touch: 16 MiB"'
	out=$(lodge dump-core dc "$T/small/x.core" 2>&1); rc=$?
	if one_message $rc "$out" && grep -q 'No space left' <<<"$out" && [ -z "$(ls -A "$T/small")" ] &&
	   [ "$(df --output=used -k "$T/small" | tail -1 | tr -d ' ')" -lt 100 ] && [ "$(field dc 5)" = running ]; then
		pass "a disk that fills up: one message ($out), no partial file, the domain runs on"
	else
		fail "a disk that fills up" "rc $rc: $out; $(ls -A "$T/small"); state $(field dc 5)"
	fi
else
	skip "a disk that fills up" "cannot mount a tmpfs"
fi

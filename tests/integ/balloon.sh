#!/bin/bash
# Ballooning with a real Mini-OS domain: memory 128 MiB, maxmem 256 MiB.
# mem-set down by half: the guest's usable memory falls and so does the
# domain's resident memory on the host (after the guest touched memory);
# back up: the guest can use it again; up to maxmem: the guest grows past
# what it booted with; bad input changes nothing.
. "$(dirname "$0")/../lib.sh"

integ_begin "ballooning" kvm minios

cat >"$ROOT/etc/lodge/domains/bal.cfg" <<CFG
name = "bal"
memory = 128
maxmem = 256
kernel = "$MINIOS"
CFG

# field COLUMN: a column of lodge list -o tsv for bal (3 Mem = target,
# 8 RSS KiB, 10 maxmem, 11 balloon, 12 the guest's free MiB or -).
field() { lodge list -o tsv | awk -F'\t' -v c="$1" '$1 == "bal" { print $c }'; }
log() { lodge console --log bal 2>/dev/null | tr -d '\r'; }
count() { log | grep -c -- "$1"; }
more_than() { [ "$(count "$1")" -gt "$2" ]; }
# guest CMD PATTERN: type CMD on the console, wait for a new line matching PATTERN.
guest() {
	local n
	n=$(count "$2")
	( sleep 0.3; echo "$1"; sleep 0.5 ) | lodge console bal >/dev/null 2>&1
	wait_until 30 more_than "$2" "$n"
}
# mem_set MIB: lodge mem-set, then wait until the guest says it got there.
mem_set() {
	local n
	n=$(count "balloon: target $1 MiB, usable $1 MiB")
	lodge mem-set bal "$1" && wait_until 60 more_than "balloon: target $1 MiB, usable $1 MiB" "$n"
}
rss_mib() { echo $(( $(field 8) / 1024 )); }

if lodge create bal && wait_until 60 more_than 'minios> ' 0; then
	pass "create a domain with maxmem 256 above memory 128"
else
	fail "create with maxmem" "$(lodge list -o tsv; log | tail -5)"
	exit 0
fi
if log | grep -q 'balloon: target 128 MiB, usable 128 MiB' && [ "$(field 3)" = 128 ] &&
   [ "$(field 10)" = 256 ] && [ "$(field 11)" = 128 ]; then
	pass "the guest boots with 256 MiB of RAM and balloons down to 128 MiB at once"
else
	fail "ballooned down at boot" "$(lodge list -o tsv | tail -1); $(log | grep balloon)"
fi

# Touch 100 MiB so the host holds it, then take half the memory away.
guest "touch 100" 'touch: 100 MiB'
before=$(rss_mib)
if mem_set 64 && guest "mem" 'mem: usable 64 MiB of 256 MiB RAM'; then
	pass "mem-set down by half: the guest reports 64 MiB usable"
else
	fail "mem-set 64" "$(log | tail -4)"
fi
sleep 0.5
after=$(rss_mib)
# The balloon takes the touched pages first (the top of free memory): 64 MiB.
if [ "$before" -ge 100 ] && [ $((before - after)) -ge 48 ]; then
	pass "the domain's resident memory falls when ballooned ($before -> $after MiB)"
else
	fail "resident memory falls" "$before -> $after MiB"
fi
if guest "touch 100" 'touch: cannot: 100 MiB wanted'; then
	pass "the guest cannot use memory ballooned away (touch 100 fails cleanly)"
else
	fail "touch beyond the target" "$(log | tail -3)"
fi
if wait_until 10 sh -c "[ \"\$($LODGE --root $ROOT list -o tsv | awk -F'\t' '\$1 == \"bal\" { print \$12 }')\" != - ]"; then
	free=$(field 12)
	if [ "$free" -gt 20 ] && [ "$free" -le 64 ]; then
		pass "the guest's own free memory comes through the stats queue ($free MiB of 64)"
	else
		fail "guest stats" "free $free MiB"
	fi
else
	fail "guest stats" "never reported: $(lodge list -o tsv | tail -1)"
fi

if mem_set 128 && guest "touch 100" 'touch: 100 MiB'; then
	pass "mem-set back up: the guest can use the memory again (touch 100 succeeds)"
else
	fail "mem-set 128" "$(log | tail -4)"
fi
if mem_set 256 && guest "touch 200" 'touch: 200 MiB' && [ "$(field 3)" = 256 ] && [ "$(field 11)" = 0 ]; then
	pass "mem-set up to maxmem: the guest grows past its boot memory to 256 MiB"
else
	fail "grow to maxmem" "$(lodge list -o tsv | tail -1); $(log | tail -3)"
fi

# Bad input: a clear error, a non-zero exit, the target unchanged.
bad() {  # NAME PATTERN ARGS...
	local name=$1 pat=$2 msg rc
	shift 2
	msg=$(lodge mem-set "$@" 2>&1); rc=$?
	if [ $rc -ne 0 ] && grep -Eq -- "$pat" <<<"$msg" && [ "$(field 3)" = 256 ]; then
		pass "mem-set $name: refused ($msg)"
	else
		fail "mem-set $name" "exit $rc: $msg; target $(field 3)"
	fi
}
bad "above maxmem" "above domain bal's maxmem \(256 MiB\)" bal 300
bad "below the floor" "below the floor of 32 MiB" bal 8
bad "not a number" "not a whole number" bal lots
bad "negative" "not a whole number" bal -64
bad "of an unknown domain" "no domain named nosuch is running" nosuch 64
lodge destroy bal >/dev/null 2>&1

# ksm and hugepages: the guest-RAM mapping carries the kernel's advice
# (VmFlags mg: mergeable, hg: huge pages) in the domain's smaps.  What
# they save or back is measured in ksm.sh.
cat >"$ROOT/etc/lodge/domains/knobs.cfg" <<CFG
name = "knobs"
memory = 64
kernel = "$MINIOS"
ksm = 1
hugepages = 1
CFG
if lodge create knobs; then
	pid=$(lodge list -o tsv | awk -F'\t' '$1 == "knobs" { print $9 }')
	flags=$(awk '/^Size: *65536 kB/ { ram = 1 } ram && /^VmFlags:/ { print; exit }' "/proc/$pid/smaps")
	if grep -qw mg <<<"$flags" && grep -qw hg <<<"$flags"; then
		pass "ksm = 1 and hugepages = 1 advise the guest's RAM mergeable and huge ($flags)"
	else
		fail "ksm and hugepages" "guest RAM VmFlags: '$flags'"
	fi
	lodge destroy knobs >/dev/null 2>&1
else
	fail "ksm and hugepages" "create failed"
fi

#!/bin/bash
# The small things a sysadmin types: mem-set with xl's units (64m, and a
# value in KiB) on a running Mini-OS, a unit or size it cannot take
# refused in one line; lodge check NAME reads the domains directory's
# NAME.cfg even where ./NAME is a directory; a config written the xl way
# (key = value;) starts; lodge top -b -n1 (and -bn1, bundled) prints the
# header with the time and the host, and rates from a first short
# interval.
. "$(dirname "$0")/../lib.sh"

integ_begin "scripting" kvm minios
{
	printf 'name = "ms";\nmemory = 96;    # xl ends a statement with ; too\n'
	printf 'maxmem = 128;\nkernel = "%s";\n' "$MINIOS"
} >"$DOMS/ms.cfg"
log() { lodge console --log ms 2>/dev/null | tr -d '\r'; }
reached() { log | grep -q "balloon: target $1 MiB, usable $1 MiB"; }
target() { lodge list -o tsv ms | cut -f3; }

if lodge create ms >"$T/create" 2>&1 && wait_until 60 sh -c "$LODGE --root $ROOT console --log ms 2>/dev/null | grep -q 'minios> '"; then
	pass "a config with ';' after each statement starts"
else
	fail "create ms" "$(tail -2 "$T/create")"
	exit 0
fi
if lodge mem-set ms 64m && [ "$(target)" = 64 ] && wait_until 60 reached 64; then
	pass "mem-set ms 64m: target 64 MiB, and the guest got there"
else
	fail "mem-set 64m" "target $(target); $(log | grep balloon | tail -2)"
fi
if lodge mem-set ms 81920k && [ "$(target)" = 80 ] && wait_until 60 reached 80; then
	pass "mem-set ms 81920k: 80 MiB"
else
	fail "mem-set 81920k" "target $(target); $(log | grep balloon | tail -2)"
fi
if lodge mem-set ms 96 && [ "$(target)" = 96 ]; then
	pass "mem-set ms 96: a bare number is MiB, as before"
else
	fail "mem-set 96" "target $(target)"
fi
for bad in 64x 64mb 1000k -64m "" 18446744073709551615g; do
	out=$(lodge mem-set ms "$bad" 2>&1); rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "is not a whole number of MiB" <<<"$out"; then
		pass "mem-set '$bad' is refused in one line: $out"
	else
		fail "mem-set '$bad'" "rc $rc: $out"
	fi
done
out=$(lodge mem-set ms 1g 2>&1); rc=$?
if [ $rc -eq 1 ] && [ "$(target)" = 96 ]; then
	pass "mem-set ms 1g, above maxmem, is refused and nothing changes: $out"
else
	fail "mem-set 1g" "rc $rc, target $(target): $out"
fi

# lodge check NAME from a directory holding ./NAME, a directory.
mkdir -p "$T/cwd/ms"
out=$(cd "$T/cwd" && lodge check ms 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$out" = "$DOMS/ms.cfg: ok" ]; then
	pass "lodge check ms reads $DOMS/ms.cfg, not the directory ./ms"
else
	fail "check NAME" "rc $rc: $out"
fi
printf 'name = "q"\nkernel = "%s\nmemory = 32\n' "$MINIOS" >"$T/quote.cfg"
out=$(lodge check "$T/quote.cfg" 2>&1); rc=$?
if [ $rc -eq 1 ] && [ "$out" = "$T/quote.cfg:2: kernel: the string opened with \" here is never closed" ]; then
	pass "an unterminated quote: one line, at the line it opened"
else
	fail "unterminated quote" "rc $rc: $out"
fi

# top -b: the header, and a rate over the first, short, interval.
if lodge top -bn1 >"$T/top" 2>"$T/top.err" &&
   grep -Eq '^lodge top - [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}' "$T/top" &&
   grep -Eq '^1 domains: 1 running, 0 paused' "$T/top" &&
   grep -Eq '^Mem: [0-9]+ MiB total, [0-9]+ MiB used, [0-9]+ MiB free +CPUs: [0-9]+' "$T/top" &&
   [ "$(grep -c '^ *ID NAME' "$T/top")" = 1 ] && grep -Eq '^ +[0-9]+ ms +running' "$T/top"; then
	pass "top -bn1: the time, the domains by state and the host, then one table"
else
	fail "top -bn1" "$(tr '\n' '|' <"$T/top"; cat "$T/top.err")"
fi
# Domain-0's %CPU over the first interval: the host's busy share, never
# an unset 0.0 (the host runs this test); a spinning guest shows too.
busy() { lodge top -b -n 1 | awk '$2 == "Domain-0" { exit !($4 > 0) }'; }
if wait_until 30 busy; then
	pass "top -b -n 1: Domain-0's %CPU is a rate over the first interval, not 0"
else
	fail "top -b -n 1 first rates" "$(lodge top -b -n 1 | tr '\n' '|')"
fi

# Every exit status src/lib/include/exit-status.h defines is in lodge(8)'s EXIT STATUS.
section=$(awk '/^\.SH EXIT STATUS/ { on = 1; next } /^\.SH/ { on = 0 } on' "$TOP/man/lodge.8")
missing=$(awk '$1 == "#define" && $2 ~ /^EXIT_/ { print $3 }' "$TOP/src/lib/include/exit-status.h" |
	while read -r n; do grep -qx "\.B $n" <<<"$section" || echo "$n"; done)
if [ -n "$section" ] && [ -z "$missing" ]; then
	pass "lodge(8)'s EXIT STATUS has every status of exit-status.h"
else
	fail "EXIT STATUS in lodge(8)" "missing: $missing"
fi

#!/bin/bash
# Crash evidence that outlives the domain: with on_crash = "destroy" a
# triple-faulted Mini-OS leaves, in crash_dir/NAME-STAMP/ under --root,
# its reason, registers, lodge-hyp's log and the console's end; the
# attached console and lodge-hyp's log say where; the newest 10 crashes
# per domain are kept (another domain's, and what is not a crash, are
# left alone); on_crash = "coredump-destroy" leaves a core gdb opens, and
# "coredump-restart" boots the domain again; a domain kept by "preserve"
# can be dumped, and its evidence is kept once destroyed; a coredump
# action anywhere else than on_crash is refused.
. "$(dirname "$0")/../lib.sh"

integ_begin "crash evidence" kvm root minios "cmd:gdb:gdb"

CRASH=$ROOT/var/lib/lodge/crash
gone() { [ ! -e "$RUN/$1" ] && [ -z "$(field "$1" 1)" ]; }
# crash_it NAME [COMMANDS...]: boot NAME, run COMMANDS then crash on its
# console; what the console showed is in $T/NAME.console
crash_it() {
	local n=$1 c
	shift
	lodge create "$n" >/dev/null || { fail "crash $n" "create failed"; return 1; }
	wait_until 30 booted "$n" || { fail "crash $n" "no boot: $(console_log "$n" | tail -2)"; return 1; }
	{ for c in "$@"; do echo "$c"; sleep 0.3; done; echo crash; sleep 0.5; } |
		lodge console "$n" 2>/dev/null | tr -d '\r' >"$T/$n.console"
}
# The newest evidence directory of NAME.
newest() { ls -d "$CRASH/$1"-2* 2>/dev/null | sort | tail -1; }

# ---- on_crash = "destroy" ---------------------------------------------------------
domain_cfg cr
# Ten crashes of long ago, another domain's, and what is not a crash at all.
mkdir -p "$CRASH"
for i in 0 1 2 3 4 5 6 7 8 9; do
	mkdir "$CRASH/cr-20000101T00000$i.000Z" && echo old >"$CRASH/cr-20000101T00000$i.000Z/reason"
done
mkdir "$CRASH/cr2-20000101T000000.000Z" "$CRASH/cr-notes"
chmod 700 "$CRASH"
crash_it cr
wait_until 30 gone cr
dir=$(newest cr)
said=$(grep -o '\[lodge: cr crashed: [^]]*\]' "$T/cr.console")
if [ -n "$said" ] && [ "$said" = "[lodge: cr crashed: $(cat "$dir/reason" 2>/dev/null); evidence in $dir]" ]; then
	pass "the attached console says where the evidence is: $said"
else
	fail "the console says where the evidence is" "console: $(tail -3 "$T/cr.console"); dir $dir"
fi
if gone cr && [ -d "$dir" ] && grep -Eq 'vcpu0 (triple fault|KVM internal error)' "$dir/reason" &&
   grep -q '^vcpu0: rip ' "$dir/registers" && grep -q '^vcpu0: cr0 ' "$dir/registers" &&
   grep -q 'minios: triple fault' "$dir/console.log" && grep -q 'Lodge Mini-OS' "$dir/console.log"; then
	pass "after the domain is gone: its reason, registers and console log are kept in $(basename "$dir")"
else
	fail "evidence kept after the domain is gone" "$(ls -la "$dir" 2>&1); $(cat "$dir/reason" 2>&1)"
fi
if grep -q "domain cr crashed: .*; evidence in $dir" "$dir/lodge-hyp.log"; then
	pass "lodge-hyp's log (kept with it) says where: $(grep -o 'evidence in.*' "$dir/lodge-hyp.log" | head -1)"
else
	fail "lodge-hyp's log says where" "$(cat "$dir/lodge-hyp.log" 2>&1)"
fi
# The event log has the crash and, after it, where its evidence is.
kept_logged() { lodge log cr -n 5 >"$T/cr.log" 2>&1 && grep -q " cr crashed guest " "$T/cr.log" && grep -q " cr crash-kept lodge-hyp evidence in $dir\$" "$T/cr.log"; }
if wait_until 10 kept_logged; then
	pass "lodge log shows the crash and where its evidence is: $(grep -o 'crash-kept.*' "$T/cr.log")"
else
	fail "lodge log shows the crash and its evidence" "$(cat "$T/cr.log")"
fi
left=$(ls "$CRASH" | grep -c '^cr-2')
if [ "$left" -eq 10 ] && [ ! -e "$CRASH/cr-20000101T000000.000Z" ] && [ -e "$CRASH/cr-20000101T000001.000Z" ] &&
   [ -e "$CRASH/cr2-20000101T000000.000Z" ] && [ -e "$CRASH/cr-notes" ]; then
	pass "the 11th crash removes the oldest: 10 kept, another domain's and a stranger left alone"
else
	fail "pruning to the newest 10" "$left left: $(ls "$CRASH" | tr '\n' ' ')"
fi
# Root's alone: a sandboxed lodge-hyp (or anyone else) cannot plant links there.
if [ "$(stat -c '%U %a' "$CRASH")" = "root 700" ] && [ "$(stat -c '%U %a' "$dir")" = "root 750" ] &&
   [ -z "$(find "$dir" -type l)" ] && [ -z "$(find "$dir" -type f ! -user root)" ]; then
	pass "the crash directory and the evidence are root's (700, 750, no links)"
else
	fail "the evidence is root's" "$(ls -la "$CRASH" "$dir")"
fi

# ---- on_crash = "coredump-destroy" ----------------------------------------------
domain_cfg cd 'on_crash = "coredump-destroy"'
pattern="crash-core-$$"
lodge create cd >/dev/null && wait_until 30 booted cd
# The sandboxed process holds its unnamed core file, never the directory.
child=$(lodge list -o tsv | awk -F'\t' '$1 == "cd" { print $9 }')
fds=$(for fd in /proc/"$child"/fd/*; do readlink "$fd"; done 2>/dev/null)
if [ -n "$child" ] && grep -q "^$CRASH/#[0-9]* (deleted)$" <<<"$fds" && ! grep -qx "$CRASH" <<<"$fds"; then
	pass "the domain process holds an unnamed file for its core, not the crash directory"
else
	fail "the domain process holds no crash directory" "pid '$child': $(grep lodge <<<"$fds")"
fi
lodge destroy cd >/dev/null
crash_it cd "mark $pattern"
wait_until 30 gone cd
dir=$(newest cd)
info=$(timeout 60 gdb -nx -batch -ex 'x/s minios_mark' -ex 'info registers rip' "$MINIOS" "$dir/core" 2>&1)
if gone cd && grep -q "<minios_mark>:[[:space:]]*\"$pattern\"" <<<"$info" && grep -q '^rip .*<power_crash' <<<"$info"; then
	pass "coredump-destroy: a core gdb opens, with the guest's pattern and rip in power_crash"
else
	fail "coredump-destroy leaves a core" "$(ls -la "$dir" 2>&1); $info"
fi

# ---- on_crash = "coredump-restart" ----------------------------------------------
domain_cfg cx 'on_crash = "coredump-restart"'
crash_it cx
restarted() { [ -n "$(newest cx)" ] && [ "$(field cx 5)" = running ] && booted cx; }
if wait_until 30 restarted && [ -s "$(newest cx)/core" ] && file_ok=$(od -An -c -N4 "$(newest cx)/core" | tr -d ' ') &&
   [ "$file_ok" = '177ELF' ]; then
	pass "coredump-restart: the core is kept and the domain runs again"
else
	fail "coredump-restart" "state $(field cx 5); $(ls -la "$(newest cx)" 2>&1)"
fi
lodge destroy cx >/dev/null 2>&1

# ---- on_crash = "preserve": kept for inspection, and dump-core reads it ----------
domain_cfg pv 'on_crash = "preserve"'
crash_it pv
wait_until 30 eval '[ "$(field pv 5)" = crashed ]'
out=$(lodge dump-core pv "$T/pv.core" 2>&1); rc=$?
info=$(timeout 60 gdb -nx -batch -ex 'info registers rip' "$MINIOS" "$T/pv.core" 2>&1)
if [ $rc -eq 0 ] && grep -q '^rip .*<power_crash' <<<"$info"; then
	pass "a crashed domain kept by preserve can be dumped: rip in power_crash"
else
	fail "dump-core of a preserved crash" "rc $rc: $out; $info"
fi
lodge destroy pv >/dev/null
wait_until 30 gone pv
if [ -f "$(newest pv)/registers" ]; then
	pass "a preserved crash's evidence is kept once it is destroyed: $(basename "$(newest pv)")"
else
	fail "preserved crash's evidence" "$(ls "$CRASH")"
fi

# ---- a coredump action where it does not belong -----------------------------------
domain_cfg bad 'on_poweroff = "coredump-destroy"'
out=$(lodge check bad 2>&1); rc=$?
if [ $rc -ne 0 ] && [ "$(grep -c . <<<"$out")" -eq 1 ] && grep -q "on_poweroff.*coredump-destroy.*on_crash only" <<<"$out"; then
	pass "coredump-destroy for on_poweroff is refused: $out"
else
	fail "coredump action outside on_crash refused" "rc $rc: $out"
fi

#!/bin/bash
# KSM and transparent huge pages, measured.  Two Mini-OS domains with
# ksm = 1 and a third without fill 64 MiB each with the same pattern
# (memfill 64 SEED, the same seed and address in all three); with ksmd run
# fast for the test, the resident figure of the two (lodge list, which
# leaves out what KSM merged) falls by most of the 64 MiB and their
# ksm_shared figure rises, while the third's stays.  A domain with
# hugepages = 1 that touches 64 MiB has some of it in huge pages (THP);
# one without, in madvise mode, has none.  ksmd's settings are put back
# as they were at the end.
. "$(dirname "$0")/../lib.sh"

integ_begin "ksm and huge pages" kvm root minios
KSM=/sys/kernel/mm/ksm
THP=/sys/kernel/mm/transparent_hugepage/enabled

# ksmd's settings, as found; put back on any exit.
saved=()
for k in run pages_to_scan sleep_millisecs advisor_mode; do
	[ -r "$KSM/$k" ] || continue
	v=$(cat "$KSM/$k")
	[ "$k" = advisor_mode ] && v=${v#*\[} v=${v%%\]*}   # the [chosen] one
	saved+=("$k=$v")
done
restore_ksm() {
	local kv
	for kv in "${saved[@]}"; do echo "${kv#*=}" >"$KSM/${kv%%=*}" 2>/dev/null; done
}
at_exit restore_ksm

mkcfg() {  # NAME EXTRA-LINES
	cat >"$ROOT/etc/lodge/domains/$1.cfg" <<CFG
name = "$1"
memory = 128
kernel = "$MINIOS"
$2
CFG
}
# field NAME COLUMN: lodge list -o tsv (8 RSS KiB, 13 KSM-shared KiB, 14 THP KiB).
log() { lodge console --log "$1" 2>/dev/null | tr -d '\r'; }
count() { log "$1" | grep -c -- "$2"; }
more_than() { [ "$(count "$1" "$2")" -gt "$3" ]; }
guest() {  # NAME CMD PATTERN: type CMD on the console, wait for a new line matching PATTERN
	local n
	n=$(count "$1" "$3")
	( sleep 0.3; echo "$2"; sleep 0.5 ) | lodge console "$1" >/dev/null 2>&1
	wait_until 60 more_than "$1" "$3" "$n"
}
boot() {  # NAME: create, wait for the prompt
	lodge create "$1" && wait_until 60 more_than "$1" 'minios> ' 0
}
kib_mib() { echo $(( ${1:-0} / 1024 )); }

# dashboard_ksm: the detail view of ka shows the KSM figure (tmux runs the
# dashboard, as in tui.sh).
dashboard_ksm() {
	if ! command -v tmux >/dev/null; then skip "the detail view shows the KSM figure" "tmux not installed"; return; fi
	tmux_begin "lodge-ksm-$$"
	tmux_open dashboard 80 24 "TERM=xterm $LODGE --root $ROOT -d 0.5; sleep 30"
	shows 10 'Domain-0'
	press /; type_text ka; press Enter Home Down Enter
	if shows 10 'KSM shared ([4-9][0-9]|[0-9]{3,}) MiB'; then
		pass "the dashboard's detail view shows the KSM figure ($(screen | grep -o 'resident.*THP [0-9]* MiB'))"
	else
		fail "detail view KSM figure" "$(screen | head -6 | tr '\n' '|')"
	fi
	tmux kill-server 2>/dev/null
}

# ---- KSM ------------------------------------------------------------------
ksm_why=
if [ ! -w "$KSM/run" ]; then
	ksm_why="no writable $KSM/run (a kernel without CONFIG_KSM, or /sys read-only)"
elif [ ! -r /proc/self/ksm_merging_pages ]; then
	ksm_why="the kernel has no per-process KSM count (/proc/PID/ksm_merging_pages, Linux 5.19)"
elif ! echo 1 2>/dev/null >"$KSM/run" || [ "$(cat "$KSM/run")" != 1 ]; then
	ksm_why="ksmd cannot be started here (echo 1 > $KSM/run refused)"
fi
if [ -n "$ksm_why" ]; then
	skip "ksm saves resident memory" "$ksm_why"
else
	echo 0 >"$KSM/run"             # stopped until the three are filled
	mkcfg ka "ksm = 1"
	mkcfg kb "ksm = 1"
	mkcfg kc ""
	ok=1
	for d in ka kb kc; do
		if ! boot $d || ! guest $d "memfill 64 7" 'memfill: 64 MiB at'; then
			fail "ksm: boot and fill $d" "$(log $d | tail -3)"
			ok=0
		fi
	done
	addrs=$(for d in ka kb kc; do log $d | grep -o 'memfill: 64 MiB at 0x[0-9a-f]*' | tail -1; done | sort -u | wc -l)
	if [ $ok = 1 ] && [ "$addrs" != 1 ]; then
		fail "ksm: the three fills are alike" "$(for d in ka kb kc; do log $d | grep memfill | tail -1; done)"
		ok=0
	fi
	if [ $ok = 1 ]; then
		sleep 1
		before_ka=$(kib_mib "$(field ka 8)"); before_kb=$(kib_mib "$(field kb 8)"); before_kc=$(kib_mib "$(field kc 8)")
		[ -w "$KSM/advisor_mode" ] && echo none >"$KSM/advisor_mode" 2>/dev/null
		echo 4000 >"$KSM/pages_to_scan"
		echo 0 >"$KSM/sleep_millisecs"
		echo 1 >"$KSM/run"
		merged() {  # both ksm domains: resident down by 40 of the 64 MiB
			local a b
			a=$(kib_mib "$(field ka 8)"); b=$(kib_mib "$(field kb 8)")
			[ $((before_ka - a)) -ge 40 ] && [ $((before_kb - b)) -ge 40 ]
		}
		t0=$SECONDS
		if wait_until 120 merged; then
			took=$((SECONDS - t0))
			sleep 1
			after_ka=$(kib_mib "$(field ka 8)"); after_kb=$(kib_mib "$(field kb 8)")
			after_kc=$(kib_mib "$(field kc 8)")
			shared_ka=$(kib_mib "$(field ka 13)"); shared_kc=$(kib_mib "$(field kc 13)")
			pass "ksm = 1: resident memory falls as KSM merges the same 64 MiB in two domains (ka $before_ka -> $after_ka MiB, kb $before_kb -> $after_kb MiB, in ${took}s)"
			if [ "$shared_ka" -ge 40 ]; then
				pass "ksm_shared shows what was merged (ka $shared_ka MiB)"
			else
				fail "ksm_shared" "ka $shared_ka MiB after merging"
			fi
			col=$(lodge list -l | awk '$1 == "ka" { print $14 }')
			if [ "$col" = "$shared_ka" ] || [ "${col:-0}" -ge 40 ] 2>/dev/null; then
				pass "lodge list -l shows the KSM figure (KSM(MiB) $col for ka)"
			else
				fail "list -l KSM column" "$(lodge list -l | head -1); $(lodge list -l | grep '^ka ')"
			fi
			dashboard_ksm
			if [ $((before_kc - after_kc)) -lt 8 ] && [ "$shared_kc" = 0 ]; then
				pass "a domain without ksm keeps its resident memory ($before_kc -> $after_kc MiB, shared $shared_kc)"
			else
				fail "domain without ksm" "$before_kc -> $after_kc MiB, shared $shared_kc MiB"
			fi
		else
			fail "ksm = 1: resident memory falls" \
			     "after 120 s: ka $before_ka -> $(kib_mib "$(field ka 8)") MiB, kb $before_kb -> $(kib_mib "$(field kb 8)") MiB; shared $(field ka 13) KiB; $KSM/pages_sharing $(cat $KSM/pages_sharing), full_scans $(cat $KSM/full_scans)"
		fi
	fi
	for d in ka kb kc; do lodge destroy $d >/dev/null 2>&1; done
	restore_ksm
	now=$(for kv in "${saved[@]}"; do k=${kv%%=*}; v=$(cat "$KSM/$k"); [ "$k" = advisor_mode ] && v=${v#*\[} v=${v%%\]*}; echo "$k=$v"; done)
	if [ "$now" = "$(printf '%s\n' "${saved[@]}")" ]; then
		pass "ksmd's settings are as they were ($(tr '\n' ' ' <<<"$now"))"
	else
		fail "ksmd's settings restored" "now $(tr '\n' ' ' <<<"$now"); were ${saved[*]}"
	fi
fi

# ---- transparent huge pages -----------------------------------------------
thp_mode=$(sed 's/.*\[\(.*\)\].*/\1/' "$THP" 2>/dev/null)
if [ -z "$thp_mode" ] || [ "$thp_mode" = never ]; then
	skip "hugepages = 1 backs guest RAM with huge pages" "transparent huge pages are ${thp_mode:-not in this kernel} ($THP)"
	exit 0
fi
mkcfg th "hugepages = 1"
mkcfg tn ""
if boot th && guest th "touch 64" 'touch: 64 MiB' && boot tn && guest tn "touch 64" 'touch: 64 MiB'; then
	# The figure is refreshed every 5 s (smaps_rollup walks the page tables).
	if wait_until 60 sh -c "[ \"\$($LODGE --root $ROOT list -o tsv | awk -F'\t' '\$1 == \"th\" { print \$14 }')\" -gt 0 ]"; then
		pass "hugepages = 1: part of the guest's 64 MiB is in huge pages (THP $(kib_mib "$(field th 14)") MiB of resident $(kib_mib "$(field th 8)") MiB)"
	else
		fail "hugepages = 1: THP figure" "$(field th 14) KiB after 60 s; resident $(field th 8) KiB; mode $thp_mode; $(grep -i anonhuge /proc/meminfo)"
	fi
	line=$(TERM=dumb lodge list -l | awk '$1 == "th" { print $15 }')
	if [ "${line:-0}" -gt 0 ] 2>/dev/null; then
		pass "lodge list -l shows the THP figure (THP(MiB) $line for th)"
	else
		fail "list -l THP column" "$(lodge list -l | head -1); $(lodge list -l | grep '^th ')"
	fi
	if [ "$thp_mode" = madvise ]; then
		sleep 5
		if [ "$(field tn 14)" = 0 ]; then
			pass "without hugepages (THP in madvise mode) no guest RAM is in huge pages"
		else
			fail "THP without hugepages" "$(field tn 14) KiB in madvise mode"
		fi
	fi
else
	fail "hugepages: boot and touch" "$(log th | tail -3); $(log tn | tail -3)"
fi

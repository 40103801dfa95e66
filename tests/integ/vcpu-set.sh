#!/bin/bash
# lodge vcpu-set within maxvcpus (xl vcpu-set), served by Mini-OS's CPU
# hot-plug (src/minios/hotplug.c, src/common/cpuhp.h): a domain with
# vcpus = 1 and maxvcpus = 3 boots one CPU; vcpu-set 3 plugs two that the
# guest starts ("minios: cpu N online") and lodge list counts; vcpu-set 2
# asks one back, which the guest parks and ejects ("cpu 2 offline"); a
# guest that ignores the request keeps its CPU; beyond maxvcpus and 0 are
# refused in one line and change nothing; a config with maxvcpus below
# vcpus is refused; save and restore keep the online count.
. "$(dirname "$0")/../lib.sh"

integ_begin "vcpu-set" kvm minios

conlog() { console_log "$1"; }
shows() { conlog "$1" | grep -Eq -- "$2"; }
count() { conlog "$1" | grep -Ec -- "$2"; }
vcpus_of() { field "$1" 4; }
online_is() { [ "$(vcpus_of "$1")" = "$2" ]; }
say() { (sleep 0.3; echo "$2"; sleep 0.5) | timeout 3 "$LODGE" --root "$ROOT" console "$1" >/dev/null 2>&1; }
track() { local p; p=$(field "$1" 9); [ -n "$p" ] && track_pid "$p" $(pgrep -P "$p"); }
cpus_up_is() { say "$1" cpus; conlog "$1" | grep -E '^cpus: [0-9]+ up' | tail -1 | grep -q "^cpus: $2 up"; }

domain_cfg v 'maxvcpus = 3'
if ! lodge create v >/dev/null 2>&1 || ! wait_until 30 booted v; then
	fail "vcpu-set" "the guest did not boot: $(conlog v | tail -3)"
	exit 0
fi
track v
# which column of list -o tsv is vcpus: the header says
col=$(lodge list -o tsv -H 2>/dev/null | head -1 | tr '\t' '\n' | grep -nx 'vcpus' | cut -d: -f1)
vcpus_of() { field "$1" "$col"; }

if online_is v 1 && shows v 'smp: 1 of 1 CPUs up'; then
	pass "maxvcpus 3, vcpus 1: one CPU online at boot"
else
	fail "boot with maxvcpus" "vcpus $(vcpus_of v); $(conlog v | grep smp:)"
fi

# ---- plug -------------------------------------------------------------------
if lodge vcpu-set v 3 && wait_until 20 shows v 'minios: cpu 2 online' && shows v 'minios: cpu 1 online' &&
   wait_until 10 online_is v 3 && wait_until 10 cpus_up_is v 3; then
	pass "vcpu-set 3: the guest starts CPUs 1 and 2, list shows 3"
else
	fail "vcpu-set 3" "vcpus $(vcpus_of v); $(conlog v | tail -4 | tr '\n' '|')"
fi

# ---- beyond maxvcpus, below 1, not a number: refused in one line --------------
for n in 4 0 x; do
	out=$(lodge vcpu-set v $n 2>&1); rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && online_is v 3; then
		pass "vcpu-set $n refused: $out"
	else
		fail "vcpu-set $n" "rc $rc, vcpus $(vcpus_of v): $out"
	fi
done

# ---- unplug -------------------------------------------------------------------
if lodge vcpu-set v 2 && wait_until 20 shows v 'minios: cpu 2 offline' && wait_until 10 online_is v 2 &&
   wait_until 10 cpus_up_is v 2; then
	pass "vcpu-set 2: the guest parks and ejects CPU 2, list shows 2"
else
	fail "vcpu-set 2" "vcpus $(vcpus_of v); $(conlog v | tail -4 | tr '\n' '|')"
fi

# vcpu-list shows every vCPU up to maxvcpus, the one held offline as "off"
states=$(lodge vcpu-list -o tsv v 2>/dev/null | awk -F'\t' '{ print $5 }' | tr '\n' ' ')
read -r s0 s1 s2 rest <<<"$states"
if [ -z "$rest" ] && [ "$s2" = off ] && [ -n "$s1" ] && [ "$s0" != off ] && [ "$s1" != off ]; then
	pass "vcpu-list: 3 vCPUs, the one held offline shows off ($states)"
else
	fail "vcpu-list" "states: $states"
fi

# ---- a guest that ignores the request keeps the CPU ----------------------------
say v 'hotplug-ignore on'
if wait_until 10 shows v 'eject requests are ignored' && lodge vcpu-set v 1 &&
   wait_until 20 shows v 'minios: cpu 1: eject request ignored' && online_is v 2; then
	pass "a guest that ignores the eject keeps its CPU (2 online)"
else
	fail "ignored eject" "vcpus $(vcpus_of v); $(conlog v | tail -3 | tr '\n' '|')"
fi
say v 'hotplug-ignore off'
wait_until 10 shows v 'eject requests are served'

# ---- plug again after an unplug: CPU 2 comes back ------------------------------
before=$(count v 'minios: cpu 2 online')
if lodge vcpu-set v 3 && wait_until 20 eval '[ "$(count v "minios: cpu 2 online")" -gt "$before" ]' &&
   wait_until 10 online_is v 3; then
	pass "vcpu-set 3 again: the parked CPU 2 starts again"
else
	fail "re-plug" "vcpus $(vcpus_of v); $(conlog v | tail -4 | tr '\n' '|')"
fi

# ---- save and restore keep the online count ------------------------------------
lodge vcpu-set v 2 && wait_until 20 online_is v 2
if out=$(lodge save v "$T/v.sav" 2>&1) && out2=$(lodge restore "$T/v.sav" 2>&1) && track v &&
   wait_until 10 online_is v 2 && wait_until 10 cpus_up_is v 2; then
	pass "save and restore keep 2 of 3 vCPUs online"
else
	fail "save and restore" "save: $out; restore: ${out2:-}; vcpus $(vcpus_of v)"
fi
if lodge vcpu-set v 3 && wait_until 20 online_is v 3 && wait_until 10 cpus_up_is v 3; then
	pass "after restore, vcpu-set 3 plugs CPU 2 again"
else
	fail "plug after restore" "vcpus $(vcpus_of v); $(conlog v | tail -4 | tr '\n' '|')"
fi

# ---- a config with maxvcpus below vcpus -----------------------------------------
domain_cfg bad 'vcpus = 2' 'maxvcpus = 1'
sed -i '/^vcpus = 1$/d' "$DOMS/bad.cfg"
out=$(lodge create bad 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'maxvcpus' <<<"$out" && [ -z "$(field bad 1)" ]; then
	pass "maxvcpus below vcpus refused: $(head -1 <<<"$out")"
else
	fail "maxvcpus below vcpus" "rc $rc: $out"
fi

# ---- lodge-hyp itself: --max-vcpus below --vcpus, beyond 64 ----------------------
for args in "--vcpus 2 --max-vcpus 1" "--max-vcpus 65"; do
	# shellcheck disable=SC2086 # the options are words
	out=$("$HYP" --kernel "$MINIOS" $args 2>&1); rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q -- '--max-vcpus' <<<"$out"; then
		pass "lodge-hyp $args refused: $out"
	else
		fail "lodge-hyp $args" "rc $rc: $out"
	fi
done
exit 0

#!/bin/bash
# Many domains at once (issue 25): 10 lodge creates started together all
# succeed, each with its own domain id; lodge destroy returns only once
# the domain's processes (its sandboxed lodge-hyp and that one's root
# supervisor) are gone, as xl destroy does; a destroyed domain's id is
# free again.
. "$(dirname "$0")/../lib.sh"

integ_begin "domains at scale" kvm root minios

N=10
for i in $(seq 1 $N); do domain_cfg "s$i"; done

# --- 10 creates at once: every one succeeds, ids distinct.
pids=()
for i in $(seq 1 $N); do
	lodge create "s$i" >"$TMPDIR_TEST/create$i.out" 2>&1 &
	pids+=($!)
done
failed=
for i in $(seq 1 $N); do
	wait "${pids[$((i - 1))]}" || failed+=" s$i: $(cat "$TMPDIR_TEST/create$i.out")"
done
if [ -z "$failed" ]; then
	pass "$N lodge creates started at once all succeed"
else
	fail "$N creates at once" "$failed"
fi
ids=$(lodge list -o tsv | awk -F'\t' '$1 ~ /^s[0-9]+$/ { print $2 }' | sort -n)
if [ "$(wc -w <<<"$ids")" = $N ] && [ "$(uniq <<<"$ids" | wc -l)" = $N ] && ! grep -qx 0 <<<"$ids"; then
	pass "the $N domains created at once have $N distinct ids (${ids//$'\n'/ }))"
else
	fail "distinct ids for creates at once" "ids: ${ids//$'\n'/ }"
fi

# gone PID: no such process, or only a zombie (it has ended; its reaper
# has not looked yet).
gone() { [ ! -e "/proc/$1" ] || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; }

# --- destroy returns once the domain's processes are gone: half the
# domains one after another, half all at once (the teardowns then overlap).
# The pids are this test's own domain's: the domain process as lodge list
# gives it, its parent the supervisor, whose command line names this
# test's root.
wait_until 60 booted s1
# destroy_checked NAME CHILD SUPER: destroy, then at once (no waiting: it
# has returned) what is left of them, printed.
destroy_checked() {
	if ! lodge destroy "$1" >/dev/null 2>&1; then
		echo " $1: lodge destroy failed"
		return
	fi
	gone "$2" || echo " $1: domain process $2 still runs"
	gone "$3" || echo " $1: supervisor $3 still runs"
	[ -e "$RUN/$1" ] && echo " $1: runtime directory still there"
	echo " $1: checked"
}
left=
for i in $(seq 1 $N); do
	child[i]=$(field "s$i" 9)
	super[i]=$(awk '$1 == "PPid:" { print $2 }' "/proc/${child[$i]}/status" 2>/dev/null)
	if [ -z "${child[$i]}" ] || [ -z "${super[$i]}" ] ||
	   ! tr '\0' ' ' <"/proc/${super[$i]}/cmdline" | grep -q -- "--runtime-dir $RUN "; then
		left+=" s$i: no domain process (pid '${child[$i]}') or supervisor (pid '${super[$i]}') of this test's root"
	fi
done
if [ -z "$left" ]; then
	for i in $(seq 1 $((N / 2))); do
		destroy_checked "s$i" "${child[$i]}" "${super[$i]}" >>"$TMPDIR_TEST/destroyed"
	done
	for i in $(seq $((N / 2 + 1)) $N); do
		destroy_checked "s$i" "${child[$i]}" "${super[$i]}" >"$TMPDIR_TEST/destroyed$i" &
		pids[i]=$!
	done
	for i in $(seq $((N / 2 + 1)) $N); do wait "${pids[$i]}"; cat "$TMPDIR_TEST/destroyed$i" >>"$TMPDIR_TEST/destroyed"; done
	left=$(grep -v ': checked$' "$TMPDIR_TEST/destroyed")
	checked=$(grep -c ': checked$' "$TMPDIR_TEST/destroyed")
fi
if [ -z "$left" ] && [ "$checked" = $N ]; then
	pass "lodge destroy returns with the domain process and its supervisor gone ($((N / 2)) one after another, $((N - N / 2)) at once)"
else
	fail "destroy leaves no process" "$left"
fi

# --- the ids are free again: the next create gets id 1.
if lodge create s1 && [ "$(field s1 2)" = 1 ]; then
	pass "a destroyed domain's id is free again (the next create gets id 1)"
else
	fail "ids freed by destroy" "s1 has id '$(field s1 2)'"
fi
lodge destroy s1 >/dev/null 2>&1

#!/bin/bash
# lodge-hyp's sandbox (issue 10): a running domain's process has seccomp on,
# no_new_privs, no capabilities, an unprivileged user and an empty root; a
# call outside the filter ends it with the call's name in lodge-hyp.log;
# restart on reboot still works; --no-sandbox says so loudly.
. "$(dirname "$0")/../lib.sh"

integ_begin "sandbox" kvm root minios

domain() {  # NAME [EXTRA-LINE]
	cat >"$ROOT/etc/lodge/domains/$1.cfg" <<CFG
name = "$1"
memory = 64
vcpus = 2
kernel = "$MINIOS"
on_reboot = "restart"
$2
CFG
}
pid_of() { lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n { print $9 }'; }
field() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
booted() { lodge console --log "$1" 2>/dev/null | grep -q 'minios> '; }

# confined PID: why not, or nothing.  Every thread, not just the first.
confined() {
	local pid=$1 t why=
	for t in /proc/"$pid"/task/*; do
		t=${t##*/}
		[ "$(awk '$1 == "Seccomp:" { print $2 }' "/proc/$pid/task/$t/status")" = 2 ] || why+="thread $t Seccomp not 2; "
		[ "$(awk '$1 == "NoNewPrivs:" { print $2 }' "/proc/$pid/task/$t/status")" = 1 ] || why+="thread $t NoNewPrivs not 1; "
		for c in CapEff CapPrm CapBnd CapInh CapAmb; do
			[ "$(awk -v k="$c:" '$1 == k { print $2 }' "/proc/$pid/task/$t/status")" = 0000000000000000 ] ||
				why+="thread $t $c not 0; "
		done
		[ "$(awk '$1 == "Uid:" { print $2 $3 $4 $5 }' "/proc/$pid/task/$t/status")" != 0000 ] || why+="thread $t uid 0; "
	done
	[ "$(awk '$1 == "Groups:" { print NF }' "/proc/$pid/status")" = 1 ] || why+="supplementary groups: $(grep Groups: "/proc/$pid/status"); "
	echo "$why"
}
# The root: not the host's (another file system), and empty.  readlink
# alone cannot tell: a root pivoted to in another mount namespace reads "/".
other_root() {
	[ "$(stat -Lc %d:%i "/proc/$1/root")" != "$(stat -c %d:%i /)" ] && [ -z "$(ls -A "/proc/$1/root")" ]
}

domain box
if ! lodge create box || ! wait_until 30 booted box; then
	fail "a sandboxed domain boots" "$(cat "$RUN/box/lodge-hyp.log" 2>/dev/null)"
	exit 0
fi
pid=$(pid_of box)
# A sanitizer build (make check SANITIZE=1) confines less, by design; its
# first boot says so on lodge create's terminal, not in the log.
sanitized=
[ "${SANITIZE:-}" = 1 ] && sanitized=1
grep -q 'sanitizer build' "$RUN/box/lodge-hyp.log" 2>/dev/null && sanitized=1
if [ -n "$sanitized" ]; then
	skip "a running domain is confined" "sanitizer build: no seccomp filter, no empty root"
	if [ "$(field "$pid" NoNewPrivs)" = 1 ] && [ "$(field "$pid" CapEff)" = 0000000000000000 ]; then
		pass "a sanitizer build still drops user and capabilities"
	else
		fail "a sanitizer build drops user and capabilities" "$(grep -E 'Uid|Cap|NoNew' "/proc/$pid/status" | tr '\n' ' ')"
	fi
else
	why=$(confined "$pid")
	if [ -n "$pid" ] && [ -z "$why" ]; then
		pass "a running domain's lodge-hyp: Seccomp 2, NoNewPrivs 1, no capabilities, uid $(field "$pid" Uid), every thread"
	else
		fail "a running domain is confined" "pid '$pid': $why"
	fi
	if other_root "$pid"; then
		pass "its root is an empty file system, not the host's / (readlink: $(readlink "/proc/$pid/root"))"
	else
		fail "its root is not the host's" "$(readlink "/proc/$pid/root"): $(ls -A "/proc/$pid/root" | head -3 | tr '\n' ' ')"
	fi
fi

# What a running domain is asked for still works inside the sandbox.
out=$( (sleep 0.5; echo "echo sandbox-console-ok"; sleep 1) | lodge console box 2>/dev/null | tr -d '\r')
vl=$(lodge vcpu-list box 2>&1)
if grep -q '^sandbox-console-ok' <<<"$out" && [ "$(grep -c '^box ' <<<"$vl")" = 2 ] &&
   lodge list -o tsv | awk -F'\t' '$1 == "box" && $5 == "running" { ok = 1 } END { exit !ok }'; then
	pass "console, list and vcpu-list work inside the sandbox"
else
	fail "console, list and vcpu-list in the sandbox" "$(tail -2 <<<"$out" | tr '\n' '|') $vl"
fi
if lodge vcpu-pin box all 0 && lodge pause box && lodge unpause box && lodge mem-set box 48 >/dev/null; then
	pass "vcpu-pin, pause, unpause and mem-set work inside the sandbox"
else
	fail "vcpu-pin, pause, mem-set in the sandbox" "$(tail -3 "$RUN/box/lodge-hyp.log")"
fi

# on_reboot = restart: the supervisor starts a new, again sandboxed, process.
lodge reboot box
if wait_until 30 sh -c "[ \$($LODGE --root $ROOT console --log box 2>/dev/null | grep -c 'Lodge Mini-OS') -ge 2 ]" &&
   wait_until 10 booted box && new=$(pid_of box) && [ -n "$new" ] && [ "$new" != "$pid" ] &&
   { [ -n "$sanitized" ] || [ -z "$(confined "$new")" ]; }; then
	pass "reboot with on_reboot = restart returns it running, sandboxed again (pid $pid -> $new)"
else
	fail "restart under the sandbox" "pid $pid -> '$(pid_of box)': $(tail -3 "$RUN/box/lodge-hyp.log" | tr '\n' '|')"
fi
lodge destroy box
if [ ! -d "$RUN/box" ] && ! pgrep -f "lodge-hyp.*--runtime-dir $RUN .*--name box" >/dev/null &&
   ! pgrep -f "lodge-hyp.*--name box .*--runtime-dir $RUN" >/dev/null; then
	pass "destroy ends the supervisor too and removes the runtime directory"
else
	fail "destroy under the sandbox" "$(ls -A "$RUN" 2>&1)"
fi

# A call outside the filter: the process dies, the log names the call, and
# the runtime directory stays for lodge list to report.
if [ -n "$sanitized" ]; then
	skip "a forbidden system call kills the domain" "sanitizer build: no seccomp filter"
else
	domain bad
	LODGE_HYP_TEST_FORBIDDEN_SYSCALL=1 lodge create bad >/dev/null 2>&1
	if wait_until 10 grep -q 'seccomp: forbidden system call socket (41)' "$RUN/bad/lodge-hyp.log" &&
	   wait_until 5 grep -q 'killed by signal' "$RUN/bad/lodge-hyp.log" &&
	   err=$(lodge list 2>&1 >/dev/null) && grep -q 'domain bad is gone' <<<"$err"; then
		pass "a forbidden system call kills it, naming the call in lodge-hyp.log"
	else
		fail "a forbidden system call" "$(tr '\n' '|' 2>&1 <"$RUN/bad/lodge-hyp.log")"
	fi
fi

# --no-sandbox: for debugging, and never quietly.
mkdir -p "$RUN"
msg=$(timeout 30 "$HYP" --kernel "$MINIOS" --memory 32 --name open --runtime-dir "$RUN" --detach --no-sandbox 2>&1)
sleep 0.5
pid=$(pid_of open)
if grep -q 'THE SANDBOX IS OFF' <<<"$msg" && grep -q 'THE SANDBOX IS OFF' "$RUN/open/lodge-hyp.log" &&
   [ -n "$pid" ] && [ "$(field "$pid" Seccomp)" = 0 ] && [ "$(field "$pid" Uid)" = 0 ]; then
	pass "--no-sandbox runs unconfined and warns on the terminal and in lodge-hyp.log"
else
	fail "--no-sandbox warns" "$msg; pid '$pid'; $(tr '\n' '|' 2>&1 <"$RUN/open/lodge-hyp.log")"
fi
lodge destroy open >/dev/null 2>&1

msg=$(timeout 30 "$HYP" --kernel "$MINIOS" --memory 32 --user no-such-user-here 2>&1); rc=$?
if [ $rc = 1 ] && [ "$(wc -l <<<"$msg")" = 1 ] && grep -q 'no-such-user-here: no such user' <<<"$msg"; then
	pass "--user with an unknown user is refused in one line"
else
	fail "--user unknown" "exit $rc: $msg"
fi

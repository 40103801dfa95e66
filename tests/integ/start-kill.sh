#!/bin/bash
# A start killed half-way (issue 17, defect 8): lodge create says why and
# exits non-zero, and neither the runtime directory nor the domain's CPU
# cgroup is left; the same name then starts.
#
# The start is stopped at a known point, after the domain's process joined
# its cgroup and before it can say it runs: LODGE_HYP is a wrapper that
# makes the runtime directory's lodge-hyp.log a FIFO before the real
# lodge-hyp starts, and both lodge-hyp processes block opening it for
# writing until someone reads it.  Then the test kills what it wants.
. "$(dirname "$0")/../lib.sh"

integ_begin "killed start" kvm root minios
# Where the domain's cgroup is: the CPU controller's hierarchy (v2 if it
# has the controller, else v1), as lodge-hyp finds it.
MNT=$(awk '$0 ~ / - cgroup2 / { print $5 }' /proc/self/mountinfo | while read -r m; do
	grep -qw cpu "$m/cgroup.controllers" 2>/dev/null && echo "$m"; done | head -1)
[ -n "$MNT" ] || MNT=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)cpu(,|$)/ { print $5; exit }' /proc/self/mountinfo)
if [ -z "$MNT" ]; then skip "killed start" "no cgroup CPU controller mounted"; exit 0; fi
CG=lodge-test-$$
echo "cgroup = \"$CG\"" >"$ROOT/etc/lodge/lodge.conf"
printf 'name = "sk"\nmemory = 32\nkernel = "%s"\n' "$MINIOS" >"$ROOT/etc/lodge/domains/sk.cfg"
# What a killed start left in the domain's cgroup: its processes (read
# from the cgroup at exit, so this test's), then the cgroup and its parent.
rm_cg() {
	local p
	while read -r p; do kill -9 "$p"; done 2>/dev/null <"$MNT/$CG/sk/cgroup.procs"
	rmdir "$MNT/$CG/sk" "$MNT/$CG" 2>/dev/null
}
at_exit rm_cg
CGDIR=$MNT/$CG/sk

cat >"$T/hyp" <<EOF
#!/bin/sh
mkdir -p "$RUN/sk" && mkfifo "$RUN/sk/lodge-hyp.log" || exit 1
echo \$\$ >"$T/waiter.pid"
exec "$HYP" "\$@"
EOF
chmod +x "$T/hyp"

# The domain process: the one in the cgroup whose parent, the supervisor,
# is in it too (the supervisor joins first, then starts it).
domain_proc() {
	local procs p
	procs=$(cat "$CGDIR/cgroup.procs" 2>/dev/null)
	for p in $procs; do
		grep -qx "$(awk '$1 == "PPid:" { print $2 }' "/proc/$p/status" 2>/dev/null)" <<<"$procs" && { echo "$p"; return 0; }
	done
	return 1
}
joined() { domain_proc >/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
dead() { gone "$1" || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }   # or a zombie
# left: what of the start is still there, or nothing.
left() {
	local why=
	[ -e "$RUN/sk" ] && why+="runtime directory: $(ls -A "$RUN/sk" | tr '\n' ' '); "
	[ -e "$CGDIR" ] && why+="cgroup $CGDIR; "
	echo "$why"
}
# starts_again: the name is free and the domain starts (then goes).
starts_again() { lodge create sk >/dev/null 2>&1 && lodge list | grep -q '^sk ' && lodge destroy sk >/dev/null 2>&1; }

# start_stopped: lodge create in the background, stopped at the FIFO with
# its supervisor and domain process in the cgroup; sets creator, child, super, waiter
# (or err).
start_stopped() {
	rm -f "$T/waiter.pid"
	LODGE_HYP=$T/hyp lodge create sk >"$T/create.out" 2>&1 &
	creator=$!
	if ! wait_until 30 joined; then
		err="the domain process never joined $CGDIR: $(cat "$T/create.out")"
		return 1
	fi
	child=$(domain_proc)
	super=$(awk '$1 == "PPid:" { print $2 }' "/proc/$child/status")
	waiter=$(cat "$T/waiter.pid")
}

# 1. The supervisor is killed (the domain process goes with it): nobody is
#    left to say why, so the waiting lodge-hyp says so.
if start_stopped; then
	kill -9 "$super"
	wait $creator
	rc=$?
	msg=$(cat "$T/create.out")
	why=$(left)
	if [ $rc -ne 0 ] && grep -q 'domain sk ended during start-up without a word (killed by a signal?)' <<<"$msg" &&
	   [ "$(wc -l <<<"$msg")" = 1 ] && [ -z "$why" ]; then
		pass "supervisor killed during start-up: one line (${msg%%;*}), no runtime directory, no cgroup"
	else
		fail "supervisor killed during start-up" "rc $rc: $msg; left: $why"
	fi
	if starts_again; then pass "the same name starts after it"; else fail "start after a killed start" "$(lodge create sk 2>&1)"; fi
else
	fail "supervisor killed during start-up" "$err"
fi

# 2. The domain process is killed: the supervisor lives, says what killed
#    it (to the caller and in lodge-hyp.log), and the agent removes the
#    rest.  The supervisor waits at the FIFO too: reading it lets it on.
if start_stopped; then
	kill -9 "$child"
	wait_until 10 dead "$child"
	cat "$RUN/sk/lodge-hyp.log" >"$T/hyp.log" &
	wait $creator
	rc=$?
	msg=$(cat "$T/create.out")
	why=$(left)
	if [ $rc -ne 0 ] && grep -q "domain sk: its lodge-hyp (pid $child) was killed by signal Killed during start-up" <<<"$msg" &&
	   [ "$(wc -l <<<"$msg")" = 1 ] && grep -q "pid $child) was killed by signal Killed" "$T/hyp.log" && [ -z "$why" ]; then
		pass "domain process killed during start-up: $(cut -c1-100 <<<"${msg%%;*}"); nothing left"
	else
		fail "domain process killed during start-up" "rc $rc: $msg; log: $(tr '\n' '|' <"$T/hyp.log"); left: $why"
	fi
	if starts_again; then pass "the same name starts after it"; else fail "start after a killed start" "$(lodge create sk 2>&1)"; fi
else
	fail "domain process killed during start-up" "$err"
fi

# 3. Every lodge-hyp of the start killed at once (the issue's pkill -9):
#    lodge create names the signal; whatever its clean-up could not yet
#    see as dead, lodge list removes, the cgroup included.
if start_stopped; then
	kill -9 "$waiter" "$super" "$child"
	wait $creator
	rc=$?
	msg=$(cat "$T/create.out")
	wait_until 10 gone "$child"
	wait_until 10 gone "$super"
	lodge list >/dev/null 2>&1
	why=$(left)
	if [ $rc -ne 0 ] && grep -q "domain sk did not start: its lodge-hyp (pid $waiter) was killed by signal Killed" <<<"$msg" &&
	   [ -z "$why" ]; then
		pass "every lodge-hyp of the start killed: lodge create says so, and after lodge list nothing is left"
	else
		fail "every lodge-hyp of the start killed" "rc $rc: $msg; left: $why"
	fi
else
	fail "every lodge-hyp of the start killed" "$err"
fi

#!/bin/bash
# lodge rename of a running domain, as xl renames a running Xen domain
# (issue 33): a Mini-OS domain made from a domains_dir config is renamed
# as it runs.  lodge list shows the new name and not the old; console,
# pause, unpause, reboot and destroy work by the new name; its config file
# and name key, runtime config, cgroup and the event log follow (a
# "renamed" line under the new name, naming the old); the old name is
# free for a new domain at once, and another domain on its disk is
# refused naming the new name.  A domain lodge-hyp will not rename (its
# guest crashed, kept by on_crash preserve) is put back as it was: its
# directory, cgroup and config file by the old name.  Refused, with nothing changed: a name
# another domain runs under or is defined under (a config of that name),
# Domain-0, a name that is none.
. "$(dirname "$0")/../lib.sh"

integ_begin rename kvm root minios
out=$T/out err=$T/err
CG=lodge-test-$$
echo "cgroup = \"$CG\"" >"$ROOT/etc/lodge/lodge.conf"
rmdir_cg() {
	local m
	awk '$0 ~ / - cgroup2? / { print $5 }' /proc/self/mountinfo | while read -r m; do rmdir "$m/$CG" 2>/dev/null; done
}
at_exit rmdir_cg
cgdir() { cat "$RUN/$1/cgroup" 2>/dev/null; }
names() { lodge list -o tsv 2>/dev/null | awk -F'\t' 'NR > 1 && $1 != "Domain-0" { print $1 }' | sort | tr '\n' ' '; }
evlog() { awk -v d="$1" -v e="$2" '$2 == d && $3 == e' "$ROOT/var/log/lodge/lodge.log" 2>/dev/null; }

mkdir -p "$T/store" && truncate -s 4M "$T/store/r.img"
domain_cfg r1 'on_reboot = "restart"' "disk = [ \"$T/store/r.img,raw,vda,w\" ]"
domain_cfg other
domain_cfg idle
if ! lodge create r1 || ! lodge create other || ! wait_until 60 booted r1 || ! wait_until 60 booted other; then
	fail "rename: setup" "$(lodge list 2>&1)"
	exit 1
fi
pid=$(field r1 9)
cg1=$(cgdir r1)

# ---- refusals first: nothing changes
ok=1 why=
for new in other idle Domain-0 'a/b' r1; do
	if lodge rename r1 "$new" >"$out" 2>"$err" || [ "$(wc -l <"$err")" != 1 ]; then
		ok=0
	fi
	why+="$new: $(cat "$out" "$err"); "
done
if [ $ok = 1 ] && [ "$(names)" = "other r1 " ] && [ -S "$RUN/r1/control" ] && [ -e "$DOMS/r1.cfg" ] &&
   [ "$(field r1 9)" = "$pid" ] && [ -z "$(evlog r1 renamed)" ]; then
	pass "rename: onto a running name, a defined name, Domain-0, no name, its own: refused in one line each, nothing changed ($why)"
else
	fail "rename: refusals" "$why; list: $(names)"
fi

# ---- the running domain renamed
if lodge rename r1 r2 >"$out" 2>"$err"; then rc=0; else rc=$?; fi
if [ $rc = 0 ] && [ ! -s "$err" ] && [ "$(names)" = "other r2 " ] && [ "$(field r2 9)" = "$pid" ] &&
   [ ! -e "$RUN/r1" ] && [ -S "$RUN/r2/control" ]; then
	pass "rename r1 r2 as it runs: lodge list shows r2 (same process, pid $pid), not r1"
else
	fail "rename r1 r2" "exit $rc: $(cat "$out" "$err"); list: $(names); run: $(ls "$RUN")"
fi
if [ ! -e "$DOMS/r1.cfg" ] && grep -qx 'name = "r2"' "$DOMS/r2.cfg" && lodge config r2 | grep -q 'name = "r2"'; then
	pass "rename: its config file is r2.cfg naming r2, and lodge config r2 (its runtime config) says r2"
else
	fail "rename: config files" "$(ls "$DOMS"); $(lodge config r2 2>&1 | head -3 | tr '\n' '|')"
fi
line=$(evlog r2 renamed)
if [[ $line == *" r2 renamed uid=0,pid="*" from r1" ]]; then
	pass "rename: the event log says it under the new name, naming the old ($line)"
else
	fail "rename: event log" "'$line'; $(tail -n 3 "$ROOT/var/log/lodge/lodge.log" | tr '\n' '|')"
fi
if [ -z "$cg1" ]; then
	skip "rename: cgroup" "r1 ran in no cgroup"
elif [ "$(cgdir r2)" = "${cg1%/r1}/r2" ] && [ -d "$(cgdir r2)" ] && [ ! -e "$cg1" ] &&
     grep -qx "$pid" "$(cgdir r2)/cgroup.procs"; then
	pass "rename: its cgroup moved with it ($(cgdir r2), its process in it)"
else
	fail "rename: cgroup" "was $cg1, now '$(cgdir r2)'"
fi

# ---- the new name works, the old is free
lodge console --log r2 >"$out" 2>&1
(sleep 1; echo "echo renamed-$$"; sleep 1) | timeout 20 "$LODGE" --root "$ROOT" console r2 >/dev/null 2>&1
if grep -q 'minios> ' "$out" && wait_until 10 eval 'console_log r2 | grep -q "^renamed-$$"'; then
	pass "rename: console r2: its history, and a command typed in is answered"
else
	fail "rename: console r2" "$(console_log r2 | tail -3 | tr '\n' '|')"
fi
if lodge pause r2 && [ "$(field r2 5)" = paused ] && lodge unpause r2 && [ "$(field r2 5)" = running ] &&
   [ -n "$(evlog r2 paused)" ] && [ -n "$(evlog r2 unpaused)" ]; then
	pass "rename: pause and unpause r2 (the event log names r2)"
else
	fail "rename: pause r2" "$(field r2 5)"
fi
domain_cfg r1
if lodge create r1 >"$out" 2>&1 && wait_until 60 booted r1 && [ "$(names)" = "other r1 r2 " ]; then
	pass "rename: a new domain r1 (its config made again) starts beside r2"
else
	fail "rename: r1 again" "$(cat "$out"); list: $(names)"
fi
lodge destroy r1 >/dev/null 2>&1
# (domain_cfg made r1.cfg again for that; r2 keeps r2.cfg)
domain_cfg r3 "disk = [ \"$T/store/r.img,raw,vda,w\" ]"
if ! lodge create r3 >"$out" 2>&1 && grep -q "disk $T/store/r.img is in use by domain r2" "$out" && [ "$(names)" = "other r2 " ]; then
	pass "rename: a domain on r2's disk is refused naming r2, not its old name ($(grep -o 'disk .*' "$out" | head -1))"
else
	fail "rename: disk holder" "$(cat "$out"); list: $(names)"
fi

# ---- a reboot (on_reboot restart: a new boot by the supervisor) keeps the new name
boots=$(evlog r2 rebooted | wc -l)
if lodge reboot r2 && wait_until 30 eval '[ $(evlog r2 rebooted | wc -l) -gt '"$boots"' ]' && wait_until 60 booted r2 &&
   [ "$(names)" = "other r2 " ] && [ -S "$RUN/r2/control" ]; then
	pass "rename: r2 rebooted is still r2 (event log: rebooted under r2)"
else
	fail "rename: reboot r2" "list: $(names); $(tail -n 3 "$ROOT/var/log/lodge/lodge.log" | tr '\n' '|')"
fi

# ---- a rename said on the control socket alone (as a control_group
# member could) moves nothing: the supervisor takes the name from the
# directory, logs no renamed line, and cleans up r2 at the end
said=$(python3 - "$RUN/r2/control" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"lodge/1 rename zz\n")
print(s.recv(200).decode().strip())
PY
)
if [ "$said" = ok ] && [ "$(names)" = "other r2 " ] && [ ! -e "$RUN/zz" ] && [ -z "$(evlog zz renamed)" ] &&
   [ "$(evlog r2 renamed | wc -l)" = 1 ]; then
	pass "rename: 'rename zz' on r2's socket alone moves nothing: still r2 in list, no renamed line"
else
	fail "rename: socket alone" "said '$said'; list: $(names); $(tail -n 2 "$ROOT/var/log/lodge/lodge.log" | tr '\n' '|')"
fi

# ---- destroyed by the new name: nothing of it left
cg2=$(cgdir r2)
if lodge destroy r2 && wait_until 10 eval '[ ! -e "$RUN/r2" ]' && [ "$(names)" = "other " ] &&
   { [ -z "$cg2" ] || wait_until 10 eval '[ ! -e "$cg2" ]'; } && [ -n "$(evlog r2 destroyed)" ]; then
	pass "rename: destroy r2: its runtime directory and cgroup gone, the event log says destroyed under r2"
else
	fail "rename: destroy r2" "list: $(names); run: $(ls "$RUN"); cgroup $cg2"
fi

# ---- lodge-hyp refuses (the guest crashed, kept): every step put back
domain_cfg pc 'on_crash = "preserve"'
if lodge create pc && wait_until 60 booted pc; then
	cgpc=$(cgdir pc)
	(sleep 1; echo crash; sleep 1) | timeout 20 "$LODGE" --root "$ROOT" console pc >/dev/null 2>&1
	wait_until 20 eval '[ "$(field pc 5)" = crashed ]'
	if ! lodge rename pc pd >"$out" 2>"$err" && [ "$(wc -l <"$err")" = 1 ] && grep -q 'cannot rename domain pc' "$err" &&
	   [ -S "$RUN/pc/control" ] && [ ! -e "$RUN/pd" ] && [ -e "$DOMS/pc.cfg" ] && [ ! -e "$DOMS/pd.cfg" ] &&
	   [ "$(cgdir pc)" = "$cgpc" ] && { [ -z "$cgpc" ] || [ -d "$cgpc" ]; } && [ -z "$(evlog pd renamed)$(evlog pc renamed)" ] &&
	   [ "$(field pc 5)" = crashed ]; then
		pass "rename of a crashed, kept domain: lodge-hyp refuses, and its directory, cgroup and config are put back ($(cat "$err"))"
	else
		fail "rename: put back" "$(cat "$out" "$err"); list: $(names); run: $(ls "$RUN"); cgroup $(cgdir pc) was $cgpc"
	fi
	lodge destroy pc >/dev/null 2>&1
else
	fail "rename: pc boots" "$(lodge list 2>&1)"
fi

# ---- not running: the config alone, as before
if lodge rename idle idle2 && [ ! -e "$DOMS/idle.cfg" ] && grep -qx 'name = "idle2"' "$DOMS/idle2.cfg"; then
	pass "rename of a domain not running: its config file and name key"
else
	fail "rename: not running" "$(ls "$DOMS")"
fi

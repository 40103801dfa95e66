#!/bin/bash
# Who may drive a domain: root always; with lodge.conf's control_group and
# stats_group, members of those groups (full control, or reading only),
# checked by lodge-hyp on every connection from the kernel's credentials
# of the peer; nobody else, whatever they try.  Users are played with
# setpriv (uid 65534 with chosen groups), so no account is made.
. "$(dirname "$0")/../lib.sh"

integ_begin "access control" kvm root minios "cmd:setpriv:util-linux"
R=$ROOT
CONTROL=54321 STATS=54322
# run_as GROUPS CMD...: run CMD as uid 65534 with only these supplementary groups
run_as() {
	local g=--clear-groups
	[ -n "$1" ] && g=--groups=$1
	shift
	timeout 30 setpriv --reuid=65534 --regid=65534 "$g" "$@"
}
# as GROUPS ARGS...: lodge ARGS as that user
as() {
	local g=$1
	shift
	run_as "$g" "$LODGE" --root "$R" "$@"
}
chmod 755 "$T"
chmod -R a+rX "$R" "$(dirname "$LODGE")" 2>/dev/null
state() { lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n { print $5 }'; }

# Without groups in lodge.conf: root only, and the directory says so.
truncate -s 4M "$T/acl-disk.img"
printf 'name = "acl"\nmemory = 32\nkernel = "%s"\ndisk = [ "%s,raw,xvda,rw" ]\n' "$MINIOS" "$T/acl-disk.img" \
	>"$R/etc/lodge/domains/acl.cfg"
lodge create acl >/dev/null || { fail "access control" "create failed"; exit 0; }
if [ "$(stat -c %a "$R/run/lodge/acl")" = 700 ] && ! as "" pause acl >/dev/null 2>&1 && [ "$(state acl)" = running ]; then
	pass "by default only root reaches a domain (runtime directory 0700; another user's pause fails)"
else
	fail "root only by default" "mode $(stat -c %a "$R/run/lodge/acl"), state $(state acl)"
fi
lodge destroy acl >/dev/null

printf 'control_group = "%s"\nstats_group = "%s"\n' $CONTROL $STATS >"$R/etc/lodge/lodge.conf"
lodge create acl >/dev/null || { fail "access control" "create with groups failed"; exit 0; }
msg=$(as "" pause acl 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'permission denied' <<<"$msg" && [ "$(state acl)" = running ]; then
	pass "a user in neither group is refused: $(head -1 <<<"$msg" | cut -c1-90)"
else
	fail "user in neither group" "rc $rc: $msg; state $(state acl)"
fi
# It may not read the status: the domain is listed as one it could not
# ask, state '?' and no figures, with the reason, and list fails.
out=$(as "" list 2>"$T/err"); rc=$?
if [ $rc -ne 0 ] && grep -Eq '^acl +- +- +- +\? +-$' <<<"$out" && grep -q 'acl: cannot ask.*permission denied' "$T/err"; then
	pass "a user in neither group does not see the domain's status (listed as '?': $(cut -c1-60 "$T/err"))"
else
	fail "status hidden from others" "rc $rc: $out; $(cat "$T/err")"
fi
if as $STATS list 2>/dev/null | grep -q '^acl '; then
	pass "the stats group lists the domain"
else
	fail "stats group lists" "$(as $STATS list 2>&1)"
fi
# The runtime directory lets everyone reach the socket (0711); what is in
# it (the resolved config: command line, disk paths, MACs; the logs) is
# root's, and the config the groups' too (issue 17, defect 6).
D=$R/run/lodge/acl
why=
[ -f "$D/config" ] || why="no $D/config; "
for f in config console.log lodge-hyp.log cgroup; do
	[ -e "$D/$f" ] && run_as "" cat "$D/$f" >/dev/null 2>&1 && why+="$f is readable ($(stat -c %a "$D/$f")); "
done
if [ -z "$why" ]; then
	pass "a user in neither group reads nothing in the runtime directory (config $(stat -c %A "$D/config"))"
else
	fail "runtime files hidden from others" "$why"
fi
out=$(as $STATS block-list acl 2>&1)
if grep -q "xvda .*$T/acl-disk.img" <<<"$out" && run_as $CONTROL cat "$D/config" | grep -q "acl-disk.img"; then
	pass "the stats group still reads the config (block-list shows the disk), the control group too"
else
	fail "groups read the config" "block-list: $out; control: $(run_as $CONTROL cat "$D/config" 2>&1 | head -2)"
fi
msg=$(as $STATS pause acl 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'permission denied' <<<"$msg" && [ "$(state acl)" = running ]; then
	pass "the stats group may not pause it"
else
	fail "stats group is read-only" "rc $rc: $msg; state $(state acl)"
fi
if as $CONTROL pause acl && [ "$(state acl)" = paused ] && as $CONTROL unpause acl && [ "$(state acl)" = running ]; then
	pass "the control group pauses and unpauses it"
else
	fail "control group controls" "state $(state acl)"
fi
if as $CONTROL,$STATS destroy acl >/dev/null && [ -z "$(state acl)" ]; then
	pass "the control group destroys it"
else
	fail "control group destroys" "state $(state acl)"
fi
# One group: the config is that group's by ownership, no ACL needed.
printf 'stats_group = "%s"\n' $STATS >"$R/etc/lodge/lodge.conf"
if lodge create acl >/dev/null; then
	if [ "$(stat -c %a:%g "$D/config")" = 640:$STATS ] && ! run_as "" cat "$D/config" >/dev/null 2>&1 &&
	   as $STATS block-list acl 2>/dev/null | grep -q "$T/acl-disk.img"; then
		pass "with only stats_group the config is 0640 and that group's; others cannot read it"
	else
		fail "config with one group" "$(stat -c '%A %G' "$D/config")"
	fi
	lodge destroy acl >/dev/null
else
	fail "config with one group" "create failed"
fi
msg=$(printf 'control_group = "no-such-group-%s"\n' $$ >"$R/etc/lodge/lodge.conf"; lodge list 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q "lodge.conf:1" <<<"$msg" && grep -q "no group" <<<"$msg"; then
	pass "an unknown group in lodge.conf: $(head -1 <<<"$msg" | sed 's|.*/etc/lodge/||' | cut -c1-80)"
else
	fail "unknown group refused" "rc $rc: $msg"
fi

#!/bin/bash
# Who may drive a domain: root always; with lodge.conf's control_group and
# stats_group, members of those groups (full control, or reading only),
# checked by lodge-hyp on every connection from the kernel's credentials
# of the peer; nobody else, whatever they try.  Users are played with
# setpriv (uid 65534 with chosen groups), so no account is made.
. "$(dirname "$0")/../lib.sh"

need_kvm "access control" || exit 0
need_root "access control" || exit 0
if [ ! -f "$MINIOS" ]; then skip "access control" "Mini-OS not built"; exit 0; fi
if ! command -v setpriv >/dev/null; then skip "access control" "setpriv (util-linux) not installed"; exit 0; fi
T=$TMPDIR_TEST
R=$T/root
LODGE=$BUILD/lodge
CONTROL=54321 STATS=54322
lodge() { timeout 30 "$LODGE" --root "$R" "$@"; }
# as GROUPS CMD...: run lodge as uid 65534 with only these supplementary groups
as() {
	local g=--clear-groups
	[ -n "$1" ] && g=--groups=$1
	shift
	timeout 30 setpriv --reuid=65534 --regid=65534 "$g" "$LODGE" --root "$R" "$@"
}
cleanup() {
	for d in acl open; do lodge destroy $d >/dev/null 2>&1; done
	rm -rf "$T"
}
trap cleanup EXIT
chmod 755 "$T"
mkdir -p "$R/etc/lodge/domains"
chmod -R a+rX "$R" "$(dirname "$LODGE")" 2>/dev/null
state() { lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n { print $5 }'; }

# Without groups in lodge.conf: root only, and the directory says so.
printf 'name = "acl"\nmemory = 32\nkernel = "%s"\n' "$MINIOS" >"$R/etc/lodge/domains/acl.cfg"
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
msg=$(printf 'control_group = "no-such-group-%s"\n' $$ >"$R/etc/lodge/lodge.conf"; lodge list 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q "lodge.conf:1" <<<"$msg" && grep -q "no group" <<<"$msg"; then
	pass "an unknown group in lodge.conf: $(head -1 <<<"$msg" | sed 's|.*/etc/lodge/||' | cut -c1-80)"
else
	fail "unknown group refused" "rc $rc: $msg"
fi

#!/bin/bash
# lodge list --all (issue 35): the domains defined in domains_dir that are
# not running are listed after the running ones, state off, with their
# config's memory and vCPUs and each domain's autostart, in text, -o json
# and -o tsv; a config that does not load is listed all the same, its
# error on stderr.  Without --all, only the running domains.
. "$(dirname "$0")/../lib.sh"

integ_begin "list --all" kvm minios cmd:python3
printf 'name = "on1"\nmemory = 32\nkernel = "%s"\nautostart = true\n' "$MINIOS" >"$DOMS/on1.cfg"
printf 'name = "off1"\nmemory = 96\nvcpus = 2\nkernel = "%s"\n' "$MINIOS" >"$DOMS/off1.cfg"
printf 'name = "broken"\nmemory = lots\n' >"$DOMS/broken.cfg"
if ! lodge create on1 >"$T/create" 2>&1; then
	fail "list --all" "create on1: $(tail -2 "$T/create")"
	exit 0
fi

lodge list >"$T/list.txt" 2>&1
if grep -q '^on1 ' "$T/list.txt" && ! grep -q '^off1 ' "$T/list.txt"; then
	pass "list: the running domain alone"
else
	fail "list" "$(tr '\n' '|' <"$T/list.txt")"
fi

lodge list --all >"$T/all.txt" 2>"$T/all.err"
row() { awk -v n="$1" '$1 == n { $1 = $1; print }' "$T/all.txt"; }
if [[ "$(row off1)" == "off1 - 96 2 off - no" ]] && [[ "$(row on1)" =~ ^on1\ [0-9]+\ 32\ 1\ r-----\ .*\ yes$ ]] &&
   [ "$(awk '{ print $1 }' "$T/all.txt" | tr '\n' ' ')" = "Name Domain-0 on1 broken off1 " ]; then
	pass "list --all: off1 state off with its config's 96 MiB and 2 vCPUs, autostart no; on1 running, autostart yes"
else
	fail "list --all" "$(tr '\n' '|' <"$T/all.txt")"
fi
if grep -q 'broken.cfg:2' "$T/all.err" && [[ "$(row broken)" == "broken - - - off - -" ]]; then
	pass "list --all: a config that does not load is listed, its FILE:LINE on stderr"
else
	fail "list --all broken" "$(row broken); stderr: $(cat "$T/all.err")"
fi

lodge list --all -o json >"$T/all.json" 2>/dev/null
if python3 -c '
import json, sys
d = {r["name"]: r for r in json.load(open(sys.argv[1]))}
assert d["off1"]["state"] == "off" and d["off1"]["autostart"] is False and d["off1"]["memory_mib"] == 96
assert d["off1"]["id"] is None
assert d["on1"]["state"] == "running" and d["on1"]["autostart"] is True
assert d["Domain-0"]["autostart"] is None
' "$T/all.json"; then
	pass "list --all -o json: state off, autostart true/false (null for the host)"
else
	fail "list --all -o json" "$(tr '\n' ' ' <"$T/all.json")"
fi

lodge list --all -o tsv -H >"$T/all.tsv" 2>/dev/null
if [ "$(head -1 "$T/all.tsv" | awk -F'\t' '{ print $NF }')" = autostart ] &&
   [ "$(awk -F'\t' '$1 == "off1" { print $5, $NF }' "$T/all.tsv")" = "off no" ] &&
   [ "$(head -1 "$T/all.tsv" | cut -f1-15)" = "$(lodge list -o tsv -H | head -1)" ]; then
	pass "list --all -o tsv: autostart the last column, the rest as list's"
else
	fail "list --all -o tsv" "$(tr '\n' '|' <"$T/all.tsv")"
fi

if [ "$(lodge list --all off1 2>&1 | awk 'NR == 2 { print $1, $5 }')" = "off1 off" ] &&
   ! lodge list off1 >/dev/null 2>&1; then
	pass "list --all off1: that defined domain, off (without --all: not running, an error)"
else
	fail "list --all off1" "$(lodge list --all off1 2>&1 | tr '\n' '|')"
fi

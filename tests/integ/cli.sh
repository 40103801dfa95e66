#!/bin/bash
# The lodge command line, read one way for every command (issue 18):
# --help and --version on every command (the list from lodge --help),
# long and short options alike, numbers read strictly, one line on
# stderr and exit 2 for a command line that is wrong, domain names
# checked, and with a real Mini-OS domain: driven by its ID, and
# lodge list NAME listing only that.
. "$(dirname "$0")/../lib.sh"

integ_begin "command line"
out=$TMPDIR_TEST/out
err=$TMPDIR_TEST/err
VERSION=$(sed -n 's/^#define LODGE_VERSION "\(.*\)"/\1/p' "$TOP/src/common/version.h")

# ---- lodge --help, lodge --version, lodge-hyp --version ---------------------------------
lodge --help >"$out" 2>"$err"; rc=$?
cmds=$(awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 }' "$out")
if [ $rc -eq 0 ] && [ ! -s "$err" ] && head -1 "$out" | grep -q '^usage: lodge' && [ "$(wc -w <<<"$cmds")" -ge 25 ]; then
	pass "lodge --help: the usage and $(wc -w <<<"$cmds") commands on stdout, exit 0"
else
	fail "lodge --help" "exit $rc, $(wc -w <<<"$cmds") commands; stderr: $(cat "$err")"
fi
for prog in "$LODGE" "$HYP"; do
	name=$(basename "$prog")
	v=$("$prog" --version 2>"$err"); rc=$?
	if [ $rc -eq 0 ] && [ "$v" = "$name $VERSION" ] && [ ! -s "$err" ]; then
		pass "$name --version: '$v'"
	else
		fail "$name --version" "exit $rc: '$v'; stderr: $(cat "$err")"
	fi
done

# ---- every command: --help (and -h) and --version -----------------------------------------
bad=
for c in $cmds; do
	for opt in --help -h; do
		lodge "$c" $opt >"$out" 2>"$err"; rc=$?
		if [ $rc -ne 0 ] || [ -s "$err" ] || ! head -1 "$out" | grep -q "^usage: lodge $c\\b" ||
		   ! grep -q -- '--help' "$out"; then
			bad+="$c $opt (exit $rc: $(head -1 "$out")$(head -1 "$err")); "
		fi
	done
	lodge "$c" --version >"$out" 2>"$err"; rc=$?
	if [ $rc -ne 0 ] || [ -s "$err" ] || [ "$(cat "$out")" != "lodge $VERSION" ]; then
		bad+="$c --version (exit $rc: $(cat "$out" "$err")); "
	fi
done
if [ -z "$bad" ] && [ -n "$cmds" ]; then
	pass "every command's --help and -h print its usage on stdout, --version the version; exit 0, stderr empty"
else
	fail "--help and --version of every command" "$bad"
fi
# lodge help COMMAND is the same as COMMAND --help.
if [ "$(lodge help save 2>&1)" = "$(lodge save --help 2>&1)" ]; then
	pass "lodge help save is lodge save --help"
else
	fail "lodge help save" "$(lodge help save 2>&1 | head -2)"
fi

# ---- a wrong command line: one line on stderr naming what and the usage, exit 2 ------------
one_usage() {  # NAME PATTERN ARGS...: exit 2, nothing on stdout, one line on stderr
	local name=$1 pat=$2 rc
	shift 2
	lodge "$@" >"$out" 2>"$err.raw" </dev/null; rc=$?
	tr -d '\r' <"$err.raw" >"$err"
	if [ $rc -eq 2 ] && [ ! -s "$out" ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -Eq -- "$pat" "$err"; then
		pass "$name: one line, exit 2 ($(cat "$err"))"
	else
		fail "$name" "exit $rc; stdout: $(head -2 "$out"); stderr: $(cat "$err")"
	fi
}
one_usage "save with one argument" "^lodge: error: .*; usage: lodge save \[-c\] \[-k\] DOMAIN FILE$" save x
one_usage "pause without a domain" "usage: lodge pause DOMAIN$" pause
one_usage "pause with two domains" "too many arguments .*usage: lodge pause DOMAIN$" pause a b
one_usage "an unknown long option" "unknown option '--bogus'.*usage: lodge list" list --bogus
one_usage "an unknown short option" "unknown option '-z'.*usage: lodge save" save -z a b
one_usage "a flag given a value" "--keep takes no value.*usage: lodge save" save --keep=yes a b
one_usage "an option without its value" "-n needs a value.*usage: lodge top" top -b -n
one_usage "a long option without its value" "--secret-file needs a value.*usage: lodge migrate" migrate --secret-file
one_usage "an unknown command" "unknown command 'frobnicate'" frobnicate
one_usage "the dashboard's unknown option" "unknown option '--bogus'.*usage: lodge top" --bogus
one_usage "--root without a directory" "--root needs a directory" --root

# ---- numbers read strictly ----------------------------------------------------------------
one_usage "top -b -n abc" "-n 'abc' is not a whole number" top -b -n abc
one_usage "top -b -n 0" "-n 0 is out of range" top -b -n 0
one_usage "top -d soon" "-d 'soon' is not a number of seconds" top -b -n 1 -d soon
one_usage "lodge -d 1e3 (the dashboard's options alone)" "-d '1e3' is not a number of seconds" -b -d 1e3
one_usage "shutdown -t 5x" "-t '5x' is not a whole number" shutdown -w -t 5x web
one_usage "sched --weight 1e3" "--weight '1e3' is not a whole number" sched web --weight 1e3
one_usage "sched --weight 70000" "--weight 70000 is out of range \(1 to 65535\)" sched web --weight 70000
one_usage "capture -c 0" "-c 0 is out of range" capture web -c 0
one_usage "list -o csv" "--output 'csv' is not one of: text tsv json|-o 'csv' is not one of: text tsv json" list -o csv
# The batch dashboard still runs: two tables, then it ends.
if timeout 20 "$LODGE" --root "$ROOT" top -b -n 2 -d 0.1 >"$out" 2>"$err" && [ "$(grep -c '^ *ID NAME' "$out")" -eq 2 ] &&
   [ ! -s "$err" ]; then
	pass "top -b -n 2 -d 0.1 prints two tables and ends"
else
	fail "top -b -n 2" "$(head -3 "$out"); $(cat "$err")"
fi

# ---- domain names on the command line are checked ------------------------------------------
refused_name() {  # NAME PATTERN ARGS...: exit 1, one line
	local name=$1 pat=$2 rc
	shift 2
	lodge "$@" >"$out" 2>"$err.raw"; rc=$?
	tr -d '\r' <"$err.raw" >"$err"
	if [ $rc -eq 1 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -Eq -- "$pat" "$err" && [ ! -e "$ROOT/run/x" ]; then
		pass "$name: refused in one line ($(cat "$err"))"
	else
		fail "$name" "exit $rc: $(cat "$err")"
	fi
}
refused_name "pause ../x" "'\.\./x' is not a domain name or ID" pause ../x
refused_name "destroy a/b" "'a/b' is not a domain name or ID" destroy a/b
refused_name "console .hidden" "'\.hidden' is not a domain name or ID" console .hidden
refused_name "save -x (a name starting with -) after --" "'-x' is not a domain name or ID" save -- -x "$TMPDIR_TEST/f"
refused_name "destroy Domain-0" "Domain-0 is the host" destroy Domain-0
refused_name "destroy 0 (Domain-0's ID)" "Domain-0 is the host" destroy 0
refused_name "pause of an ID no domain has" "no domain with name or ID 77 is running" pause 77
refused_name "pause of a name not running" "no domain named nosuch is running" pause nosuch

# ---- a real domain: by its ID, and lodge list NAME -----------------------------------------
need_kvm "domains by ID" || exit 0
if [ ! -f "$MINIOS" ]; then skip "domains by ID" "Mini-OS not built"; exit 0; fi
cleanup() {
	for d in "$RUN"/*/; do [ -d "$d" ] && lodge destroy "$(basename "$d")" >/dev/null 2>&1; done
	rm -rf "$TMPDIR_TEST"
}
trap cleanup EXIT
for n in one two; do
	printf 'name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\n' "$n" "$MINIOS" >"$DOMS/$n.cfg"
done
if ! lodge create one || ! lodge create two; then
	fail "domains by ID" "they did not start"
	exit 0
fi
id=$(field two 2)
if lodge pause "$id" && [ "$(field two 5)" = paused ] && [ "$(field one 5)" = running ] &&
   lodge unpause "$id" && [ "$(field two 5)" = running ]; then
	pass "pause and unpause by ID ($id): that domain, not the other"
else
	fail "pause by ID" "id '$id': $(lodge list -o tsv 2>&1)"
fi
if [ "$(lodge list -o tsv "$id" | cut -f1)" = two ] && [ "$(lodge vcpu-list -o tsv "$id" | cut -f1 | sort -u)" = two ] &&
   lodge sched "$id" | grep -q '^two '; then
	pass "list, vcpu-list and sched take the ID too"
else
	fail "list/vcpu-list/sched by ID" "$(lodge list "$id" 2>&1); $(lodge vcpu-list "$id" 2>&1)"
fi
lodge list two >"$out" 2>"$err"; rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$out")" -eq 2 ] && grep -Eq '^two +[0-9]+ ' "$out" && ! grep -q '^one ' "$out" &&
   ! grep -q '^Domain-0' "$out" && [ ! -s "$err" ]; then
	pass "lodge list two: the header and that domain only"
else
	fail "lodge list NAME" "exit $rc: $(cat "$out" "$err")"
fi
lodge list -o tsv two nosuch one >"$out" 2>"$err.raw"; rc=$?
tr -d '\r' <"$err.raw" >"$err"
if [ $rc -eq 1 ] && [ "$(cut -f1 "$out" | tr '\n' ' ')" = "two one " ] &&
   grep -qx 'lodge: error: no domain named nosuch is running' "$err"; then
	pass "lodge list two nosuch one: the two that run, in that order, and one error for nosuch"
else
	fail "lodge list with a name not running" "exit $rc: $(cat "$out" "$err")"
fi
if [ "$(lodge list -l | head -1)" = "$(lodge list --long | head -1)" ] &&
   [ "$(lodge list -o tsv | cut -f1)" = "$(lodge list --output=tsv | cut -f1)" ] &&
   lodge list --long | head -1 | grep -q 'Addresses'; then
	pass "long and short options alike: -l and --long, -o tsv and --output=tsv"
else
	fail "long options" "$(lodge list --long 2>&1 | head -1)"
fi
if lodge destroy "$id" && [ ! -d "$RUN/two" ] && [ "$(field one 5)" = running ]; then
	pass "destroy by ID ends that domain"
else
	fail "destroy by ID" "$(ls "$RUN"); $(lodge list 2>&1)"
fi

#!/bin/bash
# Text that is not what it should be.  A control character in a path or a
# name is refused where it comes in (lodge check, lodge create, lodge-hyp's
# options) with one line that shows it escaped, and no raw control byte
# ever reaches the terminal; a file that is no config (a secret, a shadow
# file) is refused without a word of it quoted; a config over 1 MiB is
# refused unread, and one in domains/ does not hold up lodge autostart.
. "$(dirname "$0")/../lib.sh"

LODGE_TIMEOUT=20
integ_begin "untrusted text"

# raw_control FILE: a control byte other than the line end (\n, or the
# \r\n of log lines), C1 controls (UTF-8 c2 80-9f) included.
raw_control() { LC_ALL=C grep -aqP '[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]|\r(?!$)|\xc2[\x80-\x9f]' "$1"; }
# refused NAME PATTERN CMD...: exit 1, one line matching PATTERN, no raw control byte.
refused() {
	local name=$1 pat=$2 rc
	shift 2
	"$@" </dev/null >"$T/out" 2>&1
	rc=$?
	if [ $rc -ne 1 ]; then
		fail "$name" "exit status $rc, wanted 1: $(od -c "$T/out" | head -3)"
	elif raw_control "$T/out"; then
		fail "$name" "raw control bytes in the output: $(od -c "$T/out" | head -5)"
	elif [ "$(wc -l <"$T/out")" -ne 1 ] || ! grep -aEq -- "$pat" "$T/out"; then
		fail "$name" "wanted one line matching '$pat': $(cat -A "$T/out")"
	else
		pass "$name"
	fi
}

# Files whose names hold a newline and an ESC sequence exist: only the
# control characters can be what is refused.
nl_kernel=$T/$'ker\nnel state crashed'
esc_disk=$T/$'disk\e[2J\e]0;pwned\a.img'
cp "${MINIOS:-/bin/true}" "$nl_kernel" 2>/dev/null || : >"$nl_kernel"
truncate -s 1M "$esc_disk"
printf 'name = "nl"\nkernel = "%s"\n' "${nl_kernel//$'\n'/\\n}" >"$DOMS/nl.cfg"
printf "name = 'nl2'\nkernel = '%s'\n" "$nl_kernel" >"$DOMS/nl2.cfg"
printf "name = 'esc'\nkernel = '%s'\ndisk = [ 'file:%s,vda,w' ]\n" "$T/k" "$esc_disk" >"$DOMS/esc.cfg"
: >"$T/k"
refused "lodge check: a kernel path with a \\n escape" 'nl\.cfg:2: kernel: contains a control character \(\\n\)' \
	lodge check "$DOMS/nl.cfg"
refused "lodge check: a kernel path with a newline" 'nl2\.cfg:2: kernel: contains a control character \(\\n\)' \
	lodge check nl2
refused "lodge check: a disk path with ESC" 'esc\.cfg:3: disk: contains a control character \(\\e\)' \
	lodge check esc
refused "lodge create: a kernel path with a newline" 'nl\.cfg:2: kernel: contains a control character \(\\n\)' \
	lodge create nl
refused "lodge create: a disk path with ESC" 'esc\.cfg:3: disk: contains a control character \(\\e\)' \
	lodge create "$DOMS/esc.cfg"
if [ -z "$(ls -A "$ROOT/run/lodge" 2>/dev/null)" ]; then
	pass "lodge create refused them before making anything"
else
	fail "lodge create left something behind" "$(ls -A "$ROOT/run/lodge")"
fi
refused "lodge check: a file name with ESC is shown escaped" 'disk\\e\[2J\\e\]0;pwned\\x07\.img:1: not a Lodge config' \
	lodge check "$esc_disk"

refused "lodge-hyp --kernel with a newline" "--kernel '/tmp/a\\\\nb': control characters are not allowed" \
	timeout 20 "$HYP" --kernel $'/tmp/a\nb'
refused "lodge-hyp --disk with ESC" "--disk '.*\\\\e\\[2J.*': control characters are not allowed" \
	timeout 20 "$HYP" --kernel "$T/k" --disk "$esc_disk"
refused "lodge-hyp --name with a newline" "--name 'web\\\\nstate crashed': control characters" \
	timeout 20 "$HYP" --kernel "$T/k" --name $'web\nstate crashed' --runtime-dir "$T/run"
refused "lodge-hyp --cmdline with ESC" "--cmdline 'console=ttyS0\\\\e\\[31m': control characters" \
	timeout 20 "$HYP" --kernel "$T/k" --cmdline $'console=ttyS0\e[31m'
if [ ! -e "$T/run" ]; then
	pass "lodge-hyp made no runtime directory for a refused name"
else
	fail "lodge-hyp refused name" "$(ls -A "$T/run")"
fi

# --- Files that are no config: nothing of them is quoted.
secret=$T/migration.secret
printf 's3cr3t-%s\n' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$secret"
chmod 600 "$secret"
refused "lodge check on a secret file: not a Lodge config" '^[^ ]*migration\.secret:1: not a Lodge config' \
	lodge check "$secret"
if grep -aqF "$(cut -c1-12 "$secret")" "$T/out" || grep -aq 's3cr3t' "$T/out"; then
	fail "lodge check on a secret file quotes none of it" "$(cat "$T/out")"
else
	pass "lodge check on a secret file quotes none of it"
fi
printf 'root:$y$j9T$s3cr3tHASHs3cr3t:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n' >"$T/shadow"
refused "lodge check on a shadow-like file: not a Lodge config" '^[^ ]*shadow:1: not a Lodge config' \
	lodge check "$T/shadow"
if grep -aq 's3cr3t\|root' "$T/out"; then
	fail "lodge check on a shadow-like file quotes none of it" "$(cat "$T/out")"
else
	pass "lodge check on a shadow-like file quotes none of it"
fi

# --- Size: a 2 MiB config is refused at once (timeout: a regression
# fails instead of hanging), so is endless input.
{ printf 'name = "big"\nkernel = "%s"\n# ' "$T/k"; head -c $((2 << 20)) /dev/zero | tr '\0' x; echo; } >"$DOMS/big.cfg"
refused "a 2 MiB config: larger than 1 MiB" 'big\.cfg: larger than 1 MiB; not a Lodge config' \
	lodge check "$DOMS/big.cfg"
refused "endless input: larger than 1 MiB" '^/dev/zero: larger than 1 MiB; not a Lodge config' lodge check /dev/zero
if printf 'name = "piped"\nkernel = "%s"\n' "$T/k" | lodge check /dev/stdin >"$T/out" 2>&1 &&
   grep -q '^/dev/stdin: ok' "$T/out"; then
	pass "a config read from a pipe (/dev/stdin) still loads"
else
	fail "lodge check /dev/stdin" "$(cat "$T/out")"
fi

# --- lodge autostart with the 2 MiB file in domains/: the others start.
rm -f "$DOMS/nl.cfg" "$DOMS/nl2.cfg" "$DOMS/esc.cfg"
if ! need_kvm "autostart beside a 2 MiB config" || ! need_root "autostart beside a 2 MiB config"; then
	exit 0
fi
if [ ! -f "$MINIOS" ]; then skip "autostart beside a 2 MiB config" "Mini-OS not built"; exit 0; fi
printf 'name = "untrusted-ok"\nmemory = 32\nkernel = "%s"\nautostart = true\n' "$MINIOS" >"$DOMS/ok.cfg"
lodge autostart >"$T/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'big\.cfg: larger than 1 MiB' "$T/out" && grep -q '^started untrusted-ok$' "$T/out" &&
   lodge list | grep -q '^untrusted-ok '; then
	pass "lodge autostart: the 2 MiB config is refused, the others start"
else
	fail "lodge autostart beside a 2 MiB config" "exit $rc: $(tr '\n' '|' <"$T/out")"
fi

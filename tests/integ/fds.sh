#!/bin/bash
# Descriptors the caller of lodge create left open are not the domain's
# (issue 17, defect 3): a shell's `exec 7</etc/shadow 8<>disk.img` before
# lodge create reaches neither lodge-hyp's root supervisor nor its
# sandboxed domain process.
. "$(dirname "$0")/../lib.sh"

integ_begin "inherited descriptors" kvm root minios

victim=$TMPDIR_TEST/victim.img
truncate -s 1M "$victim"
secret=/etc/shadow
[ -r "$secret" ] || { secret=$TMPDIR_TEST/secret; echo secret >"$secret"; chmod 600 "$secret"; }
printf 'name = "fds"\nmemory = 32\nkernel = "%s"\n' "$MINIOS" >"$ROOT/etc/lodge/domains/fds.cfg"

if ! ( exec 7<"$secret" 8<>"$victim"; lodge create fds ); then
	fail "inherited descriptors" "lodge create failed: $(cat "$RUN/fds/lodge-hyp.log" 2>/dev/null)"
	exit 0
fi
child=$(lodge list -o tsv | awk -F'\t' '$1 == "fds" { print $9 }')
super=$(awk '$1 == "PPid:" { print $2 }' "/proc/$child/status" 2>/dev/null)

# leaks PID: which of PID's descriptors are the caller's files, or nothing.
# By device and inode, not by name (7 and 8 are reused for lodge-hyp's own).
want="$(stat -Lc %d:%i "$secret") $(stat -Lc %d:%i "$victim")"
leaks() {
	local pid=$1 fd id why=
	[ -d "/proc/$pid/fd" ] || { echo "no /proc/$pid/fd"; return; }
	for fd in /proc/"$pid"/fd/*; do
		id=$(stat -Lc %d:%i "$fd" 2>/dev/null) || continue
		case " $want " in *" $id "*) why+="fd ${fd##*/} -> $(readlink "$fd"); " ;; esac
	done
	echo "$why"
}
if [ -z "$child" ] || [ -z "$super" ] || ! grep -q lodge-hyp "/proc/$super/cmdline"; then
	fail "inherited descriptors" "no domain process (pid '$child') or supervisor (pid '$super')"
	exit 0
fi
# The descriptor directory is read through, so an empty one cannot pass.
nchild=$(ls "/proc/$child/fd" | wc -l) nsuper=$(ls "/proc/$super/fd" | wc -l)
why=$(leaks "$super")
if [ -z "$why" ] && [ "$nsuper" -ge 3 ]; then
	pass "the supervisor (pid $super) holds neither of the caller's fd 7 ($secret) and fd 8 (a disk image) ($nsuper descriptors)"
else
	fail "the supervisor drops inherited descriptors" "pid $super: ${why:-only $nsuper descriptors listed}"
fi
why=$(leaks "$child")
if [ -z "$why" ] && [ "$nchild" -ge 3 ]; then
	pass "the sandboxed domain process (pid $child) holds neither ($nchild descriptors)"
else
	fail "the domain process drops inherited descriptors" "pid $child: ${why:-only $nchild descriptors listed}"
fi

#!/bin/bash
# Debian's own kernel runs its own user space on Lodge: Debian 12's cloud
# kernel (share/debian/build-kernel.sh, its PVH vmlinux) with Lodge's
# busybox initramfs (share/debian/build-initramfs.sh), booted once by
# lodge-hyp with its console on a fifo, as linux-boot.sh's hardware-KVM full
# boot does.  It proves that the initramfs's /init loads every virtio module
# it packs (none failing), that the busybox shell on the console answers
# what is typed (uname -r says the kernel's release, /proc lists the
# modules, fork and exec in a loop, arithmetic), that `poweroff -f` ends
# lodge-hyp with status 0, and, on a PVM host, that lodge-hyp completed the
# guest's system calls from user mode (src/hyp/emulate/syscall.c) and
# counted them at its exit.
# Slow on PVM: PVM emulates every instruction of the guest's kernel (README,
# "Linux on PVM hosts"), so the boot to /init takes 9 to 17 minutes on this
# 2-core machine and the shell's first prompt comes ~3 minutes later; on
# hardware KVM all of it takes seconds.  Hence a limit of its own:
# test-timeout: 1800
# and every wait below ends before it, with the last line the guest printed.
. "$(dirname "$0")/../lib.sh"

integ_begin "Debian kernel's user space" kvm
if [ ! -x "$HYP" ]; then fail "Debian kernel's user space" "$HYP not built"; exit 0; fi
debian_kernel_ready "Debian kernel's user space" || exit 0
if ! "$TOP/share/debian/build-initramfs.sh" "$DEB" >>"$T/build.log" 2>&1; then
	fail "Debian kernel's busybox initramfs builds" "$(tail -1 "$T/build.log")"
	exit 0
fi
version=$(cat "$DEB/kernel-version")
# The modules the initramfs packs, from the archive itself.
packed=$(gzip -dc "$DEB/initrd.img" | cpio -it --quiet 2>/dev/null | grep -c 'lib/modules/[^/]*\.ko$')

# Every wait ends 60 s before the test's limit (tests/run.sh's TEST_LIMIT,
# else this file's test-timeout line), leaving time to stop lodge-hyp.
LIMIT=${TEST_LIMIT:-$(sed -n 's/^# test-timeout: *\([0-9][0-9]*\).*/\1/p' "$0" | head -1)}
t0=$SECONDS
end=$((t0 + ${LIMIT:-1800} - 60))
left() { local n=$((end - SECONDS)); echo $((n > 1 ? n : 1)); }
at() { echo "$((SECONDS - t0)) s"; }

mkfifo "$T/in"
exec 9<>"$T/in"
"$HYP" --kernel "$DEB/vmlinux" --initrd "$DEB/initrd.img" --memory 512 --vcpus 1 \
	--cmdline "console=ttyS0" <&9 >"$T/console" 2>"$T/hyp.log" &
hyp=$!

# The console without its carriage returns and terminal escapes.
con() { tr -d '\r' <"$T/console" | sed 's/\x1b\[[0-9;]*[a-zA-Z]//g'; }
alive() { kill -0 $hyp 2>/dev/null; }
gone() { ! alive; }
seen() { grep -aEq -- "$1" "$T/console"; }
seen_or_gone() { seen "$1" || gone; }
# until_seen ERE: wait for the console to show ERE, or lodge-hyp to end.
until_seen() { wait_until "$(left)" seen_or_gone "$1"; seen "$1"; }
# The shell's prompts so far; prompted N: more than N, or lodge-hyp ended.
prompts() { grep -ao '/ # ' "$T/console" | wc -l; }
prompted() { [ "$(prompts)" -gt "$1" ] || gone; }
stuck() {
	local how=running
	alive || how=ended
	echo "lodge-hyp $how after $(at); last line: $(con | grep -v '^\s*$' | tail -1 | cut -c1-160); its log: $(tail -1 "$T/hyp.log" | cut -c1-160)"
}

if until_seen "Linux version ${version//./\\.} "; then
	pass "Debian's kernel $version prints its banner ($(at))"
else
	fail "Debian's kernel's banner" "$(stuck)"; exit 0
fi
if until_seen '^\[ *[0-9.]+\] Run /init as init process'; then
	pass "the kernel runs the initramfs's /init ($(at))"
else
	fail "the kernel runs /init" "$(stuck)"; exit 0
fi
if until_seen '^lodge-initramfs: modules loaded: '; then
	line=$(con | grep -m1 '^lodge-initramfs: modules loaded: ')
	if [ "$line" = "lodge-initramfs: modules loaded: $packed" ]; then
		pass "/init loads the $packed virtio modules the initramfs packs, none failing ($(at))"
	else
		fail "/init loads the initramfs's $packed modules" "it printed '$line'"
	fi
else
	fail "/init loads its modules" "$(stuck)"; exit 0
fi
if until_seen '^lodge-initramfs: shell on the console' && wait_until "$(left)" prompted 0 && [ "$(prompts)" -ge 1 ]; then
	pass "busybox's shell prompts on the console ($(at))"
else
	fail "a shell on the console" "$(stuck)"; exit 0
fi

# ask CMD: type CMD on the console, wait for the next prompt; $answer is
# what the shell printed in between (the echoed command and the prompt cut).
ask() {
	local n
	n=$(prompts)
	printf '%s\n' "$1" >&9
	wait_until "$(left)" prompted "$n" && [ "$(prompts)" -gt "$n" ] || return 1
	answer=$(con | awk -v n="$n" '/\/ # / { k++ } k == n && !/\/ # / { print }')
}
# answered NAME CMD EXPECTED: CMD's output is the one line EXPECTED.
answered() {
	local s=$SECONDS
	if ! ask "$2"; then
		fail "$1" "no prompt after '$2': $(stuck)"; return 1
	elif [ "$answer" = "$3" ]; then
		pass "$1: '$2' prints '$3' ($((SECONDS - s)) s)"
	else
		fail "$1" "'$2' printed '$(tr '\n' '|' <<<"$answer" | cut -c1-200)', not '$3'"
	fi
}

answered "the shell runs uname" "uname -r" "$version" || exit 0
answered "the kernel lists the modules /init loaded" "wc -l </proc/modules" "$packed" || exit 0
# (Typed lines stay within the console's 80 columns: no line editing.)
answered "the shell forks and execs in a loop" \
	'for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done; echo $i $((6 * 7))' "10 42" || exit 0
if ask "cat /proc/version" && grep -Eq "^Linux version ${version//./\\.} " <<<"$answer"; then
	pass "the shell reads /proc/version: Linux version $version"
else
	fail "the shell reads /proc/version" "$(tr '\n' '|' <<<"${answer:-}" | cut -c1-200); $(stuck)"
fi

# ---- poweroff -f ends lodge-hyp with status 0 ----------------------------------
printf 'poweroff -f\n' >&9
if wait_until "$(left)" gone; then
	wait $hyp
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'guest powered off' "$T/hyp.log"; then
		pass "poweroff -f on the console: lodge-hyp exits with status 0 ($(at))"
	else
		fail "poweroff -f on the console" "lodge-hyp's status $rc: $(tail -2 "$T/hyp.log" | tr '\n' ' ')"
	fi
else
	fail "poweroff -f on the console" "$(stuck)"; exit 0
fi
if [ "$(kvm_backend)" = pvm ]; then
	calls=$(sed -n "s/.*instructions completed for the host's KVM: .*system calls \([0-9]*\).*/\1/p" "$T/hyp.log")
	if [ "${calls:-0}" -gt 0 ]; then
		pass "lodge-hyp completed the guest's system calls from user mode for PVM: $calls"
	else
		fail "lodge-hyp counts the system calls it completed" "its log: $(grep 'instructions completed' "$T/hyp.log" || echo none)"
	fi
fi
# The watchdog's "BUG: soft lockup" is PVM's slowness (README), not a fault.
faults() { con | grep -E 'Kernel panic|BUG:|Oops|segfault|traps:' | grep -v 'BUG: soft lockup'; }
if [ -n "$(faults)" ]; then
	fail "no fault in the guest's console" "$(faults | head -2 | tr '\n' ' ')"
else
	pass "no panic, oops or fault on the guest's console"
fi
exec 9>&-

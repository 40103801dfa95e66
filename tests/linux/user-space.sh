#!/bin/bash
# A Linux guest's user space makes system calls, from its own output: the
# Lodge test kernel booted once with share/linux/init-hello.c as /init
# (build/linux/initramfs-hello.img), which prints "hello from user space",
# its pid, `uname -r`, how long N getppid calls took, then a tick every
# 1000 calls, and powers the domain off.  On a PVM host every one of those
# calls is completed by lodge-hyp (README, "Linux on PVM hosts"); the guest
# is saved and restored while it makes them (the restored lodge-hyp arms
# its breakpoint again), and ends by powering itself off.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/linux-guest.sh"

integ_begin "Linux user space" kvm root
if [ ! -x "$LODGE" ] || [ ! -x "$HYP" ]; then fail "Linux user space" "lodge or lodge-hyp not built"; exit 0; fi
linux_kernel_ready hello || exit 0

# On PVM each kernel instruction is emulated: the boot takes minutes.
STEP=${LINUX_STEP_TIMEOUT:-600}
CALLS=2000 TICKS=40
# The kernel's SYSCALL entry (no KASLR in the Lodge test kernel), for
# init's jump to it: a user that reaches LSTAR without `syscall`.
LSTAR=$(nm "$KDIR/vmlinux" 2>/dev/null | awk '$3 == "entry_SYSCALL_64" { print "0x" $1 }')
linux_hello_domain ux 1 "syscalls=$CALLS ticks=$TICKS${LSTAR:+ lstar=$LSTAR}"
if ! out=$(lodge create ux 2>&1); then fail "create the Linux domain" "$out"; exit 0; fi
if wait_until "$STEP" seen '^hello from user space'; then
	pass "init's first system call, write(2) to the console: 'hello from user space' ($(at) from create)"
else
	fail "init writes to the console" "$(stuck)"; exit 0
fi
release=$(klog | grep -Eo 'Linux version [^ ]+' | head -1 | cut -d' ' -f3)
# uname's line comes a few emulated system calls after hello's, a byte at a
# time through the UART: wait for the whole of it.
[ -z "$release" ] || wait_until 60 seen "^uname -r $release\$" || true
log=$(klog)
if grep -qx 'pid 1' <<<"$log" && [ -n "$release" ] && grep -qx "uname -r $release" <<<"$log"; then
	pass "getpid says 1, uname -r says $release, as the kernel's banner does"
else
	fail "getpid and uname" "banner '$release'; init printed: $(grep -E '^(pid|uname)' <<<"$log" | tr '\n' ' ')"
fi
if wait_until "$STEP" seen "^$CALLS system calls in [0-9]+ us"; then
	us=$(klog | sed -n "s/^$CALLS system calls in \([0-9]*\) us.*/\1/p" | head -1)
	pass "$CALLS getppid calls completed in the guest: $us us, $((CALLS * 1000000 / (us > 0 ? us : 1))) per second"
else
	fail "$CALLS system calls" "$(stuck)"; exit 0
fi

# A jump to LSTAR is a system call as `syscall` is, no more: R11 (the flags
# the kernel's sysret restores) asked for IOPL 3 and interrupts off, which
# SYSCALL never saves for user mode; lodge-hyp gives the kernel the user's
# own flags instead.
if [ -z "$LSTAR" ]; then
	fail "jump to LSTAR" "no entry_SYSCALL_64 in $KDIR/vmlinux's symbols"
elif wait_until 60 seen '^jump to LSTAR: .*IF [01]$'; then
	line=$(klog | grep -m1 '^jump to LSTAR: ')
	said=$(lodge dmesg ux 2>/dev/null | grep -c 'a user jumped to the guest.s LSTAR without syscall')
	if [ "$line" = "jump to LSTAR: getpid 1, IOPL 0, IF 1" ] && [ "$said" = 1 ]; then
		pass "a user's jump to LSTAR ($LSTAR) is a system call, with the user's own flags: '$line', lodge-hyp's log says so"
	else
		fail "a user's jump to LSTAR gets no more than a system call" "'$line' (want IOPL 0, IF 1); lodge-hyp's log said so $said times (want 1)"
	fi
else
	fail "jump to LSTAR" "no 'jump to LSTAR' line: $(stuck)"
fi

# ---- saved and restored while its user space makes system calls -------------
if ! wait_until "$STEP" seen '^tick 1$'; then fail "init's ticks" "$(stuck)"; exit 0; fi
lodge pause ux >/dev/null
last=$(klog | sed -n 's/^tick \([0-9]*\)$/\1/p' | tail -1)
if [ "$last" -ge "$TICKS" ]; then
	fail "save in the middle of user space" "init had printed every tick before the pause"; exit 0
fi
if ! out=$(LODGE_TIMEOUT=120 lodge save ux "$T/ux.sav" 2>&1); then fail "save the guest in user space" "$out"; exit 0; fi
if ! out=$(LODGE_TIMEOUT=120 lodge restore "$T/ux.sav" 2>&1); then fail "restore the guest in user space" "$out"; exit 0; fi
[ "$(state)" != paused ] || lodge unpause ux >/dev/null
if wait_until "$STEP" seen "^tick $((last + 1))$"; then
	pass "saved at tick $last and restored: the restored guest's system calls go on (tick $((last + 1)), $(at))"
else
	fail "system calls after a restore" "no 'tick $((last + 1))': $(stuck)"; exit 0
fi

# ---- it powers itself off ------------------------------------------------------
if wait_until "$STEP" seen '^done$' && wait_until 60 ended && lodge log ux 2>/dev/null | grep -q 'powered off'; then
	pass "init calls reboot(POWER_OFF): the domain powers off ($(state), $(at))"
else
	fail "init powers the domain off" "$(stuck); $(lodge log ux 2>&1 | tail -2 | tr '\n' ' ')"
fi
if klog | grep -Eq 'Kernel panic|BUG:|Oops|segfault|traps:'; then
	fail "no fault in the guest's log" "$(klog | grep -Em2 'Kernel panic|BUG:|Oops|segfault|traps:')"
else
	pass "no panic, oops or fault in the guest's log"
fi
lodge destroy ux >/dev/null 2>&1

#!/bin/bash
# A 2-vCPU Linux guest on a PVM host boots both CPUs and its user space
# makes system calls on the second, from its own output: the Lodge test
# kernel with share/linux/init-hello.c as /init (initramfs-hello.img),
# which moves itself to CPU 1 (sched_setaffinity; getcpu says where it is)
# after its timed calls and makes its ticks there.  On PVM the kernel's
# KVM PV IPIs never complete (lodge-hyp adds nopv for more than one vCPU:
# lodge-hyp --probe) and each vCPU needs the breakpoint that completes its
# user space's system calls (README, "Linux on PVM hosts").
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/linux-guest.sh"

integ_begin "Linux SMP user space" kvm root
if [ ! -x "$LODGE" ] || [ ! -x "$HYP" ]; then fail "Linux SMP user space" "lodge or lodge-hyp not built"; exit 0; fi
linux_kernel_ready hello || exit 0

STEP=${LINUX_STEP_TIMEOUT:-600}
TICKS=10
linux_hello_domain smp 2 "syscalls=200 ticks=$TICKS"
if ! out=$(lodge create smp 2>&1); then fail "create the 2-vCPU Linux domain" "$out"; exit 0; fi
if wait_until "$STEP" seen '^\[ *[0-9.]+\] smp: Brought up 1 node, 2 CPUs'; then
	pass "the kernel brings up its second CPU ($(at))"
else
	fail "the kernel brings up its second CPU" "$(stuck)"; exit 0
fi
if wait_until "$STEP" seen '^hello from user space'; then
	pass "init's first system call on a 2-vCPU guest: 'hello from user space' ($(at))"
else
	fail "init writes to the console" "$(stuck)"; exit 0
fi
if wait_until "$STEP" seen '^on cpu [0-9]+$' && seen '^on cpu 1$'; then
	pass "init moved itself to the second vCPU: getcpu says 1"
else
	fail "init on the second vCPU" "$(klog | grep -E '^on cpu' || stuck)"; exit 0
fi
if wait_until "$STEP" seen "^tick $TICKS$" && seen '^done$'; then
	pass "its $((TICKS * 1000)) system calls on the second vCPU completed: 'tick $TICKS', 'done' ($(at))"
else
	fail "system calls on the second vCPU" "$(stuck)"; exit 0
fi
armed=$(lodge dmesg smp 2>/dev/null | grep -c "vcpu[01]: completing the guest's system calls")
if [ "$armed" -ge 2 ] && lodge dmesg smp 2>/dev/null | grep -q "vcpu1: completing the guest's system calls"; then
	pass "lodge-hyp completes system calls on both vCPUs (its log: vcpu0 and vcpu1 armed)"
else
	fail "both vCPUs armed" "$(lodge dmesg smp 2>&1 | grep -E 'completing|system calls' | tr '\n' ' ')"
fi
if wait_until 120 ended && lodge log smp 2>/dev/null | grep -q 'powered off'; then
	pass "init calls reboot(POWER_OFF): the domain powers off ($(state), $(at))"
else
	fail "init powers the domain off" "$(stuck); $(lodge log smp 2>&1 | tail -2 | tr '\n' ' ')"
fi
if klog | grep -Eq 'Kernel panic|BUG:|Oops|segfault|traps:|soft lockup|failed to send PV IPI'; then
	fail "no fault in the guest's log" "$(klog | grep -Em2 'Kernel panic|BUG:|Oops|segfault|traps:|soft lockup|failed to send PV IPI')"
else
	pass "no panic, oops, lockup or fault in the guest's log"
fi
lodge destroy smp >/dev/null 2>&1

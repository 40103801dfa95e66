/*
 * /init of the Lodge test kernel's initramfs: spins in user mode forever and
 * never makes a system call, so nothing of the guest's user space is in the
 * way of what tests/linux/devices.sh proves (init-hello.c is the one that
 * makes system calls); with a live init the kernel stays up after its boot
 * and goes on serving timers, ACPI events and PCI hot-plug from its
 * workqueues.
 * Built with -nostdlib -static: no libc, no start-up code that would call
 * the kernel.
 */
void _start(void)
{
	for (;;)
		__asm__ volatile("pause");
}

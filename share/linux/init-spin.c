/*
 * /init of the Lodge test kernel's initramfs: spins in user mode forever and
 * never makes a system call.  On a PVM host an unmodified guest's system
 * calls fault (README, "Linux on PVM hosts"), but its user mode runs
 * natively; with a live init the kernel stays up after its boot and goes on
 * serving timers, ACPI events and PCI hot-plug from its workqueues.
 * Built with -nostdlib -static: no libc, no start-up code that would call
 * the kernel.
 */
void _start(void)
{
	for (;;)
		__asm__ volatile("pause");
}

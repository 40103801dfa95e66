/* CPU hot-plug as lodge-hyp presents it (src/hyp/dev/cpuhp.c) and Lodge
 * Mini-OS serves it (src/minios/hotplug.c).  Defined once here,
 * freestanding (no libc), for both.
 *
 * The design follows QEMU's "CPU hotplug interface" (docs/specs/
 * acpi_cpu_hotplug.rst) in what it does -- the MADT lists maxvcpus
 * processors, those not yet online not enabled; a GPE tells the guest
 * something changed; registers in an I/O range say which CPUs were
 * inserted and which the host wants removed; the guest's eject write is
 * what takes a CPU away -- but in the form of our PCI hot-plug
 * (pcihp.h): one bit per CPU, no selector register, so a guest reads the
 * whole picture in a few accesses.  Bit N is the CPU whose APIC ID (and
 * ACPI processor UID) is N; 64 CPUs (DOMAIN_VCPUS_MAX) in two 32-bit
 * halves, low half first.  Every register is read and written with 32-bit
 * accesses. */
#ifndef LODGE_CPUHP_H
#define LODGE_CPUHP_H

/* The GPE0 block is pcihp.h's; CPU events are its bit 2 (\_GPE._E02,
 * as QEMU's PIIX4 CPU hot-plug). */
#define CPUHP_GPE_BIT        2

#define CPUHP_PORT           0x640
#define CPUHP_LEN            0x20
/* Read: CPUs that are online (the host runs them). */
#define CPUHP_PRESENT        0x00
/* Read: CPUs plugged since the last read (the read clears them): the
 * guest starts them (INIT, SIPI). */
#define CPUHP_INSERT         0x08
/* Read: CPUs the host asks the guest to give up; a bit stays set until
 * the guest ejects that CPU or the host plugs it again. */
#define CPUHP_REMOVE         0x10
/* Write: CPUs the guest has parked: those the host asked for
 * (CPUHP_REMOVE) go offline, other bits are ignored.  Reads as 0. */
#define CPUHP_EJECT          0x18
/* Each register above is two: +0 CPUs 0-31, +4 CPUs 32-63. */
#define CPUHP_HI             0x04

#define CPUHP_CPUS           64

#endif

/* The guest as an ELF64 core file (ET_CORE), as xl dump-core writes one
 * and gdb and crash(8) read: a PT_NOTE with an NT_PRSTATUS per vCPU (its
 * general registers as x86_64 Linux's user_regs_struct), then a PT_LOAD
 * per range of guest RAM whose p_paddr is the guest-physical address; its
 * p_vaddr is the same, Mini-OS being identity-mapped.  RAM that reads as
 * zeros is left a hole in the file. */
#ifndef LODGE_SAVE_CORE_H
#define LODGE_SAVE_CORE_H

#include <stddef.h>

struct domain;

/* Write the core to fd (a regular file, written from offset 0 with
 * pwrite: its position does not matter).  The vCPUs must be parked or
 * stopped.  0, or -errno with one sentence in why. */
int core_write(struct domain *dom, int fd, char *why, size_t whylen);

#endif

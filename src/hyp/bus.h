/* The I/O port and MMIO buses: devices register address ranges with a
 * small operations table, vCPU exits are dispatched here.  Unclaimed reads
 * return all ones and unclaimed writes are dropped, as on real hardware. */
#ifndef LODGE_BUS_H
#define LODGE_BUS_H

#include <stdint.h>

struct bus_ops {
	/* off is relative to the range's base; size is 1, 2, 4 (or 8 for MMIO). */
	uint64_t (*read)(void *dev, uint64_t off, unsigned size);
	void (*write)(void *dev, uint64_t off, unsigned size, uint64_t val);
};

enum bus_space { BUS_PIO, BUS_MMIO };

/* Returns 0 or -EBUSY if the range overlaps one already registered. */
int bus_register(enum bus_space space, uint64_t base, uint64_t len,
		 const struct bus_ops *ops, void *dev, const char *name);
void bus_access(enum bus_space space, uint64_t addr, unsigned size,
		int is_write, void *data);

#endif

/* Address-range dispatch for port I/O and MMIO exits. The table is filled
 * at start-up, before any vCPU runs, and is read-only afterwards, so the
 * vCPU threads read it without a lock. */
#include "bus.h"
#include "log.h"

#include <errno.h>
#include <string.h>

#define BUS_MAX_RANGES 64

struct bus_range {
	uint64_t base, len;
	const struct bus_ops *ops;
	void *dev;
	const char *name;
};

static struct bus_range bus_ranges[2][BUS_MAX_RANGES];
static unsigned bus_count[2];

int bus_register(enum bus_space space, uint64_t base, uint64_t len,
		 const struct bus_ops *ops, void *dev, const char *name)
{
	struct bus_range *r = bus_ranges[space];
	unsigned i;

	if (bus_count[space] == BUS_MAX_RANGES)
		return -ENOSPC;
	for (i = 0; i < bus_count[space]; i++)
		if (base < r[i].base + r[i].len && r[i].base < base + len)
			return -EBUSY;
	r[bus_count[space]++] = (struct bus_range){ base, len, ops, dev, name };
	return 0;
}

static const struct bus_range *bus_find(enum bus_space space, uint64_t addr)
{
	const struct bus_range *r = bus_ranges[space];
	unsigned i;

	for (i = 0; i < bus_count[space]; i++)
		if (addr - r[i].base < r[i].len)
			return &r[i];
	return NULL;
}

void bus_access(enum bus_space space, uint64_t addr, unsigned size,
		int is_write, void *data)
{
	const struct bus_range *r = bus_find(space, addr);
	uint64_t val = 0;

	if (size > 8)
		size = 8;
	if (!r) {
		if (!is_write)
			memset(data, 0xff, size);
		log_debug("unclaimed %s %s at %#llx size %u",
			  space == BUS_PIO ? "port" : "mmio",
			  is_write ? "write" : "read",
			  (unsigned long long)addr, size);
		return;
	}
	if (is_write) {
		memcpy(&val, data, size);
		if (r->ops->write)
			r->ops->write(r->dev, addr - r->base, size, val);
	} else {
		val = r->ops->read ? r->ops->read(r->dev, addr - r->base, size) : ~0ULL;
		memcpy(data, &val, size);
	}
}

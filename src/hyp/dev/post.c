#include "devices.h"
#include "bus.h"

/* Port 0x80: POST codes and the classic I/O delay; nothing to do. */
static uint64_t post_read(void *dev, uint64_t off, unsigned size) { return 0; }
static void post_write(void *dev, uint64_t off, unsigned size, uint64_t val) { }
static const struct bus_ops post_ops = { .read = post_read, .write = post_write };

int post_init(struct domain *dom)
{
	return bus_register(BUS_PIO, 0x80, 1, &post_ops, NULL, "post");
}

/* Just enough of the PS/2 controller for a guest to find it and to pulse
 * the CPU reset line (command 0xFE), the reboot path of last resort. */
#include "devices.h"
#include "bus.h"
#include "domain.h"
#include "platform.h"
#include "save/state.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define I8042_STS_OBF      0x01
#define I8042_STS_SYS      0x04
#define I8042_CMD_READ_CTR 0x20
#define I8042_CMD_WRITE_CTR 0x60
#define I8042_CMD_SELF_TEST 0xaa
#define I8042_CMD_KBD_TEST 0xab
#define I8042_CMD_RESET    0xfe

static struct {
	struct domain *dom;
	pthread_mutex_t lock;
	uint8_t ctr, out, out_full, expect_ctr;
} kbc = { .lock = PTHREAD_MUTEX_INITIALIZER, .ctr = 0x30 };

static uint64_t i8042_read(void *dev, uint64_t off, unsigned size)
{
	uint8_t v;

	pthread_mutex_lock(&kbc.lock);
	if (off == 0) {                       /* data port 0x60 */
		v = kbc.out;
		kbc.out_full = 0;
	} else if (off == 4) {                /* status port 0x64 */
		v = I8042_STS_SYS | (kbc.out_full ? I8042_STS_OBF : 0);
	} else {
		v = 0xff;
	}
	pthread_mutex_unlock(&kbc.lock);
	return v;
}

static void i8042_reply(uint8_t v) { kbc.out = v; kbc.out_full = 1; }

static void i8042_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	pthread_mutex_lock(&kbc.lock);
	if (off == 0) {
		if (kbc.expect_ctr)
			kbc.ctr = val;
		kbc.expect_ctr = 0;
	} else if (off == 4) {
		switch ((uint8_t)val) {
		case I8042_CMD_READ_CTR:  i8042_reply(kbc.ctr); break;
		case I8042_CMD_WRITE_CTR: kbc.expect_ctr = 1; break;
		case I8042_CMD_SELF_TEST: i8042_reply(0x55); break;
		case I8042_CMD_KBD_TEST:  i8042_reply(0x00); break;
		case I8042_CMD_RESET:
			domain_end(kbc.dom, DOMAIN_REBOOT, "guest rebooted (i8042 reset pulse)");
			break;
		}
	}
	pthread_mutex_unlock(&kbc.lock);
}

static const struct bus_ops i8042_ops = { .read = i8042_read, .write = i8042_write };

/* Save and restore: the command byte and a reply the guest has not read. */
#define I8042_STATE_VERSION 1

static int i8042_save(void *obj, struct state_buf *b)
{
	pthread_mutex_lock(&kbc.lock);
	state_put_u8(b, kbc.ctr);
	state_put_u8(b, kbc.out);
	state_put_u8(b, kbc.out_full);
	state_put_u8(b, kbc.expect_ctr);
	pthread_mutex_unlock(&kbc.lock);
	return 0;
}

static int i8042_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	uint8_t ctr = state_get_u8(in), out = state_get_u8(in);
	uint8_t full = state_get_u8(in), expect = state_get_u8(in);

	if (in->bad)
		return -EBADMSG;
	if (full > 1 || expect > 1) {
		snprintf(why, whylen, "i8042: flags %u/%u are not booleans", full, expect);
		return -EINVAL;
	}
	pthread_mutex_lock(&kbc.lock);
	kbc.ctr = ctr;
	kbc.out = out;
	kbc.out_full = full;
	kbc.expect_ctr = expect;
	pthread_mutex_unlock(&kbc.lock);
	return 0;
}

static const struct state_ops i8042_state_ops = {
	.save = i8042_save, .load = i8042_load, .version = I8042_STATE_VERSION,
};

int i8042_init(struct domain *dom)
{
	int rc;

	kbc.dom = dom;
	/* One range 0x60-0x64: port 0x61 (speaker/PIT gate) is served by the
	 * in-kernel PIT and never exits to us. */
	rc = bus_register(BUS_PIO, PORT_I8042_DATA, PORT_I8042_CMD - PORT_I8042_DATA + 1,
			  &i8042_ops, NULL, "i8042");
	return rc ? rc : state_register("i8042", &i8042_state_ops, NULL);
}

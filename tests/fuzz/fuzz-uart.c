/* The 16550A UART (src/hyp/dev/uart8250.c) against a guest that pokes its
 * registers in any order, through the same port dispatch a vCPU exit
 * takes.  Input: a sequence of 2-byte ops {ctl, value}: ctl bits 0-2 the
 * register, bit 3 write, bits 4-5 the access size (1, 2, 4; a guest may
 * use any), bits 6-7 = 1: console input instead (uart_receive of the value
 * byte, 1-8 times as bits 0-2 + 1 say).  Properties: LSR always shows the
 * transmitter empty and DR exactly when a read of RBR would return input,
 * IIR names one known cause, the receive FIFO takes at most what fits and
 * hands bytes back in order. */
#include "fuzz.h"
#include "bus.h"
#include "dev/devices.h"
#include "domain.h"
#include "log.h"

#include <string.h>

#define PORT 0x3f8

static struct domain dom = { DOMAIN_DEFAULTS };
static struct uart *uart;

static uint8_t rd(unsigned reg, unsigned size)
{
	uint32_t v = 0;

	bus_access(BUS_PIO, PORT + reg, size, 0, &v);
	return v;
}

static void wr(unsigned reg, unsigned size, uint32_t v)
{
	bus_access(BUS_PIO, PORT + reg, size, 1, &v);
}

/* What a guest does to start from a known state: every register set. */
static void uart_clean(void)
{
	wr(3, 1, 0x80);
	wr(0, 1, 12);
	wr(1, 1, 0);
	wr(3, 1, 0x03);
	wr(1, 1, 0);
	wr(2, 1, 0x02);          /* clear the receive FIFO, FIFOs off */
	wr(4, 1, 0);
	wr(7, 1, 0);
	rd(2, 1);                /* acknowledge THRE */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i;

	if (!uart) {
		log_init("fuzz-uart");
		log_set_level(LOG_ERR);
		uart = uart_create(&dom, PORT, 4);
		FUZZ_CHECK(uart, "uart_create");
	}
	uart_clean();
	FUZZ_CHECK(!(rd(5, 1) & 0x01), "data ready after the receive FIFO was cleared");
	for (i = 0; i + 2 <= size; i += 2) {
		unsigned ctl = data[i], reg = ctl & 7, sz = 1u << ((ctl >> 4) & 3);
		uint8_t val = data[i + 1], lsr, iir;

		if (sz == 8)
			sz = 1;
		if ((ctl >> 6) == 1) {
			uint8_t buf[8];
			unsigned n = (ctl & 7) + 1;
			size_t took;

			memset(buf, val, n);
			took = uart_receive(uart, buf, n);
			FUZZ_CHECK(took <= n, "uart_receive took more than it was given");
			continue;
		}
		if ((ctl >> 6) == 2) {
			/* Loopback of known bytes: what goes in comes out, in order. */
			uint8_t lcr = rd(3, 1), want[4] = { val, (uint8_t)(val + 1), (uint8_t)(val + 2), (uint8_t)(val + 3) };
			unsigned k;

			wr(3, 1, lcr & 0x7f);
			wr(2, 1, 0x02);
			FUZZ_CHECK(uart_receive(uart, want, 4) == 4, "an empty FIFO refused 4 bytes");
			for (k = 0; k < 4; k++)
				FUZZ_CHECK(rd(0, 1) == want[k], "input read back out of order");
			FUZZ_CHECK(!(rd(5, 1) & 0x01), "data ready with the FIFO read empty");
			wr(3, 1, lcr);
			continue;
		}
		if (ctl & 8)
			wr(reg, sz, val);
		else
			rd(reg, sz);
		lsr = rd(5, 1);
		FUZZ_CHECK((lsr & 0x60) == 0x60, "LSR does not show the transmitter empty");
		iir = rd(2, 1) & 0x0f;
		FUZZ_CHECK(iir == 0x01 || iir == 0x02 || iir == 0x04, "IIR names an unknown cause");
	}
	return 0;
}

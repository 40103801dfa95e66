/* A 16550A UART, enough of it for Linux's 8250 driver to probe it (scratch
 * register, FIFO bits in IIR, loopback MSR test) and for interrupt-driven
 * input and output.  Transmission is instant, so THR is always empty. */
#include "devices.h"
#include "bus.h"
#include "console.h"
#include "domain.h"
#include "log.h"
#include "save/state.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UART_RBR 0   /* read, DLAB 0 */
#define UART_THR 0   /* write, DLAB 0 */
#define UART_IER 1
#define UART_IIR 2   /* read */
#define UART_FCR 2   /* write */
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_MSR 6
#define UART_SCR 7

#define IER_RDI   0x01
#define IER_THRI  0x02
#define IER_RLSI  0x04
#define IER_MSI   0x08
#define IIR_NONE  0x01
#define IIR_THRI  0x02
#define IIR_RDI   0x04
#define IIR_FIFO  0xc0
#define FCR_ENABLE 0x01
#define FCR_CLEAR_RX 0x02
#define LCR_DLAB  0x80
#define MCR_DTR   0x01
#define MCR_RTS   0x02
#define MCR_OUT1  0x04
#define MCR_OUT2  0x08
#define MCR_LOOP  0x10
#define LSR_DR    0x01
#define LSR_BI    0x10
#define LSR_THRE  0x20
#define LSR_TEMT  0x40
#define MSR_CTS   0x10
#define MSR_DSR   0x20
#define MSR_RI    0x40
#define MSR_DCD   0x80

/* Bounded: a guest that never reads its console cannot grow it. */
#define UART_RX_FIFO 256

struct uart {
	struct domain *dom;
	unsigned gsi;
	pthread_mutex_t lock;
	uint8_t ier, lcr, mcr, scr, fcr, dll, dlm;
	int thr_ipending;
	int irq_level;
	uint8_t rx[UART_RX_FIFO];
	bool rx_break[UART_RX_FIFO];   /* the byte is a BREAK's 0 (LSR BI while it is on top) */
	unsigned rx_head, rx_count;
};

static uint8_t uart_iir(const struct uart *u)
{
	uint8_t fifo = (u->fcr & FCR_ENABLE) ? IIR_FIFO : 0;

	if ((u->ier & IER_RDI) && u->rx_count)
		return IIR_RDI | fifo;
	if ((u->ier & IER_THRI) && u->thr_ipending)
		return IIR_THRI | fifo;
	return IIR_NONE | fifo;
}

/* Called with the lock held after every state change: drive the line to
 * the level the pending interrupts imply, touching KVM only on a change. */
static void uart_update_irq(struct uart *u)
{
	int level = !(uart_iir(u) & IIR_NONE);

	if (level != u->irq_level) {
		u->irq_level = level;
		kvm_irq_line(u->dom, u->gsi, level);
	}
}

static void uart_rx_push(struct uart *u, uint8_t c, bool is_break)
{
	if (u->rx_count < UART_RX_FIFO) {
		u->rx[(u->rx_head + u->rx_count) % UART_RX_FIFO] = c;
		u->rx_break[(u->rx_head + u->rx_count) % UART_RX_FIFO] = is_break;
		u->rx_count++;
	}
}

static uint64_t uart_read(void *dev, uint64_t off, unsigned size)
{
	struct uart *u = dev;
	uint8_t val = 0;

	pthread_mutex_lock(&u->lock);
	switch (off) {
	case UART_RBR:
		if (u->lcr & LCR_DLAB) {
			val = u->dll;
		} else if (u->rx_count) {
			val = u->rx[u->rx_head];
			u->rx_head = (u->rx_head + 1) % UART_RX_FIFO;
			u->rx_count--;
		}
		break;
	case UART_IER:
		val = (u->lcr & LCR_DLAB) ? u->dlm : u->ier;
		break;
	case UART_IIR:
		val = uart_iir(u);
		/* Reading IIR while it reports THRE acknowledges it. */
		if ((val & 0x0f) == IIR_THRI)
			u->thr_ipending = 0;
		break;
	case UART_LCR: val = u->lcr; break;
	case UART_MCR: val = u->mcr; break;
	case UART_LSR:
		val = LSR_THRE | LSR_TEMT | (u->rx_count ? LSR_DR : 0) |
		      (u->rx_count && u->rx_break[u->rx_head] ? LSR_BI : 0);
		break;
	case UART_MSR:
		if (u->mcr & MCR_LOOP)   /* modem outputs looped back to inputs */
			val = ((u->mcr & MCR_RTS) ? MSR_CTS : 0) | ((u->mcr & MCR_DTR) ? MSR_DSR : 0) |
			      ((u->mcr & MCR_OUT1) ? MSR_RI : 0) | ((u->mcr & MCR_OUT2) ? MSR_DCD : 0);
		else
			val = MSR_DCD | MSR_DSR | MSR_CTS;
		break;
	case UART_SCR: val = u->scr; break;
	}
	uart_update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return val;
}

static void uart_write(void *dev, uint64_t off, unsigned size, uint64_t v)
{
	struct uart *u = dev;
	uint8_t val = v;

	pthread_mutex_lock(&u->lock);
	switch (off) {
	case UART_THR:
		if (u->lcr & LCR_DLAB) {
			u->dll = val;
			break;
		}
		if (u->mcr & MCR_LOOP)
			uart_rx_push(u, val, false);
		else
			console_output(&val, 1);
		u->thr_ipending = 1;
		break;
	case UART_IER:
		if (u->lcr & LCR_DLAB) {
			u->dlm = val;
			break;
		}
		/* Enabling THRI while THR is empty raises it at once. */
		if (!(u->ier & IER_THRI) && (val & IER_THRI))
			u->thr_ipending = 1;
		u->ier = val & (IER_RDI | IER_THRI | IER_RLSI | IER_MSI);
		break;
	case UART_FCR:
		u->fcr = val & FCR_ENABLE;
		if (val & FCR_CLEAR_RX)
			u->rx_count = 0;
		break;
	case UART_LCR: u->lcr = val; break;
	case UART_MCR: u->mcr = val & 0x1f; break;
	case UART_SCR: u->scr = val; break;
	}
	uart_update_irq(u);
	pthread_mutex_unlock(&u->lock);
}

static const struct bus_ops uart_ops = { .read = uart_read, .write = uart_write };

size_t uart_receive(struct uart *u, const uint8_t *buf, size_t len)
{
	size_t n = 0;

	pthread_mutex_lock(&u->lock);
	while (n < len && u->rx_count < UART_RX_FIFO)
		uart_rx_push(u, buf[n++], false);
	uart_update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return n;
}

int uart_send_break(struct uart *u, uint8_t key)
{
	int rc = -EAGAIN;

	pthread_mutex_lock(&u->lock);
	if (u->rx_count + 2 <= UART_RX_FIFO) {
		uart_rx_push(u, 0, true);
		uart_rx_push(u, key, false);
		uart_update_irq(u);
		rc = 0;
	}
	pthread_mutex_unlock(&u->lock);
	return rc;
}

/* ---- save and restore ------------------------------------------------------
 * The registers the guest set and the bytes it has not read yet (in order,
 * oldest first); the interrupt line is recomputed from them. */
#define UART_STATE_VERSION 1

static int uart_save(void *obj, struct state_buf *b)
{
	struct uart *u = obj;
	unsigned i;

	pthread_mutex_lock(&u->lock);
	state_put_u8(b, u->ier);
	state_put_u8(b, u->lcr);
	state_put_u8(b, u->mcr);
	state_put_u8(b, u->scr);
	state_put_u8(b, u->fcr);
	state_put_u8(b, u->dll);
	state_put_u8(b, u->dlm);
	state_put_u8(b, u->thr_ipending);
	state_put_u16(b, u->rx_count);
	for (i = 0; i < u->rx_count; i++)
		state_put_u8(b, u->rx[(u->rx_head + i) % UART_RX_FIFO]);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

static int uart_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	struct uart *u = obj;
	uint8_t ier = state_get_u8(in), lcr = state_get_u8(in), mcr = state_get_u8(in);
	uint8_t scr = state_get_u8(in), fcr = state_get_u8(in), dll = state_get_u8(in);
	uint8_t dlm = state_get_u8(in), thri = state_get_u8(in);
	uint16_t count = state_get_u16(in);
	uint8_t rx[UART_RX_FIFO];

	if (in->bad)
		return -EBADMSG;
	/* Only values the guest's own writes can produce. */
	if ((ier & ~(IER_RDI | IER_THRI | IER_RLSI | IER_MSI)) || (mcr & ~0x1f) ||
	    (fcr & ~FCR_ENABLE) || thri > 1 || count > UART_RX_FIFO) {
		snprintf(why, whylen, "uart: register values a 16550A cannot hold (ier %#x mcr %#x "
			 "fcr %#x, %u bytes queued)", ier, mcr, fcr, count);
		return -EINVAL;
	}
	state_get(in, rx, count);
	if (in->bad)
		return -EBADMSG;
	pthread_mutex_lock(&u->lock);
	u->ier = ier;
	u->lcr = lcr;
	u->mcr = mcr;
	u->scr = scr;
	u->fcr = fcr;
	u->dll = dll;
	u->dlm = dlm;
	u->thr_ipending = thri;
	memcpy(u->rx, rx, count);
	memset(u->rx_break, 0, sizeof(u->rx_break));   /* a BREAK is not kept in a save */
	u->rx_head = 0;
	u->rx_count = count;
	uart_update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

static const struct state_ops uart_state_ops = {
	.save = uart_save,
	.load = uart_load,
	.version = UART_STATE_VERSION,
};

struct uart *uart_create(struct domain *dom, uint16_t port, unsigned gsi)
{
	struct uart *u = calloc(1, sizeof(*u));
	char name[STATE_NAME_MAX];

	if (!u)
		return NULL;
	u->dom = dom;
	u->gsi = gsi;
	u->dll = 12;   /* 9600 baud until the guest says otherwise */
	pthread_mutex_init(&u->lock, NULL);
	if (bus_register(BUS_PIO, port, 8, &uart_ops, u, "uart")) {
		free(u);
		return NULL;
	}
	/* "uart.3f8": named by its port, which is what makes it COM1. */
	snprintf(name, sizeof(name), "uart.%x", port);
	if (state_register(name, &uart_state_ops, u)) {
		log_err("%s: cannot register its state", name);
		return NULL;    /* on the bus for good: lodge-hyp exits on this */
	}
	return u;
}

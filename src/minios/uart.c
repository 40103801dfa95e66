/* COM1, a 16550: output by polling, input by interrupt into a ring. */
#include "io.h"
#include "minios.h"

#define COM1     0x3f8
#define THR      0
#define RBR      0
#define IER      1
#define FCR      2
#define LCR      3
#define MCR      4
#define LSR      5
#define LSR_DR   0x01
#define LSR_BI   0x10
#define LSR_THRE 0x20

static volatile uint8_t rx_ring[256];
static volatile unsigned rx_head, rx_tail;
static volatile int uart_lock;

void uart_init(void)
{
	outb(COM1 + LCR, 0x03);         /* 8N1, divisor latch off */
	outb(COM1 + IER, 0x01);         /* receive interrupts */
	outb(COM1 + FCR, 0x01);
	outb(COM1 + MCR, 0x0b);         /* DTR, RTS, OUT2 (gates the IRQ on a real PC) */
}

static void uart_lock_take(void)
{
	while (__atomic_exchange_n(&uart_lock, 1, __ATOMIC_ACQUIRE))
		cpu_relax();
}

static void uart_putc_raw(char c)
{
	while (!(inb(COM1 + LSR) & LSR_THRE))
		cpu_relax();
	outb(COM1 + THR, c);
}

static volatile char last_out = '\n';

void uart_putc(char c)
{
	if (c == '\n')
		uart_putc_raw('\r');
	uart_putc_raw(c);
	last_out = c;
}

int uart_at_line_start(void) { return last_out == '\n'; }

/* Whole strings under one lock, so lines from several CPUs do not mix. */
void uart_puts(const char *s)
{
	uart_lock_take();
	for (; *s; s++)
		uart_putc(*s);
	__atomic_store_n(&uart_lock, 0, __ATOMIC_RELEASE);
}

/* A BREAK arms the sysrq: the next character is its key, not input
 * (Linux's 8250 driver does the same, for 5 s). */
static volatile int sysrq_armed, sysrq_key = -1;

int uart_take_sysrq(void)
{
	return __atomic_exchange_n(&sysrq_key, -1, __ATOMIC_RELAXED);
}

void uart_rx_irq(void)
{
	uint8_t lsr;

	while ((lsr = inb(COM1 + LSR)) & LSR_DR) {
		uint8_t c = inb(COM1 + RBR);

		if (lsr & LSR_BI) {
			sysrq_armed = 1;
			continue;
		}
		if (sysrq_armed) {
			sysrq_armed = 0;
			sysrq_key = c;
			continue;
		}
		if (rx_head - rx_tail < sizeof(rx_ring))
			rx_ring[rx_head++ % sizeof(rx_ring)] = c;
	}
}

int uart_getc(void)
{
	int c;

	if (rx_tail == rx_head)
		return -1;
	c = rx_ring[rx_tail % sizeof(rx_ring)];
	rx_tail++;
	return c;
}

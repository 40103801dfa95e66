/* Legacy platform devices: each registers its port ranges on the bus. */
#ifndef LODGE_DEVICES_H
#define LODGE_DEVICES_H

#include <stddef.h>
#include <stdint.h>

struct domain;

/* 16550A UART (uart8250.c). Output goes to the console; input comes from
 * uart_receive(), which takes what fits in the receive FIFO. */
struct uart;
struct uart *uart_create(struct domain *dom, uint16_t port, unsigned gsi);
size_t uart_receive(struct uart *u, const uint8_t *buf, size_t len);
/* A BREAK on the line, then key: what a serial console's sysrq is (Linux's
 * 8250 driver takes the character after a BREAK as a sysrq key).  0, or
 * -EAGAIN when the receive FIFO has no room for both. */
int uart_send_break(struct uart *u, uint8_t key);

int i8042_init(struct domain *dom);     /* reset line (0xFE) only */
int acpi_pm_init(struct domain *dom);   /* PM1 registers, sleep control, reset register */
/* Press the fixed-feature power button: PWRBTN_STS and an SCI. */
void acpi_pm_power_button(void);
/* Set GPE gpe's status bit in GPE0 (an SCI if the guest enabled it). */
void acpi_pm_gpe_raise(unsigned int gpe);
int rtc_init(struct domain *dom);       /* MC146818 CMOS clock at 0x70 */
int post_init(struct domain *dom);      /* port 0x80, swallowed */

#endif

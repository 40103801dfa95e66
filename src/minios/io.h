/* Port I/O, MMIO and CPU helpers. */
#ifndef MINIOS_IO_H
#define MINIOS_IO_H

#include <stdint.h>

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }

static inline uint8_t mmio_read8(uint64_t a) { return *(volatile uint8_t *)a; }
static inline uint16_t mmio_read16(uint64_t a) { return *(volatile uint16_t *)a; }
static inline uint32_t mmio_read32(uint64_t a) { return *(volatile uint32_t *)a; }
static inline uint64_t mmio_read64(uint64_t a) { return *(volatile uint64_t *)a; }
static inline void mmio_write8(uint64_t a, uint8_t v) { *(volatile uint8_t *)a = v; }
static inline void mmio_write16(uint64_t a, uint16_t v) { *(volatile uint16_t *)a = v; }
static inline void mmio_write32(uint64_t a, uint32_t v) { *(volatile uint32_t *)a = v; }
static inline void mmio_write64(uint64_t a, uint64_t v) { *(volatile uint64_t *)a = v; }

static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }
static inline void irq_enable(void) { __asm__ volatile("sti" ::: "memory"); }
static inline void irq_disable(void) { __asm__ volatile("cli" ::: "memory"); }
/* sti;hlt: the interrupt that wakes us cannot slip in between. */
static inline void idle(void) { __asm__ volatile("sti; hlt" ::: "memory"); }
static inline void barrier(void) { __asm__ volatile("" ::: "memory"); }
static inline void mb(void) { __asm__ volatile("mfence" ::: "memory"); }

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void cpuid(uint32_t leaf, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(0));
}

#endif

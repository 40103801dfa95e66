/* `hostile SECONDS [SEED]`: Mini-OS turned against its host.  For the given
 * time it writes garbage to everything lodge-hyp emulates: I/O ports (UART,
 * CMOS, i8042, ACPI, PCI configuration), PCI configuration space, the
 * virtio-pci common, device and notify registers and MSI-X tables, the
 * unassigned MMIO hole, and virtqueues full of descriptors that point
 * outside RAM, wrap around the address space, loop, nest indirect tables
 * and run the avail index far ahead of the ring.  lodge-hyp must survive,
 * put the devices in NEEDS_RESET and keep serving its other domains.
 *
 * The guest spares itself, not the host: buffers the device may write and
 * PFNs it may balloon away lie in a scratch area, BARs are put back before
 * each virtio round (so its own MMIO never lands in its RAM), MSI vectors
 * stay within its IDT, and it never writes a value that powers the machine
 * off or resets it (power_port_write_ends()). */
#include "io.h"
#include "minios.h"
#include "pci.h"
#include "virtio.h"

#define MAX_DEVS      16
#define RING_SIZE     1024              /* the largest queue lodge-hyp accepts */
#define SCRATCH_SIZE  (64u << 10)
#define MMIO_HOLE_LO  0xe0000000ULL
#define MMIO_HOLE_HI  0xfec00000ULL      /* below the IOAPIC and LAPIC */

struct hostile_dev {
	unsigned pci;
	uint32_t bars[6];
	uint16_t command;
	struct vdev vd;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
};

static struct hostile_dev devs[MAX_DEVS];
static unsigned ndevs;
static uint8_t *scratch;
static uint64_t rng;
static struct {
	uint64_t ports, config, regs, mmio, queues, kicks;
} count;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

/* ---- I/O ports and PCI configuration space -------------------------------- */

static const uint16_t interesting_ports[] = {
	0x3f8, 0x3f9, 0x3fa, 0x3fb, 0x3fc, 0x3fd, 0x3fe, 0x3ff,   /* COM1 */
	0x70, 0x71, 0x60, 0x64, 0x80, 0x92,                       /* CMOS, i8042, POST, A20 */
	0x600, 0x601, 0x602, 0x603, 0x604, 0x605, 0x608, 0x609, 0x60a,   /* ACPI */
	0xcf8, 0xcf9, 0xcfc, 0xcfd, 0xcfe, 0xcff,                 /* PCI */
};

static void port_garbage(void)
{
	unsigned n = sizeof(interesting_ports) / sizeof(interesting_ports[0]);
	uint16_t port = rnd() % 4 ? interesting_ports[rnd() % n] : (uint16_t)rnd();
	unsigned size = 1u << (rnd() % 3);
	uint32_t v = rnd();

	if (rnd() % 2) {
		if (size == 1) (void)inb(port);
		else if (size == 2) (void)inw(port);
		else (void)inl(port);
	} else if (!power_port_write_ends(port, size, v)) {
		if (size == 1) outb(port, v);
		else if (size == 2) outw(port, v);
		else outl(port, v);
	}
	count.ports++;
}

static void config_garbage(void)
{
	unsigned dev = rnd() % 4 ? devs[rnd() % (ndevs ? ndevs : 1)].pci : rnd() % 32;
	unsigned reg = rnd() % 256;

	if (rnd() % 2)
		pci_write32(dev, reg & ~3u, rnd());
	else
		pci_write16(dev, reg & ~1u, rnd());
	count.config++;
}

/* Undo what config_garbage may have done to a device we are about to use. */
static void restore_device(struct hostile_dev *h)
{
	unsigned i;

	for (i = 0; i < 6; i++)
		pci_write32(h->pci, 0x10 + 4 * i, h->bars[i]);
	pci_write16(h->pci, 0x04, h->command);
}

/* ---- registers -------------------------------------------------------------- */

static void mmio_garbage_at(uint64_t a)
{
	switch (rnd() % 4) {
	case 0: mmio_write8(a, rnd()); break;
	case 1: mmio_write16(a & ~1ULL, rnd()); break;
	case 2: mmio_write32(a & ~3ULL, rnd()); break;
	default: (void)mmio_read32(a & ~3ULL); break;
	}
	count.mmio++;
}

static void register_garbage(struct hostile_dev *h)
{
	switch (rnd() % 4) {
	case 0: mmio_garbage_at(h->vd.common + rnd() % 0x40); break;
	case 1: if (h->vd.device) mmio_garbage_at(h->vd.device + rnd() % 0x100); break;
	case 2: mmio_write16(h->vd.notify_base + (rnd() % 64) * h->vd.notify_mult, rnd()); count.kicks++; break;
	default: {
		/* The MSI-X table: any address bits, a vector Mini-OS can take. */
		unsigned cap = pci_find_cap(h->pci, 0x11, 0);
		uint32_t table;
		uint64_t base;

		if (!cap)
			break;
		table = pci_read32(h->pci, cap + 4);
		base = pci_bar(h->pci, table & 7) + (table & ~7u) + 16 * (rnd() % 4);
		mmio_write32(base + 0, 0xfee00000u | ((uint32_t)rnd() & 0xff00c));
		mmio_write32(base + 4, rnd() % 4 ? 0 : (uint32_t)rnd());
		mmio_write32(base + 8, 0x20 + rnd() % 32);
		mmio_write32(base + 12, rnd() & 1);
		pci_write16(h->pci, cap + 2, rnd() & 0xc000);
	}
	}
	count.regs++;
}

/* ---- virtqueues ------------------------------------------------------------- */

/* A buffer address and length the device must refuse, or one in scratch. */
static void hostile_buffer(struct vring_desc *d)
{
	uint64_t s = (uint64_t)scratch;

	switch (rnd() % 9) {
	case 0: d->addr = ram_bytes - 16; d->len = 4096; break;             /* crosses the end of RAM */
	case 1: d->addr = MMIO_HOLE_LO + rnd() % 0x10000000; d->len = 512; break;
	case 2: d->addr = ~0ULL - rnd() % 64; d->len = 128; break;             /* wraps around */
	case 3: d->addr = rnd(); d->len = rnd(); break;
	case 4: d->addr = s; d->len = 0xffffffffu; break;
	case 5: d->addr = 0xfee00000; d->len = 64; break;                      /* the LAPIC page */
	default: {
		uint64_t off = rnd() % SCRATCH_SIZE;

		d->addr = s + off;
		d->len = rnd() % (SCRATCH_SIZE - off + 1);
	}
	}
}

/* Scratch contents the device reads: random headers and frames, or for
 * the balloon PFNs that spare us: scratch pages, or no RAM at all. */
static void fill_scratch(int balloon)
{
	uint32_t *w = (uint32_t *)scratch;
	unsigned i;

	for (i = 0; i < SCRATCH_SIZE / 4; i++) {
		if (!balloon)
			w[i] = rnd();
		else if (rnd() % 3)
			w[i] = ((uint64_t)scratch >> 12) + rnd() % (SCRATCH_SIZE >> 12);
		else
			w[i] = rnd() % 2 ? (ram_bytes >> 12) + rnd() % 0x100000 : (uint32_t)rnd() | 0x80000000u;
	}
}

static void hostile_ring(struct hostile_dev *h, uint16_t size)
{
	unsigned i, n = size ? size : 1;

	for (i = 0; i < n; i++) {
		struct vring_desc *d = &h->desc[i];

		hostile_buffer(d);
		d->flags = rnd() & 7;               /* NEXT, WRITE, INDIRECT in any mix */
		d->next = rnd() % 4 ? (i + 1) % n : (uint16_t)rnd();
		if (rnd() % 16 == 0) {
			d->flags = VRING_DESC_F_NEXT;   /* a two-descriptor loop */
			d->next = i ^ 1;
		}
		if (rnd() % 16 == 0) {
			/* An indirect table in scratch that points at itself. */
			struct vring_desc *t = (struct vring_desc *)(scratch + 4096 * (rnd() % 4));

			t[0] = (struct vring_desc){ (uint64_t)t, 64, 4 | 1, rnd() % 4 };
			d->addr = (uint64_t)t;
			d->len = 16 * (1 + rnd() % 8);
			d->flags = 4;
		}
	}
	for (i = 0; i < RING_SIZE; i++)
		h->avail->ring[i] = rnd() % 8 ? rnd() % n : (uint16_t)rnd();
	h->avail->flags = rnd();
	barrier();
	h->avail->idx += rnd() % 8 ? 1 + rnd() % (2 * n) : (uint16_t)rnd();
}

/* Bring a device up the way a sloppy or malicious driver would, give a
 * queue a hostile ring and kick it. */
static void queue_garbage(struct hostile_dev *h)
{
	uint64_t c = h->vd.common;
	uint16_t q = rnd() % 4, size;

	restore_device(h);
	mmio_write8(c + 0x14, 0);                                   /* reset */
	mmio_write8(c + 0x14, 1 | 2);
	mmio_write32(c + 0x08, rnd() % 2);                          /* driver features: any */
	mmio_write32(c + 0x0c, rnd() % 4 ? 0xffffffffu : (uint32_t)rnd());
	mmio_write8(c + 0x14, 1 | 2 | 8);
	mmio_write16(c + 0x16, q);
	size = mmio_read16(c + 0x18);
	if (rnd() % 4 == 0)
		mmio_write16(c + 0x18, rnd() % 4 ? 1u << (rnd() % 12) : (uint16_t)rnd());
	size = mmio_read16(c + 0x18);
	if (size > RING_SIZE)     /* the device refuses such a ring; ours stays in bounds */
		size = RING_SIZE;
	fill_scratch(h->vd.type == 5);
	hostile_ring(h, size);
	if (rnd() % 8) {
		mmio_write64(c + 0x20, (uint64_t)h->desc);
		mmio_write64(c + 0x28, (uint64_t)h->avail);
		mmio_write64(c + 0x30, (uint64_t)h->used);
	} else {                                                    /* rings out of RAM or misaligned */
		mmio_write64(c + 0x20, rnd());
		mmio_write64(c + 0x28, ram_bytes - 2);
		mmio_write64(c + 0x30, (uint64_t)h->used + 1);
	}
	mmio_write16(c + 0x1a, rnd() % 4 ? 0 : (uint16_t)rnd());   /* MSI-X vector */
	mmio_write16(c + 0x1c, 1);                                  /* enable */
	mmio_write8(c + 0x14, 1 | 2 | 4 | 8);
	mb();
	mmio_write16(h->vd.notify_base + mmio_read16(c + 0x1e) * h->vd.notify_mult, rnd() % 4 ? q : (uint16_t)rnd());
	count.queues++;
	count.kicks++;
}

/* ---- the command ------------------------------------------------------------- */

static void find_devices(void)
{
	static const uint16_t types[] = { 1, 2, 5 };   /* net, blk, balloon */
	unsigned t, nth, i;

	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (nth = 0; ndevs < MAX_DEVS; nth++) {
			struct hostile_dev *h = &devs[ndevs];

			if (virtio_find(types[t], nth, &h->vd))
				break;
			h->pci = h->vd.pci;
			for (i = 0; i < 6; i++)
				h->bars[i] = pci_read32(h->pci, 0x10 + 4 * i);
			h->command = pci_read16(h->pci, 0x04);
			h->desc = kalloc(16 * RING_SIZE, 4096);
			h->avail = kalloc(6 + 2 * RING_SIZE, 4096);
			h->used = kalloc(6 + 8 * RING_SIZE, 4096);
			ndevs++;
		}
	}
}

static void cmd_hostile(int argc, char **argv)
{
	uint64_t seconds, end, rounds = 0;
	unsigned i;

	if (argc < 2 || !(seconds = strtou64(argv[1], NULL))) {
		printf("usage: hostile SECONDS [SEED]\n");
		return;
	}
	rng = argc > 2 ? strtou64(argv[2], NULL) : time_ns();
	if (!rng)
		rng = 1;
	if (!scratch) {
		scratch = kalloc(SCRATCH_SIZE, 4096);
		find_devices();
	}
	printf("hostile: %lu s against %u virtio devices, the ports and the MMIO hole (seed %lu)\n",
	       seconds, ndevs, rng);
	end = time_ns() + seconds * 1000000000ULL;
	while (time_ns() < end) {
		switch (rnd() % 8) {
		case 0: case 1: port_garbage(); break;
		case 2: config_garbage(); break;
		case 3: mmio_garbage_at(MMIO_HOLE_LO + rnd() % (MMIO_HOLE_HI - MMIO_HOLE_LO)); break;
		case 4: case 5:
			if (ndevs) {
				struct hostile_dev *h = &devs[rnd() % ndevs];

				restore_device(h);
				register_garbage(h);
			}
			break;
		default:
			if (ndevs)
				queue_garbage(&devs[rnd() % ndevs]);
		}
		rounds++;
	}
	for (i = 0; i < ndevs; i++) {
		restore_device(&devs[i]);
		mmio_write8(devs[i].vd.common + 0x14, 0);           /* leave them reset */
	}
	uart_init();              /* line settings and interrupts, for the shell */
	power_button_init();
	printf("hostile: done: %lu rounds: %lu port, %lu config, %lu register, %lu MMIO accesses, "
	       "%lu hostile queues, %lu kicks\n", rounds, count.ports, count.config, count.regs, count.mmio,
	       count.queues, count.kicks);
}

static const struct command hostile_commands[] = {
	{ "hostile", "SECONDS [SEED]", "attack lodge-hyp's devices with garbage", cmd_hostile },
};

void hostile_init(void)
{
	shell_register(hostile_commands, sizeof(hostile_commands) / sizeof(hostile_commands[0]));
}

/* Device state loaders (state_load_named(), src/hyp/save/state.h) against a
 * forged save file or migration stream: the real devices of a typical
 * domain -- COM1, acpi-pm, i8042, rtc, the PCI bus, a virtio-blk on a
 * temporary file, a virtio-net on a pipe standing in for the tap, the
 * balloon -- created once over guest RAM with a PROT_NONE guard page on
 * either side, so a device that a loaded state sends outside RAM faults.
 * Input: one byte picking the entry (modulo the registry, in creation
 * order: uart.3f8, acpi-pm, i8042, rtc, pci, virtio-blk.0, virtio-net.0,
 * virtio-balloon), then that entry's payload, loaded with the entry's
 * own format version.  Loaded or refused, the device is then exercised
 * the way a guest would touch it right after a restore: its registers
 * read and written through the bus; a virtio device's common config,
 * every queue, ISR, device config and MSI-X table read, every queue
 * kicked, and, when the state started it, served for a moment from the
 * rings a real driver left in RAM (restored before each input).  A state
 * that loaded must survive a save -- after a quiesce -- and load again
 * into the reset device.  Then the virtio device is reset through its
 * status register and every entry this input touched gets the pristine
 * state captured at start-up, so inputs are independent.
 * Properties: no crash, no access outside the devices' structures (ASan)
 * or guest RAM (the guard pages), a virtio reset always reads back 0,
 * what save() writes load() accepts, the pristine state always loads.
 *
 * Seeds: LODGE_FUZZ_DEVSTATE_SEEDS=DIR replay-fuzz-devstate writes each
 * entry's save() of a device driven to DRIVER_OK with its queues enabled
 * and requests done (the virtio ones), or with registers set (the rest),
 * plus truncated and bit-flipped variants, into DIR and exits. */
#include "vring.h"
#include "backend/disk.h"
#include "backend/tap.h"
#include "dev/devices.h"
#include "platform.h"
#include "save/state.h"
#include "virtio/balloon.h"
#include "virtio/blk.h"
#include "virtio/net.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#define DISK_SIZE  (1u << 20)
#define SNAP_BASE  VR_RING_BASE            /* what a driver left in RAM */
#define SNAP_LEN   0x40000u
#define SNAP_DATA  VR_DATA_BASE
#define SNAP_DLEN  0x1000u
#define MAX_ENTRY  16

struct vdev_slot {
	const char *name;
	unsigned slot, nq;
	uint16_t id;
};
static const struct vdev_slot vdevs[] = {
	{ "virtio-blk.0", 1, 1, 0x1042 },
	{ "virtio-net.0", 2, 2, 0x1041 },
	{ "virtio-balloon", DOMAIN_BALLOON_SLOT, 3, 0x1045 },   /* the last slot, always */
};
#define NVDEV (sizeof(vdevs) / sizeof(vdevs[0]))

struct entry {
	const char *name;
	uint32_t version;
	const struct vdev_slot *vd;      /* NULL: a platform device or the bus */
	struct state_buf pristine;       /* as created (decoding on) */
	struct state_buf driven;         /* as a driver left it: the seed */
	uint8_t *ram;                    /* the rings and buffers it left */
};
static struct entry ent[MAX_ENTRY];
static unsigned nent;

static struct disk disk;
static struct tap tap = { .name = "fuzz0", .mac = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 } };
static int tap_peer;
static struct virtio_balloon *balloon;
static struct uart *com1;

static void drain(void)
{
	static uint8_t buf[1 << 16];

	while (read(tap_peer, buf, sizeof(buf)) > 0)
		;
}

static uint64_t pio(uint16_t port, unsigned size, int write, uint64_t v)
{
	bus_access(BUS_PIO, port, size, write, &v);
	return v;
}

/* Guest RAM between two PROT_NONE pages: one byte past either end faults. */
static void guarded_ram(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, VR_RAM_SIZE + 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	FUZZ_CHECK(p != MAP_FAILED, "mmap guest RAM");
	FUZZ_CHECK(mprotect(p + pg, VR_RAM_SIZE, PROT_READ | PROT_WRITE) == 0, "mprotect guest RAM");
	(void)vr_init_ram;                     /* vring.h's, without the guards */
	vr_ram = p + pg;
	guest_mem_wrap(&vr_dom.mem, vr_ram, VR_RAM_SIZE);
}

static void create_devices(void)
{
	char path[] = "/tmp/lodge-fuzz-devstate.XXXXXX", spec[128], err[256];
	int fd = mkstemp(path), p[2];

	FUZZ_CHECK(fd >= 0 && ftruncate(fd, DISK_SIZE) == 0, "the temporary disk");
	close(fd);
	snprintf(spec, sizeof(spec), "%s,id=fuzz-devstate", path);
	FUZZ_CHECK(disk_parse(spec, &disk, err, sizeof(err)) == 0 && disk_open(&disk, err, sizeof(err)) == 0, err);
	unlink(path);                 /* the open descriptors keep it */
	FUZZ_CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0, "pipe");
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	tap.fd = p[1];
	tap_peer = p[0];

	/* In lodge-hyp's order (build.c): platform devices, then PCI. */
	FUZZ_CHECK((com1 = uart_create(&vr_dom, 0x3f8, 4)) != NULL, "uart_create");
	FUZZ_CHECK(acpi_pm_init(&vr_dom) == 0, "acpi_pm_init");
	FUZZ_CHECK(i8042_init(&vr_dom) == 0, "i8042_init");
	FUZZ_CHECK(rtc_init(&vr_dom) == 0, "rtc_init");
	FUZZ_CHECK(pci_init() == 0, "pci_init");
	FUZZ_CHECK(virtio_blk_create(&vr_dom, &disk) == 0, "virtio_blk_create");
	FUZZ_CHECK(virtio_net_create(&vr_dom, &tap) == 0, "virtio_net_create");
	FUZZ_CHECK(virtio_balloon_create(&vr_dom, 0, &balloon) == 0, "virtio_balloon_create");
}

static void save_entry(unsigned i, struct state_buf *b)
{
	state_buf_init(b);
	state_quiesce_all();
	FUZZ_CHECK(state_save_entry(i, b) == 0 && b->err == 0, "save");
	state_resume_all();
}

static void load_ok(unsigned i, const struct state_buf *b, const char *what)
{
	char why[256] = "", msg[400];
	int rc = state_load_named(ent[i].name, ent[i].version, b->data, b->len, why, sizeof(why));

	snprintf(msg, sizeof(msg), "%s of %s refused: %s", what, ent[i].name, why);
	FUZZ_CHECK(rc == 0, msg);
}

static void vdev_reset(const struct vdev_slot *vd)
{
	FUZZ_CHECK(probe_device(vd->slot, vd->id) == 0, "a virtio device left its slot");
	SET_COMMON(0x14, 1, 0);             /* joins the I/O thread */
	FUZZ_CHECK(COMMON(0x14, 1) == 0, "the device did not reset");
	if (vd->id == 0x1041)
		drain();
}

/* ---- a driver's state, for the seeds and the RAM under each input --------- */

static uint8_t blk_flush[] = {
	0x01,                                   /* 2 buffers, queue 0 */
	0x02, 16, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   /* FLUSH header */
	0x01, 1,                                /* status byte */
};
static uint8_t bal_stats[] = {
	0x40,                                   /* 1 buffer, queue 2 */
	0x02, 20, 0, 4, 0, 0, 0, 0, 1, 0, 0, 0, 0, 5, 0, 0, 0, 0, 2, 0, 0, 0, 0,
};

static void drive(const struct vdev_slot *vd)
{
	struct vr_in in = { NULL, 0 };
	uint64_t want = 0;
	unsigned q;

	FUZZ_CHECK(probe_device(vd->slot, vd->id) == 0, "a virtio device on its slot");
	if (vd->id == 0x1042) {
		in = (struct vr_in){ blk_flush, sizeof(blk_flush) };
		want = 1ULL << VIRTIO_F_EVENT_IDX;
	} else if (vd->id == 0x1041) {
		want = 1ULL << 5 | 1ULL << 16 | 1ULL << VIRTIO_F_INDIRECT_DESC;
	} else {
		in = (struct vr_in){ bal_stats, sizeof(bal_stats) };
		want = 1ULL << 1 | 1ULL << 2;
	}
	FUZZ_CHECK(vr_driver_init(vd->nq, 8, want) == 0, "FEATURES_OK refused");
	for (q = 0; q < vd->nq; q++) {
		SET_COMMON(0x16, 2, q);
		SET_COMMON(0x1a, 2, q + 1);     /* MSI-X vectors 1.. */
	}
	SET_COMMON(0x10, 2, 0);
	mmio_write((cfg_read(vd->slot, PCI_BAR0 + 4, 4) & ~0xfULL) + 16, 4, 0xfee00000);
	vr_build(&in);
	vr_q[0].expect = vr_q[0].avail_idx;
	FUZZ_CHECK(!vr_go(vd->id == 0x1041 ? drain : NULL), "driving the device: NEEDS_RESET");
	if (vd->id == 0x1045) {
		struct balloon_info bi;
		int t;

		for (t = 0; t < 2000; t++) {     /* until it holds the stats buffer */
			virtio_balloon_info(balloon, &bi);
			if (bi.stats_valid)
				break;
			usleep(1000);
		}
		FUZZ_CHECK(bi.stats_valid, "the balloon never took its stats buffer");
		virtio_balloon_set_target(balloon, 64);
		mmio_write(bar0 + device_off + 4, 4, 16);
	}
}

static void drive_platform(void)
{
	pio(0x3fb, 1, 1, 0x83);                 /* divisor 1, 8N1, IER, scratch, FIFO */
	pio(0x3f8, 1, 1, 1);
	pio(0x3f9, 1, 1, 0);
	pio(0x3fb, 1, 1, 0x03);
	pio(0x3f9, 1, 1, 0x05);
	pio(0x3ff, 1, 1, 0x42);
	pio(0x3fa, 1, 1, 0x01);
	FUZZ_CHECK(uart_receive(com1, (const uint8_t *)"hello", 5) == 5, "uart input");
	pio(0x3f8, 1, 0, 0);                    /* 'h' read, "ello" left */
	pio(PORT_PM1A_EVT + 2, 2, 1, 0x0100);   /* PWRBTN_EN */
	pio(PORT_PM1A_CNT, 2, 1, 0x0001);       /* SCI_EN */
	pio(PORT_I8042_CMD, 1, 1, 0x20);        /* read CTR: output full */
	pio(0x70, 1, 1, 0x0b);
}

static void write_seed(const char *dir, unsigned i, const char *kind, const uint8_t *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%s", dir, ent[i].name, kind);
	f = fopen(path, "wb");
	FUZZ_CHECK(f, path);
	fputc(i, f);
	if (len)
		fwrite(p, 1, len, f);
	fclose(f);
}

static void write_seeds(const char *dir)
{
	unsigned i;

	mkdir(dir, 0755);
	for (i = 0; i < nent; i++) {
		const struct state_buf *b = &ent[i].driven;
		uint8_t *c = malloc(b->len + 1);

		write_seed(dir, i, "saved", b->data, b->len);
		write_seed(dir, i, "half", b->data, b->len / 2);
		write_seed(dir, i, "short", b->data, b->len ? b->len - 1 : 0);
		memcpy(c, b->data, b->len);
		if (b->len) {
			c[b->len / 3] ^= 0x80;
			write_seed(dir, i, "flip", c, b->len);
			c[b->len / 3] ^= 0x80;
			c[b->len - 1] ^= 0x01;
			write_seed(dir, i, "flip-end", c, b->len);
		}
		free(c);
	}
}

static void setup(void)
{
	const char *seeds = getenv("LODGE_FUZZ_DEVSTATE_SEEDS");
	unsigned i, v;

	log_init("fuzz-devstate");
	log_set_level(LOG_ERR);
	guarded_ram();
	create_devices();
	nent = state_count();
	FUZZ_CHECK(nent == 8 && nent <= MAX_ENTRY, "the registry holds eight entries");
	for (i = 0; i < nent; i++) {
		ent[i].name = state_name(i);
		ent[i].version = state_version(i);
		for (v = 0; v < NVDEV; v++)
			if (strcmp(ent[i].name, vdevs[v].name) == 0)
				ent[i].vd = &vdevs[v];
	}
	/* Decoding on, as firmware leaves it, so the BARs answer. */
	for (v = 0; v < NVDEV; v++)
		FUZZ_CHECK(probe_device(vdevs[v].slot, vdevs[v].id) == 0, "a virtio device on its slot");
	for (i = 0; i < nent; i++)
		save_entry(i, &ent[i].pristine);

	/* Each virtio device driven alone (they share the ring area), saved,
	 * its RAM kept, reset; then the platform devices. */
	for (i = 0; i < nent; i++) {
		if (!ent[i].vd)
			continue;
		drive(ent[i].vd);
		save_entry(i, &ent[i].driven);
		ent[i].ram = malloc(SNAP_LEN + SNAP_DLEN);
		FUZZ_CHECK(ent[i].ram, "malloc");
		memcpy(ent[i].ram, vr_ram + SNAP_BASE, SNAP_LEN);
		memcpy(ent[i].ram + SNAP_LEN, vr_ram + SNAP_DATA, SNAP_DLEN);
		vdev_reset(ent[i].vd);
		load_ok(i, &ent[i].pristine, "the pristine state");
	}
	drive_platform();
	for (i = 0; i < nent; i++) {
		if (ent[i].vd)
			continue;
		save_entry(i, &ent[i].driven);
		load_ok(i, &ent[i].pristine, "the pristine state");
	}
	if (seeds) {
		write_seeds(seeds);
		exit(0);
	}
}

/* ---- after the load: a guest touching the device -------------------------- */

static void poke_platform(void)
{
	unsigned p;

	for (p = 0; p < 8; p++)
		pio(0x3f8 + p, 1, 0, 0);
	pio(0x3f9, 1, 1, 0x0f);
	pio(0x3fc, 1, 1, 0x1f);             /* loopback */
	pio(0x3fd, 1, 0, 0);
	pio(0x3fa, 1, 0, 0);
	pio(PORT_PM1A_EVT, 2, 0, 0);
	pio(PORT_PM1A_EVT + 2, 2, 0, 0);
	pio(PORT_PM1A_CNT, 2, 0, 0);
	pio(PORT_PM1A_EVT, 2, 1, 0xffff);   /* write-1-to-clear */
	pio(PORT_I8042_CMD, 1, 0, 0);
	pio(PORT_I8042_DATA, 1, 0, 0);
	pio(PORT_I8042_CMD, 1, 1, 0x20);
	pio(PORT_I8042_DATA, 1, 0, 0);
	pio(0x71, 1, 0, 0);
	pio(0x70, 1, 1, 0x0a);
	pio(0x71, 1, 0, 0);
	pio(0x70, 1, 1, 0x7f);
	pio(0x71, 1, 1, 0x5a);
}

static void poke_pci(void)
{
	unsigned s, r;

	pio(0xcf8, 4, 0, 0);
	pio(0xcfc, 4, 0, 0);                 /* through the loaded address latch */
	for (s = 0; s < 5; s++)
		for (r = 0; r < 0x40; r += 4)
			cfg_read(s, r, 4);
	for (s = 0; s < NVDEV; s++) {
		uint64_t b0 = cfg_read(vdevs[s].slot, PCI_BAR0, 4) & ~0xfULL;
		uint64_t b1 = cfg_read(vdevs[s].slot, PCI_BAR0 + 4, 4) & ~0xfULL;

		mmio_read(b0 + 0x14, 1);
		mmio_read(b1, 4);
	}
}

/* Common config, each queue, ISR, device config, MSI-X; kick; if the
 * loaded state started the device, let it serve until its used rings
 * catch up with avail, NEEDS_RESET, or 20 ms. */
static void poke_virtio(const struct vdev_slot *vd)
{
	uint64_t bar1, deadline;
	unsigned q, i;
	uint8_t status;

	FUZZ_CHECK(probe_device(vd->slot, vd->id) == 0, "a virtio device left its slot");
	bar1 = cfg_read(vd->slot, PCI_BAR0 + 4, 4) & ~0xfULL;
	for (i = 0; i < 0x38; i += 4)
		COMMON(i, 4);
	COMMON(0x14, 1);
	COMMON(0x15, 1);
	for (q = 0; q < vd->nq + 1; q++) {
		SET_COMMON(0x16, 2, q);
		for (i = 0x18; i < 0x38; i += 2)
			COMMON(i, 2);
		SET_COMMON(0x18, 2, 4);          /* refused on a live queue */
		SET_COMMON(0x1c, 2, 1);
	}
	for (i = 0; i < 32; i += 4)
		mmio_read(bar0 + device_off + i, 4);
	for (i = 0; i < 16 * 9 + 16; i += 4)
		mmio_read(bar1 + i, 4);
	mmio_read(bar1 + 0x800, 8);             /* the PBA */
	cfg_write(vd->slot, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE);
	cfg_read(vd->slot, 0x40, 4);
	mmio_read(bar0 + 0x1000, 1);            /* ISR: reading acknowledges */
	status = COMMON(0x14, 1);
	SET_COMMON(0x14, 1, status | VIRTIO_STATUS_DRIVER_OK);
	for (q = 0; q < vd->nq; q++)
		mmio_write(bar0 + notify_off + 4 * q, 2, q);
	if (!(COMMON(0x14, 1) & VIRTIO_STATUS_DRIVER_OK))
		return;
	deadline = vr_now_ms() + 20;
	while (vr_now_ms() < deadline) {
		bool done = true;

		if (COMMON(0x14, 1) & VIRTIO_STATUS_NEEDS_RESET)
			break;
		for (q = 0; q < vd->nq; q++) {
			uint64_t a, u;

			SET_COMMON(0x16, 2, q);
			if (!COMMON(0x1c, 2))
				continue;
			a = COMMON(0x28, 8);
			u = COMMON(0x30, 8);
			/* The loader placed them in RAM, or it is a bug. */
			FUZZ_CHECK(a + 4 <= VR_RAM_SIZE && u + 4 <= VR_RAM_SIZE, "a live ring outside guest RAM");
			if (*(volatile uint16_t *)(vr_ram + a + 2) != *(volatile uint16_t *)(vr_ram + u + 2))
				done = false;
		}
		if (done)
			break;
		if (vd->id == 0x1041)
			drain();
		sched_yield();
	}
}

static void poke(unsigned i)
{
	if (ent[i].vd)
		poke_virtio(ent[i].vd);
	else if (strcmp(ent[i].name, "pci") == 0)
		poke_pci();
	else
		poke_platform();
}

/* Back to the pristine machine, RAM as a driver left it for entry i. */
static void clean(unsigned i)
{
	unsigned v;

	/* The bus first: a loaded one may have moved or hidden the BARs. */
	for (v = 0; v < nent; v++)
		if (strcmp(ent[v].name, "pci") == 0)
			load_ok(v, &ent[v].pristine, "the pristine state");
	for (v = 0; v < NVDEV; v++)
		vdev_reset(&vdevs[v]);
	for (v = 0; v < nent; v++)
		load_ok(v, &ent[v].pristine, "the pristine state");
	if (ent[i].ram) {
		memcpy(vr_ram + SNAP_BASE, ent[i].ram, SNAP_LEN);
		memcpy(vr_ram + SNAP_DATA, ent[i].ram + SNAP_LEN, SNAP_DLEN);
	} else {
		memset(vr_ram + SNAP_BASE, 0, SNAP_LEN);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	char why[256] = "";
	unsigned i;
	int rc;

	if (!ready) {
		setup();
		ready = true;
	}
	if (size < 1)
		return 0;
	i = data[0] % nent;
	clean(i);
	rc = state_load_named(ent[i].name, ent[i].version, data + 1, size - 1, why, sizeof(why));
	FUZZ_CHECK(rc == 0 || why[0], "a refusal without a reason");
	if (rc == 0) {
		struct state_buf again;

		/* What loaded saves, and what it saves loads. */
		save_entry(i, &again);
		if (ent[i].vd)
			vdev_reset(ent[i].vd);
		load_ok(i, &again, "a loaded state saved again");
		state_buf_free(&again);
	}
	poke(i);
	if (ent[i].vd)
		vdev_reset(ent[i].vd);
	return 0;
}

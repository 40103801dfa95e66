/* Commands for save/restore and live-migration tests.
 *
 *   counter [MS|stop]    print "counter N" every MS ms (100), N = 1, 2, ...
 *   memfill MIB [SEED]   fill MIB MiB of free memory with a known pattern
 *   memcheck             verify the region memfill last filled
 *   dirty MIB [MS]|stop  dirty every page of MIB MiB over and over (one
 *                        qword in each 4 KiB page: the pass number), a pass
 *                        every MS ms (0, the default: back to back),
 *                        "dirty: pass N" once a second; "dirty stop" checks
 *                        that every page holds its last pass's number
 *
 * counter and dirty are background tasks (shell.c): they return at once,
 * and the shell's one loop interleaves them with the device polls (ARP
 * and ICMP echo are answered) and console input (commands still run;
 * Ctrl-C or `stop` ends the tasks).  Their state is static, and a restore
 * brings the guest's memory back whole: after one, the count and the
 * regions carry on.  Time is time_ns() (the TSC); a clock that jumps
 * across a restore delays nothing and skips no count.
 *
 * Every instruction here may be emulated (PVM): memory is written and
 * checked a page at a time with rep stosq / repe scasq, and each 4 KiB
 * page of a memfill holds one value, a xorshift of its address and the
 * seed, in all of its 512 words (a page from the wrong place, a zeroed or
 * stale page, all show). */
#include "io.h"
#include "minios.h"

#define MIB_PAGES 256UL

static void line_start(void)
{
	if (!uart_at_line_start())
		uart_puts("\n");
}

static inline void fill_qwords(uint64_t a, uint64_t v, uint64_t n)
{
	__asm__ volatile("rep stosq" : "+D"(a), "+c"(n) : "a"(v) : "memory");
}

/* The first of n (>= 1) qwords at a that is not v, or 0. */
static inline uint64_t scan_qwords(uint64_t a, uint64_t v, uint64_t n)
{
	uint8_t ne;

	__asm__ volatile("repe scasq; setne %0" : "=q"(ne), "+D"(a), "+c"(n) : "a"(v) : "memory", "cc");
	return ne ? a - 8 : 0;
}

/* counter */
static uint64_t counter_n;
static void counter_step(struct task *t, uint64_t now)
{
	line_start();
	printf("counter %lu\n", ++counter_n);
	t->due += t->period;
	if (t->due <= now)                     /* behind (or the clock jumped): no burst */
		t->due = now + t->period;
}
static struct task counter_task = { "counter", counter_step, 0, 0, 0 };

static void cmd_counter(int argc, char **argv)
{
	uint64_t ms = 100;

	if (argc > 1 && strcmp(argv[1], "stop") == 0) {
		task_stop(&counter_task);
		printf("counter: stopped at %lu\n", counter_n);
		return;
	}
	if (argc > 1)
		ms = strtou64(argv[1], NULL);
	if (!ms)
		ms = 1;
	counter_n = 0;
	counter_task.period = ms * 1000000;
	printf("counter: every %lu ms\n", ms);
	task_start(&counter_task, time_ns());
	counter_task.due += counter_task.period;
}

/* memfill, memcheck: the region, kept where a restored guest finds it. */
static struct { uint64_t addr, mib, seed; } fill;

static uint64_t pattern(uint64_t addr, uint64_t seed)
{
	uint64_t x = addr ^ (seed * 0x9e3779b97f4a7c15ULL) ^ 0x5851f42d4c957f2dULL;

	x ^= x << 13;                           /* xorshift64 */
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static void cmd_memfill(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtou64(argv[1], NULL) : 16, seed = argc > 2 ? strtou64(argv[2], NULL) : 1;
	uint64_t a, end;

	if (fill.mib) {                         /* the last region goes back first */
		page_give_run(fill.addr, fill.mib * MIB_PAGES);
		fill.mib = 0;
	}
	if (!mib || !(a = page_take_run(mib * MIB_PAGES))) {
		printf("memfill: cannot: %lu MiB wanted, %lu MiB free\n", mib, free_pages.count >> 8);
		return;
	}
	for (end = a + (mib << 20), fill.addr = a; a < end; a += 4096)
		fill_qwords(a, pattern(a, seed), 512);
	fill.mib = mib;
	fill.seed = seed;
	printf("memfill: %lu MiB at 0x%lx seed %lu\n", mib, fill.addr, seed);
}

static void cmd_memcheck(int argc, char **argv)
{
	uint64_t a, end, bad, bad_pages = 0, first = 0, want = 0, got = 0;

	if (!fill.mib) {
		printf("memcheck: nothing filled (memfill MIB [SEED] first)\n");
		return;
	}
	for (a = fill.addr, end = a + (fill.mib << 20); a < end; a += 4096) {
		uint64_t v = pattern(a, fill.seed);

		if ((bad = scan_qwords(a, v, 512))) {
			if (!bad_pages++) {
				first = bad;
				want = v;
				got = *(volatile uint64_t *)bad;
			}
		}
	}
	if (!bad_pages)
		printf("memcheck: ok %lu MiB\n", fill.mib);
	else
		printf("memcheck: BAD at 0x%lx (want 0x%lx got 0x%lx), %lu of %lu pages bad\n", first, want,
		       got, bad_pages, fill.mib * MIB_PAGES);
}

/* One qword in each of n pages from a (n a multiple of 16), unrolled: a
 * page written at all is a page a migration sends again, and under PVM
 * the cost is per instruction and per byte, so this dirties pages far
 * faster than rewriting them whole would. */
static void dirty_pages(uint64_t a, uint64_t v, uint64_t n)
{
	for (; n; n -= 16, a += 16 * 4096)
		__asm__ volatile(
			"mov %1, 0(%0); mov %1, 4096(%0); mov %1, 8192(%0); mov %1, 12288(%0)\n\t"
			"mov %1, 16384(%0); mov %1, 20480(%0); mov %1, 24576(%0); mov %1, 28672(%0)\n\t"
			"mov %1, 32768(%0); mov %1, 36864(%0); mov %1, 40960(%0); mov %1, 45056(%0)\n\t"
			"mov %1, 49152(%0); mov %1, 53248(%0); mov %1, 57344(%0); mov %1, 61440(%0)"
			:: "r"(a), "r"(v) : "memory");
}

/* dirty: one MiB per step, so the loop polls between. */
static struct { uint64_t addr, mib, off, pass, pass_start, last_print, ms; } dirt;

static void dirty_step(struct task *t, uint64_t now)
{
	dirty_pages(dirt.addr + dirt.off, dirt.pass + 1, MIB_PAGES);
	dirt.off += 1 << 20;
	t->due = now;
	if (dirt.off < dirt.mib << 20)
		return;
	dirt.off = 0;
	dirt.pass++;
	if (now < dirt.last_print || now - dirt.last_print >= 1000000000ULL) {
		line_start();
		printf("dirty: pass %lu\n", dirt.pass);
		dirt.last_print = now;
	}
	if (dirt.ms) {
		uint64_t next = dirt.pass_start + dirt.ms * 1000000;

		t->due = next > now ? next : now;
	}
	dirt.pass_start = t->due;
}
static struct task dirty_task = { "dirty", dirty_step, 0, 0, 0 };

static void cmd_dirty(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtou64(argv[1], NULL) : 0, now;

	if (argc > 1 && strcmp(argv[1], "stop") == 0) {
		uint64_t a, bad = 0, first = 0, want = 0, got = 0;

		task_stop(&dirty_task);
		/* Every page holds its last pass's number: pass + 1 below the
		 * offset the pass in progress reached, pass above it. */
		for (a = 0; dirt.mib && a < dirt.mib << 20; a += 4096) {
			uint64_t w = a < dirt.off ? dirt.pass + 1 : dirt.pass;
			uint64_t g = *(volatile uint64_t *)(dirt.addr + a);

			if (g != w && !bad++) {
				first = dirt.addr + a;
				want = w;
				got = g;
			}
		}
		if (bad)
			printf("dirty: stopped after %lu passes, BAD at 0x%lx (want %lu got %lu), %lu pages bad\n",
			       dirt.pass, first, want, got, bad);
		else
			printf("dirty: stopped after %lu passes, ok\n", dirt.pass);
		return;
	}
	task_stop(&dirty_task);
	if (dirt.mib) {
		page_give_run(dirt.addr, dirt.mib * MIB_PAGES);
		dirt.mib = 0;
	}
	if (!mib || !(dirt.addr = page_take_run(mib * MIB_PAGES))) {
		printf("dirty: cannot: %lu MiB wanted, %lu MiB free\n", mib, free_pages.count >> 8);
		return;
	}
	now = time_ns();
	dirt.mib = mib;
	dirt.off = dirt.pass = 0;
	dirt.ms = argc > 2 ? strtou64(argv[2], NULL) : 0;
	dirt.pass_start = dirt.last_print = now;
	dirty_task.period = dirt.ms * 1000000;
	if (dirt.ms)
		printf("dirty: %lu MiB at 0x%lx, a pass every %lu ms\n", mib, dirt.addr, dirt.ms);
	else
		printf("dirty: %lu MiB at 0x%lx, passes back to back\n", mib, dirt.addr);
	task_start(&dirty_task, now);
}

static const struct command task_commands[] = {
	{ "counter", "[MS|stop]", "print \"counter N\" every MS ms, in the background", cmd_counter },
	{ "memfill", "MIB [SEED]", "fill MIB MiB of free memory with a pattern from SEED", cmd_memfill },
	{ "memcheck", "", "verify the memory memfill filled", cmd_memcheck },
	{ "dirty", "MIB [MS]|stop", "rewrite MIB MiB over and over, in the background", cmd_dirty },
};

void tasks_init(void)
{
	shell_register(task_commands, sizeof(task_commands) / sizeof(task_commands[0]));
}

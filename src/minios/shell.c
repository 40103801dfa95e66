/* The serial console's command shell: one table of commands. */
#include "io.h"
#include "minios.h"

#define LINE_MAX 256

#define MAX_TABLES 12

/* The base commands, then each driver's own table. */
static struct { const struct command *cmds; unsigned n; } tables[MAX_TABLES];
static unsigned ntables;

void shell_register(const struct command *cmds, unsigned n)
{
	if (ntables < MAX_TABLES) {
		tables[ntables].cmds = cmds;
		tables[ntables++].n = n;
	}
}

static void cmd_help(int argc, char **argv)
{
	unsigned t, i;

	for (t = 0; t < ntables; t++)
		for (i = 0; i < tables[t].n; i++)
			printf("  %s %s - %s\n", tables[t].cmds[i].name, tables[t].cmds[i].args,
			       tables[t].cmds[i].help);
}

static void cmd_echo(int argc, char **argv)
{
	char line[LINE_MAX];
	size_t len = 0;
	int i;

	line[0] = '\0';
	for (i = 1; i < argc; i++)
		len += snprintf(line + len, sizeof(line) - len, "%s%s", i > 1 ? " " : "", argv[i]);
	printf("%s\n", line);
}

static void cmd_cpus(int argc, char **argv) { printf("cpus: %u up\n", cpus_up); }
/* What the guest may use: RAM less what the balloon gave the host. */
static void cmd_mem(int argc, char **argv)
{
	printf("mem: usable %lu MiB of %lu MiB RAM, %lu MiB free, balloon %lu MiB\n",
	       ram_mib() - (balloon_set.count >> 8), ram_mib(), free_pages.count >> 8,
	       balloon_set.count >> 8);
}
static void cmd_cmdline(int argc, char **argv) { printf("cmdline: %s\n", boot_cmdline); }
static void cmd_poweroff(int argc, char **argv) { power_off(); }
static void cmd_reboot(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "kbd") == 0) {
		printf("minios: rebooting through the keyboard controller\n");
		outb(0x64, 0xfe);
	}
	power_reboot();
}
static void cmd_crash(int argc, char **argv) { power_crash(); }

static void cmd_acpi(int argc, char **argv)
{
	unsigned i;

	for (i = 0; i < acpi.ntables; i++)
		printf("acpi: %s at %lx\n", acpi.tables[i], acpi.table_addr[i]);
	printf("acpi: %u CPUs in the MADT\n", acpi.ncpus);
}

static void cmd_uptime(int argc, char **argv)
{
	uint64_t ms = time_ns() / 1000000;

	printf("uptime: %lu.%03lu s\n", ms / 1000, ms % 1000);
}

/* burn SECONDS [NCPUS]: keep NCPUS vCPUs busy for SECONDS. */
static volatile uint64_t burn_until;

static void burn_here(unsigned cpu)
{
	while (time_ns() < burn_until)
		for (volatile int i = 0; i < 1000; i++)
			;
}

static void cmd_burn(int argc, char **argv)
{
	uint64_t secs = argc > 1 ? strtou64(argv[1], NULL) : 10;
	unsigned n = argc > 2 ? strtou64(argv[2], NULL) : 1, i;

	if (n > cpus_up)
		n = cpus_up;
	burn_until = time_ns() + secs * 1000000000ULL;
	printf("burn: %lu s on %u CPUs\n", secs, n);
	for (i = 1; i < n; i++)
		smp_run_on(i, burn_here);
	burn_here(0);
	printf("burn: done\n");
}

/* touch MIB: write MIB MiB of free memory, so the host sees the guest's
 * resident memory grow.  The pages come from the pool the balloon takes
 * from, top down in the same order, and stay free; with less free memory
 * than asked (ballooned away) it touches nothing and says so. */
static void cmd_touch(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtou64(argv[1], NULL) : 16;

	if (mib << 8 > free_pages.count) {
		printf("touch: cannot: %lu MiB wanted, %lu MiB free\n", mib, free_pages.count >> 8);
		return;
	}
	page_touch_free(mib << 8);
	printf("touch: %lu MiB\n", mib);
}

/* mark TEXT: TEXT into minios_mark, a known address (nm minios.elf), for
 * the host to find in a core of the guest (lodge dump-core). */
char minios_mark[64];

static void cmd_mark(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";
	unsigned i;

	for (i = 0; i < sizeof(minios_mark) - 1 && s[i]; i++)
		minios_mark[i] = s[i];
	minios_mark[i] = '\0';
	printf("mark: '%s' at %lx\n", minios_mark, (unsigned long)minios_mark);
}

static const struct command commands[] = {
	{ "help", "", "this list", cmd_help },
	{ "echo", "TEXT", "print TEXT", cmd_echo },
	{ "cpus", "", "how many CPUs are up", cmd_cpus },
	{ "mem", "", "usable memory (RAM less the balloon), free memory", cmd_mem },
	{ "acpi", "", "the ACPI tables found", cmd_acpi },
	{ "cmdline", "", "the kernel command line", cmd_cmdline },
	{ "uptime", "", "time since boot", cmd_uptime },
	{ "burn", "SECONDS [NCPUS]", "keep CPUs busy", cmd_burn },
	{ "touch", "MIB", "write to MIB MiB of memory", cmd_touch },
	{ "poweroff", "", "ACPI S5", cmd_poweroff },
	{ "reboot", "[kbd]", "ACPI reset register (kbd: the i8042 reset line)", cmd_reboot },
	{ "crash", "", "triple fault", cmd_crash },
	{ "mark", "TEXT", "put TEXT at minios_mark (for a core dump's test)", cmd_mark },
};



static void shell_run_one(char *line);

/* A line may hold several commands separated by ';'. */
void shell_run_line(char *line)
{
	char *next;

	for (; line; line = next) {
		next = strchr(line, ';');
		if (next)
			*next++ = '\0';
		shell_run_one(line);
	}
}

static void shell_run_one(char *line)
{
	char *argv[16];
	int argc = 0;
	unsigned t, i;

	while (*line && argc < 16) {
		while (*line == ' ' || *line == '\t')
			*line++ = '\0';
		if (!*line)
			break;
		argv[argc++] = line;
		while (*line && *line != ' ' && *line != '\t')
			line++;
	}
	if (!argc)
		return;
	for (t = 0; t < ntables; t++)
		for (i = 0; i < tables[t].n; i++)
			if (strcmp(argv[0], tables[t].cmds[i].name) == 0) {
				tables[t].cmds[i].run(argc, argv);
				return;
			}
	printf("unknown command: %s\n", argv[0]);
}

/* run="cmd1; cmd2" (or run=cmd1;cmd2 with '+' for spaces) from the
 * kernel command line, before the prompt. */
void shell_run_cmdline(const char *cmdline)
{
	char buf[1024], *p, *cmd;
	const char *s = cmdline;
	size_t n = 0;
	int quoted;

	while (*s && !(strncmp(s, "run=", 4) == 0 && (s == cmdline || s[-1] == ' ')))
		s++;
	if (!*s)
		return;
	s += 4;
	quoted = *s == '"';
	if (quoted)
		s++;
	while (*s && n + 1 < sizeof(buf) && (quoted ? *s != '"' : *s != ' ')) {
		buf[n++] = (!quoted && *s == '+') ? ' ' : *s;
		s++;
	}
	buf[n] = '\0';
	for (cmd = buf; cmd; cmd = p) {
		p = strchr(cmd, ';');
		if (p)
			*p++ = '\0';
		while (*cmd == ' ')
			cmd++;
		if (!*cmd)
			continue;
		printf("minios> %s\n", cmd);
		shell_run_one(cmd);
	}
}

static void (*poll_fn)(void);

void shell_set_poll(void (*fn)(void)) { poll_fn = fn; }

#define MAX_TASKS 8
static struct task *tasks[MAX_TASKS];

void task_start(struct task *t, uint64_t now)
{
	unsigned i, slot = MAX_TASKS;

	t->due = now;
	t->active = 1;
	for (i = 0; i < MAX_TASKS; i++) {
		if (tasks[i] == t)
			return;
		if (!tasks[i] && slot == MAX_TASKS)
			slot = i;
	}
	if (slot < MAX_TASKS)
		tasks[slot] = t;
	else
		t->active = 0;
}

void task_stop(struct task *t)
{
	unsigned i;

	t->active = 0;
	for (i = 0; i < MAX_TASKS; i++)
		if (tasks[i] == t)
			tasks[i] = NULL;
}

void tasks_stop_all(void)
{
	unsigned i;

	for (i = 0; i < MAX_TASKS; i++)
		if (tasks[i])
			task_stop(tasks[i]);
}

/* Run the tasks that are due; returns the ns until the next is (0: one
 * is due now), or ~0 if none is active. */
static uint64_t tasks_run(void)
{
	uint64_t now = time_ns(), wait = ~0ULL;
	unsigned i;

	for (i = 0; i < MAX_TASKS; i++) {
		struct task *t = tasks[i];

		if (!t)
			continue;
		if (t->due > now + t->period)   /* the clock went back */
			t->due = now + t->period;
		if (t->due <= now) {
			t->step(t, now);
			if (!tasks[i])
				continue;
			now = time_ns();
		}
		if (t->due <= now)
			wait = 0;
		else if (t->due - now < wait)
			wait = t->due - now;
	}
	return wait;
}

static void cmd_tasks(int argc, char **argv)
{
	unsigned i, n = 0;

	for (i = 0; i < MAX_TASKS; i++)
		if (tasks[i]) {
			printf("tasks: %s every %lu ms\n", tasks[i]->name, tasks[i]->period / 1000000);
			n++;
		}
	if (!n)
		printf("tasks: none\n");
}

static void cmd_stop(int argc, char **argv)
{
	tasks_stop_all();
	printf("tasks: stopped\n");
}

static const struct command task_commands[] = {
	{ "tasks", "", "the background tasks running", cmd_tasks },
	{ "stop", "", "stop every background task (so does Ctrl-C)", cmd_stop },
};

void shell_init(void)
{
	shell_register(commands, sizeof(commands) / sizeof(commands[0]));
	shell_register(task_commands, sizeof(task_commands) / sizeof(task_commands[0]));
	tasks_init();
}

/* One loop for everything: device polls, background tasks, console input.
 * Interrupts stay off from the look to the hlt (sti;hlt), so a wake-up
 * between the two cannot be lost. */
void shell_loop(void)
{
	char line[LINE_MAX];
	size_t len = 0;
	int last = 0;

	uart_puts("minios> ");
	for (;;) {
		uint64_t wait;
		int c;

		/* What came from the host outside the input: told here, where
		 * no one holds the UART. */
		if ((c = uart_take_sysrq()) >= 0)
			printf("\nminios: sysrq %c\nminios> ", c);
		if (__atomic_exchange_n(&nmi_count, 0, __ATOMIC_RELAXED))
			printf("\nminios: NMI received\nminios> ");
		irq_disable();
		if (poll_fn)
			poll_fn();
		irq_disable();                 /* a poll may have waited with sti;hlt */
		wait = tasks_run();
		/* A task that always has work leaves no interrupt window (sti
		 * then cli at the loop's top): look at the UART ourselves. */
		if (wait == 0)
			uart_rx_irq();
		c = uart_getc();
		if (c < 0) {
			if (wait == ~0ULL) {
				idle();
			} else if (wait) {
				timer_arm_ns(wait);
				idle();
			}
			irq_enable();
			continue;
		}
		irq_enable();
		if (c == 0x03) {                    /* Ctrl-C: stop the background tasks */
			tasks_stop_all();
			uart_puts("^C\ntasks: stopped\nminios> ");
			len = 0;
			continue;
		}
		if (c == '\n' && last == '\r') {      /* CR LF is one end of line */
			last = 0;
			continue;
		}
		last = c;
		if (c == '\r' || c == '\n') {
			uart_puts("\n");
			line[len] = '\0';
			shell_run_line(line);
			len = 0;
			uart_puts("minios> ");
		} else if (c == 0x7f || c == 0x08) {
			if (len) {
				len--;
				uart_puts("\b \b");
			}
		} else if (c >= 0x20 && c < 0x7f && len + 1 < sizeof(line)) {
			char echo[2] = { (char)c, 0 };

			line[len++] = c;
			uart_puts(echo);
		}
	}
}

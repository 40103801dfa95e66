/*
 * /init of the Lodge test kernel's second initramfs (initramfs-hello.img):
 * proves that user space runs and makes system calls, from its own output
 * on the console, then powers the domain off.  It prints
 *     hello from user space
 *     pid 1
 *     uname -r <release>
 *     N system calls in T us
 *     jump to LSTAR: getpid 1, IOPL 0, IF 1    (only with lstar=HEX)
 *     on cpu C              (moved to the second CPU, if there is one)
 *     tick 1 ... tick K     (K = ticks=K, 0 if none: 1000 calls each)
 *     done
 * and calls reboot(POWER_OFF), so lodge-hyp exits 0.  N is the kernel
 * command line's syscalls=N (the kernel hands unknown name=value words to
 * init as its environment), 1000 if none.  Anywhere but as PID 1 (run on
 * a host by mistake) it stops before the reboot.
 * Built with -nostdlib -static: no libc, every system call made here by
 * the `syscall` instruction itself.
 */
#define SYS_write          1
#define SYS_getpid         39
#define SYS_getppid        110
#define SYS_uname          63
#define SYS_clock_gettime  228
#define SYS_reboot         169
#define SYS_exit           60
#define SYS_sched_setaffinity 203
#define SYS_getcpu         309
#define CLOCK_MONOTONIC    1
#define REBOOT_MAGIC1      0xfee1deadL
#define REBOOT_MAGIC2      672274793L
#define REBOOT_POWER_OFF   0x4321fedcL

struct timespec { long tv_sec, tv_nsec; };
struct utsname { char sysname[65], nodename[65], release[65], version[65], machine[65], domainname[65]; };

static long sys3(long n, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}

static long sys4(long n, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return ret;
}

static unsigned long slen(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

static void put(const char *s)
{
	sys3(SYS_write, 1, (long)s, (long)slen(s));
}

static void put_num(unsigned long v)
{
	char buf[24];
	int i = sizeof(buf) - 1;

	buf[i] = 0;
	do
		buf[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i > 0);
	put(buf + i);
}

static int starts_with(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return 0;
	return 1;
}

static unsigned long parse_num(const char *s)
{
	unsigned long v = 0;

	while (*s >= '0' && *s <= '9')
		v = v * 10 + (unsigned long)(*s++ - '0');
	return v;
}

static unsigned long parse_hex(const char *s)
{
	unsigned long v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (;; s++)
		if (*s >= '0' && *s <= '9')
			v = v * 16 + (unsigned long)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			v = v * 16 + (unsigned long)(*s - 'a' + 10);
		else
			return v;
}

/* getpid reached by a jump to the kernel's entry (LSTAR: lstar=HEX, from
 * the kernel's symbols) rather than by `syscall`: RCX and R11, which
 * SYSCALL would set, are this program's own, R11 asking for IOPL 3 and
 * interrupts off, which user mode cannot give itself.  Returns getpid's
 * answer; *rflags gets the flags user mode came back with. */
static long jump_to_lstar(unsigned long lstar, unsigned long *rflags)
{
	long ret;
	unsigned long fl;

	__asm__ volatile("lea 1f(%%rip), %%rcx\n\t"
			 "mov $0x3002, %%r11\n\t"
			 "jmp *%[entry]\n"
			 "1:\tpushfq\n\t"
			 "pop %[fl]"
			 : "=a"(ret), [fl] "=r"(fl)
			 : "a"((long)SYS_getpid), [entry] "r"(lstar)
			 : "rcx", "r11", "memory");
	*rflags = fl;
	return ret;
}

static long now_us(void)
{
	struct timespec ts;

	sys3(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0);
	return ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void __attribute__((used)) start(long *sp)
{
	long argc = sp[0];
	char **envp = (char **)(sp + 1 + argc + 1);
	unsigned long n = 1000, ticks = 0, lstar = 0, i, k;
	long pid;
	unsigned long cpu1 = 2;
	unsigned cpu = 0;
	struct utsname u;
	long t0, t1;

	for (; *envp; envp++)
		if (starts_with(*envp, "syscalls="))
			n = parse_num(*envp + 9);
		else if (starts_with(*envp, "ticks="))
			ticks = parse_num(*envp + 6);
		else if (starts_with(*envp, "lstar="))
			lstar = parse_hex(*envp + 6);
	put("hello from user space\n");
	put("pid ");
	pid = sys3(SYS_getpid, 0, 0, 0);
	put_num((unsigned long)pid);
	put("\n");
	if (sys3(SYS_uname, (long)&u, 0, 0) == 0) {
		put("uname -r ");
		put(u.release);
		put("\n");
	}
	t0 = now_us();
	for (i = 0; i < n; i++)
		sys3(SYS_getppid, 0, 0, 0);
	t1 = now_us();
	put_num(n);
	put(" system calls in ");
	put_num((unsigned long)(t1 - t0));
	put(" us\n");
	if (lstar && pid == 1) {
		unsigned long fl;
		long got = jump_to_lstar(lstar, &fl);

		put("jump to LSTAR: getpid ");
		put_num((unsigned long)got);
		put(", IOPL ");
		put_num((fl >> 12) & 3);
		put(", IF ");
		put_num((fl >> 9) & 1);
		put("\n");
	}
	/* The rest on another vCPU than the boot one, if there is one: its
	 * system calls must be completed there too. */
	if (sys3(SYS_sched_setaffinity, 0, sizeof(cpu1), (long)&cpu1) == 0 &&
	    sys3(SYS_getcpu, (long)&cpu, 0, 0) == 0) {
		put("on cpu ");
		put_num(cpu);
		put("\n");
	}
	for (k = 1; k <= ticks; k++) {
		for (i = 0; i < 1000; i++)
			sys3(SYS_getppid, 0, 0, 0);
		put("tick ");
		put_num(k);
		put("\n");
	}
	put("done\n");
	if (pid != 1)
		for (;;)
			sys3(SYS_exit, 1, 0, 0);
	sys4(SYS_reboot, REBOOT_MAGIC1, REBOOT_MAGIC2, REBOOT_POWER_OFF, 0);
	put("reboot(POWER_OFF) returned\n");
	for (;;)
		sys3(SYS_exit, 1, 0, 0);
}

/* The kernel starts init with RSP at argc; start() takes it as its frame. */
__asm__(".globl _start\n_start:\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n\tcall start\n\tud2\n");

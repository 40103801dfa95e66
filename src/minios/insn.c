/* The "insn" command: instructions a PVM host's KVM cannot emulate in
 * kernel mode (Mini-OS runs at CPL0, as a Linux kernel does), executed
 * and their results printed, for lodge-hyp's completion of them
 * (src/hyp/emulate/) to be checked against what the CPU defines. */
#include "minios.h"

static volatile unsigned long breakpoints;

/* #BP is a trap: the saved RIP is already past the int3. */
static int insn_exception(uint64_t vector, uint64_t *frame)
{
	(void)frame;
	if (vector != 3)
		return 0;
	breakpoints++;
	return 1;
}

static unsigned long flags_after(void)
{
	unsigned long f;

	__asm__ volatile("pushfq; popq %0" : "=r"(f));
	return f;
}

static void cmd_insn(int argc, char **argv)
{
	static struct { unsigned long lo, hi; } __attribute__((aligned(16))) pair;
	unsigned long n, f, rax, rdx;
	unsigned short cw, sw;
	unsigned lz;
	unsigned char zf;

	if (argc > 1 && !strcmp(argv[1], "andn")) {
		/* A VEX-encoded BMI1 instruction neither PVM nor Lodge completes. */
		__asm__ volatile("andn %2, %1, %0" : "=r"(n) : "r"(0xf0ul), "r"(0xfful) : "cc");
		printf("insn: andn = %lx\n", n);
		return;
	}
	isr_exception_hook = insn_exception;
	__asm__ volatile("int3; int3" ::: "memory");
	printf("insn: int3 trapped %lu\n", breakpoints);

	__asm__ volatile("popcnt %2, %0; pushfq; popq %1" : "=r"(n), "=r"(f) : "r"(0xf0f0f0f0f0f0f0f0ul) : "cc");
	printf("insn: popcnt f0f0f0f0f0f0f0f0 = %lu zf %lu cf %lu\n", n, (f >> 6) & 1, f & 1);
	__asm__ volatile("popcnt %2, %0; pushfq; popq %1" : "=r"(n), "=r"(f) : "r"(0ul) : "cc");
	printf("insn: popcnt 0 = %lu zf %lu\n", n, (f >> 6) & 1);
	__asm__ volatile("lzcnt %2, %0; pushfq; popq %1" : "=r"(lz), "=r"(f) : "r"(0u) : "cc");
	printf("insn: lzcnt32 0 = %u cf %lu\n", lz, f & 1);
	__asm__ volatile("tzcnt %2, %0; pushfq; popq %1" : "=r"(n), "=r"(f) : "r"(0x100ul) : "cc");
	printf("insn: tzcnt 100 = %lu cf %lu\n", n, f & 1);

	__asm__ volatile("stac" ::: "cc");
	f = flags_after();
	__asm__ volatile("clac" ::: "cc");
	printf("insn: stac ac %lu clac ac %lu\n", (f >> 18) & 1, (flags_after() >> 18) & 1);

	pair.lo = 1; pair.hi = 2;
	rax = 1; rdx = 2;
	__asm__ volatile("lock cmpxchg16b %1; sete %0" : "=q"(zf), "+m"(pair), "+a"(rax), "+d"(rdx)
			 : "b"(3ul), "c"(4ul) : "cc", "memory");
	printf("insn: cmpxchg16b equal zf %u memory %lu %lu\n", zf, pair.lo, pair.hi);
	rax = 9; rdx = 9;
	__asm__ volatile("lock cmpxchg16b %1; sete %0" : "=q"(zf), "+m"(pair), "+a"(rax), "+d"(rdx)
			 : "b"(5ul), "c"(6ul) : "cc", "memory");
	printf("insn: cmpxchg16b unequal zf %u memory %lu %lu loaded %lu %lu\n", zf, pair.lo, pair.hi, rax, rdx);

	cw = 0x27f;
	__asm__ volatile("fninit; fldcw %0; fwait" :: "m"(cw));
	__asm__ volatile("fnstcw %0; fnstsw %1" : "=m"(cw), "=m"(sw));
	printf("insn: fldcw 27f fnstcw %x fnstsw %x\n", cw, sw);
	__asm__ volatile("fninit; fnstcw %0" : "=m"(cw));
	printf("insn: fninit fnstcw %x\n", cw);
	isr_exception_hook = 0;
	printf("insn: done\n");
}

static const struct command insn_commands[] = {
	{ "insn", "[andn]", "instructions a PVM host cannot emulate, and their results", cmd_insn },
};

void insn_init(void)
{
	shell_register(insn_commands, 1);
}

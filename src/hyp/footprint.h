/* What a lodge-hyp process keeps mapped once it runs (footprint.c).
 *
 * Why: a domain's two processes ran their start-up (options, the config's
 * checks, building devices, loading the kernel, the sandbox) through most
 * of libc, lodge-hyp and its libraries, and kept all of it mapped: about
 * 2 MiB resident in each process for code that never runs again, which
 * `ps`, top and the benchmarks count against every domain.  The
 * supervisor then only waits, and the domain process runs a vCPU loop and
 * a few devices. */
#ifndef LODGE_HYP_FOOTPRINT_H
#define LODGE_HYP_FOOTPRINT_H

/* Give back what has run so far: the malloc heap's free pages, and the
 * mappings of the read-only segments (code, constants, symbol tables) of
 * lodge-hyp and every library loaded.  Those segments are never written,
 * so their pages are the file's own: unmapping them loses nothing (they
 * stay in the page cache, shared with every process), and what runs next
 * maps its pages again on first use.  Never fails: a step the kernel
 * refuses is fewer pages given back.  Needs lodge-hyp linked -z now: with
 * lazy binding, the first call of each library function after it would
 * run the dynamic linker's lookup through every library's symbol tables,
 * mapping them all again. */
void footprint_trim(void);

#endif

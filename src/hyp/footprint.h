/* What a lodge-hyp process keeps of its start-up (footprint.c).
 *
 * Why: a domain's two processes ran their start-up (options, the config's
 * checks, building devices, loading the kernel, the sandbox) with large
 * temporary buffers on the heap and deep on the main stack; then the
 * supervisor only waits, and the domain process runs a vCPU loop and a
 * few devices.  Those pages are each process's own, counted against every
 * domain.  (Code and constants are the files' pages, shared with every
 * process in the page cache: unmapping them would lower the Rss that ps
 * shows but not the host memory a domain costs, and is not done.) */
#ifndef LODGE_HYP_FOOTPRINT_H
#define LODGE_HYP_FOOTPRINT_H

/* Give back what start-up used and freed: the malloc heap's free pages,
 * and the main thread's stack below where it runs now.  Never fails: a
 * step the kernel refuses is fewer pages given back. */
void footprint_trim(void);

#endif

/* Where a crash's evidence is kept: CRASH_DIR/NAME-STAMP/, one directory
 * per crash (the newest CRASH_KEEP_PER_DOMAIN per domain, schema.h),
 * STAMP the crash's UTC time, 20261204T221530.123Z, so that names sort
 * as the crashes happened.  Made by lodge-hyp's supervisor (crash.h);
 * read by the library and whoever looks. */
#ifndef LODGE_CRASHDIR_H
#define LODGE_CRASHDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define CRASH_STAMP_LEN 20          /* 20261204T221530.123Z, without the NUL */
#define CRASH_STAMP_MAX (CRASH_STAMP_LEN + 3)   /* ... and a -N of a name taken, and the NUL */

/* The files in one crash's directory. */
#define CRASH_FILE_REASON    "reason"      /* one line: why the domain ended */
#define CRASH_FILE_REGISTERS "registers"   /* every vCPU's registers, as text */
#define CRASH_FILE_HYP_LOG   "lodge-hyp.log"
#define CRASH_FILE_CONSOLE   "console.log" /* the console's last CRASH_CONSOLE_BYTES */
#define CRASH_FILE_CORE      "core"        /* ELF core (on_crash = coredump-*) */

/* The stamp of time ts into out (CRASH_STAMP_MAX bytes). */
void crash_stamp(char out[CRASH_STAMP_MAX], const struct timespec *ts);
/* Whether s is a stamp as crash_stamp writes it (with or without -N). */
bool crash_stamp_valid(const char *s);
/* Whether a directory entry is one of domain name's crashes. */
bool crash_entry_of(const char *entry, const char *name);
/* CRASH_DIR/NAME-STAMP into out: 0, or -ENAMETOOLONG. */
int crash_dir_path(char *out, size_t len, const char *crash_dir, const char *name, const char *stamp);

#endif

/* Crash evidence that outlives the domain (crashdir.h says where and
 * what).  The domain's process, sandboxed, cannot open a path: its
 * supervisor (root) hands it, before each boot, a memfd for its report
 * (the crash's time, reason and every vCPU's registers) and, for
 * on_crash = coredump-*, an unnamed file in the crash directory for the
 * core.  Once the process is gone, the supervisor makes the directory,
 * writes the report's parts, copies the ends of lodge-hyp's log and the
 * console log out of the runtime directory before that is removed,
 * links the core in, and removes the domain's oldest crashes beyond
 * CRASH_KEEP_PER_DOMAIN.  Every file there is made by root, relative to
 * directory descriptors, never following a symbolic link. */
#ifndef LODGE_CRASH_H
#define LODGE_CRASH_H

struct domain;
struct options;

/* ---- the supervisor ---- */
/* Once, before the first boot: make and open o->crash_dir (none given:
 * no evidence is kept; one that cannot be used is said in the log). */
void crash_open(const struct options *o);
/* Before each boot: the fresh report and core files its process gets. */
void crash_arm(void);
/* After each boot, with the runtime directory still there: keep the
 * evidence of a crash the process reported.  The evidence directory's
 * path, or NULL if there was no crash (or it could not be kept). */
const char *crash_collect(const char *rundir);
/* The last crash's evidence directory and reason ("" if none yet): for
 * the event log.  The reason comes from the domain's process: text to be
 * escaped as any other, never a format. */
const char *crash_last_dir(void);
const char *crash_last_reason(void);

/* ---- the domain's process ---- */
/* First thing after the fork: close the crash directory, which only the
 * supervisor writes (the sandbox keeps no directory to open relative to). */
void crash_child(void);
/* Once the domain has ended: if it crashed, say so, and where its
 * evidence will be, on the console (an attached client's last words) and
 * in lodge-hyp's log.  Idempotent. */
void crash_announce(struct domain *dom);
/* With the vCPUs stopped: if it crashed, write the report (and the core,
 * for coredump-*) for the supervisor. */
void crash_report(struct domain *dom);

#endif

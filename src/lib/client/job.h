/* Private to liblodge: the phases of a long call (a template build, a
 * clone, an install) as its progress hook reports them (job.c). */
#ifndef LODGE_LIB_JOB_H
#define LODGE_LIB_JOB_H

#include "internal.h"

#include <stdbool.h>

/* ---- a job's progress ------------------------------------------------------- */

#define PHASE_BIT(p) (1u << (p))
#define JOB_TEMPLATE_PHASES (PHASE_BIT(LODGE_PHASE_UPDATE) | PHASE_BIT(LODGE_PHASE_FETCH) | \
			     PHASE_BIT(LODGE_PHASE_UNPACK) | PHASE_BIT(LODGE_PHASE_CONFIGURE) | \
			     PHASE_BIT(LODGE_PHASE_INSTALL) | PHASE_BIT(LODGE_PHASE_IMAGE))

struct job {
	lodge_job_fn *fn;              /* NULL: nobody listens, nothing cancels */
	void *arg;
	unsigned phases;               /* PHASE_BITs of what this job does: the whole of its percent */
	enum lodge_phase phase;
	int phase_pct;
	bool cancelled;
	long last_ms;                  /* the last report */
};
void job_init(struct job *j, unsigned phases, lodge_job_fn *fn, void *arg);
/* The job is at phase, pct of it (-1: unknown), with a note to show (or
 * NULL): false once the listener has cancelled it. */
bool job_report(struct job *j, enum lodge_phase phase, int pct, const char *note);
/* The same phase again, reported at most 5 times a second: a tool's tick
 * (tool.h; arg is the job). */
bool job_tick(void *job);
/* -ECANCELED with the message a cancelled job gives. */
int job_cancelled(struct lodge_err *err);

#endif

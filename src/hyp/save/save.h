/* Saving a domain into a stream, and loading one from it (save.c).
 *
 * A snapshot (lodge save) parks the vCPUs, quiesces the devices and writes
 * every touched page and every state entry once; the domain then waits,
 * paused, for the agent to say whether it goes (the file is safely
 * written) or carries on (--keep, or the save failed).
 *
 * A live migration (lodge migrate) copies RAM while the guest runs, then
 * round by round the pages it dirtied, until what is left would take no
 * longer than the downtime target to send; then it parks the vCPUs and
 * sends the rest with the state entries.  It stops the guest only once
 * the receiver says 'S' (its lodge-hyp is up and reading): the receiver's
 * start-up is not downtime.  The receiver answers 'L' once
 * everything is loaded; the sender lets go of its disks and answers 'G';
 * the receiver starts the guest and answers 'R'.  Until 'G' is sent the
 * domain belongs to the sender, and any failure resumes it there. */
#ifndef LODGE_SAVE_SAVE_H
#define LODGE_SAVE_SAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct domain;
struct save_job;

enum save_mode { SAVE_SNAPSHOT, SAVE_LIVE };

/* The handshake bytes of a live migration, receiver to sender but for G. */
#define SAVE_READING 'S'    /* receiver: its lodge-hyp is up and reading the stream */
#define SAVE_LOADED  'L'    /* receiver: everything loaded (after END), ready to run */
#define SAVE_GO      'G'    /* sender: the domain is yours */
#define SAVE_RUNNING 'R'    /* receiver: the guest runs here */

struct save_progress {
	enum { SAVE_PRECOPY, SAVE_STOPCOPY, SAVE_DONE, SAVE_FAILED } phase;
	unsigned round;
	uint64_t pages;        /* page records sent so far */
	uint64_t bytes;
	uint64_t dirty;        /* pages found dirty in the last round */
	uint64_t rate_kib;     /* KiB/s of the last round */
	uint64_t downtime_us;  /* vCPUs parked until the receiver runs it (live) or all written */
	uint64_t total_us;
};

/* Start saving dom into fd (a file, pipe or socket; the job owns it and
 * closes it) on a thread of its own.  0 or -errno. */
int save_job_start(struct domain *dom, int fd, enum save_mode mode, struct save_job **out);
/* Readable when the job has made progress or ended; drain with save_job_read. */
int save_job_event_fd(const struct save_job *j);
/* The progress now; returns true once the job ended (rc 0 or -errno with why). */
bool save_job_read(struct save_job *j, struct save_progress *p, int *rc, char *why, size_t whylen);
/* Join the thread and free the job (once it ended). */
void save_job_free(struct save_job *j);
/* After a snapshot: let the domain run again (resume) -- or not, when it
 * is to be destroyed.  A live job resumes by itself when it fails. */
void save_snapshot_release(struct domain *dom, bool resume);

/* Load a stream (after its magic and HEAD, read by the agent) into a
 * domain whose devices and vCPUs exist but have not run; for a live
 * migration, do the receiver's side of the handshake up to 'G' and take
 * the disks' locks the sender let go of (dom->disks).  0, or -errno with
 * why. */
int save_load(struct domain *dom, int fd, bool *live, char *why, size_t whylen);
/* Before the sandbox (which allows no setsockopt on it): a deadline on
 * each read from a migration peer, so one that goes silent mid-stream is
 * given up on. */
void save_load_prepare(int fd);

#endif

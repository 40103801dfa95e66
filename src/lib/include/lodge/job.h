/* liblodge: jobs.  A job: a function run in a child process of its own, so that the one
 * event loop of a face (the dashboard's getch loop, lodge-web's
 * libwebsockets loop, host-stop's poll) goes on while it takes seconds or
 * minutes.  The child reports on a pipe, progress records as it goes and
 * one end record (0 or -errno, a one-line error, a result of the caller's
 * own shape); the parent polls lodge_job_fd() and calls
 * lodge_job_collect() when it is readable.
 *
 * A cancel is SIGTERM to the child's process group (the child and what
 * it started): the child's lodge_job_progress() then says stop, and the
 * work undoes what it made before it returns.  The parent's death
 * cancels it the same way (PR_SET_PDEATHSIG).  lodge_job_collect()
 * reaps the child when its pipe ends: no zombie is left.
 *
 * An answer larger than an end's result (the pool's rows for the
 * dashboard) comes as a stream of result records: the child sends each
 * with lodge_job_record(), the parent's sink takes each whole one, in
 * order, as it is read.  The child is not trusted with the parent's
 * memory: a record is at most LODGE_JOB_RECORD_MAX, the stream at most
 * the limit the caller set, and a stream that breaks either (or a record
 * the sink refuses, or bytes that are no record) ends the job there: it
 * is cancelled, nothing more of it is taken, and its end says why. */
#ifndef LODGE_API_JOB_H
#define LODGE_API_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LODGE_JOB_TEXT_MAX 1024        /* a progress record's text */
#define LODGE_JOB_ERROR_MAX 2048       /* the end's error: LODGE_ERR_MAX */
#define LODGE_JOB_RESULT_MAX 8192      /* the end's result */
#define LODGE_JOB_RECORD_MAX 8192      /* one result record */

/* What the work says at its end (written in the child, read in the parent). */
struct lodge_job_end {
	int32_t rc;                        /* 0, or -errno */
	uint32_t result_len;               /* of result */
	char error[LODGE_JOB_ERROR_MAX];   /* why, one line ("" when rc is 0) */
	unsigned char result[LODGE_JOB_RESULT_MAX];
};

/* The work, in the child: 0 or -errno, end->error and end->result filled
 * as it likes.  It calls lodge_job_progress() as it goes. */
typedef int lodge_job_work(void *arg, struct lodge_job_end *end);

/* The parent's taker of result records (lodge_job_records): 0, or
 * -errno to refuse rec (the job ends with that rc). */
typedef int lodge_job_sink(void *arg, const void *rec, size_t len);

enum lodge_job_flags {
	/* stdin from /dev/null, stdout to stderr, every descriptor beyond the
	 * pipe closed: for a parent that owns the terminal (the dashboard) or
	 * holds connections a child must not keep open. */
	LODGE_JOB_DETACH = 1u << 0,
};

struct lodge_job {
	pid_t pid;                         /* the child (its process group), 0 once reaped */
	int fd;                            /* the pipe's read end, -1 once closed */
	long started_ms;
	/* The last progress record. */
	int phase, pct;                    /* as the work sent them */
	char text[LODGE_JOB_TEXT_MAX];
	bool progressed;                   /* a progress record came */
	/* The end. */
	bool ended;                        /* the end record came */
	bool reaped;                       /* the child is gone: nothing more comes */
	int status;                        /* its wait status, once reaped */
	struct lodge_job_end end;          /* rc -EIO and the reason when it died without one */
	bool refused;                      /* the parent stopped taking its stream: end says why */
	/* Its result records (lodge_job_records). */
	lodge_job_sink *sink;
	void *sink_arg;
	size_t records_limit, records_len; /* bytes taken, at most the limit */
	size_t nrecords;
	/* The records being read. */
	unsigned char buf[16 + sizeof(struct lodge_job_end)];
	size_t len;
};

/* Start work(arg) in a child: 0, or -errno with why in error[len]
 * (nothing started).  flags: enum lodge_job_flags. */
int lodge_job_start(struct lodge_job *j, lodge_job_work *work, void *arg, unsigned flags, char *error, size_t len);
/* Take the job's result records: each whole one to sink(arg, ...), in
 * order, up to limit bytes in all (the records' own lengths).  Called
 * after lodge_job_start and before the first lodge_job_collect; a job
 * with no sink that sends a record is refused, as one over its limit
 * is (rc -EMSGSIZE). */
void lodge_job_records(struct lodge_job *j, lodge_job_sink *sink, void *arg, size_t limit);
/* The descriptor to poll for POLLIN (or to hand an event loop): -1 once
 * the job is reaped. */
int lodge_job_fd(const struct lodge_job *j);
/* Read what has come without waiting; reap the child at the pipe's end.
 * Returns what changed: LODGE_JOB_PROGRESS, LODGE_JOB_RECORDS and/or
 * LODGE_JOB_OVER (the job is reaped: j->end holds its end; an end record
 * that never came is rc -EIO, "its process ended (signal N) before it
 * said how it went"; a refused stream, j->refused, the refusal). */
#define LODGE_JOB_PROGRESS 1
#define LODGE_JOB_OVER 2
#define LODGE_JOB_RECORDS 4            /* one or more result records taken */
int lodge_job_collect(struct lodge_job *j);
/* SIGTERM to the job's process group: the work stops and undoes what it
 * made.  Its end still comes through lodge_job_collect(). */
void lodge_job_cancel(struct lodge_job *j);
/* SIGKILL to the child alone (a job past its deadline), then reap it:
 * nothing of it is read any more. */
void lodge_job_kill(struct lodge_job *j);
/* Wait for the job to end (collecting as it goes): for a parent leaving. */
void lodge_job_wait(struct lodge_job *j);
/* Close the pipe and reap (waiting), whatever the job's state: the slot
 * may then be used again. */
void lodge_job_release(struct lodge_job *j);

/* ---- in the child ---- */

/* Report progress (non-blocking, a record dropped when the pipe is full:
 * the next says the same, newer; the same record twice is sent once):
 * false once the job is cancelled. */
bool lodge_job_progress(int phase, int pct, const char *text);
/* One result record to the parent, whole and in order (waiting while the
 * pipe is full): false if it could not go (len over LODGE_JOB_RECORD_MAX,
 * the parent gone) or once the job is cancelled. */
bool lodge_job_record(const void *rec, size_t len);
/* The job is cancelled (SIGTERM, SIGINT or SIGHUP came). */
bool lodge_job_stopping(void);

#endif

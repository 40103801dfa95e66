/* The event log: one line per lifecycle event of a domain, appended to
 * ROOT/var/log/lodge/lodge.log and sent to syslog (ident "lodge").
 * lodge-hyp's supervisor writes it (it outlives each boot and sees every
 * end, the guest's own too); `lodge log` reads it.  A line, fields split
 * by single spaces, the last running to the end of the line:
 *
 *   TIME DOMAIN EVENT WHO [DETAIL]
 *   2026-12-04T22:30:01.123+00:00 web paused uid=1000,pid=4242 -
 *
 * TIME    ISO 8601, local time, milliseconds and the offset
 * DOMAIN  the domain's name
 * EVENT   a word of the table in evlog.c (created, paused, ...)
 * WHO     uid=N,pid=N for a client of the control socket or the caller
 *         of lodge-hyp, as the kernel says (SO_PEERCRED, getuid), with
 *         ",via=FACE" when the client says which face it is (dashboard);
 *         "guest" for the guest's own doing; "lodge-hyp" for its own
 * DETAIL  free text, "-" if none; control characters escaped (log.h's
 *         text_escape), so no guest's or client's text makes a line. */
#ifndef LODGE_EVLOG_H
#define LODGE_EVLOG_H

#include <stddef.h>
#include <time.h>

/* Under the root prefix; made 0750 if missing, the file 0640. */
#define EVLOG_DIR  "/var/log/lodge"
#define EVLOG_FILE "lodge.log"
#define EVLOG_SYSLOG_IDENT "lodge"

enum evlog_event {
	EV_CREATED, EV_RESTORED, EV_MIGRATED_IN,
	EV_PAUSED, EV_UNPAUSED, EV_SHUTDOWN_ASKED,
	EV_POWERED_OFF, EV_REBOOTED, EV_CRASHED, EV_CRASH_KEPT, EV_STOPPED, EV_FAILED, EV_KILLED,
	EV_DESTROYED, EV_SAVED, EV_MIGRATED_OUT,
	EV_MEM_SET, EV_SCHED, EV_VCPU_PIN,
	/* Hot-plug: a device in or out (forced or ejected, the detail says),
	 * and a detach the guest did not answer in time (the device stays). */
	EV_BLOCK_ATTACH, EV_BLOCK_DETACH, EV_NETWORK_ATTACH, EV_NETWORK_DETACH, EV_DETACH_TIMED_OUT,
	/* xl's mem-max, sysrq and trigger nmi. */
	EV_MEM_MAX, EV_SYSRQ, EV_NMI,
	/* xl vcpu-set: the vCPUs asked for. */
	EV_VCPU_SET,
	/* lodge rename of a running domain: the line under its new name, the
	 * old one in the detail. */
	EV_RENAMED,
	EV_COUNT
};

/* Its word in the log; NULL for a number that is none. */
const char *evlog_event_name(unsigned ev);
/* The event a word of the log names, or EV_COUNT for none. */
enum evlog_event evlog_event_of(const char *word);

/* WHO and DETAIL come from other processes: who keeps only the bytes a
 * WHO may have ([A-Za-z0-9=,._-]), others become '?'. */
#define EVLOG_WHO_MAX    80
#define EVLOG_DETAIL_MAX 400
#define EVLOG_LINE_MAX   (64 + 64 + 32 + EVLOG_WHO_MAX + 4 * EVLOG_DETAIL_MAX)

/* One line, ending in \n, into out: its length, or 0 if ev is no event. */
size_t evlog_format(char *out, size_t len, const struct timespec *when, const char *domain, unsigned ev,
		    const char *who, const char *detail);

/* Append line (one whole line) to DIR/EVLOG_FILE, DIR made if missing;
 * neither DIR nor the file may be a symbolic link.  Opened for each line,
 * so a file rotated away is simply made again.  0 or -errno. */
int evlog_append(const char *dir, const char *line, size_t len);
/* The same line to syslog, without its time (syslog has its own). */
void evlog_syslog(const char *line);

/* The DOMAIN field of a line: a pointer to it and its length in *n, or
 * NULL for a line that is not one of ours. */
const char *evlog_line_domain(const char *line, size_t *n);

#endif

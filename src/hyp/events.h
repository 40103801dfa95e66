/* Lifecycle events into the event log (src/common/evlog.h).  Every
 * process of a domain sends its events down one pipe to the supervisor,
 * which alone writes the log and syslog: it runs as root outside the
 * sandbox for the domain's whole life, so the log can be opened anew for
 * each line (rotation needs nothing more), and the domain's name in each
 * line is the supervisor's own, not a sandboxed process's word.  Without
 * --event-log nothing is sent. */
#ifndef LODGE_HYP_EVENTS_H
#define LODGE_HYP_EVENTS_H

#include "evlog.h"

#include <stddef.h>
#include <sys/types.h>

/* The supervisor, before the first boot: the pipe, and where the log is
 * (ROOT/var/log/lodge).  0 or -errno. */
int events_open(const char *log_dir, const char *domain);
/* The read end to poll for events (-1: no event log). */
int events_fd(void);
/* Write each event that has arrived to the log and syslog (the
 * supervisor's). */
void events_drain(void);
/* The supervisor's pid (0: no event log): a signal it passes on to a
 * domain's process was logged by it, with the sender's uid and pid. */
pid_t events_supervisor(void);
/* In a domain's process: the read end is not its business. */
void events_child(void);
/* The supervisor: its domain's name follows the runtime directory dir
 * (RUNDIR/NAME), which lodge rename moves while the domain runs (proto.h,
 * rename).  The kernel says where the directory is now (an O_PATH
 * descriptor's /proc/self/fd link), never a sandboxed process. */
void events_follow(const char *dir, const char *domain);
/* The domain's name now: its runtime directory's, if that is still
 * RUNDIR/NAME with NAME a domain's name, else the last one known. */
const char *events_domain(void);

/* Send one event; who as evlog.h says, fmt the detail (NULL: none).
 * Never waits: with the pipe full, the event is lost (and said so in
 * lodge-hyp.log). */
void event_send(enum evlog_event ev, const char *who, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "uid=N,pid=N[,via=FACE]" into out. */
char *event_who(char *out, size_t len, uid_t uid, pid_t pid, const char *face);
/* The same for the peer of a connected Unix socket, as the kernel says. */
char *event_who_peer(char *out, size_t len, int sock, const char *face);

#endif

/* liblodge: logs, text fit to show and frames in words. */
#ifndef LODGE_API_EVENTS_H
#define LODGE_API_EVENTS_H

#include "lodge/handle.h"

/* ---- logs (events.c) ----------------------------------------------------------------------- */

/* Which face this process is ("dashboard"): each request to a lodge-hyp
 * and each domain started says it, and the event log shows it beside the
 * uid and pid the kernel gives (which alone are trusted).  0, or -EINVAL
 * for a word other than 1 to 16 of a-z and '-'; "" says none again (a
 * pool agent names each stop's asker only for that stop). */
int lodge_set_face(const char *face);
/* The face set, "" none. */
const char *lodge_face(void);

/* A line of a log, without its newline; nonzero stops the reading. */
typedef int lodge_line_fn(const char *line, void *arg);
/* The event log (ROOT/var/log/lodge/lodge.log; evlog.h says its lines):
 * its last `last` lines (of domain only, unless NULL: a name, as domains
 * come and go there), then with follow each line as it is written, across
 * rotation, until fn says stop or an error.  No log yet: nothing to show
 * (follow waits for it).  0, or -errno. */
int lodge_log_read(const struct lodge *lg, const char *domain, unsigned last, bool follow, lodge_line_fn *fn,
		   void *arg, struct lodge_err *err);
/* The running domain's lodge-hyp.log (its runtime directory), open for
 * reading: the descriptor, or -errno. */
int lodge_hyp_log_open(const struct lodge *lg, const char *domain, struct lodge_err *err);

/* ---- text ---------------------------------------------------------------------------------- */

/* Text from a guest or a peer, fit to show on a terminal: its control
 * characters escaped (\n, \t, \e, \xNN), cut to fit out[len].  Returns out. */
char *lodge_text_shown(char *out, size_t len, const char *text);

/* ---- frames -------------------------------------------------------------------------------- */

/* One line describing a captured Ethernet frame (caplen bytes of len). */
void lodge_frame_line(const uint8_t *frame, size_t caplen, size_t len, char *buf, size_t buflen);

#endif

/* A domain's serial console on this terminal (console.c). */
#ifndef LODGE_CONSOLE_H
#define LODGE_CONSOLE_H

/* Attach RUNDIR/NAME's console to stdin/stdout until Ctrl-] (force: take
 * it over from another client).  Returns an exit status: 0, or 1 with the
 * reason printed. */
int console_attach(const char *rundir, const char *name, int force);

#endif

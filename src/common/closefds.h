/* Every descriptor above stdio closed but a few: what a process that
 * must hold nothing else (lodge-hyp at start, its boot-disk reader) does
 * first. */
#ifndef LODGE_CLOSEFDS_H
#define LODGE_CLOSEFDS_H

/* Close every descriptor from 3 up except keep[0..n) (negative entries
 * are ignored): close_range over the gaps, one by one on a kernel
 * without it. */
void close_fds_but(const int *keep, unsigned n);

#endif

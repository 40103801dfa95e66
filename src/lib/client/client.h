/* The agent's side of the control protocol (src/common/proto.h). */
#ifndef LODGE_CLIENT_H
#define LODGE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLIENT_MAX_KEYS 80

struct reply {
	char error[512];               /* "" on ok */
	unsigned nkeys;
	char key[CLIENT_MAX_KEYS][32];
	char value[CLIENT_MAX_KEYS][1400];   /* vcpu_ns of 64 vCPUs fits */
};

/* The face every request names ("lodge/1:FACE"; proto.h): 0, or -EINVAL
 * for a word that is not 1 to 16 of a-z and '-'.  "" until set. */
int client_set_face(const char *face);
const char *client_face(void);
/* Connect to RUNDIR/NAME/control. Returns the fd, -ECONNREFUSED or -ENOENT
 * for a domain that is not running (a stale or absent directory). */
int client_connect(const char *rundir, const char *name);
/* Send "lodge/1 CMD" and read the reply (keys only for commands that
 * return them). Returns 0 (even for an "error" reply: see r->error) or
 * -errno on a transport failure. The fd stays open for "console". */
int client_request(int fd, const char *cmd, int with_keys, struct reply *r, int timeout_ms);
/* Send "lodge/1 CMD" with fd passed beside it (SCM_RIGHTS): save and
 * migrate hand lodge-hyp the stream's descriptor this way. 0 or -errno. */
int client_request_fd(int sock, const char *cmd, int fd);
/* The same with n descriptors (1 to 8), in order: a disk and its names. */
int client_request_fds(int sock, const char *cmd, const int *fds, unsigned n);
/* Read one reply line (without its newline) within timeout_ms: its length,
 * -ETIMEDOUT, or -ECONNRESET when the peer closed first. */
int client_read_line(int fd, char *buf, size_t len, int timeout_ms);
/* One-shot: connect, request, close. */
int client_call(const char *rundir, const char *name, const char *cmd, int with_keys,
		struct reply *r);
/* Without waiting: connect (non-blocking) and send "lodge/1 CMD" for a
 * one-line reply. Returns the non-blocking fd or -errno (-EAGAIN: the
 * domain has a full backlog of connections it has not accepted). */
int client_start(const char *rundir, const char *name, const char *cmd);
/* Read what has arrived of that reply into BUF (*N bytes so far, LEN in
 * all) without waiting. 1: the reply is whole and in R (R->error for an
 * "error" reply); 0: more to come; -errno on a transport failure. */
int client_collect(int fd, char *buf, size_t len, size_t *n, struct reply *r);
/* Has BUF (N bytes, NUL-terminated) a whole reply with keys? */
bool client_reply_complete(const char *buf, size_t n);
/* Parse a whole reply in place (BUF is modified). 0 or -EPROTO. */
int client_parse_reply(char *buf, struct reply *r);
const char *reply_get(const struct reply *r, const char *key);

#endif

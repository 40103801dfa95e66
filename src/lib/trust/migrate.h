/* Private to liblodge's migration (migrate.c, the sender; receive.c, the
 * receiver): the shared secret, its handshake and addresses.
 *
 * Who may hand this host a domain: over TCP, only a peer that knows the
 * shared secret (lodge.conf's migration_secret_file): each end sends a
 * random nonce and answers the other's with HMAC-SHA256(secret, role ||
 * nonce), so neither a listener nor a sender can be impersonated by one
 * that only replays.  Without a secret the listener is a Unix socket that
 * only root may reach (its mode, and the peer's uid from SO_PEERCRED):
 * a TCP port, even on loopback, would admit every local user.  Reach it
 * from another host through ssh, which forwards Unix sockets.  The stream
 * itself is not encrypted: across networks you do not trust, tunnel it.
 *
 * Then the sender sends the stream's HEAD (savestream.h); the receiver
 * checks the Lodge version and the config (its disks on the shared path,
 * its bridges) and lends it only what this host allows (incoming.h), and
 * says ok before any memory moves.  From there the socket belongs to the
 * two lodge-hyps (src/hyp/save/save.h). */
#ifndef LODGE_MIGRATE_H
#define LODGE_MIGRATE_H

#include "internal.h"

#include <sys/un.h>

#define MIGRATE_PORT     "8002"
#define MIGRATE_PROTO    "LODGE-MIGRATE 1"
#define AUTH_NONCE       32
#define AUTH_MAC         32              /* SHA-256 */
#define SECRET_MAX       4096
#define HANDSHAKE_MS     10000           /* each line and the HEAD, before lodge-hyp takes the stream */

struct secret {
	unsigned char key[SECRET_MAX];
	size_t len;                      /* 0: none */
};

/* Read the secret at path (NULL or "": none): 0, or -errno with why. */
int mig_secret_load(const char *path, struct secret *s, struct lodge_err *err);
/* HMAC-SHA256(secret, role || nonce), as hex into out (2 * AUTH_MAC + 1). */
void mig_auth_mac(const struct secret *s, const char *role, const unsigned char *nonce, char *out);
bool mig_auth_check(const struct secret *s, const char *role, const unsigned char *nonce, const char *got);
void mig_hex(const unsigned char *p, size_t n, char *out);
int mig_unhex(const char *s, unsigned char *p, size_t n);
int mig_send_line(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "HOST[:PORT]" or "[V6]:PORT" into host and port (8002 if none). */
int mig_split_hostport(const char *arg, char *host, size_t hlen, char *port, size_t plen);
/* "unix:PATH" or a path: a Unix socket; NULL for HOST[:PORT]. */
const char *mig_unix_path(const char *arg);
int mig_unix_addr(const char *path, struct sockaddr_un *sa);
/* A bound on how long one read or write on sock may wait (0: none). */
void mig_socket_deadline(int sock, int ms);

#endif

/* Private to liblodge: what its files share beneath lodge.h. */
#ifndef LODGE_INTERNAL_H
#define LODGE_INTERNAL_H

#include "client.h"
#include "lodge.h"

#define LODGE_REPLY_MS 5000        /* a control request's answer */

/* Fill err (if any) with the message and return rc (a negative errno). */
int lodge_fail(struct lodge_err *err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A warning to the face's notice hook. */
void lodge_warn(const struct lodge *lg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

long lodge_now_ms(void);

/* Resolve domain, connect and send cmd: 0 with r (keys if with_keys);
 * -ENOENT "no domain named NAME is running"; another transport -errno
 * "domain NAME: why"; -EPROTO with the domain's refusal as it is in
 * err and r->error.  name (if not NULL) gets the resolved name. */
int lodge_ask(const struct lodge *lg, const char *domain, const char *cmd, bool with_keys, struct reply *r,
	      char *name, struct lodge_err *err);
/* The same to a name already resolved. */
int lodge_ask_name(const struct lodge *lg, const char *name, const char *cmd, bool with_keys, struct reply *r,
		   struct lodge_err *err);
/* Write a domain's runtime config (path) as a start does: root's and
 * its groups' to read.  0 or -errno with why. */
struct domain_config;
int lodge_keep_config(const struct lodge *lg, const char *path, const struct domain_config *dc, char *why,
		      size_t whylen);
/* DOMAINS_DIR/NAME.cfg, the file create NAME reads, for a valid name:
 * 0 or -errno with err (config-update.c). */
int lodge_config_path(const struct lodge *lg, const char *name, char *path, size_t len, struct lodge_err *err);
/* text into a config file path, by a temporary file beside it renamed
 * over it; with no_replace, refused if path exists (a rename's new
 * name).  0 or -errno with err. */
int lodge_config_write(const char *path, const char *text, size_t len, bool no_replace, struct lodge_err *err);
/* -ENOENT with its message for a name that is not running. */
int lodge_not_running(struct lodge_err *err, const char *name);

/* status.c: a reply's keys as a status. */
void lodge_status_from_reply(const struct reply *r, const char *name, struct lodge_status *st);
/* Status of a resolved name: 0, -ENOENT if it is not running, other -errno. */
int lodge_status_of(const struct lodge *lg, const char *name, struct lodge_status *st);
/* Visit every running domain (sorted by ID): the count. */
int lodge_scan(const struct lodge *lg, void (*fn)(const struct lodge_status *, void *), void *arg);
/* The numbers of a space-separated per-vCPU value into out[max]: how many. */
unsigned lodge_parse_list(const char *text, uint64_t *out, unsigned max);
/* "ADDR,HOW,AGE ..." (a vifN_addrs value) for vif into out[*n...max). */
void lodge_parse_addrs(const char *value, unsigned vif, struct lodge_addr *out, unsigned max, unsigned *n);
/* devices.c: a peers reply into out's per-vif views (nvifs at most). */
void lodge_net_from_reply(const struct reply *r, struct lodge_net *out, unsigned nvifs);
/* Remove the runtime directory (and cgroup) of a domain whose lodge-hyp
 * is gone; quiet: without a notice. */
void lodge_remove_stale(const struct lodge *lg, const char *name, bool quiet);
/* Wait at most ms until the domain's runtime directory is gone. */
int lodge_wait_gone(const struct lodge *lg, const char *name, long ms);

/* A domain saved by host-stop is save_dir/NAME SAVE_SUFFIX (hostdown.c
 * writes it, a start of NAME restores it).  start.c: that file for name
 * into file: true if it is there. */
#define SAVE_SUFFIX ".save"
bool lodge_saved_state(const struct lodge *lg, const char *name, char *file, size_t len);

/* The resolved config of a running name (its runtime directory's copy). */
int lodge_runtime_config(const struct lodge *lg, const char *name, struct domain_config *dc,
			 struct lodge_err *err);
/* Make the runtime directory and its parents (a fresh --root): 0 or -errno. */
int lodge_runtime_dir_create(const char *rundir);
/* A vif's tap: vifname=, or vif-NAME.N if it fits IFNAMSIZ, else vifID.N. */
void lodge_vif_name(const char *name, unsigned id, unsigned n, char out[IFNAMSIZ]);
void lodge_vif_ifname(const struct domain_config *dc, const char *name, unsigned id, unsigned n, char out[IFNAMSIZ]);
/* The MAC of vif n: its mac=, or the stable default. */
void lodge_vif_mac(const struct domain_config *dc, unsigned n, uint8_t mac[6]);

/* start.c: start lodge-hyp for dc; incoming_fd >= 0: restore it from
 * the stream on that descriptor (past its HEAD) instead of booting it. */
int lodge_start(const struct lodge *lg, const struct domain_config *dc, bool paused, int incoming_fd,
		struct lodge_err *err);
/* The same, calling tick(arg) about twice a second while lodge-hyp starts
 * (a restore's progress). */
int lodge_start_ticking(const struct lodge *lg, const struct domain_config *dc, bool paused, int incoming_fd,
			void (*tick)(void *arg), void *arg, struct lodge_err *err);

/* events.c: the event log's directory under the root (for lodge-hyp
 * --event-log): 0, -ENAMETOOLONG. */
int lodge_event_log_dir(char *out, size_t len);

#endif

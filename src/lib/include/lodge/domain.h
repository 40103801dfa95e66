/* liblodge: a domain's config, its creation, its lifecycle, its memory and CPUs, its console; the defined domains. */
#ifndef LODGE_API_DOMAIN_H
#define LODGE_API_DOMAIN_H

#include "lodge/handle.h"
#include "lodge/status.h"
#include "lodge/devices.h"

/* ---- configs and creating a domain --------------------------------------------------- */

/* A config by file or name (NAME: domains_dir/NAME.cfg, as xl create),
 * read and checked as create does: 0, or -errno with FILE:LINE: KEY: why. */
int lodge_config_find(const struct lodge *lg, const char *file_or_name, struct domain_config *dc,
		      struct lodge_err *err);
/* The same with xl create's KEY=VALUE overrides: each replaces the
 * file's statement of KEY, checked by the same schema. */
int lodge_config_find_with(const struct lodge *lg, const char *file_or_name, char *const *overrides, unsigned n,
			   struct domain_config *dc, struct lodge_err *err);
/* xl config-update: the config create NAME reads (domains_dir/NAME.cfg)
 * replaced by from's text (NULL: its own) with the overrides, checked by
 * the schema first and written whole; a running domain runs on as it
 * was started (a reboot restarts it so), the next create takes it. */
int lodge_config_update(const struct lodge *lg, const char *name, const char *from, char *const *overrides,
			unsigned n, struct lodge_err *err);
/* xl rename: a running domain (by name or ID) renamed as it runs (its
 * runtime directory, cgroup, runtime config and lodge-hyp's name, in one
 * step as a face sees it), and its config file in domains_dir and that
 * file's name key, if it has one; refused while another domain of the
 * new name runs or is defined (a config of that name), for Domain-0, and
 * with nothing changed if any step fails. */
int lodge_rename(const struct lodge *lg, const char *old, const char *new_name, struct lodge_err *err);
/* The resolved config a running domain was started with. */
int lodge_running_config(const struct lodge *lg, const char *domain, struct domain_config *dc,
			 struct lodge_err *err);
/* ... as its text (malloc'd, NUL-terminated): lodge config prints it. */
int lodge_running_config_text(const struct lodge *lg, const char *domain, char **text, struct lodge_err *err);

#define LODGE_CREATE_PAUSED 1u     /* its vCPUs wait for unpause before the guest's first instruction */
/* Start a domain from a checked config: lodge-hyp detached, taps on
 * their bridges.  Returns 0 once it runs.  lodge-hyp's refusal comes
 * back in err (from_hyp); its warnings as notices. */
int lodge_create(const struct lodge *lg, const struct domain_config *dc, unsigned flags, struct lodge_err *err);

/* A domain from a create form (config-form.h: the dashboard's form, the
 * web page's), and what the form asks to be made for it: a disk field
 * "new:SIZE" a sparse image file IMAGE_DIR/NAME-vda.img (never over one
 * that is there), a bridge field "new:NAME" that bridge. */
struct domain_form;
struct lodge_form_opts {
	bool ext4;                     /* the new disk made ext4 (mkfs.ext4), else left blank */
	/* The caller is not the host's root (a web user; the server is):
	 * the kernel, ramdisk, disks and bridges only what lodge.conf lends
	 * (kernel_dirs, storage_dirs, storage_devices, bridges; a bridge
	 * made for the domain is lent to it), a new disk only under
	 * storage_dirs. */
	bool lent_only;
};
struct lodge_form_result {
	char config[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8];     /* domains_dir/NAME.cfg */
	char disk[256];                /* the new disk's path; "" none */
	unsigned long disk_mib;        /* a new disk's size (new:SIZE) as the check read it; 0 none */
	int field;                     /* a failure's field (enum form_field); -1: the form whole */
};
/* Check the whole form as lodge_form_create will, with nothing made:
 * 0, or -EINVAL (a field, or the form whole), -EEXIST (the name runs or
 * has a config; the new disk's file or the new bridge is there),
 * -EACCES (not this host's to lend), with err and res->field. */
int lodge_form_check(const struct lodge *lg, const struct domain_form *form, const struct lodge_form_opts *o,
		     struct lodge_form_result *res, struct lodge_err *err);
/* Check it, make the new disk and bridge, save its config as
 * domains_dir/NAME.cfg (never over one) and start it: 0 once it runs.
 * On any failure, start included, nothing it made is left: the config,
 * the disk file and the bridge are removed.  A new ext4 disk takes
 * seconds (mkfs.ext4): a face with an event loop runs this apart (in a
 * child process: both calls keep their large scratch structs static, so
 * neither is for two threads at once). */
int lodge_form_create(const struct lodge *lg, const struct domain_form *form, const struct lodge_form_opts *o,
		      struct lodge_form_result *res, struct lodge_err *err);
/* The form makes a new disk. */
bool lodge_form_new_disk(const struct domain_form *form);
/* Start every network marked autostart that is not running (fn hears
 * "network NAME"), then every domain of domains_dir marked autostart that
 * is not running; each outcome goes to fn (err NULL: started).  One whose saved
 * state waits in save_dir (lodge_host_start could not restore it) is not
 * booted afresh: its disks belong to that state.  Returns how many
 * failed. */
int lodge_autostart(const struct lodge *lg,
		    void (*fn)(const char *name, const struct lodge_err *err, void *arg), void *arg);

/* ---- the defined domains: domains_dir's configs, running or not ------------------------ */

/* A config domains_dir/NAME.cfg, as `lodge list --all`, the dashboard and
 * the web page show it. */
struct lodge_defined {
	char name[DOMAIN_NAME_MAX];
	char config[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8];
	bool running;                  /* a domain of that name runs */
	bool loads;                    /* the config reads (host aside); else why says what is wrong */
	bool autostart;
	unsigned vcpus;
	unsigned long memory_mib;
	char why[LODGE_ERR_MAX];
};
struct lodge_defined_list {
	unsigned n;
	struct lodge_defined *dom;     /* sorted by name */
};
/* Every config in domains_dir (none: 0, empty): 0 or -errno.  Free with
 * lodge_defined_list_free. */
int lodge_defined_list(const struct lodge *lg, struct lodge_defined_list *out, struct lodge_err *err);
void lodge_defined_list_free(struct lodge_defined_list *l);
/* Start the domain NAME.cfg defines (checked as create checks it). */
int lodge_defined_start(const struct lodge *lg, const char *name, struct lodge_err *err);
/* NAME.cfg's text (malloc'd, NUL-terminated, 1 MiB at most). */
int lodge_defined_text(const struct lodge *lg, const char *name, char **text, struct lodge_err *err);
/* Replace NAME.cfg with text once the config loader takes it (its name
 * still NAME): else -EINVAL with FILE:LINE: KEY: why, the file untouched.
 * lent_only: the caller is not the host's root (a web user): every
 * kernel, ramdisk, disk, bridge and vifname the text names is one the
 * config it replaces named, or one lodge.conf lends (as a migrated
 * domain's, incoming.h), else -EACCES naming it. */
int lodge_defined_write(const struct lodge *lg, const char *name, const char *text, bool lent_only,
			struct lodge_err *err);
/* Its autostart line set (the rest of the file as it is). */
int lodge_defined_autostart(const struct lodge *lg, const char *name, bool on, struct lodge_err *err);
/* Delete NAME.cfg, never while NAME runs (-EBUSY); disks: also each of
 * its disks that is a file under storage_dirs, writable and named by no
 * other config (each kept or deleted is a notice). */
int lodge_defined_delete(const struct lodge *lg, const char *name, bool disks, struct lodge_err *err);

/* ---- lifecycle ------------------------------------------------------------------------- */

enum lodge_verb { LODGE_PAUSE, LODGE_UNPAUSE, LODGE_SHUTDOWN, LODGE_REBOOT, LODGE_DESTROY, LODGE_NVERBS };
const char *lodge_verb_name(enum lodge_verb v);      /* "pause", ... */

int lodge_pause(const struct lodge *lg, const char *domain, struct lodge_err *err);
int lodge_unpause(const struct lodge *lg, const char *domain, struct lodge_err *err);
/* Reset the domain; its on_reboot decides what follows. */
int lodge_reboot(const struct lodge *lg, const char *domain, struct lodge_err *err);
/* The same; wait_s > 0: return once it runs again (-ETIMEDOUT past
 * wait_s, -ESRCH if it ended instead: on_reboot = "destroy"). */
int lodge_reboot_wait(const struct lodge *lg, const char *domain, int wait_s, struct lodge_err *err);
/* Press the ACPI power button; wait_s > 0: return once the domain is
 * gone, -ETIMEDOUT if it is not within wait_s seconds. */
int lodge_shutdown(const struct lodge *lg, const char *domain, int wait_s, struct lodge_err *err);
/* xl shutdown -a: the power button of every running domain, then (wait_s
 * > 0) each waited for.  fn hears each domain (err NULL: done) and a
 * failure to list them (name NULL).  Returns how many failed. */
typedef void lodge_shutdown_fn(const char *name, const struct lodge_err *err, void *arg);
int lodge_shutdown_all(const struct lodge *lg, int wait_s, lodge_shutdown_fn *fn, void *arg);
/* End it at once; returns once its process and runtime directory are gone. */
int lodge_destroy(const struct lodge *lg, const char *domain, struct lodge_err *err);

/* The same requests without waiting (the dashboard: a slow domain must
 * not hold the screen).  start: 0 with c->fd to poll for input, or
 * -errno; collect: 1 done (0 in *result or the refusal's -errno, err
 * set), 0 not yet, never blocks; close: drop it (the domain may still
 * act on it). */
struct lodge_call {
	int fd;                        /* -1: none */
	char buf[640];
	size_t n;
};
int lodge_call_start(const struct lodge *lg, const char *domain, enum lodge_verb v, struct lodge_call *c,
		     struct lodge_err *err);
int lodge_call_collect(struct lodge_call *c, int *result, struct lodge_err *err);
void lodge_call_close(struct lodge_call *c);

/* A pool domain's watchdog (src/pool/README.md, "Fencing"): it ends at
 * deadline_ms (CLOCK_MONOTONIC, ms) unless fed a later one. */
int lodge_watchdog(const struct lodge *lg, const char *domain, uint64_t deadline_ms, struct lodge_err *err);

/* ---- memory and CPUs ------------------------------------------------------------------- */

/* The ceiling mem-set may balloon up to (xl mem-max): from the current
 * target up to maxmem; the target stays. */
int lodge_mem_max(const struct lodge *lg, const char *domain, unsigned long mib, struct lodge_err *err);
/* A serial BREAK then key, the guest's sysrq (xl sysrq). */
int lodge_sysrq(const struct lodge *lg, const char *domain, char key, struct lodge_err *err);
/* vCPUs 0..n-1 online (xl vcpu-set), n from 1 to the domain's maxvcpus:
 * added ones run at once; removed ones leave once the guest ejects them. */
int lodge_vcpu_set(const struct lodge *lg, const char *domain, unsigned long n, struct lodge_err *err);
/* An NMI on the first vCPU (xl trigger DOMAIN nmi). */
int lodge_nmi(const struct lodge *lg, const char *domain, struct lodge_err *err);
/* Balloon a running domain to mib (its floor up to its maxmem). */
int lodge_mem_set(const struct lodge *lg, const char *domain, unsigned long mib, struct lodge_err *err);
/* Credit weight (1-65535) and cap (percent of one CPU, 0: none); -1
 * keeps the current value.  One request: a refusal changes neither. */
int lodge_sched_set(const struct lodge *lg, const char *domain, long weight, long cap, struct lodge_err *err);
/* The host CPUs vcpu ("0", "all") may run on (cpus: "0", "0-1", "0,2", "all"). */
int lodge_vcpu_pin(const struct lodge *lg, const char *domain, const char *vcpu, const char *cpus,
		   struct lodge_err *err);

struct lodge_vcpu {
	int cpu;                       /* host CPU it last ran on, -1 unknown */
	char state;                    /* /proc state letter, '-' no thread */
	bool offline;                  /* beyond vcpu-set's count: held, not in the guest */
	uint64_t ns, wait_ns;
	char affinity[512];            /* a CPU list */
};
struct lodge_vcpus {
	char name[DOMAIN_NAME_MAX];
	unsigned id;
	bool paused;
	unsigned n;
	struct lodge_vcpu v[DOMAIN_VCPUS_MAX];
};
int lodge_vcpu_list(const struct lodge *lg, const char *domain, struct lodge_vcpus *out, struct lodge_err *err);

/* ---- the serial console -------------------------------------------------------------------- */

/* A raw console: the returned descriptor carries the guest's serial
 * bytes both ways until either side closes it (force: take it over from
 * the client that has it).  A face that pumps it itself uses this. */
int lodge_console_open(const struct lodge *lg, const char *domain, bool force, struct lodge_err *err);
/* The last `last` bytes (0: all kept) of its console output, malloc'd. */
int lodge_console_log(const struct lodge *lg, const char *domain, size_t last, int timeout_ms, char **text,
		      size_t *len, struct lodge_err *err);
/* The terminal helper: pump fd and this process's stdin/stdout until
 * Ctrl-] (on a terminal, raw meanwhile and restored after, even on
 * SIGTERM or SIGHUP) or, for scripted input, until the guest has been
 * quiet a while after it ends.  Returns 0, or -errno. */
#define LODGE_CONSOLE_ESCAPE "Ctrl-]"
int lodge_console_relay(int fd);

#endif

/* Domain and host configuration files (libconfuse), with the keys a Xen
 * user knows.  Every error names file, line and key. */
#ifndef LODGE_CONFIG_H
#define LODGE_CONFIG_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema.h"

/* The limits and rules are schema.h's, by their own names. */
#define CFG_PATH_MAX     PATH_MAX
#define CFG_VDEV_MAX     16        /* vda, xvdb, hda1: "xvd", 3 letters, 3 digits, with the NUL */


struct cfg_disk {
	char path[CFG_PATH_MAX];   /* file or block device */
	char vdev[CFG_VDEV_MAX];   /* vda, vdb, ... (target in the guest) */
	bool readonly;             /* access r / ro */
	bool is_phy;               /* phy: prefix or a block device */
	unsigned slot;             /* slot=N: its PCI slot (kept once hot-plug moved things); 0 any */
	/* path is the real path incoming_admit checked (a stream's, a web
	 * user's): the disk a start opens must be that very file. */
	bool checked;
};

struct cfg_vif {
	char bridge[IFNAMSIZ];     /* "" = the host's default bridge */
	/* A Lodge network's (network=NAME, instead of bridge=): at start its
	 * bridge is put in bridge and the MAC gets its fixed address. */
	char network[NETWORK_NAME_MAX];
	uint8_t mac[6];
	bool mac_set;              /* false: generated stably from name and index */
	char vifname[IFNAMSIZ];    /* "" = vif-<domain>.<n> (shortened to fit IFNAMSIZ) */
	unsigned slot;             /* slot=N: its PCI slot; 0 any */
};

/* The part of a vif spec a refusal of it is about (domain_build_vif_part):
 * one of its keys, or VIF_PART_SPEC for the spec whole (its syntax, an
 * unknown key, a bridge and a network both). */
enum vif_part { VIF_PART_SPEC, VIF_PART_BRIDGE, VIF_PART_NETWORK, VIF_PART_MAC, VIF_PART_VIFNAME, VIF_PART_SLOT };

struct domain_config {
	char file[CFG_PATH_MAX];   /* where it was read from */
	char name[DOMAIN_NAME_MAX];
	unsigned memory_mib, maxmem_mib;   /* maxmem 0 = memory */
	unsigned vcpus;
	unsigned maxvcpus;                 /* 0 = vcpus */
	char kernel[CFG_PATH_MAX], ramdisk[CFG_PATH_MAX];
	char cmdline[DOMAIN_CMDLINE_MAX];        /* cmdline, or root= and extra joined */
	/* bootloader = "lodge": kernel and ramdisk are "", read at each boot
	 * from the first disk by lodge-hyp, which completes the command line
	 * (root=UUID=...; src/common/bootdisk.h). */
	bool bootloader;
	unsigned ndisks;
	struct cfg_disk disks[DOMAIN_DISKS_MAX];
	unsigned nvifs;
	struct cfg_vif vifs[DOMAIN_VIFS_MAX];
	enum domain_action on_poweroff, on_reboot, on_crash;
	bool autostart;
	/* Host CPU lists, as xl: none = any CPU; one = for every vCPU; more =
	 * list i for vCPU i (vCPUs past the list run anywhere). */
	unsigned ncpus;
	char cpus[DOMAIN_VCPUS_MAX][DOMAIN_CPULIST_MAX];
	unsigned cpu_weight;       /* Xen credit weight (schema.h) */
	unsigned cap;              /* percent of one CPU, 0 = no cap */
	bool ksm;                  /* same-page merging of guest RAM (MADV_MERGEABLE) */
	bool hugepages;            /* transparent huge pages for guest RAM (MADV_HUGEPAGE) */
	bool ha;                   /* in a pool: restarted elsewhere when its host is lost */
};

/* One of lodge.conf's lists of paths, patterns or names. */
struct cfg_list {
	unsigned n;
	char item[HOST_LIST_MAX][HOST_LIST_ITEM_MAX];
};

struct host_config {
	char runtime_dir[CFG_PATH_MAX];    /* default /run/lodge */
	char domains_dir[CFG_PATH_MAX];    /* default /etc/lodge/domains */
	char default_bridge[IFNAMSIZ];     /* default "lodgebr0" */
	char image_dir[CFG_PATH_MAX];      /* default /var/lib/lodge/images */
	char crash_dir[CFG_PATH_MAX];      /* default /var/lib/lodge/crash: crash evidence */
	unsigned console_log_kib;
	char cgroup[HOST_CGROUP_MAX];      /* default "lodge": domains' cgroups are cgroup/NAME */
	long control_gid, stats_gid;       /* -1: root only */
	char migration_listen[128];        /* default 127.0.0.1:8002 */
	char migration_secret_file[CFG_PATH_MAX];   /* "" for none */
	/* What a domain restored from a file or migrated in may use here
	 * beyond what this host's own config of it names (incoming.h). */
	struct cfg_list storage_dirs;      /* disk image files under these; default image_dir */
	struct cfg_list storage_devices;   /* block devices matching these patterns; default none */
	struct cfg_list kernel_dirs;       /* kernels and ramdisks under these */
	struct cfg_list bridges;           /* bridges besides default_bridge; default none */
	/* lodge host-stop and host-start (the host's shutdown and boot). */
	bool host_shutdown_saves;          /* on_host_shutdown = "save" (default), else "shutdown" */
	unsigned shutdown_timeout_s;       /* then what still runs is destroyed */
	char save_dir[CFG_PATH_MAX];       /* default /var/lib/lodge/save */
	/* The pool (src/pool/README.md); pool_etcd "": not in one. */
	char pool_etcd[POOL_ETCD_MAX];
	char pool_host[DOMAIN_NAME_MAX];   /* "": the hostname */
	char pool_prefix[POOL_PREFIX_MAX];
	/* How this host proves itself to etcd and knows it is etcd (SECURITY.md,
	 * "The pool's etcd"): PEM files for https, etcd's own user; "": none. */
	char pool_cacert[CFG_PATH_MAX], pool_cert[CFG_PATH_MAX], pool_key[CFG_PATH_MAX];
	char pool_user[DOMAIN_NAME_MAX], pool_password_file[CFG_PATH_MAX];
	unsigned pool_lease_ttl_s, pool_fence_deadline_s, pool_restart_delay_s;
	char template_mirror[HOST_MIRROR_MAX];   /* "": the host's apt sources */
};

/* A file of secrets (a TLS key, a password): a regular file owned by root
 * that no one else may read.  0, or -errno with why naming the file and
 * the fix. */
int cfg_root_only_file(const char *path, char *why, size_t whylen);

/* The root prefix (--root DIR or $LODGE_ROOT) applied to every default path. */
void cfg_set_root(const char *root);
const char *cfg_root(void);

/* Read the host config (root/etc/lodge/lodge.conf if present, else
 * defaults). Returns 0 or -errno with "file:line: message" in err. */
int host_config_load(struct host_config *hc, char *err, size_t errlen);
/* A new disk file to be made in dir for a caller who is not root (a web
 * user): 0 if dir lies under lodge.conf's storage_dirs, or -errno
 * (-EACCES) with why (incoming.c, beside the rules for a stream's). */
int incoming_admit_new_file(const char *dir, const struct host_config *hc, char *why, size_t whylen);
/* Read and validate a domain config: every key by its row of the schema
 * (config-keys.c): the kernel and ramdisk readable, disks there and no
 * two on one target, ranges, names, and so on.  check_host: the domain is
 * to run on this host now (lodge check, create, autostart, restore,
 * migrate-receive), so its vif bridges must exist and its memory be
 * available.  Returns 0 or -errno with the first error as
 * "file:line: key: message" in err. */
int domain_config_load(const char *path, const struct host_config *hc, bool check_host,
		       struct domain_config *dc, char *err, size_t errlen);
/* The same for a config held in memory (len bytes of text), read as a
 * file named label would be: messages name it, relative paths are
 * relative to its directory. */
int domain_config_load_text(const char *label, const char *text, size_t len, const struct host_config *hc,
			    bool check_host, struct domain_config *dc, char *err, size_t errlen);
/* domain_config_load with overrides (xl create FILE KEY=VALUE...): each
 * "KEY=VALUE" a statement of the file's syntax that replaces the file's
 * statement of KEY (or adds one), checked as the file is; a message about
 * one names it ("override 'memory=1': ..").  text_out (may be NULL): the
 * text read, the file's with the overrides (malloc'd, len_out bytes), to
 * write back (lodge config-update keeps the file's comments). */
int domain_config_load_overrides(const char *path, char *const *overrides, unsigned n,
				 const struct host_config *hc, bool check_host, struct domain_config *dc,
				 char **text_out, size_t *len_out, char *err, size_t errlen);
/* A domain config built from values as a person types them (not quoted;
 * for disk and vif one spec, appended): each checked and stored by its
 * key's one check, the check a file's value gets (config-keys.c), with no
 * config text and no libconfuse between; then the rules of two keys, the
 * ones a file gets.  Messages are a file's after "FILE:LINE: KEY: ".
 * label: dc->file; relative paths are from the current directory.
 * check_host: the domain is to run here (domain_config_load's), for the
 * defaults; each value says its own (a bridge still to be made: false). */
struct domain_build;
struct domain_build *domain_build_new(const char *label, const struct host_config *hc, bool check_host);
/* 0, or -errno with why. */
int domain_build_set(struct domain_build *b, const char *key, const char *value, bool check_host, char *why,
		     size_t whylen);
/* key left out, as a file leaves it out: a required key missing (-EINVAL
 * with why), else its default checked and stored as a value would be. */
int domain_build_default(struct domain_build *b, const char *key, char *why, size_t whylen);
/* The keys not set at their defaults (a required one missing), the rules
 * of two keys: 0 with dc, or -errno with the key that failed and why. */
int domain_build_finish(struct domain_build *b, struct domain_config *dc, const char **key, char *why,
			size_t whylen);
/* After domain_build_set refused a vif value: the part of its spec at
 * fault, for a face that shows the parts apart (a create form's bridge
 * and MAC fields). */
enum vif_part domain_build_vif_part(const struct domain_build *b);
void domain_build_free(struct domain_build *b);
/* Check one key of a domain config alone, as a domain_build_set on a
 * scratch build: "" as a file that leaves the key out (a required key is
 * missing; a default is checked as written).  0, or -errno with why set
 * to what domain_config_load says after "FILE:LINE: KEY: ".  Keys that
 * depend on each other (maxmem and memory, cap and vcpus) are checked by
 * loading the whole config. */
int domain_key_check(const char *key, const char *value, const struct host_config *hc, bool check_host,
		     char *why, size_t whylen);
/* A key in words, for a form: "guest RAM, 4 to 4194304 MiB, default 128 MiB". */
void domain_key_hint(const char *key, char *out, size_t len);
/* One disk spec (a disk= list's item, or block-attach's) alone, parsed
 * as in a file named label: 0, or -errno with why.  A relative path is
 * kept relative (d->path as written): the caller decides what it means. */
int domain_disk_spec_parse(const char *label, const char *spec, struct cfg_disk *d, char *why, size_t whylen);
/* A vif's mac= value alone, by the vif rule's MAC check: 0 with mac, or
 * -EINVAL with why (a file's message for it). */
int domain_mac_parse(const char *text, uint8_t mac[6], char *why, size_t whylen);
/* Write a domain config in the same syntax (for the dashboard's create form). */
int domain_config_save(const char *path, const struct domain_config *dc, char *err, size_t errlen);
/* The MAC Lodge gives vif n of a domain with no mac= : locally administered
 * (02:xx...), stable for (name, n), different across names. */
void cfg_default_mac(const char *domain, unsigned n, uint8_t mac[6]);

#endif

/* Domain and host configuration files (libconfuse), with the keys a Xen
 * user knows.  Every error names file, line and key. */
#ifndef LODGE_CONFIG_H
#define LODGE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema.h"

#define CFG_NAME_MAX     DOMAIN_NAME_MAX       /* the limits: schema.h */
#define CFG_PATH_MAX     4096
#define CFG_MAX_DISKS    DOMAIN_DISKS_MAX
#define CFG_MAX_VIFS     DOMAIN_VIFS_MAX
#define CFG_MAX_VCPUS    DOMAIN_VCPUS_MAX
#define CFG_CPUS_MAX     128       /* one CPU list, with its NUL */
#define CFG_LIST_MAX     16        /* entries in one of lodge.conf's lists */
#define CFG_LIST_ITEM_MAX 512      /* one entry, with its NUL */


struct cfg_disk {
	char path[CFG_PATH_MAX];   /* file or block device */
	char vdev[16];             /* vda, vdb, ... (target in the guest) */
	bool readonly;             /* access r / ro */
	bool is_phy;               /* phy: prefix or a block device */
};

struct cfg_vif {
	char bridge[16];           /* "" = the host's default bridge */
	uint8_t mac[6];
	bool mac_set;              /* false: generated stably from name and index */
	char vifname[16];          /* "" = vif-<domain>.<n> (shortened to fit IFNAMSIZ) */
};

struct domain_config {
	char file[CFG_PATH_MAX];   /* where it was read from */
	char name[CFG_NAME_MAX];
	unsigned memory_mib, maxmem_mib;   /* maxmem 0 = memory */
	unsigned vcpus;
	char kernel[CFG_PATH_MAX], ramdisk[CFG_PATH_MAX];
	char cmdline[DOMAIN_CMDLINE_MAX];        /* cmdline, or root= and extra joined */
	unsigned ndisks;
	struct cfg_disk disks[CFG_MAX_DISKS];
	unsigned nvifs;
	struct cfg_vif vifs[CFG_MAX_VIFS];
	enum domain_action on_poweroff, on_reboot, on_crash;
	bool autostart;
	/* Host CPU lists, as xl: none = any CPU; one = for every vCPU; more =
	 * list i for vCPU i (vCPUs past the list run anywhere). */
	unsigned ncpus;
	char cpus[CFG_MAX_VCPUS][CFG_CPUS_MAX];
	unsigned cpu_weight;       /* Xen credit weight, 1..65535, default 256 */
	unsigned cap;              /* percent of one CPU, 0 = no cap */
	bool ksm;                  /* same-page merging of guest RAM (MADV_MERGEABLE) */
	bool hugepages;            /* transparent huge pages for guest RAM (MADV_HUGEPAGE) */
};

/* One of lodge.conf's lists of paths, patterns or names. */
struct cfg_list {
	unsigned n;
	char item[CFG_LIST_MAX][CFG_LIST_ITEM_MAX];
};

struct host_config {
	char runtime_dir[CFG_PATH_MAX];    /* default /run/lodge */
	char domains_dir[CFG_PATH_MAX];    /* default /etc/lodge/domains */
	char default_bridge[16];           /* default "lodgebr0" */
	char image_dir[CFG_PATH_MAX];      /* default /var/lib/lodge/images */
	unsigned console_log_kib;          /* default 1024 */
	char cgroup[256];                  /* default "lodge": domains' cgroups are cgroup/NAME */
	long control_gid, stats_gid;       /* -1: root only */
	char migration_listen[128];        /* default 127.0.0.1:8002 */
	char migration_secret_file[CFG_PATH_MAX];   /* "" for none */
	/* What a domain restored from a file or migrated in may use here
	 * beyond what this host's own config of it names (incoming.h). */
	struct cfg_list storage_dirs;      /* disk image files under these; default image_dir */
	struct cfg_list storage_devices;   /* block devices matching these patterns; default none */
	struct cfg_list kernel_dirs;       /* kernels and ramdisks under these */
	struct cfg_list bridges;           /* bridges besides default_bridge; default none */
};

/* The root prefix (--root DIR or $LODGE_ROOT) applied to every default path. */
void cfg_set_root(const char *root);
const char *cfg_root(void);

/* Read the host config (root/etc/lodge/lodge.conf if present, else
 * defaults). Returns 0 or -errno with "file:line: message" in err. */
int host_config_load(struct host_config *hc, char *err, size_t errlen);
/* Read and validate a domain config. Checks the kernel and ramdisk exist,
 * disks exist, no two disks share a target, vif bridges exist (unless
 * check_bridges is false), memory >= 4. Returns 0 or -errno with the
 * first error as "file:line: key: message" in err. */
int domain_config_load(const char *path, const struct host_config *hc, bool check_bridges,
		       struct domain_config *dc, char *err, size_t errlen);
/* Write a domain config in the same syntax (for the dashboard's create form). */
int domain_config_save(const char *path, const struct domain_config *dc, char *err, size_t errlen);
/* The MAC Lodge gives vif n of a domain with no mac= : locally administered
 * (02:xx...), stable for (name, n), different across names. */
void cfg_default_mac(const char *domain, unsigned n, uint8_t mac[6]);

#endif

/* The rules of a domain, as data, defined once: the limits, the action
 * names and the name rule that lodge-hyp's options, the library's config
 * loader (its key table, src/lib/config/config-keys.c), the dashboard's create
 * form and lodge.conf(5) all follow. */
#ifndef LODGE_SCHEMA_H
#define LODGE_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

/* A limit's number as a string literal, for help text put together at
 * compile time: SCHEMA_TEXT(DOMAIN_CPU_WEIGHT_DEFAULT) is "256". */
#define SCHEMA_TEXT(n)         SCHEMA_TEXT_(n)
#define SCHEMA_TEXT_(n)        #n

#define DOMAIN_NAME_MAX        64          /* bytes, with the NUL */
#define DOMAIN_MEMORY_MIN_MIB  4           /* the least a guest boots in */
#define DOMAIN_MEMORY_MAX_MIB  (4u << 20)  /* 4 TiB: a typo guard; the host's own size is checked too */
#define DOMAIN_MEMORY_DEFAULT_MIB 128      /* xl's */
#define DOMAIN_VCPUS_MIN       1
#define DOMAIN_VCPUS_MAX       64
#define DOMAIN_VCPUS_DEFAULT   1
#define DOMAIN_DISKS_MAX       16
#define DOMAIN_VIFS_MAX        8
/* A disk a create form makes (new:SIZE, MiB): a typo guard (1 TiB), the
 * file is sparse. */
#define DOMAIN_NEW_DISK_MIN_MIB 1
#define DOMAIN_NEW_DISK_MAX_MIB (1u << 20)
/* PCI slots a disk or vif may be given (disk and vif slot=N, which the
 * runtime config carries once devices were hot-plugged, so that a restore
 * or migration rebuilds the same bus): slot 0 is the host bridge, 31 the
 * balloon's. */
#define DOMAIN_PCI_SLOT_MIN    1
#define DOMAIN_PCI_SLOT_MAX    30
#define DOMAIN_BALLOON_SLOT    31
#define DOMAIN_CMDLINE_MAX     4096        /* bytes, with the NUL */
#define DOMAIN_CPULIST_MAX     128         /* one host CPU list (cpus =), with its NUL */
/* The share of CPU time, as Xen's credit scheduler weighs it (lodge-hyp
 * maps it onto cgroup cpu.weight or cpu.shares, cgroup.h). */
#define DOMAIN_CPU_WEIGHT_MIN  1
#define DOMAIN_CPU_WEIGHT_MAX  65535
#define DOMAIN_CPU_WEIGHT_DEFAULT 256
/* A cap is in percent of one host CPU: each vCPU can use at most one. */
#define DOMAIN_CAP_PER_VCPU    100
#define DOMAIN_CAP_MAX(vcpus)  (DOMAIN_CAP_PER_VCPU * (vcpus))

/* bootloader = "lodge": the kernel and initrd are read from the ext2/3/4
 * filesystem on the guest's first disk at each boot (src/common/bootdisk.h).
 * The disk is the guest's, so untrusted: what is copied out is capped,
 * and the reading may take only so long. */
#define BOOTLOADER_LODGE       "lodge"     /* the one value of the bootloader key */
#define BOOTDISK_KERNEL_MAX    (128ull << 20)   /* bytes of a kernel */
#define BOOTDISK_INITRD_MAX    (1ull << 30)     /* bytes of an initrd */
#define BOOTDISK_READ_TIMEOUT_S 60         /* seconds the reading of the disk may take */
/* The command line of a guest booted from its disk when the config gives
 * none: root=UUID=<the filesystem's UUID> and these. */
#define BOOTDISK_DEFAULT_ARGS  "ro console=ttyS0"

/* The host's own settings (lodge.conf). */
#define HOST_CONSOLE_LOG_MIN_KIB     4
#define HOST_CONSOLE_LOG_MAX_KIB     (1u << 20)
#define HOST_CONSOLE_LOG_DEFAULT_KIB 1024
/* lodge host-stop: how long the saves or shutdowns may take, in seconds,
 * before what still runs is destroyed (xendomains' XENDOMAINS_STOP_MAXWAIT). */
#define HOST_SHUTDOWN_TIMEOUT_MIN_S     1
#define HOST_SHUTDOWN_TIMEOUT_MAX_S     86400
#define HOST_SHUTDOWN_TIMEOUT_DEFAULT_S 300
#define HOST_CGROUP_MAX        256         /* the cgroup parent's path, with its NUL */
/* The pool (src/pool/README.md): the host's lease, the deadline by which
 * a host cut off from etcd has ended its HA domains, and how long the
 * others wait after a lease expired before they restart them.  Checked
 * together at the pool agent's start: T >= 2, T/3 + 1 <= F, F + 1 <= T. */
#define POOL_LEASE_TTL_MIN_S        2      /* etcd's minimum at its default election timeout */
#define POOL_LEASE_TTL_MAX_S        3600
#define POOL_LEASE_TTL_DEFAULT_S    10
#define POOL_FENCE_DEADLINE_MIN_S   1
#define POOL_FENCE_DEADLINE_DEFAULT_S 6
#define POOL_RESTART_DELAY_MAX_S    3600
#define POOL_RESTART_DELAY_DEFAULT_S 2
#define POOL_ETCD_MAX          512         /* pool_etcd's URLs, comma-separated, with the NUL */
#define POOL_PREFIX_MAX        128
/* pool_prefix, lodge.conf's and pool-join --prefix's: a key prefix like
 * /lodge/pool: from /, no trailing /, under POOL_PREFIX_MAX bytes, no
 * space, quote or backslash (it is written back into lodge.conf). */
bool pool_prefix_valid(const char *prefix);
const char *pool_prefix_rule(void);
#define HOST_LIST_MAX          16          /* entries in one of lodge.conf's lists */
#define HOST_LIST_ITEM_MAX     512         /* one entry, with its NUL */
#define HOST_MIRROR_MAX        256         /* template_mirror's URL, with its NUL */

/* What a domain does when its guest powers off, reboots or crashes (xl's
 * on_poweroff, on_reboot, on_crash).  The coredump ones first write the
 * guest's core into the crash's evidence directory: on_crash only. */
enum domain_action { ACTION_DESTROY, ACTION_RESTART, ACTION_PRESERVE, ACTION_COREDUMP_DESTROY,
		     ACTION_COREDUMP_RESTART, ACTION_COUNT };

/* "destroy", "restart", "preserve", "coredump-destroy", "coredump-restart". */
const char *domain_action_name(enum domain_action a);
/* The action a word names: 0, or -EINVAL. */
int domain_action_parse(const char *word, enum domain_action *out);
/* The words, for messages: "destroy, restart, preserve, ...". */
const char *domain_action_list(void);
/* Whether the action boots the domain again; whether it writes a core. */
bool domain_action_restarts(enum domain_action a);
bool domain_action_dumps_core(enum domain_action a);
/* The crash evidence kept per domain: how many crashes, and how much of
 * the console's output with each. */
#define CRASH_KEEP_PER_DOMAIN  10
#define CRASH_CONSOLE_BYTES    (64u << 10)
#define CRASH_HYP_LOG_BYTES    (1u << 20)     /* the end of lodge-hyp's log */
#define CRASH_REPORT_BYTES     (64u << 10)    /* the reason and every vCPU's registers */

/* A domain name: 1 to DOMAIN_NAME_MAX - 1 of A-Z a-z 0-9 _ . -, not
 * starting with - or . (it names a directory and a cgroup), and not the
 * host's own Domain-0 in any case. */
bool domain_name_valid(const char *name);
/* The host's row, as xl names it: no domain may take the name. */
#define DOMAIN_HOST_NAME       "Domain-0"
/* Whether NAME is the host's, in any case. */
bool domain_name_is_host(const char *name);
/* The rule in words, for messages. */
const char *domain_name_rule(void);

/* A network's name (lodge network-create NAME, a vif's network=): 1 to
 * NETWORK_NAME_MAX - 1 of A-Z a-z 0-9 _ -, starting with a letter.  It
 * becomes part of nftables chain names (NAME_forward, netfilter.c), which
 * nft's grammar takes only as bare identifiers: this alphabet is what
 * keeps a config from writing nft syntax. */
#define NETWORK_NAME_MAX       32          /* bytes, with the NUL */
bool network_name_valid(const char *name);
const char *network_name_rule(void);
/* 0, or -EINVAL with why: "'NAME' is not a network name (RULE)". */
int network_name_check(const char *name, char *why, size_t whylen);
/* An interface's name, the one rule for every bridge, tap, vifname and
 * NIC name that enters (lodge's commands, configs' vif= and bridges =,
 * the dashboard's and the web's create forms, network-create --bridge,
 * install --bridge, lodge-hyp's tap options): 1 to IFNAME_MAX - 1
 * (IFNAMSIZ - 1) of A-Z a-z 0-9 _ . -, not . or ..: no quote, backslash,
 * ',' '=' '/' ':' or space, nor the '*' nft reads as a wildcard. */
#define IFNAME_MAX             16          /* bytes, with the NUL (IFNAMSIZ) */
#define NETWORK_BRIDGE_MAX     IFNAME_MAX
bool ifname_valid(const char *name);
const char *ifname_rule(void);
/* 0, or -EINVAL with why: "'NAME' is not an interface name (RULE)", the
 * same words from every face. */
int ifname_check(const char *name, char *why, size_t whylen);
/* A network's bridge when none is given: this and its name (so a name
 * longer than NETWORK_BRIDGE_MAX - 1 - 5 needs a bridge given). */
#define NETWORK_BRIDGE_PREFIX  "lnet-"
#define NETWORK_DOMAIN_MAX     64          /* its DNS domain, with the NUL */
#define NETWORK_PREFIX_MIN     8           /* a subnet's prefix length: /8 to /30 */
#define NETWORK_PREFIX_MAX     30

#endif

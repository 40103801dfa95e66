/* The schema of a domain file, and what every table's rows share: one row
 * per key, with its type, default, range, unit and checks, the limits
 * taken from schema.h.  One table row gives libconfuse the option and the
 * validate callback, the create form its hint; lodge.conf(5) documents the
 * same rows (test-lib-config holds the page to the table).  lodge.conf's
 * own keys and their checks are config-host-keys.c's. */
#include "config-keys.h"
#include "cpulist.h"
#include "host.h"
#include "log.h"
#include "netlink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the generic checks: from the row ---------------------------------------- */

/* "0: no cap", or the default as a number with its unit. */
static void describe_default(const struct cfg_key *k, char *out, size_t len)
{
	if (k->zero && k->idef == 0)
		snprintf(out, len, "0: %s", k->zero);
	else
		snprintf(out, len, "%ld%s", k->idef, k->unit ? k->unit : "");
}

/* A value given: where the draft keeps it (KT_LIST: the values, by index). */
static void store_value(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v)
{
	char *field;

	if (!ctx->draft || !k->size)
		return;
	field = (char *)ctx->draft + k->off;
	if (k->type == KT_STR && k->resolve)
		cfg_resolve(ctx, v->s, field, k->size);        /* fits: the check resolved it */
	else if (k->type == KT_STR)
		snprintf(field, k->size, "%s", v->s);          /* fits: the row's length */
	else if (k->size == sizeof(bool))
		*(bool *)field = v->n != 0;
	else
		*(unsigned *)field = (unsigned)v->n;            /* in the row's range */
}

int cfg_check_value(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
		    size_t whylen)
{
	const char *unit = k->unit ? k->unit : "";
	const char *bad = k->type == KT_STR || k->type == KT_LIST ? text_find_control(v->s) : NULL;
	char def[64], shown[16];
	int rc;

	/* No control characters: a newline in a path would end a line of
	 * the control protocol or of a listing; an ESC would reach a terminal. */
	if (bad) {
		snprintf(why, whylen, "contains a control character (%s)",
			 text_escape_n(shown, sizeof(shown), bad, text_control_len(bad)));
		return -EINVAL;
	}
	switch (k->type) {
	case KT_INT:
		if (v->n < k->min || v->n > k->max) {
			describe_default(k, def, sizeof(def));
			snprintf(why, whylen, "%ld%s is out of range (%ld to %ld%s, default %s)", v->n, unit, k->min,
				 k->max, unit, def);
			return -ERANGE;
		}
		break;
	case KT_STR:
		if (k->max && strlen(v->s) > (size_t)k->max) {
			snprintf(why, whylen, "longer than %ld bytes", k->max);
			return -E2BIG;
		}
		break;
	case KT_LIST:
		if (k->max && v->index >= (unsigned long)k->max) {
			snprintf(why, whylen, "more than %ld %s", k->max, unit);
			return -E2BIG;
		}
		break;
	case KT_BOOL:
		break;
	}
	if (k->check && (rc = k->check(ctx, k, v, why, whylen)))
		return rc;
	store_value(ctx, k, v);
	return 0;
}

int cfg_value_parse(const struct cfg_key *k, const char *text, struct cfg_value *v, char *why, size_t whylen)
{
	static const char *const yes[] = { "1", "true", "yes", "on" }, *const no[] = { "0", "false", "no", "off" };
	char *end;
	unsigned i;

	memset(v, 0, sizeof(*v));
	v->s = text;
	switch (k->type) {
	case KT_INT:
		/* libconfuse's own reading: strtol in base 0, all of it. */
		errno = 0;
		v->n = strtol(text, &end, 0);
		if (*end || end == text) {
			snprintf(why, whylen, "not a number");
			return -EINVAL;
		}
		if (errno == ERANGE) {
			snprintf(why, whylen, "integer value");    /* libconfuse's "... is out of range", as cut */
			return -EINVAL;
		}
		return 0;
	case KT_BOOL:
		for (i = 0; i < 4; i++)
			if (strcasecmp(text, yes[i]) == 0 || strcasecmp(text, no[i]) == 0) {
				v->n = strcasecmp(text, yes[i]) == 0;
				return 0;
			}
		snprintf(why, whylen, "'%s' is not true or false", text);
		return -EINVAL;
	case KT_STR:
	case KT_LIST:
		break;
	}
	return 0;
}

void cfg_key_describe(const struct cfg_key *k, char *out, size_t len)
{
	char def[64];

	if (k->type == KT_INT) {
		describe_default(k, def, sizeof(def));
		snprintf(out, len, "%s, %ld to %ld%s, default %s", k->help, k->min, k->max, k->unit ? k->unit : "",
			 def);
	} else if (k->required) {
		snprintf(out, len, "%s (required)", k->help);
	} else if (k->def && k->def[0]) {
		snprintf(out, len, "%s, default %s", k->help, k->def);
	} else {
		snprintf(out, len, "%s", k->help);
	}
}

/* ---- the checks of one key, one value at a time --------------------------- */

static int check_name(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;

	if (domain_name_is_host(s)) {
		snprintf(why, whylen, "'%s' is the host's name", s);
		return -EINVAL;
	}
	if (!domain_name_valid(s)) {
		snprintf(why, whylen, "'%s' is not a name: %s", s, domain_name_rule());
		return -EINVAL;
	}
	return 0;
}

/* Beyond the range: what this host has, when the domain is to run here.
 * memory is what the guest gets at once, so it must be available now;
 * maxmem is mapped whole by lodge-hyp, which refuses more than the host's
 * RAM. */
static int check_memory(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	long mib = v->n;
	bool is_memory = strcmp(k->name, "memory") == 0;
	struct host_mem host;
	int rc;

	if (!ctx->check_host || mib == 0)
		return 0;
	if ((rc = host_mem_read(&host))) {
		snprintf(why, whylen, "cannot read this host's memory (/proc/meminfo): %s", strerror(-rc));
		return rc;
	}
	if (is_memory && (unsigned long)mib > host.available_mib) {
		snprintf(why, whylen, "%ld MiB is more than this host has available (%lu MiB)", mib,
			 host.available_mib);
		return -ENOMEM;
	}
	if (!is_memory && (unsigned long)mib > host.total_mib) {
		snprintf(why, whylen, "%ld MiB is more than this host has (%lu MiB)", mib, host.total_mib);
		return -ENOMEM;
	}
	return 0;
}

/* kernel, ramdisk: a readable file ("" for ramdisk: none). */
static int check_readable(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;
	char path[CFG_PATH_MAX];
	struct stat st;
	int fd, rc = 0;

	if (!s[0] && strcmp(k->name, "kernel") != 0)
		return 0;
	if (cfg_resolve(ctx, s, path, sizeof(path))) {
		snprintf(why, whylen, "path is too long");
		return -ENAMETOOLONG;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "cannot read '%s': %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "'%s' is a directory", path);
		rc = -EISDIR;
	}
	close(fd);
	return rc;
}

static int check_disk(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	struct domain_config *dc = &ctx->draft->dc;
	struct cfg_disk *disk = &dc->disks[v->index];   /* in range: the row's count */
	unsigned j, i = v->index;

	if (cfg_parse_disk(ctx, v->s, disk, why, whylen))
		return -EINVAL;
	/* Against the disks before it, as they were stored. */
	for (j = 0; j < i; j++)
		if (strcmp(dc->disks[j].vdev, disk->vdev) == 0) {
			snprintf(why, whylen, "two disks are %s (disks %u and %u)", disk->vdev, j + 1, i + 1);
			return -EEXIST;
		} else if (disk->slot && dc->disks[j].slot == disk->slot) {
			snprintf(why, whylen, "disks %u and %u are both in slot %u", j + 1, i + 1, disk->slot);
			return -EEXIST;
		}
	dc->ndisks = i + 1;
	return 0;
}

/* A vif's bridge or network is there, when the domain is to run here:
 * 0, or -ENODEV with why and *part the one missing. */
static int check_vif_host(const struct load_ctx *ctx, const struct cfg_vif *vif, enum vif_part *part, char *why,
			  size_t whylen)
{
	const char *bridge;

	if (vif->network[0]) {
		/* Its bridge is the network's, brought up by network-start: lodge
		 * create says if it is not running. */
		char cfg[CFG_PATH_MAX + 64];

		snprintf(cfg, sizeof(cfg), "%s/etc/lodge/networks/%s.cfg", cfg_root(), vif->network);
		if (ctx->check_host && access(cfg, F_OK)) {
			snprintf(why, whylen, "no network named %s (lodge network-create %s)", vif->network, vif->network);
			*part = VIF_PART_NETWORK;
			return -ENODEV;
		}
		return 0;
	}
	bridge = vif->bridge[0] ? vif->bridge : ctx->hc ? ctx->hc->default_bridge : "";
	if (ctx->check_host && bridge[0] && !nl_link_exists(bridge)) {
		snprintf(why, whylen, "bridge '%s' does not exist (lodge bridge-create %s)", bridge, bridge);
		*part = VIF_PART_BRIDGE;
		return -ENODEV;
	}
	return 0;
}

/* A vif against the vifs before it, as they were stored: 0, or -EEXIST
 * with why and *part the one they share. */
static int check_vif_unique(const struct domain_config *dc, const struct cfg_vif *vif, unsigned i,
			    enum vif_part *part, char *why, size_t whylen)
{
	const struct cfg_vif *other;
	unsigned j;

	for (j = 0; j < i; j++) {
		other = &dc->vifs[j];
		if (vif->mac_set && other->mac_set && !memcmp(vif->mac, other->mac, 6)) {
			snprintf(why, whylen, "vifs %u and %u have the same mac", j + 1, i + 1);
			*part = VIF_PART_MAC;
			return -EEXIST;
		}
		if (vif->slot && vif->slot == other->slot) {
			snprintf(why, whylen, "vifs %u and %u are both in slot %u", j + 1, i + 1, vif->slot);
			*part = VIF_PART_SLOT;
			return -EEXIST;
		}
		if (vif->vifname[0] && !strcmp(vif->vifname, other->vifname)) {
			snprintf(why, whylen, "vifs %u and %u are both named %s", j + 1, i + 1, vif->vifname);
			*part = VIF_PART_VIFNAME;
			return -EEXIST;
		}
	}
	return 0;
}

/* A refusal says which part of the spec it is about (the draft's
 * vif_part), for a form that shows the parts as fields of their own. */
static int check_vif(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	struct domain_config *dc = &ctx->draft->dc;
	enum vif_part *part = &ctx->draft->vif_part;
	struct cfg_vif vif;
	unsigned i = v->index;
	int rc;

	*part = VIF_PART_SPEC;
	if (cfg_parse_vif(v->s, &vif, part, why, whylen))
		return -EINVAL;
	if ((rc = check_vif_unique(dc, &vif, i, part, why, whylen)) || (rc = check_vif_host(ctx, &vif, part, why, whylen)))
		return rc;
	dc->vifs[i] = vif;                              /* in range: the row's count */
	dc->nvifs = i + 1;
	return 0;
}

static int check_action(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	enum domain_action act;
	int rc = cfg_parse_action(v->s, &act, why, whylen);

	/* A core is crash evidence: xl takes it on any end, Lodge on a crash. */
	if (!rc && domain_action_dumps_core(act) && strcmp(k->name, "on_crash")) {
		snprintf(why, whylen, "'%s' is for on_crash only", domain_action_name(act));
		return -EINVAL;
	}
	if (!rc)
		*(enum domain_action *)((char *)ctx->draft + k->off) = act;
	return rc;
}

/* cpus = "0-1" or [ "0", "1" ]: every CPU named must be on this host. */
static int check_cpus(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	struct domain_config *dc = &ctx->draft->dc;
	const char *s = v->s;
	cpu_set_t host, set;
	int rc;

	if (strlen(s) >= DOMAIN_CPULIST_MAX) {
		snprintf(why, whylen, "'%.32s...' is longer than %d bytes", s, DOMAIN_CPULIST_MAX - 1);
		return -E2BIG;
	}
	if (cpulist_host(&host)) {
		snprintf(why, whylen, "cannot read this host's CPUs");
		return -EIO;
	}
	if ((rc = cpulist_parse(s, &host, &set, why, whylen)))
		return rc;
	snprintf(dc->cpus[v->index], sizeof(dc->cpus[0]), "%s", s);     /* in range: the row's count */
	dc->ncpus = v->index + 1;
	return 0;
}

/* bootloader = "lodge": Lodge reads the kernel from the guest's disk
 * itself (bootdisk.h); xl's pygrub does that job in Xen. */
static int check_bootloader(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;

	ctx->draft->dc.bootloader = strcmp(s, BOOTLOADER_LODGE) == 0;
	if (!s[0] || ctx->draft->dc.bootloader)
		return 0;
	if (strstr(s, "pygrub"))
		snprintf(why, whylen, "'%.64s' is Xen's: Lodge reads the kernel, initrd and command line from the "
			 "guest's disk itself with bootloader = \"%s\"", s, BOOTLOADER_LODGE);
	else
		snprintf(why, whylen, "'%.64s' is no bootloader Lodge has: the one is \"%s\" (the kernel from the "
			 "guest's own disk)", s, BOOTLOADER_LODGE);
	return -EINVAL;
}

/* ---- the tables ------------------------------------------------------------- */

/* A domain row's field in the draft: where cfg_check_value stores its
 * value as it is (AT), or where its check stores what it parsed of it
 * (PARSED_AT); the lists' checks store by index. */
#define AT(field)        .off = offsetof(struct domain_draft, field), .size = sizeof(((struct domain_draft *)0)->field)
#define PARSED_AT(field) .off = offsetof(struct domain_draft, field)

const struct cfg_key domain_keys[] = {
	KEY_REQUIRED("name", "every domain needs a name", check_name, "the domain's name", AT(dc.name)),
	KEY_INT("memory", DOMAIN_MEMORY_DEFAULT_MIB, DOMAIN_MEMORY_MIN_MIB, DOMAIN_MEMORY_MAX_MIB, " MiB", NULL,
		  check_memory, "guest RAM", AT(dc.memory_mib)),
	KEY_INT("maxmem", 0, 0, DOMAIN_MEMORY_MAX_MIB, " MiB", "the same as memory", check_memory,
		  "the ceiling the balloon may grow to, not below memory", AT(dc.maxmem_mib)),
	KEY_INT("vcpus", DOMAIN_VCPUS_DEFAULT, DOMAIN_VCPUS_MIN, DOMAIN_VCPUS_MAX, NULL, NULL, NULL, "virtual CPUs", AT(dc.vcpus)),
	KEY_INT("maxvcpus", 0, 0, DOMAIN_VCPUS_MAX, NULL, "the same as vcpus", NULL,
		  "the most vCPUs vcpu-set may bring online, not below vcpus", AT(dc.maxvcpus)),
	{ .name = "kernel", .type = KT_STR, .required = "nothing to boot (a kernel, or bootloader = \"lodge\")",
	  .unless = "bootloader", .check = check_readable, .help = "ELF (PVH) or bzImage to boot", AT(dc.kernel),
	  .resolve = true },
	KEY_STR("ramdisk", NULL, check_readable, "initrd loaded beside the kernel", AT(dc.ramdisk), .resolve = true),
	KEY_STR("bootloader", "", check_bootloader,
		"\"lodge\": kernel, initrd and command line from the ext4 filesystem on the first disk, at each boot"),
	KEY_TEXT("cmdline", DOMAIN_CMDLINE_MAX - 1, "kernel command line; overrides root and extra", AT(dc.cmdline)),
	KEY_TEXT("root", DOMAIN_CMDLINE_MAX - 1, "becomes root=ROOT on the command line", AT(root)),
	KEY_TEXT("extra", DOMAIN_CMDLINE_MAX - 1, "appended to the command line after root=", AT(extra)),
	KEY_LIST("disk", DOMAIN_DISKS_MAX, "disks", check_disk,
		 "disk specs: 'file:PATH,VDEV,ACCESS' or 'TARGET,FORMAT,VDEV,ACCESS'"),
	KEY_LIST("vif", DOMAIN_VIFS_MAX, "vifs", check_vif, "network interfaces: 'bridge=BR,mac=MAC,vifname=NAME', or network=NET (lodge network-create) for bridge="),
	KEY_STR("on_poweroff", "destroy", check_action, "when the guest powers off", PARSED_AT(dc.on_poweroff)),
	KEY_STR("on_reboot", "restart", check_action, "when the guest reboots", PARSED_AT(dc.on_reboot)),
	KEY_STR("on_crash", "destroy", check_action, "when the guest crashes (triple fault)", PARSED_AT(dc.on_crash)),
	KEY_BOOL("autostart", "false", "lodge autostart starts it at boot", AT(dc.autostart)),
	KEY_LIST("cpus", DOMAIN_VCPUS_MAX, "CPU lists (one per vCPU at most)", check_cpus,
		 "host CPUs the vCPUs may run on: '0-1', '0,2', 'all', or one list per vCPU"),
	KEY_INT("cpu_weight", DOMAIN_CPU_WEIGHT_DEFAULT, DOMAIN_CPU_WEIGHT_MIN, DOMAIN_CPU_WEIGHT_MAX, NULL, NULL,
		  NULL, "share of CPU time against other domains", AT(dc.cpu_weight)),
	KEY_INT("cap", 0, 0, DOMAIN_CAP_MAX(DOMAIN_VCPUS_MAX), "%", "no cap", NULL,
		  "most CPU it may use, in percent of one CPU, per vCPU at most all of one", AT(dc.cap)),
	KEY_BOOL("ksm", "false", "let the host merge identical pages of guest RAM (KSM)", AT(dc.ksm)),
	KEY_BOOL("hugepages", "false", "back guest RAM with transparent huge pages", AT(dc.hugepages)),
	KEY_INT("ha", 0, 0, 1, NULL, NULL, NULL,
		  "in a pool: 1 restarts it on another host when its host is lost (src/pool/README.md)", AT(dc.ha)),
	{ .name = NULL }
};

_Static_assert(sizeof(domain_keys) / sizeof(domain_keys[0]) <= MAX_KEYS + 1, "MAX_KEYS holds every domain key");

/* The keys xl reads from a domain file (xl.cfg(5); the top-level keys
 * of Xen's tools/xl/xl_parse.c) that Lodge does not implement: a file
 * that sets one is an xl config, and the message can say so, naming the
 * key from this table. */
static const char *const xl_keys[] = {
	"acpi", "acpi_firmware", "acpi_laptop_slate", "acpi_s3", "acpi_s4", "altp2m", "altp2m_count",
	"altp2mhvm", "apic", "arm_sci", "bios", "bios_path_override", "boot", "bootloader_args",
	"bootloader_restrict", "bootloader_user", "builder", "channel", "cpuid", "cpus_soft", "device_model",
	"device_model_args", "device_model_override", "device_model_stubdomain_override",
	"device_model_stubdomain_seclabel", "device_model_user", "device_model_version", "device_tree",
	"display", "dm_restrict", "driver_domain", "dtdev", "e820_host", "extratime", "firmware",
	"firmware_override", "gfx_passthru", "gic_version", "hap", "hdtype", "hpet", "hvm_pirq",
	"init_seclabel", "iomem", "ioports", "irqs", "keymap", "latency", "llc_colors", "localtime",
	"max_event_channels", "max_grant_frames", "max_grant_version", "max_maptrack_frames",
	"mca_caps", "mmio_hole", "ms_vm_genid", "msr_relaxed", "nestedhvm", "nographic", "nomigrate",
	"nr_spis", "nx", "on_soft_reset", "on_watchdog", "oos", "opengl", "p9", "pae", "passthrough", "pci",
	"pci_msitranslate", "pci_permissive", "pci_power_mgmt", "pci_seize", "period", "pool", "pvcalls",
	"pvshim", "pvshim_cmdline", "pvshim_extra", "pvshim_path", "rdm", "rdm_mem_boundary", "rtc_timeoffset",
	"sdl", "seclabel", "serial", "shadow_memory", "slice", "smbios", "smbios_firmware", "soundhw", "spice",
	"spice_clipboard_sharing", "spice_image_compression", "spice_streaming_video", "spiceagent_mouse",
	"spicedisable_ticketing", "spicehost", "spicepasswd", "spiceport", "spicetls_port",
	"spiceusbredirection", "spicevdagent", "stdvga", "stubdomain_cmdline", "stubdomain_kernel",
	"stubdomain_memory", "stubdomain_ramdisk", "sve", "tee", "timer_mode", "trap_unmapped_accesses",
	"tsc_mode", "type", "usb", "usbctrl", "usbdev", "usbdevice", "usbversion", "uuid", "vdispl",
	"vendor_device", "vfb", "vga", "videoram", "vif2", "viridian", "virtio", "vkb", "vkb_device",
	"vmtrace_buf_kb", "vnc", "vncdisplay", "vnclisten", "vncpasswd", "vncunused", "vncviewer", "vnuma",
	"vpmu", "vpt_align", "vsnd", "vtpm", "vuart", "xauthority", "xen_platform_pci",
	"xen_platform_pci_bar_uc", "xend_suspend_evtchn_compat", "xenstore_feature_mask", "xenstore_quota",
};

const char *cfg_xl_key(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(xl_keys) / sizeof(xl_keys[0]); i++)
		if (strcmp(xl_keys[i], name) == 0)
			return xl_keys[i];
	return NULL;
}

const struct cfg_key *cfg_find_key(const struct cfg_key *keys, const char *name)
{
	for (; keys->name; keys++)
		if (strcmp(keys->name, name) == 0)
			return keys;
	return NULL;
}

/* xl writes 1 and 0; libconfuse knows only the words: cfg_value_parse's. */
static int parse_bool(cfg_t *cfg, cfg_opt_t *opt, const char *value, void *result)
{
	const struct cfg_key bool_key = { .type = KT_BOOL };
	struct cfg_value v;
	char why[16];

	if (cfg_value_parse(&bool_key, value, &v, why, sizeof(why))) {
		cfg_error(cfg, "'%s' is not true or false for option '%s'", value, opt->name);
		return -1;
	}
	*(cfg_bool_t *)result = v.n ? cfg_true : cfg_false;
	return 0;
}

unsigned cfg_build_opts(const struct cfg_key *keys, cfg_opt_t *opts)
{
	unsigned n;

	for (n = 0; n < MAX_KEYS && keys[n].name; n++) {
		const struct cfg_key *k = &keys[n];

		switch (k->type) {
		case KT_STR:
			opts[n] = (cfg_opt_t)CFG_STR(k->name, k->def, CFGF_NONE);
			break;
		case KT_INT:
			opts[n] = (cfg_opt_t)CFG_INT(k->name, k->idef, CFGF_NONE);
			break;
		case KT_BOOL:
			opts[n] = (cfg_opt_t)CFG_BOOL_CB(k->name, k->def && !strcmp(k->def, "true") ? cfg_true : cfg_false,
							  CFGF_NONE, parse_bool);
			break;
		case KT_LIST:
			opts[n] = (cfg_opt_t)CFG_STR_LIST(k->name, NULL, CFGF_NONE);
			break;
		}
	}
	opts[n] = (cfg_opt_t)CFG_END();
	return n;
}

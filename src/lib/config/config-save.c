/* Writing a domain config in the syntax it is read in (the create form's
 * file, lodge config), and the MAC a vif gets when its config names none. */
#include "cgroup.h"
#include "config-keys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cfg_put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void put_key(FILE *f, const char *key, const char *value)
{
	fprintf(f, "%s = ", key);
	cfg_put_string(f, value);
	fputc('\n', f);
}

static void write_domain(FILE *f, const struct domain_config *dc)
{
	char spec[CFG_PATH_MAX + 64];
	unsigned i;

	fprintf(f, "# Lodge domain %s (syntax: lodge.conf(5))\n", dc->name);
	put_key(f, "name", dc->name);
	fprintf(f, "memory = %u\n", dc->memory_mib);
	if (dc->maxmem_mib)
		fprintf(f, "maxmem = %u\n", dc->maxmem_mib);
	fprintf(f, "vcpus = %u\n", dc->vcpus);
	if (dc->maxvcpus)
		fprintf(f, "maxvcpus = %u\n", dc->maxvcpus);
	if (dc->bootloader)
		put_key(f, "bootloader", BOOTLOADER_LODGE);
	else
		put_key(f, "kernel", dc->kernel);
	if (dc->ramdisk[0])
		put_key(f, "ramdisk", dc->ramdisk);
	if (dc->cmdline[0])
		put_key(f, "cmdline", dc->cmdline);
	for (i = 0; i < dc->ndisks; i++) {
		const struct cfg_disk *d = &dc->disks[i];

		if (d->slot)             /* xl's keyed form: the only one with room for a slot */
			snprintf(spec, sizeof(spec), "vdev=%s,access=%s,slot=%u,target=%s%s", d->vdev,
				 d->readonly ? "r" : "w", d->slot, d->is_phy ? "phy:" : "", d->path);
		else
			snprintf(spec, sizeof(spec), "%s:%s,%s,%s", d->is_phy ? "phy" : "file", d->path, d->vdev,
				 d->readonly ? "r" : "w");
		fprintf(f, "%s", i == 0 ? "disk = [ " : ",\n         ");
		cfg_put_string(f, spec);
		fprintf(f, "%s", i + 1 == dc->ndisks ? " ]\n" : "");
	}
	for (i = 0; i < dc->nvifs; i++) {
		const struct cfg_vif *v = &dc->vifs[i];
		const uint8_t *m = v->mac;
		int n = 0;

		spec[0] = '\0';
		/* A network's vif as written (a resolved one, started, has its
		 * bridge too: the bridge stands, as the config of what runs). */
		if (v->bridge[0])
			n += snprintf(spec + n, sizeof(spec) - n, "bridge=%s", v->bridge);
		else if (v->network[0])
			n += snprintf(spec + n, sizeof(spec) - n, "network=%s", v->network);
		if (v->mac_set)
			n += snprintf(spec + n, sizeof(spec) - n, "%smac=%02x:%02x:%02x:%02x:%02x:%02x",
				      n ? "," : "", m[0], m[1], m[2], m[3], m[4], m[5]);
		if (v->vifname[0])
			n += snprintf(spec + n, sizeof(spec) - n, "%svifname=%s", n ? "," : "", v->vifname);
		if (v->slot)
			snprintf(spec + n, sizeof(spec) - n, "%sslot=%u", n ? "," : "", v->slot);
		fprintf(f, "%s", i == 0 ? "vif = [ " : ",\n        ");
		cfg_put_string(f, spec);
		fprintf(f, "%s", i + 1 == dc->nvifs ? " ]\n" : "");
	}
	put_key(f, "on_poweroff", domain_action_name(dc->on_poweroff));
	put_key(f, "on_reboot", domain_action_name(dc->on_reboot));
	put_key(f, "on_crash", domain_action_name(dc->on_crash));
	fprintf(f, "autostart = %s\n", dc->autostart ? "true" : "false");
	if (dc->ncpus == 1)
		put_key(f, "cpus", dc->cpus[0]);
	for (i = 0; dc->ncpus > 1 && i < dc->ncpus; i++) {
		fprintf(f, "%s", i == 0 ? "cpus = [ " : ", ");
		cfg_put_string(f, dc->cpus[i]);
		fprintf(f, "%s", i + 1 == dc->ncpus ? " ]\n" : "");
	}
	if (dc->cpu_weight != DOMAIN_CPU_WEIGHT_DEFAULT)
		fprintf(f, "cpu_weight = %u\n", dc->cpu_weight);
	if (dc->cap)
		fprintf(f, "cap = %u\n", dc->cap);
	if (dc->ksm)
		fprintf(f, "ksm = true\n");
	if (dc->hugepages)
		fprintf(f, "hugepages = true\n");
	if (dc->ha)
		fprintf(f, "ha = 1\n");
}

/* A regular file (or a new one) is replaced atomically: a reader never
 * sees half of it.  "/dev/stdout" (lodge config) is written to stdout
 * itself: opening it anew would truncate a redirected file.  Anything
 * else that is not a regular file, a symlink included, is written
 * through, as renaming over it would replace the link itself. */
int domain_config_save(const char *path, const struct domain_config *dc, char *err, size_t errlen)
{
	char tmp[CFG_PATH_MAX + 16];
	struct stat st;
	bool to_stdout = strcmp(path, "/dev/stdout") == 0 || strcmp(path, "-") == 0;
	bool direct = to_stdout || (lstat(path, &st) == 0 && !S_ISREG(st.st_mode));
	FILE *f;
	int rc = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	f = to_stdout ? stdout : fopen(direct ? path : tmp, "w");
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", direct ? path : tmp, strerror(errno));
		return rc;
	}
	write_domain(f, dc);
	if (fflush(f) != 0 || ferror(f))
		rc = -(errno ? errno : EIO);
	if (!to_stdout && fclose(f) != 0 && !rc)
		rc = -errno;
	if (!rc && !direct && rename(tmp, path) < 0)
		rc = -errno;
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		if (!direct)
			unlink(tmp);
	}
	return rc;
}

/* FNV-1a over the domain name, a 0 byte and the vif index, folded to the
 * 32 bits after the 02:4c prefix (locally administered, unicast; 0x4c is
 * 'L').  Two given vifs collide with probability 2^-32; among k vifs on
 * one host about k^2 / 2^33 (1e-4 at k = 1000).  The agent refuses a MAC
 * a running domain already uses, so a collision fails loudly. */
void cfg_default_mac(const char *domain, unsigned n, uint8_t mac[6])
{
	uint64_t h = 0xcbf29ce484222325ull;
	const unsigned char *p = (const unsigned char *)domain;
	uint32_t folded;
	unsigned i;

	for (; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	h = (h ^ 0) * 0x100000001b3ull;
	for (i = 0; i < 4; i++)
		h = (h ^ ((n >> (8 * i)) & 0xff)) * 0x100000001b3ull;
	folded = (uint32_t)(h ^ (h >> 32));
	mac[0] = 0x02;
	mac[1] = 0x4c;
	mac[2] = folded >> 24;
	mac[3] = folded >> 16;
	mac[4] = folded >> 8;
	mac[5] = folded;
}

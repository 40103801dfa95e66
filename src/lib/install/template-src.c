/* What a template is built from: the distributions Lodge knows, the
 * packages a guest needs, and the apt sources, taken from the host's own
 * (install.h).  One table each: a new distribution is a row. */
#include "install.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What every guest needs beyond apt's variant (Essential: yes and apt):
 * a kernel whose initramfs-tools' default (MODULES=most, right in a
 * chroot) puts virtio_pci, virtio_blk, virtio_net and ext4 in its
 * initrd; systemd as init; fsck for its root; ssh; cloud-init for the
 * seed; the network as cloud-init's Debian renderer writes it (ifupdown
 * and a DHCP client); sudo for cloud-init's default user. */
#define GUEST_PACKAGES "linux-image-cloud-" GUEST_ARCH ",initramfs-tools,zstd,systemd-sysv,udev,dbus," \
	"libpam-systemd,e2fsprogs,openssh-server,cloud-init,ifupdown,iproute2,netbase,ca-certificates," \
	"sudo,procps,iputils-ping,less"

#if defined(__x86_64__)
#define GUEST_ARCH "amd64"
#elif defined(__aarch64__)
#define GUEST_ARCH "arm64"
#else
#error "Lodge runs guests of amd64 and arm64 hosts"
#endif

static const struct dist_info dists[] = {
	{ "bullseye", "11", GUEST_PACKAGES ",isc-dhcp-client" },
	{ "bookworm", "12", GUEST_PACKAGES ",isc-dhcp-client" },
	{ "trixie", "13", GUEST_PACKAGES ",dhcpcd-base" },
};
#define NDISTS (sizeof(dists) / sizeof(dists[0]))

const struct dist_info *dist_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < NDISTS; i++)
		if (strcmp(dists[i].name, name) == 0)
			return &dists[i];
	return NULL;
}

const char *dist_known(void)
{
	static char words[256];
	size_t i, n = 0;

	for (i = 0; i < NDISTS && n < sizeof(words); i++)
		n += (size_t)snprintf(words + n, sizeof(words) - n, "%s%s", i ? ", " : "", dists[i].name);
	return words;
}

const char *host_arch(void)
{
	return GUEST_ARCH;
}

/* ---- the command line -------------------------------------------------------------- */

static const char *keep(struct template_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *keep(struct template_cmd *c, const char *fmt, ...)
{
	char *at = c->store + c->used;
	va_list ap;
	int n;

	if (c->used >= sizeof(c->store))
		return NULL;
	va_start(ap, fmt);
	n = vsnprintf(at, sizeof(c->store) - c->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(c->store) - c->used)
		return NULL;
	c->used += (size_t)n + 1;
	return at;
}

static int arg(struct template_cmd *c, const char *s)
{
	if (!s || c->argc + 1 >= TEMPLATE_ARGS_MAX)
		return -E2BIG;
	c->argv[c->argc++] = s;
	c->argv[c->argc] = NULL;
	return 0;
}

/* ---- the host's apt sources ---------------------------------------------------------- */

/* The host's release (VERSION_CODENAME of /etc/os-release) into out: 0, -ENOENT. */
static int host_codename(char *out, size_t len)
{
	FILE *f = fopen("/etc/os-release", "re");
	char line[256];
	int rc = -ENOENT;

	while (f && rc && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VERSION_CODENAME=", 17))
			continue;
		line[strcspn(line, "\r\n")] = '\0';
		snprintf(out, len, "%s", line + 17 + (line[17] == '"'));
		out[strcspn(out, "\"")] = '\0';
		rc = out[0] ? 0 : -ENOENT;
	}
	if (f)
		fclose(f);
	return rc;
}

struct sources {
	struct template_cmd *c;
	const char *host, *dist;       /* the host's release, and the template's */
	unsigned added;
	int rc;
};

/* One source, if its suite is of the host's release: the same for dist. */
static void add_source(struct sources *s, const char *options, const char *uri, const char *suite,
		       const char *components)
{
	size_t hl = strlen(s->host);
	const char *line;

	if (strncmp(suite, s->host, hl) || (suite[hl] && suite[hl] != '-' && suite[hl] != '/'))
		return;
	line = keep(s->c, "deb %s%s%s %s %s%s %s", options[0] ? "[" : "", options, options[0] ? "]" : "", uri,
		    s->dist, suite + hl, components[0] ? components : "main");
	if (!s->rc && (s->rc = arg(s->c, line)) == 0)
		s->added++;
}

/* A one-line sources.list: "deb [OPTIONS] URI SUITE COMPONENT...". */
static void read_one_line(struct sources *s, FILE *f)
{
	char line[2048], *p, *options, *uri, *suite, *save;

	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "#\r\n")] = '\0';
		p = line + strspn(line, " \t");
		if (strncmp(p, "deb", 3) || (p[3] != ' ' && p[3] != '\t'))
			continue;
		p += 3 + strspn(p + 3, " \t");
		options = (char *)"";
		if (*p == '[') {
			options = p + 1;
			if (!(p = strchr(p, ']')))
				continue;
			*p++ = '\0';
			options += strspn(options, " \t");
		}
		if (!(uri = strtok_r(p, " \t", &save)) || !(suite = strtok_r(NULL, " \t", &save)))
			continue;
		p = strtok_r(NULL, "", &save);
		add_source(s, options, uri, suite, p ? p + strspn(p, " \t") : "");
	}
}

/* A deb822 paragraph's fields, as the sources it names. */
struct stanza {
	char types[64], uris[1024], suites[512], components[256], signed_by[512];
	bool disabled, inline_key;
};

/* "deb" among a Types field's words. */
static bool has_deb(const char *types)
{
	char words[64], *w, *x;

	snprintf(words, sizeof(words), "%s", types);
	for (w = strtok_r(words, " \t", &x); w; w = strtok_r(NULL, " \t", &x))
		if (!strcmp(w, "deb"))
			return true;
	return false;
}

static void stanza_done(struct sources *s, struct stanza *st)
{
	char options[600] = "", uris[sizeof(st->uris)], suites[sizeof(st->suites)], *u, *x, *su, *sx;

	if (!st->disabled && has_deb(st->types)) {
		/* A key written inline cannot go on one line: apt falls back to
		 * its trusted keys, Debian's archive keyring among them. */
		if (st->signed_by[0] && !st->inline_key)
			snprintf(options, sizeof(options), "signed-by=%s", st->signed_by);
		snprintf(uris, sizeof(uris), "%s", st->uris);
		for (u = strtok_r(uris, " \t", &x); u; u = strtok_r(NULL, " \t", &x)) {
			snprintf(suites, sizeof(suites), "%s", st->suites);
			for (su = strtok_r(suites, " \t", &sx); su; su = strtok_r(NULL, " \t", &sx))
				add_source(s, options, u, su, st->components);
		}
	}
	memset(st, 0, sizeof(*st));
}

static void read_deb822(struct sources *s, FILE *f)
{
	static struct stanza st;
	char line[2048], *colon, *value;
	bool last_signed = false;

	memset(&st, 0, sizeof(st));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '#')
			continue;
		if (!line[strspn(line, " \t")]) {
			stanza_done(s, &st);
			last_signed = false;
			continue;
		}
		if (line[0] == ' ' || line[0] == '\t') {
			st.inline_key |= last_signed;
			continue;
		}
		if (!(colon = strchr(line, ':')))
			continue;
		*colon = '\0';
		value = colon + 1 + strspn(colon + 1, " \t");
		last_signed = !strcasecmp(line, "Signed-By");
		if (!strcasecmp(line, "Types"))
			snprintf(st.types, sizeof(st.types), "%s", value);
		else if (!strcasecmp(line, "URIs"))
			snprintf(st.uris, sizeof(st.uris), "%s", value);
		else if (!strcasecmp(line, "Suites"))
			snprintf(st.suites, sizeof(st.suites), "%s", value);
		else if (!strcasecmp(line, "Components"))
			snprintf(st.components, sizeof(st.components), "%s", value);
		else if (last_signed)
			snprintf(st.signed_by, sizeof(st.signed_by), "%s", value);
		else if (!strcasecmp(line, "Enabled"))
			st.disabled = !strcasecmp(value, "no") || !strcasecmp(value, "false");
	}
	stanza_done(s, &st);
}

/* /etc/apt/sources.list and sources.list.d/ (*.list, *.sources), in
 * apt's order. */
static void read_host_sources(struct sources *s)
{
	struct dirent **names;
	char path[600];
	FILE *f;
	int n, i;

	if ((f = fopen("/etc/apt/sources.list", "re"))) {
		read_one_line(s, f);
		fclose(f);
	}
	n = scandir("/etc/apt/sources.list.d", &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		size_t len = strlen(name);
		bool list = len > 5 && !strcmp(name + len - 5, ".list");
		bool deb822 = len > 8 && !strcmp(name + len - 8, ".sources");

		snprintf(path, sizeof(path), "/etc/apt/sources.list.d/%s", name);
		if ((list || deb822) && (f = fopen(path, "re"))) {
			if (list)
				read_one_line(s, f);
			else
				read_deb822(s, f);
			fclose(f);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

/* The template's sources: lodge.conf's mirror if it names one (its dist
 * and dist-updates; security updates are never on a mirror of the
 * archive, so from Debian's own); else the host's for its own release,
 * made dist's; Debian's own mirrors where the host has none (not Debian,
 * or another release's names only). */
static int add_sources(struct template_cmd *c, const char *dist, const char *mirror)
{
	char host[64];
	struct sources s = { .c = c, .host = host, .dist = dist };

	if (mirror && mirror[0]) {
		if (arg(c, keep(c, "deb %s %s main", mirror, dist)) ||
		    arg(c, keep(c, "deb %s %s-updates main", mirror, dist)) ||
		    arg(c, keep(c, "deb http://deb.debian.org/debian-security %s-security main", dist)))
			return -E2BIG;
		return 0;
	}
	if (host_codename(host, sizeof(host)) == 0)
		read_host_sources(&s);
	if (s.rc)
		return s.rc;
	if (s.added)
		return 0;
	if (arg(c, keep(c, "deb http://deb.debian.org/debian %s %s-updates main", dist, dist)) ||
	    arg(c, keep(c, "deb http://deb.debian.org/debian-security %s-security main", dist)))
		return -E2BIG;
	return 0;
}

int template_cmd(struct template_cmd *c, const struct dist_info *dist, const char *target, const char *cache,
		 const char *mirror, char *why, size_t whylen)
{
	int rc = 0;

	memset(c, 0, sizeof(*c));
	/* sync-in and sync-out read their paths as words. */
	if (strpbrk(cache, " \t\n'\"\\")) {
		snprintf(why, whylen, "the package cache's path '%s' has a space or a quote (mmdebstrap's sync-in "
			 "takes none)", cache);
		return -EINVAL;
	}
	rc |= arg(c, "mmdebstrap");
	rc |= arg(c, "--mode=root");
	rc |= arg(c, "--format=directory");
	rc |= arg(c, "--variant=apt");
	rc |= arg(c, keep(c, "--include=%s", dist->packages));
	/* The template is made a filesystem image after: dpkg's fsyncs in
	 * the directory would buy nothing but time (the setting is removed
	 * from the template after the build). */
	rc |= arg(c, "--dpkgopt=force-unsafe-io");
	rc |= arg(c, "--aptopt=Acquire::Retries \"3\"");
	/* The downloaded packages kept (mmdebstrap(1), its cache recipe):
	 * the essential ones too, copied in before apt runs and out after. */
	rc |= arg(c, "--skip=essential/unlink");
	rc |= arg(c, "--setup-hook=mkdir -p \"$1\"/var/cache/apt/archives/");
	rc |= arg(c, keep(c, "--setup-hook=sync-in %s /var/cache/apt/archives/", cache));
	rc |= arg(c, keep(c, "--customize-hook=sync-out /var/cache/apt/archives %s", cache));
	/* One initramfs, made at the end: the kernel's postinst makes one
	 * and initramfs-tools' trigger remakes it when later packages (udev,
	 * zstd, e2fsprogs) add hooks, each run seconds of copying modules
	 * and compressing.  update-initramfs is diverted to a no-op while
	 * the packages go in (what live-build does), then put back and run
	 * once with every hook in place, at zstd level 3 (initramfs.conf's
	 * own suggestion; its default 9 spends 2.3 s more CPU for a 11%
	 * smaller initrd).  A guest's own apt runs it as usual. */
	rc |= arg(c, "--essential-hook=chroot \"$1\" dpkg-divert --quiet --local --rename --add "
		  "/usr/sbin/update-initramfs && printf '#!/bin/sh\\nexit 0\\n' >\"$1/usr/sbin/update-initramfs\" && "
		  "chmod 755 \"$1/usr/sbin/update-initramfs\"");
	rc |= arg(c, "--customize-hook=rm \"$1/usr/sbin/update-initramfs\" && chroot \"$1\" dpkg-divert --quiet "
		  "--local --rename --remove /usr/sbin/update-initramfs && chroot \"$1\" env COMPRESSLEVEL=3 update-initramfs -c -k all");
	rc |= arg(c, dist->name);
	rc |= arg(c, target);
	if (rc || (rc = add_sources(c, dist->name, mirror))) {
		snprintf(why, whylen, "the mmdebstrap command line is too long");
		return -E2BIG;
	}
	return 0;
}

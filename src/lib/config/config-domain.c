/* A domain's config, key by key: the rules of two keys or more, run once
 * both for a file (config.c, after libconfuse) and for values a person
 * types (a create form, one key's check), which reach the same per-key
 * check (cfg_check_value, config-keys.c) with no text and no libconfuse
 * in between. */
#include "config-keys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool key_set(const struct load_ctx *ctx, const char *key)
{
	return ctx->set[cfg_find_key(ctx->keys, key) - ctx->keys];
}

int cfg_domain_finish(struct load_ctx *ctx)
{
	struct domain_draft *d = ctx->draft;
	struct domain_config *dc = &d->dc;
	bool root = key_set(ctx, "root"), extra = key_set(ctx, "extra");
	unsigned most;
	int len, rc;

	if ((rc = cfg_check_unset(ctx, NULL)))
		return rc;
	if (dc->maxmem_mib && dc->maxmem_mib < dc->memory_mib) {
		cfg_fail(ctx, cfg_key_line(ctx, "maxmem", 0), "maxmem",
			 "%u MiB is below memory (%u MiB)", dc->maxmem_mib, dc->memory_mib);
		return -EINVAL;
	}
	if (dc->maxvcpus && dc->maxvcpus < dc->vcpus) {
		cfg_fail(ctx, cfg_key_line(ctx, "maxvcpus", 0), "maxvcpus",
			 "%u is below vcpus (%u)", dc->maxvcpus, dc->vcpus);
		return -EINVAL;
	}
	/* The kernel comes from the disk, or from the host: not both. */
	if (dc->bootloader && (dc->kernel[0] || dc->ramdisk[0])) {
		const char *key = dc->kernel[0] ? "kernel" : "ramdisk";

		cfg_fail(ctx, cfg_key_line(ctx, key, 0), key, "not with bootloader = \"%s\", which reads the kernel "
			 "and initrd from the guest's disk", BOOTLOADER_LODGE);
		return -EINVAL;
	}
	/* As xl: cmdline wins; else "root=ROOT EXTRA". */
	if (!key_set(ctx, "cmdline")) {
		len = snprintf(dc->cmdline, sizeof(dc->cmdline), "%s%s%s%s", root ? "root=" : "", root ? d->root : "",
			       root && extra ? " " : "", extra ? d->extra : "");
		if (len >= (int)sizeof(dc->cmdline)) {
			const char *key = extra ? "extra" : "root";

			cfg_fail(ctx, cfg_key_line(ctx, key, 0), key, "the command line is longer than %zu bytes",
				 sizeof(dc->cmdline) - 1);
			return -EINVAL;
		}
	}
	if (dc->bootloader && !dc->ndisks) {
		cfg_fail(ctx, cfg_key_line(ctx, "bootloader", 0), "bootloader",
			 "\"%s\" boots from the first disk, and there is none (disk =)", BOOTLOADER_LODGE);
		return -EINVAL;
	}
	/* One list per vCPU there may be: up to maxvcpus. */
	most = dc->maxvcpus > dc->vcpus ? dc->maxvcpus : dc->vcpus;
	if (dc->ncpus > 1 && dc->ncpus > most) {
		cfg_fail(ctx, cfg_value_line(ctx, "cpus", most, 0), "cpus",
			 "%u CPU lists for %u vCPU%s (one for all, or one per vCPU)", dc->ncpus, most,
			 most == 1 ? "" : "s");
		return -EINVAL;
	}
	/* As xl: a cap may exceed 100 with several vCPUs, but not what
	 * they could use together. */
	if (dc->cap > DOMAIN_CAP_MAX(dc->vcpus)) {
		cfg_fail(ctx, cfg_key_line(ctx, "cap", 0), "cap", "%u%% is more than %u vCPU%s can use (0 to %u)",
			 dc->cap, dc->vcpus, dc->vcpus == 1 ? "" : "s", DOMAIN_CAP_MAX(dc->vcpus));
		return -EINVAL;
	}
	return 0;
}

/* ---- a domain built from typed values ------------------------------------------ */

struct domain_build {
	struct load_ctx ctx;
	struct domain_draft draft;
	char err[2048];
};

struct domain_build *domain_build_new(const char *label, const struct host_config *hc, bool check_host)
{
	struct domain_build *b = calloc(1, sizeof(*b));

	/* Relative paths are from the current directory (label has no
	 * directory), as a person typed them. */
	if (!b || cfg_ctx_init(&b->ctx, label, b->err, sizeof(b->err))) {
		free(b);
		return NULL;
	}
	b->ctx.keys = domain_keys;
	b->ctx.hc = hc;
	b->ctx.check_host = check_host;
	b->ctx.draft = &b->draft;
	snprintf(b->draft.dc.file, sizeof(b->draft.dc.file), "%s", label);
	return b;
}

enum vif_part domain_build_vif_part(const struct domain_build *b)
{
	return b->draft.vif_part;
}

void domain_build_free(struct domain_build *b)
{
	free(b);
}

/* The message of the failure the context holds: what a file's says after
 * "FILE:LINE: KEY: ", escaped as a file's is. */
static int build_fail(struct domain_build *b, const char **key, char *why, size_t whylen, int rc)
{
	if (key)
		*key = b->ctx.err_key;
	snprintf(why, whylen, "%s", b->ctx.err_what ? b->ctx.err_what : b->err);
	return rc;
}

int domain_build_set(struct domain_build *b, const char *key, const char *value, bool check_host, char *why,
		     size_t whylen)
{
	const struct cfg_key *k = cfg_find_key(domain_keys, key);
	bool was = b->ctx.check_host;
	struct cfg_value v;
	char what[1024];
	unsigned *n;
	int rc;

	if (!k) {
		snprintf(why, whylen, "unknown key (see lodge.conf(5))");
		return -ENOENT;
	}
	n = &b->ctx.nvalues_of[k - domain_keys];
	b->ctx.err_line = 0;
	b->ctx.err_what = NULL;
	if (b->ctx.set[k - domain_keys] && k->type != KT_LIST) {
		cfg_fail(&b->ctx, 1, key, "set twice (first on line 1)");
		return build_fail(b, NULL, why, whylen, -EINVAL);
	}
	what[0] = '\0';
	b->ctx.check_host = check_host;
	if (!(rc = cfg_value_parse(k, value, &v, what, sizeof(what)))) {
		v.index = *n;
		rc = cfg_check_value(&b->ctx, k, &v, what, sizeof(what));
	}
	b->ctx.check_host = was;
	if (rc) {
		cfg_fail(&b->ctx, 1, key, "%s", what);
		return build_fail(b, NULL, why, whylen, rc);
	}
	b->ctx.set[k - domain_keys] = true;
	++*n;
	return 0;
}

int domain_build_default(struct domain_build *b, const char *key, char *why, size_t whylen)
{
	const struct cfg_key *k = cfg_find_key(domain_keys, key);
	int rc;

	if (!k) {
		snprintf(why, whylen, "unknown key (see lodge.conf(5))");
		return -ENOENT;
	}
	b->ctx.err_line = 0;
	b->ctx.err_what = NULL;
	if ((rc = cfg_check_unset(&b->ctx, key)))
		return build_fail(b, NULL, why, whylen, rc);
	/* Its default stored: not again at the finish. */
	if (!b->ctx.set[k - domain_keys] && k->type != KT_LIST && (k->type == KT_INT || k->def))
		b->ctx.set[k - domain_keys] = true;
	return 0;
}

int domain_build_finish(struct domain_build *b, struct domain_config *dc, const char **key, char *why,
			size_t whylen)
{
	int rc;

	b->ctx.err_line = 0;
	b->ctx.err_what = NULL;
	if ((rc = cfg_domain_finish(&b->ctx)))
		return build_fail(b, key, why, whylen, rc);
	*dc = b->draft.dc;
	return 0;
}

int domain_key_check(const char *key, const char *value, const struct host_config *hc, bool check_host,
		     char *why, size_t whylen)
{
	struct domain_build *b;
	int rc;

	if (!cfg_find_key(domain_keys, key)) {
		snprintf(why, whylen, "unknown key (see lodge.conf(5))");
		return -ENOENT;
	}
	if (!(b = domain_build_new("value", hc, check_host))) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	rc = value[0] ? domain_build_set(b, key, value, check_host, why, whylen)
		      : domain_build_default(b, key, why, whylen);
	domain_build_free(b);
	return rc;
}

/* POST /api/install: a Debian guest installed by liblodge's lodge_install
 * (as lodge install and the dashboard's install form), as a job: minutes
 * for a first install (the template is built), seconds after; its phase
 * and percent in the jobs list as it goes.  GET /api/install-form gives
 * the fields, each with its label and hint, and the defaults.
 *
 * The server is root, its users are not: the disk is the new file
 * image_dir/NAME.img (image_dir under storage_dirs) or a block device
 * matching storage_devices; the network a Lodge network, the default
 * bridge or one in bridges.  No host file is read for the guest (lodge
 * install's --ssh-key and --password-file are the CLI's only): a web
 * user names no path of the host's but a lent disk. */
#include "web.h"
#include "config-form.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct install_field {
	const char *key, *label, *hint;
};

/* The form, as the dashboard's (src/tui/create.c), in its order. */
static const struct install_field install_fields[] = {
	{ "name", "Name", "the new domain's name" },
	{ "dist", "Distribution", "the Debian release (its template is built first if there is none: minutes)" },
	{ "size", "Disk size", "the new disk file's size: MiB, or with a unit (2G); sparse, in the image directory" },
	{ "disk", "Partition", "empty: a new disk file; else a block device lodge.conf lends (storage_devices), "
			       "written whole" },
	{ "memory_mib", "Memory (MiB)", "guest RAM in MiB" },
	{ "vcpus", "vCPUs", "virtual CPUs" },
	{ "network", "Network", "net:NETWORK a Lodge network, or a bridge; empty: lodge install's default" },
	{ "packages", "Packages", "more Debian packages, comma-separated (installed at first boot)" },
};
#define INSTALL_NFIELDS (sizeof(install_fields) / sizeof(install_fields[0]))

void web_get_install_form(const struct web_request *req, const char *word, struct web_response *resp)
{
	json_t *fields = json_array();
	size_t i;

	for (i = 0; i < INSTALL_NFIELDS; i++)
		json_array_append_new(fields, json_pack("{s:s,s:s,s:s}", "key", install_fields[i].key, "label",
							install_fields[i].label, "hint", install_fields[i].hint));
	web_reply_json(resp, 200, json_pack("{s:o,s:{s:s,s:s,s:i,s:i}}", "fields", fields, "defaults", "dist",
					    LODGE_DIST_DEFAULT, "size", "2G", "memory_mib", LODGE_INSTALL_MEMORY_DEFAULT,
					    "vcpus", 1));
}

static void field_error(struct web_response *resp, unsigned status, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void field_error(struct web_response *resp, unsigned status, const char *field, const char *fmt, ...)
{
	char why[LODGE_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	web_reply_json(resp, status, json_pack("{s:s,s:s}", "error", why, "field", field));
}

/* A number of the form's (memory_mib, vcpus) checked as a domain file's
 * key: 0 with *v, else the refusal given. */
static int form_number(enum form_field f, const char *key, const char *text,
		       unsigned *v, struct web_response *resp)
{
	static struct domain_form form;
	char why[512], *end;
	unsigned long n;

	if (!text[0])
		return 0;
	memset(&form, 0, sizeof(form));
	snprintf(form.value[f], FORM_VALUE_MAX, "%s", text);
	if (domain_form_check(&form, f, &web_lodge()->hc, why, sizeof(why))) {
		field_error(resp, 400, key, "%s", why);
		return -EINVAL;
	}
	errno = 0;
	n = strtoul(text, &end, 10);
	if (errno || *end || n > 1u << 30) {
		field_error(resp, 400, key, "a whole number");
		return -EINVAL;
	}
	*v = (unsigned)n;
	return 0;
}

/* The name as a domain file's name = is checked: a plain word, never a
 * path (it names the disk file and the config). */
static int form_name_check(const char *name, struct web_response *resp)
{
	static struct domain_form form;
	char why[512];

	memset(&form, 0, sizeof(form));
	snprintf(form.value[FORM_NAME], FORM_VALUE_MAX, "%s", name);
	if (domain_form_check(&form, FORM_NAME, &web_lodge()->hc, why, sizeof(why))) {
		field_error(resp, 400, "name", "%s", why);
		return -EINVAL;
	}
	return 0;
}

/* The body's fields, each a string or a whole number, into in. */
static int body_fields(json_t *j, struct web_install *in, struct web_response *resp)
{
	const char *key;
	json_t *v;
	size_t f;

	memset(in, 0, sizeof(*in));
	json_object_foreach(j, key, v) {
		char *to, text[sizeof(in->disk)];
		size_t cap;

		for (f = 0; f < INSTALL_NFIELDS && strcmp(install_fields[f].key, key); f++)
			;
		if (f == INSTALL_NFIELDS) {
			field_error(resp, 400, key, "no such field (the fields: GET /api/install-form)");
			return -EINVAL;
		}
		if (json_is_integer(v))
			snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
		else if (json_is_string(v) && strlen(json_string_value(v)) < sizeof(text))
			snprintf(text, sizeof(text), "%s", json_string_value(v));
		else {
			field_error(resp, 400, key, "a string of at most %zu bytes, or a whole number", sizeof(text) - 1);
			return -EINVAL;
		}
		to = f == 0 ? in->name : f == 1 ? in->dist : f == 2 ? in->size : f == 3 ? in->disk : f == 4 ? in->memory
		   : f == 5 ? in->vcpus : f == 6 ? in->network : in->packages;
		cap = f == 3 ? sizeof(in->disk) : f == 7 ? sizeof(in->packages) : sizeof(in->name);
		if (strlen(text) >= cap) {
			field_error(resp, 400, key, "at most %zu bytes", cap - 1);
			return -EINVAL;
		}
		snprintf(to, cap, "%s", text);
	}
	return 0;
}

/* The library's options from the checked fields (in the server and in
 * the job's child alike). */
void web_install_opts(const struct web_install *in, struct lodge_install_opts *o)
{
	bool net = strncmp(in->network, FORM_NETWORK_PREFIX, strlen(FORM_NETWORK_PREFIX)) == 0;

	memset(o, 0, sizeof(*o));
	o->name = in->name;
	o->dist = in->dist[0] ? in->dist : NULL;
	o->size = in->bytes;
	o->disk = in->disk[0] ? in->disk : NULL;
	o->memory_mib = in->memory_mib;
	o->vcpus = in->vcpus_n;
	o->bridge = !net && in->network[0] ? in->network : NULL;
	o->network = net ? in->network + strlen(FORM_NETWORK_PREFIX) : NULL;
	o->packages = in->packages[0] ? in->packages : NULL;
}

void web_install(const struct web_request *req, const char *word, struct web_response *resp)
{
	static struct web_install in;
	static struct lodge_install_result res;
	const struct lodge *lg = web_lodge();
	struct lodge_install_opts o;
	struct lodge_template t;
	struct lodge_err err;
	unsigned long mib = 0;
	char why[LODGE_ERR_MAX], real[4096];
	const char *bridge;
	json_t *j;

	(void)word;
	int rc;

	if (!(j = web_body_json(req, resp)))
		return;
	rc = body_fields(j, &in, resp);
	json_decref(j);
	if (rc)
		return;
	if (!in.name[0]) {
		field_error(resp, 400, "name", "a domain needs a name");
		return;
	}
	if (form_name_check(in.name, resp))
		return;
	if (in.dist[0] && lodge_template_get(lg, in.dist, &t, &err) == -EINVAL) {
		field_error(resp, 400, "dist", "%s", err.msg);
		return;
	}
	if (in.size[0] && (lodge_parse_mib(in.size, &mib) || !mib)) {
		field_error(resp, 400, "size", "'%s' is not a size: MiB, or a number with a unit (2G)", in.size);
		return;
	}
	if (form_number(FORM_MEMORY, "memory_mib", in.memory, &in.memory_mib, resp) ||
	    form_number(FORM_VCPUS, "vcpus", in.vcpus, &in.vcpus_n, resp))
		return;
	/* What this host lends a web user, as the create form's. */
	if (in.disk[0]) {
		if (in.size[0]) {
			field_error(resp, 400, "disk", "a partition is written whole: no size with it");
			return;
		}
		if ((rc = lodge_disk_open(lg, in.disk, false, true, real, &err)) < 0) {
			field_error(resp, rc == -EACCES ? 403 : 400, "disk", "%s", err.msg);
			return;
		}
		close(rc);
	} else if (access(lg->hc.image_dir, F_OK) == 0 &&
		   (rc = incoming_admit_new_file(lg->hc.image_dir, &lg->hc, why, sizeof(why)))) {
		field_error(resp, 403, "disk", "%s", why);
		return;
	}
	bridge = strncmp(in.network, FORM_NETWORK_PREFIX, strlen(FORM_NETWORK_PREFIX)) == 0 ? NULL : in.network;
	if (bridge && bridge[0] && strcmp(bridge, lg->hc.default_bridge)) {
		unsigned i;

		for (i = 0; i < lg->hc.bridges.n && strcmp(lg->hc.bridges.item[i], bridge); i++)
			;
		if (i == lg->hc.bridges.n) {
			field_error(resp, 403, "network", "bridge %s is not this host's to give: it is not default_bridge "
				    "(%s) nor in bridges in lodge.conf", bridge, lg->hc.default_bridge);
			return;
		}
	}
	in.bytes = (uint64_t)mib << 20;
	web_install_opts(&in, &o);
	/* Every check lodge_install makes, nothing written: a refusal is the
	 * answer, before any job runs. */
	o.dry_run = true;
	web_as_user(req);
	if ((rc = lodge_install(lg, &o, &res, &err))) {
		const char *field = rc == -EEXIST ? "name" : NULL;

		if (field)
			field_error(resp, 409, field, "%s", err.msg);
		else
			web_reply_lodge_err(resp, rc, &err);
		return;
	}
	web_install_job(req, &in, resp);
}

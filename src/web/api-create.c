/* POST /api/domains: a domain made from the create form's fields by the
 * library (lodge_form_create: each field checked by the code that reads a
 * domain file, as the dashboard's form is; a new:SIZE disk and new:NAME
 * bridge made, and removed again if the domain does not start), its
 * config kept as DOMAINS_DIR/NAME.cfg (lodge create NAME starts it
 * again).  GET /api/create-form gives the fields, their hints from the
 * schema, and the default guest. */
#include "web.h"
#include "config-form.h"
#include "default-guest.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What a person reads beside each field: the dashboard's labels
 * (src/tui/create.c), units said. */
static const char *const field_label[FORM_FIELDS] = {
	[FORM_NAME] = "Name", [FORM_MEMORY] = "Memory (MiB)", [FORM_VCPUS] = "vCPUs", [FORM_KERNEL] = "Kernel",
	[FORM_RAMDISK] = "Ramdisk", [FORM_CMDLINE] = "Command line", [FORM_DISK] = "Disk", [FORM_BRIDGE] = "Network",
	[FORM_MAC] = "MAC address",
};

/* The JSON keys, one per form field. */
static const char *const field_json[FORM_FIELDS] = {
	[FORM_NAME] = "name", [FORM_MEMORY] = "memory_mib", [FORM_VCPUS] = "vcpus", [FORM_KERNEL] = "kernel",
	[FORM_RAMDISK] = "ramdisk", [FORM_CMDLINE] = "cmdline", [FORM_DISK] = "disk", [FORM_BRIDGE] = "bridge",
	[FORM_MAC] = "mac",
};

/* The guest the form offers is the server's own (default_guest_here: the
 * Mini-OS or Debian kernel shipped beside it), so the server may not
 * refuse it: its directory is lent as if under kernel_dirs.  Those are
 * the package's own files, readable by anyone; a web user gains no file
 * of the host's by it. */
static void lend_dir_of(struct host_config *hc, const char *file)
{
	char dir[HOST_LIST_ITEM_MAX];
	char *slash;
	unsigned i;

	if (!file[0] || access(file, R_OK) || snprintf(dir, sizeof(dir), "%s", file) >= (int)sizeof(dir) ||
	    !(slash = strrchr(dir, '/')) || slash == dir)
		return;
	*slash = '\0';
	for (i = 0; i < hc->kernel_dirs.n; i++)
		if (strcmp(hc->kernel_dirs.item[i], dir) == 0)
			return;
	if (hc->kernel_dirs.n < HOST_LIST_MAX)
		snprintf(hc->kernel_dirs.item[hc->kernel_dirs.n++], HOST_LIST_ITEM_MAX, "%s", dir);
}

void web_lend_default_guest(struct host_config *hc)
{
	struct default_guest g;

	default_guest_here(&g);
	lend_dir_of(hc, g.kernel);
	lend_dir_of(hc, g.ramdisk);
}

void web_get_create_form(const struct web_request *req, const char *word, struct web_response *resp)
{
	struct default_guest g;
	const char *pvm;
	json_t *fields = json_array(), *defaults;
	char hint[256];
	unsigned f;

	default_guest_here(&g);
	for (f = 0; f < FORM_FIELDS; f++) {
		domain_form_hint(f, hint, sizeof(hint));
		if (f == FORM_DISK)
			snprintf(hint + strlen(hint), sizeof(hint) - strlen(hint), "; new:SIZE (MiB) makes a sparse image file");
		else if (f == FORM_BRIDGE)
			snprintf(hint + strlen(hint), sizeof(hint) - strlen(hint), "; net:NETWORK a Lodge network, new:NAME "
				 "makes the bridge");
		json_array_append_new(fields, json_pack("{s:s,s:s,s:s}", "key", field_json[f], "label", field_label[f],
							"hint", hint));
	}
	defaults = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s}", "kernel", g.kernel, "ramdisk", g.ramdisk, "cmdline", g.cmdline,
			     "memory_mib", (int)g.memory_mib, "guest", g.debian ? "debian" : "minios", "why", g.why);
	/* The choices the dashboard's form has beside the schema's. */
	json_array_append_new(fields, json_pack("{s:s,s:s,s:s}", "key", "disk_format", "label", "New disk format", "hint",
						"a new:SIZE disk's content: blank or ext4 (mkfs.ext4)"));
	/* On a PVM host, what a Linux kernel will do there (the form shows it
	 * before anything starts); "" elsewhere. */
	pvm = pvm_linux_note_here(NULL, true);
	web_reply_json(resp, 200, json_pack("{s:o,s:o,s:s,s:i,s:s}", "fields", fields, "defaults", defaults, "bridge",
					    web_lodge()->hc.default_bridge, "new_disk_max_mib", DOMAIN_NEW_DISK_MAX_MIB,
					    "linux_note", pvm ? pvm : ""));
}

/* The body's fields into the form: numbers may come as numbers or text. */
static int body_form(json_t *j, struct domain_form *form, char *why, size_t len, const char **bad)
{
	const char *key;
	json_t *v;
	unsigned f;

	memset(form, 0, sizeof(*form));
	json_object_foreach(j, key, v) {
		for (f = 0; f < FORM_FIELDS && strcmp(field_json[f], key); f++)
			;
		*bad = key;
		if (f == FORM_FIELDS) {
			snprintf(why, len, "no such field (the fields: GET /api/create-form)");
			return -EINVAL;
		}
		if (json_is_string(v) && strlen(json_string_value(v)) < FORM_VALUE_MAX)
			snprintf(form->value[f], FORM_VALUE_MAX, "%s", json_string_value(v));
		else if (json_is_integer(v))
			snprintf(form->value[f], FORM_VALUE_MAX, "%lld", (long long)json_integer_value(v));
		else {
			snprintf(why, len, "a string of at most %d bytes, or a whole number", FORM_VALUE_MAX - 1);
			return -EINVAL;
		}
	}
	return 0;
}

static void field_error(struct web_response *resp, unsigned status, const char *field, const char *why)
{
	web_reply_json(resp, status, json_pack("{s:s,s:s}", "error", why, "field", field));
}

/* The library's refusal: its status, and the field it is about if any. */
static void form_error(struct web_response *resp, int rc, const struct lodge_form_result *res,
		       const struct lodge_err *err)
{
	unsigned status = rc == -EINVAL ? 400 : rc == -EACCES ? 403 : rc == -EEXIST ? 409 : 500;

	if (res->field >= 0 && res->field < FORM_FIELDS)
		field_error(resp, status, field_json[res->field], err->msg);
	else
		web_error(resp, status, "%s", err->msg);
}

/* POST /api/domains: checked whole at once (nothing made); then made by
 * the library.  A new disk (mkfs.ext4 takes seconds) is made as a job,
 * in a child process (jobs.c): the server answers on meanwhile. */
void web_create(const struct web_request *req, const char *word, struct web_response *resp)
{
	static struct domain_form form;
	struct lodge_form_opts o = { .lent_only = true };
	struct lodge_form_result res;
	struct lodge_err err;
	const char *bad = "";
	char why[1024];
	json_t *j, *v;
	int rc;

	if (!(j = web_body_json(req, resp)))
		return;
	/* disk_format goes with a new:SIZE disk; the rest are the form's. */
	if ((v = json_object_get(j, "disk_format"))) {
		const char *format = json_is_string(v) ? json_string_value(v) : "";

		if (strcmp(format, "blank") && strcmp(format, "ext4") && strcmp(format, "")) {
			field_error(resp, 400, "disk_format", "blank or ext4");
			json_decref(j);
			return;
		}
		o.ext4 = strcmp(format, "ext4") == 0;
		json_object_del(j, "disk_format");
	}
	rc = body_form(j, &form, why, sizeof(why), &bad);
	json_decref(j);
	if (rc) {
		field_error(resp, 400, bad, why);
		return;
	}
	web_as_user(req);
	/* A new disk is made in a job (mkfs takes seconds): its refusals
	 * first, here; lodge_form_create checks the form itself. */
	if (lodge_form_new_disk(&form)) {
		if ((rc = lodge_form_check(web_lodge(), &form, &o, &res, &err)))
			form_error(resp, rc, &res, &err);
		else
			web_create_job(req, &form, &o, resp);
		return;
	}
	if ((rc = lodge_form_create(web_lodge(), &form, &o, &res, &err))) {
		form_error(resp, rc, &res, &err);
		return;
	}
	web_reply_json(resp, 201, json_pack("{s:s,s:s,s:s}", "name", form.value[FORM_NAME], "config", res.config,
					    "disk", res.disk));
}

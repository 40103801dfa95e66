/* POST /api/domains: a domain made from the create form's fields, each
 * checked by the code that reads a domain file (config-form.h) as the
 * dashboard's form checks it, the whole then read as that file; its
 * config kept as DOMAINS_DIR/NAME.cfg (lodge create NAME starts it again)
 * and the domain started.  GET /api/create-form gives the fields, their
 * hints from the schema, and the default guest. */
#include "web.h"
#include "config-form.h"
#include "default-guest.h"
#include "install.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The JSON keys, one per form field. */
static const char *const field_json[FORM_FIELDS] = {
	[FORM_NAME] = "name", [FORM_MEMORY] = "memory_mib", [FORM_VCPUS] = "vcpus", [FORM_KERNEL] = "kernel",
	[FORM_RAMDISK] = "ramdisk", [FORM_CMDLINE] = "cmdline", [FORM_DISK] = "disk", [FORM_BRIDGE] = "bridge",
	[FORM_MAC] = "mac",
};

void web_get_create_form(const struct web_request *req, const char *word, struct web_response *resp)
{
	struct default_guest g;
	json_t *fields = json_array(), *defaults;
	char hint[256];
	unsigned f;

	default_guest_here(&g);
	for (f = 0; f < FORM_FIELDS; f++) {
		domain_form_hint(f, hint, sizeof(hint));
		json_array_append_new(fields, json_pack("{s:s,s:s}", "key", field_json[f], "hint", hint));
	}
	defaults = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s}", "kernel", g.kernel, "ramdisk", g.ramdisk, "cmdline", g.cmdline,
			     "memory_mib", (int)g.memory_mib, "guest", g.debian ? "debian" : "minios", "why", g.why);
	web_reply_json(resp, 200, json_pack("{s:o,s:o,s:s}", "fields", fields, "defaults", defaults, "bridge",
					    web_lodge()->hc.default_bridge));
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

void web_create(const struct web_request *req, const char *word, struct web_response *resp)
{
	static struct domain_form form;
	static struct domain_config dc;
	const struct lodge *lg = web_lodge();
	char why[1024], path[CFG_PATH_MAX + FORM_VALUE_MAX + 8];
	const char *bad = "";
	struct lodge_status st;
	struct lodge_err err;
	json_t *j;
	unsigned f;
	int rc;

	if (!(j = web_body_json(req, resp)))
		return;
	rc = body_form(j, &form, why, sizeof(why), &bad);
	if (rc) {
		field_error(resp, 400, bad, why);
		json_decref(j);
		return;
	}
	json_decref(j);
	for (f = 0; f < FORM_FIELDS; f++)
		if (domain_form_check(&form, f, &lg->hc, why, sizeof(why))) {
			field_error(resp, 400, field_json[f], why);
			return;
		}
	if (!form.value[FORM_NAME][0]) {
		field_error(resp, 400, "name", "a domain needs a name");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s.cfg", lg->hc.domains_dir, form.value[FORM_NAME]);
	if (lodge_status(lg, form.value[FORM_NAME], &st, &err) == 0 || access(path, F_OK) == 0) {
		field_error(resp, 409, "name", "taken: a domain of that name runs, or has a config");
		return;
	}
	if (domain_form_load(&form, &lg->hc, &dc, why, sizeof(why))) {
		web_error(resp, 400, "%s", why);
		return;
	}
	if ((rc = make_dirs(lg->hc.domains_dir))) {
		web_error(resp, 500, "cannot make the domains directory %s: %s", lg->hc.domains_dir, strerror(-rc));
		return;
	}
	if (domain_config_save(path, &dc, why, sizeof(why))) {
		web_error(resp, 500, "%s", why);
		return;
	}
	web_as_user(req);
	if ((rc = lodge_create(lg, &dc, 0, &err))) {
		/* lodge-hyp's own lines: the last says why. */
		const char *last = strrchr(err.msg, '\n') ? strrchr(err.msg, '\n') + 1 : err.msg;

		web_error(resp, 500, "domain %s did not start: %s (its config is kept in %s)", dc.name, last, path);
		return;
	}
	web_reply_json(resp, 201, json_pack("{s:s,s:s}", "name", dc.name, "config", path));
}

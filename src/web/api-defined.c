/* The defined domains (issue 35), as the lodge command's list --all and
 * the dashboard show them, through liblodge's lodge_defined_* calls:
 *
 *   GET  /api/defined                  every config of domains_dir: the
 *                                      list's columns with autostart,
 *                                      state off or running, why if it
 *                                      does not load
 *   GET  /api/defined/NAME             {name, config, text}: its config
 *   POST /api/defined/NAME/start       {}
 *   POST /api/defined/NAME/config      {"text": ...}: checked by the config
 *                                      loader (400 with FILE:LINE: KEY:),
 *                                      naming only what the config named
 *                                      or lodge.conf lends (403)
 *   POST /api/defined/NAME/autostart   {"autostart": true|false}
 *   POST /api/defined/NAME/delete      {"disks": true|false}: never while
 *                                      it runs (409); disks only files
 *                                      under storage_dirs, no other's
 *
 * Reading is a viewer's; every change an admin's (api.c's table). */
#include "web.h"
#include "domain-list.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void web_get_defined(const struct web_request *req, const char *word, struct web_response *resp)
{
	struct lodge_defined_list l;
	struct lodge_err err;
	json_t *a;
	unsigned i;
	int rc;

	if ((rc = lodge_defined_list(web_lodge(), &l, &err))) {
		web_reply_lodge_err(resp, rc, &err);
		return;
	}
	a = json_array();
	for (i = 0; i < l.n; i++) {
		struct list_row r;
		json_t *o;

		domain_list_row_defined(&r, &l.dom[i]);
		o = cols_json_row(domain_list_all_cols, domain_list_all_ncols, &r);
		if (l.dom[i].running)
			json_object_set_new(o, "state", json_string(domain_state_name(DOMAIN_STATE_RUNNING)));
		json_object_set_new(o, "config", json_string(l.dom[i].config));
		if (!l.dom[i].loads)
			json_object_set_new(o, "why", json_string(l.dom[i].why));
		json_array_append_new(a, o);
	}
	lodge_defined_list_free(&l);
	web_reply_json(resp, 200, a);
}

void web_get_defined_one(const struct web_request *req, const char *name, struct web_response *resp)
{
	char config[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8];
	struct lodge_err err;
	char *text;
	int rc;

	if ((rc = lodge_defined_text(web_lodge(), name, &text, &err))) {
		web_reply_lodge_err(resp, rc, &err);
		return;
	}
	snprintf(config, sizeof(config), "%s/%s.cfg", web_lodge()->hc.domains_dir, name);
	web_reply_json(resp, 200, json_pack("{s:s,s:s,s:s}", "name", name, "config", config, "text", text));
	free(text);
}

static void done(struct web_response *resp, int rc, const struct lodge_err *err, const char *name)
{
	if (rc)
		web_reply_lodge_err(resp, rc, err);
	else
		web_reply_json(resp, 200, json_pack("{s:s}", "name", name));
}

void web_defined_start(const struct web_request *req, const char *name, struct web_response *resp)
{
	struct lodge_err err;

	web_as_user(req);
	done(resp, lodge_defined_start(web_lodge(), name, &err), &err, name);
}

void web_defined_config(const struct web_request *req, const char *name, struct web_response *resp)
{
	const char *text = NULL;
	struct lodge_err err;
	json_t *j;
	int rc;

	if (!(j = web_body_json(req, resp)))
		return;
	if (json_unpack(j, "{s:s}", "text", &text)) {
		json_decref(j);
		web_error(resp, 400, "the body is {\"text\": THE CONFIG}");
		return;
	}
	/* The server is root; its users are not: lent_only. */
	rc = lodge_defined_write(web_lodge(), name, text, true, &err);
	json_decref(j);
	done(resp, rc, &err, name);
}

void web_defined_autostart(const struct web_request *req, const char *name, struct web_response *resp)
{
	struct lodge_err err;
	int on = 0, rc;
	json_t *j;

	if (!(j = web_body_json(req, resp)))
		return;
	rc = json_unpack(j, "{s:b}", "autostart", &on);
	json_decref(j);
	if (rc) {
		web_error(resp, 400, "the body is {\"autostart\": true or false}");
		return;
	}
	done(resp, lodge_defined_autostart(web_lodge(), name, on, &err), &err, name);
}

void web_defined_delete(const struct web_request *req, const char *name, struct web_response *resp)
{
	struct lodge_err err;
	int disks = 0, rc;
	json_t *j;

	if (!(j = web_body_json(req, resp)))
		return;
	rc = json_unpack(j, "{s?b}", "disks", &disks);
	json_decref(j);
	if (rc) {
		web_error(resp, 400, "the body is {\"disks\": true or false}");
		return;
	}
	done(resp, lodge_defined_delete(web_lodge(), name, disks, &err), &err, name);
}

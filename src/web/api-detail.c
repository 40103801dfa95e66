/* GET /api/domains/NAME: one domain's row of the list, and what the
 * detail view shows besides: each vCPU, each disk and vif with its
 * counters, the console's last output and the event log's last lines of
 * it.  GET /api/blockdevs: the host's block devices for the create form's
 * disk picker, each with why it may not be used. */
#include "web.h"
#include "domain-list.h"
#include "log.h"           /* text_escape_n */

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAIL_BYTES 2048
#define HISTORY_LINES 20

static json_t *io_json(const struct lodge_io *io)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I}", "in_ops", (json_int_t)io->in_ops, "in_bytes", (json_int_t)io->in_bytes,
			 "out_ops", (json_int_t)io->out_ops, "out_bytes", (json_int_t)io->out_bytes, "errors",
			 (json_int_t)io->errors);
}

static int keep_line(const char *line, void *arg)
{
	json_array_append_new(arg, json_string(line) ?: json_string("(not UTF-8)"));
	return 0;
}

void web_get_domain(const struct web_request *req, const char *name, struct web_response *resp)
{
	static struct lodge_devices dev;
	static struct lodge_vcpus vc;
	const struct lodge *lg = web_lodge();
	struct lodge_err err;
	struct list_row r;
	json_t *o, *a;
	char *tail = NULL, mac[18];
	size_t tail_len = 0, i;
	int rc;

	if ((rc = lodge_devices(lg, name, &dev, &err))) {
		web_reply_lodge_err(resp, rc, &err);
		return;
	}
	domain_list_row(&r, &dev.st);
	o = cols_json_row(domain_list_cols, domain_list_ncols, &r);
	if (lodge_vcpu_list(lg, name, &vc, &err) == 0) {
		a = json_array();
		for (i = 0; i < vc.n; i++)
			json_array_append_new(a, json_pack("{s:i,s:i,s:s#,s:f,s:f,s:s}", "vcpu", (int)i, "cpu", vc.v[i].cpu,
							   "state", &vc.v[i].state, 1, "cpu_s", vc.v[i].ns / 1e9, "wait_s",
							   vc.v[i].wait_ns / 1e9, "affinity", vc.v[i].affinity));
		json_object_set_new(o, "vcpu_list", a);
	}
	a = json_array();
	for (i = 0; i < dev.ndisks; i++)
		json_array_append_new(a, json_pack("{s:s,s:s,s:b,s:o}", "vdev", dev.disk[i].vdev, "path", dev.disk[i].path,
						   "readonly", dev.disk[i].readonly, "io", io_json(&dev.disk[i].io)));
	json_object_set_new(o, "disks", a);
	a = json_array();
	for (i = 0; i < dev.nvifs; i++) {
		const uint8_t *m = dev.vif[i].mac;

		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:o}", "ifname", dev.vif[i].ifname, "mac", mac, "bridge",
						   dev.vif[i].bridge, "io", io_json(&dev.vif[i].io)));
	}
	json_object_set_new(o, "vifs", a);
	if (lodge_console_log(lg, name, TAIL_BYTES, 500, &tail, &tail_len, &err) == 0 && tail) {
		/* The guest's bytes: as text if they are UTF-8, else escaped. */
		json_t *t = json_stringn(tail, tail_len);
		char *shown;

		if (!t && (shown = malloc(4 * tail_len + 1))) {
			text_escape_n(shown, 4 * tail_len + 1, tail, tail_len);
			t = json_string(shown);
			free(shown);
		}
		json_object_set_new(o, "console_tail", t ?: json_null());
		free(tail);
	}
	a = json_array();
	lodge_log_read(lg, name, HISTORY_LINES, false, keep_line, a, &err);
	json_object_set_new(o, "history", a);
	web_reply_json(resp, 200, o);
}

void web_get_blockdevs(const struct web_request *req, const char *word, struct web_response *resp)
{
	static struct lodge_blockdev devs[256];
	unsigned n = lodge_host_blockdevs(web_lodge(), devs, 256), i;
	json_t *a = json_array();

	for (i = 0; i < n && i < 256; i++)
		json_array_append_new(a, json_pack("{s:s,s:I,s:s*}", "path", devs[i].path, "bytes", (json_int_t)devs[i].bytes,
						   "taken", devs[i].taken[0] ? devs[i].taken : NULL));
	web_reply_json(resp, 200, a);
}

/* POST /api/domains: a domain made from the create form's fields, each
 * checked by the code that reads a domain file (config-form.h) as the
 * dashboard's form checks it, the whole then read as that file; its
 * config kept as DOMAINS_DIR/NAME.cfg (lodge create NAME starts it again)
 * and the domain started.  GET /api/create-form gives the fields, their
 * hints from the schema, and the default guest. */
#include "web.h"
#include "config-form.h"
#include "default-guest.h"
#include "incoming.h"
#include "install.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <net/if.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

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
		if (f == FORM_DISK)
			snprintf(hint + strlen(hint), sizeof(hint) - strlen(hint), "; new:SIZE (MiB) makes a sparse image file");
		else if (f == FORM_BRIDGE)
			snprintf(hint + strlen(hint), sizeof(hint) - strlen(hint), "; net:NETWORK a Lodge network, new:NAME "
				 "makes the bridge");
		json_array_append_new(fields, json_pack("{s:s,s:s}", "key", field_json[f], "hint", hint));
	}
	defaults = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s}", "kernel", g.kernel, "ramdisk", g.ramdisk, "cmdline", g.cmdline,
			     "memory_mib", (int)g.memory_mib, "guest", g.debian ? "debian" : "minios", "why", g.why);
	/* The choices the dashboard's form has beside the schema's. */
	json_array_append_new(fields, json_pack("{s:s,s:s}", "key", "disk_format", "hint",
						"a new:SIZE disk's content: blank or ext4 (mkfs.ext4)"));
	web_reply_json(resp, 200, json_pack("{s:o,s:o,s:s,s:i}", "fields", fields, "defaults", defaults, "bridge",
					    web_lodge()->hc.default_bridge, "new_disk_max_mib", FORM_NEW_DISK_MAX_MIB));
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

/* new:SIZE: the size in MiB, or 0 (why set). */
static unsigned long new_disk_mib(const char *v, char *why, size_t len)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v + strlen(FORM_NEW_PREFIX), &end, 10);
	if (errno || *end || end == v + strlen(FORM_NEW_PREFIX) || n < 1 || n > FORM_NEW_DISK_MAX_MIB) {
		snprintf(why, len, "new:SIZE in MiB, 1 to %u, e.g. new:512", FORM_NEW_DISK_MAX_MIB);
		return 0;
	}
	return n;
}

/* mkfs.ext4 on the new image; its output is not ours to show. */
static int run_mkfs(const char *img)
{
	char *argv[] = { (char *)"mkfs.ext4", (char *)"-q", (char *)"-F", (char *)img, NULL };
	posix_spawn_file_actions_t fa;
	int st, rc;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&pid, "mkfs.ext4", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -rc;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* The new:SIZE disk as the dashboard makes it: IMAGE_DIR/NAME-vda.img,
 * sparse, never over a file that is there, blank or ext4. */
static int make_disk(const struct lodge *lg, const char *name, unsigned long mib, bool ext4, char *img, size_t len,
		     char *why, size_t whylen)
{
	int fd, rc;

	if ((rc = make_dirs(lg->hc.image_dir))) {
		snprintf(why, whylen, "cannot make the image directory %.900s: %s", lg->hc.image_dir, strerror(-rc));
		return rc;
	}
	if ((size_t)snprintf(img, len, "%s/%s-vda.img", lg->hc.image_dir, name) >= len) {
		snprintf(why, whylen, "%.900s/%.64s-vda.img: path too long", lg->hc.image_dir, name);
		return -ENAMETOOLONG;
	}
	if ((fd = open(img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot create %s: %s", img, strerror(-rc));
		img[0] = '\0';                /* not ours to remove */
		return rc;
	}
	if (ftruncate(fd, (off_t)mib << 20) < 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot make %s %lu MiB: %s", img, mib, strerror(-rc));
		close(fd);
		return rc;
	}
	close(fd);
	if (ext4 && (rc = run_mkfs(img))) {
		snprintf(why, whylen, "mkfs.ext4 failed on %s%s", img, rc == -ENOENT ? ": no mkfs.ext4 (e2fsprogs)" : "");
		return rc;
	}
	return 0;
}

void web_create(const struct web_request *req, const char *word, struct web_response *resp)
{
	static struct domain_form form;
	static struct domain_config dc;
	const struct lodge *lg = web_lodge();
	char why[1024], path[CFG_PATH_MAX + FORM_VALUE_MAX + 8], img[FORM_VALUE_MAX] = "", bridge[FORM_VALUE_MAX] = "";
	char nic[IFNAMSIZ];
	const char *bad = "", *format = "blank";
	unsigned long disk_mib = 0;
	struct lodge_status st;
	struct lodge_err err;
	json_t *j, *v;
	unsigned f;
	int rc;

	if (!(j = web_body_json(req, resp)))
		return;
	/* disk_format goes with a new:SIZE disk; the rest are the form's. */
	if ((v = json_object_get(j, "disk_format"))) {
		format = json_is_string(v) ? json_string_value(v) : "";
		if (strcmp(format, "blank") && strcmp(format, "ext4") && strcmp(format, "")) {
			field_error(resp, 400, "disk_format", "blank or ext4");
			json_decref(j);
			return;
		}
		format = strcmp(format, "ext4") ? "blank" : "ext4";
		json_object_del(j, "disk_format");
	}
	rc = body_form(j, &form, why, sizeof(why), &bad);
	json_decref(j);
	if (rc) {
		field_error(resp, 400, bad, why);
		return;
	}
	/* new:SIZE and new:NAME: checked here, made once all else is. */
	if (strncmp(form.value[FORM_DISK], FORM_NEW_PREFIX, strlen(FORM_NEW_PREFIX)) == 0) {
		if (!(disk_mib = new_disk_mib(form.value[FORM_DISK], why, sizeof(why)))) {
			field_error(resp, 400, "disk", why);
			return;
		}
		form.value[FORM_DISK][0] = '\0';
	}
	if (strncmp(form.value[FORM_BRIDGE], FORM_NEW_PREFIX, strlen(FORM_NEW_PREFIX)) == 0) {
		memmove(form.value[FORM_BRIDGE], form.value[FORM_BRIDGE] + strlen(FORM_NEW_PREFIX),
			FORM_VALUE_MAX - strlen(FORM_NEW_PREFIX));
		memcpy(bridge, form.value[FORM_BRIDGE], sizeof(bridge));
		form.make_bridge = true;       /* its name alone is checked: it is not there yet */
	}
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
	web_as_user(req);
	if (disk_mib && make_disk(lg, form.value[FORM_NAME], disk_mib, strcmp(format, "ext4") == 0, img, sizeof(img),
				  why, sizeof(why))) {
		field_error(resp, 500, "disk", why);
		goto undo;
	}
	if (img[0])
		memcpy(form.value[FORM_DISK], img, sizeof(img));
	if (bridge[0]) {
		if ((rc = lodge_bridge_create(bridge, NULL, false, &err))) {
			bridge[0] = '\0';              /* not ours to remove */
			field_error(resp, rc == -EEXIST ? 409 : 500, "bridge", err.msg);
			goto undo;
		}
		form.make_bridge = false;      /* it is there now: checked as any */
	}
	if (domain_form_load(&form, &lg->hc, &dc, why, sizeof(why))) {
		web_error(resp, 400, "%s", why);
		goto undo;
	}
	/* The server is root; its users are not: disks, kernel, ramdisk and
	 * bridges only from what lodge.conf lends (storage_dirs,
	 * storage_devices, kernel_dirs, bridges), as for a migrated domain. */
	{
		/* A bridge this request made is this user's to use: lent
		 * for the check as if lodge.conf's bridges named it. */
		static struct host_config lent;

		lent = lg->hc;
		if (bridge[0] && lent.bridges.n < HOST_LIST_MAX)
			snprintf(lent.bridges.item[lent.bridges.n++], HOST_LIST_ITEM_MAX, "%s", bridge);
		if ((rc = incoming_admit(&dc, &lent, why, sizeof(why)))) {
			web_error(resp, rc == -EACCES ? 403 : 400, "%s", why);
			goto undo;
		}
	}
	if ((rc = make_dirs(lg->hc.domains_dir))) {
		web_error(resp, 500, "cannot make the domains directory %s: %s", lg->hc.domains_dir, strerror(-rc));
		goto undo;
	}
	if (domain_config_save(path, &dc, why, sizeof(why))) {
		web_error(resp, 500, "%s", why);
		goto undo;
	}
	if ((rc = lodge_create(lg, &dc, 0, &err))) {
		/* lodge-hyp's own lines: the last says why.  The config, its
		 * disk and bridge are kept: lodge create NAME tries again. */
		const char *last = strrchr(err.msg, '\n') ? strrchr(err.msg, '\n') + 1 : err.msg;

		web_error(resp, 500, "domain %s did not start: %s (its config is kept in %s)", dc.name, last, path);
		return;
	}
	web_reply_json(resp, 201, json_pack("{s:s,s:s,s:s}", "name", dc.name, "config", path, "disk", img));
	return;
undo:
	if (img[0])
		unlink(img);
	if (bridge[0])
		lodge_bridge_delete(bridge, nic, &err);
}

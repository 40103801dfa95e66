/* A domain made from a create form, and what the form asks to be made
 * for it (lodge.h: lodge_form_create): the one way for every face (the
 * dashboard's form, the web page's).  Everything that can be known is
 * checked before anything is made; then the disk, the bridge, the config
 * and the domain, in that order, and on a failure at any step what the
 * earlier ones made is removed again. */
#include "internal.h"
#include "config-form.h"
#include "incoming.h"
#include "install.h"
#include "netlink.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int field_fail(struct lodge_form_result *res, int field, struct lodge_err *err, int rc, const char *why)
{
	res->field = field;
	return lodge_fail(err, rc, "%s", why);
}

bool lodge_form_new_disk(const struct domain_form *form)
{
	return domain_form_new(form->value[FORM_DISK]);
}

static const char *new_bridge(const struct domain_form *form)
{
	const char *v = form->value[FORM_BRIDGE];

	return domain_form_new(v) ? v + strlen(FORM_NEW_PREFIX) : NULL;
}

/* IMAGE_DIR/NAME-vda.img into path: 0, or -ENAMETOOLONG (it must fit a form's value). */
static int new_disk_path(const struct lodge *lg, const char *name, char path[FORM_VALUE_MAX])
{
	return (size_t)snprintf(path, FORM_VALUE_MAX, "%s/%s-vda.img", lg->hc.image_dir, name) >= FORM_VALUE_MAX
		? -ENAMETOOLONG : 0;
}

/* What lodge.conf does not lend, beside the field that named it. */
static const int part_field[] = {
	[INCOMING_NONE] = -1, [INCOMING_DISK] = FORM_DISK, [INCOMING_KERNEL] = FORM_KERNEL,
	[INCOMING_RAMDISK] = FORM_RAMDISK, [INCOMING_VIF] = FORM_BRIDGE,
};

/* What the caller may use (o->lent_only), with the bridge the create
 * makes for it lent: 0, or the refusal beside the field that named it. */
static int admit(const struct lodge *lg, const struct domain_form *form, struct domain_config *dc,
		 struct lodge_form_result *res, struct lodge_err *err)
{
	static struct host_config lent;
	const char *bridge = new_bridge(form);
	char why[LODGE_ERR_MAX];
	enum incoming_part part;
	int rc;

	lent = lg->hc;
	if (bridge && lent.bridges.n < HOST_LIST_MAX)
		snprintf(lent.bridges.item[lent.bridges.n++], HOST_LIST_ITEM_MAX, "%s", bridge);
	if ((rc = incoming_admit_part(dc, &lent, &part, why, sizeof(why))))
		return field_fail(res, part_field[part], err, rc == -EACCES ? rc : -EINVAL, why);
	return 0;
}

/* lodge_form_check, with the domain config the form makes (all but a
 * new:SIZE disk, which lodge_form_create adds once made). */
static int form_check(const struct lodge *lg, const struct domain_form *form, const struct lodge_form_opts *o,
		      struct lodge_form_result *res, struct domain_config *dc, struct lodge_err *err)
{
	static struct lodge_status st;
	const char *name = form->value[FORM_NAME], *bridge = new_bridge(form);
	char why[LODGE_ERR_MAX], img[FORM_VALUE_MAX];
	struct lodge_err ignored;
	int rc, field;

	memset(res, 0, sizeof(*res));
	res->field = -1;
	if ((rc = domain_form_to_config(form, &lg->hc, true, dc, &res->disk_mib, &field, why, sizeof(why))))
		return field_fail(res, field, err, rc == -ENOMEM ? rc : -EINVAL, why);
	snprintf(res->config, sizeof(res->config), "%s/%.*s.cfg", lg->hc.domains_dir, DOMAIN_NAME_MAX - 1,
		 name);                         /* checked: a name fits */
	if (lodge_status(lg, name, &st, &ignored) == 0 || access(res->config, F_OK) == 0)
		return field_fail(res, FORM_NAME, err, -EEXIST, "taken: a domain of that name runs, or has a config");
	if (lodge_form_new_disk(form)) {
		if (new_disk_path(lg, name, img)) {
			snprintf(why, sizeof(why), "%.200s/%.64s-vda.img: path too long", lg->hc.image_dir, name);
			return field_fail(res, FORM_DISK, err, -EINVAL, why);
		}
		if (access(img, F_OK) == 0) {
			snprintf(why, sizeof(why), "%s is there already: a new disk is never made over a file", img);
			return field_fail(res, FORM_DISK, err, -EEXIST, why);
		}
		/* A fresh host has no image directory yet: lodge_form_create
		 * checks it again once it has made it. */
		if (o->lent_only && access(lg->hc.image_dir, F_OK) == 0 &&
		    (rc = incoming_admit_new_file(lg->hc.image_dir, &lg->hc, why, sizeof(why))))
			return field_fail(res, FORM_DISK, err, rc == -EACCES ? rc : -EINVAL, why);
	}
	if (bridge && nl_link_exists(bridge)) {
		snprintf(why, sizeof(why), "%s is there already: new:%s makes a bridge, %s alone uses one", bridge,
			 bridge, bridge);
		return field_fail(res, FORM_BRIDGE, err, -EEXIST, why);
	}
	return o->lent_only ? admit(lg, form, dc, res, err) : 0;
}

int lodge_form_check(const struct lodge *lg, const struct domain_form *form, const struct lodge_form_opts *o,
		     struct lodge_form_result *res, struct lodge_err *err)
{
	static struct domain_config dc;

	return form_check(lg, form, o, res, &dc, err);
}

/* The new disk of mib MiB (the check's reading of new:SIZE), sparse,
 * ext4 if asked: 0 with its path in img, or -errno with nothing left
 * (img ""). */
static int make_disk(const struct lodge *lg, const struct domain_form *form, const struct lodge_form_opts *o,
		     unsigned long mib, char img[FORM_VALUE_MAX], struct lodge_err *err)
{
	const char *argv[] = { "mkfs.ext4", "-q", "-F", img, NULL };
	struct tool_run mkfs = { .argv = argv };
	char why[LODGE_ERR_MAX], at[CFG_PATH_MAX];
	int fd, rc;

	img[0] = '\0';
	if ((rc = mkdirs(lg->hc.image_dir, DIR_MODE_PUBLIC, at, sizeof(at))))
		return lodge_fail(err, rc, "cannot make the image directory %s (at %s): %s", lg->hc.image_dir, at,
				  strerror(-rc));
	if (o->lent_only && (rc = incoming_admit_new_file(lg->hc.image_dir, &lg->hc, why, sizeof(why))))
		return lodge_fail(err, rc, "%s", why);
	if ((rc = new_disk_path(lg, form->value[FORM_NAME], img))) {
		img[0] = '\0';
		return lodge_fail(err, rc, "%s/%s-vda.img: path too long", lg->hc.image_dir, form->value[FORM_NAME]);
	}
	if ((fd = open(img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
		rc = lodge_fail(err, -errno, "cannot create %s: %s", img, strerror(errno));
		img[0] = '\0';                  /* not ours to remove */
		return rc;
	}
	if (ftruncate(fd, (off_t)mib << 20) < 0)
		rc = lodge_fail(err, -errno, "cannot make %s %lu MiB: %s", img, mib, strerror(errno));
	close(fd);
	if (!rc && o->ext4 && (rc = tool_run(&mkfs))) {
		tool_describe(&mkfs, rc, why, sizeof(why));
		rc = lodge_fail(err, rc < 0 ? rc : -EIO, "cannot make an ext4 filesystem on %s: %s", img, why);
	}
	if (rc) {
		unlink(img);
		img[0] = '\0';
	}
	return rc;
}

/* The config written as path, never over a file there (one may have
 * appeared since the check): written aside, then linked in. */
static int save_new_config(const char *path, const struct domain_config *dc, struct lodge_err *err)
{
	char aside[CFG_PATH_MAX + 8], why[LODGE_ERR_MAX];
	int rc;

	if ((size_t)snprintf(aside, sizeof(aside), "%s.new", path) >= sizeof(aside))
		return lodge_fail(err, -ENAMETOOLONG, "%s: path too long", path);
	if ((rc = domain_config_save(aside, dc, why, sizeof(why))))
		return lodge_fail(err, rc, "%s", why);
	rc = link(aside, path) < 0 ? -errno : 0;
	unlink(aside);
	if (rc == -EEXIST)
		return lodge_fail(err, rc, "taken: %s appeared meanwhile", path);
	return rc ? lodge_fail(err, rc, "cannot write %s: %s", path, strerror(-rc)) : 0;
}

int lodge_form_create(const struct lodge *lg, const struct domain_form *form, const struct lodge_form_opts *o,
		      struct lodge_form_result *res, struct lodge_err *err)
{
	static struct domain_config dc;         /* the form's, then with what was made */
	const char *bridge = new_bridge(form), *name = form->value[FORM_NAME];
	bool made_bridge = false, made_config = false;
	char why[LODGE_ERR_MAX], nic[IFNAMSIZ];
	struct lodge_err undo_err;
	int rc;

	if ((rc = form_check(lg, form, o, res, &dc, err)))
		return rc;
	if (lodge_form_new_disk(form)) {
		if ((rc = make_disk(lg, form, o, res->disk_mib, res->disk, err))) {
			res->field = FORM_DISK;
			goto undo;
		}
		if ((rc = domain_form_add_disk(&dc, res->disk, why, sizeof(why)))) {
			rc = field_fail(res, FORM_DISK, err, rc, why);
			goto undo;
		}
	}
	/* The config names the bridge already (its vif, not looked for). */
	if (bridge) {
		if ((rc = lodge_bridge_create(bridge, NULL, false, err))) {
			res->field = FORM_BRIDGE;
			goto undo;
		}
		made_bridge = true;
	}
	/* The disk made for it, in the storage the caller may use. */
	if (o->lent_only && res->disk[0] && (rc = admit(lg, form, &dc, res, err)))
		goto undo;
	if ((rc = mkdirs(lg->hc.domains_dir, DIR_MODE_PUBLIC, why, sizeof(why)))) {
		lodge_fail(err, rc, "cannot make the domains directory %s (at %s): %s", lg->hc.domains_dir, why,
			   strerror(-rc));
		goto undo;
	}
	if ((rc = save_new_config(res->config, &dc, err))) {
		res->field = rc == -EEXIST ? FORM_NAME : -1;
		goto undo;
	}
	made_config = true;
	if ((rc = lodge_create(lg, &dc, 0, err))) {
		/* lodge-hyp's own lines: the last says why. */
		const char *last = strrchr(err->msg, '\n') ? strrchr(err->msg, '\n') + 1 : err->msg;

		snprintf(why, sizeof(why), "%s", last);
		lodge_fail(err, rc, "domain %s did not start: %s", name, why);
		goto undo;
	}
	return 0;
undo:
	if (made_config)
		unlink(res->config);
	if (res->disk[0])
		unlink(res->disk);
	res->disk[0] = '\0';
	if (made_bridge)
		lodge_bridge_delete(bridge, nic, &undo_err);
	return rc;
}

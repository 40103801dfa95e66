/* Hot-plug from the detail view: attach a disk or a vif to the domain
 * shown, detach one (after a y/n).  The library's calls wait (a detach
 * for the guest's eject, up to LODGE_DETACH_TIMEOUT_MS), so each runs as
 * a job whose end the main loop takes as a request's answer (actions.c),
 * and the screen and the keys stay live meanwhile. */
#include "tui.h"

#include <stdio.h>
#include <string.h>

/* The job's margin past the guest's time: the config is rewritten after. */
#define DEVICES_MARGIN_MS 5000

static int block_attach(const struct lodge *lg, const char *name, const char *arg, struct lodge_err *err)
{
	char made[16];

	return lodge_block_attach(lg, name, arg, false, made, err);
}

static int network_attach(const struct lodge *lg, const char *name, const char *arg, struct lodge_err *err)
{
	char made[16];

	return lodge_network_attach(lg, name, arg, made, err);
}

static int block_detach(const struct lodge *lg, const char *name, const char *arg, struct lodge_err *err)
{
	return lodge_block_detach(lg, name, arg, false, LODGE_DETACH_TIMEOUT_MS, err);
}

static int network_detach(const struct lodge *lg, const char *name, const char *arg, struct lodge_err *err)
{
	return lodge_network_detach(lg, name, arg, false, LODGE_DETACH_TIMEOUT_MS, err);
}

static const struct dev_op {
	const char *cmd;
	int (*run)(const struct lodge *lg, const char *name, const char *arg, struct lodge_err *err);
} block_attach_op = { "block-attach", block_attach }, network_attach_op = { "network-attach", network_attach },
  block_detach_op = { "block-detach", block_detach }, network_detach_op = { "network-detach", network_detach };

/* A job's copy of what to do. */
struct dev_job {
	const struct lodge *lg;
	const struct dev_op *op;
	char name[DOMAIN_NAME_MAX];
	char arg[CFG_PATH_MAX];
};

static int dev_work(void *arg, struct lodge_job_end *end)
{
	const struct dev_job *j = arg;
	struct lodge_err err = { .msg = "" };
	int rc = j->op->run(j->lg, j->name, j->arg, &err);

	if (rc)
		snprintf(end->error, sizeof(end->error), "%s", err.msg);
	return rc;
}

/* The domain the detail view shows, running; NULL with the status line saying why. */
static struct dom_sample *shown(struct tui *t, const char *what)
{
	struct dom_sample *d = tui_selected(t);

	if (t->view != VIEW_DETAIL) {
		tui_status(t, true, "%s: open a domain's details first (Enter)", what);
		return NULL;
	}
	if (!d) {
		tui_status(t, true, "%s: Domain-0 is the host: select a domain", what);
		return NULL;
	}
	if (install_key(t, d, 0))
		return NULL;
	return d;
}

static void start(struct tui *t, const struct dom_sample *d, const struct dev_op *op, const char *arg)
{
	struct dev_job j = { t->lg, op, "", "" };

	snprintf(j.name, sizeof(j.name), "%s", d->st.name);
	snprintf(j.arg, sizeof(j.arg), "%s", arg);
	if (action_job(t, d->st.name, op->cmd, dev_work, &j, LODGE_DETACH_TIMEOUT_MS + DEVICES_MARGIN_MS))
		tui_status(t, false, "%s %s %s...", op->cmd, d->st.name, arg[0] ? arg : "(the default bridge)");
}

void devices_attach_disk(struct tui *t)
{
	struct dom_sample *d = shown(t, "attach a disk");
	char spec[CFG_PATH_MAX] = "";

	if (!d || !tui_prompt(t, "attach a disk (PATH,VDEV[,ro], e.g. /srv/data.img,xvdb; empty: pick a block "
			      "device): ", spec, sizeof(spec)))
		return;
	if (!spec[0]) {              /* the picker, then the device's vdev */
		char dev[CFG_PATH_MAX - 64], vdev[32] = "";

		if (!tui_pick_blockdev(t, dev, sizeof(dev), 0, "a disk"))
			return;
		if (!tui_prompt(t, "as which disk of the guest (a vdev, e.g. xvdb): ", vdev, sizeof(vdev)) || !vdev[0]) {
			tui_status(t, true, "attach a disk: no vdev given");
			return;
		}
		snprintf(spec, sizeof(spec), "%s,%s", dev, vdev);
	}
	/* The picker's rules (a block device mounted or used on the host, a
	 * disk of a running domain: lodge_disk_taken) are the library's
	 * first check: its refusal comes back in the status line. */
	start(t, d, &block_attach_op, spec);
}

void devices_attach_vif(struct tui *t)
{
	struct dom_sample *d = shown(t, "attach a vif");
	char spec[256] = "";

	if (!d || !tui_prompt(t, "attach a vif (bridge=BR or network=NET[,mac=MAC]; empty: pick one): ",
			      spec, sizeof(spec)))
		return;
	if (!spec[0] && !tui_pick_link(t, spec, sizeof(spec)))
		return;
	start(t, d, &network_attach_op, spec);
}

/* A vif is named by its MAC (with ':') or its index (digits); else a disk's vdev. */
static bool names_vif(const char *which)
{
	return strchr(which, ':') || strspn(which, "0123456789") == strlen(which);
}

void devices_detach(struct tui *t)
{
	struct dom_sample *d = shown(t, "detach");
	char which[64] = "", q[sizeof(which) + DOMAIN_NAME_MAX + 64];
	bool vif;

	if (!d || !tui_prompt(t, "detach (a disk's vdev, or a vif's MAC or index): ", which, sizeof(which)) || !which[0])
		return;
	vif = names_vif(which);
	snprintf(q, sizeof(q), "Detach %s %s from %s (the guest is asked to give it up)?", vif ? "vif" : "disk", which,
		 d->st.name);
	if (!tui_confirm(t, q)) {
		if (!tui_interrupted())
			tui_status(t, false, "detach cancelled");
		return;
	}
	start(t, d, vif ? &network_detach_op : &block_detach_op, which);
}

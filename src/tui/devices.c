/* Hot-plug from the detail view: attach a disk or a vif to the domain
 * shown, detach one (after a y/n).  The library's calls wait (a detach
 * for the guest's eject, up to LODGE_DETACH_TIMEOUT_MS), so each runs in
 * a child that answers on a socket as lodge-hyp would ("ok" or "error
 * WHY"); the main loop takes the answer as a request's (actions.c), and
 * the screen and the keys stay live meanwhile. */
#include "tui.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child's margin past the guest's time: the config is rewritten after. */
#define DEVICES_MARGIN_MS 5000

enum dev_op { OP_BLOCK_ATTACH, OP_NETWORK_ATTACH, OP_BLOCK_DETACH, OP_NETWORK_DETACH };
static const char *const op_cmd[] = { "block-attach", "network-attach", "block-detach", "network-detach" };

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

/* In the child: the call, its answer as one line on fd. */
static void child_run(const struct lodge *lg, int fd, enum dev_op op, const char *name, const char *arg)
{
	struct lodge_err err = { .msg = "" };
	char made[16];
	int rc;
	char *nl;

	switch (op) {
	case OP_BLOCK_ATTACH: rc = lodge_block_attach(lg, name, arg, false, made, &err); break;
	case OP_NETWORK_ATTACH: rc = lodge_network_attach(lg, name, arg, made, &err); break;
	case OP_BLOCK_DETACH: rc = lodge_block_detach(lg, name, arg, false, LODGE_DETACH_TIMEOUT_MS, &err); break;
	default: rc = lodge_network_detach(lg, name, arg, false, LODGE_DETACH_TIMEOUT_MS, &err); break;
	}
	while ((nl = strchr(err.msg, '\n')))
		*nl = ' ';
	if (rc)
		dprintf(fd, "error %.500s\n", err.msg[0] ? err.msg : strerror(-rc));
	else
		dprintf(fd, "ok\n\n");
}

static void start(struct tui *t, const struct dom_sample *d, enum dev_op op, const char *arg)
{
	struct pending_action *p = action_slot(t, d->st.name, op_cmd[op]);
	int sv[2];
	pid_t pid;

	if (!p)
		return;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) {
		tui_status(t, true, "%s %s: no socket: %s", op_cmd[op], d->st.name, strerror(errno));
		return;
	}
	if ((pid = fork()) < 0) {
		close(sv[0]);
		close(sv[1]);
		tui_status(t, true, "%s %s: cannot fork: %s", op_cmd[op], d->st.name, strerror(errno));
		return;
	}
	if (pid == 0) {
		/* Not the terminal's: curses is the parent's. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(sv[0]);
		child_run(t->lg, sv[1], op, d->st.name, arg);
		_exit(0);
	}
	close(sv[1]);
	memset(&p->call, 0, sizeof(p->call));
	p->call.fd = sv[0];
	p->pid = pid;
	snprintf(p->name, sizeof(p->name), "%s", d->st.name);
	snprintf(p->cmd, sizeof(p->cmd), "%s", op_cmd[op]);
	p->deadline_ns = tui_now_ns() + (uint64_t)(LODGE_DETACH_TIMEOUT_MS + DEVICES_MARGIN_MS) * 1000000;
	tui_status(t, false, "%s %s %s...", op_cmd[op], d->st.name, arg[0] ? arg : "(the default bridge)");
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
	start(t, d, OP_BLOCK_ATTACH, spec);
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
	start(t, d, OP_NETWORK_ATTACH, spec);
}

/* A vif is named by its MAC (with ':') or its index (digits); else a disk's vdev. */
static bool names_vif(const char *which)
{
	return strchr(which, ':') || strspn(which, "0123456789") == strlen(which);
}

void devices_detach(struct tui *t)
{
	struct dom_sample *d = shown(t, "detach");
	char which[64] = "", q[160];
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
	start(t, d, vif ? OP_NETWORK_DETACH : OP_BLOCK_DETACH, which);
}

/* The hot-plug commands (src/common/proto.h): disk-attach and detach.
 * A detach asks the guest to eject the slot and answers when it has (the
 * controller's eventfd), when its time is up, or at once when forced. */
#include "ctl/ctl-loop.h"
#include "dev/hotplug.h"
#include "domain.h"
#include "events.h"
#include "hotplug.h"
#include "log.h"
#include "pcihp.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DETACH_TIMEOUT_MAX_MS (3600u * 1000u)

/* %XX escapes: a path travels as one word of the request line. */
static int unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (*s == '%') {
			unsigned v;

			if (!s[1] || !s[2] || sscanf(s + 1, "%2x", &v) != 1 || v == 0)
				return -EINVAL;
			*out++ = (char)v;
			s += 2;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
	return 0;
}

/* disk-attach SHARED SPEC: the descriptors sent with it are the disk and
 * its other names (src/common/disknames.h), SHARED the names (bit i: the
 * i-th descriptor) to lock shared, SPEC lodge-hyp's disk spec, escaped. */
void ctl_disk_attach(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	int fds[CTL_PASSED_FDS_MAX];
	unsigned nfds = 0, i, slot;
	char why[600], *end;
	unsigned long shared;
	int rc;

	for (i = 0; i < cl->nextra; i++)
		fds[nfds++] = cl->extra_fds[i];
	if (cl->passed_fd >= 0)
		fds[nfds++] = cl->passed_fd;
	if (argc != 2 || !nfds || unescape(argv[1]) || !argv[1][0]) {
		client_send(cl, "error disk-attach takes SHARED SPEC and the disk's descriptors\n");
		return;                 /* the descriptors go with the next request or the client */
	}
	shared = strtoul(argv[0], &end, 16);
	if (*end || shared > UINT32_MAX) {
		client_send(cl, "error disk-attach: '%s' is no mask\n", argv[0]);
		return;
	}
	cl->nextra = 0;
	cl->passed_fd = -1;             /* hotplug_attach_disk's now, even on error */
	rc = hotplug_attach_disk(c->dom, argv[1], fds, nfds, (uint32_t)shared, &slot, why, sizeof(why));
	if (rc) {
		client_send(cl, "error %s\n", why);
		return;
	}
	client_send(cl, "ok\nslot %u\n\n", slot);
}

/* vif-attach SPEC: the tap sent with it (the caller made it and put it
 * on its bridge), SPEC lodge-hyp's --net form, escaped. */
void ctl_vif_attach(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	unsigned slot;
	char why[600];
	int fd, rc;

	if (argc != 1 || cl->passed_fd < 0 || cl->nextra || unescape(argv[0]) || !argv[0][0]) {
		client_send(cl, "error vif-attach takes SPEC and the tap's descriptor\n");
		return;
	}
	fd = cl->passed_fd;
	cl->passed_fd = -1;
	if ((rc = hotplug_attach_vif(c->dom, argv[0], fd, &slot, why, sizeof(why)))) {
		client_send(cl, "error %s\n", why);
		return;
	}
	client_send(cl, "ok\nslot %u\n\n", slot);
}

static void detach_reply_ok(struct ctl *c, const char *how)
{
	struct ctl_client *cl = c->detach_client;

	c->detach_client = NULL;
	if (cl && cl->fd >= 0)
		client_send(cl, "ok\nhow %s\n\n", how);
}

/* detach SLOT TIMEOUT_MS [force] */
void ctl_detach(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	bool force = argc == 3 && strcmp(argv[2], "force") == 0;
	unsigned long slot, timeout;
	char what[4200], *end1, *end2;

	if (argc < 2 || argc > 3 || (argc == 3 && !force)) {
		client_send(cl, "error detach takes SLOT TIMEOUT_MS [force]\n");
		return;
	}
	slot = strtoul(argv[0], &end1, 10);
	timeout = strtoul(argv[1], &end2, 10);
	if (*end1 || *end2 || timeout > DETACH_TIMEOUT_MAX_MS) {
		client_send(cl, "error detach: slot '%s' or timeout '%s' ms is not a number in range\n", argv[0],
			    argv[1]);
		return;
	}
	if (!hotplug_present((unsigned)slot, what, sizeof(what))) {
		client_send(cl, "error domain %s has no device in PCI slot %lu\n", c->dom->name, slot);
		return;
	}
	if (c->detach_client && !force) {
		client_send(cl, "error a detach of PCI slot %u is under way\n", c->detach_slot);
		return;
	}
	if (force) {
		if (c->detach_client && c->detach_slot == slot) {
			pcihp_withdraw((unsigned)slot);
			client_send(c->detach_client, "error the detach was forced by another client\n");
			c->detach_client = NULL;
		}
		log_warn("%s removed from domain %s without the guest's eject (forced)", what, c->dom->name);
		hotplug_remove(c->dom, (unsigned)slot);
		client_send(cl, "ok\nhow forced\n\n");
		return;
	}
	c->detach_client = cl;
	c->detach_slot = (unsigned)slot;
	c->detach_deadline_ms = c->now_ms + timeout;
	pcihp_request_eject((unsigned)slot);
}

/* The guest ejected slots: their devices go now; a detach waiting for one
 * of them is answered. */
void ctl_hotplug_event(struct ctl *c)
{
	uint32_t bits = pcihp_take_ejected();
	unsigned s;

	for (s = PCIHP_FIRST_SLOT; s < PCIHP_SLOTS; s++) {
		if (!(bits & (1u << s)))
			continue;
		hotplug_remove(c->dom, s);
		if (c->detach_client && c->detach_slot == s)
			detach_reply_ok(c, "ejected");
	}
}

uint64_t ctl_hotplug_deadline(const struct ctl *c)
{
	return c->detach_client ? c->detach_deadline_ms : UINT64_MAX;
}

void ctl_hotplug_expire(struct ctl *c)
{
	struct ctl_client *cl = c->detach_client;

	if (!cl)
		return;
	if (cl->fd < 0) {
		/* Its client went: the request stands no more. */
		pcihp_withdraw(c->detach_slot);
		c->detach_client = NULL;
		return;
	}
	if (c->now_ms < c->detach_deadline_ms)
		return;
	pcihp_withdraw(c->detach_slot);
	c->detach_client = NULL;
	client_send(cl, "error the guest did not eject PCI slot %u in time: the device stays "
		    "(--force removes it anyway)\n", c->detach_slot);
}

/* Hot-plug of a running domain's disks (lodge.h): the caller's side.
 * The disk is opened here, with the caller's own rights, and passed to
 * lodge-hyp, whose sandbox opens nothing by path; lodge-hyp locks it as it
 * locks the disks it starts with.  The runtime config follows. */
#include "config-keys.h"
#include "disknames.h"
#include "internal.h"
#include "proto.h"
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A path as one word of a request line: %XX for what would split it. */
static int escape(const char *in, char *out, size_t len)
{
	size_t n = 0;

	for (; *in; in++) {
		unsigned char ch = (unsigned char)*in;

		if (n + 4 > len)
			return -ENAMETOOLONG;
		if (ch <= ' ' || ch == '%' || ch >= 0x7f)
			n += (size_t)snprintf(out + n, len - n, "%%%02X", ch);
		else
			out[n++] = (char)ch;
	}
	out[n] = '\0';
	return 0;
}

static int save_runtime_config(const struct lodge *lg, const char *name, const struct domain_config *dc,
			       char *why, size_t whylen)
{
	char path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 16];

	if (runtime_path(path, sizeof(path), lg->hc.runtime_dir, name, RT_CONFIG))
		return -ENAMETOOLONG;
	return lodge_keep_config(lg, path, dc, why, whylen);
}

/* Read the reply to a request whose keys follow "ok": r, or -errno. */
static int read_reply(int fd, struct reply *r, int timeout_ms)
{
	char buf[4096], line[1024];
	size_t n = 0;
	int len;

	r->error[0] = '\0';
	r->nkeys = 0;
	for (;;) {
		if ((len = client_read_line(fd, line, sizeof(line), timeout_ms)) < 0)
			return len;
		if (n + (size_t)len + 2 >= sizeof(buf))
			return -EPROTO;
		memcpy(buf + n, line, (size_t)len);
		n += (size_t)len;
		buf[n++] = '\n';
		buf[n] = '\0';
		if (!strncmp(buf, "error", 5) || len == 0)
			break;
	}
	return client_parse_reply(buf, r);
}

int lodge_block_attach(const struct lodge *lg, const char *domain, const char *spec, char vdev[16],
		       struct lodge_err *err)
{
	static struct domain_config dc;
	struct load_ctx ctx = { .file = "block-attach" };
	struct disk_names dn = { .n = 0 };
	char name[DOMAIN_NAME_MAX], why[1024], path[3 * CFG_PATH_MAX], cmd[PROTO_LINE_MAX];
	struct cfg_disk d;
	struct reply r;
	struct stat st;
	uint32_t shared = 0;
	int rc, fd = -1, ctl = -1, fds[DISK_NAMES_MAX];
	unsigned i;

	if ((rc = lodge_resolve(lg, domain, name, err)) || (rc = lodge_running_config(lg, name, &dc, err)))
		return rc;
	if (!getcwd(ctx.dir, sizeof(ctx.dir)))
		return lodge_fail(err, -errno, "cannot read the working directory: %s", strerror(errno));
	if ((rc = cfg_parse_disk(&ctx, spec, &d, why, sizeof(why))))
		return lodge_fail(err, rc, "disk '%s': %s", spec, why);
	for (i = 0; i < dc.ndisks; i++)
		if (!strcmp(dc.disks[i].vdev, d.vdev))
			return lodge_fail(err, -EEXIST, "domain %s has a disk %s already (%s)", name, d.vdev,
					  dc.disks[i].path);
	if (dc.ndisks == CFG_MAX_DISKS)
		return lodge_fail(err, -ENOSPC, "domain %s has %d disks, the most it may have", name, CFG_MAX_DISKS);
	if (lodge_disk_taken(lg, d.path, why, sizeof(why)))
		return lodge_fail(err, -EBUSY, "disk %s: %s", d.path, why);

	/* The caller's rights decide: lodge-hyp gets only what this opened. */
	fd = open(d.path, (d.readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return lodge_fail(err, -errno, "cannot open disk %s: %s", d.path, strerror(errno));
	if (fstat(fd, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))) {
		close(fd);
		return lodge_fail(err, -EINVAL, "disk %s is neither a regular file nor a block device", d.path);
	}
	disk_names_collect(&dn, d.path, fd, d.readonly);
	if (dn.warn[0])
		lodge_warn(lg, "%s", dn.warn);
	for (i = 0; i < dn.n; i++) {
		fds[i] = dn.names[i].fd;
		if (dn.names[i].shared && !d.readonly)
			shared |= 1u << i;
	}
	if ((rc = escape(d.path, path, sizeof(path))) ||
	    snprintf(cmd, sizeof(cmd), "disk-attach %x %s%s,id=%s", shared, path, d.readonly ? ",ro" : "",
		     d.vdev) >= (int)sizeof(cmd) - 16) {
		rc = lodge_fail(err, -ENAMETOOLONG, "disk %s: the path is too long to attach", d.path);
		goto out;
	}
	if ((ctl = client_connect(lg->hc.runtime_dir, name)) < 0) {
		rc = ctl == -ENOENT || ctl == -ECONNREFUSED ? lodge_not_running(err, name)
			: lodge_fail(err, ctl, "domain %s: %s", name, strerror(-ctl));
		goto out;
	}
	if ((rc = client_request_fds(ctl, cmd, fds, dn.n)) || (rc = read_reply(ctl, &r, LODGE_REPLY_MS))) {
		rc = lodge_fail(err, rc, "domain %s: %s", name, strerror(-rc));
		goto out;
	}
	if (r.error[0]) {
		rc = lodge_fail(err, -EPROTO, "%s", r.error);
		goto out;
	}
	dc.disks[dc.ndisks++] = d;
	if ((rc = save_runtime_config(lg, name, &dc, why, sizeof(why)))) {
		rc = lodge_fail(err, rc, "disk %s is attached to domain %s (PCI slot %s), but its runtime config "
				"cannot say so: %s", d.path, name, reply_get(&r, "slot") ? reply_get(&r, "slot") : "?", why);
		goto out;
	}
	if (vdev)
		snprintf(vdev, 16, "%s", d.vdev);
out:
	for (i = 0; i < dn.n; i++)
		close(dn.names[i].fd);
	if (!dn.n)
		close(fd);
	if (ctl >= 0)
		close(ctl);
	return rc;
}

/* The slot of the i-th disk, from lodge-hyp's status ("disk_slots 1 4"). */
static int disk_slot(const struct lodge *lg, const char *name, unsigned i, unsigned *slot, struct lodge_err *err)
{
	static struct reply r;
	const char *v;
	char *end;
	int rc;

	if ((rc = lodge_ask_name(lg, name, "status", true, &r, err)))
		return rc;
	if (!(v = reply_get(&r, "disk_slots")))
		return lodge_fail(err, -EPROTO, "domain %s's lodge-hyp does not say where its disks are "
				  "(an older lodge-hyp?)", name);
	for (; i > 0 && v; i--)
		if ((v = strchr(v, ' ')))
			v++;
	if (!v || (*slot = (unsigned)strtoul(v, &end, 10)) == 0)
		return lodge_fail(err, -EPROTO, "domain %s's lodge-hyp lists fewer disks than its config", name);
	return 0;
}

int lodge_block_detach(const struct lodge *lg, const char *domain, const char *vdev, bool force,
		       unsigned timeout_ms, struct lodge_err *err)
{
	static struct domain_config dc;
	char name[DOMAIN_NAME_MAX], cmd[64], why[512];
	struct reply r;
	unsigned i, slot;
	int rc;

	if ((rc = lodge_resolve(lg, domain, name, err)) || (rc = lodge_running_config(lg, name, &dc, err)))
		return rc;
	for (i = 0; i < dc.ndisks && strcmp(dc.disks[i].vdev, vdev); i++)
		;
	if (i == dc.ndisks)
		return lodge_fail(err, -ENOENT, "domain %s has no disk %s", name, vdev);
	if ((rc = disk_slot(lg, name, i, &slot, err)))
		return rc;
	snprintf(cmd, sizeof(cmd), "detach %u %u%s", slot, timeout_ms, force ? " force" : "");
	{
		int ctl = client_connect(lg->hc.runtime_dir, name);

		if (ctl < 0)
			return ctl == -ENOENT || ctl == -ECONNREFUSED ? lodge_not_running(err, name)
				: lodge_fail(err, ctl, "domain %s: %s", name, strerror(-ctl));
		rc = client_request(ctl, cmd, 1, &r, (int)timeout_ms + LODGE_REPLY_MS);
		close(ctl);
	}
	if (rc)
		return lodge_fail(err, rc, "domain %s: %s", name, strerror(-rc));
	if (r.error[0])
		return lodge_fail(err, strstr(r.error, "in time") ? -ETIMEDOUT : -EPROTO, "%s", r.error);
	memmove(&dc.disks[i], &dc.disks[i + 1], (dc.ndisks - i - 1) * sizeof(dc.disks[0]));
	dc.ndisks--;
	if ((rc = save_runtime_config(lg, name, &dc, why, sizeof(why))))
		return lodge_fail(err, rc, "disk %s is detached from domain %s, but its runtime config cannot say so: %s",
				  vdev, name, why);
	return 0;
}

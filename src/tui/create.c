/* The create form (n): every field checked as it is typed, by the
 * library's form (config-form.h: the code and the messages of lodge check
 * and lodge create), the error shown beside it; the dashboard adds what
 * only it does: a new disk image or bridge made for the domain, and a
 * name or disk already taken.  Nothing is made until the whole form is
 * valid, and what was made is removed again if the domain does not start. */
#include "config-form.h"
#include "default-guest.h"
#include "tui.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { F_NAME, F_MEMORY, F_VCPUS, F_KERNEL, F_RAMDISK, F_CMDLINE, F_DISK, F_FORMAT, F_BRIDGE, F_MAC, F_CREATE, F_COUNT };

/* The library form's field of each of ours; -1: the dashboard's own. */
static const int form_field_of[F_COUNT] = {
	[F_NAME] = FORM_NAME, [F_MEMORY] = FORM_MEMORY, [F_VCPUS] = FORM_VCPUS, [F_KERNEL] = FORM_KERNEL,
	[F_RAMDISK] = FORM_RAMDISK, [F_CMDLINE] = FORM_CMDLINE, [F_DISK] = FORM_DISK, [F_FORMAT] = -1,
	[F_BRIDGE] = FORM_BRIDGE, [F_MAC] = FORM_MAC, [F_CREATE] = -1,
};

#define NEW_DISK_MAX_MIB (1u << 20)     /* new:SIZE: a typo guard (1 TiB), the file is sparse */
#define PICK_MAX         64             /* block devices the picker lists */

/* Copy a string, cut to fit: form values are shorter than any limit
 * the checks accept, so a cut never happens to a valid value. */
static void __attribute__((noinline)) copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n > len - 1)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

struct field {
	const char *label;
	char hint[160];
	char value[FORM_VALUE_MAX];
	char error[512];
};

/* new:SIZE, new:NAME: the dashboard makes the disk image or the bridge. */
static bool to_make(const char *value)
{
	return strncmp(value, "new:", 4) == 0;
}

/* Our fields as the library's form: a disk to be made is not there yet
 * (checked below), a bridge to be made is checked by its name alone. */
static void to_form(const struct field *f, struct domain_form *form)
{
	unsigned i;

	memset(form, 0, sizeof(*form));
	for (i = 0; i < F_COUNT; i++)
		if (form_field_of[i] >= 0)
			copy(form->value[form_field_of[i]], FORM_VALUE_MAX, f[i].value);
	if (to_make(f[F_DISK].value))
		form->value[FORM_DISK][0] = '\0';
	if (to_make(f[F_BRIDGE].value)) {
		copy(form->value[FORM_BRIDGE], FORM_VALUE_MAX, f[F_BRIDGE].value + 4);
		form->make_bridge = true;
	}
}

static bool name_taken(struct tui *t, const char *name)
{
	char path[CFG_PATH_MAX + 80];
	unsigned i;

	for (i = 0; i < t->ndoms; i++)
		if (strcmp(t->doms[i].st.name, name) == 0)
			return true;
	snprintf(path, sizeof(path), "%s/%s.cfg", t->hc.domains_dir, name);
	return access(path, F_OK) == 0;
}

static void validate(struct tui *t, struct field *f, unsigned which)
{
	static struct domain_form form;
	struct field *x = &f[which];
	const char *v = x->value;
	char *end;
	long n;

	x->error[0] = '\0';
	if (form_field_of[which] >= 0) {
		to_form(f, &form);
		if (domain_form_check(&form, form_field_of[which], &t->hc, x->error, sizeof(x->error)))
			return;
	}
	switch (which) {       /* what only the dashboard does */
	case F_NAME:
		if (name_taken(t, v))
			snprintf(x->error, sizeof(x->error), "name taken");
		break;
	case F_DISK:
		if (to_make(v)) {
			n = strtol(v + 4, &end, 10);
			if (*end || n < 1 || n > NEW_DISK_MAX_MIB)
				snprintf(x->error, sizeof(x->error), "new:SIZE in MiB, 1 to %u, e.g. new:512",
					 NEW_DISK_MAX_MIB);
		} else if (*v) {
			/* A block device mounted here, or a running domain's disk. */
			lodge_disk_taken(t->lg, v, x->error, sizeof(x->error));
		}
		break;
	case F_FORMAT:
		if (strcmp(v, "blank") && strcmp(v, "ext4"))
			snprintf(x->error, sizeof(x->error), "blank or ext4");
		break;
	}
}

/* Pick a partition, LV or loop device (Ctrl-B on the disk field). */
static void pick_blockdev(struct tui *t, struct field *disk)
{
	static struct lodge_blockdev devs[PICK_MAX];
	unsigned n = lodge_host_blockdevs(t->lg, devs, PICK_MAX), sel = 0, i;
	int c;

	if (!n) {
		tui_status(t, true, "no block devices found");
		return;
	}
	timeout(-1);
	for (;;) {
		erase();
		mvprintw(0, 0, "Block devices (Enter picks, Esc cancels); marked ones are refused:");
		for (i = 0; i < n && (int)i < LINES - 2; i++) {
			if (i == sel)
				attron(A_REVERSE);
			mvprintw(1 + i, 2, "%-20s %8llu MiB  %s", devs[i].path,
				 (unsigned long long)(devs[i].bytes >> 20), devs[i].taken);
			attroff(A_REVERSE);
		}
		refresh();
		c = getch();
		if (c == KEY_UP && sel) sel--;
		else if (c == KEY_DOWN && sel + 1 < n) sel++;
		else if (c == 27 || c == ERR) break;     /* ERR: a signal, or the terminal gone */
		else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
			copy(disk->value, sizeof(disk->value), devs[sel].path);
			break;
		}
	}
	timeout(t->delay_ms);
	erase();
}

/* mkdir -p: every missing level of path, 0755 as a package would make
 * them.  On failure -errno, and the level that failed in failed. */
static int make_dirs(const char *path, char *failed, size_t len)
{
	char buf[CFG_PATH_MAX];
	char *p;

	copy(buf, sizeof(buf), path);
	for (p = buf + (buf[0] == '/');; p++) {
		bool end = *p == '\0';

		if (*p != '/' && !end)
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
			copy(failed, len, buf);
			return -errno;
		}
		if (end)
			return 0;
		*p = '/';
	}
}

/* prefix and text from line y on, wrapped: the next free line. */
static int put_message(int y, const char *prefix, const char *text)
{
	char line[TUI_MESSAGE_MAX + 16];

	snprintf(line, sizeof(line), "%s%s", prefix, text);
	return put_wrapped(y, 0, 0, LINES, line);
}

static int run_quiet(const char *const argv[])
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		execvp(argv[0], (char *const *)argv);     /* execvp does not change them */
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Everything valid: make the disk and bridge, read the form as a domain
 * file, save it, start. */
static int create_domain(struct tui *t, struct field *f)
{
	static struct domain_form form;
	static struct domain_config dc;
	char cfgpath[CFG_PATH_MAX + 80], img[CFG_PATH_MAX + FORM_VALUE_MAX + 16] = "", err[2048], nic[IFNAMSIZ];
	struct lodge_err lerr;
	bool made_bridge = false;
	const char *name = f[F_NAME].value, *br = f[F_BRIDGE].value;

	to_form(f, &form);
	if (to_make(f[F_DISK].value)) {
		char failed[CFG_PATH_MAX];
		int fd, rc;

		/* A fresh host has none of /var/lib/lodge/images yet. */
		if ((rc = make_dirs(t->hc.image_dir, failed, sizeof(failed)))) {
			tui_status(t, true, "cannot make the image directory %s (at %s): %s", t->hc.image_dir, failed,
				   strerror(-rc));
			return -1;
		}
		snprintf(img, sizeof(img), "%s/%s-vda.img", t->hc.image_dir, name);
		if (strlen(img) >= FORM_VALUE_MAX) {
			tui_status(t, true, "%s: path too long", img);
			return -1;
		}
		fd = open(img, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)atoi(f[F_DISK].value + 4) << 20) < 0) {
			tui_status(t, true, "cannot create %s: %s", img, strerror(errno));
			if (fd >= 0) {
				close(fd);
				unlink(img);
			}
			return -1;
		}
		close(fd);
		if (strcmp(f[F_FORMAT].value, "ext4") == 0 &&
		    run_quiet((const char *[]){ "mkfs.ext4", "-q", "-F", img, NULL })) {
			tui_status(t, true, "mkfs.ext4 failed on %s", img);
			unlink(img);
			return -1;
		}
		copy(form.value[FORM_DISK], FORM_VALUE_MAX, img);
	}
	if (to_make(br)) {
		br += 4;
		if (lodge_bridge_create(br, NULL, false, &lerr)) {
			tui_status(t, true, "%s", lerr.msg);
			goto undo;
		}
		made_bridge = true;
		form.make_bridge = false;      /* it is there now: checked as any */
	}
	if (domain_form_load(&form, &t->hc, &dc, err, sizeof(err))) {
		tui_status(t, true, "%s", err);
		goto undo;
	}
	{
		char failed[CFG_PATH_MAX];
		int rc = make_dirs(t->hc.domains_dir, failed, sizeof(failed));

		if (rc) {
			tui_status(t, true, "cannot make the domains directory %s (at %s): %s", t->hc.domains_dir,
				   failed, strerror(-rc));
			goto undo;
		}
	}
	snprintf(cfgpath, sizeof(cfgpath), "%s/%s.cfg", t->hc.domains_dir, dc.name);
	if (domain_config_save(cfgpath, &dc, err, sizeof(err))) {
		tui_status(t, true, "%s", err);
		goto undo;
	}
	if (lodge_create(t->lg, &dc, 0, &lerr)) {
		/* lodge-hyp's own lines: the last says why. */
		const char *why = strrchr(lerr.msg, '\n') ? strrchr(lerr.msg, '\n') + 1 : lerr.msg;

		tui_status(t, true, "domain %s did not start: %s (its config is kept in %s)", dc.name, why, cfgpath);
		return -1;
	}
	tui_status(t, false, "created %s; its config is %s", dc.name, cfgpath);
	return 0;
undo:
	if (img[0])
		unlink(img);
	if (made_bridge)
		lodge_bridge_delete(br, nic, &lerr);
	return -1;
}

void view_create(struct tui *t)
{
	static struct field f[F_COUNT] = {
		[F_NAME] = { "Name" },
		[F_MEMORY] = { "Memory (MiB)" },
		[F_VCPUS] = { "vCPUs" },
		[F_KERNEL] = { "Kernel" },
		[F_RAMDISK] = { "Ramdisk" },
		[F_CMDLINE] = { "Command line" },
		[F_DISK] = { "Disk", "an image file or block device, new:SIZE_MiB, Ctrl-B: pick a device" },
		[F_FORMAT] = { "New disk format", "blank or ext4" },
		[F_BRIDGE] = { "Bridge", "a bridge, new:NAME, net:NETWORK (N lists them), empty: no network" },
		[F_MAC] = { "MAC" },
		[F_CREATE] = { "[ Create ]", "Enter creates, Esc cancels" },
	};
	static struct default_guest g;
	unsigned cur = 0, i;
	int c;

	for (i = 0; i < F_COUNT; i++) {
		f[i].value[0] = f[i].error[0] = '\0';
		/* The hints of the keys are the schema's. */
		if (form_field_of[i] >= 0 && i != F_DISK && i != F_BRIDGE)
			domain_form_hint(form_field_of[i], f[i].hint, sizeof(f[i].hint));
	}
	default_guest_here(&g);
	snprintf(f[F_MEMORY].value, sizeof(f[0].value), "%u", g.memory_mib);
	snprintf(f[F_VCPUS].value, sizeof(f[0].value), "%u", DOMAIN_VCPUS_DEFAULT);
	copy(f[F_KERNEL].value, sizeof(f[0].value), g.kernel);
	copy(f[F_RAMDISK].value, sizeof(f[0].value), g.ramdisk);
	copy(f[F_CMDLINE].value, sizeof(f[0].value), g.cmdline);
	snprintf(f[F_FORMAT].value, sizeof(f[0].value), "blank");
	snprintf(f[F_MAC].value, sizeof(f[0].value), "auto");
	for (i = 0; i < F_CREATE; i++)
		validate(t, f, i);
	timeout(-1);
	for (;;) {
		bool ok = true;

		erase();
		mvprintw(0, 0, "Create a domain (Up/Down/Tab move, type to edit, Esc cancels)");
		mvprintw(1, 0, "%.*s", COLS - 1, g.why);     /* which default guest, and why */
		for (i = 0; i < F_COUNT; i++) {
			int y = 2 + i;

			if (i < F_CREATE && f[i].error[0])
				ok = false;
			if (i == cur)
				attron(A_REVERSE);
			mvprintw(y, 0, "%-16s", f[i].label);
			attroff(A_REVERSE);
			if (i < F_CREATE) {
				printw(" %-*.*s", COLS > 60 ? 36 : 20, COLS > 60 ? 36 : 20, f[i].value);
				if (f[i].error[0]) {
					attron(A_BOLD);
					printw(" ! %.*s", COLS - 58 > 0 ? COLS - 58 : 0, f[i].error);
					attroff(A_BOLD);
				}
			}
		}
		{
			/* The field's message whole (beside it, it is cut to fit). */
			int y = put_message(3 + F_COUNT, "", f[cur].hint);

			if (cur < F_CREATE && f[cur].error[0])
				y = put_message(y, "! ", f[cur].error);
			if (!ok)
				y = put_message(y, "", "Fix the fields marked ! to create.");
			if (t->status[0])
				put_message(y + 1, t->status_error ? "error: " : "", t->status);
		}
		move(2 + cur, 17 + (cur < F_CREATE ? (int)strlen(f[cur].value) : 0));
		refresh();
		c = getch();
		if (c == 27 || c == ERR)        /* ERR: a signal, or the terminal gone */
			break;
		if (c == KEY_UP && cur)
			cur--;
		else if (c == KEY_DOWN || c == '\t')
			cur = (cur + 1) % F_COUNT;
		else if (c == KEY_BTAB)
			cur = cur ? cur - 1 : F_COUNT - 1;
		else if (c == 2 && cur == F_DISK) {            /* Ctrl-B */
			pick_blockdev(t, &f[F_DISK]);
			validate(t, f, F_DISK);
		} else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
			if (cur != F_CREATE) {
				cur++;
				continue;
			}
			for (i = 0; i < F_CREATE; i++)
				validate(t, f, i);
			for (ok = true, i = 0; i < F_CREATE; i++)
				ok = ok && !f[i].error[0];
			if (!ok) {
				tui_status(t, true, "nothing created: fix the fields marked !");
				continue;
			}
			if (create_domain(t, f) == 0)
				break;
		} else if (cur < F_CREATE) {
			size_t n = strlen(f[cur].value);

			if ((c == KEY_BACKSPACE || c == 127 || c == 8) && n)
				f[cur].value[n - 1] = '\0';
			else if (c >= 32 && c < 127 && n + 1 < sizeof(f[cur].value)) {
				f[cur].value[n] = c;
				f[cur].value[n + 1] = '\0';
			}
			validate(t, f, cur);
		}
	}
	timeout(t->delay_ms);
	erase();
}

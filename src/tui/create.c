/* The create form (n): every field checked as it is typed, the error shown
 * beside it; nothing is made until the whole form is valid, and what was
 * made is removed again if the domain does not start. */
#include "cgroup.h"
#include "default-guest.h"
#include "tui.h"
#include "netlink.h"

#include <ctype.h>
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { F_NAME, F_MEMORY, F_VCPUS, F_KERNEL, F_RAMDISK, F_CMDLINE, F_DISK, F_FORMAT, F_BRIDGE, F_MAC, F_CREATE, F_COUNT };

/* Copy a string, cut to fit: form values are shorter than any limit
 * validate() accepts, so a cut never happens to a valid value. */
static void __attribute__((noinline)) copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n > len - 1)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

struct field {
	const char *label, *hint;
	char value[256];
	char error[96];
};

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

/* A block device that is mounted, or a disk of a running domain. */
static const char *disk_in_use(struct tui *t, const char *path)
{
	static char why[128];
	static struct domain_config dc;
	char line[1024];
	struct stat a, b;
	FILE *f = fopen("/proc/self/mounts", "r");
	unsigned i, k;

	if (stat(path, &a) < 0)
		return NULL;
	while (f && fgets(line, sizeof(line), f)) {
		char dev[512];

		if (sscanf(line, "%511s", dev) == 1 && stat(dev, &b) == 0 && S_ISBLK(b.st_mode) &&
		    S_ISBLK(a.st_mode) && a.st_rdev == b.st_rdev) {
			fclose(f);
			return "mounted on the host";
		}
	}
	if (f)
		fclose(f);
	for (i = 0; i < t->ndoms; i++) {
		if (lodge_running_config(t->lg, t->doms[i].st.name, &dc, NULL))
			continue;
		for (k = 0; k < dc.ndisks; k++)
			if (stat(dc.disks[k].path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev &&
			    a.st_rdev == b.st_rdev) {
				snprintf(why, sizeof(why), "used by domain %s", dc.name);
				return why;
			}
	}
	return NULL;
}

static void validate(struct tui *t, struct field *f, unsigned which)
{
	struct field *x = &f[which];
	const char *v = x->value, *p;
	char *end;
	long n;

	x->error[0] = '\0';
	switch (which) {
	case F_NAME:
		if (!*v || strlen(v) > 63 || *v == '-' || *v == '.')
			snprintf(x->error, sizeof(x->error), "1-63 of A-Z a-z 0-9 _ . -");
		for (p = v; *p && !x->error[0]; p++)
			if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
				snprintf(x->error, sizeof(x->error), "'%c' not allowed", *p);
		if (!x->error[0] && name_taken(t, v))
			snprintf(x->error, sizeof(x->error), "name taken");
		break;
	case F_MEMORY:
		n = strtol(v, &end, 10);
		if (*end || n < DOMAIN_MEMORY_MIN_MIB)
			snprintf(x->error, sizeof(x->error), "MiB, at least %d", DOMAIN_MEMORY_MIN_MIB);
		else if ((unsigned long)n > t->host.mem_avail_mib)
			snprintf(x->error, sizeof(x->error), "host has %lu MiB free", t->host.mem_avail_mib);
		break;
	case F_VCPUS:
		n = strtol(v, &end, 10);
		if (*end || n < 1 || n > (long)t->host.ncpus)
			snprintf(x->error, sizeof(x->error), "1 to %u (host CPUs)", t->host.ncpus);
		break;
	case F_KERNEL:
	case F_RAMDISK:
		if ((*v || which == F_KERNEL) && access(v, R_OK) != 0)
			snprintf(x->error, sizeof(x->error), "cannot read it");
		break;
	case F_DISK:
		if (!*v)
			break;
		if (strncmp(v, "new:", 4) == 0) {
			n = strtol(v + 4, &end, 10);
			if (*end || n < 1 || n > 1 << 20)
				snprintf(x->error, sizeof(x->error), "new:SIZE in MiB, e.g. new:512");
		} else if (access(v, R_OK) != 0) {
			snprintf(x->error, sizeof(x->error), "no such file or device");
		} else if ((p = disk_in_use(t, v))) {
			copy(x->error, sizeof(x->error), p);
		}
		break;
	case F_FORMAT:
		if (strcmp(v, "blank") && strcmp(v, "ext4"))
			snprintf(x->error, sizeof(x->error), "blank or ext4");
		break;
	case F_BRIDGE:
		if (!*v)
			break;
		p = strncmp(v, "new:", 4) == 0 ? v + 4 : v;
		if (netif_name_check(p, x->error, sizeof(x->error)))
			break;
		if (p == v && !nl_link_exists(v))
			snprintf(x->error, sizeof(x->error), "no such bridge (new:NAME makes one)");
		break;
	case F_MAC: {
		unsigned m[6];
		char tail;

		if (strcmp(v, "auto") && (sscanf(v, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3],
						 &m[4], &m[5], &tail) != 6 || strlen(v) != 17 || (m[0] & 1)))
			snprintf(x->error, sizeof(x->error), "auto, or six hex pairs (unicast)");
		break;
	}
	}
}

/* Pick a partition, LV or loop device (Ctrl-B on the disk field). */
static void pick_blockdev(struct tui *t, struct field *disk)
{
	char names[64][300], info[64][400];
	unsigned n = 0, sel = 0, i;
	DIR *d = opendir("/sys/class/block");
	struct dirent *de;
	int c;

	while (d && (de = readdir(d)) && n < 64) {
		char path[512], dev[300];
		unsigned long long sectors = 0;
		const char *use;
		FILE *f;

		if (de->d_name[0] == '.' || strncmp(de->d_name, "ram", 3) == 0)
			continue;
		snprintf(path, sizeof(path), "/sys/class/block/%s/size", de->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fscanf(f, "%llu", &sectors) != 1)
			sectors = 0;
		fclose(f);
		if (!sectors)
			continue;
		snprintf(dev, sizeof(dev), "/dev/%s", de->d_name);
		use = disk_in_use(t, dev);
		copy(names[n], sizeof(names[n]), dev);
		snprintf(info[n], sizeof(info[n]), "%-20s %8llu MiB  %s", dev, sectors / 2048,
			 use ? use : "");
		n++;
	}
	if (d)
		closedir(d);
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
			mvprintw(1 + i, 2, "%s", info[i]);
			attroff(A_REVERSE);
		}
		refresh();
		c = getch();
		if (c == KEY_UP && sel) sel--;
		else if (c == KEY_DOWN && sel + 1 < n) sel++;
		else if (c == 27 || c == ERR) break;     /* ERR: a signal, or the terminal gone */
		else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
			copy(disk->value, sizeof(disk->value), names[sel]);
			break;
		}
	}
	timeout(t->delay_ms);
	erase();
}

static int run_quiet(char *const argv[])
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Everything valid: make the disk and bridge, save the config, start. */
static int create_domain(struct tui *t, struct field *f)
{
	static struct domain_config dc;
	char cfgpath[CFG_PATH_MAX + 80], img[CFG_PATH_MAX + 80] = "", err[512];
	struct lodge_err lerr;
	bool made_bridge = false;
	const char *br = f[F_BRIDGE].value;

	memset(&dc, 0, sizeof(dc));
	copy(dc.name, sizeof(dc.name), f[F_NAME].value);
	dc.memory_mib = atoi(f[F_MEMORY].value);
	dc.vcpus = atoi(f[F_VCPUS].value);
	copy(dc.kernel, sizeof(dc.kernel), f[F_KERNEL].value);
	copy(dc.ramdisk, sizeof(dc.ramdisk), f[F_RAMDISK].value);
	copy(dc.cmdline, sizeof(dc.cmdline), f[F_CMDLINE].value);
	dc.on_poweroff = ACTION_DESTROY;
	dc.on_reboot = ACTION_RESTART;
	dc.on_crash = ACTION_DESTROY;
	dc.cpu_weight = CGROUP_WEIGHT_DEFAULT;     /* xl's default; no cap, any CPU */
	if (f[F_DISK].value[0]) {
		if (strncmp(f[F_DISK].value, "new:", 4) == 0) {
			char size[32];
			int fd;

			mkdir(t->hc.image_dir, 0755);
			snprintf(img, sizeof(img), "%s/%s-vda.img", t->hc.image_dir, dc.name);
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
			copy(size, sizeof(size), f[F_DISK].value + 4);
			if (strcmp(f[F_FORMAT].value, "ext4") == 0 &&
			    run_quiet((char *[]){ "mkfs.ext4", "-q", "-F", img, NULL })) {
				tui_status(t, true, "mkfs.ext4 failed on %s", img);
				unlink(img);
				return -1;
			}
			copy(dc.disks[0].path, sizeof(dc.disks[0].path), img);
		} else {
			copy(dc.disks[0].path, sizeof(dc.disks[0].path), f[F_DISK].value);
		}
		snprintf(dc.disks[0].vdev, sizeof(dc.disks[0].vdev), "vda");
		dc.ndisks = 1;
	}
	if (br[0]) {
		if (strncmp(br, "new:", 4) == 0) {
			br += 4;
			if (nl_bridge_create(br, err, sizeof(err))) {
				tui_status(t, true, "%s", err);
				goto undo;
			}
			made_bridge = true;
		}
		copy(dc.vifs[0].bridge, sizeof(dc.vifs[0].bridge), br);
		if (strcmp(f[F_MAC].value, "auto") != 0) {
			unsigned m[6], i;

			sscanf(f[F_MAC].value, "%2x:%2x:%2x:%2x:%2x:%2x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]);
			for (i = 0; i < 6; i++)
				dc.vifs[0].mac[i] = m[i];
			dc.vifs[0].mac_set = true;
		}
		dc.nvifs = 1;
	}
	mkdir(t->hc.domains_dir, 0755);
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
		nl_bridge_delete(br, err, sizeof(err));
	return -1;
}

void view_create(struct tui *t)
{
	struct field f[F_COUNT] = {
		[F_NAME] = { "Name", "" },
		[F_MEMORY] = { "Memory (MiB)", "" },
		[F_VCPUS] = { "vCPUs", "" },
		[F_KERNEL] = { "Kernel", "" },
		[F_RAMDISK] = { "Ramdisk", "optional" },
		[F_CMDLINE] = { "Command line", "" },
		[F_DISK] = { "Disk", "path, new:SIZE_MiB, Ctrl-B: pick a device" },
		[F_FORMAT] = { "New disk format", "blank or ext4" },
		[F_BRIDGE] = { "Bridge", "name, new:NAME, empty: no network" },
		[F_MAC] = { "MAC", "auto or aa:bb:cc:dd:ee:ff" },
		[F_CREATE] = { "[ Create ]", "Enter creates, Esc cancels" },
	};
	static struct default_guest g;
	unsigned cur = 0, i;
	int c;

	default_guest_here(&g);
	snprintf(f[F_MEMORY].value, sizeof(f[0].value), "%u", g.memory_mib);
	snprintf(f[F_VCPUS].value, sizeof(f[0].value), "1");
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
		mvprintw(3 + F_COUNT, 0, "%.*s", COLS - 1, f[cur].hint);
		if (!ok)
			mvprintw(4 + F_COUNT, 0, "Fix the fields marked ! to create.");
		if (t->status[0])
			mvprintw(5 + F_COUNT, 0, "%s%.*s", t->status_error ? "error: " : "", COLS - 8, t->status);
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

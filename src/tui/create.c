/* The create form (n): every field checked as it is typed, by the
 * library's form (config-form.h: the code and the messages of lodge check
 * and lodge create), the error shown beside it; the dashboard adds a name
 * or disk already taken.  The domain, and the new disk image or bridge
 * the form asks for, are made by the library (lodge_form_create, as the
 * web page's are): nothing until the whole form is valid, and what was
 * made is removed again if the domain does not start.
 *
 * Its first field chooses the guest: Mini-OS (or the Debian kernel the
 * host's default guest is) started at once, or a Debian guest installed
 * (lodge install) into a new disk file of a given size or into a picked
 * partition.  An install is checked whole by the library first (a dry
 * run: its refusal shows in the form), then runs on in a child process
 * (install.c) while the form closes. */
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
#include <unistd.h>

/* The guests the form makes, each asked only its own fields. */
enum guest { G_MINIOS, G_DEBIAN_FILE, G_DEBIAN_PART, G_COUNT };
#define ON_MINIOS (1u << G_MINIOS)
#define ON_DEBIAN ((1u << G_DEBIAN_FILE) | (1u << G_DEBIAN_PART))
#define ON_ALL    (ON_MINIOS | ON_DEBIAN)

static const char *const guest_words[G_COUNT] = {
	[G_MINIOS] = "boot a kernel", [G_DEBIAN_FILE] = "install Debian, new disk file",
	[G_DEBIAN_PART] = "install Debian, a partition",
};

enum {
	F_GUEST, F_NAME, F_MEMORY, F_VCPUS, F_KERNEL, F_RAMDISK, F_CMDLINE, F_DISK, F_FORMAT, F_DIST, F_SIZE, F_PART,
	F_BRIDGE, F_MAC, F_PACKAGES, F_SSH_KEY, F_PASSWORD, F_CREATE, F_COUNT
};

struct field;
struct form_state;
/* What only the dashboard checks of a field, after the library's form
 * (if the field is one of its): the error into f->error. */
typedef void field_check(struct tui *t, struct form_state *s, struct field *f);

struct field_spec {
	const char *label;
	unsigned on;            /* the guests that ask it (ON_*) */
	int form;               /* the library form's field; -1: the dashboard's own */
	const char *hint;       /* NULL: the schema's words for its key */
	field_check *check;
};

static field_check check_name, check_disk, check_format, check_dist, check_size, check_part, check_file;

static const struct field_spec specs[F_COUNT] = {
	[F_GUEST] = { "Guest", ON_ALL, -1, "Space or Left/Right: boot a kernel (the line above says which), or "
	  "install Debian (lodge install) into a new disk file or a partition", NULL },
	[F_NAME] = { "Name", ON_ALL, FORM_NAME, NULL, check_name },
	[F_MEMORY] = { "Memory (MiB)", ON_ALL, FORM_MEMORY, NULL, NULL },
	[F_VCPUS] = { "vCPUs", ON_ALL, FORM_VCPUS, NULL, NULL },
	[F_KERNEL] = { "Kernel", ON_MINIOS, FORM_KERNEL, NULL, NULL },
	[F_RAMDISK] = { "Ramdisk", ON_MINIOS, FORM_RAMDISK, NULL, NULL },
	[F_CMDLINE] = { "Command line", ON_MINIOS, FORM_CMDLINE, NULL, NULL },
	[F_DISK] = { "Disk", ON_MINIOS, FORM_DISK, "an image file or block device, new:SIZE_MiB, Ctrl-B: pick a device",
		     check_disk },
	[F_FORMAT] = { "New disk format", ON_MINIOS, -1, "blank or ext4", check_format },
	[F_DIST] = { "Distribution", ON_DEBIAN, -1, "the Debian release (its template is built first if there is "
		     "none: minutes)", check_dist },
	[F_SIZE] = { "Disk size", 1u << G_DEBIAN_FILE, -1, "the new disk file's size: MiB, or with a unit (2G); "
		     "sparse, in the image directory", check_size },
	[F_PART] = { "Partition", 1u << G_DEBIAN_PART, -1, "a block device, written whole: Ctrl-B picks one (mounted, "
		     "used or too small ones are refused)", check_part },
	[F_BRIDGE] = { "Bridge", ON_ALL, FORM_BRIDGE, "a bridge, new:NAME, net:NETWORK (N lists them), empty: no network",
		       NULL },
	[F_MAC] = { "MAC", ON_MINIOS, FORM_MAC, NULL, NULL },
	[F_PACKAGES] = { "Packages", ON_DEBIAN, -1, "more packages cloud-init installs at the first boot: a,b "
			 "(empty: none)", NULL },
	[F_SSH_KEY] = { "SSH key file", ON_DEBIAN, -1, "a public key file for the debian user (empty: none)",
			check_file },
	[F_PASSWORD] = { "Password file", ON_DEBIAN, -1, "a file holding the debian user's password (its hash goes "
			 "in the seed; empty: none)", check_file },
	[F_CREATE] = { "[ Create ]", ON_ALL, -1, "Enter creates, Esc cancels", NULL },
};

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
	char value[FORM_VALUE_MAX];
	char error[LODGE_ERR_MAX];
};

struct form_state {
	enum guest guest;
	struct field f[F_COUNT];
	struct lodge_template tmpl;    /* the distribution's; bytes 0: none yet (the install builds it) */
	struct default_guest g;
	char dist_note[512];           /* the template in words, for the form's second line */
};

static bool asked(const struct form_state *s, unsigned i)
{
	return specs[i].on & (1u << s->guest);
}

static bool debian(const struct form_state *s)
{
	return s->guest != G_MINIOS;
}

/* On a PVM host, for a Linux guest (an installed Debian, or a kernel
 * that is Linux's), what will happen there and what the user can do,
 * shown before it starts; NULL otherwise. */
static const char *pvm_note(const struct form_state *s)
{
	return pvm_linux_note_here(s->f[F_KERNEL].value, debian(s));
}

/* Our fields as the library's form (its new:SIZE and new:NAME are its
 * own to check and make); an installed guest's bridge is checked by its
 * name alone (lodge install: it need not exist yet). */
static void to_form(const struct form_state *s, struct domain_form *form)
{
	const struct field *f = s->f;
	unsigned i;

	memset(form, 0, sizeof(*form));
	for (i = 0; i < F_COUNT; i++)
		if (specs[i].form >= 0 && asked(s, i))
			copy(form->value[specs[i].form], FORM_VALUE_MAX, f[i].value);
	if (debian(s))
		form->make_bridge = true;
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

static void check_name(struct tui *t, struct form_state *s, struct field *x)
{
	if (name_taken(t, x->value))
		snprintf(x->error, sizeof(x->error), "name taken");
}

/* A block device mounted here, or a running domain's disk (a new:SIZE
 * one, the library's form checked). */
static void check_disk(struct tui *t, struct form_state *s, struct field *x)
{
	if (x->value[0] && !domain_form_new(x->value))
		lodge_disk_taken(t->lg, x->value, x->error, sizeof(x->error));
}

static void check_format(struct tui *t, struct form_state *s, struct field *x)
{
	if (strcmp(x->value, "blank") && strcmp(x->value, "ext4"))
		snprintf(x->error, sizeof(x->error), "blank or ext4");
}

/* The distribution's template, if there is one: the least size a disk
 * may have (the library's rule; its dry run at Install has the last word). */
static void check_dist(struct tui *t, struct form_state *s, struct field *x)
{
	struct lodge_err err;
	int rc = lodge_template_get(t->lg, x->value, &s->tmpl, &err);

	s->dist_note[0] = '\0';
	if (rc == -ENOENT) {
		memset(&s->tmpl, 0, sizeof(s->tmpl));
		snprintf(s->dist_note, sizeof(s->dist_note), "No %s template yet: the install builds it first "
			 "(minutes).", x->value);
	} else if (rc) {
		memset(&s->tmpl, 0, sizeof(s->tmpl));
		snprintf(x->error, sizeof(x->error), "%s", err.msg);
	} else {
		snprintf(s->dist_note, sizeof(s->dist_note), "Debian %s from its template (%llu MiB, kernel %s).",
			 s->tmpl.dist, (unsigned long long)(s->tmpl.bytes >> 20), s->tmpl.kernel);
	}
}

static void check_size(struct tui *t, struct form_state *s, struct field *x)
{
	unsigned long mib;

	if (lodge_parse_mib(x->value, &mib) || !mib)
		snprintf(x->error, sizeof(x->error), "'%s' is not a size: MiB, or a number with a unit (2G)", x->value);
	else if (((uint64_t)mib << 20) < s->tmpl.bytes)
		snprintf(x->error, sizeof(x->error), "%lu MiB is below the %s template's %llu MiB", mib, s->tmpl.dist,
			 (unsigned long long)((s->tmpl.bytes + (1u << 20) - 1) >> 20));
}

/* The picker's rules: a block device, not mounted or used, big enough. */
static void check_part(struct tui *t, struct form_state *s, struct field *x)
{
	struct stat sb;
	uint64_t bytes = 0;

	if (!x->value[0])
		snprintf(x->error, sizeof(x->error), "Ctrl-B picks a partition, or type its path");
	else if (stat(x->value, &sb) < 0)
		snprintf(x->error, sizeof(x->error), "%s: %s", x->value, strerror(errno));
	else if (!S_ISBLK(sb.st_mode))
		snprintf(x->error, sizeof(x->error), "%s is not a block device (a new file: the other guest choice)",
			 x->value);
	else if (!lodge_disk_taken(t->lg, x->value, x->error, sizeof(x->error)) &&
		 lodge_disk_size(x->value, &bytes) == 0 && bytes < s->tmpl.bytes)
		snprintf(x->error, sizeof(x->error), "too small: %llu MiB, the %s template needs %llu MiB",
			 (unsigned long long)(bytes >> 20), s->tmpl.dist, (unsigned long long)(s->tmpl.bytes >> 20));
}

static void check_file(struct tui *t, struct form_state *s, struct field *x)
{
	struct stat sb;
	int fd;

	if (!x->value[0])
		return;
	if ((fd = open(x->value, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		snprintf(x->error, sizeof(x->error), "%s: %s", x->value, strerror(errno));
		return;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		snprintf(x->error, sizeof(x->error), "%s: not a regular file", x->value);
	close(fd);
}

static void validate(struct tui *t, struct form_state *s, unsigned which)
{
	static struct domain_form form;
	struct field *x = &s->f[which];

	x->error[0] = '\0';
	if (!asked(s, which))
		return;
	if (specs[which].form >= 0) {
		to_form(s, &form);
		if (domain_form_check(&form, specs[which].form, &t->hc, x->error, sizeof(x->error)))
			return;
	}
	if (specs[which].check)
		specs[which].check(t, s, x);
}

static void validate_all(struct tui *t, struct form_state *s)
{
	unsigned i;

	/* The distribution first: the sizes are checked against its template. */
	validate(t, s, F_DIST);
	for (i = 0; i < F_CREATE; i++)
		if (i != F_DIST)
			validate(t, s, i);
}

/* The memory the form offers the guest chosen: Mini-OS the schema's
 * default, the Debian guest and an install what they need. */
static unsigned guest_memory(const struct form_state *s)
{
	return debian(s) ? LODGE_INSTALL_MEMORY_DEFAULT : s->g.memory_mib;
}

/* A field's message: the schema's words for its key, or the form's own. */
static void hint_of(const struct tui *t, const struct form_state *s, unsigned i, char *out, size_t len)
{
	if (i == F_BRIDGE && debian(s))
		snprintf(out, len, "a bridge for its network interface; empty: the NAT network %s (made if need be)",
			 LODGE_NETWORK_DEFAULT);
	else if (i == F_BRIDGE)
		snprintf(out, len, "a bridge, new:NAME, empty: no network");
	else if (i == F_CREATE && debian(s))
		snprintf(out, len, "Enter installs (it runs on in the table, D there cancels it), Esc cancels");
	else if (specs[i].hint)
		snprintf(out, len, "%s", specs[i].hint);
	else
		domain_form_hint(specs[i].form, out, len);
	/* A guest that needs more than the schema's default says why its
	 * field shows another number. */
	if (i == F_MEMORY && guest_memory(s) != DOMAIN_MEMORY_DEFAULT_MIB) {
		size_t n = strlen(out);

		snprintf(out + n, len - n, "; %s: %u", debian(s) ? "a Debian install's default" : "the Debian guest's",
			 guest_memory(s));
	}
}

/* prefix and text from line y on, wrapped: the next free line. */
static int put_message(int y, const char *prefix, const char *text)
{
	char line[TUI_MESSAGE_MAX + 16];

	snprintf(line, sizeof(line), "%s%s", prefix, text);
	return put_wrapped(y, 0, 0, LINES, line);
}

/* Everything valid: the library makes the domain, its new disk and
 * bridge (mkfs.ext4 may take seconds: the bottom line says so). */
static int create_domain(struct tui *t, struct form_state *s)
{
	static struct domain_form form;
	struct lodge_form_opts o = { .ext4 = strcmp(s->f[F_FORMAT].value, "ext4") == 0 };
	struct lodge_form_result res;
	struct lodge_err err;

	to_form(s, &form);
	if (lodge_form_new_disk(&form)) {
		mvprintw(LINES - 1, 0, "making %s's disk...", form.value[FORM_NAME]);
		clrtoeol();
		refresh();
	}
	if (lodge_form_create(t->lg, &form, &o, &res, &err)) {
		tui_status(t, true, "%s", err.msg);
		return -1;
	}
	tui_status(t, false, "created %s; its config is %s", form.value[FORM_NAME], res.config);
	return 0;
}

/* Everything valid: the install checked whole by the library (its
 * refusal, whole, in the form), then run on in a child (install.c). */
static int install_debian(struct tui *t, struct form_state *s)
{
	struct field *f = s->f;
	struct lodge_install_opts o = {
		.name = f[F_NAME].value, .dist = f[F_DIST].value,
		.memory_mib = (unsigned)strtoul(f[F_MEMORY].value, NULL, 10),
		.vcpus = (unsigned)strtoul(f[F_VCPUS].value, NULL, 10),
		.bridge = f[F_BRIDGE].value[0] ? f[F_BRIDGE].value : NULL,
		.packages = f[F_PACKAGES].value[0] ? f[F_PACKAGES].value : NULL,
		.ssh_key_file = f[F_SSH_KEY].value[0] ? f[F_SSH_KEY].value : NULL,
		.password_file = f[F_PASSWORD].value[0] ? f[F_PASSWORD].value : NULL,
	};
	struct lodge_err err;
	unsigned long mib = 0;

	if (s->guest == G_DEBIAN_FILE) {
		lodge_parse_mib(f[F_SIZE].value, &mib);      /* checked: check_size */
		o.size = (uint64_t)mib << 20;
	} else {
		o.disk = f[F_PART].value;
	}
	mvprintw(LINES - 1, 0, "checking the install of %s...", o.name);
	clrtoeol();
	refresh();
	if (install_start(t, &o, &err)) {
		tui_status(t, true, "nothing installed: %s", err.msg);
		return -1;
	}
	tui_status(t, false, "installing %s (Debian %s): its row shows how far; D there cancels it", o.name, o.dist);
	return 0;
}

/* The form's other guest: the memory default follows it, unless typed. */
static void switch_guest(struct tui *t, struct form_state *s, enum guest to)
{
	bool untyped = (unsigned)strtoul(s->f[F_MEMORY].value, NULL, 10) == guest_memory(s);

	s->guest = to;
	if (untyped)
		snprintf(s->f[F_MEMORY].value, sizeof(s->f[F_MEMORY].value), "%u", guest_memory(s));
	validate_all(t, s);
}

void view_create(struct tui *t)
{
	static struct form_state s;
	struct field *f = s.f;
	unsigned vis[F_COUNT], nvis, cur, i;
	int c, was;

	memset(&s, 0, sizeof(s));
	s.guest = G_MINIOS;
	default_guest_here(&s.g);
	snprintf(f[F_MEMORY].value, sizeof(f[0].value), "%u", s.g.memory_mib);
	snprintf(f[F_VCPUS].value, sizeof(f[0].value), "%u", DOMAIN_VCPUS_DEFAULT);
	copy(f[F_KERNEL].value, sizeof(f[0].value), s.g.kernel);
	copy(f[F_RAMDISK].value, sizeof(f[0].value), s.g.ramdisk);
	copy(f[F_CMDLINE].value, sizeof(f[0].value), s.g.cmdline);
	snprintf(f[F_FORMAT].value, sizeof(f[0].value), "blank");
	snprintf(f[F_MAC].value, sizeof(f[0].value), "auto");
	snprintf(f[F_DIST].value, sizeof(f[0].value), "%s", LODGE_DIST_DEFAULT);
	snprintf(f[F_SIZE].value, sizeof(f[0].value), "%lluG", LODGE_INSTALL_SIZE_DEFAULT >> 30);
	validate_all(t, &s);
	cur = F_NAME;                  /* the guest's choice above it is rarely changed */
	was = tui_modal_begin();
	for (;;) {
		bool ok = true;
		unsigned row = 0;
		char hint[256];

		for (nvis = 0, i = 0; i < F_COUNT; i++)
			if (asked(&s, i)) {
				if (i == cur)
					row = nvis;
				vis[nvis++] = i;
			}
		erase();
		mvprintw(0, 0, "Create a domain (Up/Down/Tab move, type to edit, Esc cancels)");
		/* Which guest, and why (the default guest's reason; a
		 * template's size and kernel). */
		mvprintw(1, 0, "%.*s", COLS - 1, debian(&s) ? s.dist_note : s.g.why);
		for (i = 0; i < nvis; i++) {
			unsigned k = vis[i];
			int y = 2 + (int)i;
			char guest[64];
			const char *v = f[k].value;

			if (k == F_GUEST) {
				/* Which kernel: the default guest's (its why is above). */
				snprintf(guest, sizeof(guest), "%s%s", guest_words[s.guest],
					 s.guest != G_MINIOS ? "" : s.g.debian ? " (the Debian guest)" : " (Mini-OS)");
				v = guest;
			}

			if (k < F_CREATE && f[k].error[0])
				ok = false;
			if (k == cur)
				attron(A_REVERSE);
			mvprintw(y, 0, "%-16s", k == F_CREATE && debian(&s) ? "[ Install ]" : specs[k].label);
			attroff(A_REVERSE);
			if (k < F_CREATE) {
				printw(" %-*.*s", COLS > 60 ? 36 : 20, COLS > 60 ? 36 : 20, v);
				if (f[k].error[0]) {
					attron(A_BOLD);
					printw(" ! %.*s", COLS - 58 > 0 ? COLS - 58 : 0, f[k].error);
					attroff(A_BOLD);
				}
			}
		}
		{
			/* The field's message whole (beside it, it is cut to fit). */
			int y;

			hint_of(t, &s, cur, hint, sizeof(hint));
			y = put_message(3 + (int)nvis, "", hint);
			if (cur < F_CREATE && f[cur].error[0])
				y = put_message(y, "! ", f[cur].error);
			if (!ok)
				y = put_message(y, "", debian(&s) ? "Fix the fields marked ! to install."
								   : "Fix the fields marked ! to create.");
			if (pvm_note(&s))
				y = put_message(y, "note: ", pvm_note(&s));
			if (t->status[0])
				put_message(y + 1, t->status_error ? "error: " : "", t->status);
		}
		move(2 + (int)row, 17 + (cur < F_CREATE && cur != F_GUEST ? (int)strlen(f[cur].value) : 0));
		refresh();
		c = getch();
		if (c == 27 || c == ERR)        /* ERR: a signal, or the terminal gone */
			break;
		if (c == KEY_UP && row)
			cur = vis[row - 1];
		else if (c == KEY_DOWN || c == '\t')
			cur = vis[(row + 1) % nvis];
		else if (c == KEY_BTAB)
			cur = vis[row ? row - 1 : nvis - 1];
		else if (cur == F_GUEST && (c == ' ' || c == KEY_RIGHT || c == KEY_LEFT))
			switch_guest(t, &s, (s.guest + (c == KEY_LEFT ? G_COUNT - 1 : 1)) % G_COUNT);
		else if (c == 2 && (cur == F_DISK || cur == F_PART)) {            /* Ctrl-B */
			char what[LODGE_DIST_MAX + 32];

			snprintf(what, sizeof(what), "the %s template", s.tmpl.dist);
			tui_pick_blockdev(t, f[cur].value, sizeof(f[cur].value), cur == F_PART ? s.tmpl.bytes : 0, what);
			validate(t, &s, cur);
		} else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
			if (cur != F_CREATE) {
				cur = vis[row + 1 < nvis ? row + 1 : row];
				continue;
			}
			validate_all(t, &s);
			for (ok = true, i = 0; i < F_CREATE; i++)
				ok = ok && !f[i].error[0];
			if (!ok) {
				tui_status(t, true, "nothing %s: fix the fields marked !", debian(&s) ? "installed" : "created");
				continue;
			}
			if ((debian(&s) ? install_debian(t, &s) : create_domain(t, &s)) == 0)
				break;
		} else if (cur < F_CREATE && cur != F_GUEST) {
			size_t n = strlen(f[cur].value);

			if ((c == KEY_BACKSPACE || c == 127 || c == 8) && n)
				f[cur].value[n - 1] = '\0';
			else if (c >= 32 && c < 127 && n + 1 < sizeof(f[cur].value)) {
				f[cur].value[n] = c;
				f[cur].value[n + 1] = '\0';
			}
			if (cur == F_DIST)
				validate_all(t, &s);       /* the sizes follow its template */
			else
				validate(t, &s, cur);
		}
	}
	tui_modal_end(was);
	erase();
}

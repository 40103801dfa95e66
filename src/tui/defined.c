/* The defined domains in the table (issue 35): every config of
 * domains_dir that is not running has a row, state off (off* when it
 * autostarts), with its config's memory and vCPUs.  On such a row S
 * starts it, D deletes its config (and, asked a second time, its disks
 * under storage_dirs), and on any row of a defined domain e edits its
 * config in $EDITOR (checked by the config loader, refused with
 * FILE:LINE and offered again) and A turns autostart on or off.  All
 * through liblodge's lodge_defined_* calls, as the lodge command and the
 * web page. */
#include "tui.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void defined_sample(struct tui *t, struct dom_sample *(*add)(struct tui *t, const char *name))
{
	struct lodge_defined_list l;
	unsigned i, j;

	if (lodge_defined_list(t->lg, &l, NULL))
		return;
	for (i = 0; i < l.n; i++) {
		const struct lodge_defined *def = &l.dom[i];
		struct dom_sample *d;
		bool shown = false;

		if (def->running || lodge_poller_knows(t->poller, def->name))
			continue;
		for (j = 0; j < t->ndoms && !shown; j++)
			shown = strcmp(t->doms[j].st.name, def->name) == 0 && !t->doms[j].off;
		if (shown || !(d = add(t, def->name)))
			continue;          /* an install's row, the pool's: theirs */
		d->off = true;
		d->autostart = def->autostart;
		d->loads = def->loads;
		d->st.state = DOMAIN_STATE_OFF;
		d->st.memory_mib = d->st.target_mib = def->loads ? def->memory_mib : 0;
		d->st.vcpus = def->loads ? def->vcpus : 0;
		snprintf(d->why, sizeof(d->why), "%.500s", def->why);
	}
	lodge_defined_list_free(&l);
}

/* The last line of a library error: lodge-hyp's lines come before it. */
static const char *last_line(const char *msg)
{
	const char *nl = strrchr(msg, '\n');

	return nl && nl[1] ? nl + 1 : msg;
}

bool defined_start(struct tui *t, struct dom_sample *d)
{
	struct lodge_err err;

	if (!d || !d->off)
		return false;
	if (lodge_defined_start(t->lg, d->st.name, &err))
		tui_status(t, true, "domain %s did not start: %s", d->st.name, last_line(err.msg));
	else
		tui_status(t, false, "started %s", d->st.name);
	t->resample = true;
	return true;
}

bool defined_delete(struct tui *t, struct dom_sample *d)
{
	struct lodge_err err;
	char q[160];
	bool disks;

	if (!d || !d->off)
		return false;
	snprintf(q, sizeof(q), "Delete the config of %s (its disks are kept)?", d->st.name);
	if (!tui_confirm(t, q)) {
		if (!tui_interrupted())
			tui_status(t, false, "delete cancelled: %s is kept", d->st.name);
		return true;
	}
	snprintf(q, sizeof(q), "Also delete the disks of %s (files under storage_dirs, no other's)?", d->st.name);
	disks = tui_confirm(t, q);
	if (lodge_defined_delete(t->lg, d->st.name, disks, &err))
		tui_status(t, true, "%s: %s", d->st.name, err.msg);
	else
		tui_status(t, false, "deleted the config of %s%s", d->st.name,
			   disks ? " and its disks (the message history says which)" : "");
	t->resample = true;
	return true;
}

void defined_autostart(struct tui *t, struct dom_sample *d)
{
	struct lodge_defined_list l;
	struct lodge_err err;
	bool on = true;
	unsigned i;

	if (!d) {
		tui_status(t, true, "Domain-0 is the host: select a domain");
		return;
	}
	/* The file's word, not the row's: a running domain's row has none. */
	if (lodge_defined_list(t->lg, &l, &err) == 0) {
		for (i = 0; i < l.n; i++)
			if (strcmp(l.dom[i].name, d->st.name) == 0)
				on = !l.dom[i].autostart;
		lodge_defined_list_free(&l);
	}
	if (lodge_defined_autostart(t->lg, d->st.name, on, &err))
		tui_status(t, true, "autostart of %s: %s", d->st.name, err.msg);
	else
		tui_status(t, false, "autostart of %s: %s", d->st.name, on ? "on" : "off");
	t->resample = true;
}

/* The editor on file, the terminal its own until it exits: its status. */
static int run_editor(const char *file)
{
	const char *editor = getenv("VISUAL") && *getenv("VISUAL") ? getenv("VISUAL") :
			     getenv("EDITOR") && *getenv("EDITOR") ? getenv("EDITOR") : "vi";
	int status = -1;
	pid_t pid;

	def_prog_mode();
	endwin();
	if ((pid = fork()) == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* As git runs it: the words of $EDITOR, the file after them. */
		execl("/bin/sh", "sh", "-c", "exec $0 \"$1\"", editor, file, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	reset_prog_mode();
	clearok(stdscr, TRUE);
	refresh();
	return status;
}

/* The file by its name: an editor may have written a new one in its
 * place (vim's backupcopy, sed -i), which the descriptor kept would miss. */
static char *read_all(const char *path)
{
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap + 1), *grown;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((got = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)got;
		if (n == cap) {
			if (cap >= 1024 * 1024 || !(grown = realloc(buf, cap * 2 + 1)))
				break;      /* the library refuses what is over 1 MiB */
			buf = grown;
			cap *= 2;
		}
	}
	close(fd);
	buf[n] = '\0';
	return buf;
}

void defined_edit(struct tui *t, struct dom_sample *d)
{
	char tmp[] = "/tmp/lodge-edit.XXXXXX", q[TUI_MESSAGE_MAX + 64];
	struct lodge_err err;
	char *text = NULL;
	bool written;
	int fd, status;

	if (!d) {
		tui_status(t, true, "Domain-0 is the host: select a domain");
		return;
	}
	if (lodge_defined_text(t->lg, d->st.name, &text, &err)) {
		tui_status(t, true, "edit %s: %s", d->st.name, err.msg);
		return;
	}
	fd = mkstemp(tmp);
	written = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	if (fd >= 0 && close(fd) < 0)
		written = false;
	if (!written) {
		tui_status(t, true, "edit %s: cannot write %s: %s", d->st.name, tmp, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		free(text);
		return;
	}
	free(text);
	for (;;) {
		status = run_editor(tmp);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			tui_status(t, true, "edit %s: the editor failed (status %d): the config is as it was",
				   d->st.name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			break;
		}
		if (!(text = read_all(tmp))) {
			tui_status(t, true, "edit %s: cannot read %s back", d->st.name, tmp);
			break;
		}
		if (lodge_defined_write(t->lg, d->st.name, text, false, &err) == 0) {
			free(text);
			tui_status(t, false, "saved the config of %s%s", d->st.name,
				   d->off ? "" : " (it runs on as it was started: the config is the next start's)");
			break;
		}
		free(text);
		/* The loader's FILE:LINE: KEY: why, and the edit offered again. */
		erase();
		put_wrapped(0, 0, 0, LINES - 3, err.msg);
		snprintf(q, sizeof(q), "Refused; edit again (n: the config is kept as it was)?");
		if (!tui_confirm(t, q)) {
			tui_status(t, true, "%s (not saved)", err.msg);
			break;
		}
	}
	unlink(tmp);
	t->resample = true;
}

int defined_detail(struct tui *t, const struct dom_sample *d, int y)
{
	char line[CFG_PATH_MAX + LODGE_ERR_MAX + 64];
	int bottom = LINES - bars_rows(t);

	if (d->loads)
		snprintf(line, sizeof(line), "%s: defined, not running: %lu MiB, %u vCPUs, autostart %s", d->st.name,
			 d->st.memory_mib, d->st.vcpus, d->autostart ? "on" : "off");
	else
		snprintf(line, sizeof(line), "%s: defined, not running; its config does not load: %s", d->st.name,
			 d->why);
	y = put_wrapped(y, 0, 9, bottom, line);
	snprintf(line, sizeof(line), "config   %s/%s.cfg", t->hc.domains_dir, d->st.name);
	y = put_wrapped(y, 0, 9, bottom, line);
	return put_wrapped(y, 0, 9, bottom, "keys     S starts it, e edits its config, A turns autostart on or off, "
			   "D deletes it (asks twice: the config, then its disks)");
}

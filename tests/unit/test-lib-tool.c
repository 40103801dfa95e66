/* The helper-program runner (src/lib/client/tool.h), with real programs:
 * the descriptors it keeps open in the tool and no others, the bare
 * environment the seed's tools get, the output lines, the exit status,
 * a program that is not there, and a tool that ends with its caller. */
#include "tool.h"
#include "unit.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct lines {
	char text[1024];
	unsigned n;
};

static void take_line(const char *line, void *arg)
{
	struct lines *l = arg;
	size_t len = strlen(l->text);

	snprintf(l->text + len, sizeof(l->text) - len, "%s%s", l->n++ ? "|" : "", line);
}

static int memfd_with(const char *text)
{
	int fd = memfd_create("tool-test", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* sh -c SCRIPT with keep[nkeep]: its exit status, its lines in l. */
static int run_sh(const char *script, const int *keep, unsigned nkeep, bool bare, struct lines *l)
{
	const char *argv[] = { "sh", "-c", script, NULL };
	struct tool_run t = { .argv = argv, .keep = keep, .nkeep = nkeep, .bare_env = bare, .line = take_line,
			      .arg = l };

	memset(l, 0, sizeof(*l));
	return tool_run(&t);
}

static bool gone(pid_t pid)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (kill(pid, 0) < 0 && errno == ESRCH)
			return true;
		poll(NULL, 0, 50);
	}
	return false;
}

int main(void)
{
	char script[256];
	struct lines l;
	int a = memfd_with("first\n"), b = memfd_with("second\n"), c = memfd_with("third\n"), rc;
	int kept[2] = { a, b };

	CHECK("fixtures: three memfds", a >= 0 && b >= 0 && c >= 0);

	/* Two descriptors kept, a third (close-on-exec) not: the seed hands
	 * mcopy its image and a text as /proc/self/fd/N. */
	snprintf(script, sizeof(script), "cat /proc/self/fd/%d /proc/self/fd/%d; test -e /proc/self/fd/%d || echo none",
		 a, b, c);
	rc = run_sh(script, kept, 2, false, &l);
	CHECK("both kept descriptors are open in the tool, the third is not",
	      rc == 0 && !strcmp(l.text, "first|second|none"));

	/* The environment: the caller's (PATH and LC_ALL ours), or bare. */
	setenv("HOME", "/nowhere-home", 1);
	setenv("LC_ALL", "de_DE.UTF-8", 1);
	rc = run_sh("echo \"[$HOME][$LC_ALL][$PATH]\"", NULL, 0, false, &l);
	CHECK("the caller's environment, with LC_ALL=C and the fixed PATH",
	      rc == 0 && !strcmp(l.text, "[/nowhere-home][C][/usr/sbin:/usr/bin:/sbin:/bin]"));
	rc = run_sh("echo \"[$HOME][$LC_ALL]\"; env | wc -l", NULL, 0, true, &l);
	CHECK("bare_env: no HOME (no ~/.mtoolsrc for mtools), LC_ALL=C, and little else",
	      rc == 0 && !strncmp(l.text, "[][C]|", 6) && atoi(l.text + 6) <= 4);

	/* Status and words. */
	rc = run_sh("echo one; echo; echo '  two  ' >&2; exit 3", NULL, 0, false, &l);
	CHECK("its exit status, its non-empty lines (stderr too) trimmed", rc == 3 && !strcmp(l.text, "one|two"));
	{
		const char *argv[] = { "no-such-tool-lodge", NULL };
		struct tool_run t = { .argv = argv };

		CHECK("a program not installed: -ENOENT", tool_run(&t) == -ENOENT);
	}

	/* Its caller killed: the tool ends too (SIGTERM, as a cancel). */
	{
		int pfd[2];
		pid_t caller = -1, tool = 0;

		if (pipe(pfd) == 0 && (caller = fork()) == 0) {
			const char *argv[] = { "sh", "-c", "echo $$ >&3; exec sleep 100", NULL };
			int three = 3;
			struct tool_run t = { .argv = argv, .keep = &three, .nkeep = 1 };

			close(pfd[0]);
			dup2(pfd[1], 3);
			tool_run(&t);
			_exit(0);
		} else if (caller > 0) {
			FILE *f;

			close(pfd[1]);
			f = fdopen(pfd[0], "r");
			if (f && fscanf(f, "%d", &tool) != 1)
				tool = 0;
			kill(caller, SIGKILL);
			waitpid(caller, NULL, 0);
			CHECK("its caller killed, the tool ends with it", tool > 0 && gone(tool));
			if (tool > 0)
				kill(tool, SIGKILL);
			if (f)
				fclose(f);
		} else {
			CHECK("its caller killed, the tool ends with it (a pipe and a fork to try)", false);
		}
	}
	UNIT_EXIT();
}

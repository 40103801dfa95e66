/* lodge-web: the program behind `lodge web` and `lodge web-passwd`
 * (README: why a program of its own).  lodge reads the command line with
 * its one table and runs
 *
 *   lodge-web [--root DIR] serve [--listen ADDR:PORT] [--cert FILE --key FILE] [--server-name NAME]
 *   lodge-web [--root DIR] passwd USER [--role admin|viewer]
 *
 * which may also be run as it is (the systemd unit runs lodge web). */
#include "web.h"
#include "exit-status.h"
#include "log.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define DEFAULT_LISTEN "127.0.0.1:8080"

static int usage(void)
{
	log_err("usage: lodge-web [--root DIR] serve [--listen ADDR:PORT] [--cert FILE --key FILE] | "
		"passwd USER [--role admin|viewer]");
	return EXIT_USAGE;
}

/* The page's files: share/lodge/web beside the program's directory, as
 * both make install (PREFIX/sbin, PREFIX/share) and the build tree
 * (build/, share/) lay them out; xterm.js's bundle in its xterm/, or in
 * the build tree build/web/xterm/ (made by make, never in the sources). */
static void find_web_dirs(char *page, char *xterm, size_t len)
{
	char exe[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		snprintf(page, len, "/usr/share/lodge/web");
		snprintf(xterm, len, "/usr/share/lodge/web/xterm");
		return;
	}
	exe[n] = '\0';
	dir = dirname(exe);
	snprintf(page, len, "%s/../share/lodge/web", dir);
	if ((size_t)snprintf(xterm, len, "%s/xterm/xterm.js", page) < len && access(xterm, R_OK) == 0 &&
	    (size_t)snprintf(xterm, len, "%s/xterm", page) < len)
		return;
	if ((size_t)snprintf(xterm, len, "%s/web/xterm", dir) >= len)
		xterm[0] = '\0';
}

static int serve(struct lodge *lg, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "server-name", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct web_options o = { .listen = DEFAULT_LISTEN };
	char dir[PATH_MAX + 32], xterm[PATH_MAX + 32];
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "l:c:k:n:", opts, NULL)) != -1) {
		if (ch == 'l')
			o.listen = optarg;
		else if (ch == 'c')
			o.cert = optarg;
		else if (ch == 'k')
			o.key = optarg;
		else if (ch == 'n')
			o.server_name = optarg;
		else
			return usage();
	}
	if (optind != argc)
		return usage();
	if (!o.cert != !o.key) {
		log_err("--cert and --key go together (the certificate and its private key)");
		return EXIT_USAGE;
	}
	find_web_dirs(dir, xterm, sizeof(dir));
	web_static_dir(dir, xterm);
	return web_serve(lg, &o);
}

/* The password: from a terminal twice, unechoed; else stdin's first line. */
static int read_password(char *pw, size_t len)
{
	bool tty = isatty(STDIN_FILENO);
	struct termios old, quiet;
	char again[WEB_PASSWORD_MAX + 2];
	int rc = 0;

	if (tty) {
		tcgetattr(STDIN_FILENO, &old);
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
		fprintf(stderr, "Password: ");
	}
	if (!fgets(pw, (int)len, stdin))
		rc = -ENODATA;
	if (!rc && tty) {
		fprintf(stderr, "\nAgain: ");
		if (!fgets(again, sizeof(again), stdin) || strcmp(again, pw) != 0)
			rc = -EINVAL;
		explicit_bzero(again, sizeof(again));
	}
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		fprintf(stderr, "\n");
	}
	if (rc == -EINVAL)
		log_err("the two passwords differ");
	else if (rc)
		log_err("no password on standard input");
	else if (!strchr(pw, '\n') && !feof(stdin)) {
		log_err("the password is longer than %d bytes", WEB_PASSWORD_MAX);
		rc = -E2BIG;
	}
	pw[strcspn(pw, "\r\n")] = '\0';
	if (!rc && strlen(pw) < WEB_PASSWORD_MIN) {
		log_err("the password is shorter than %d characters", WEB_PASSWORD_MIN);
		rc = -EINVAL;
	}
	return rc;
}

static int passwd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "role", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	char pw[WEB_PASSWORD_MAX + 2], why[512], path[512];
	enum web_role role = WEB_ADMIN;
	int ch, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "r:", opts, NULL)) != -1) {
		if (ch == 'r' && web_role_parse(optarg, &role) == 0)
			continue;
		if (ch == 'r')
			log_err("--role '%s' is not one of: admin viewer", optarg);
		return ch == 'r' ? EXIT_USAGE : usage();
	}
	if (optind != argc - 1)
		return usage();
	if (web_user_valid(argv[optind], why, sizeof(why))) {
		log_err("'%s': %s", argv[optind], why);
		return EXIT_USAGE;
	}
	if (read_password(pw, sizeof(pw))) {
		explicit_bzero(pw, sizeof(pw));
		return EXIT_FAILED;
	}
	rc = web_users_set(argv[optind], pw, role, why, sizeof(why));
	explicit_bzero(pw, sizeof(pw));
	if (rc) {
		log_err("%s", why);
		return EXIT_FAILED;
	}
	web_users_path(path, sizeof(path));
	printf("%s: %s (%s)\n", path, argv[optind], web_role_name(role));
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	const char *root = getenv("LODGE_ROOT");
	struct lodge lg;
	struct lodge_err err;

	log_init("lodge web");
	if (argc > 2 && strcmp(argv[1], "--root") == 0) {
		root = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 2)
		return usage();
	if (lodge_open(&lg, root, &err)) {
		log_err("%s", err.msg);
		return EXIT_FAILED;
	}
	if (strcmp(argv[1], "serve") == 0)
		return serve(&lg, argc - 1, argv + 1);
	if (strcmp(argv[1], "passwd") == 0) {
		log_init("lodge web-passwd");    /* the command its user typed */
		return passwd(argc - 1, argv + 1);
	}
	return usage();
}

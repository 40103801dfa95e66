/* The page's files: a fixed list, each served from the web directory
 * (share/lodge/web, installed as PREFIX/share/lodge/web).  No path from
 * a request is ever joined to a directory, so no request reaches any
 * other file.  They hold no domain's data (that comes from the API,
 * behind a session): the page is also the login page. */
#include "web.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *uri, *file, *mime;
	bool xterm;                       /* from the xterm directory */
} files[] = {
	{ "/", "index.html", "text/html; charset=utf-8", false },
	{ "/index.html", "index.html", "text/html; charset=utf-8", false },
	{ "/lodge.css", "lodge.css", "text/css; charset=utf-8", false },
	{ "/lodge.js", "lodge.js", "text/javascript; charset=utf-8", false },
	{ "/xterm/xterm.js", "xterm.js", "text/javascript; charset=utf-8", true },
	{ "/xterm/xterm.css", "xterm.css", "text/css; charset=utf-8", true },
};

static char web_dir[512] = "/usr/local/share/lodge/web", xterm_dir[512] = "/usr/local/share/lodge/web/xterm";

void web_static_dir(const char *dir, const char *xterm)
{
	snprintf(web_dir, sizeof(web_dir), "%s", dir);
	snprintf(xterm_dir, sizeof(xterm_dir), "%s", xterm);
}

int web_static_find(const char *uri, char *path, size_t len, const char **mime)
{
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (strcmp(uri, files[i].uri) == 0) {
			snprintf(path, len, "%s/%s", files[i].xterm ? xterm_dir : web_dir, files[i].file);
			*mime = files[i].mime;
			return 0;
		}
	return -ENOENT;
}

/* lodge autostart: start every domain in DOMAINS_DIR marked autostart
 * that is not running yet (the systemd unit in share/ runs it at boot). */
#include "agent.h"
#include "domains.h"
#include "log.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

int cmd_autostart(int argc, char **argv)
{
	static struct domain_config dc;
	struct host_config hc;
	struct dom_status st;
	struct dirent *de;
	char path[CFG_PATH_MAX + 300], err[1024];
	int failed = 0, started = 0;
	DIR *d;

	if (argc != 1)
		return EXIT_USAGE;
	if (agent_host_config(&hc))
		return 1;
	d = opendir(hc.domains_dir);
	if (!d)
		return 0;      /* no domains configured */
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 5 || strcmp(de->d_name + len - 4, ".cfg") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", hc.domains_dir, de->d_name);
		if (domain_config_load(path, &hc, true, &dc, err, sizeof(err))) {
			log_err("%s", err);
			failed++;
			continue;
		}
		if (!dc.autostart || domain_status(hc.runtime_dir, dc.name, &st) == 0)
			continue;
		if (domain_start(&dc, &hc, false, -1)) {
			failed++;
			continue;
		}
		printf("started %s\n", dc.name);
		started++;
	}
	closedir(d);
	return failed ? 1 : 0;
}

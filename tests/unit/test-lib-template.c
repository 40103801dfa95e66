/* Templates without a build: the distributions Lodge knows, the
 * mmdebstrap command line a build runs (what every guest needs is in it,
 * its packages kept in the cache), a job's progress that only moves
 * forward and can be cancelled. */
#include "install.h"
#include "unit.h"

#include <string.h>

static bool has_arg(const struct template_cmd *c, const char *prefix, const char *within)
{
	unsigned i;

	for (i = 0; i < c->argc; i++)
		if (!strncmp(c->argv[i], prefix, strlen(prefix)) && (!within || strstr(c->argv[i], within)))
			return true;
	return false;
}

static int reports, last_pct, stop_after;
static bool backwards;

static bool listener(const struct lodge_job_progress *p, void *arg)
{
	backwards |= p->pct < last_pct;
	last_pct = p->pct;
	return ++reports != stop_after;
}

int main(void)
{
	static struct template_cmd c;
	const struct dist_info *d = dist_find("bookworm");
	char why[256];
	struct job j;
	bool ok;

	CHECK("bookworm is a distribution Lodge knows", d && !strcmp(d->version, "12"));
	CHECK("an unknown name is none", !dist_find("nosuch") && !dist_find("") && !dist_find(NULL));
	CHECK("the known ones in words name bookworm", strstr(dist_known(), "bookworm") != NULL);
	CHECK("the template's architecture is the host's", !strcmp(host_arch(), "amd64") || !strcmp(host_arch(), "arm64"));

	ok = d && template_cmd(&c, d, "/t/root", "/c/bookworm-amd64", NULL, why, sizeof(why)) == 0;
	CHECK("a bookworm build's command line", ok);
	CHECK("... runs mmdebstrap in root mode into a directory",
	      ok && !strcmp(c.argv[0], "mmdebstrap") && has_arg(&c, "--mode=root", NULL) &&
	      has_arg(&c, "--format=directory", NULL) && !c.argv[c.argc]);
	CHECK("... includes the cloud kernel, initramfs-tools, systemd, ssh and cloud-init",
	      ok && has_arg(&c, "--include=", "linux-image-cloud-") && has_arg(&c, "--include=", "initramfs-tools") &&
	      has_arg(&c, "--include=", "systemd-sysv") && has_arg(&c, "--include=", "openssh-server") &&
	      has_arg(&c, "--include=", "cloud-init"));
	CHECK("... keeps the downloaded packages in the cache (sync-in, sync-out, essential/unlink skipped)",
	      ok && has_arg(&c, "--setup-hook=sync-in /c/bookworm-amd64 ", NULL) &&
	      has_arg(&c, "--customize-hook=sync-out /var/cache/apt/archives /c/bookworm-amd64", NULL) &&
	      has_arg(&c, "--skip=essential/unlink", NULL));
	CHECK("... builds bookworm into the target, then its apt sources, each a deb line of bookworm",
	      ok && c.argc > 3 && has_arg(&c, "/t/root", NULL) && has_arg(&c, "deb ", " bookworm") &&
	      !has_arg(&c, "deb-src", NULL));
	ok = d && template_cmd(&c, d, "/t/root", "/c/bookworm-amd64", "http://mirror.example/debian", why,
			       sizeof(why)) == 0;
	CHECK("lodge.conf's template_mirror: its bookworm and bookworm-updates, Debian's security archive, "
	      "and none of the host's sources",
	      ok && has_arg(&c, "deb http://mirror.example/debian bookworm main", NULL) &&
	      has_arg(&c, "deb http://mirror.example/debian bookworm-updates main", NULL) &&
	      has_arg(&c, "deb http://deb.debian.org/debian-security bookworm-security main", NULL) &&
	      !strncmp(c.argv[c.argc - 3], "deb http://mirror.example/", 26));
	CHECK("a cache path with a space is refused (sync-in reads words)",
	      d && template_cmd(&c, d, "/t/root", "/c/with space", NULL, why, sizeof(why)) < 0 && strstr(why, "space"));

	job_init(&j, JOB_TEMPLATE_PHASES | PHASE_BIT(LODGE_PHASE_CLONE), listener, NULL);
	job_report(&j, LODGE_PHASE_FETCH, 50, NULL);
	job_report(&j, LODGE_PHASE_FETCH, 10, NULL);      /* a new bar within the phase */
	job_report(&j, LODGE_PHASE_UPDATE, 90, NULL);     /* a stage line late */
	job_report(&j, LODGE_PHASE_INSTALL, 30, NULL);
	job_report(&j, LODGE_PHASE_CLONE, 100, NULL);
	CHECK("a job's percent never goes back, and ends at 100", !backwards && last_pct == 100 && j.phase == LODGE_PHASE_CLONE);
	reports = 0;
	stop_after = 2;
	job_init(&j, PHASE_BIT(LODGE_PHASE_CLONE), listener, NULL);
	ok = job_report(&j, LODGE_PHASE_CLONE, 10, NULL);
	CHECK("the listener's false cancels the job, for good",
	      ok && !job_report(&j, LODGE_PHASE_CLONE, 20, NULL) && !job_tick(&j) && reports == 2);
	CHECK("each phase has its words", !strcmp(lodge_phase_words(LODGE_PHASE_CLONE), "cloning the template") &&
	      strcmp(lodge_phase_words(LODGE_PHASE_FETCH), "?"));
	UNIT_EXIT();
}

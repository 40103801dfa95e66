/* Host CPU lists (Xen's syntax, checked against a host) and the domain
 * CPU cgroup: the weight mapping, and a real cgroup made, set, left and
 * removed when this host has a CPU controller and we are root. */
#include "cgroup.h"
#include "cpulist.h"
#include "unit.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int parses_to(const char *text, const cpu_set_t *host, const char *want)
{
	char why[256], got[256];
	cpu_set_t set;

	if (cpulist_parse(text, host, &set, why, sizeof(why)))
		return 0;
	cpulist_format(&set, got, sizeof(got));
	if (strcmp(got, want) != 0)
		printf("# '%s' gave '%s', want '%s'\n", text, got, want);
	return strcmp(got, want) == 0;
}

static int refused(const char *text, const cpu_set_t *host, const char *words)
{
	char why[256] = "";
	cpu_set_t set;

	if (cpulist_parse(text, host, &set, why, sizeof(why)) == 0)
		return 0;
	if (!strstr(why, words))
		printf("# '%s': \"%s\" lacks \"%s\"\n", text, why, words);
	return strstr(why, words) != NULL;
}

static void test_cpulist(void)
{
	cpu_set_t host, four;
	char buf[16];
	unsigned i;

	CPU_ZERO(&four);
	for (i = 0; i < 4; i++)
		CPU_SET(i, &four);
	CHECK("one CPU", parses_to("2", &four, "2"));
	CHECK("a range", parses_to("0-3", &four, "0-3"));
	CHECK("a list", parses_to("0,2", &four, "0,2"));
	CHECK("ranges and CPUs join", parses_to("3,0-1,2", &four, "0-3"));
	CHECK("^ leaves one out", parses_to("0-3,^1", &four, "0,2-3"));
	CHECK("all is the host's CPUs", parses_to("all", &four, "0-3"));
	CHECK("without a host, any CPU", parses_to("100-101", NULL, "100-101"));
	CHECK("a CPU the host lacks", refused("4", &four, "CPU 4 is not on this host (it has CPUs 0-3)"));
	CHECK("a range past the host", refused("2-9", &four, "CPU 4 is not on this host"));
	CHECK("negative", refused("-1", &four, "is not a CPU list"));
	CHECK("letters", refused("one", &four, "is not a CPU list"));
	CHECK("empty", refused("", &four, "is not a CPU list"));
	CHECK("trailing comma", refused("0,", &four, "is not a CPU list"));
	CHECK("backwards range", refused("3-1", &four, "runs backwards"));
	CHECK("beyond CPU_SETSIZE", refused("99999", NULL, "is beyond"));
	CHECK("nothing left", refused("1,^1", &four, "leaves no CPU"));
	CPU_ZERO(&four);
	for (i = 0; i < 40; i++)
		CPU_SET(i * 2, &four);
	cpulist_format(&four, buf, sizeof(buf));
	CHECK("format truncates to fit", strlen(buf) < sizeof(buf));
	CHECK("this host has CPUs", cpulist_host(&host) == 0 && CPU_COUNT(&host) >= 1 && CPU_ISSET(0, &host));
}

static void test_weights(void)
{
	CHECK("v2: Xen's default is the kernel's", cgroup_v2_weight(256) == 100);
	CHECK("v2: 512 is twice 256", cgroup_v2_weight(512) == 200);
	CHECK("v2: clamped to 1..10000", cgroup_v2_weight(1) == 1 && cgroup_v2_weight(65535) == 10000);
	CHECK("v1: weight * 4", cgroup_v1_shares(256) == 1024 && cgroup_v1_shares(512) == 2048);
	CHECK("v1: every Xen weight fits", cgroup_v1_shares(1) == 4 && cgroup_v1_shares(65535) == 262140);
}

static long read_long(const char *dir, const char *file)
{
	char path[2300], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (!(f = fopen(path, "r")))
		return -99;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (strncmp(buf, "max", 3) == 0)
		return -1;
	return atol(buf);
}

/* A real cgroup for a child that sleeps: made, weighted, capped, removed. */
static void test_real_cgroup(void)
{
	struct cgroup_cpu cg;
	char rel[64], parent[2100];
	pid_t child;
	int v2, rc;

	snprintf(rel, sizeof(rel), "lodge-unit-%d/dom", (int)getpid());
	if (geteuid() != 0 || cgroup_cpu_open(&cg, rel) == -ENODEV) {
		printf("SKIP: real CPU cgroup: %s\n", geteuid() ? "needs root" : "no CPU controller mounted");
		return;
	}
	v2 = strcmp(cgroup_cpu_kind(&cg), "cgroup v2") == 0;
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	rc = cgroup_cpu_create(&cg, child);
	CHECK("create a domain cgroup and move a process in", rc == 0 && cgroup_cpu_first_task(&cg) == child);
	CHECK("weight 512", cgroup_cpu_set_weight(&cg, 512) == 0 &&
	      read_long(cg.dir, v2 ? "cpu.weight" : "cpu.shares") == (v2 ? 200 : 2048));
	CHECK("weight 0 refused", cgroup_cpu_set_weight(&cg, 0) == -ERANGE &&
	      read_long(cg.dir, v2 ? "cpu.weight" : "cpu.shares") == (v2 ? 200 : 2048));
	if (v2) {
		CHECK("cap 25: 25 ms of every 100 ms", cgroup_cpu_set_cap(&cg, 25) == 0 &&
		      read_long(cg.dir, "cpu.max") == 25000);
		CHECK("cap 0: none", cgroup_cpu_set_cap(&cg, 0) == 0 && read_long(cg.dir, "cpu.max") == -1);
	} else {
		CHECK("cap 25: 25 ms of every 100 ms", cgroup_cpu_set_cap(&cg, 25) == 0 &&
		      read_long(cg.dir, "cpu.cfs_quota_us") == 25000 &&
		      read_long(cg.dir, "cpu.cfs_period_us") == 100000);
		CHECK("cap 0: none", cgroup_cpu_set_cap(&cg, 0) == 0 && read_long(cg.dir, "cpu.cfs_quota_us") == -1);
	}
	CHECK("busy while a task is in it", cgroup_cpu_remove(&cg) == -EBUSY);
	CHECK("leave and remove", cgroup_cpu_leave(&cg, child) == 0 && cgroup_cpu_remove(&cg) == 0 &&
	      access(cg.dir, F_OK) != 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	snprintf(parent, sizeof(parent), "%s/lodge-unit-%d", cg.mount, (int)getpid());
	CHECK("its empty parent goes with it", access(parent, F_OK) != 0);
	CHECK("found again by its directory", cgroup_cpu_at(&cg, cg.dir) == 0);
	snprintf(parent, sizeof(parent), "%s/../etc", cg.mount);
	CHECK("a directory outside the controller is refused", cgroup_cpu_at(&cg, parent) == -EINVAL &&
	      cgroup_cpu_at(&cg, "/etc") == -EINVAL);
}

int main(void)
{
	test_cpulist();
	test_weights();
	test_real_cgroup();
	UNIT_EXIT();
}

/* The defined domains (src/lib/domain/defined.c): domains_dir's configs listed
 * running or not, a config's text written only once the loader takes it
 * (refused with FILE:LINE, the file untouched), autostart set in the
 * file's own words, and delete: the config, and with disks only files
 * under storage_dirs that are the domain's alone.  No KVM: nothing runs
 * (the starts are tests/integ/defined.sh's).  Under a --root of its own. */
#include "lodge.h"
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char root[] = "/tmp/lodge-test-defined.XXXXXX";
static struct lodge lg;

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int main(void)
{
	struct lodge_defined_list l = { 0 };
	struct lodge_err err;
	char kernel[128], store[128], outside[128], conf[160], cfg[CFG_PATH_MAX + 64], text[2048], cmd[600];
	char vda[160], ro[160], out_disk[160], shared[160], *got = NULL;

	if (!mkdtemp(root)) {
		printf("FAIL: mkdtemp\n");
		return 1;
	}
	snprintf(kernel, sizeof(kernel), "%.64s/vmlinuz", root);
	snprintf(store, sizeof(store), "%.64s/store", root);
	snprintf(outside, sizeof(outside), "%.64s/outside", root);
	snprintf(conf, sizeof(conf), "%.64s/etc/lodge/domains", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s %s %s", store, outside, conf);
	if (system(cmd) != 0) {
		printf("FAIL: %s\n", cmd);
		return 1;
	}
	unit_write_file(kernel, "not a kernel, but a file");
	snprintf(conf, sizeof(conf), "%.64s/etc/lodge/lodge.conf", root);
	snprintf(text, sizeof(text), "storage_dirs = [ \"%s\" ]\n", store);
	unit_write_file(conf, text);
	CHECK("lodge_open under a root of the test's", lodge_open(&lg, root, &err) == 0);

	snprintf(vda, sizeof(vda), "%s/a-vda.img", store);
	snprintf(ro, sizeof(ro), "%s/base.img", store);
	snprintf(shared, sizeof(shared), "%s/shared.img", store);
	snprintf(out_disk, sizeof(out_disk), "%s/a-vdd.img", outside);
	unit_write_file(vda, "disk");
	unit_write_file(ro, "disk");
	unit_write_file(shared, "disk");
	unit_write_file(out_disk, "disk");
	snprintf(cfg, sizeof(cfg), "%s/a.cfg", lg.hc.domains_dir);
	snprintf(text, sizeof(text),
		 "# mine\nname = \"a\"\nmemory = 48\nvcpus = 2\nkernel = \"%s\"\n"
		 "disk = [ \"%s,raw,vda,rw\", \"%s,raw,vdb,ro\", \"%s,raw,vdc,rw\", \"%s,raw,vdd,rw\" ]\n",
		 kernel, vda, ro, shared, out_disk);
	unit_write_file(cfg, text);
	snprintf(cfg, sizeof(cfg), "%s/b.cfg", lg.hc.domains_dir);
	snprintf(text, sizeof(text), "name = \"b\"\nmemory = 32\nkernel = \"%s\"\nautostart = true\n"
		 "disk = [ \"%s,raw,vda,rw\" ]\n", kernel, shared);
	unit_write_file(cfg, text);
	snprintf(cfg, sizeof(cfg), "%s/c.cfg", lg.hc.domains_dir);
	unit_write_file(cfg, "name = \"c\"\nmemory = lots\n");

	CHECK("list: a, b, c by name, none running",
	      lodge_defined_list(&lg, &l, &err) == 0 && l.n == 3 && strcmp(l.dom[0].name, "a") == 0 &&
	      strcmp(l.dom[2].name, "c") == 0 && !l.dom[0].running && !l.dom[1].running);
	CHECK("list: a's memory, vCPUs and autostart off as its config says",
	      l.n == 3 && l.dom[0].loads && l.dom[0].memory_mib == 48 && l.dom[0].vcpus == 2 && !l.dom[0].autostart);
	CHECK("list: b autostart", l.n == 3 && l.dom[1].autostart);
	CHECK("list: c listed though it does not load, with why (FILE:LINE)",
	      l.n == 3 && !l.dom[2].loads && strstr(l.dom[2].why, "c.cfg:2"));
	lodge_defined_list_free(&l);

	CHECK("text: a's config as written", lodge_defined_text(&lg, "a", &got, &err) == 0 && got &&
	      strncmp(got, "# mine\n", 7) == 0);
	free(got);
	CHECK("text: no such domain is -ENOENT, named",
	      lodge_defined_text(&lg, "zz", &got, &err) == -ENOENT && strstr(err.msg, "no domain named zz"));
	CHECK("text: a path is no name", lodge_defined_text(&lg, "../a", &got, &err) == -EINVAL);

	snprintf(text, sizeof(text), "name = \"b\"\nmemory = 32\nvcpus = many\nkernel = \"%s\"\n", kernel);
	CHECK("write: a bad key is refused with the config's own FILE:LINE",
	      lodge_defined_write(&lg, "b", text, false, &err) == -EINVAL && strstr(err.msg, "/b.cfg:3"));
	CHECK("write: refused leaves the file as it was",
	      lodge_defined_text(&lg, "b", &got, &err) == 0 && strstr(got, "autostart = true"));
	free(got);
	snprintf(text, sizeof(text), "name = \"bb\"\nmemory = 32\nkernel = \"%s\"\n", kernel);
	CHECK("write: another name is refused (a config keeps its file's name)",
	      lodge_defined_write(&lg, "b", text, false, &err) == -EINVAL && strstr(err.msg, "bb"));
	snprintf(text, sizeof(text), "name = \"b\"\nmemory = 64\nkernel = \"%s\"\nautostart = true\n"
		 "disk = [ \"%s,raw,vda,rw\" ]\n", kernel, shared);
	CHECK("write: a good config replaces the file",
	      lodge_defined_write(&lg, "b", text, false, &err) == 0 && lodge_defined_list(&lg, &l, &err) == 0 &&
	      l.n == 3 && l.dom[1].memory_mib == 64);
	lodge_defined_list_free(&l);
	/* A web user: only what the config it replaces named, or lodge.conf lends. */
	snprintf(text, sizeof(text), "name = \"b\"\nmemory = 64\nkernel = \"%s\"\n"
		 "disk = [ \"%s,raw,vda,rw\", \"%s,raw,vdb,rw\" ]\n", kernel, shared, out_disk);
	CHECK("write lent_only: a disk outside storage_dirs, not named before, is -EACCES, named",
	      lodge_defined_write(&lg, "b", text, true, &err) == -EACCES && strstr(err.msg, "a-vdd.img"));
	snprintf(text, sizeof(text), "name = \"b\"\nmemory = 72\nkernel = \"%s\"\nautostart = true\n"
		 "disk = [ \"%s,raw,vda,rw\" ]\n", kernel, shared);
	CHECK("write lent_only: the kernel the config named and a disk under storage_dirs pass",
	      lodge_defined_write(&lg, "b", text, true, &err) == 0);

	CHECK("autostart on: a's file keeps its comment and gains the line",
	      lodge_defined_autostart(&lg, "a", true, &err) == 0 && lodge_defined_text(&lg, "a", &got, &err) == 0 &&
	      strstr(got, "# mine\n") && strstr(got, "autostart = true\n"));
	free(got);
	CHECK("autostart off: b's line replaced, not added",
	      lodge_defined_autostart(&lg, "b", false, &err) == 0 && lodge_defined_text(&lg, "b", &got, &err) == 0 &&
	      strstr(got, "autostart = false\n") && !strstr(got, "autostart = true"));
	free(got);
	CHECK("autostart of a config that does not load: refused with why",
	      lodge_defined_autostart(&lg, "c", true, &err) == -EINVAL && strstr(err.msg, "c.cfg:2"));

	CHECK("delete with disks: a's config is gone",
	      lodge_defined_delete(&lg, "a", true, &err) == 0 &&
	      lodge_defined_text(&lg, "a", &got, &err) == -ENOENT);
	CHECK("delete with disks: its own disk under storage_dirs is deleted", !exists(vda));
	CHECK("delete with disks: a read-only one, another's and one outside storage_dirs are kept",
	      exists(ro) && exists(shared) && exists(out_disk));
	CHECK("delete without disks: b's config alone",
	      lodge_defined_delete(&lg, "b", false, &err) == 0 && exists(shared));
	CHECK("delete: no such domain is -ENOENT", lodge_defined_delete(&lg, "b", false, &err) == -ENOENT);
	CHECK("delete with disks of a config that does not load: refused, nothing deleted",
	      lodge_defined_delete(&lg, "c", true, &err) == -EINVAL && exists(cfg));
	CHECK("delete of c without disks", lodge_defined_delete(&lg, "c", false, &err) == 0 && !exists(cfg));

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		printf("FAIL: %s\n", cmd);
	UNIT_EXIT();
}

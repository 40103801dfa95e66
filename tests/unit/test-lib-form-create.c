/* A domain made from a create form (src/lib/form/form-create.c), up to its
 * start: what is checked before anything is made, and that a failure
 * after the new disk was made leaves no disk.  No KVM and nothing
 * started: every case here fails before lodge-hyp would run (the starts
 * are tests/integ/web-api.sh's and tui.sh's).  Files go under a --root of
 * the test's own. */
#include "config-form.h"
#include "lodge.h"
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/lodge-test-form-create.XXXXXX";
static char kdir[128], kernel[160], other[128], img[CFG_PATH_MAX + 32], domains[CFG_PATH_MAX];
static struct lodge lg;

static void fill(struct domain_form *form, const char *disk)
{
	memset(form, 0, sizeof(*form));
	snprintf(form->value[FORM_NAME], FORM_VALUE_MAX, "fc");
	snprintf(form->value[FORM_MEMORY], FORM_VALUE_MAX, "32");
	snprintf(form->value[FORM_KERNEL], FORM_VALUE_MAX, "%s", kernel);
	snprintf(form->value[FORM_DISK], FORM_VALUE_MAX, "%s", disk);
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int main(void)
{
	static struct domain_form form;
	struct lodge_form_opts mine = { .ext4 = false }, lent = { .lent_only = true };
	struct lodge_form_result res;
	struct lodge_err err;
	char conf[160], cmd[600], text[1024];
	int rc;

	if (!mkdtemp(root)) {
		printf("FAIL: mkdtemp\n");
		return 1;
	}
	snprintf(kdir, sizeof(kdir), "%.64s/kernels", root);
	snprintf(kernel, sizeof(kernel), "%.128s/vmlinuz", kdir);
	snprintf(other, sizeof(other), "%.64s/other", root);
	snprintf(conf, sizeof(conf), "%.64s/etc/lodge", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s %s %s", kdir, other, conf);
	if (system(cmd) != 0) {
		printf("FAIL: %s\n", cmd);
		return 1;
	}
	unit_write_file(kernel, "not a kernel, but a file");
	/* Web users are lent the kernels' directory and another one for disks. */
	snprintf(text, sizeof(text), "kernel_dirs = [ \"%s\" ]\nstorage_dirs = [ \"%s\" ]\n", kdir, other);
	snprintf(conf + strlen(conf), sizeof(conf) - strlen(conf), "/lodge.conf");
	unit_write_file(conf, text);
	CHECK("lodge_open under a root of the test's", lodge_open(&lg, root, &err) == 0);
	snprintf(img, sizeof(img), "%.*s/fc-vda.img", CFG_PATH_MAX - 1, lg.hc.image_dir);
	memcpy(domains, lg.hc.domains_dir, sizeof(domains));

	fill(&form, "new:0");
	CHECK("new:0 is refused before anything is made, naming the disk",
	      lodge_form_check(&lg, &form, &mine, &res, &err) == -EINVAL && res.field == FORM_DISK &&
	      strstr(err.msg, "new:SIZE in MiB, 1 to 1048576"));
	fill(&form, "new:4");
	CHECK("a good form checks, with nothing made", lodge_form_check(&lg, &form, &mine, &res, &err) == 0 &&
	      !exists(img) && !exists(lg.hc.image_dir));
	CHECK("... and the new disk's size as the check read it, for the create", res.disk_mib == 4);

	/* A web user: the image directory is not under storage_dirs. */
	snprintf(cmd, sizeof(cmd), "mkdir -p %.500s", lg.hc.image_dir);
	if (system(cmd) != 0)
		printf("FAIL: %s\n", cmd);
	CHECK("for a web user a new disk outside storage_dirs is 403's -EACCES, naming the disk",
	      lodge_form_check(&lg, &form, &lent, &res, &err) == -EACCES && res.field == FORM_DISK &&
	      strstr(err.msg, "storage_dirs"));
	rc = lodge_form_create(&lg, &form, &lent, &res, &err);
	CHECK("... and lodge_form_create makes nothing", rc == -EACCES && !exists(img) && !res.disk[0]);

	/* A file where the disk would go is never made over, nor removed. */
	unit_write_file(img, "someone's");
	rc = lodge_form_create(&lg, &form, &mine, &res, &err);
	CHECK("a file at IMAGE_DIR/NAME-vda.img: -EEXIST naming the disk, the file left as it was",
	      rc == -EEXIST && res.field == FORM_DISK && strstr(err.msg, "never made over") && exists(img) &&
	      !res.disk[0]);
	unlink(img);

	/* A step after the disk fails (the config cannot be written: a
	 * file is where the domains directory should be): the disk is
	 * removed again. */
	rmdir(domains);
	unit_write_file(domains, "in the way");
	rc = lodge_form_create(&lg, &form, &mine, &res, &err);
	CHECK("a failure after the disk was made removes it (and says what failed)",
	      rc == -ENOTDIR && strstr(err.msg, "fc.cfg") && strstr(err.msg, "Not a directory") && !exists(img) &&
	      !res.disk[0]);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		printf("FAIL: %s\n", cmd);
	UNIT_EXIT();
}

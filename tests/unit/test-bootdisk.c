/* bootloader = "lodge": which kernel of /boot is the newest (Debian's order
 * of versions), the command line, and the reading of real ext4 images
 * (mkfs.ext4 -d; sfdisk for MBR and GPT) with every fault a guest's disk
 * may have: each refused with its one sentence. */
#include "bootdisk.h"
#include "schema.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[] = "/tmp/test-bootdisk-XXXXXX";

/* ---- the newest kernel ----------------------------------------------------- */

static const char *newest_of(const char *const *names, size_t n)
{
	static char best[256];
	size_t i;

	best[0] = '\0';
	for (i = 0; i < n; i++)
		bootdisk_pick_newest(best, sizeof(best), names[i], strlen(names[i]));
	return best;
}

static void test_versions(void)
{
	static const char *const boot[] = {
		"config-6.1.0-10-cloud-amd64", "vmlinuz-6.1.0-9-cloud-amd64", "initrd.img-6.1.0-11-cloud-amd64",
		"vmlinuz-6.1.0-10-cloud-amd64", "vmlinuz-6.1.0-10-cloud-amd64.dpkg-new", "vmlinuz-", "vmlinuz",
		"System.map-6.1.0-12-cloud-amd64", "vmlinuz-5.10.0-26-cloud-amd64",
	};
	static const char *const reversed[] = {
		"vmlinuz-5.10.0-26-cloud-amd64", "vmlinuz-6.1.0-10-cloud-amd64.dpkg-tmp", "vmlinuz-6.1.0-10-cloud-amd64",
		"vmlinuz-6.1.0-9-cloud-amd64",
	};
	char best[64] = "";

	CHECK("version: 6.1.0-10 is newer than 6.1.0-9 (numbers, not text)",
	      bootdisk_version_cmp("6.1.0-10-cloud-amd64", "6.1.0-9-cloud-amd64") > 0);
	CHECK("version: 6.1.0-9 is older than 6.1.0-10",
	      bootdisk_version_cmp("6.1.0-9-cloud-amd64", "6.1.0-10-cloud-amd64") < 0);
	CHECK("version: 6.1.0-9 is older than 6.10.0-1", bootdisk_version_cmp("6.1.0-9", "6.10.0-1") < 0);
	CHECK("version: 5.10.0-26 is older than 6.1.0-9", bootdisk_version_cmp("5.10.0-26", "6.1.0-9") < 0);
	CHECK("version: the same is the same", bootdisk_version_cmp("6.1.0-10-amd64", "6.1.0-10-amd64") == 0);
	CHECK("version: leading zeros do not count", bootdisk_version_cmp("6.01.0", "6.1.0") == 0);
	CHECK("version: ~ sorts before the release (6.1~rc1 < 6.1)", bootdisk_version_cmp("6.1~rc1", "6.1") < 0);
	CHECK("version: a longer version is newer (6.1.0-10 < 6.1.0-10.1)",
	      bootdisk_version_cmp("6.1.0-10", "6.1.0-10.1") < 0);
	CHECK("version: bytes above 127 compare without harm", bootdisk_version_cmp("6.1\xff", "6.1\x80") > 0);
	CHECK("newest of /boot: 6.1.0-10-cloud-amd64, whatever else is there",
	      !strcmp(newest_of(boot, sizeof(boot) / sizeof(boot[0])), "6.1.0-10-cloud-amd64"));
	CHECK("newest of /boot in the other order: the same",
	      !strcmp(newest_of(reversed, sizeof(reversed) / sizeof(reversed[0])), "6.1.0-10-cloud-amd64"));
	CHECK("a name with a NUL in it is no kernel", !bootdisk_pick_newest(best, sizeof(best), "vmlinuz-1\0x", 11));
	CHECK("a version longer than the caller's buffer is not taken (nor cut)",
	      !bootdisk_pick_newest(best, 8, "vmlinuz-6.1.0-10-cloud-amd64", 28) && !best[0]);
}

static void test_cmdline(void)
{
	const char *u = "0123abcd-0000-4000-8000-00000000beef";
	char out[DOMAIN_CMDLINE_MAX], big[DOMAIN_CMDLINE_MAX];

	CHECK("cmdline: none in the config: root=UUID= and the defaults",
	      !bootdisk_cmdline(out, sizeof(out), "", u) &&
	      !strcmp(out, "root=UUID=0123abcd-0000-4000-8000-00000000beef ro console=ttyS0"));
	CHECK("cmdline: extra without root=: root=UUID= before it",
	      !bootdisk_cmdline(out, sizeof(out), "quiet console=hvc0", u) &&
	      !strcmp(out, "root=UUID=0123abcd-0000-4000-8000-00000000beef quiet console=hvc0"));
	CHECK("cmdline: the config's root= wins, as it is",
	      !bootdisk_cmdline(out, sizeof(out), "root=/dev/vda1 ro", u) && !strcmp(out, "root=/dev/vda1 ro"));
	CHECK("cmdline: a root= word later in the line counts",
	      !bootdisk_cmdline(out, sizeof(out), "console=ttyS0 root=LABEL=guest", u) &&
	      !strcmp(out, "console=ttyS0 root=LABEL=guest"));
	CHECK("cmdline: noroot= is no root= word",
	      !bootdisk_cmdline(out, sizeof(out), "noroot=1", u) &&
	      !strcmp(out, "root=UUID=0123abcd-0000-4000-8000-00000000beef noroot=1"));
	memset(big, 'x', sizeof(big) - 40);
	big[sizeof(big) - 40] = '\0';
	CHECK("cmdline: too long with root=UUID=: -E2BIG", bootdisk_cmdline(out, sizeof(out), big, u) == -E2BIG);
}

/* ---- real images ------------------------------------------------------------ */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

struct read_out {
	int rc;
	struct bootdisk_found found;
	char why[1024];
	char *kernel, *initrd;          /* the copies, malloc'd, NUL-terminated */
	size_t klen, ilen;
};

static char *slurp(int fd, size_t *len)
{
	struct stat st;
	char *buf;

	fstat(fd, &st);
	buf = calloc(1, (size_t)st.st_size + 1);
	*len = (size_t)pread(fd, buf, (size_t)st.st_size, 0);
	return buf;
}

static void read_image(const char *img, struct read_out *r)
{
	int disk = open(img, O_RDONLY | O_CLOEXEC);
	int k = memfd_create("kernel", MFD_CLOEXEC), i = memfd_create("initrd", MFD_CLOEXEC);

	memset(r, 0, sizeof(*r));
	r->rc = bootdisk_read(disk, img, k, i, &r->found, r->why, sizeof(r->why));
	r->kernel = slurp(k, &r->klen);
	r->initrd = slurp(i, &r->ilen);
	close(disk);
	close(k);
	close(i);
}

static void read_free(struct read_out *r)
{
	free(r->kernel);
	free(r->initrd);
}

/* The source tree of a Debian-like guest in tmp/NAME: two kernels, the
 * newer's initrd, and the relative links Debian makes. */
static void guest_tree(const char *name)
{
	sh("set -e; d=%s/%s; mkdir -p $d/boot $d/etc; "
	   "echo 'kernel 9' >$d/boot/vmlinuz-6.1.0-9-cloud-amd64; echo 'initrd 9' >$d/boot/initrd.img-6.1.0-9-cloud-amd64; "
	   "echo 'kernel 10' >$d/boot/vmlinuz-6.1.0-10-cloud-amd64; "
	   "echo 'initrd 10' >$d/boot/initrd.img-6.1.0-10-cloud-amd64; "
	   "ln -s boot/vmlinuz-6.1.0-10-cloud-amd64 $d/vmlinuz; ln -s boot/initrd.img-6.1.0-10-cloud-amd64 $d/initrd.img",
	   tmp, name);
}

#define UUID "6c0a6a3e-5b7e-4c8e-9a51-3c1f0e5f7a10"

static int mkfs(const char *img, const char *dir, const char *extra)
{
	return sh("mkfs.ext4 -q -F -U " UUID " %s -d %s/%s %s/%s >/dev/null 2>&1", extra, tmp, dir, tmp, img);
}

static bool why_has(const struct read_out *r, const char *what)
{
	return r->rc < 0 && strstr(r->why, what) != NULL;
}

static void test_whole_disk(void)
{
	char img[256];
	struct read_out r;

	guest_tree("g");
	sh("truncate -s 8M %s/whole.img", tmp);
	mkfs("whole.img", "g", "");
	snprintf(img, sizeof(img), "%s/whole.img", tmp);
	read_image(img, &r);
	CHECK("whole disk: read", r.rc == 0);
	CHECK("whole disk: /vmlinuz and /initrd.img, the links Debian makes",
	      !strcmp(r.found.kernel, "/vmlinuz") && !strcmp(r.found.initrd, "/initrd.img"));
	CHECK("whole disk: the copies are what the links point at",
	      !strcmp(r.kernel, "kernel 10\n") && !strcmp(r.initrd, "initrd 10\n") &&
	      r.found.kernel_size == 10 && r.found.initrd_size == 10);
	CHECK("whole disk: the filesystem's UUID", !strcmp(r.found.uuid, UUID));
	CHECK("whole disk: said so", !strcmp(r.found.where, "the whole disk"));
	read_free(&r);

	/* No links: the newest of /boot, by version. */
	sh("rm %s/g/vmlinuz %s/g/initrd.img && truncate -s 8M %s/nolinks.img", tmp, tmp, tmp);
	mkfs("nolinks.img", "g", "");
	snprintf(img, sizeof(img), "%s/nolinks.img", tmp);
	read_image(img, &r);
	CHECK("no /vmlinuz: the newest /boot/vmlinuz-VERSION (10, not 9) and its initrd",
	      r.rc == 0 && !strcmp(r.found.kernel, "/boot/vmlinuz-6.1.0-10-cloud-amd64") &&
	      !strcmp(r.found.initrd, "/boot/initrd.img-6.1.0-10-cloud-amd64") && !strcmp(r.kernel, "kernel 10\n"));
	read_free(&r);
	sh("rm %s/g/boot/initrd.img-6.1.0-10-cloud-amd64 && truncate -s 8M %s/noinitrd.img", tmp, tmp);
	mkfs("noinitrd.img", "g", "");
	snprintf(img, sizeof(img), "%s/noinitrd.img", tmp);
	read_image(img, &r);
	CHECK("a kernel without its initrd: booted without one (not the older one's)",
	      r.rc == 0 && !r.found.initrd[0] && r.ilen == 0 && !strcmp(r.kernel, "kernel 10\n"));
	read_free(&r);
}

/* One image of tmp/NAME.img from the tree tmp/NAME made by setup (shell
 * commands with $d the tree), which must fail saying what. */
static void refused(const char *label, const char *name, const char *setup, const char *what, int want_rc)
{
	char img[256], dir[256], check[1600];
	struct read_out r;

	snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
	snprintf(img, sizeof(img), "%s.img", name);
	sh("set -e; d=%s; mkdir -p $d/boot; %s; truncate -s 8M %s/%s", dir, setup, tmp, img);
	mkfs(img, name, "");
	snprintf(img, sizeof(img), "%s/%s.img", tmp, name);
	read_image(img, &r);
	snprintf(check, sizeof(check), "%s: refused with \"%s\" (got %d: %s)", label, what, r.rc, r.why);
	CHECK(check, why_has(&r, what) && (!want_rc || r.rc == want_rc) && r.klen == 0);
	read_free(&r);
}

static void test_bad_disks(void)
{
	char img[256], host[256], check[1600];
	struct read_out r;

	refused("a symbolic link loop", "loop", "ln -s vmlinuz $d/vmlinuz", "/vmlinuz: a symbolic link loop", -ELOOP);
	refused("a loop through two links", "loop2", "ln -s b $d/vmlinuz; ln -s vmlinuz $d/b",
		"a symbolic link loop", -ELOOP);
	refused("a link to a directory", "todir", "ln -s boot $d/vmlinuz", "/vmlinuz is not a regular file (a directory)",
		-EINVAL);
	refused("a link to a FIFO", "tofifo", "mkfifo $d/boot/fifo; ln -s /boot/fifo $d/vmlinuz",
		"/vmlinuz is not a regular file (a FIFO)", -EINVAL);
	refused("a dangling link", "dangling", "ln -s boot/vmlinuz-gone $d/vmlinuz", "kernel /vmlinuz: not found",
		-ENOENT);
	refused("no kernel at all", "nokernel", "echo x >$d/boot/config-6.1", "no kernel on it", -ENOENT);
	refused("an empty kernel", "empty", ": >$d/boot/vmlinuz-1", "kernel /boot/vmlinuz-1 is empty", -EINVAL);
	refused("a kernel over 128 MiB (sparse)", "bigkernel", "truncate -s 129M $d/boot/vmlinuz-1",
		"kernel /boot/vmlinuz-1 is 129 MiB, more than the 128 MiB Lodge takes", -EFBIG);
	refused("an initrd over 1 GiB (sparse)", "biginitrd",
		"echo k >$d/boot/vmlinuz-1; truncate -s 1025M $d/boot/initrd.img-1",
		"initrd /boot/initrd.img-1 is 1025 MiB, more than the 1024 MiB Lodge takes", -EFBIG);

	/* An absolute link names a path of the guest's filesystem: the
	 * host's file of that name is never what is read. */
	snprintf(host, sizeof(host), "%s/host/secret", tmp);
	sh("set -e; mkdir -p %s/host; echo HOST >%s; d=%s/escape; mkdir -p $d/boot $d%s/host; echo GUEST >$d%s; "
	   "ln -s %s $d/vmlinuz; truncate -s 8M %s/escape.img", tmp, host, tmp, tmp, host, host, tmp);
	mkfs("escape.img", "escape", "");
	snprintf(img, sizeof(img), "%s/escape.img", tmp);
	read_image(img, &r);
	CHECK("an absolute link /vmlinuz -> a host path: the guest's file of that path, never the host's",
	      r.rc == 0 && !strcmp(r.kernel, "GUEST\n"));
	read_free(&r);
	sh("rm -r %s/escape%s && truncate -s 8M %s/escape2.img", tmp, tmp, tmp);
	mkfs("escape2.img", "escape", "");
	snprintf(img, sizeof(img), "%s/escape2.img", tmp);
	read_image(img, &r);
	CHECK("an absolute link to a path only the host has: not found", why_has(&r, "not found") && r.klen == 0);
	read_free(&r);

	/* Not a filesystem: zeros; then a superblock one byte wrong. */
	sh("truncate -s 8M %s/zeros.img", tmp);
	snprintf(img, sizeof(img), "%s/zeros.img", tmp);
	read_image(img, &r);
	CHECK("a disk of zeros: not an ext2/3/4 filesystem", why_has(&r, "the whole disk: not an ext2/3/4 filesystem"));
	read_free(&r);
	guest_tree("c");
	sh("truncate -s 8M %s/corrupt.img", tmp);
	mkfs("corrupt.img", "c", "");
	/* s_log_block_size (superblock + 0x18): the checksum no longer matches */
	sh("printf '\\007' | dd of=%s/corrupt.img bs=1 seek=%d conv=notrunc status=none", tmp, 1024 + 0x18);
	snprintf(img, sizeof(img), "%s/corrupt.img", tmp);
	read_image(img, &r);
	snprintf(check, sizeof(check), "a corrupt superblock: refused, saying so (%s)", r.why);
	CHECK(check, r.rc < 0 && strstr(r.why, "the whole disk: ") && r.klen == 0);
	read_free(&r);
	sh("head -c 8M /dev/urandom >%s/random.img", tmp);
	snprintf(img, sizeof(img), "%s/random.img", tmp);
	read_image(img, &r);
	CHECK("a disk of random bytes: refused", r.rc < 0 && r.why[0]);
	read_free(&r);
}

/* A partitioned image: sfdisk's script, then the filesystem at the
 * offset of the partition to boot from (its start in sectors). */
static void partitioned(const char *label, const char *name, const char *table, const char *script,
			unsigned start, const char *want_where)
{
	char img[256], extra[64], check[1600];
	struct read_out r;

	snprintf(img, sizeof(img), "%s/%s.img", tmp, name);
	sh("truncate -s 24M %s && printf '%s' | sfdisk -q --label %s %s >/dev/null 2>&1", img, script, table, img);
	snprintf(extra, sizeof(extra), "-E offset=%u", start * 512);
	sh("mkfs.ext4 -q -F -U " UUID " %s -d %s/g %s 12M >/dev/null 2>&1", extra, tmp, img);
	read_image(img, &r);
	snprintf(check, sizeof(check), "%s: read from %s (%d: %s)", label, want_where, r.rc, r.rc ? r.why : "");
	CHECK(check, r.rc == 0 && !strcmp(r.found.where, want_where) && !strcmp(r.kernel, "kernel 10\n") &&
		     !strcmp(r.found.uuid, UUID));
	read_free(&r);
}

static void test_partitions(void)
{
	char img[256];
	struct read_out r;

	guest_tree("g");
	partitioned("MBR", "mbr", "dos", "2048,,83\\n", 2048, "partition 1 of its MBR partition table");
	partitioned("MBR, a FAT partition first", "mbr2", "dos", "2048,4096,c\\n6144,,83\\n", 6144,
		    "partition 2 of its MBR partition table");
	partitioned("GPT", "gpt", "gpt", "2048,,L\\n", 2048, "partition 1 of its GPT partition table");
	partitioned("GPT, an EFI system partition first", "gpt2", "gpt", "2048,4096,U\\n6144,,L\\n", 6144,
		    "partition 2 of its GPT partition table");
	/* A table for 64 MiB on a disk of 24 MiB. */
	sh("truncate -s 64M %s/past.img && printf '2048,,83\\n' | sfdisk -q --label dos %s/past.img >/dev/null 2>&1 "
	   "&& truncate -s 24M %s/past.img", tmp, tmp, tmp);
	snprintf(img, sizeof(img), "%s/past.img", tmp);
	read_image(img, &r);
	CHECK("an MBR partition past the end of the disk: refused, saying so",
	      why_has(&r, "partition 1 of its MBR partition table: it ends past the end of the disk"));
	read_free(&r);
	sh("truncate -s 24M %s/nolinux.img && printf '2048,,7\\n' | sfdisk -q --label dos %s/nolinux.img >/dev/null 2>&1",
	   tmp, tmp);
	snprintf(img, sizeof(img), "%s/nolinux.img", tmp);
	read_image(img, &r);
	CHECK("an MBR without a Linux partition: refused, saying so",
	      why_has(&r, "its MBR partition table has no Linux partition (type 83)"));
	read_free(&r);
}

int main(void)
{
	test_versions();
	test_cmdline();
	if (sh("command -v mkfs.ext4 >/dev/null && command -v sfdisk >/dev/null") != 0) {
		printf("SKIP: bootdisk images: mkfs.ext4 (e2fsprogs) or sfdisk (fdisk) not installed\n");
		UNIT_EXIT();
	}
	if (!mkdtemp(tmp)) {
		printf("FAIL: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_whole_disk();
	test_bad_disks();
	test_partitions();
	sh("rm -rf %s", tmp);
	UNIT_EXIT();
}

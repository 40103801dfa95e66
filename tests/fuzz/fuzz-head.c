/* What the agent does with the HEAD of a saved file or a migration stream
 * before lodge-hyp sees the rest (lodge restore, migrate-receive):
 * head_read, head_config (label "fuzz") and incoming_admit, which decides
 * which of this host's disks, kernels, bridges and interface names the
 * domain in it may use.  The host is set up once in a temporary directory
 * D (/dev/shm/lodge-fuzz-head.PID.*, removed at exit, or by the next run
 * if this one died), with its lodge.conf read by host_config_load:
 *
 *   D/domains/v.cfg    this host's own config of domain v: kernel
 *                      v-kernel.elf, ramdisk v-initrd.img, v-disk.img
 *                      writable, v-ro.img read-only, a vif on bridge %L
 *                      named vfz-v0 (relative paths, beside it)
 *   D/domains/x.cfg    a config of x that does not load (no kernel)
 *   D/domains/y.cfg    a "config of y" that names domain z
 *   D/domains/other.img   a file no config names
 *   D/storage/         storage_dirs: disk.img, sub/disk2.img, and
 *                      symlinks: link-disk -> disk.img, link-victim ->
 *                      ../victim, link-vdisk -> ../domains/v-disk.img,
 *                      link-root -> /
 *   D/store-link       storage_dirs too, a symlink to D/storage2/ (disk3.img)
 *   D/storage.old/     not storage_dirs, though its name begins as one's
 *   D/kernels/         kernel_dirs: k.elf, initrd.img, link-victim -> ../victim
 *   D/kernels.old/     not kernel_dirs (k.elf)
 *   D/dev/blk0, blk1   block device nodes (when mknod works): storage_devices
 *                      allows blk0 and the pattern D/devs/lv-*, where
 *                      lv-a -> ../dev/blk0 and lv-b -> ../dev/blk1;
 *                      D/storage/blk2, a block device in a storage dir
 *   D/victim           a file outside all of them
 *   default_bridge lo, bridges [ %B ]
 *
 * %B and %L are two of this host's interfaces other than lo (in name
 * order; made-up names where there are fewer), so head_config's check
 * that a bridge exists passes for them.
 *
 * Input: one flags byte, then the HEAD text, in which every "%D", "%B"
 * and "%L" stands for D and those two interfaces (so the corpus is the
 * same on any host).  Flags: bit 0: the harness puts "lodge VERSION\n"
 * first (the corpus outlives a version); bit 1: the section's CRC is
 * wrong.  The harness wraps the text in the magic and a HEAD section
 * with the real writers (state_write_magic, state_write_section).
 *
 * Properties: every refusal says why in one line with no control
 * character but tabs (no escape sequence from the stream reaches a
 * terminal, whether written raw or as a libconfuse escape like "\e");
 * head_config gives a config of the
 * domain the header names; and whenever incoming_admit admits, every disk,
 * kernel and ramdisk is a real path (no symlink, "." or "..") of
 *   - a disk: a regular file under a storage dir; a block device matching
 *     storage_devices; or, for domain v only, a file v.cfg names, writable
 *     only if v.cfg's is;
 *   - the kernel, ramdisk: a file under a kernel dir, or for v, v.cfg's;
 * never D/victim; each vif's bridge is lo, %B or (for v) %L, and its
 * name (if any) one v.cfg gives, for v only.
 *
 * Seeds: LODGE_FUZZ_HEAD_SEEDS=DIR replay-fuzz-head writes HEADs as
 * head_write does (configs by domain_config_save) into DIR and exits.
 * LODGE_FUZZ_VERBOSE=1: each input's outcome on stderr. */
#include "fuzz.h"
#include "cgroup.h"
#include "config.h"
#include "incoming.h"
#include "savestream.h"
#include "stream.h"
#include "version.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#define TEXT_MAX (64 * 1024)        /* of the input, before %D is expanded */
#define DIR_PREFIX "lodge-fuzz-head."   /* then the pid, a dot and mkdtemp's letters */
#define F_VERSION 1
#define F_BAD_CRC 2

static char dir[64];
static char br_listed[IF_NAMESIZE], br_local[IF_NAMESIZE];
static struct host_config hc;
static struct domain_config local_v;            /* v.cfg, as the harness reads it */
static char storage_real[2][PATH_MAX], kernels_real[PATH_MAX], victim_real[PATH_MAX];
static char dev_pattern[2][PATH_MAX];
static bool verbose;

/* ---- the host ---------------------------------------------------------------- */

static void put_file(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FUZZ_CHECK((f = fopen(path, "w")) != NULL, path);
	fputs(text, f);
	fclose(f);
}

static void put_dir(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FUZZ_CHECK(mkdir(path, 0755) == 0, path);
}

static void put_link(const char *rel, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FUZZ_CHECK(symlink(target, path) == 0, path);
}

static void put_blockdev(const char *rel, unsigned minor)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (mknod(path, S_IFBLK | 0600, makedev(7, minor)) < 0)
		fprintf(stderr, "fuzz-head: no block device %s (%s): those inputs are refused earlier\n",
			path, strerror(errno));
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void remove_dir(void)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A run that died (a failed check, a sanitizer's report, a timeout) left
 * its host behind, atexit or not: remove those whose process is gone. */
static void remove_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *de;
	char path[PATH_MAX];
	int pid;

	while (d && (de = readdir(d))) {
		if (sscanf(de->d_name, DIR_PREFIX "%d.", &pid) != 1 || pid <= 0 ||
		    kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, de->d_name);
		nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	if (d)
		closedir(d);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct if_nameindex *)a)->if_name, ((const struct if_nameindex *)b)->if_name);
}

/* Two interfaces besides lo, in name order, for %B and %L. */
static void pick_bridges(void)
{
	struct if_nameindex *ifs = if_nameindex();
	unsigned n = 0, i, got = 0;

	snprintf(br_listed, sizeof(br_listed), "lodgefz-b");
	snprintf(br_local, sizeof(br_local), "lodgefz-l");
	while (ifs && ifs[n].if_name)
		n++;
	if (ifs)
		qsort(ifs, n, sizeof(*ifs), by_name);
	for (i = 0; i < n && got < 2; i++) {
		if (!strcmp(ifs[i].if_name, "lo") || strlen(ifs[i].if_name) >= IF_NAMESIZE)
			continue;
		snprintf(got++ ? br_local : br_listed, IF_NAMESIZE, "%s", ifs[i].if_name);
	}
	if (ifs)
		if_freenameindex(ifs);
}

/* What "%D", "%B" and "%L" stand for at s[i], or NULL. */
static const char *placeholder(const char *s, size_t len, size_t i)
{
	if (s[i] != '%' || i + 1 >= len)
		return NULL;
	return s[i + 1] == 'D' ? dir : s[i + 1] == 'B' ? br_listed : s[i + 1] == 'L' ? br_local : NULL;
}

/* s with the placeholders expanded: malloc'd, NUL-terminated. */
static char *expand(const char *s, size_t len)
{
	size_t out = 0, i;
	const char *with;
	char *t;

	for (i = 0; i < len; i++, out++)
		if ((with = placeholder(s, len, i)))
			out += strlen(with) - 1, i++;
	FUZZ_CHECK((t = malloc(out + 1)), "malloc");
	for (i = out = 0; i < len; i++) {
		if ((with = placeholder(s, len, i))) {
			memcpy(t + out, with, strlen(with));
			out += strlen(with);
			i++;
		} else {
			t[out++] = s[i];
		}
	}
	t[out] = '\0';
	return t;
}

static void put_expanded(const char *rel, const char *text)
{
	char *t = expand(text, strlen(text));

	put_file(rel, t);
	free(t);
}

static void real_of(const char *rel, char out[PATH_MAX])
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FUZZ_CHECK(realpath(path, out), path);
}

static void setup(void)
{
#define conf "domains_dir = \"%D/domains\"\n" \
	     "storage_dirs = [ \"%D/storage\", \"%D/store-link\" ]\n" \
	     "kernel_dirs = [ \"%D/kernels\" ]\n" \
	     "default_bridge = \"lo\"\n" \
	     "bridges = [ \"%B\" ]\n"
	char err[1024], path[PATH_MAX];

	/* Under /dev, as storage_devices patterns must be; /tmp without them. */
	remove_stale("/dev/shm");
	remove_stale("/tmp");
	snprintf(dir, sizeof(dir), "/dev/shm/" DIR_PREFIX "%d.XXXXXX", (int)getpid());
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/" DIR_PREFIX "%d.XXXXXX", (int)getpid());
		FUZZ_CHECK(mkdtemp(dir), "mkdtemp");
	}
	atexit(remove_dir);
	pick_bridges();
	verbose = getenv("LODGE_FUZZ_VERBOSE") != NULL;

	put_dir("etc");
	put_dir("etc/lodge");
	put_dir("domains");
	put_dir("storage");
	put_dir("storage/sub");
	put_dir("storage2");
	put_dir("storage.old");
	put_dir("kernels");
	put_dir("kernels.old");
	put_dir("dev");
	put_dir("devs");
	put_expanded("etc/lodge/lodge.conf", strncmp(dir, "/dev/", 5) ? conf :
		     conf "storage_devices = [ \"%D/dev/blk0\", \"%D/devs/lv-*\" ]\n");
	put_expanded("domains/v.cfg",
		     "name = \"v\"\n"
		     "memory = 16\n"
		     "kernel = \"v-kernel.elf\"\n"
		     "ramdisk = \"v-initrd.img\"\n"
		     "disk = [ 'file:v-disk.img,vda,w', 'v-ro.img,vdb,r' ]\n"
		     "vif = [ 'bridge=%L,vifname=vfz-v0', '' ]\n");
	put_file("domains/x.cfg", "name = \"x\"\nmemory = 16\nkernel = \"x-kernel.elf\"\n");
	put_file("domains/y.cfg", "name = \"z\"\nmemory = 16\nkernel = \"v-kernel.elf\"\n");
	/* An ELF header is all a kernel needs here: nothing boots it. */
	put_file("domains/v-kernel.elf", "\177ELF");
	put_file("domains/v-initrd.img", "initrd");
	put_file("domains/v-disk.img", "v's disk");
	put_file("domains/v-ro.img", "v's read-only disk");
	put_file("domains/other.img", "nobody's disk");
	put_file("storage/disk.img", "a disk");
	put_file("storage/sub/disk2.img", "a disk");
	put_file("storage2/disk3.img", "a disk");
	put_file("storage.old/disk.img", "beside storage, not in it");
	put_file("kernels/k.elf", "\177ELF");
	put_file("kernels.old/k.elf", "\177ELF");
	put_file("kernels/initrd.img", "initrd");
	put_file("victim", "not a guest's");
	put_link("storage/link-disk", "disk.img");
	put_link("storage/link-victim", "../victim");
	put_link("storage/link-vdisk", "../domains/v-disk.img");
	put_link("storage/link-root", "/");
	put_link("store-link", "storage2");
	put_link("kernels/link-victim", "../victim");
	put_blockdev("dev/blk0", 250);
	put_blockdev("dev/blk1", 251);
	put_blockdev("storage/blk2", 252);
	put_link("devs/lv-a", "../dev/blk0");
	put_link("devs/lv-b", "../dev/blk1");

	cfg_set_root(dir);
	FUZZ_CHECK(host_config_load(&hc, err, sizeof(err)) == 0, err);
	FUZZ_CHECK(hc.storage_dirs.n == 2 && hc.kernel_dirs.n == 1 && hc.bridges.n == 1, "lodge.conf as written");
	snprintf(path, sizeof(path), "%s/domains/v.cfg", dir);
	FUZZ_CHECK(domain_config_load(path, &hc, false, &local_v, err, sizeof(err)) == 0, err);
	real_of("storage", storage_real[0]);
	real_of("store-link", storage_real[1]);
	real_of("kernels", kernels_real);
	real_of("victim", victim_real);
	snprintf(dev_pattern[0], PATH_MAX, "%s/dev/blk0", dir);
	snprintf(dev_pattern[1], PATH_MAX, "%s/devs/lv-*", dir);
}

/* ---- what an admitted config may hold ------------------------------------------ */

/* p is its own real path: no symlink, ".", ".." or "//" left in it. */
static bool canonical(const char *p)
{
	char real[PATH_MAX];

	return realpath(p, real) && strcmp(real, p) == 0;
}

static bool under(const char *real, const char *d)
{
	size_t len = strlen(d);

	return strncmp(real, d, len) == 0 && real[len] == '/';
}

static bool same_real(const char *real, const char *path)
{
	char r[PATH_MAX];

	return path[0] && realpath(path, r) && strcmp(r, real) == 0;
}

/* Absolute, and no component empty, "." or "..". */
static bool plain(const char *p)
{
	const char *c = p;

	if (*p != '/')
		return false;
	while (*c) {
		size_t len = strcspn(++c, "/");

		if (!len || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len;
	}
	return true;
}

static void disk_ok(bool is_v, const struct cfg_disk *given, const struct cfg_disk *d)
{
	struct stat st;
	unsigned i;
	bool ok = false;

	FUZZ_CHECK(canonical(d->path), "an admitted disk path is not its real path");
	FUZZ_CHECK(strcmp(d->path, victim_real), "the victim admitted as a disk");
	FUZZ_CHECK(stat(d->path, &st) == 0, "an admitted disk does not exist");
	for (i = 0; is_v && i < local_v.ndisks; i++)
		ok |= same_real(d->path, local_v.disks[i].path) && (d->readonly || !local_v.disks[i].readonly);
	if (S_ISREG(st.st_mode))
		ok |= under(d->path, storage_real[0]) || under(d->path, storage_real[1]);
	if (S_ISBLK(st.st_mode))
		for (i = 0; i < 2; i++)
			ok |= (plain(given->path) && fnmatch(dev_pattern[i], given->path, FNM_PATHNAME) == 0) ||
			      fnmatch(dev_pattern[i], d->path, FNM_PATHNAME) == 0;
	FUZZ_CHECK(ok, "a disk admitted that is neither in storage nor v.cfg's (with its access)");
}

static void boot_file_ok(bool is_v, const char *path, const char *local_path)
{
	if (!path[0])
		return;
	FUZZ_CHECK(canonical(path), "an admitted kernel or ramdisk path is not its real path");
	FUZZ_CHECK(strcmp(path, victim_real), "the victim admitted as a kernel or ramdisk");
	FUZZ_CHECK(under(path, kernels_real) || (is_v && same_real(path, local_path)),
		   "a kernel or ramdisk admitted that is neither under kernel_dirs nor v.cfg's");
}

static void vif_ok(bool is_v, const struct cfg_vif *v)
{
	const char *bridge = v->bridge[0] ? v->bridge : hc.default_bridge;
	bool bridge_ok = !strcmp(bridge, "lo") || !strcmp(bridge, br_listed), name_ok = !v->vifname[0];
	unsigned i;

	for (i = 0; is_v && i < local_v.nvifs; i++) {
		const struct cfg_vif *l = &local_v.vifs[i];

		bridge_ok |= !strcmp(bridge, l->bridge[0] ? l->bridge : hc.default_bridge);
		name_ok |= l->vifname[0] && !strcmp(v->vifname, l->vifname);
	}
	FUZZ_CHECK(bridge_ok, "a vif admitted on a bridge this host does not lend");
	FUZZ_CHECK(name_ok, "a vif admitted with a name v.cfg does not give it");
}

static void admitted_ok(const struct domain_config *given, const struct domain_config *dc)
{
	bool is_v = !strcmp(dc->name, "v");
	unsigned i;

	FUZZ_CHECK(dc->ndisks == given->ndisks && dc->nvifs == given->nvifs, "admitting changed the devices");
	for (i = 0; i < dc->ndisks; i++)
		disk_ok(is_v, &given->disks[i], &dc->disks[i]);
	FUZZ_CHECK(dc->kernel[0], "a config admitted without a kernel");
	boot_file_ok(is_v, dc->kernel, local_v.kernel);
	boot_file_ok(is_v, dc->ramdisk, local_v.ramdisk);
	for (i = 0; i < dc->nvifs; i++)
		vif_ok(is_v, &dc->vifs[i]);
}

/* ---- one input -------------------------------------------------------------- */

/* What a refusal may hold: text and tabs (HEAD's lines may hold tabs); no
 * escape sequence, bell, carriage return or line break. */
static bool message_text(const char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return false;
	return true;
}

static int head_stream(const char *text, bool bad_crc)
{
	int fd = memfd_create("fuzz-head", MFD_CLOEXEC);
	struct iovec iov = { (void *)text, strlen(text) };
	off_t end;
	uint8_t c;

	FUZZ_CHECK(fd >= 0, "memfd_create");
	FUZZ_CHECK(state_write_magic(fd) == 0 && state_write_section(fd, STATE_HEAD, 1, "head", &iov, 1) == 0,
		   "write the HEAD");
	if (bad_crc) {
		end = lseek(fd, 0, SEEK_CUR);
		FUZZ_CHECK(pread(fd, &c, 1, end - 1) == 1, "read the CRC");
		c ^= 0x01;
		FUZZ_CHECK(pwrite(fd, &c, 1, end - 1) == 1, "write the CRC");
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void seeds(const char *seed_dir);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct domain_config dc, given;
	static bool ready;
	struct stream_head h;
	char why[2048] = "", *text, *body;
	int fd, rc;

	if (!ready) {
		setup();
		ready = true;
		if (getenv("LODGE_FUZZ_HEAD_SEEDS"))
			seeds(getenv("LODGE_FUZZ_HEAD_SEEDS"));
	}
	if (size < 1 || size - 1 > TEXT_MAX)
		return 0;
	body = expand((const char *)data + 1, size - 1);
	if (data[0] & F_VERSION) {
		FUZZ_CHECK(asprintf(&text, "lodge %s\n%s", LODGE_VERSION, body) > 0, "asprintf");
		free(body);
	} else {
		text = body;
	}
	fd = head_stream(text, data[0] & F_BAD_CRC);
	free(text);

	rc = head_read(fd, &h, why, sizeof(why));
	close(fd);
	if (rc) {
		FUZZ_CHECK(why[0] || rc == -ENOMEM, "head_read refused without saying why");
		goto out;
	}
	FUZZ_CHECK(h.name[0] && h.config, "head_read gave a HEAD without a name or config");
	rc = head_config(&h, "fuzz", &hc, &dc, why, sizeof(why));
	if (rc) {
		FUZZ_CHECK(why[0], "head_config refused without saying why");
		head_free(&h);
		goto out;
	}
	FUZZ_CHECK(!strcmp(dc.name, h.name), "head_config gave a config of another domain than the HEAD names");
	head_free(&h);
	memcpy(&given, &dc, sizeof(dc));
	rc = incoming_admit(&dc, &hc, why, sizeof(why));
	if (rc)
		FUZZ_CHECK(why[0] || rc == -ENOMEM, "incoming_admit refused without saying why");
	else
		admitted_ok(&given, &dc);
out:
	if (verbose)
		fprintf(stderr, "fuzz-head: %s\n", rc ? why : "admitted");
	FUZZ_CHECK(!rc || message_text(why), "a refusal holds a control character other than a tab");
	return 0;
}

/* ---- seeds: HEADs as head_write writes them ----------------------------------- */

struct seed_disk { const char *path, *vdev; bool ro, phy; };
struct seed_vif { const char *bridge, *vifname; };

struct seed {
	const char *file, *name, *kernel, *ramdisk;
	struct seed_disk disks[4];
	struct seed_vif vifs[3];
};

/* Paths are written with %D, bridges with %B and %L: as the input has them. */
static const struct seed seed_list[] = {
	{ "v-as-saved", "v", "%D/domains/v-kernel.elf", "%D/domains/v-initrd.img",
	  { { "%D/domains/v-disk.img", "vda", false, false }, { "%D/domains/v-ro.img", "vdb", true, false } },
	  { { "%L", "vfz-v0" }, { "", "" } } },
	{ "v-storage", "v", "%D/kernels/k.elf", "%D/kernels/initrd.img",
	  { { "%D/storage/disk.img", "vda", false, false }, { "%D/store-link/disk3.img", "vdb", false, false },
	    { "%D/storage/link-disk", "vdc", false, false }, { "%D/storage/sub/../sub/disk2.img", "vdd", true, false } },
	  { { "lo", "" }, { "%B", "" } } },
	{ "w-storage", "w", "%D/kernels/k.elf", "",
	  { { "%D/storage/sub/disk2.img", "xvda", false, false } }, { { "", "" } } },
	{ "w-v-disk", "w", "%D/kernels/k.elf", "", { { "%D/domains/v-disk.img", "vda", true, false } }, { { 0 } } },
	{ "w-v-kernel", "w", "%D/domains/v-kernel.elf", "", { { 0 } }, { { 0 } } },
	{ "w-link-vdisk", "w", "%D/kernels/k.elf", "", { { "%D/storage/link-vdisk", "vda", false, false } }, { { 0 } } },
	{ "v-link-vdisk", "v", "%D/kernels/k.elf", "", { { "%D/storage/link-vdisk", "vda", false, false } }, { { 0 } } },
	{ "v-ro-written", "v", "%D/domains/v-kernel.elf", "", { { "%D/domains/v-ro.img", "vda", false, false } },
	  { { 0 } } },
	{ "v-other", "v", "%D/domains/v-kernel.elf", "", { { "%D/domains/other.img", "vda", false, false } },
	  { { 0 } } },
	{ "victim-disk", "v", "%D/kernels/k.elf", "", { { "%D/victim", "vda", false, false } }, { { 0 } } },
	{ "victim-link", "w", "%D/kernels/k.elf", "", { { "%D/storage/link-victim", "vda", false, false } },
	  { { 0 } } },
	{ "victim-dotdot", "w", "%D/kernels/k.elf", "", { { "%D/storage/../victim", "vda", false, false } },
	  { { 0 } } },
	{ "victim-kernel", "v", "%D/kernels/link-victim", "", { { 0 } }, { { 0 } } },
	{ "victim-ramdisk", "v", "%D/kernels/k.elf", "%D/kernels/../victim", { { 0 } }, { { 0 } } },
	{ "shadow-disk", "w", "%D/kernels/k.elf", "", { { "/etc/shadow", "vda", true, false } }, { { 0 } } },
	{ "shadow-via-root", "w", "%D/kernels/k.elf", "", { { "%D/storage/link-root/etc/shadow", "vda", true, false } },
	  { { 0 } } },
	{ "shadow-kernel", "w", "/etc/shadow", "", { { 0 } }, { { 0 } } },
	{ "relative", "w", "%D/kernels/k.elf", "../etc/shadow", { { "../etc/passwd", "vda", true, false } }, { { 0 } } },
	{ "blockdevs", "w", "%D/kernels/k.elf", "",
	  { { "%D/dev/blk0", "vda", false, true }, { "%D/devs/lv-a", "vdb", false, true },
	    { "%D/devs/lv-b", "vdc", false, true } }, { { 0 } } },
	{ "blockdev-refused", "w", "%D/kernels/k.elf", "", { { "%D/dev/blk1", "vda", false, true } }, { { 0 } } },
	{ "blockdev-dotdot", "w", "%D/kernels/k.elf", "", { { "%D/devs/../dev/blk1", "vda", false, true } },
	  { { 0 } } },
	{ "storage-sibling", "w", "%D/kernels/k.elf", "", { { "%D/storage.old/disk.img", "vda", false, false } },
	  { { 0 } } },
	{ "kernels-sibling", "w", "%D/kernels.old/k.elf", "", { { 0 } }, { { 0 } } },
	{ "blockdev-in-storage", "w", "%D/kernels/k.elf", "", { { "%D/storage/blk2", "vda", false, true } },
	  { { 0 } } },
	{ "w-local-bridge", "w", "%D/kernels/k.elf", "", { { 0 } }, { { "%L", "" } } },
	{ "w-local-vifname", "w", "%D/kernels/k.elf", "", { { 0 } }, { { "", "vfz-v0" } } },
	{ "v-host-vifname", "v", "%D/kernels/k.elf", "", { { 0 } }, { { "", "eth0" } } },
	{ "x-broken-local", "x", "%D/kernels/k.elf", "", { { "%D/domains/v-disk.img", "vda", false, false } },
	  { { 0 } } },
	{ "y-names-z", "y", "%D/domains/v-kernel.elf", "", { { 0 } }, { { 0 } } },
};

static void write_seed(const char *seed_dir, const char *file, uint8_t flags, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", seed_dir, file);
	FUZZ_CHECK((f = fopen(path, "wb")) != NULL, path);
	fputc(flags, f);
	fputs(text, f);
	fclose(f);
}

/* The HEAD of seed s, its config written by domain_config_save. */
static char *seed_head(const struct seed *s)
{
	static struct domain_config dc;
	char path[PATH_MAX], err[1024], *config, *head;
	FILE *f;
	size_t n = 0, len;
	unsigned i;

	memset(&dc, 0, sizeof(dc));
	snprintf(dc.name, sizeof(dc.name), "%s", s->name);
	dc.memory_mib = 16;
	dc.vcpus = 1;
	dc.cpu_weight = DOMAIN_CPU_WEIGHT_DEFAULT;
	snprintf(dc.kernel, sizeof(dc.kernel), "%s", s->kernel);
	snprintf(dc.ramdisk, sizeof(dc.ramdisk), "%s", s->ramdisk);
	snprintf(dc.cmdline, sizeof(dc.cmdline), "console=ttyS0");
	for (i = 0; i < 4 && s->disks[i].path; i++) {
		snprintf(dc.disks[i].path, CFG_PATH_MAX, "%s", s->disks[i].path);
		snprintf(dc.disks[i].vdev, sizeof(dc.disks[i].vdev), "%s", s->disks[i].vdev);
		dc.disks[i].readonly = s->disks[i].ro;
		dc.disks[i].is_phy = s->disks[i].phy;
		dc.ndisks++;
	}
	for (i = 0; i < 3 && s->vifs[i].bridge; i++) {
		snprintf(dc.vifs[i].bridge, sizeof(dc.vifs[i].bridge), "%s", s->vifs[i].bridge);
		snprintf(dc.vifs[i].vifname, sizeof(dc.vifs[i].vifname), "%s", s->vifs[i].vifname);
		dc.nvifs++;
	}
	snprintf(path, sizeof(path), "%s/seed.cfg", dir);
	FUZZ_CHECK(domain_config_save(path, &dc, err, sizeof(err)) == 0, err);
	FUZZ_CHECK((f = fopen(path, "r")) != NULL, path);
	config = NULL;
	FUZZ_CHECK(getdelim(&config, &n, '\0', f) > 0, "read the seed's config");
	fclose(f);
	unlink(path);
	len = strlen(s->name) + strlen(config) + 64;
	FUZZ_CHECK((head = malloc(len)) != NULL, "malloc");
	snprintf(head, len, "name %s\nsaved 1764815000\nconfig\n%s", s->name, config);
	free(config);
	return head;
}

static void seeds(const char *seed_dir)
{
	unsigned i;
	char *head;

	mkdir(seed_dir, 0755);
	for (i = 0; i < sizeof(seed_list) / sizeof(seed_list[0]); i++) {
		head = seed_head(&seed_list[i]);
		write_seed(seed_dir, seed_list[i].file, F_VERSION, head);
		if (i == 0) {
			char *other;

			write_seed(seed_dir, "bad-crc", F_VERSION | F_BAD_CRC, head);
			FUZZ_CHECK(asprintf(&other, "lodge 0.0.1\n%s", head) > 0, "asprintf");
			write_seed(seed_dir, "old-version", 0, other);
			free(other);
			FUZZ_CHECK(asprintf(&other, "name w\n%s", strstr(head, "saved ")) > 0, "asprintf");
			write_seed(seed_dir, "name-differs", F_VERSION, other);
			free(other);
			write_seed(seed_dir, "no-name", F_VERSION, strstr(head, "saved "));
			*strstr(head, "config\n") = 'C';
			write_seed(seed_dir, "no-config", F_VERSION, head);
		}
		free(head);
	}
	write_seed(seed_dir, "empty", F_VERSION, "");
	exit(0);
}

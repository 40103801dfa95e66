/* A guest's kernel and initrd from its own disk (bootdisk.h). */
#include "bootdisk.h"
#include "bootdisk-lib.h"
#include "schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* ---- the choice of kernel and the command line (pure) ---------------------- */

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* dpkg's order of one character outside a run of digits: ~ first, then
 * the end, then letters, then everything else. */
static int char_order(unsigned char c)
{
	if (is_digit(c))
		return 0;
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return c;
	if (c == '~')
		return -1;
	return c ? c + 256 : 0;
}

/* dpkg's verrevcmp (lib/dpkg/version.c): runs of non-digits compared
 * character by character in char_order, runs of digits as numbers. */
int bootdisk_version_cmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

	while (*x || *y) {
		int first_diff = 0;

		/* One of the two is at a non-digit: the end of the other has
		 * order 0, a non-digit never, so they differ before either
		 * steps past its end. */
		while ((*x && !is_digit(*x)) || (*y && !is_digit(*y))) {
			int xc = char_order(*x), yc = char_order(*y);

			if (xc != yc)
				return xc - yc;
			x++;
			y++;
		}
		while (*x == '0')
			x++;
		while (*y == '0')
			y++;
		while (is_digit(*x) && is_digit(*y)) {
			if (!first_diff)
				first_diff = *x - *y;
			x++;
			y++;
		}
		if (is_digit(*x))
			return 1;
		if (is_digit(*y))
			return -1;
		if (first_diff)
			return first_diff;
	}
	return 0;
}

bool bootdisk_pick_newest(char *best, size_t bestlen, const char *name, size_t namelen)
{
	static const char prefix[] = "vmlinuz-";
	char ver[256];
	size_t plen = sizeof(prefix) - 1;

	if (namelen <= plen || namelen - plen >= sizeof(ver) || namelen - plen >= bestlen ||
	    memcmp(name, prefix, plen) != 0 || memchr(name, '\0', namelen))
		return false;
	memcpy(ver, name + plen, namelen - plen);
	ver[namelen - plen] = '\0';
	/* dpkg's files of an unpack or upgrade under way, never a kernel to boot */
	if (strstr(ver, ".dpkg-"))
		return false;
	if (best[0] && bootdisk_version_cmp(ver, best) <= 0)
		return false;
	snprintf(best, bestlen, "%s", ver);
	return true;
}

/* Whether s has a word starting root= (words split at spaces and tabs). */
static bool has_root_word(const char *s)
{
	const char *p;

	for (p = s; (p = strstr(p, "root=")); p++)
		if (p == s || p[-1] == ' ' || p[-1] == '\t')
			return true;
	return false;
}

int bootdisk_cmdline(char *out, size_t len, const char *config_cmdline, const char *uuid)
{
	int n;

	if (has_root_word(config_cmdline))
		n = snprintf(out, len, "%s", config_cmdline);
	else
		n = snprintf(out, len, "root=UUID=%s %s", uuid, config_cmdline[0] ? config_cmdline : BOOTDISK_DEFAULT_ARGS);
	return n < 0 || (size_t)n >= len ? -E2BIG : 0;
}

/* ---- where the filesystem is: the whole disk, or a partition (libblkid) ---- */

struct region {
	uint64_t offset, size;     /* bytes, from the start of the disk */
};

/* GPT partition types of a Linux filesystem (the generic one; the x86-64
 * root of the Discoverable Partitions Specification), as libblkid spells
 * them. */
static const char *const gpt_linux_types[] = {
	"0fc63daf-8483-4772-8e79-3d69d8477de4",
	"4f68bce3-e8cd-4db1-96e7-fbcaf984b709",
};
#define MBR_LINUX_TYPE 0x83

static bool is_linux_partition(blkid_partition par, bool gpt)
{
	const char *type;
	size_t i;

	if (!gpt)
		return blkid_partition_get_type(par) == MBR_LINUX_TYPE;
	if (!(type = blkid_partition_get_type_string(par)))
		return false;
	for (i = 0; i < sizeof(gpt_linux_types) / sizeof(gpt_linux_types[0]); i++)
		if (strcasecmp(type, gpt_linux_types[i]) == 0)
			return true;
	return false;
}

static int locate(int disk_fd, struct region *r, char *where, size_t wlen, char *why, size_t whylen)
{
	blkid_probe pr = blkid_new_probe();
	blkid_partlist ls;
	blkid_parttable tab;
	const char *type;
	int i, n, rc = 0;
	int64_t disk_size;
	bool gpt;

	if (!pr) {
		snprintf(why, whylen, "cannot probe its partition table: out of memory");
		return -ENOMEM;
	}
	if (blkid_probe_set_device(pr, disk_fd, 0, 0) < 0 || (disk_size = blkid_probe_get_size(pr)) <= 0) {
		snprintf(why, whylen, "cannot read it, or it is empty");
		rc = -EIO;
		goto out;
	}
	blkid_probe_enable_superblocks(pr, 0);
	blkid_probe_enable_partitions(pr, 1);
	ls = blkid_probe_get_partitions(pr);
	if (!ls || !(tab = blkid_partlist_get_table(ls))) {
		/* No partition table: a filesystem on the whole disk, or nothing. */
		*r = (struct region){ 0, (uint64_t)disk_size };
		snprintf(where, wlen, "the whole disk");
		goto out;
	}
	type = blkid_parttable_get_type(tab);
	gpt = type && strcmp(type, "gpt") == 0;
	if (!gpt && !(type && strcmp(type, "dos") == 0)) {
		snprintf(why, whylen, "a partition table of type %s: Lodge boots from a whole-disk filesystem or "
			 "an MBR or GPT disk", type ? type : "unknown");
		rc = -EINVAL;
		goto out;
	}
	n = blkid_partlist_numof_partitions(ls);
	for (i = 0; i < n; i++) {
		blkid_partition par = blkid_partlist_get_partition(ls, i);
		int64_t start, size;

		if (!par || !is_linux_partition(par, gpt))
			continue;
		start = blkid_partition_get_start(par);
		size = blkid_partition_get_size(par);
		snprintf(where, wlen, "partition %d of its %s partition table", blkid_partition_get_partno(par),
			 gpt ? "GPT" : "MBR");
		/* In 512-byte sectors, whatever the disk's own sector size. */
		if (start <= 0 || size <= 0 || start > disk_size / 512 || size > disk_size / 512 - start) {
			snprintf(why, whylen, "%s: it ends past the end of the disk (sectors %lld to %lld of 512 bytes, "
				 "the disk has %lld)", where, (long long)start, (long long)start + size - 1,
				 (long long)(disk_size / 512));
			rc = -EINVAL;
			goto out;
		}
		*r = (struct region){ (uint64_t)start * 512, (uint64_t)size * 512 };
		goto out;
	}
	snprintf(why, whylen, "its %s partition table has no Linux partition (%s)", gpt ? "GPT" : "MBR",
		 gpt ? "type Linux filesystem or Linux x86-64 root" : "type 83");
	rc = -ENOENT;
out:
	blkid_free_probe(pr);
	return rc;
}

/* ---- libext2fs over the descriptor: an I/O manager of our own ------------- */

/* unix_io_manager opens the disk by its name, as the process that asks:
 * this one reads the descriptor it is given, within the region, so the
 * process reading the guest's filesystem needs no right to open
 * anything, and nothing outside the region is ever read. */
struct fd_channel {
	int fd;
	struct region r;
};

static __thread struct fd_channel *fd_pending;    /* the next open's, set by bootdisk_read */
static struct struct_io_manager fd_io_manager;

static errcode_t fd_open(const char *name, int flags, io_channel *out)
{
	io_channel ch;

	if (!fd_pending)
		return EXT2_ET_BAD_DEVICE_NAME;
	if (flags & IO_FLAG_RW)
		return EROFS;
	if (!(ch = calloc(1, sizeof(*ch))) || !(ch->name = strdup(name))) {
		free(ch);
		return ENOMEM;
	}
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = &fd_io_manager;
	ch->block_size = 1024;
	ch->refcount = 1;
	ch->private_data = fd_pending;
	fd_pending = NULL;
	*out = ch;
	return 0;
}

static errcode_t fd_close(io_channel ch)
{
	if (--ch->refcount > 0)
		return 0;
	free(ch->name);
	free(ch);
	return 0;
}

static errcode_t fd_set_blksize(io_channel ch, int blksize)
{
	if (blksize <= 0)
		return EXT2_ET_INVALID_ARGUMENT;
	ch->block_size = blksize;
	return 0;
}

/* count blocks, or -count bytes, as every manager reads.  Past the end of
 * the region: zeros and a short read, as unix_io_manager says. */
static errcode_t fd_read_blk64(io_channel ch, unsigned long long block, int count, void *data)
{
	const struct fd_channel *c = ch->private_data;
	uint64_t want = count < 0 ? (uint64_t)-(int64_t)count : (uint64_t)count * (uint64_t)ch->block_size;
	uint64_t off = (uint64_t)block * (uint64_t)ch->block_size, got = 0;
	ssize_t n;

	if (block > UINT64_MAX / (uint64_t)ch->block_size)
		off = UINT64_MAX;
	while (got < want && off < c->r.size && got < c->r.size - off) {
		size_t chunk = (size_t)(want - got < c->r.size - off - got ? want - got : c->r.size - off - got);

		n = pread(c->fd, (char *)data + got, chunk, (off_t)(c->r.offset + off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			break;
		got += (uint64_t)n;
	}
	if (got < want) {
		memset((char *)data + got, 0, (size_t)(want - got));
		return EXT2_ET_SHORT_READ;
	}
	return 0;
}

static errcode_t fd_read_blk(io_channel ch, unsigned long block, int count, void *data)
{
	return fd_read_blk64(ch, block, count, data);
}

static errcode_t fd_write_blk64(io_channel ch, unsigned long long block, int count, const void *data)
{
	return EROFS;
}

static errcode_t fd_write_blk(io_channel ch, unsigned long block, int count, const void *data)
{
	return EROFS;
}

static errcode_t fd_flush(io_channel ch)
{
	return 0;
}

static errcode_t fd_set_option(io_channel ch, const char *option, const char *arg)
{
	return EXT2_ET_INVALID_ARGUMENT;
}

static struct struct_io_manager fd_io_manager = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "Lodge's read-only descriptor I/O manager",
	.open = fd_open,
	.close = fd_close,
	.set_blksize = fd_set_blksize,
	.read_blk = fd_read_blk,
	.write_blk = fd_write_blk,
	.flush = fd_flush,
	.set_option = fd_set_option,
	.read_blk64 = fd_read_blk64,
	.write_blk64 = fd_write_blk64,
};

/* ---- the files ------------------------------------------------------------- */

/* libext2fs's codes for what a guest's disk may hold, in our words;
 * else its own sentence. */
static const char *ext2_says(errcode_t code)
{
	switch (code) {
	case EXT2_ET_BAD_MAGIC:
		return "not an ext2/3/4 filesystem";
	case EXT2_ET_SYMLINK_LOOP:
		return "a symbolic link loop (or links nested more than 8 deep)";
	case EXT2_ET_FILE_NOT_FOUND:
		return "not found";
	case EXT2_ET_NO_DIRECTORY:
		return "a part of the path is not a directory";
	case EXT2_ET_SHORT_READ:
		return "the filesystem reaches past the end of the disk (a short read)";
	default:
		return error_message(code);
	}
}

static int ext2_errno(errcode_t code)
{
	return code == EXT2_ET_FILE_NOT_FOUND ? -ENOENT : code == EXT2_ET_SYMLINK_LOOP ? -ELOOP : -EINVAL;
}

/* The file the path names, links followed inside the filesystem: its inode
 * number if it is a regular file of at most max bytes. */
static int find_file(ext2_filsys fs, const char *what, const char *path, uint64_t max, ext2_ino_t *ino,
		     uint64_t *size, char *why, size_t whylen)
{
	struct ext2_inode inode;
	errcode_t e;

	/* The root of the guest's filesystem is the root of every path and
	 * of every absolute link: there is no other to reach. */
	if ((e = ext2fs_namei_follow(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, ino)) ||
	    (e = ext2fs_read_inode(fs, *ino, &inode))) {
		snprintf(why, whylen, "%s %s: %s", what, path, ext2_says(e));
		return ext2_errno(e);
	}
	if (!LINUX_S_ISREG(inode.i_mode)) {
		snprintf(why, whylen, "%s %s is not a regular file (%s)", what, path,
			 LINUX_S_ISDIR(inode.i_mode) ? "a directory" : LINUX_S_ISLNK(inode.i_mode) ? "a symbolic link" :
			 LINUX_S_ISCHR(inode.i_mode) || LINUX_S_ISBLK(inode.i_mode) ? "a device" :
			 LINUX_S_ISFIFO(inode.i_mode) ? "a FIFO" : LINUX_S_ISSOCK(inode.i_mode) ? "a socket" :
			 "of an unknown type");
		return -EINVAL;
	}
	*size = EXT2_I_SIZE(&inode);
	if (*size == 0) {
		snprintf(why, whylen, "%s %s is empty", what, path);
		return -EINVAL;
	}
	if (*size > max) {
		snprintf(why, whylen, "%s %s is %llu MiB, more than the %llu MiB Lodge takes", what, path,
			 (unsigned long long)((*size + (1 << 20) - 1) >> 20), (unsigned long long)(max >> 20));
		return -EFBIG;
	}
	return 0;
}

/* Copy the file's size bytes to out_fd. */
static int copy_file(ext2_filsys fs, ext2_ino_t ino, uint64_t size, const char *what, const char *path, int out_fd,
		     char *why, size_t whylen)
{
	enum { CHUNK = 1 << 20 };
	char *buf = malloc(CHUNK);
	ext2_file_t f = NULL;
	uint64_t done = 0;
	unsigned int got;
	errcode_t e = 0;
	int rc = 0;

	if (!buf) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	if ((e = ext2fs_file_open(fs, ino, 0, &f)))
		goto ext2_fail;
	while (done < size) {
		size_t off = 0;

		if ((e = ext2fs_file_read(f, buf, CHUNK, &got)))
			goto ext2_fail;
		if (got == 0)
			break;
		if (got > size - done)
			got = (unsigned int)(size - done);
		while (off < got) {
			ssize_t n = write(out_fd, buf + off, got - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				rc = n < 0 ? -errno : -EIO;
				snprintf(why, whylen, "cannot write the copy of %s %s: %s", what, path, strerror(-rc));
				goto out;
			}
			off += (size_t)n;
		}
		done += got;
	}
	if (done != size) {
		snprintf(why, whylen, "%s %s: %llu bytes of %llu could be read", what, path,
			 (unsigned long long)done, (unsigned long long)size);
		rc = -EIO;
	}
	goto out;
ext2_fail:
	snprintf(why, whylen, "%s %s: %s", what, path, ext2_says(e));
	rc = ext2_errno(e);
out:
	if (f)
		ext2fs_file_close(f);
	free(buf);
	return rc;
}

/* Whether path is there as a name in its directory (a link not followed). */
static bool present(ext2_filsys fs, const char *path)
{
	ext2_ino_t ino;

	return ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, &ino) == 0;
}

struct newest {
	char ver[256];
};

static int newest_entry(ext2_ino_t dir, int entry, struct ext2_dir_entry *d, int offset, int blocksize, char *buf,
			void *arg)
{
	struct newest *nw = arg;

	bootdisk_pick_newest(nw->ver, sizeof(nw->ver), d->name, (size_t)ext2fs_dirent_name_len(d));
	return 0;
}

/* Which kernel and initrd: the paths into found. */
static int choose(ext2_filsys fs, struct bootdisk_found *found, char *why, size_t whylen)
{
	struct newest nw = { "" };
	ext2_ino_t boot;
	errcode_t e;

	if (present(fs, "/vmlinuz")) {
		snprintf(found->kernel, sizeof(found->kernel), "/vmlinuz");
		if (present(fs, "/initrd.img"))
			snprintf(found->initrd, sizeof(found->initrd), "/initrd.img");
		return 0;
	}
	/* kernel-img.conf's link_in_boot = yes */
	if (present(fs, "/boot/vmlinuz")) {
		snprintf(found->kernel, sizeof(found->kernel), "/boot/vmlinuz");
		if (present(fs, "/boot/initrd.img"))
			snprintf(found->initrd, sizeof(found->initrd), "/boot/initrd.img");
		return 0;
	}
	/* No /boot, or one that is no directory: no kernel, said below. */
	if (!(e = ext2fs_namei_follow(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, "/boot", &boot)))
		e = ext2fs_dir_iterate2(fs, boot, 0, NULL, newest_entry, &nw);
	if (e && e != EXT2_ET_FILE_NOT_FOUND && e != EXT2_ET_NO_DIRECTORY) {
		snprintf(why, whylen, "/boot: %s", ext2_says(e));
		return ext2_errno(e);
	}
	if (!nw.ver[0]) {
		snprintf(why, whylen, "no kernel on it: neither /vmlinuz nor /boot/vmlinuz-VERSION");
		return -ENOENT;
	}
	snprintf(found->kernel, sizeof(found->kernel), "/boot/vmlinuz-%s", nw.ver);
	snprintf(found->initrd, sizeof(found->initrd), "/boot/initrd.img-%s", nw.ver);
	if (!present(fs, found->initrd))
		found->initrd[0] = '\0';
	return 0;
}

static void ext2_tables_once(void)
{
	static bool done;

	if (!done)
		initialize_ext2_error_table();
	done = true;
}

int bootdisk_read(int disk_fd, const char *disk_name, int kernel_fd, int initrd_fd, struct bootdisk_found *found,
		  char *why, size_t whylen)
{
	struct fd_channel ch = { .fd = disk_fd };
	char what[1024];
	ext2_filsys fs = NULL;
	ext2_ino_t kino, iino = 0;
	const uint8_t *u;
	errcode_t e;
	int rc;

	memset(found, 0, sizeof(*found));
	if (bootdisk_lib_load(why, whylen))
		return -ELIBACC;
	ext2_tables_once();
	if ((rc = locate(disk_fd, &ch.r, found->where, sizeof(found->where), what, sizeof(what)))) {
		snprintf(why, whylen, "%s", what);
		return rc;
	}
	/* Read only (flags without EXT2_FLAG_RW); a filesystem of more than
	 * 2^32 blocks (64bit, Debian's default) needs the 64-bit bitmaps. */
	fd_pending = &ch;
	e = ext2fs_open2(disk_name, NULL, EXT2_FLAG_64BITS, 0, 0, &fd_io_manager, &fs);
	fd_pending = NULL;
	if (e) {
		snprintf(why, whylen, "%s: %s%s", found->where, ext2_says(e),
			 e == EXT2_ET_BAD_MAGIC && !ch.r.offset ? " (nor an MBR or GPT partition table)" : "");
		return -EINVAL;
	}
	u = fs->super->s_uuid;
	snprintf(found->uuid, sizeof(found->uuid),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
		 u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	if ((rc = choose(fs, found, what, sizeof(what))) ||
	    (rc = find_file(fs, "kernel", found->kernel, BOOTDISK_KERNEL_MAX, &kino, &found->kernel_size, what,
			    sizeof(what))) ||
	    (found->initrd[0] && (rc = find_file(fs, "initrd", found->initrd, BOOTDISK_INITRD_MAX, &iino,
						 &found->initrd_size, what, sizeof(what)))) ||
	    (rc = copy_file(fs, kino, found->kernel_size, "kernel", found->kernel, kernel_fd, what, sizeof(what))) ||
	    (iino && (rc = copy_file(fs, iino, found->initrd_size, "initrd", found->initrd, initrd_fd, what,
				     sizeof(what)))))
		snprintf(why, whylen, "%s: %s", found->where, what);
	ext2fs_close_free(&fs);
	return rc;
}

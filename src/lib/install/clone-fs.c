/* A clone's own files, written inside its ext4 filesystem through
 * libext2fs (e2fsprogs' library: no mount, no loop device, nothing of
 * the host's to leak): fstab names the filesystem's fresh UUID, the
 * machine-id is empty and the ssh host keys are gone, so the guest's
 * first boot makes its own (install.h). */
#include "install.h"

#include <errno.h>
#include <et/com_err.h>
#include <ext2fs/ext2fs.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define FSTAB "# /etc/fstab: written by lodge install; the root filesystem by its UUID.\n" \
	"UUID=%s / ext4 errors=remount-ro 0 1\n"
#define MAX_KEYS_FOUND 32

static const char *ext2_why(errcode_t e)
{
	static bool table;

	if (!table) {
		initialize_ext2_error_table();
		table = true;
	}
	return error_message(e);
}

/* DIR/NAME holds text (len bytes) and nothing else: made, a regular file
 * 0644 owned by root, if it is not there. */
static errcode_t put_file(ext2_filsys fs, const char *dir, const char *name, const char *text, size_t len)
{
	struct ext2_inode inode;
	ext2_ino_t dino, ino;
	ext2_file_t f;
	unsigned int wrote;
	errcode_t e;

	if ((e = ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, dir, &dino)))
		return e;
	e = ext2fs_lookup(fs, dino, name, (int)strlen(name), NULL, &ino);
	if (e == EXT2_ET_FILE_NOT_FOUND) {
		/* As debugfs's write does it. */
		if ((e = ext2fs_new_inode(fs, dino, LINUX_S_IFREG | 0644, NULL, &ino)))
			return e;
		e = ext2fs_link(fs, dino, name, ino, EXT2_FT_REG_FILE);
		if (e == EXT2_ET_DIR_NO_SPACE && !(e = ext2fs_expand_dir(fs, dino)))
			e = ext2fs_link(fs, dino, name, ino, EXT2_FT_REG_FILE);
		if (e)
			return e;
		ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
		memset(&inode, 0, sizeof(inode));
		inode.i_mode = LINUX_S_IFREG | 0644;
		inode.i_atime = inode.i_ctime = inode.i_mtime = (__u32)time(NULL);
		inode.i_links_count = 1;
		if (ext2fs_has_feature_extents(fs->super)) {
			ext2_extent_handle_t handle;

			if ((e = ext2fs_extent_open2(fs, ino, &inode, &handle)))
				return e;
			ext2fs_extent_free(handle);
		}
		if ((e = ext2fs_write_new_inode(fs, ino, &inode)))
			return e;
	} else if (e) {
		return e;
	} else {
		if ((e = ext2fs_read_inode(fs, ino, &inode)))
			return e;
		if (!LINUX_S_ISREG(inode.i_mode))
			return EXT2_ET_FILE_NOT_FOUND;    /* not one to write over */
	}
	if ((e = ext2fs_file_open(fs, ino, EXT2_FILE_WRITE, &f)))
		return e;
	e = ext2fs_file_set_size2(f, 0);
	if (!e && len)
		e = ext2fs_file_write(f, text, (unsigned int)len, &wrote);
	if (!e && len && wrote != len)
		e = EXT2_ET_SHORT_WRITE;
	if (ext2fs_file_close(f) && !e)
		e = EXT2_ET_SHORT_WRITE;
	return e;
}

struct found {
	char name[MAX_KEYS_FOUND][256];
	unsigned n;
};

static int note_host_key(ext2_ino_t dir, int entry, struct ext2_dir_entry *d, int offset, int blocksize, char *buf,
			 void *arg)
{
	struct found *f = arg;
	int len = ext2fs_dirent_name_len(d);

	if (len > 9 && !strncmp(d->name, "ssh_host_", 9) && f->n < MAX_KEYS_FOUND) {
		memcpy(f->name[f->n], d->name, (size_t)len);
		f->name[f->n++][len] = '\0';
	}
	return 0;
}

/* Unlink DIR's entry NAME, and free its inode if that was its last link
 * (as debugfs's rm does). */
static errcode_t remove_file(ext2_filsys fs, ext2_ino_t dino, const char *name)
{
	struct ext2_inode inode;
	ext2_ino_t ino;
	errcode_t e;

	if ((e = ext2fs_lookup(fs, dino, name, (int)strlen(name), NULL, &ino)))
		return e;
	if ((e = ext2fs_read_inode(fs, ino, &inode)))
		return e;
	if (LINUX_S_ISDIR(inode.i_mode))
		return 0;
	if ((e = ext2fs_unlink(fs, dino, name, ino, 0)))
		return e;
	if (inode.i_links_count > 1) {
		inode.i_links_count--;
		return ext2fs_write_inode(fs, ino, &inode);
	}
	inode.i_links_count = 0;
	inode.i_dtime = (__u32)time(NULL);
	if ((e = ext2fs_write_inode(fs, ino, &inode)))
		return e;
	if (ext2fs_inode_has_valid_blocks2(fs, &inode) && (e = ext2fs_punch(fs, ino, &inode, NULL, 0, ~0ULL)))
		return e;
	ext2fs_inode_alloc_stats2(fs, ino, -1, 0);
	return 0;
}

static errcode_t remove_host_keys(ext2_filsys fs)
{
	static struct found f;
	ext2_ino_t dino;
	errcode_t e;
	unsigned i;

	f.n = 0;
	if ((e = ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, "/etc/ssh", &dino)))
		return e == EXT2_ET_FILE_NOT_FOUND ? 0 : e;
	if ((e = ext2fs_dir_iterate2(fs, dino, 0, NULL, note_host_key, &f)))
		return e;
	for (i = 0; i < f.n; i++)
		if ((e = remove_file(fs, dino, f.name[i])))
			return e;
	return 0;
}

int clone_fs_customize(const char *fs_path, bool exclusive, char uuid[37], char *why, size_t whylen)
{
	const unsigned char *u;
	char fstab[256];
	ext2_filsys fs;
	const char *step = "";
	errcode_t e;
	int len;

	e = ext2fs_open2(fs_path, NULL, EXT2_FLAG_RW | EXT2_FLAG_64BITS | (exclusive ? EXT2_FLAG_EXCLUSIVE : 0), 0, 0,
			 unix_io_manager, &fs);
	if (e) {
		snprintf(why, whylen, "cannot open its filesystem: %s", ext2_why(e));
		return -EIO;
	}
	u = fs->super->s_uuid;
	snprintf(uuid, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
		 u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	len = snprintf(fstab, sizeof(fstab), FSTAB, uuid);
	if ((e = ext2fs_read_bitmaps(fs)))
		step = "read its bitmaps";
	else if ((e = put_file(fs, "/etc", "fstab", fstab, (size_t)len)))
		step = "write /etc/fstab";
	else if ((e = put_file(fs, "/etc", "machine-id", "", 0)))
		step = "empty /etc/machine-id";
	else if ((e = remove_host_keys(fs)))
		step = "remove the ssh host keys";
	if (e) {
		snprintf(why, whylen, "cannot %s: %s", step, ext2_why(e));
		ext2fs_close_free(&fs);
		return -EIO;
	}
	if ((e = ext2fs_close_free(&fs))) {
		snprintf(why, whylen, "cannot write its filesystem: %s", ext2_why(e));
		return -EIO;
	}
	return 0;
}

/* bootloader = "lodge" (Xen's pygrub, without a mount): a guest's kernel,
 * initrd and root filesystem UUID read from the ext2/3/4 filesystem on its
 * own disk, through libext2fs, on the whole disk or on the first Linux
 * partition of an MBR or GPT partition table (libblkid).
 *
 * The disk is the guest's and so untrusted: it is read only through the
 * descriptor given (never by a path on the host, and never mounted), so a
 * symbolic link in it, absolute or relative, resolves inside its own
 * filesystem and nowhere else; links nest at most 8 deep (libext2fs);
 * what is copied out is capped (schema.h); every fault of the disk is one
 * sentence in why.  lodge-hyp calls this at each boot of a domain, in a
 * process of the sandbox's user (src/hyp/bootload.c). */
#ifndef LODGE_BOOTDISK_H
#define LODGE_BOOTDISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BOOTDISK_PATH_MAX  320     /* "/boot/vmlinuz-" and a file name of up to 255 bytes */
#define BOOTDISK_UUID_LEN  37      /* 36 characters and the NUL */

struct bootdisk_found {
	char kernel[BOOTDISK_PATH_MAX];    /* as found in the guest's filesystem: /vmlinuz, /boot/vmlinuz-VER */
	char initrd[BOOTDISK_PATH_MAX];    /* "" if none */
	char uuid[BOOTDISK_UUID_LEN];      /* the filesystem's, for root=UUID= */
	char where[96];                    /* "the whole disk", "partition 1 of its GPT partition table" */
	uint64_t kernel_size, initrd_size; /* bytes written to kernel_fd and initrd_fd */
};

/* Read the kernel and initrd from the filesystem on disk_fd (a disk image
 * or block device open for reading; disk_name names it in messages):
 * /vmlinuz with /initrd.img, else /boot/vmlinuz with /boot/initrd.img,
 * else the newest /boot/vmlinuz-VER with /boot/initrd.img-VER, each
 * initrd only if there is one.  The kernel is written to kernel_fd and
 * the initrd to initrd_fd (empty files of the caller's, from offset 0).
 * 0, or -errno with one sentence in why ("partition 1 of its MBR partition
 * table: /vmlinuz: a symbolic link loop"). */
int bootdisk_read(int disk_fd, const char *disk_name, int kernel_fd, int initrd_fd, struct bootdisk_found *found,
		  char *why, size_t whylen);

/* Debian's order of versions (dpkg's, as linux-version sort uses for
 * kernel versions): <0, 0, >0 as a is older, the same, newer than b.
 * 6.1.0-10-amd64 is newer than 6.1.0-9-amd64; ~ sorts before anything. */
int bootdisk_version_cmp(const char *a, const char *b);
/* One entry of /boot (name, namelen bytes, not terminated): if it is a
 * kernel (vmlinuz-VER, not a dpkg leftover such as vmlinuz-VER.dpkg-new)
 * newer than best's (best "" for none yet), best becomes its VER.
 * Whether it did. */
bool bootdisk_pick_newest(char *best, size_t bestlen, const char *name, size_t namelen);
/* The command line of a guest booted from its disk, from its config's
 * (cmdline, or root= and extra joined, "" for none): that as it is when it
 * has a root= word; else root=UUID=uuid before it, and with nothing else
 * root=UUID=uuid BOOTDISK_DEFAULT_ARGS.  0, or -E2BIG if it does not fit. */
int bootdisk_cmdline(char *out, size_t len, const char *config_cmdline, const char *uuid);

#endif

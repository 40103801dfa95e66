/* libext2fs, libcom_err and libblkid, loaded when a guest's disk is read
 * (bootdisk.c) instead of linked into lodge-hyp.  Linked, they were loaded
 * and relocated in every lodge-hyp process, the supervisor's and every
 * domain's with or without bootloader = "lodge": 60 KiB of relocated,
 * private pages each for libraries only the bootloader's reader, a process
 * of its own (src/hyp/bootload.c), runs. */
#ifndef LODGE_BOOTDISK_LIB_H
#define LODGE_BOOTDISK_LIB_H

#include <blkid/blkid.h>
#include <et/com_err.h>
#include <ext2fs/ext2fs.h>
#include <stddef.h>

/* Each function bootdisk.c calls: X(library, function). */
#define BOOTDISK_LIB_FUNCS(X) \
	X(BLKID, blkid_new_probe) X(BLKID, blkid_free_probe) X(BLKID, blkid_probe_set_device) \
	X(BLKID, blkid_probe_get_size) X(BLKID, blkid_probe_enable_superblocks) \
	X(BLKID, blkid_probe_enable_partitions) X(BLKID, blkid_probe_get_partitions) \
	X(BLKID, blkid_partlist_get_table) X(BLKID, blkid_parttable_get_type) \
	X(BLKID, blkid_partlist_numof_partitions) X(BLKID, blkid_partlist_get_partition) \
	X(BLKID, blkid_partition_get_start) X(BLKID, blkid_partition_get_size) \
	X(BLKID, blkid_partition_get_partno) X(BLKID, blkid_partition_get_type) \
	X(BLKID, blkid_partition_get_type_string) \
	X(EXT2FS, ext2fs_open2) X(EXT2FS, ext2fs_close_free) X(EXT2FS, ext2fs_namei) \
	X(EXT2FS, ext2fs_namei_follow) X(EXT2FS, ext2fs_read_inode) X(EXT2FS, ext2fs_file_open) \
	X(EXT2FS, ext2fs_file_read) X(EXT2FS, ext2fs_file_close) X(EXT2FS, ext2fs_dir_iterate2) \
	X(EXT2FS, initialize_ext2_error_table) \
	X(COM_ERR, error_message)

struct bootdisk_lib {
#define BOOTDISK_LIB_POINTER(lib, f) __typeof__(f) *f;
	BOOTDISK_LIB_FUNCS(BOOTDISK_LIB_POINTER)
#undef BOOTDISK_LIB_POINTER
};
extern struct bootdisk_lib bootdisk_lib;

/* Load the three libraries (once; outside the sandbox, whose empty root
 * has none): 0, or -1 with the reason in err. */
int bootdisk_lib_load(char *err, size_t len);

/* bootdisk.c's calls go through the pointers. */
#ifndef BOOTDISK_LIB_LOADER
#define blkid_new_probe bootdisk_lib.blkid_new_probe
#define blkid_free_probe bootdisk_lib.blkid_free_probe
#define blkid_probe_set_device bootdisk_lib.blkid_probe_set_device
#define blkid_probe_get_size bootdisk_lib.blkid_probe_get_size
#define blkid_probe_enable_superblocks bootdisk_lib.blkid_probe_enable_superblocks
#define blkid_probe_enable_partitions bootdisk_lib.blkid_probe_enable_partitions
#define blkid_probe_get_partitions bootdisk_lib.blkid_probe_get_partitions
#define blkid_partlist_get_table bootdisk_lib.blkid_partlist_get_table
#define blkid_parttable_get_type bootdisk_lib.blkid_parttable_get_type
#define blkid_partlist_numof_partitions bootdisk_lib.blkid_partlist_numof_partitions
#define blkid_partlist_get_partition bootdisk_lib.blkid_partlist_get_partition
#define blkid_partition_get_start bootdisk_lib.blkid_partition_get_start
#define blkid_partition_get_size bootdisk_lib.blkid_partition_get_size
#define blkid_partition_get_partno bootdisk_lib.blkid_partition_get_partno
#define blkid_partition_get_type bootdisk_lib.blkid_partition_get_type
#define blkid_partition_get_type_string bootdisk_lib.blkid_partition_get_type_string
#define ext2fs_open2 bootdisk_lib.ext2fs_open2
#define ext2fs_close_free bootdisk_lib.ext2fs_close_free
#define ext2fs_namei bootdisk_lib.ext2fs_namei
#define ext2fs_namei_follow bootdisk_lib.ext2fs_namei_follow
#define ext2fs_read_inode bootdisk_lib.ext2fs_read_inode
#define ext2fs_file_open bootdisk_lib.ext2fs_file_open
#define ext2fs_file_read bootdisk_lib.ext2fs_file_read
#define ext2fs_file_close bootdisk_lib.ext2fs_file_close
#define ext2fs_dir_iterate2 bootdisk_lib.ext2fs_dir_iterate2
#define initialize_ext2_error_table bootdisk_lib.initialize_ext2_error_table
#define error_message bootdisk_lib.error_message
#endif

#endif

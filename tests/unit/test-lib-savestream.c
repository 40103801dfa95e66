/* The signature of a stream's HEAD (src/lib/trust/savestream.c): a HEAD written
 * with a key verifies with that key only; one byte of it changed anywhere
 * (a key line, the config) and it does not; an unsigned HEAD reads as
 * before and proves nothing.  And this host's key (hostkey.c): made once,
 * 32 bytes, 0600; one of another mode is refused. */
#include "config.h"
#include "migrate.h"
#include "savestream.h"
#include "unit.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/lodge-savestream.XXXXXX";

/* The HEAD of domain web as head_write writes it with key, in a file. */
static int written(const struct host_config *hc, const struct secret *key, char *path, size_t len)
{
	char why[256];
	int fd, rc;

	snprintf(path, len, "%s/head.%d", dir, rand());
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0)
		return -1;
	rc = head_write(fd, hc, "web", key, why, sizeof(why));
	close(fd);
	return rc;
}

/* Read path's HEAD back (after changing the digit at off to another, if
 * off >= 0). */
static int read_back(const char *path, long off, struct stream_head *h)
{
	char why[256], c;
	int fd = open(path, O_RDWR), rc;

	if (fd < 0)
		return -1;
	if (off >= 0 && pread(fd, &c, 1, off) == 1) {
		c = c == '0' ? '1' : '0';
		pwrite(fd, &c, 1, off);
	}
	rc = head_read(fd, h, why, sizeof(why));
	close(fd);
	return rc;
}

/* Where text first is in the file (-1 if not). */
static long find(const char *path, const char *text)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	char *at;

	if (f)
		fclose(f);
	buf[n] = '\0';
	at = memmem(buf, n, text, strlen(text));
	return at ? at - buf : -1;
}

/* The stream's CRC would catch a changed byte first; the test wants the
 * signature's verdict, so it rewrites the CRC as an attacker would.  The
 * HEAD section: 16 bytes of magic, a 40-byte header, the payload, CRC-32. */
#include <zlib.h>
static void fix_crc(const char *path)
{
	static unsigned char buf[65536];
	int fd = open(path, O_RDWR);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	uint64_t plen;
	uint32_t crc;

	if (n < 56)
		goto out;
	memcpy(&plen, buf + 16 + 32, 8);
	if (56 + plen + 4 > (uint64_t)n)
		goto out;
	crc = (uint32_t)crc32(0, buf + 16, (uInt)(40 + plen));
	pwrite(fd, &crc, 4, (off_t)(56 + plen));
out:
	if (fd >= 0)
		close(fd);
}

static int remove_one(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
	return remove(p);
}

int main(void)
{
	struct host_config hc = { 0 };
	struct secret k1 = { .len = 32 }, k2 = { .len = 32 }, hk, hk2;
	struct stream_head h;
	char path[700], cfgdir[600], why[512];
	struct stat st;
	long at;

	if (!mkdtemp(dir))
		return 1;
	memset(k1.key, 1, 32);
	memset(k2.key, 2, 32);
	snprintf(hc.runtime_dir, sizeof(hc.runtime_dir), "%s/run", dir);
	snprintf(cfgdir, sizeof(cfgdir), "%s/run", dir);
	mkdir(cfgdir, 0700);
	snprintf(cfgdir, sizeof(cfgdir), "%s/run/web", dir);
	mkdir(cfgdir, 0700);
	snprintf(path, sizeof(path), "%s/config", cfgdir);
	unit_write_file(path, "name = \"web\"\nmemory = 64\nkernel = \"/some/dir/kernel\"\n");

	CHECK("a signed HEAD is written", written(&hc, &k1, path, sizeof(path)) == 0 && find(path, "\nsigned ") > 0);
	CHECK("it reads back", read_back(path, -1, &h) == 0 && strcmp(h.name, "web") == 0 && h.has_mac &&
	      strstr(h.config, "/some/dir/kernel") && !strstr(h.config, "signed"));
	CHECK("it verifies with its key", head_signed_by(&h, &k1));
	CHECK("not with another", !head_signed_by(&h, &k2));
	CHECK("not without a key", !head_signed_by(&h, NULL));
	head_free(&h);

	at = find(path, "/some/dir/kernel");
	read_back(path, at + 1, &h);               /* the CRC catches it first */
	head_free(&h);
	fix_crc(path);
	CHECK("one byte of its config changed (CRC fixed): it reads, and does not verify",
	      read_back(path, -1, &h) == 0 && !strstr(h.config, "/some/dir/kernel") && !head_signed_by(&h, &k1));
	head_free(&h);

	written(&hc, &k1, path, sizeof(path));
	at = find(path, "saved ");
	read_back(path, at + 6, &h);
	head_free(&h);
	fix_crc(path);
	CHECK("its saved time changed: does not verify", read_back(path, -1, &h) == 0 && !head_signed_by(&h, &k1));
	head_free(&h);

	written(&hc, &k1, path, sizeof(path));
	at = find(path, "\nsigned ");
	read_back(path, at + 8, &h);
	head_free(&h);
	fix_crc(path);
	CHECK("its signature changed: does not verify", read_back(path, -1, &h) == 0 && !head_signed_by(&h, &k1));
	head_free(&h);

	CHECK("an unsigned HEAD reads as before and proves nothing",
	      written(&hc, NULL, path, sizeof(path)) == 0 && find(path, "signed") < 0 &&
	      read_back(path, -1, &h) == 0 && !h.has_mac && !head_signed_by(&h, &k1));
	head_free(&h);

	/* This host's key, under a root of the test's own. */
	cfg_set_root(dir);
	CHECK("no key, not made on reading: none", host_key_get(&hk, false, why, sizeof(why)) < 0 && hk.len == 0);
	CHECK("made on first use", host_key_get(&hk, true, why, sizeof(why)) == 0 && hk.len == 32);
	host_key_path(path, sizeof(path));
	CHECK("32 bytes, mode 0600, ours", stat(path, &st) == 0 && st.st_size == 32 && (st.st_mode & 0777) == 0600 &&
	      st.st_uid == geteuid());
	CHECK("made once: read again, the same key",
	      host_key_get(&hk2, true, why, sizeof(why)) == 0 && memcmp(hk.key, hk2.key, 32) == 0);
	chmod(path, 0644);
	CHECK("a key others may read is refused", host_key_get(&hk2, true, why, sizeof(why)) < 0 && hk2.len == 0 &&
	      strstr(why, "0600"));
	nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
	UNIT_EXIT();
}

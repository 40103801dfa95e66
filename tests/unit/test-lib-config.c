/* Config files: every fixture in tests/config (pass-*.cfg must load,
 * fail-*.cfg must fail with the one message its "# expect: LINE: KEY: TEXT"
 * comment or fail-*.ok file names), the save/load round trip, Xen's list
 * syntax, relative paths, default MACs, --root, lodge check itself, and
 * lodge.conf(5) against the schema (the key table). */
#include "config-keys.h"
#include "log.h"
#include "unit.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char fixtures[CFG_PATH_MAX], tmpdir[] = "/tmp/lodge-config.XXXXXX";
static struct host_config hc;
static struct domain_config dc, dc2;

/* "LINE: KEY: TEXT" from fail-X.ok, else from the "# expect:" comment. */
static int expectation(const char *cfg, char *out, size_t len)
{
	char path[CFG_PATH_MAX + 8], line[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%.*s.ok", (int)(strlen(cfg) - 4), cfg);
	if ((f = fopen(path, "r"))) {
		if (fgets(line, sizeof(line), f))
			snprintf(out, len, "%s", line);
		fclose(f);
		out[strcspn(out, "\n")] = '\0';
		return 0;
	}
	if (!(f = fopen(cfg, "r")))
		return -1;
	out[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if ((p = strstr(line, "# expect: "))) {
			snprintf(out, len, "%s", p + 10);
			out[strcspn(out, "\n")] = '\0';
			break;
		}
	fclose(f);
	return out[0] ? 0 : -1;
}

static void check_fail_fixture(const char *path, const char *base)
{
	char expect[1024], err[2048], prefix[CFG_PATH_MAX + 256], name[300];
	const char *text;
	int line, n = 0;
	char key[64];

	snprintf(name, sizeof(name), "%s fails as expected", base);
	if (expectation(path, expect, sizeof(expect)) ||
	    sscanf(expect, "%d: %63[^:]: %n", &line, key, &n) != 2 || !n) {
		CHECK(name, !"an '# expect: LINE: KEY: TEXT' comment or a .ok file");
		return;
	}
	text = expect + n;
	snprintf(prefix, sizeof(prefix), "%s:%d: %s: ", path, line, key);
	/* Bridges are checked here: fail-bridge-unknown needs it. */
	if (domain_config_load(path, &hc, true, &dc, err, sizeof(err)) >= 0) {
		CHECK(name, !"loads but should fail");
		return;
	}
	if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err + strlen(prefix), text) ||
	    text_find_control(err)) {
		printf("FAIL: %s: got \"%s\", want \"%s%s...\"\n", name, err, prefix, text);
		unit_failures++;
		return;
	}
	CHECK(name, 1);
}

static void test_fixtures(void)
{
	struct dirent **list;
	char path[CFG_PATH_MAX + 300], err[2048], name[300];
	int i, n = scandir(fixtures, &list, NULL, alphasort), npass = 0, nfail = 0;

	CHECK("fixture directory readable", n > 0);
	for (i = 0; i < n; i++) {
		const char *base = list[i]->d_name;
		size_t len = strlen(base);

		snprintf(path, sizeof(path), "%s/%s", fixtures, base);
		if (len > 4 && strcmp(base + len - 4, ".cfg") == 0 && strncmp(base, "pass-", 5) == 0) {
			int rc = domain_config_load(path, &hc, false, &dc, err, sizeof(err));

			snprintf(name, sizeof(name), "%s loads", base);
			if (rc)
				printf("FAIL: %s: %s\n", name, err), unit_failures++;
			else
				CHECK(name, 1);
			npass++;
		} else if (len > 4 && strcmp(base + len - 4, ".cfg") == 0 && strncmp(base, "fail-", 5) == 0) {
			check_fail_fixture(path, base);
			nfail++;
		}
		free(list[i]);
	}
	free(list);
	CHECK("fixtures include pass and fail files", npass >= 3 && nfail >= 20);
}

static void test_values(void)
{
	char path[CFG_PATH_MAX + 64], err[2048], want[CFG_PATH_MAX + 64];
	uint8_t mac[6] = { 0x02, 0x4c, 0, 0, 0, 0x0a };

	snprintf(path, sizeof(path), "%s/pass-xm-2005.cfg", fixtures);
	CHECK("xm 2005 config loads", domain_config_load(path, &hc, false, &dc, err, sizeof(err)) == 0);
	snprintf(want, sizeof(want), "%s/dummy-kernel", fixtures);
	CHECK("relative kernel is relative to the config's directory", strcmp(dc.kernel, want) == 0);
	CHECK("relative ramdisk too", strcmp(dc.ramdisk, want) == 0);
	snprintf(want, sizeof(want), "%s/dummy-disk.img", fixtures);
	CHECK("relative disk too", dc.ndisks == 2 && strcmp(dc.disks[0].path, want) == 0);
	CHECK("file: disk hda1 writable", !strcmp(dc.disks[0].vdev, "hda1") && !dc.disks[0].readonly && !dc.disks[0].is_phy);
	CHECK("phy:null is /dev/null, read-only", !strcmp(dc.disks[1].path, "/dev/null") && dc.disks[1].readonly &&
	      dc.disks[1].is_phy && !strcmp(dc.disks[1].vdev, "hdb"));
	CHECK("root and extra joined as xl does", strcmp(dc.cmdline, "root=/dev/hda1 ro console=ttyS0") == 0);
	CHECK("memory, vcpus, name", dc.memory_mib == 64 && dc.vcpus == 2 && !strcmp(dc.name, "web-01"));
	CHECK("actions", dc.on_poweroff == ACTION_DESTROY && dc.on_reboot == ACTION_RESTART && dc.on_crash == ACTION_PRESERVE);

	snprintf(path, sizeof(path), "%s/pass-xl-modern.cfg", fixtures);
	CHECK("xl config loads", domain_config_load(path, &hc, false, &dc, err, sizeof(err)) == 0);
	CHECK("numbers given as strings", dc.memory_mib == 512 && dc.maxmem_mib == 1024 && dc.vcpus == 4);
	CHECK("cmdline overrides root", strcmp(dc.cmdline, "console=ttyS0 quiet") == 0);
	CHECK("three disk forms", dc.ndisks == 3 && !strcmp(dc.disks[0].vdev, "xvda") && !dc.disks[0].readonly &&
	      dc.disks[1].readonly && !strcmp(dc.disks[2].vdev, "vdc") && dc.disks[2].readonly);
	CHECK("vif keys", dc.nvifs == 3 && !strcmp(dc.vifs[0].bridge, "br0") && dc.vifs[0].mac_set &&
	      !memcmp(dc.vifs[0].mac, mac, 6) && !strcmp(dc.vifs[0].vifname, "db0"));
	CHECK("vif without mac or bridge", !dc.vifs[1].mac_set && !strcmp(dc.vifs[1].bridge, "br1") &&
	      !dc.vifs[2].bridge[0] && !dc.vifs[2].mac_set);
	CHECK("autostart = 1", dc.autostart);
	CHECK("cpus, cpu_weight as a string, cap over 100", dc.ncpus == 1 && !strcmp(dc.cpus[0], "0") &&
	      dc.cpu_weight == 512 &&
	      dc.cap == 150);

	snprintf(path, sizeof(path), "%s/pass-sched.cfg", fixtures);
	CHECK("CPU keys load", domain_config_load(path, &hc, false, &dc, err, sizeof(err)) == 0);
	CHECK("cpus one list per vCPU, weight, cap", dc.ncpus == 2 && !strcmp(dc.cpus[0], "all") &&
	      !strcmp(dc.cpus[1], "0") && dc.cpu_weight == 512 && dc.cap == 50);

	snprintf(path, sizeof(path), "%s/pass-minimal.cfg", fixtures);
	CHECK("minimal loads", domain_config_load(path, &hc, false, &dc, err, sizeof(err)) == 0);
	CHECK("xl's defaults", dc.memory_mib == 128 && dc.vcpus == 1 && dc.maxmem_mib == 0 && !dc.ndisks &&
	      !dc.nvifs && dc.on_poweroff == ACTION_DESTROY && dc.on_reboot == ACTION_RESTART &&
	      dc.on_crash == ACTION_DESTROY && !dc.autostart && !dc.ramdisk[0] && !dc.cmdline[0] &&
	      !dc.ksm && !dc.hugepages);
	CHECK("xl's CPU defaults: any CPU, weight 256, no cap", !dc.ncpus && dc.cpu_weight == 256 && !dc.cap);

	snprintf(path, sizeof(path), "%s/pass-memory.cfg", fixtures);
	CHECK("memory knobs load", domain_config_load(path, &hc, false, &dc, err, sizeof(err)) == 0);
	CHECK("maxmem above memory, ksm = 1, hugepages = yes",
	      dc.memory_mib == 64 && dc.maxmem_mib == 256 && dc.ksm && dc.hugepages);
}

/* Save, load back: the same config; save again: the same bytes. */
static void test_round_trip(void)
{
	char path[CFG_PATH_MAX + 64], saved[300], saved2[300], err[2048], a[8192], b[8192];
	FILE *f;
	size_t na = 0, nb = 0;

	snprintf(path, sizeof(path), "%s/pass-xl-modern.cfg", fixtures);
	snprintf(saved, sizeof(saved), "%s/saved.cfg", tmpdir);
	snprintf(saved2, sizeof(saved2), "%s/saved2.cfg", tmpdir);
	CHECK("load for round trip", domain_config_load(path, &hc, false, &dc, err, sizeof(err)) == 0);
	strcpy(dc.cmdline, "quote\" backslash\\ 'single' [x] # not a comment");
	CHECK("save", domain_config_save(saved, &dc, err, sizeof(err)) == 0);
	CHECK("saved file loads", domain_config_load(saved, &hc, false, &dc2, err, sizeof(err)) == 0);
	memcpy(dc2.file, dc.file, sizeof(dc.file));
	CHECK("round trip is identical", memcmp(&dc, &dc2, sizeof(dc)) == 0);
	CHECK("save again", domain_config_save(saved2, &dc2, err, sizeof(err)) == 0);
	if ((f = fopen(saved, "r"))) { na = fread(a, 1, sizeof(a), f); fclose(f); }
	if ((f = fopen(saved2, "r"))) { nb = fread(b, 1, sizeof(b), f); fclose(f); }
	CHECK("second save is byte-identical", na > 0 && na == nb && !memcmp(a, b, na));
	CHECK("no temporary left behind", access(strcat(saved, ".tmp"), F_OK) != 0);
}

/* bootloader = "lodge": no kernel, and kept through a save (the runtime
 * directory's copy of a running domain's config is one). */
static void test_bootloader_round_trip(void)
{
	char path[CFG_PATH_MAX + 64], saved[300], err[2048];

	snprintf(path, sizeof(path), "%s/pass-bootloader.cfg", fixtures);
	snprintf(saved, sizeof(saved), "%s/saved-bootloader.cfg", tmpdir);
	CHECK("bootloader = \"lodge\": loads without a kernel, extra as the command line",
	      domain_config_load(path, &hc, false, &dc, err, sizeof(err)) == 0 && dc.bootloader && !dc.kernel[0] &&
	      !strcmp(dc.cmdline, "quiet"));
	CHECK("bootloader = \"lodge\": saved and loaded back, the same",
	      domain_config_save(saved, &dc, err, sizeof(err)) == 0 &&
	      domain_config_load(saved, &hc, false, &dc2, err, sizeof(err)) == 0 &&
	      (memcpy(dc2.file, dc.file, sizeof(dc.file)), memcmp(&dc, &dc2, sizeof(dc)) == 0));
}

/* slot=N, which the runtime config of a domain that had devices hot-plugged
 * carries for each disk and vif: parsed, range-checked, written back in
 * xl's keyed disk form (the only one with room for it), loaded the same. */
static void test_slots(void)
{
	char path[CFG_PATH_MAX + 64], saved[300], img[300], err[2048];
	FILE *f;

	snprintf(img, sizeof(img), "%s/slot.img", tmpdir);
	snprintf(path, sizeof(path), "%s/slots.cfg", tmpdir);
	snprintf(saved, sizeof(saved), "%s/slots-saved.cfg", tmpdir);
	if ((f = fopen(img, "w")))
		fclose(f);
	if (!(f = fopen(path, "w")))
		return;
	fprintf(f, "name = \"s\"\nkernel = \"%s\"\n"
		"disk = [ 'vdev=vdb,access=r,slot=7,target=%s', '%s,raw,vdc,rw' ]\n"
		"vif = [ 'bridge=br0,slot=30', '' ]\n", img, img, img);
	fclose(f);
	CHECK("slot= on a disk and a vif loads",
	      domain_config_load(path, &hc, false, &dc, err, sizeof(err)) == 0 && dc.disks[0].slot == 7 &&
	      dc.disks[0].readonly && dc.disks[1].slot == 0 && dc.vifs[0].slot == 30 && dc.vifs[1].slot == 0);
	CHECK("slot= saved and loaded back, the same",
	      domain_config_save(saved, &dc, err, sizeof(err)) == 0 &&
	      domain_config_load(saved, &hc, false, &dc2, err, sizeof(err)) == 0 &&
	      (memcpy(dc2.file, dc.file, sizeof(dc.file)), memcmp(&dc, &dc2, sizeof(dc)) == 0));
	if ((f = fopen(path, "w"))) {
		fprintf(f, "name = \"s\"\nkernel = \"%s\"\n"
			"disk = [ 'vdev=vdb,slot=4,target=%s', 'vdev=vdc,slot=4,target=%s' ]\n", img, img, img);
		fclose(f);
		CHECK("two disks in one slot refused",
		      domain_config_load(path, &hc, false, &dc, err, sizeof(err)) != 0 &&
		      strstr(err, "disks 1 and 2 are both in slot 4"));
	}
	for (int i = 0; i < 3; i++) {
		static const char *const bad[] = { "slot=0", "slot=31", "slot=x" };

		if (!(f = fopen(path, "w")))
			return;
		fprintf(f, "name = \"s\"\nkernel = \"%s\"\ndisk = [ 'vdev=vdb,%s,target=%s' ]\n", img, bad[i], img);
		fclose(f);
		snprintf(saved, sizeof(saved), "disk %s refused (the balloon's slot, the host bridge's, no number)", bad[i]);
		CHECK(saved, domain_config_load(path, &hc, false, &dc, err, sizeof(err)) != 0 &&
		      strstr(err, "is not a PCI slot from 1 to 30"));
	}
}

/* Brackets, single quotes, comments holding both, on lines that keep
 * their numbers: the error on line 9 is reported on line 9. */
static void test_xen_syntax(void)
{
	char path[300], text[4 * CFG_PATH_MAX], err[2048], want[400];

	snprintf(path, sizeof(path), "%s/xen.cfg", tmpdir);
	snprintf(text, sizeof(text),
		 "name = 'xen' # it's [a] \"comment\"\n"
		 "kernel = '%s/dummy-kernel'\n"
		 "disk = [\n"
		 "  '%s/dummy-disk.img,raw,xvda,rw', # ['x'] \"y\"\n"
		 "  \"%s/dummy-disk.img,raw,xvdb,ro\"\n"
		 "]\n"
		 "extra = 'a \"quoted\" \\\\word'\n"
		 "\n"
		 "vcpus = 0\n", fixtures, fixtures, fixtures);
	unit_write_file(path, text);
	snprintf(want, sizeof(want), "%s:9: vcpus: ", path);
	CHECK("lines survive the rewrite", domain_config_load(path, &hc, false, &dc, err, sizeof(err)) < 0 &&
	      strncmp(err, want, strlen(want)) == 0);
	*strrchr(text, 'v') = '\0';
	unit_write_file(path, text);
	CHECK("brackets and single quotes parse", domain_config_load(path, &hc, false, &dc, err, sizeof(err)) == 0);
	CHECK("list values", dc.ndisks == 2 && !strcmp(dc.disks[1].vdev, "xvdb") && dc.disks[1].readonly);
	CHECK("single quotes are literal", strcmp(dc.cmdline, "a \"quoted\" \\\\word") == 0);
	CHECK("absolute paths used as written", strncmp(dc.kernel, fixtures, strlen(fixtures)) == 0);
}

/* What libconfuse alone would do differently: a word is a string however
 * it looks (// and / * are no comments), ${VAR} is not the environment's,
 * a run of digits after \ is an octal escape and digits. */
static void test_words(void)
{
	char path[300], text[2 * CFG_PATH_MAX], err[2048];

	snprintf(path, sizeof(path), "%s/words.cfg", tmpdir);
	snprintf(text, sizeof(text), "// libconfuse's comments\nname = web /* on\ntwo lines */\n"
		 "kernel = %s//dummy-kernel\nextra = \"${HOME} a\\1234 $x\"\n", fixtures);
	unit_write_file(path, text);
	CHECK("unquoted words load", domain_config_load(path, &hc, false, &dc, err, sizeof(err)) == 0);
	CHECK("// inside a word is not a comment", strstr(dc.kernel, "//dummy-kernel") != NULL);
	CHECK("${HOME} is not expanded, \\1234 is \\123 then 4", strcmp(dc.cmdline, "${HOME} aS4 $x") == 0);
	strcat(text, "vcpus = 0\n");
	unit_write_file(path, text);
	CHECK("lines counted through // and /* */ comments",
	      domain_config_load(path, &hc, false, &dc, err, sizeof(err)) < 0 && strstr(err, "words.cfg:6: vcpus: "));
	unit_write_file(path, "name = web\n/* never closed\n\n");
	CHECK("an unclosed /* comment is an error on its line",
	      domain_config_load(path, &hc, false, &dc, err, sizeof(err)) < 0 &&
	      strstr(err, "words.cfg:2: syntax: a /* comment without its */"));
}

static int load_text(const char *text, size_t len, char *err, size_t errlen)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/untrusted.cfg", tmpdir);
	if (!(f = fopen(path, "w")))
		return 0;
	fwrite(text, 1, len, f);
	fclose(f);
	return domain_config_load(path, &hc, false, &dc, err, errlen);
}

/* lodge check on a file that is no config: one line that names the file
 * and quotes none of it, and a bound on what is read. */
static void test_untrusted_files(void)
{
	static const char *const not_configs[] = {
		"s3cr3t-4f9a2b7c1d0e8f6a5b4c3d2e1f0a9b8c\n",                  /* a migration secret */
		"root:$y$j9T$s3cr3tHASH:19000:0:99999:7:::\n",                 /* /etc/shadow */
		"s3cr3t_password = hunter2\nname = 'x'\n",                     /* KEY = VALUE, not ours */
		"-----BEGIN OPENSSH PRIVATE KEY-----\ns3cr3tbase64\n",
		"\x7f" "ELF\x02\x01\x01\0\0s3cr3t\x1b[2J",                      /* a binary */
		"[s3cr3t]\nkey=value\n",                                        /* an INI file */
	};
	static const char after_key[] = "name = 'x'\nkernel = 'k\x1b[2J'\n";
	static char big[2 << 20];
	char err[2048], name[96], path[300];
	size_t i, len;
	int rc;

	for (i = 0; i < sizeof(not_configs) / sizeof(not_configs[0]); i++) {
		len = i == 4 ? 20 : strlen(not_configs[i]);
		rc = load_text(not_configs[i], len, err, sizeof(err));
		snprintf(name, sizeof(name), "not a config (%zu): refused without quoting it", i);
		CHECK(name, rc < 0 && strstr(err, ":1: not a Lodge config") && !strstr(err, "s3cr3t") &&
		      !strstr(err, "hunter2") && !text_find_control(err));
		if (rc >= 0 || !strstr(err, ":1: not a Lodge config") || strstr(err, "s3cr3t"))
			printf("  got: %s\n", err);
	}
	rc = load_text(after_key, strlen(after_key), err, sizeof(err));
	CHECK("after a known key, messages stay helpful, escaped",
	      rc < 0 && strstr(err, ":2: kernel: contains a control character (\\e)") && !text_find_control(err));

	/* At the limit: loads; one byte more: refused unread. */
	snprintf(big, sizeof(big), "name = 'big'\nkernel = '%s/dummy-kernel'\n#", fixtures);
	len = strlen(big);
	memset(big + len, 'x', (1 << 20) - len - 1);
	big[(1 << 20) - 1] = '\n';
	CHECK("a 1 MiB config loads", load_text(big, 1 << 20, err, sizeof(err)) == 0);
	memset(big + (1 << 20) - 1, 'x', (1 << 20) + 1);
	rc = load_text(big, 2 << 20, err, sizeof(err));
	CHECK("a 2 MiB config: FILE: larger than 1 MiB; not a Lodge config",
	      rc < 0 && strstr(err, "untrusted.cfg: larger than 1 MiB; not a Lodge config") && !strstr(err, "big"));
	rc = domain_config_load("/dev/zero", &hc, false, &dc, err, sizeof(err));
	CHECK("endless input (/dev/zero) stops at the bound",
	      rc < 0 && !strcmp(err, "/dev/zero: larger than 1 MiB; not a Lodge config"));
	snprintf(path, sizeof(path), "%s/fifo.cfg", tmpdir);
	rc = mkfifo(path, 0600) == 0 ? domain_config_load(path, &hc, false, &dc, err, sizeof(err)) : 0;
	CHECK("a FIFO with no writer is read as empty, not waited on", rc < 0 && strstr(err, "name: missing"));
	snprintf(path, sizeof(path), "%s\033[2J/x.cfg", tmpdir);
	rc = domain_config_load(path, &hc, false, &dc, err, sizeof(err));
	CHECK("a file name is shown escaped", rc < 0 && strstr(err, "\\e[2J/x.cfg: ") && !text_find_control(err));
}

/* A file that ends in a \ inside "...": refused with a message, and
 * nothing on stdout (libconfuse's lexer echoes what it cannot match). */
static void test_trailing_backslash(void)
{
	char path[300], out[300], err[2048];
	int saved = dup(STDOUT_FILENO), fd, rc;
	struct stat st;

	snprintf(path, sizeof(path), "%s/backslash.cfg", tmpdir);
	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	unit_write_file(path, "name = \"a\\");
	fd = open(out, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	rc = domain_config_load(path, &hc, false, &dc, err, sizeof(err));
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	CHECK("a file ending in a backslash inside \"...\" is refused with a message", rc < 0 && err[0]);
	CHECK("... and writes nothing to stdout", stat(out, &st) == 0 && st.st_size == 0);
}

static int mac_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 6);
}

static void test_default_mac(void)
{
	static uint8_t macs[2000][6];
	uint8_t m1[6], m2[6];
	char name[32];
	unsigned i, dups = 0;

	cfg_default_mac("web", 0, m1);
	cfg_default_mac("web", 0, m2);
	CHECK("default MAC is stable", memcmp(m1, m2, 6) == 0);
	CHECK("02:4c prefix: locally administered, unicast", m1[0] == 0x02 && m1[1] == 0x4c);
	cfg_default_mac("web", 1, m2);
	CHECK("index changes the MAC", memcmp(m1, m2, 6) != 0);
	cfg_default_mac("weB", 0, m2);
	CHECK("name changes the MAC", memcmp(m1, m2, 6) != 0);
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "dom%u", i / 2);
		cfg_default_mac(name, i % 2, macs[i]);
	}
	qsort(macs, 2000, 6, mac_cmp);
	for (i = 1; i < 2000; i++)
		dups += memcmp(macs[i - 1], macs[i], 6) == 0;
	CHECK("1000 domains x 2 vifs: all MACs differ", dups == 0);
}

static void test_root(void)
{
	char want[CFG_PATH_MAX + 64], path[CFG_PATH_MAX + 64], err[2048];

	snprintf(want, sizeof(want), "%s/run/lodge", tmpdir);
	CHECK("root prefixes runtime_dir", strcmp(hc.runtime_dir, want) == 0);
	snprintf(want, sizeof(want), "%s/etc/lodge/domains", tmpdir);
	CHECK("root prefixes domains_dir", strcmp(hc.domains_dir, want) == 0);
	CHECK("host defaults", !strcmp(hc.default_bridge, "lodgebr0") && hc.console_log_kib == 1024);
	snprintf(want, sizeof(want), "%s/var/lib/lodge/save", tmpdir);
	CHECK("host shutdown defaults: save, 300 s, ROOT/var/lib/lodge/save",
	      hc.host_shutdown_saves && hc.shutdown_timeout_s == 300 && !strcmp(hc.save_dir, want));
	snprintf(want, sizeof(want), "lodge/%s", tmpdir + 1);
	*strchr(want + 6, '/') = '-';
	CHECK("root names the cgroup parent: lodge/tmp-lodge-config.XXXXXX", strcmp(hc.cgroup, want) == 0);

	snprintf(path, sizeof(path), "%s/etc", tmpdir);
	mkdir(path, 0755);
	strcat(path, "/lodge");
	mkdir(path, 0755);
	strcat(path, "/lodge.conf");
	unit_write_file(path, "# host\nruntime_dir = '/srv/run'\nimage_dir = 'images'\ndefault_bridge = 'br7'\n"
			 "console_log_size = \"64\"\ncgroup = 'lodge.slice/doms'\n");
	CHECK("lodge.conf loads", host_config_load(&hc, err, sizeof(err)) == 0);
	CHECK("values in lodge.conf are used as written", strcmp(hc.runtime_dir, "/srv/run") == 0);
	snprintf(want, sizeof(want), "%s/etc/lodge/images", tmpdir);
	CHECK("relative to lodge.conf's directory", strcmp(hc.image_dir, want) == 0);
	snprintf(want, sizeof(want), "%s/etc/lodge/domains", tmpdir);
	CHECK("unset keys keep prefixed defaults", strcmp(hc.domains_dir, want) == 0);
	CHECK("bridge and log size", !strcmp(hc.default_bridge, "br7") && hc.console_log_kib == 64);
	CHECK("cgroup", !strcmp(hc.cgroup, "lodge.slice/doms"));
	unit_write_file(path, "cgroup = '../escape'\n");
	snprintf(want, sizeof(want), "%s:1: cgroup: '../escape' is not a relative cgroup path", path);
	CHECK("a cgroup outside the controller is refused",
	      host_config_load(&hc, err, sizeof(err)) < 0 && !strncmp(err, want, strlen(want)));
	unit_write_file(path, "image_dir = 'images'\nruntime_dir = \"/run/x\\n\"\n");
	snprintf(want, sizeof(want), "%s:2: runtime_dir: contains a control character (\\n)", path);
	CHECK("lodge.conf: a path with a control character is refused",
	      host_config_load(&hc, err, sizeof(err)) < 0 && !strcmp(err, want));
	unit_write_file(path, "on_host_shutdown = 'shutdown'\nshutdown_timeout = 20\nsave_dir = '/srv/save'\n");
	CHECK("on_host_shutdown, shutdown_timeout, save_dir as written",
	      host_config_load(&hc, err, sizeof(err)) == 0 && !hc.host_shutdown_saves && hc.shutdown_timeout_s == 20 &&
	      !strcmp(hc.save_dir, "/srv/save"));
	unit_write_file(path, "shutdown_timeout = 20\non_host_shutdown = 'suspend'\n");
	snprintf(want, sizeof(want), "%s:2: on_host_shutdown: 'suspend' is neither save nor shutdown", path);
	CHECK("on_host_shutdown other than save or shutdown is refused",
	      host_config_load(&hc, err, sizeof(err)) < 0 && !strcmp(err, want));
	unit_write_file(path, "shutdown_timeout = 0\n");
	snprintf(want, sizeof(want), "%s:1: shutdown_timeout: 0 s is out of range (1 to 86400 s, default 300 s)", path);
	CHECK("shutdown_timeout 0 is refused with its range",
	      host_config_load(&hc, err, sizeof(err)) < 0 && !strcmp(err, want));
	unit_write_file(path, "default_bridge = 'br7'\nconsole_log_size = 0\n");
	snprintf(want, sizeof(want), "%s:2: console_log_size: ", path);
	CHECK("lodge.conf errors have file, line, key",
	      host_config_load(&hc, err, sizeof(err)) < 0 && !strncmp(err, want, strlen(want)));
	/* The one rule pool-join --prefix follows too (schema.h): a quote or
	 * backslash would break the line pool-join writes back. */
	unit_write_file(path, "pool_prefix = \"/lodge/a\\\"b\"\n");
	snprintf(want, sizeof(want), "%s:1: pool_prefix: '/lodge/a\"b' is not a key prefix", path);
	CHECK("lodge.conf: a pool_prefix with a quote is refused, as pool-join --prefix refuses it",
	      host_config_load(&hc, err, sizeof(err)) < 0 && !strncmp(err, want, strlen(want)));
	unit_write_file(path, "pool_prefix = '/lodge/pool2'\n");
	CHECK("lodge.conf: pool_prefix /lodge/pool2", host_config_load(&hc, err, sizeof(err)) == 0);
	unlink(path);

	cfg_set_root("/");
	CHECK("root / is no prefix", host_config_load(&hc, err, sizeof(err)) == 0 || strstr(err, "/etc/lodge/lodge.conf:"));
	CHECK("default paths without root", strcmp(hc.runtime_dir, "/run/lodge") == 0 || strstr(err, "lodge.conf"));
	CHECK("default cgroup without root", strcmp(hc.cgroup, "lodge") == 0 || strstr(err, "lodge.conf"));
	cfg_set_root(tmpdir);
	host_config_load(&hc, err, sizeof(err));
}

/* The command: one line out, exit 0 or 1; NAME looks in domains_dir. */
static void test_check_command(void)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char lodge[CFG_PATH_MAX], cmd[3 * CFG_PATH_MAX], out[4096], path[CFG_PATH_MAX + 64];
	size_t n;
	FILE *p;
	int st;

	snprintf(lodge, sizeof(lodge), "%s/lodge", build);
	if (access(lodge, X_OK) != 0) {
		printf("SKIP: lodge check: %s not built\n", lodge);
		return;
	}
	snprintf(cmd, sizeof(cmd), "%s --root %s check %s/pass-minimal.cfg 2>&1", lodge, tmpdir, fixtures);
	p = popen(cmd, "r");
	n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;
	out[n] = '\0';
	st = p ? pclose(p) : -1;
	snprintf(path, sizeof(path), "%s/pass-minimal.cfg: ok\n", fixtures);
	CHECK("lodge check FILE: ok, exit 0", WIFEXITED(st) && WEXITSTATUS(st) == 0 && !strcmp(out, path));

	snprintf(path, sizeof(path), "%s/etc/lodge/domains", tmpdir);
	mkdir(path, 0755);
	strcat(path, "/bad.cfg");
	unit_write_file(path, "name = 'bad'\nkernel = '/nonexistent'\n");
	snprintf(cmd, sizeof(cmd), "%s --root %s check bad 2>&1", lodge, tmpdir);
	p = popen(cmd, "r");
	n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;
	out[n] = '\0';
	st = p ? pclose(p) : -1;
	snprintf(cmd, sizeof(cmd), "%s:2: kernel: cannot read '/nonexistent'", path);
	CHECK("lodge check NAME: one error line, exit 1", WIFEXITED(st) && WEXITSTATUS(st) == 1 &&
	      !strncmp(out, cmd, strlen(cmd)) && strchr(out, '\n') == out + n - 1);
}

/* ---- lodge.conf(5) and the schema ---------------------------------------------- */

#define MAN_LINES 2000

struct man_page {
	char *line[MAN_LINES];
	unsigned n;
};

/* Is line i a key's heading (".TP" or ".TQ", then ".BR KEY ...") naming
 * key?  Keys are the unquoted words before the first quoted "(...". */
static bool man_heading_names(const struct man_page *m, unsigned i, const char *key)
{
	const char *p;
	size_t len = strlen(key);

	if (i == 0 || strncmp(m->line[i], ".BR ", 4) || (strcmp(m->line[i - 1], ".TP") && strcmp(m->line[i - 1], ".TQ")))
		return false;
	for (p = m->line[i] + 4; *p;) {
		if (*p == '"') {
			const char *end = strchr(p + 1, '"');

			if (!end || memchr(p, '(', (size_t)(end - p)))
				return false;
			p = end + 1;
		} else if (*p == ' ') {
			p++;
		} else {
			size_t w = strcspn(p, " \"");

			if (key && w == len && !strncmp(p, key, len))
				return true;
			p += w;
		}
	}
	return false;
}

/* The key words of the heading at line i, into words (space-separated). */
static void man_heading_words(const struct man_page *m, unsigned i, char *words, size_t len)
{
	const char *p = m->line[i] + 4;
	size_t n = 0;

	words[0] = '\0';
	while (*p) {
		if (*p == '"') {
			const char *end = strchr(p + 1, '"');

			if (!end || memchr(p, '(', (size_t)(end - p)))
				return;
			p = end + 1;
		} else if (*p == ' ') {
			p++;
		} else {
			size_t w = strcspn(p, " \"");

			n += (size_t)snprintf(words + n, len - n, "%.*s ", (int)w, p);
			if (n >= len)
				return;
			p += w;
		}
	}
}

/* The lines of section (".SH title") from its heading of key to the next
 * key's heading after a .TP, or the next section: the key's entry. */
static bool man_entry(const struct man_page *m, const char *section, const char *key, char *heading, size_t hlen,
		      char *entry, size_t elen)
{
	unsigned i, j, from = 0, to = 0;
	size_t n = 0;
	bool in = false;

	for (i = 0; i < m->n && !from; i++) {
		if (!strncmp(m->line[i], ".SH ", 4))
			in = strstr(m->line[i], section) != NULL;
		else if (in && man_heading_names(m, i, key))
			from = i;
	}
	if (!from)
		return false;
	for (to = from + 1; to < m->n; to++)
		if (!strncmp(m->line[to], ".SH ", 4) || !strncmp(m->line[to], ".SS ", 4) ||
		    (!strcmp(m->line[to - 1], ".TP") && !strncmp(m->line[to], ".BR ", 4)))
			break;
	snprintf(heading, hlen, "%s", m->line[from]);
	entry[0] = '\0';
	for (j = from; j < to && n < elen; j++)
		n += (size_t)snprintf(entry + n, elen - n, "%s\n", m->line[j]);
	return true;
}

static void check_man_keys(const struct man_page *m, const char *section, const struct cfg_key *keys)
{
	static const char *const type_words[] = { [KT_STR] = "string", [KT_INT] = "integer", [KT_BOOL] = "boolean",
						   [KT_LIST] = "list" };
	static char heading[1024], entry[16384], name[256], want[128];
	const struct cfg_key *k;
	bool ok;

	for (k = keys; k->name; k++) {
		snprintf(name, sizeof(name), "lodge.conf(5) documents %s: type, default, range", k->name);
		if (!man_entry(m, section, k->name, heading, sizeof(heading), entry, sizeof(entry))) {
			printf("FAIL: %s: no entry (.TP, .BR %s \"(...)\") under %s\n", name, k->name, section);
			unit_failures++;
			continue;
		}
		ok = strstr(heading, type_words[k->type]) != NULL;
		want[0] = '\0';
		if (k->required)
			snprintf(want, sizeof(want), "required");
		else if (k->type == KT_INT)
			snprintf(want, sizeof(want), "default %ld", k->idef);
		else if (k->def)
			snprintf(want, sizeof(want), "%s", k->def[0] ? k->def : "default none");
		ok = ok && strstr(heading, want) && (!k->def || !k->def[0] || strstr(heading, "default"));
		if (k->type == KT_INT)
			snprintf(want, sizeof(want), "%ld to %ld", k->min, k->max);
		else if (k->type == KT_LIST && k->max)
			snprintf(want, sizeof(want), "at most %ld", k->max);
		else if (k->type == KT_STR && k->max)
			snprintf(want, sizeof(want), "at most %ld bytes", k->max);
		ok = ok && strstr(entry, want);
		if (!ok)
			printf("FAIL: %s: the entry lacks one of: %s, its default, \"%s\"\n%s", name,
			       type_words[k->type], want, entry), unit_failures++;
		else
			CHECK(name, 1);
	}
}

/* Every key heading in section names a key of the table. */
static void check_man_known(const struct man_page *m, const char *section, const struct cfg_key *keys)
{
	char words[256], name[512], *w, *save;
	unsigned i, unknown = 0;
	bool in = false;

	for (i = 0; i < m->n; i++) {
		if (!strncmp(m->line[i], ".SH ", 4))
			in = strstr(m->line[i], section) != NULL;
		if (!in || i == 0 || strncmp(m->line[i], ".BR ", 4) ||
		    (strcmp(m->line[i - 1], ".TP") && strcmp(m->line[i - 1], ".TQ")))
			continue;
		man_heading_words(m, i, words, sizeof(words));
		for (w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
			if (!cfg_find_key(keys, w)) {
				printf("FAIL: lodge.conf(5) line %u documents '%s', which is no key of %s\n", i + 1, w,
				       section);
				unknown++;
			}
	}
	snprintf(name, sizeof(name), "every key lodge.conf(5) documents under %s exists", section);
	CHECK(name, unknown == 0);
}

static void test_man_page(void)
{
	static char text[1 << 17];
	char path[CFG_PATH_MAX + 64], *save, *l;
	struct man_page m = { .n = 0 };
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/../../man/lodge.conf.5", fixtures);
	if (!(f = fopen(path, "r"))) {
		printf("FAIL: lodge.conf(5): cannot read %s\n", path);
		unit_failures++;
		return;
	}
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	for (l = strtok_r(text, "\n", &save); l && m.n < MAN_LINES; l = strtok_r(NULL, "\n", &save))
		m.line[m.n++] = l;
	check_man_keys(&m, "HOST SETTINGS", host_keys);
	check_man_keys(&m, "DOMAIN SETTINGS", domain_keys);
	check_man_known(&m, "HOST SETTINGS", host_keys);
	check_man_known(&m, "DOMAIN SETTINGS", domain_keys);
	check_man_keys(&m, "NETWORK SETTINGS", network_keys);
	check_man_known(&m, "NETWORK SETTINGS", network_keys);
}

int main(void)
{
	char err[1024];

	if (getenv("TOP"))
		snprintf(fixtures, sizeof(fixtures), "%s/tests/config", getenv("TOP"));
	else if (!realpath("tests/config", fixtures))
		snprintf(fixtures, sizeof(fixtures), "tests/config");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL: mkdtemp\n");
		return 1;
	}
	cfg_set_root(tmpdir);
	CHECK("host defaults without lodge.conf", host_config_load(&hc, err, sizeof(err)) == 0);
	test_fixtures();
	test_values();
	test_round_trip();
	test_bootloader_round_trip();
	test_slots();
	test_xen_syntax();
	test_trailing_backslash();
	test_words();
	test_untrusted_files();
	test_default_mac();
	test_root();
	test_check_command();
	test_man_page();
	snprintf(err, sizeof(err), "rm -rf %s", tmpdir);
	if (system(err) != 0)
		printf("FAIL: cannot remove %s\n", tmpdir);
	UNIT_EXIT();
}

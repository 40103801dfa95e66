/* The cloud-init seed's settings (src/lib/install/seed.c): each bad one refused
 * with one message before anything is written; what is written reads
 * back through libyaml as exactly what was given; the password only as a
 * yescrypt hash that verifies; the user's user-data byte for byte in a
 * multipart after Lodge's rules for merging. */
#include "seed.h"
#include "unit.h"

#include <crypt.h>
#include <dirent.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

static char dir[] = "/tmp/lodge-seed.XXXXXX";

static const char *file(const char *name, const char *text)
{
	static char paths[16][600];
	static unsigned next;
	char *p = paths[next++ % 16];
	FILE *f;

	snprintf(p, 600, "%s/%s", dir, name);
	if ((f = fopen(p, "w"))) {
		fputs(text, f);
		fclose(f);
	}
	return p;
}

/* An ssh-ed25519 public key (a made-up point: OpenSSH's parse is what
 * matters), as its .pub line without a comment. */
static void ed25519_line(char *out, size_t len, const char *type_in_blob)
{
	unsigned char blob[128], b64[200];
	size_t n = 0, t = strlen(type_in_blob);

	blob[n++] = 0, blob[n++] = 0, blob[n++] = 0, blob[n++] = (unsigned char)t;
	memcpy(blob + n, type_in_blob, t);
	n += t;
	blob[n++] = 0, blob[n++] = 0, blob[n++] = 0, blob[n++] = 32;
	memset(blob + n, 0x5a, 32);
	n += 32;
	EVP_EncodeBlock(b64, blob, (int)n);
	snprintf(out, len, "ssh-ed25519 %s", b64);
}

/* The scalar at path ("user.hashed_passwd", "packages.1") in a YAML
 * document, malloc'd; NULL if not there. */
static char *yaml_at(const char *text, size_t len, const char *path)
{
	yaml_parser_t p;
	yaml_document_t d;
	yaml_node_t *node;
	char *out = NULL, key[64];

	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &d)) {
		yaml_parser_delete(&p);
		return NULL;
	}
	node = yaml_document_get_root_node(&d);
	while (node && *path) {
		size_t n = strcspn(path, ".");
		yaml_node_t *next = NULL;

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		path += n + (path[n] == '.');
		if (node->type == YAML_MAPPING_NODE) {
			yaml_node_pair_t *pr;

			for (pr = node->data.mapping.pairs.start; pr < node->data.mapping.pairs.top; pr++) {
				yaml_node_t *k = yaml_document_get_node(&d, pr->key);

				if (k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
					next = yaml_document_get_node(&d, pr->value);
			}
		} else if (node->type == YAML_SEQUENCE_NODE) {
			long i = atol(key);

			if (i >= 0 && i < node->data.sequence.items.top - node->data.sequence.items.start)
				next = yaml_document_get_node(&d, node->data.sequence.items.start[i]);
		}
		node = next;
	}
	if (node && node->type == YAML_SCALAR_NODE)
		out = strdup((char *)node->data.scalar.value);
	yaml_document_delete(&d);
	yaml_parser_delete(&p);
	return out;
}

static bool yaml_is(const char *text, size_t len, const char *path, const char *want)
{
	char *v = yaml_at(text, len, path);
	bool ok = v && strcmp(v, want) == 0;

	if (!ok)
		printf("  %s: got '%s', want '%s'\n", path, v ? v : "(none)", want);
	free(v);
	return ok;
}

/* seed_text_make refuses s: its one message (no newline) holds want. */
static bool refused(const struct lodge_seed *s, const char *want)
{
	struct seed_text t;
	struct lodge_err err = { .msg = "" };
	int rc = seed_text_make(s, &t, &err);

	if (rc == 0) {
		seed_text_free(&t);
		printf("  accepted, want '%s'\n", want);
		return false;
	}
	if (!strstr(err.msg, want) || strchr(err.msg, '\n')) {
		printf("  message: %s\n  want: %s\n", err.msg, want);
		return false;
	}
	return true;
}

static bool dir_empty(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool empty = true;

	while (d && (de = readdir(d)))
		if (strncmp(de->d_name, "out", 3) == 0)
			empty = false;
	if (d)
		closedir(d);
	return empty;
}

/* The user's part of a multipart: its base64 lines decoded. */
static char *user_part_decoded(const char *mime, size_t *len)
{
	const char *p = strstr(mime, "Content-Transfer-Encoding: base64"), *end;
	unsigned char *out;
	char *b64, *q;
	int n;

	if (!p || !(p = strstr(p, "\n\n")) || !(end = strstr(p, "\n--")))
		return NULL;
	p += 2;
	b64 = calloc(1, (size_t)(end - p) + 1);
	out = calloc(1, (size_t)(end - p) + 1);
	for (q = b64; p < end; p++)
		if (*p != '\n')
			*q++ = *p;
	n = EVP_DecodeBlock(out, (unsigned char *)b64, (int)(q - b64));
	*len = n < 0 ? 0 : (size_t)n - (q > b64 && q[-1] == '=') - (q > b64 + 1 && q[-2] == '=');
	free(b64);
	return (char *)out;
}

int main(void)
{
	struct seed_text t;
	struct lodge_err err = { .msg = "" };
	struct lodge_seed s = { .name = "web" };
	char key[256], key2[256], keys[1024], line[600], *v, path[700];
	const char *comment = " ops \"quoted\" back\\slash: #not-a-comment 'x' Jos\xc3\xa9 - [a] {b}";
	int rc;

	if (!mkdtemp(dir))
		return 1;

	/* ---- the rules, alone ------------------------------------------------------------- */
	CHECK("hostnames: web, web-1.example.org, 63-character labels are valid",
	      seed_hostname_valid("web") && seed_hostname_valid("web-1.example.org") &&
	      seed_hostname_valid("a23456789012345678901234567890123456789012345678901234567890123"));
	CHECK("hostnames: a newline, a space, a colon, -web, web-, a..b, a 64-character label, '' are not",
	      !seed_hostname_valid("web\nx") && !seed_hostname_valid("we b") && !seed_hostname_valid("web:1") &&
	      !seed_hostname_valid("-web") && !seed_hostname_valid("web-") && !seed_hostname_valid("a..b") &&
	      !seed_hostname_valid("a234567890123456789012345678901234567890123456789012345678901234") &&
	      !seed_hostname_valid("") && !seed_hostname_valid(".web") && !seed_hostname_valid("web."));
	CHECK("packages: vim, g++, libc6.1-dev, vim=2:9.0.1378-2 are valid",
	      seed_package_valid("vim") && seed_package_valid("g++") && seed_package_valid("libc6.1-dev") &&
	      seed_package_valid("vim=2:9.0.1378-2"));
	CHECK("packages: 'a b', 'a: b', '[x]', '-x', 'Vim', 'x', 'vim\\n- evil', '\"vim\"', 'vim=' are not",
	      !seed_package_valid("a b") && !seed_package_valid("a: b") && !seed_package_valid("[x]") &&
	      !seed_package_valid("-x") && !seed_package_valid("Vim") && !seed_package_valid("x") &&
	      !seed_package_valid("vim\n- evil") && !seed_package_valid("\"vim\"") && !seed_package_valid("vim="));

	/* ---- each bad setting: one message ---------------------------------------------- */
	s = (struct lodge_seed){ .name = "web", .hostname = "web\nevil: 1" };
	CHECK("a hostname with a newline is refused, the newline shown escaped",
	      refused(&s, "hostname 'web\\nevil: 1' is not a hostname"));
	s = (struct lodge_seed){ .name = "web_1" };
	CHECK("a domain name that is no hostname, without --hostname, is refused",
	      refused(&s, "domain name 'web_1' is not a hostname"));
	s = (struct lodge_seed){ .name = "web", .packages = "vim,htop tree" };
	CHECK("a package name with a space is refused", refused(&s, "package 'htop tree' is not a Debian package name"));
	s = (struct lodge_seed){ .name = "web", .packages = "vim,{a: b}" };
	CHECK("a package name with YAML syntax is refused", refused(&s, "package '{a: b}' is not a Debian package name"));
	s = (struct lodge_seed){ .name = "web", .packages = "vim,,htop" };
	CHECK("an empty package name is refused", refused(&s, "an empty package name"));

	s = (struct lodge_seed){ .name = "web", .user_data_file = file("ud-shell", "#!/bin/sh\necho hi\n") };
	CHECK("user-data not starting #cloud-config is refused",
	      refused(&s, "does not start with a #cloud-config line"));
	s.user_data_file = file("ud-archive", "#cloud-config-archive\n- type: text/cloud-config\n");
	CHECK("#cloud-config-archive is another type: refused", refused(&s, "does not start with a #cloud-config line"));
	s.user_data_file = file("ud-bad", "#cloud-config\nruncmd: [ls\n  - x: y\n");
	CHECK("user-data that is not YAML is refused with its line", refused(&s, "not YAML"));
	s.user_data_file = file("ud-list", "#cloud-config\n- a\n- b\n");
	CHECK("user-data that is a list is refused", refused(&s, "is a list: cloud-config is a mapping"));
	s.user_data_file = file("ud-two", "#cloud-config\na: 1\n---\nb: 2\n");
	CHECK("user-data of two YAML documents is refused", refused(&s, "more than one YAML document"));
	s.user_data_file = "/nonexistent/ud";
	CHECK("a missing user-data file is named", refused(&s, "user-data /nonexistent/ud: No such file"));

	s = (struct lodge_seed){ .name = "web", .ssh_key_file = file("id_ed25519",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
		"-----END OPENSSH PRIVATE KEY-----\n") };
	CHECK("a private key given as --ssh-key is refused with one message",
	      refused(&s, "is a private key: give its public key"));
	{
		struct lodge_err e = { .msg = "" };

		rc = seed_text_make(&s, &t, &e);
		CHECK("... which holds none of the key", rc < 0 && !strstr(e.msg, "b3BlbnNzaC1rZXkt"));
	}
	ed25519_line(key, sizeof(key), "ssh-ed25519");
	snprintf(keys, sizeof(keys), "%s me@host\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n"
		 "-----END RSA PRIVATE KEY-----\n", key);
	s.ssh_key_file = file("mixed", keys);
	CHECK("a PEM private key after a public one is refused too", refused(&s, "is a private key"));
	s.ssh_key_file = file("rfc4716", "---- BEGIN SSH2 PUBLIC KEY ----\nAAAA\n---- END SSH2 PUBLIC KEY ----\n");
	CHECK("an RFC 4716 public key is refused with how to convert it", refused(&s, "ssh-keygen -i -f"));
	s.ssh_key_file = file("unknown", "ssh-foo AAAAB3NzaC1yc2E= me\n");
	CHECK("an unknown key type is refused with its line", refused(&s, "line 1: 'ssh-foo' is not a public key type"));
	snprintf(keys, sizeof(keys), "# mine\n\nfrom=\"10.0.0.1\" %s\n", key);
	s.ssh_key_file = file("options", keys);
	CHECK("authorized_keys options are refused", refused(&s, "line 3: key options"));
	ed25519_line(key2, sizeof(key2), "ssh-rsa");
	s.ssh_key_file = file("mismatch", key2);
	CHECK("a blob that is not the named type's is refused", refused(&s, "is not base64 of a ssh-ed25519 key"));
	s.ssh_key_file = file("empty-keys", "# nothing\n\n");
	CHECK("a key file without keys is refused", refused(&s, "holds no public key"));
	snprintf(keys, sizeof(keys), "%s a\x1b[2Jb\n", key);
	s.ssh_key_file = file("control", keys);
	CHECK("a key line with a control character is refused", refused(&s, "contains a control character"));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	mkfifo(path, 0600);
	s.ssh_key_file = path;
	CHECK("a FIFO as --ssh-key is refused, not waited on", refused(&s, "not a regular file"));

	s = (struct lodge_seed){ .name = "web", .password_file = file("pw-empty", "\n") };
	CHECK("an empty password is refused", refused(&s, "is empty"));
	s.password_file = file("pw-two", "one\ntwo\n");
	CHECK("a password file of two lines is refused", refused(&s, "more than one line"));

	/* ---- nothing is left by a refusal ---------------------------------------------- */
	snprintf(path, sizeof(path), "%s/out-seed.img", dir);
	s = (struct lodge_seed){ .name = "web", .hostname = "bad host" };
	rc = lodge_seed_build(&s, path, &err);
	CHECK("lodge_seed_build refuses a bad hostname with -EINVAL and leaves no file",
	      rc == -EINVAL && dir_empty() && strstr(err.msg, "is not a hostname"));

	{
		struct lodge_seed_result res;

		s = (struct lodge_seed){ .name = "web", .packages = "vim", .no_schema_check = true, .result = &res };
		rc = lodge_seed_check(&s, &err);
		CHECK("lodge_seed_check passes good settings, writing nothing",
		      rc == 0 && res.npackages == 1 && !res.schema_checked && dir_empty());
		s.packages = "vim,a b";
		CHECK("... and refuses a bad one as lodge_seed_build does",
		      lodge_seed_check(&s, &err) == -EINVAL && strstr(err.msg, "package 'a b'"));
	}

	/* ---- a seed left unnamed until its caller names it -------------------------------- */
	if (access("/usr/sbin/mkfs.vfat", X_OK) != 0 || access("/usr/bin/mcopy", X_OK) != 0) {
		printf("SKIP: lodge_seed_build_fd: mkfs.vfat (dosfstools) or mcopy (mtools) not installed\n");
	} else {
		struct stat st;
		int fd = -1;

		snprintf(path, sizeof(path), "%s/out-unnamed.img", dir);
		s = (struct lodge_seed){ .name = "web", .packages = "vim", .no_schema_check = true };
		rc = lodge_seed_build_fd(&s, path, &fd, &err);
		CHECK("lodge_seed_build_fd makes the seed with no name in its directory",
		      rc == 0 && fd >= 0 && dir_empty() && fstat(fd, &st) == 0 && st.st_size >= (1 << 20));
		CHECK("... lodge_seed_name names it", rc == 0 && lodge_seed_name(fd, path, &err) == 0 &&
		      stat(path, &st) == 0 && st.st_size >= (1 << 20));
		if (fd >= 0)
			close(fd);
		unlink(path);
		rc = lodge_seed_build_fd(&s, path, &fd, &err);
		if (fd >= 0)
			close(fd);
		CHECK("... and a seed closed unnamed leaves nothing", rc == 0 && dir_empty());
	}

	/* ---- what is written reads back as given ---------------------------------------- */
	snprintf(keys, sizeof(keys), "# my keys\n\n  %s%s\r\n%s\n", key, comment, key);
	s = (struct lodge_seed){ .name = "web", .hostname = "web-1.example.org", .packages = "vim,g++,tree=2.1.0-1",
				 .ssh_key_file = file("keys", keys), .password_file = file("pw", "s3cret \"pw\"\n") };
	rc = seed_text_make(&s, &t, &err);
	CHECK("good settings make a seed's text", rc == 0);
	if (rc) {
		printf("  %s\n", err.msg);
		UNIT_EXIT();
	}
	CHECK("user-data starts with #cloud-config", strncmp(t.user_data, "#cloud-config\n", 14) == 0);
	snprintf(line, sizeof(line), "%s%s", key, comment);
	CHECK("a key whose comment holds quotes, a backslash, ': ', '#', UTF-8 and YAML brackets reads back "
	      "as written", yaml_is(t.user_data, t.user_data_len, "ssh_authorized_keys.0", line));
	CHECK("the second key reads back", yaml_is(t.user_data, t.user_data_len, "ssh_authorized_keys.1", key));
	CHECK("... and there are two", t.res.nkeys == 2 && !yaml_at(t.user_data, t.user_data_len, "ssh_authorized_keys.2"));
	CHECK("Lodge's YAML is ASCII: the comment's UTF-8 is escaped", !strchr(t.user_data, '\xc3'));
	CHECK("packages read back in order",
	      yaml_is(t.user_data, t.user_data_len, "packages.0", "vim") &&
	      yaml_is(t.user_data, t.user_data_len, "packages.1", "g++") &&
	      yaml_is(t.user_data, t.user_data_len, "packages.2", "tree=2.1.0-1") && t.res.npackages == 3);
	CHECK("the password is nowhere in user-data", !strstr(t.user_data, "s3cret"));
	v = yaml_at(t.user_data, t.user_data_len, "user.hashed_passwd");
	{
		struct crypt_data cd;
		const char *h;

		memset(&cd, 0, sizeof(cd));
		h = v ? crypt_r("s3cret \"pw\"", v, &cd) : NULL;
		CHECK("user.hashed_passwd is a yescrypt hash that verifies with the password",
		      v && strncmp(v, "$y$", 3) == 0 && h && strcmp(h, v) == 0);
		memset(&cd, 0, sizeof(cd));
		h = v ? crypt_r("s3cret", v, &cd) : NULL;
		CHECK("... and not with another", v && (!h || strcmp(h, v) != 0));
	}
	free(v);
	CHECK("the password is the default user's, unlocked",
	      yaml_is(t.user_data, t.user_data_len, "user.name", SEED_DEFAULT_USER) &&
	      yaml_is(t.user_data, t.user_data_len, "user.lock_passwd", "false"));
	CHECK("meta-data: local-hostname", yaml_is(t.meta_data, t.meta_data_len, "local-hostname", "web-1.example.org"));
	v = yaml_at(t.meta_data, t.meta_data_len, "instance-id");
	CHECK("meta-data: instance-id is web- and 16 hex digits, fresh",
	      v && strlen(v) == 20 && strncmp(v, "web-", 4) == 0 && strspn(v + 4, "0123456789abcdef") == 16 &&
	      strcmp(v, t.res.instance_id) == 0);
	free(v);
	{
		struct seed_text t2;

		CHECK("a second seed has another instance-id",
		      seed_text_make(&s, &t2, &err) == 0 && strcmp(t2.res.instance_id, t.res.instance_id) != 0);
		seed_text_free(&t2);
	}
	seed_text_free(&t);

	/* ---- the user's own user-data, merged ------------------------------------------- */
	{
		static const char mine[] = "#cloud-config\n# ok\npackages: [htop]\nruncmd:\n  - [sh, -c, 'echo \"--x\" > /x']\n"
					   "write_files:\n  - path: /etc/motd\n    content: \"Jos\xc3\xa9\\n\"\n";
		size_t len = 0;
		char *dec;

		s = (struct lodge_seed){ .name = "web", .packages = "vim", .user_data_file = file("ud", mine) };
		rc = seed_text_make(&s, &t, &err);
		CHECK("with --user-data, user-data is a MIME multipart",
		      rc == 0 && strncmp(t.user_data, "Content-Type: multipart/mixed; boundary=", 40) == 0 &&
		      strstr(t.user_data, "MIME-Version: 1.0"));
		dec = rc ? NULL : user_part_decoded(t.user_data, &len);
		CHECK("the user's part is their file byte for byte",
		      dec && len == sizeof(mine) - 1 && memcmp(dec, mine, len) == 0);
		free(dec);
		CHECK("Lodge's part comes after it with the Merge-Type that appends lists",
		      rc == 0 && strstr(t.user_data, "Merge-Type: " SEED_MERGE_TYPE "\n\n#cloud-config\n") >
				 strstr(t.user_data, "base64"));
		CHECK("Lodge's part alone (for cloud-init schema) holds the package",
		      rc == 0 && yaml_is(t.lodge_part, t.lodge_part_len, "packages.0", "vim"));
		if (rc == 0)
			seed_text_free(&t);
	}

	/* ---- the disk line -------------------------------------------------------------- */
	rc = lodge_seed_disk_line("/var/lib/lodge/images/web-seed.img", NULL, line, sizeof(line), &err);
	CHECK("the disk line is the seed, vdb, read-only",
	      rc == 0 && strcmp(line, "file:/var/lib/lodge/images/web-seed.img,vdb,r") == 0);
	CHECK("a path with a ',' cannot be a disk line",
	      lodge_seed_disk_line("/a,b/seed.img", NULL, line, sizeof(line), &err) == -EINVAL);
	CHECK("a relative path is refused", lodge_seed_disk_line("seed.img", NULL, line, sizeof(line), &err) == -EINVAL);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		printf("  could not remove %s\n", dir);
	UNIT_EXIT();
}

/* A seed's text: every setting checked, then meta-data and user-data
 * written in memory (seed.h says what goes where and why). */
#include "seed.h"
#include "internal.h"
#include "log.h"
#include "schema.h"

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define HOSTNAME_RULE "labels of 1 to 63 letters, digits and '-', not starting or ending with '-', " \
		      "joined by dots, at most 253 characters (RFC 1123)"
#define PACKAGE_RULE  "a Debian package name: a-z 0-9 + - ., at least 2, starting with a letter or digit; " \
		      "optionally =VERSION (starting with a digit: 0-9 A-Z a-z . + ~ : -)"
#define SHOWN_MAX 96                       /* a user's word quoted in a message */

/* The key types OpenSSH (9.2, bookworm's) reads in authorized_keys: a
 * key's blob starts with its own type name, which is checked too. */
static const char *const key_types[] = {
	"ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
	"sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", "ssh-dss",
	"ssh-ed25519-cert-v01@openssh.com", "ssh-rsa-cert-v01@openssh.com",
	"ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp384-cert-v01@openssh.com",
	"ecdsa-sha2-nistp521-cert-v01@openssh.com", "sk-ssh-ed25519-cert-v01@openssh.com",
	"sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "ssh-dss-cert-v01@openssh.com",
};
#define NKEY_TYPES (sizeof(key_types) / sizeof(key_types[0]))

/* What a user typed, fit for a message: control characters escaped, cut. */
static const char *shown(char buf[SHOWN_MAX], const char *text, size_t n)
{
	size_t len;

	text_escape_n(buf, SHOWN_MAX, text, n);
	len = strlen(buf);
	if (len >= SHOWN_MAX - 5 && len < n * 4)       /* cut short: say so */
		strcpy(buf + len - 3, "...");
	return buf;
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool seed_hostname_valid(const char *h)
{
	size_t len = strlen(h), label = 0, i;

	if (!len || len > SEED_HOSTNAME_MAX)
		return false;
	for (i = 0; i < len; i++) {
		if (h[i] == '.') {
			if (!label || h[i - 1] == '-')
				return false;
			label = 0;
		} else if (!is_alnum(h[i]) && (h[i] != '-' || !label)) {
			return false;
		} else if (++label > SEED_LABEL_MAX) {
			return false;
		}
	}
	return label && h[len - 1] != '-';
}

/* Debian policy 5.6.7: [a-z0-9][a-z0-9+.-]+, then =VERSION if any. */
bool seed_package_valid(const char *p)
{
	size_t len = strlen(p), name = strcspn(p, "="), i;

	if (len > SEED_PACKAGE_MAX || name < 2 || !((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= '0' && p[0] <= '9')))
		return false;
	for (i = 1; i < name; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') || strchr("+.-", p[i])))
			return false;
	if (name == len)
		return true;
	if (!(p[name + 1] >= '0' && p[name + 1] <= '9'))
		return false;
	for (i = name + 1; i < len; i++)
		if (!is_alnum(p[i]) && !strchr(".+~:-", p[i]))
			return false;
	return true;
}

/* Well-formed UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF): what YAML and cloud-init read. */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = s[i], need, cp, k;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, cp = c & 0x07;
		else
			return false;
		for (k = 1; k <= need; k++) {
			if (i + k >= n || (s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
			return false;
		if (need == 3 && (cp < 0x10000 || cp > 0x10ffff))
			return false;
		i += need + 1;
	}
	return true;
}

/* A small regular file of the user's, whole, into a malloc'd buffer with
 * a NUL after it: 0, or -errno with err ("what FILE: why").  A FIFO or a
 * device is refused before it is read: it could block or never end. */
static int read_user_file(const char *what, const char *path, size_t max, char **out, size_t *len,
			  struct lodge_err *err)
{
	char sp[SHOWN_MAX];
	struct stat st;
	size_t n = 0;
	char *buf;
	int fd, rc = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return lodge_fail(err, -errno, "%s %s: %s", what, shown(sp, path, strlen(path)), strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return lodge_fail(err, rc, "%s %s: %s", what, shown(sp, path, strlen(path)), strerror(-rc));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return lodge_fail(err, -EINVAL, "%s %s: not a regular file", what, shown(sp, path, strlen(path)));
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return lodge_fail(err, -EFBIG, "%s %s: larger than %zu bytes", what, shown(sp, path, strlen(path)), max);
	}
	if (!(buf = malloc(max + 2))) {
		close(fd);
		return lodge_fail(err, -ENOMEM, "%s %s: out of memory", what, shown(sp, path, strlen(path)));
	}
	/* Read to the end, not to st_size: the file may grow meanwhile. */
	while (n <= max) {
		ssize_t r = read(fd, buf + n, max + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!rc && n > max)
		rc = -EFBIG;
	if (rc) {
		explicit_bzero(buf, max + 2);
		free(buf);
		return lodge_fail(err, rc, "%s %s: %s", what, shown(sp, path, strlen(path)),
				  rc == -EFBIG ? "too large" : strerror(-rc));
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* ---- ssh keys -------------------------------------------------------------------------------- */

struct keys {
	char *line[SEED_KEYS_MAX];     /* "TYPE BASE64[ COMMENT]", malloc'd */
	unsigned n;
};

static void keys_free(struct keys *k)
{
	while (k->n)
		free(k->line[--k->n]);
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The blob is base64 of a string holding the type's name first. */
static bool blob_is(const char *b64, size_t n, const char *type)
{
	size_t tlen = strlen(type), pad = 0, len;
	unsigned char *blob;
	bool ok = false;
	int got;

	if (n < 8 || n % 4 || strspn(b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") < n)
		return false;
	while (pad < 2 && b64[n - 1 - pad] == '=')
		pad++;
	if (!(blob = malloc(n)))
		return false;
	got = EVP_DecodeBlock(blob, (const unsigned char *)b64, (int)n);
	len = got < 0 ? 0 : (size_t)got - pad;
	if (len >= 4 + tlen) {
		uint32_t l = (uint32_t)blob[0] << 24 | (uint32_t)blob[1] << 16 | (uint32_t)blob[2] << 8 | blob[3];

		ok = l == tlen && memcmp(blob + 4, type, tlen) == 0;
	}
	free(blob);
	return ok;
}

/* One line of the key file (trimmed, neither empty nor a comment): 0 with
 * the key added to k, or -EINVAL with why. */
static int key_line(struct keys *k, const char *file, unsigned lineno, const char *line, struct lodge_err *err)
{
	char sf[SHOWN_MAX], sw[SHOWN_MAX], *copy;
	size_t tlen = strcspn(line, " \t"), blen, i;
	const char *blob, *comment;

	for (i = 0; i < NKEY_TYPES; i++)
		if (strlen(key_types[i]) == tlen && strncmp(line, key_types[i], tlen) == 0)
			break;
	if (i == NKEY_TYPES && (memchr(line, '=', tlen) || memchr(line, ',', tlen)))
		return lodge_fail(err, -EINVAL, "ssh key %s line %u: key options (%s) are not taken here: "
				  "give the public key alone (TYPE BASE64 [COMMENT])", shown(sf, file, strlen(file)),
				  lineno, shown(sw, line, tlen));
	if (i == NKEY_TYPES)
		return lodge_fail(err, -EINVAL, "ssh key %s line %u: '%s' is not a public key type OpenSSH knows "
				  "(ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ...)", shown(sf, file, strlen(file)),
				  lineno, shown(sw, line, tlen));
	blob = line + tlen + strspn(line + tlen, " \t");
	blen = strcspn(blob, " \t");
	comment = blob + blen + strspn(blob + blen, " \t");
	if (!blob_is(blob, blen, key_types[i]))
		return lodge_fail(err, -EINVAL, "ssh key %s line %u: the key after '%s' is not base64 of a %s key",
				  shown(sf, file, strlen(file)), lineno, key_types[i], key_types[i]);
	if (k->n == SEED_KEYS_MAX)
		return lodge_fail(err, -EINVAL, "ssh key %s: more than %d keys", shown(sf, file, strlen(file)),
				  SEED_KEYS_MAX);
	if (asprintf(&copy, "%s %.*s%s%s", key_types[i], (int)blen, blob, *comment ? " " : "", comment) < 0)
		return lodge_fail(err, -ENOMEM, "out of memory");
	k->line[k->n++] = copy;
	return 0;
}

/* A control character other than a tab (which separates a key's fields). */
static bool has_control(const char *s)
{
	for (; *s; s++)
		if (*s != '\t' && text_control_len(s))
			return true;
	return false;
}

/* --ssh-key FILE: OpenSSH public keys, one a line (an id_*.pub, an
 * authorized_keys without options); '#' comments and blank lines skipped. */
static int read_keys(const char *file, struct keys *k, struct lodge_err *err)
{
	char sf[SHOWN_MAX], *text, *line, *next;
	unsigned lineno = 0;
	size_t len;
	int rc;

	if ((rc = read_user_file("ssh key", file, SEED_KEY_FILE_MAX, &text, &len, err)))
		return rc;
	shown(sf, file, strlen(file));
	/* A private key anywhere is the one thing said: it must not go into
	 * a guest's seed, nor a line of it into a message. */
	if (strstr(text, "PRIVATE KEY-----") || starts(text, "PuTTY-User-Key-File-") ||
	    strstr(text, "\nPuTTY-User-Key-File-"))
		rc = lodge_fail(err, -EINVAL, "ssh key %s is a private key: give its public key (%s.pub), "
				"which is all a guest needs", sf, sf);
	else if (strstr(text, "---- BEGIN SSH2 PUBLIC KEY ----"))
		rc = lodge_fail(err, -EINVAL, "ssh key %s is an RFC 4716 public key: convert it with "
				"ssh-keygen -i -f %s", sf, sf);
	else if (memchr(text, '\0', len) || !utf8_valid((const unsigned char *)text, len))
		rc = lodge_fail(err, -EINVAL, "ssh key %s is not text (UTF-8, no NUL bytes)", sf);
	for (line = text; !rc && line; line = next) {
		size_t n;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line += strspn(line, " \t");
		n = strlen(line);
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		if (n > SEED_KEY_LINE_MAX)
			rc = lodge_fail(err, -EINVAL, "ssh key %s line %u: longer than %d bytes", sf, lineno,
					SEED_KEY_LINE_MAX);
		else if (has_control(line))
			rc = lodge_fail(err, -EINVAL, "ssh key %s line %u: contains a control character", sf, lineno);
		else
			rc = key_line(k, file, lineno, line, err);
	}
	if (!rc && !k->n)
		rc = lodge_fail(err, -EINVAL, "ssh key %s holds no public key", sf);
	explicit_bzero(text, len);     /* it may have been a private key */
	free(text);
	if (rc)
		keys_free(k);
	return rc;
}

/* ---- the password ---------------------------------------------------------------------------- */

/* --password-file FILE: its one line is the password; hash it with
 * yescrypt (crypt(5) $y$) into hash.  The plaintext lives only in this
 * function's buffers and is wiped before they are freed. */
static int hash_password(const char *file, char hash[CRYPT_OUTPUT_SIZE], struct lodge_err *err)
{
	char sf[SHOWN_MAX], setting[CRYPT_GENSALT_OUTPUT_SIZE], *text, *h;
	struct crypt_data *cd = NULL;
	const char *nl;
	size_t len, n;
	int rc;

	if ((rc = read_user_file("password file", file, SEED_PASSWORD_MAX + 2, &text, &len, err)))
		return rc;
	shown(sf, file, strlen(file));
	nl = memchr(text, '\n', len);
	n = nl ? (size_t)(nl - text) : len;
	if (n + 1 < len)
		rc = lodge_fail(err, -EINVAL, "password file %s holds more than one line: the password is its one line", sf);
	else if (n && text[n - 1] == '\r')
		n--;
	text[n] = '\0';
	if (!rc && memchr(text, '\0', n))
		rc = lodge_fail(err, -EINVAL, "password file %s holds a NUL byte", sf);
	else if (!rc && !n)
		rc = lodge_fail(err, -EINVAL, "password file %s is empty: its one line is the password", sf);
	else if (!rc && n > SEED_PASSWORD_MAX)
		rc = lodge_fail(err, -EINVAL, "password file %s: a password of more than %d bytes", sf, SEED_PASSWORD_MAX);
	if (!rc && !crypt_gensalt_rn("$y$", 0, NULL, 0, setting, sizeof(setting)))
		rc = lodge_fail(err, -errno, "cannot make a yescrypt salt: %s", strerror(errno));
	if (!rc && !(cd = calloc(1, sizeof(*cd))))
		rc = lodge_fail(err, -ENOMEM, "out of memory");
	if (!rc) {
		h = crypt_r(text, setting, cd);
		if (!h || h[0] == '*' || strlen(h) >= CRYPT_OUTPUT_SIZE)
			rc = lodge_fail(err, -EIO, "cannot hash the password with yescrypt: %s",
					h ? "crypt failed" : strerror(errno));
		else
			strcpy(hash, h);
	}
	explicit_bzero(text, len);
	free(text);
	if (cd) {
		explicit_bzero(cd, sizeof(*cd));
		free(cd);
	}
	return rc;
}

/* ---- the user's user-data -------------------------------------------------------------------- */

/* #cloud-config first (not -archive or -jsonp, other types of
 * cloud-init's), then one YAML document whose root is a mapping, as
 * cloud-init's loader takes it. */
static int check_user_data(const char *file, const char *text, size_t len, struct lodge_err *err)
{
	static const char header[] = "#cloud-config";
	char sf[SHOWN_MAX];
	yaml_parser_t p;
	yaml_event_t ev;
	unsigned docs = 0, depth = 0;
	int rc = 0;
	bool done = false;

	shown(sf, file, strlen(file));
	if (!starts(text, header) || !strchr(" \t\r\n", text[sizeof(header) - 1]))
		return lodge_fail(err, -EINVAL, "user-data %s does not start with a #cloud-config line: "
				  "cloud-config is the user-data Lodge merges", sf);
	if (memchr(text, '\0', len) || !utf8_valid((const unsigned char *)text, len))
		return lodge_fail(err, -EINVAL, "user-data %s is not UTF-8 text", sf);
	if (!yaml_parser_initialize(&p))
		return lodge_fail(err, -ENOMEM, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!rc && !done) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = lodge_fail(err, -EINVAL, "user-data %s line %zu column %zu: not YAML: %s", sf,
					p.problem_mark.line + 1, p.problem_mark.column + 1,
					p.problem ? p.problem : "a syntax error");
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
			rc = lodge_fail(err, -EINVAL, "user-data %s holds more than one YAML document (line %zu): "
					"cloud-init reads one", sf, ev.start_mark.line + 1);
		else if (depth == 0 && docs == 1 && ev.type == YAML_SEQUENCE_START_EVENT)
			rc = lodge_fail(err, -EINVAL, "user-data %s is a list: cloud-config is a mapping (key: value)", sf);
		else if (depth == 0 && docs == 1 && ev.type == YAML_SCALAR_EVENT &&
			 !(ev.data.scalar.length == 0 || strcmp((char *)ev.data.scalar.value, "~") == 0 ||
			   strcmp((char *)ev.data.scalar.value, "null") == 0))
			rc = lodge_fail(err, -EINVAL, "user-data %s is a single value: cloud-config is a mapping "
					"(key: value)", sf);
		if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT)
			depth++;
		else if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT)
			depth--;
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

/* ---- writing YAML ---------------------------------------------------------------------------- */

/* libyaml's emitter into a memory stream: every value double-quoted, and
 * with unicode off every byte outside printable ASCII escaped, so no
 * value can end its line or start a key of its own.  Each call is 0 or
 * -1; the first failure sticks. */
struct yout {
	yaml_emitter_t e;
	FILE *f;
	char *buf;
	size_t len;
	bool failed;
};

static void y_emit(struct yout *y, yaml_event_t *ev, int made)
{
	if (!made) {
		y->failed = true;
	} else if (y->failed) {
		yaml_event_delete(ev);
	} else if (!yaml_emitter_emit(&y->e, ev)) {     /* it deletes the event either way */
		y->failed = true;
	}
}

static void y_scalar(struct yout *y, const char *value, bool quoted)
{
	yaml_event_t ev;

	y_emit(y, &ev, yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)value, (int)strlen(value),
						    !quoted, quoted,
						    quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE));
}

static void y_map(struct yout *y, bool start)
{
	yaml_event_t ev;

	y_emit(y, &ev, start ? yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE)
			     : yaml_mapping_end_event_initialize(&ev));
}

static void y_seq(struct yout *y, bool start)
{
	yaml_event_t ev;

	y_emit(y, &ev, start ? yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE)
			     : yaml_sequence_end_event_initialize(&ev));
}

/* A document whose first line is header (NULL: none), its root a mapping. */
static int y_begin(struct yout *y, const char *header)
{
	yaml_event_t ev;

	memset(y, 0, sizeof(*y));
	if (!(y->f = open_memstream(&y->buf, &y->len)))
		return -ENOMEM;
	if (header)
		fprintf(y->f, "%s\n", header);
	if (!yaml_emitter_initialize(&y->e)) {
		fclose(y->f);
		free(y->buf);
		return -ENOMEM;
	}
	yaml_emitter_set_output_file(&y->e, y->f);
	yaml_emitter_set_unicode(&y->e, 0);
	yaml_emitter_set_width(&y->e, -1);         /* a key on one line, never folded */
	y_emit(y, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
	y_emit(y, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
	y_map(y, true);
	return 0;
}

/* End it: 0 with the text in *text (malloc'd), or -EIO. */
static int y_end(struct yout *y, char **text, size_t *len)
{
	yaml_event_t ev;
	size_t i;

	y_map(y, false);
	y_emit(y, &ev, yaml_document_end_event_initialize(&ev, 1));
	y_emit(y, &ev, yaml_stream_end_event_initialize(&ev));
	if (!y->failed && !yaml_emitter_flush(&y->e))
		y->failed = true;
	yaml_emitter_delete(&y->e);
	if (fclose(y->f) != 0)
		y->failed = true;
	/* The promise above, kept: Lodge's YAML is ASCII (a 7bit MIME part). */
	for (i = 0; !y->failed && i < y->len; i++)
		if ((unsigned char)y->buf[i] >= 0x80)
			y->failed = true;
	if (y->failed) {
		free(y->buf);
		return -EIO;
	}
	*text = y->buf;
	*len = y->len;
	return 0;
}

/* ---- the whole text -------------------------------------------------------------------------- */

/* Lodge's #cloud-config: the keys (the default user's, and root's as
 * cloud-init's disable_root says), the password hash on the default user
 * (`user` is merged into cloud.cfg's default_user; its schema wants the
 * name, and a hash set there is applied even to a user that exists,
 * where the top-level `password` would take a $y$ hash for plaintext:
 * cloud-init 22.4 knows hashes as $1$ $2a$ $2y$ $5$ $6$ only), the
 * packages. */
static int lodge_part(const struct keys *k, const char *hash, char *const *pkgs, unsigned npkgs, char **text,
		      size_t *len)
{
	struct yout y;
	unsigned i;
	int rc;

	if ((rc = y_begin(&y, "#cloud-config")))
		return rc;
	if (k->n) {
		y_scalar(&y, "ssh_authorized_keys", false);
		y_seq(&y, true);
		for (i = 0; i < k->n; i++)
			y_scalar(&y, k->line[i], true);
		y_seq(&y, false);
	}
	if (hash) {
		y_scalar(&y, "user", false);
		y_map(&y, true);
		y_scalar(&y, "name", false);
		y_scalar(&y, SEED_DEFAULT_USER, true);
		y_scalar(&y, "hashed_passwd", false);
		y_scalar(&y, hash, true);
		y_scalar(&y, "lock_passwd", false);
		y_scalar(&y, "false", false);
		y_map(&y, false);
	}
	if (npkgs) {
		y_scalar(&y, "packages", false);
		y_seq(&y, true);
		for (i = 0; i < npkgs; i++)
			y_scalar(&y, pkgs[i], true);
		y_seq(&y, false);
	}
	return y_end(&y, text, len);
}

static int meta_data(const char *instance_id, const char *hostname, char **text, size_t *len)
{
	struct yout y;
	int rc;

	if ((rc = y_begin(&y, NULL)))
		return rc;
	y_scalar(&y, "instance-id", false);
	y_scalar(&y, instance_id, true);
	y_scalar(&y, "local-hostname", false);
	y_scalar(&y, hostname, true);
	return y_end(&y, text, len);
}

/* Random hex digits into out (n + 1 bytes). */
static int random_hex(char *out, size_t n)
{
	unsigned char r[32];
	size_t i;

	if (n / 2 > sizeof(r) || getrandom(r, n / 2, 0) != (ssize_t)(n / 2))
		return -EIO;
	for (i = 0; i < n / 2; i++)
		sprintf(out + 2 * i, "%02x", r[i]);
	out[n] = '\0';
	return 0;
}

/* The user's part (base64, their bytes exactly) and Lodge's (ASCII) in a
 * multipart/mixed, Lodge's last with its Merge-Type. */
static int multipart(const char *user, size_t ulen, const char *mine, size_t mlen, char **text, size_t *len)
{
	char boundary[48], hex[25], line[256];
	EVP_ENCODE_CTX *b64;
	size_t i;
	FILE *f;
	int outl, tries;

	/* Base64 has no '-': only Lodge's part could hold the boundary, and
	 * only by guessing 96 random bits; look anyway. */
	for (tries = 0;; tries++) {
		if (tries == 8 || random_hex(hex, 24))
			return -EIO;
		snprintf(boundary, sizeof(boundary), "==lodge-seed-%s==", hex);
		if (!memmem(mine, mlen, boundary, strlen(boundary)))
			break;
	}
	if (!(f = open_memstream(text, len)))
		return -ENOMEM;
	fprintf(f, "Content-Type: multipart/mixed; boundary=\"%s\"\nMIME-Version: 1.0\n\n", boundary);
	fprintf(f, "--%s\nContent-Type: text/cloud-config; charset=\"utf-8\"\nMIME-Version: 1.0\n"
		"Content-Transfer-Encoding: base64\nContent-Disposition: attachment; filename=\"user-data\"\n\n",
		boundary);
	if (!(b64 = EVP_ENCODE_CTX_new())) {
		fclose(f);
		free(*text);
		return -ENOMEM;
	}
	EVP_EncodeInit(b64);
	/* In pieces small enough for line[]: 48 bytes make one 64-column line. */
	for (i = 0; i < ulen; i += 48) {
		if (!EVP_EncodeUpdate(b64, (unsigned char *)line, &outl, (const unsigned char *)user + i,
				      (int)(ulen - i < 48 ? ulen - i : 48)))
			outl = 0;
		fwrite(line, 1, (size_t)outl, f);
	}
	EVP_EncodeFinal(b64, (unsigned char *)line, &outl);
	fwrite(line, 1, (size_t)outl, f);
	EVP_ENCODE_CTX_free(b64);
	fprintf(f, "--%s\nContent-Type: text/cloud-config; charset=\"us-ascii\"\nMIME-Version: 1.0\n"
		"Content-Transfer-Encoding: 7bit\nContent-Disposition: attachment; filename=\"lodge.cfg\"\n"
		"Merge-Type: %s\n\n", boundary, SEED_MERGE_TYPE);
	fwrite(mine, 1, mlen, f);
	fprintf(f, "--%s--\n", boundary);
	if (fclose(f) != 0) {
		free(*text);
		return -ENOMEM;
	}
	return 0;
}

void seed_text_free(struct seed_text *t)
{
	free(t->user_data);
	free(t->meta_data);
	if (t->lodge_part != t->user_data)
		free(t->lodge_part);
	free(t->user_part);
	memset(t, 0, sizeof(*t));
}

/* The packages of "a,b" into pkgs (pointing into list, which is cut). */
static int split_packages(char *list, char **pkgs, unsigned *n, struct lodge_err *err)
{
	char sp[SHOWN_MAX], *p = list, *comma;

	*n = 0;
	for (;;) {
		comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (!*p)
			return lodge_fail(err, -EINVAL, "an empty package name in the package list");
		if (!seed_package_valid(p))
			return lodge_fail(err, -EINVAL, "package '%s' is not %s", shown(sp, p, strlen(p)), PACKAGE_RULE);
		if (*n == SEED_PACKAGES_MAX)
			return lodge_fail(err, -EINVAL, "more than %d packages", SEED_PACKAGES_MAX);
		pkgs[(*n)++] = p;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int seed_text_make(const struct lodge_seed *s, struct seed_text *t, struct lodge_err *err)
{
	char *pkgs[SEED_PACKAGES_MAX];
	char sp[SHOWN_MAX], hash[CRYPT_OUTPUT_SIZE], *list = NULL, *user = NULL, *mine = NULL;
	struct keys k = { .n = 0 };
	const char *hostname = s->hostname ? s->hostname : s->name;
	size_t ulen = 0, mlen = 0;
	unsigned npkgs = 0;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	if (!s->name || !domain_name_valid(s->name))
		return lodge_fail(err, -EINVAL, "'%s' is not a domain name (%s)", s->name ? shown(sp, s->name,
				  strlen(s->name)) : "", domain_name_rule());
	if (!seed_hostname_valid(hostname))
		return lodge_fail(err, -EINVAL, "%s '%s' is not a hostname: %s%s", s->hostname ? "hostname" : "domain name",
				  shown(sp, hostname, strlen(hostname)), HOSTNAME_RULE,
				  s->hostname ? "" : " (give the guest a hostname)");
	if (s->instance_id && (!s->instance_id[0] || strlen(s->instance_id) >= SEED_INSTANCE_ID_MAX ||
			       text_find_control(s->instance_id) || !utf8_valid((const unsigned char *)s->instance_id,
										strlen(s->instance_id))))
		return lodge_fail(err, -EINVAL, "instance-id '%s' is not 1 to %d printable characters",
				  shown(sp, s->instance_id, strlen(s->instance_id)), SEED_INSTANCE_ID_MAX - 1);
	if (s->instance_id) {
		snprintf(t->res.instance_id, sizeof(t->res.instance_id), "%s", s->instance_id);
	} else {
		char hex[17];

		if (random_hex(hex, 16))
			return lodge_fail(err, -EIO, "cannot read random bytes for the instance-id");
		snprintf(t->res.instance_id, sizeof(t->res.instance_id), "%s-%s", s->name, hex);
	}
	if (s->packages && s->packages[0]) {
		if (!(list = strdup(s->packages)))
			return lodge_fail(err, -ENOMEM, "out of memory");
		rc = split_packages(list, pkgs, &npkgs, err);
	}
	if (!rc && s->ssh_key_file)
		rc = read_keys(s->ssh_key_file, &k, err);
	if (!rc && s->user_data_file &&
	    !(rc = read_user_file("user-data", s->user_data_file, SEED_USER_DATA_MAX, &user, &ulen, err)))
		rc = check_user_data(s->user_data_file, user, ulen, err);
	if (!rc && s->password_file)
		rc = hash_password(s->password_file, hash, err);
	if (!rc && (rc = lodge_part(&k, s->password_file ? hash : NULL, pkgs, npkgs, &mine, &mlen)))
		lodge_fail(err, rc, "cannot write the seed's user-data (libyaml): %s", strerror(-rc));
	if (!rc && (rc = meta_data(t->res.instance_id, hostname, &t->meta_data, &t->meta_data_len)))
		lodge_fail(err, rc, "cannot write the seed's meta-data (libyaml): %s", strerror(-rc));
	if (!rc && user && (rc = multipart(user, ulen, mine, mlen, &t->user_data, &t->user_data_len)))
		lodge_fail(err, rc, "cannot write the seed's user-data: %s", strerror(-rc));
	explicit_bzero(hash, sizeof(hash));
	t->res.nkeys = k.n;
	t->res.npackages = npkgs;
	t->res.password = s->password_file != NULL;
	t->res.user_data = user != NULL;
	keys_free(&k);
	free(list);
	if (rc) {
		free(user);
		free(mine);
		seed_text_free(t);
		return rc;
	}
	t->lodge_part = mine;
	t->lodge_part_len = mlen;
	if (user) {
		t->user_part = user;
		t->user_part_len = ulen;
	} else {
		t->user_data = mine;           /* Lodge's part is the whole user-data */
		t->user_data_len = mlen;
	}
	return 0;
}

/* A seed's settings from any bytes (src/lib/install/seed.c): the input, cut at
 * its NUL bytes, is an --ssh-key file, a --user-data file and a
 * --packages list.  Property: refused with a one-line message, or the
 * user-data written is YAML that libyaml reads back with exactly the keys
 * and packages counted, each key one line of printable text, Lodge's part
 * ASCII, and the user's part their file byte for byte. */
#include "fuzz.h"
#include "log.h"
#include "seed.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <yaml.h>

/* An unnamed file holding data, by a path seed.c can open. */
static int memfile(const char *data, size_t n, char path[32])
{
	int fd = memfd_create("fuzz-seed", MFD_CLOEXEC);

	if (fd < 0 || write(fd, data, n) != (ssize_t)n)
		abort();
	snprintf(path, 32, "/proc/self/fd/%d", fd);
	return fd;
}

/* Items of the sequence at top-level key in a YAML text: how many, -1 if
 * it does not parse; each must be a one-line scalar. */
static int items(const char *text, size_t len, const char *key)
{
	yaml_parser_t p;
	yaml_document_t d;
	yaml_node_t *root, *seq = NULL;
	yaml_node_pair_t *pr;
	yaml_node_item_t *it;
	int n = 0;

	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &d)) {
		yaml_parser_delete(&p);
		return -1;
	}
	root = yaml_document_get_root_node(&d);
	FUZZ_CHECK(root && root->type == YAML_MAPPING_NODE, "Lodge's part is not a mapping");
	for (pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++)
		if (strcmp((char *)yaml_document_get_node(&d, pr->key)->data.scalar.value, key) == 0)
			seq = yaml_document_get_node(&d, pr->value);
	for (it = seq ? seq->data.sequence.items.start : NULL; seq && it < seq->data.sequence.items.top; it++) {
		yaml_node_t *v = yaml_document_get_node(&d, *it);
		const char *s = (char *)v->data.scalar.value;

		FUZZ_CHECK(v->type == YAML_SCALAR_NODE && strlen(s) == v->data.scalar.length, "an item is not a string");
		for (; *s; s++)
			FUZZ_CHECK(*s == '\t' || !text_control_len(s), "a control character in an item");
		n++;
	}
	yaml_document_delete(&d);
	yaml_parser_delete(&p);
	return n;
}

/* The piece of data from *at to the next NUL (or the end); *at moves past it. */
static size_t piece(const uint8_t *data, size_t size, size_t *at)
{
	const uint8_t *nul = memchr(data + *at, 0, size - *at);
	size_t n = nul ? (size_t)(nul - (data + *at)) : size - *at;

	*at += n + (nul != NULL);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char kpath[32], upath[32], *list;
	struct lodge_err err = { .msg = "" };
	struct seed_text t;
	struct lodge_seed s = { .name = "web", .instance_id = "fuzz" };
	size_t at = 0, k0, kn, u0, un, p0, pn, i;
	int kfd, ufd, rc;

	k0 = at, kn = piece(data, size, &at);
	u0 = at, un = piece(data, size, &at);
	p0 = at, pn = piece(data, size, &at);
	kfd = memfile((const char *)data + k0, kn, kpath);
	ufd = memfile((const char *)data + u0, un, upath);
	list = strndup((const char *)data + p0, pn);
	s.ssh_key_file = kn ? kpath : NULL;
	s.user_data_file = un ? upath : NULL;
	s.packages = list && list[0] ? list : NULL;
	rc = seed_text_make(&s, &t, &err);
	if (rc) {
		FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "refused without a one-line message");
		FUZZ_CHECK(fuzz_printable(err.msg), "a control character in the message");
	} else {
		FUZZ_CHECK(items(t.lodge_part, t.lodge_part_len, "ssh_authorized_keys") == (int)t.res.nkeys,
			   "the keys do not read back");
		FUZZ_CHECK(items(t.lodge_part, t.lodge_part_len, "packages") == (int)t.res.npackages,
			   "the packages do not read back");
		for (i = 0; i < t.lodge_part_len; i++)
			FUZZ_CHECK((unsigned char)t.lodge_part[i] < 0x80, "Lodge's part is not ASCII");
		if (un)
			FUZZ_CHECK(t.user_part && t.user_part_len == un && memcmp(t.user_part, data + u0, un) == 0,
				   "the user's part is not their file");
		seed_text_free(&t);
	}
	free(list);
	close(kfd);
	close(ufd);
	return 0;
}

/* One number, one trip (issue 33 point 3): a create form and a domain file
 * with the same values make the same struct domain_config, and a bad
 * value gets the same message from both, beside the field that holds it;
 * and the form's way there never reaches libconfuse (its parser is
 * counted here: this program's cfg_init and cfg_parse_buf stand before
 * the library's and hand on to it). */
#include "config-form.h"
#include "unit.h"

#include <confuse.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned confuse_calls;

cfg_t *cfg_init(cfg_opt_t *opts, cfg_flag_t flags)
{
	cfg_t *(*real)(cfg_opt_t *, cfg_flag_t) = (cfg_t *(*)(cfg_opt_t *, cfg_flag_t))dlsym(RTLD_NEXT, "cfg_init");

	confuse_calls++;
	return real(opts, flags);
}

int cfg_parse_buf(cfg_t *cfg, const char *buf)
{
	int (*real)(cfg_t *, const char *) = (int (*)(cfg_t *, const char *))dlsym(RTLD_NEXT, "cfg_parse_buf");

	confuse_calls++;
	return real(cfg, buf);
}

static char kernel[FORM_VALUE_MAX], disk[FORM_VALUE_MAX];
static struct host_config hc;

/* A field's value as the file writes it: a string of the syntax. */
static void put_quoted(char *out, size_t len, const char *v)
{
	size_t n = 0;

	out[n++] = '"';
	for (; *v && n + 3 < len; v++) {
		if (*v == '"' || *v == '\\')
			out[n++] = '\\';
		out[n++] = *v;
	}
	out[n++] = '"';
	out[n] = '\0';
}

/* The form as a person fills it, and the file a person would write for it. */
struct pair {
	const char *what;
	const char *value[FORM_FIELDS];   /* NULL: "" */
	int field;                        /* a bad one: the field the form names */
};

static void form_of(const struct pair *p, struct domain_form *form)
{
	unsigned f;

	memset(form, 0, sizeof(*form));
	for (f = 0; f < FORM_FIELDS; f++)
		snprintf(form->value[f], FORM_VALUE_MAX, "%s", !p->value[f] ? "" :
			 !strcmp(p->value[f], "KERNEL") ? kernel : !strcmp(p->value[f], "DISK") ? disk : p->value[f]);
}

static void file_of(const struct domain_form *form, char *text, size_t len)
{
	static const char *const keys[] = { "name", "memory", "vcpus", "kernel", "ramdisk", "cmdline" };
	char q[2 * FORM_VALUE_MAX + 64], spec[2 * FORM_VALUE_MAX + 32];
	size_t n = 0;
	unsigned f;

	text[0] = '\0';
	for (f = 0; f <= FORM_CMDLINE; f++) {
		if (!form->value[f][0])
			continue;
		/* numbers as a person writes them in a file: bare */
		if (f == FORM_MEMORY || f == FORM_VCPUS)
			snprintf(q, sizeof(q), "%s", form->value[f]);
		else
			put_quoted(q, sizeof(q), form->value[f]);
		n += (size_t)snprintf(text + n, len - n, "%s = %s\n", keys[f], q);
	}
	if (form->value[FORM_DISK][0]) {
		snprintf(spec, sizeof(spec), "%s,vda,w", form->value[FORM_DISK]);
		put_quoted(q, sizeof(q), spec);
		n += (size_t)snprintf(text + n, len - n, "disk = [ %s ]\n", q);
	}
	if (form->value[FORM_BRIDGE][0]) {
		const char *b = form->value[FORM_BRIDGE];
		bool net = !strncmp(b, FORM_NETWORK_PREFIX, strlen(FORM_NETWORK_PREFIX));

		snprintf(spec, sizeof(spec), "%s=%s%s%s", net ? "network" : "bridge",
			 net ? b + strlen(FORM_NETWORK_PREFIX) : b, form->value[FORM_MAC][0] ? ",mac=" : "",
			 form->value[FORM_MAC]);
		put_quoted(q, sizeof(q), spec);
		snprintf(text + n, len - n, "vif = [ %s ]\n", q);
	}
}

/* What this host has available changes from one reading to the next. */
static void cut_available(char *msg)
{
	char *at = strstr(msg, "available (");

	if (at)
		at[9] = '\0';
}

static const struct pair same[] = {
	{ "the least: a name and a kernel", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL" }, -1 },
	{ "every field", { [FORM_NAME] = "web", [FORM_MEMORY] = "64", [FORM_VCPUS] = "2", [FORM_KERNEL] = "KERNEL",
			   [FORM_RAMDISK] = "KERNEL", [FORM_CMDLINE] = "console=ttyS0 \"q\" back\\slash $HOME ${HOME}",
			   [FORM_DISK] = "DISK", [FORM_BRIDGE] = "lo", [FORM_MAC] = "02:4c:00:00:00:07" }, -1 },
	{ "numbers in C's bases, as libconfuse reads them", { [FORM_NAME] = "web", [FORM_MEMORY] = "0x40",
							      [FORM_VCPUS] = "010", [FORM_KERNEL] = "KERNEL" }, -1 },
	{ "a vif on the default MAC", { [FORM_NAME] = "w.1", [FORM_KERNEL] = "KERNEL", [FORM_BRIDGE] = "lo" }, -1 },
};

static const struct pair bad[] = {
	{ "the host's name", { [FORM_NAME] = "Domain-0", [FORM_KERNEL] = "KERNEL" }, FORM_NAME },
	{ "no name", { [FORM_KERNEL] = "KERNEL" }, FORM_NAME },
	{ "no kernel", { [FORM_NAME] = "web" }, FORM_KERNEL },
	{ "memory below the schema's", { [FORM_NAME] = "web", [FORM_MEMORY] = "3", [FORM_KERNEL] = "KERNEL" }, FORM_MEMORY },
	{ "memory above the schema's", { [FORM_NAME] = "web", [FORM_MEMORY] = "4194305", [FORM_KERNEL] = "KERNEL" }, FORM_MEMORY },
	{ "memory above what the host has", { [FORM_NAME] = "web", [FORM_MEMORY] = "4194304", [FORM_KERNEL] = "KERNEL" }, FORM_MEMORY },
	{ "memory no number", { [FORM_NAME] = "web", [FORM_MEMORY] = "64k", [FORM_KERNEL] = "KERNEL" }, FORM_MEMORY },
	{ "memory too large a number", { [FORM_NAME] = "web", [FORM_MEMORY] = "99999999999999999999",
					 [FORM_KERNEL] = "KERNEL" }, FORM_MEMORY },
	{ "vcpus 0", { [FORM_NAME] = "web", [FORM_VCPUS] = "0", [FORM_KERNEL] = "KERNEL" }, FORM_VCPUS },
	{ "vcpus 65", { [FORM_NAME] = "web", [FORM_VCPUS] = "65", [FORM_KERNEL] = "KERNEL" }, FORM_VCPUS },
	{ "a kernel not there", { [FORM_NAME] = "web", [FORM_KERNEL] = "/nonexistent/vmlinuz" }, FORM_KERNEL },
	{ "a ramdisk that is a directory", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL", [FORM_RAMDISK] = "/" }, FORM_RAMDISK },
	{ "a command line with an ESC", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL", [FORM_CMDLINE] = "a\x1b[2J" }, FORM_CMDLINE },
	{ "a disk not there", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL", [FORM_DISK] = "/nonexistent/d.img" }, FORM_DISK },
	{ "a disk of a kind Lodge has not", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL", [FORM_DISK] = "nvme:/x" }, FORM_DISK },
	{ "a bridge not there", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL", [FORM_BRIDGE] = "lodge-nosuch0" }, FORM_BRIDGE },
	{ "a multicast MAC", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL", [FORM_BRIDGE] = "lo",
			       [FORM_MAC] = "01:00:5e:00:00:01" }, FORM_MAC },
	{ "a MAC not hex", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL", [FORM_BRIDGE] = "lo",
			     [FORM_MAC] = "02:4c:zz:00:00:01" }, FORM_MAC },
	/* The vif rule names the part of the spec at fault; the form puts it
	 * beside that part's field, whatever the other field holds. */
	{ "a bridge not there, the MAC good", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL",
						[FORM_BRIDGE] = "lodge-nosuch0", [FORM_MAC] = "02:4c:00:00:00:09" },
	  FORM_BRIDGE },
	{ "a MAC not hex, the bridge not there either", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL",
							  [FORM_BRIDGE] = "lodge-nosuch0",
							  [FORM_MAC] = "02:4c:zz:00:00:01" }, FORM_MAC },
	{ "an all-zero MAC", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL", [FORM_BRIDGE] = "lo",
			       [FORM_MAC] = "00:00:00:00:00:00" }, FORM_MAC },
	{ "a network not there, the MAC good", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL",
						 [FORM_BRIDGE] = "net:nosuch", [FORM_MAC] = "02:4c:00:00:00:09" },
	  FORM_BRIDGE },
	{ "a network's name no network has, the MAC good", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL",
							     [FORM_BRIDGE] = "net:9lives",
							     [FORM_MAC] = "02:4c:00:00:00:09" }, FORM_BRIDGE },
};

static void test_same(void)
{
	static struct domain_form form;
	static struct domain_config by_form, by_file;
	char text[4096], why[1024], err[4096], name[256];
	unsigned i, calls;
	int field, rf, rc;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		form_of(&same[i], &form);
		file_of(&form, text, sizeof(text));
		memset(&by_form, 0xa5, sizeof(by_form));
		calls = confuse_calls;
		rf = domain_form_to_config(&form, &hc, true, &by_form, NULL, &field, why, sizeof(why));
		snprintf(name, sizeof(name), "%s: the form's config, libconfuse never called", same[i].what);
		CHECK(name, rf == 0 && confuse_calls == calls);
		if (rf)
			printf("      the form says: field %d: %s\n", field, why);
		calls = confuse_calls;
		rc = domain_config_load_text("t.cfg", text, strlen(text), &hc, true, &by_file, err, sizeof(err));
		snprintf(name, sizeof(name), "%s: the file's config, read by libconfuse", same[i].what);
		CHECK(name, rc == 0 && confuse_calls > calls);
		if (rc)
			printf("      the file says: %s\n", err);
		memset(by_form.file, 0, sizeof(by_form.file));
		memset(by_file.file, 0, sizeof(by_file.file));
		snprintf(name, sizeof(name), "%s: the same struct domain_config, byte for byte", same[i].what);
		CHECK(name, !rf && !rc && memcmp(&by_form, &by_file, sizeof(by_form)) == 0);
	}
}

static void test_bad(void)
{
	static struct domain_form form;
	static struct domain_config dc;
	char text[4096], why[1024], err[4096], name[512], key[64], *said, *colon;
	unsigned i, calls;
	int field, rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		form_of(&bad[i], &form);
		file_of(&form, text, sizeof(text));
		calls = confuse_calls;
		rc = domain_form_to_config(&form, &hc, true, &dc, NULL, &field, why, sizeof(why));
		snprintf(name, sizeof(name), "%s: refused by the form, libconfuse never called", bad[i].what);
		CHECK(name, rc && confuse_calls == calls);
		if (domain_config_load_text("t.cfg", text, strlen(text), &hc, true, &dc, err, sizeof(err)) == 0) {
			printf("FAIL: %s: the file loads\n", bad[i].what), unit_failures++;
			continue;
		}
		/* "t.cfg:LINE: KEY: what" */
		said = strchr(err, ':') ? strchr(strchr(err, ':') + 1, ':') : NULL;
		colon = said ? strchr(said + 2, ':') : NULL;
		if (!said || !colon) {
			printf("FAIL: %s: the file's message '%s'\n", bad[i].what, err), unit_failures++;
			continue;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(colon - said - 2), said + 2);
		said = colon + 2;
		cut_available(said);
		cut_available(why);
		snprintf(name, sizeof(name), "%s: the form says what the file says, %s: %s, beside field %s",
			 bad[i].what, key, said, domain_form_key(bad[i].field));
		if (rc && !strcmp(why, said) && field == bad[i].field && !strcmp(domain_form_key(field), key))
			CHECK(name, 1);
		else
			printf("FAIL: %s: the form says %d at field %d: '%s'\n", name, rc, field, why), unit_failures++;
	}
}

/* The vif rule says which part of a spec it refuses: the word the form
 * puts its message beside a field by. */
static void test_vif_parts(void)
{
	static const struct {
		const char *spec[2];       /* the second: a second vif after the first */
		enum vif_part part;
		const char *name;
	} cases[] = {
		{ { "bridge=lo,mac=01:00:5e:00:00:01" }, VIF_PART_MAC, "a multicast mac" },
		{ { "bridge=lodge-nosuch0,mac=02:4c:00:00:00:09" }, VIF_PART_BRIDGE, "a bridge not there" },
		{ { "bridge=a/b" }, VIF_PART_BRIDGE, "a bridge no interface could be" },
		{ { "network=nosuch,mac=02:4c:00:00:00:09" }, VIF_PART_NETWORK, "a network not there" },
		{ { "network=9lives" }, VIF_PART_NETWORK, "a network's name no network has" },
		{ { "bridge=lo,vifname=a/b" }, VIF_PART_VIFNAME, "a vifname no interface could be" },
		{ { "bridge=lo,slot=99" }, VIF_PART_SLOT, "a slot no PCI slot is" },
		{ { "bridge=lo,mac=02:4c:00:00:00:09", "bridge=lo,mac=02:4c:00:00:00:09" }, VIF_PART_MAC,
		  "a second vif with the first's mac" },
		{ { "bridge=lo,colour=red" }, VIF_PART_SPEC, "a key no vif has" },
		{ { "bridge=lo,network=default" }, VIF_PART_SPEC, "a bridge and a network both" },
	};
	char why[1024], name[256];
	unsigned i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct domain_build *b = domain_build_new("t", &hc, true);
		bool two = cases[i].spec[1] != NULL;

		rc = domain_build_set(b, "vif", cases[i].spec[0], true, why, sizeof(why));
		if (two && !rc)
			rc = domain_build_set(b, "vif", cases[i].spec[1], true, why, sizeof(why));
		snprintf(name, sizeof(name), "the vif rule: %s: refused, and the part at fault named", cases[i].name);
		CHECK(name, rc && domain_build_vif_part(b) == cases[i].part);
		if (!rc || domain_build_vif_part(b) != cases[i].part)
			printf("      rc %d part %d: %s\n", rc, domain_build_vif_part(b), why);
		domain_build_free(b);
	}
}

/* The MAC field holds one MAC: what follows a ',' in it is no key of the
 * vif's (a file's "mac=M,vifname=X" is two; the form's MAC field, one). */
static void test_mac_alone(void)
{
	static const char *const bridges[] = { "lo", "" };
	static struct domain_form form;
	static struct domain_config dc;
	char why[1024], name[256];
	unsigned i;
	int field, rc;

	for (i = 0; i < sizeof(bridges) / sizeof(bridges[0]); i++) {
		form_of(&(struct pair){ "", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL",
					      [FORM_BRIDGE] = bridges[i], [FORM_MAC] = "02:4c:00:00:00:09,vifname=lodgex0" }, FORM_MAC },
			&form);
		rc = domain_form_to_config(&form, &hc, true, &dc, NULL, &field, why, sizeof(why));
		snprintf(name, sizeof(name), "a MAC field with ',vifname=' after the MAC, bridge '%s': refused beside "
			 "the MAC field", bridges[i]);
		CHECK(name, rc == -EINVAL && field == FORM_MAC && strstr(why, "is not six hex pairs"));
		if (!(rc == -EINVAL && field == FORM_MAC))
			printf("      the form says %d at field %d: '%s' (vifname '%s')\n", rc, field, why,
			       rc ? "" : dc.vifs[0].vifname);
	}
	rc = domain_form_check(&form, FORM_MAC, &hc, why, sizeof(why));
	CHECK("the MAC field alone with ',vifname=': refused as it is typed", rc == -EINVAL &&
	      strstr(why, "is not six hex pairs"));
}

/* The bridge field's "net:NAME" is one network's name: what follows a
 * ',' in it is no key of the vif's either. */
static void test_network_alone(void)
{
	static struct domain_form form;
	static struct domain_config dc;
	char why[1024];
	int field, rc;

	form_of(&(struct pair){ "", { [FORM_NAME] = "web", [FORM_KERNEL] = "KERNEL", [FORM_BRIDGE] = "net:web,slot=5" },
				FORM_BRIDGE }, &form);
	rc = domain_form_to_config(&form, &hc, false, &dc, NULL, &field, why, sizeof(why));
	CHECK("a bridge field 'net:web,slot=5': refused beside the bridge field, by the network-name rule",
	      rc == -EINVAL && field == FORM_BRIDGE && strstr(why, "network: 'web,slot=5' is not a network name"));
	if (rc != -EINVAL || field != FORM_BRIDGE)
		printf("      the form says %d at field %d: '%s' (slot %u)\n", rc, field, why, rc ? 0 : dc.vifs[0].slot);
	form.make_bridge = true;
	rc = domain_form_check(&form, FORM_BRIDGE, &hc, why, sizeof(why));
	CHECK("... and as it is typed", rc == -EINVAL && strstr(why, "network: 'web,slot=5' is not a network name"));
}

int main(void)
{
	char err[1024], top[CFG_PATH_MAX];

	if (getenv("TOP"))
		snprintf(top, sizeof(top), "%s", getenv("TOP"));
	else if (!getcwd(top, sizeof(top)))
		return 1;
	if ((size_t)snprintf(kernel, sizeof(kernel), "%s/tests/config/dummy-kernel", top) >= sizeof(kernel) ||
	    (size_t)snprintf(disk, sizeof(disk), "%s/tests/config/dummy-disk.img", top) >= sizeof(disk)) {
		printf("SKIP: form trip: %s is too long a path for a form's field\n", top);
		return 0;
	}
	cfg_set_root("/nonexistent-lodge-root");
	CHECK("host defaults", host_config_load(&hc, err, sizeof(err)) == 0);
	test_same();
	test_bad();
	test_vif_parts();
	test_mac_alone();
	test_network_alone();
	UNIT_EXIT();
}

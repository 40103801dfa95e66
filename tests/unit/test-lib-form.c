/* The create form's model (config-form.h): each field's verdict and message
 * are those of a domain file holding its key, the whole form makes the
 * domain config a file with its values makes, hints come from the schema.
 *
 * With arguments it is the form's face for tests/integ/schema.sh:
 *   test-lib-form [--root DIR] FIELD=VALUE...
 * fills the fields (name memory vcpus kernel ramdisk cmdline disk bridge
 * mac), checks each as the dashboard does as it is typed, then the whole
 * form as its Create does, and prints "ok" (exit 0) or the first error as
 * "KEY: what is wrong" (exit 1): what lodge check prints after FILE:LINE:. */
#include "config-form.h"
#include "log.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const field_names[FORM_FIELDS] = {
	[FORM_NAME] = "name", [FORM_MEMORY] = "memory", [FORM_VCPUS] = "vcpus", [FORM_KERNEL] = "kernel",
	[FORM_RAMDISK] = "ramdisk", [FORM_CMDLINE] = "cmdline", [FORM_DISK] = "disk", [FORM_BRIDGE] = "bridge",
	[FORM_MAC] = "mac",
};

static char kernel[FORM_VALUE_MAX], disk[FORM_VALUE_MAX];
static struct host_config hc;
static struct domain_config dc;

/* The message domain_config_load_text gives for text, after "FILE:LINE: KEY: ". */
static const char *file_says(const char *text, const char *key, char *err, size_t errlen)
{
	char prefix[64];
	const char *at;

	if (domain_config_load_text("t.cfg", text, strlen(text), &hc, true, &dc, err, errlen) == 0)
		return "ok";
	snprintf(prefix, sizeof(prefix), ": %s: ", key);
	at = strstr(err, prefix);
	return at ? at + strlen(prefix) : err;
}

static void form_init(struct domain_form *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->value[FORM_NAME], FORM_VALUE_MAX, "web");
	snprintf(f->value[FORM_KERNEL], FORM_VALUE_MAX, "%s", kernel);
}

/* What this host has available changes from one reading to the next. */
static void cut_available(char *msg)
{
	char *at = strstr(msg, "available (");

	if (at)
		at[9] = '\0';
}

/* Field f set to value: the form's verdict and message, and a file's with
 * that key written as line (%s: the value). */
/* pattern with its "%s" replaced by value (no format string from a caller). */
static void subst(char *out, size_t len, const char *pattern, const char *value)
{
	const char *at = strstr(pattern, "%s");

	if (!at)
		snprintf(out, len, "%s", pattern);
	else
		snprintf(out, len, "%.*s%s%s", (int)(at - pattern), pattern, value, at + 2);
}

static void same_as_file(enum form_field f, const char *value, const char *line)
{
	static struct domain_form form;
	char why[1024], err[4096], text[2048], name[6000], keyline[600], said[4096], shown[1024];
	int rc;

	form_init(&form);
	snprintf(form.value[f], FORM_VALUE_MAX, "%s", value);
	if (f == FORM_MAC)
		snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, "lo");
	why[0] = '\0';
	rc = domain_form_check(&form, f, &hc, why, sizeof(why));
	subst(keyline, sizeof(keyline), line, value);
	if (f == FORM_NAME)
		snprintf(text, sizeof(text), "kernel = '%s'\n%s\n", kernel, keyline);
	else if (f == FORM_KERNEL)
		snprintf(text, sizeof(text), "name = 'web'\n%s\n", keyline);
	else
		snprintf(text, sizeof(text), "name = 'web'\nkernel = '%s'\n%s\n", kernel, keyline);
	snprintf(said, sizeof(said), "%s", file_says(text, domain_form_key(f), err, sizeof(err)));
	cut_available(said);
	cut_available(why);
	snprintf(name, sizeof(name), "form %s = '%s': refused as a file says it (%s)", field_names[f],
		 text_escape(shown, sizeof(shown), value), said);
	if (rc && !strcmp(said, why))
		CHECK(name, 1);
	else
		printf("FAIL: %s: the form says %d '%s'\n", name, rc, why), unit_failures++;
}

static void test_fields(void)
{
	char long_name[80];

	memset(long_name, 'a', 64);
	long_name[64] = '\0';
	same_as_file(FORM_NAME, "Domain-0", "name = '%s'");
	same_as_file(FORM_NAME, "domain-0", "name = '%s'");
	same_as_file(FORM_NAME, "web server", "name = '%s'");
	same_as_file(FORM_NAME, "-web", "name = '%s'");
	same_as_file(FORM_NAME, long_name, "name = '%s'");
	same_as_file(FORM_NAME, "", "");
	same_as_file(FORM_MEMORY, "3", "memory = %s");
	same_as_file(FORM_MEMORY, "lots", "memory = '%s'");
	same_as_file(FORM_MEMORY, "4194305", "memory = %s");
	same_as_file(FORM_MEMORY, "4194304", "memory = %s");        /* more than this host has */
	same_as_file(FORM_VCPUS, "0", "vcpus = %s");
	same_as_file(FORM_VCPUS, "65", "vcpus = %s");
	same_as_file(FORM_VCPUS, "1.5", "vcpus = %s");
	same_as_file(FORM_KERNEL, "/nonexistent/vmlinuz", "kernel = '%s'");
	same_as_file(FORM_KERNEL, "/", "kernel = '%s'");
	same_as_file(FORM_KERNEL, "", "");
	same_as_file(FORM_RAMDISK, "/nonexistent/initrd", "ramdisk = '%s'");
	same_as_file(FORM_CMDLINE, "console=ttyS0\x1b[2J", "cmdline = \"%s\"");
	same_as_file(FORM_DISK, "/nonexistent/disk.img", "disk = [ '%s,vda,w' ]");
	same_as_file(FORM_DISK, "nvme:/dev/x", "disk = [ '%s,vda,w' ]");
	same_as_file(FORM_BRIDGE, "lodge-nosuch0", "vif = [ 'bridge=%s' ]");
	same_as_file(FORM_BRIDGE, "a/b", "vif = [ 'bridge=%s' ]");
	/* one interface-name rule (schema.h): what network-create refuses */
	same_as_file(FORM_BRIDGE, "atk\"x", "vif = [ 'bridge=%s' ]");
	same_as_file(FORM_BRIDGE, "br*", "vif = [ 'bridge=%s' ]");
	same_as_file(FORM_BRIDGE, "abcdefghijklmnop", "vif = [ 'bridge=%s' ]");
	same_as_file(FORM_MAC, "01:00:5e:00:00:01", "vif = [ 'bridge=lo,mac=%s' ]");
	same_as_file(FORM_MAC, "02:4c:0:0:0:1", "vif = [ 'bridge=lo,mac=%s' ]");
	same_as_file(FORM_MAC, "00:00:00:00:00:00", "vif = [ 'bridge=lo,mac=%s' ]");
}

static void test_form(void)
{
	static struct domain_form form;
	char why[1024], err[4096], hint[256], want[64];
	enum form_field f;
	int bad = 0, field;

	form_init(&form);
	snprintf(form.value[FORM_MEMORY], FORM_VALUE_MAX, "64");
	snprintf(form.value[FORM_VCPUS], FORM_VALUE_MAX, "2");
	snprintf(form.value[FORM_CMDLINE], FORM_VALUE_MAX, "console=ttyS0 \"quoted\" back\\slash $HOME");
	snprintf(form.value[FORM_DISK], FORM_VALUE_MAX, "%s", disk);
	snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, "lo");
	snprintf(form.value[FORM_MAC], FORM_VALUE_MAX, "02:4c:00:00:00:07");
	for (f = 0; f < FORM_FIELDS; f++)
		bad += domain_form_check(&form, f, &hc, why, sizeof(why)) != 0;
	CHECK("a valid form: every field passes", bad == 0);
	CHECK("... and it makes a domain config", domain_form_to_config(&form, &hc, true, &dc, NULL, &field, err, sizeof(err)) == 0);
	CHECK("... with its values", !strcmp(dc.name, "web") && dc.memory_mib == 64 && dc.vcpus == 2 &&
	      !strcmp(dc.kernel, kernel) && !strcmp(dc.cmdline, "console=ttyS0 \"quoted\" back\\slash $HOME"));
	CHECK("... its disk the guest's vda, writable", dc.ndisks == 1 && !strcmp(dc.disks[0].path, disk) &&
	      !strcmp(dc.disks[0].vdev, "vda") && !dc.disks[0].readonly);
	CHECK("... one vif on its bridge with its MAC", dc.nvifs == 1 && !strcmp(dc.vifs[0].bridge, "lo") &&
	      dc.vifs[0].mac_set && dc.vifs[0].mac[5] == 7);
	CHECK("... and the defaults of a file", dc.on_reboot == ACTION_RESTART && dc.cpu_weight == DOMAIN_CPU_WEIGHT_DEFAULT &&
	      !dc.cap && !dc.ncpus);

	snprintf(form.value[FORM_MEMORY], FORM_VALUE_MAX, "%s", "");
	snprintf(form.value[FORM_MAC], FORM_VALUE_MAX, "auto");
	CHECK("an empty field is a key left out: memory's default",
	      domain_form_check(&form, FORM_MEMORY, &hc, why, sizeof(why)) == 0 &&
	      domain_form_to_config(&form, &hc, true, &dc, NULL, &field, err, sizeof(err)) == 0 &&
	      dc.memory_mib == DOMAIN_MEMORY_DEFAULT_MIB);
	CHECK("MAC auto: Lodge's own", dc.nvifs == 1 && !dc.vifs[0].mac_set);

	snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, "lodge-nosuch0");
	form.make_bridge = true;
	CHECK("a bridge the dashboard will make: only its name is checked",
	      domain_form_check(&form, FORM_BRIDGE, &hc, why, sizeof(why)) == 0);
	CHECK("... and the config names it",
	      domain_form_to_config(&form, &hc, true, &dc, NULL, &field, err, sizeof(err)) == 0 && dc.nvifs == 1 &&
	      !strcmp(dc.vifs[0].bridge, "lodge-nosuch0"));
	form.make_bridge = false;
	CHECK("... but a bridge to use must exist, beside the bridge field",
	      domain_form_to_config(&form, &hc, true, &dc, NULL, &field, err, sizeof(err)) < 0 && field == FORM_BRIDGE &&
	      !strncmp(err, "bridge 'lodge-nosuch0' does not exist", 37));
	snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, "new:lodge-nosuch0");
	CHECK("new:NAME, a bridge the create makes: only its name is checked",
	      domain_form_check(&form, FORM_BRIDGE, &hc, why, sizeof(why)) == 0);
	snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, "new:atk\"x");
	CHECK("new:NAME with a quote refused by the interface-name rule, in its words",
	      domain_form_check(&form, FORM_BRIDGE, &hc, why, sizeof(why)) == -EINVAL &&
	      !strncmp(why, "bridge: 'atk\"x' is not an interface name (", strlen("bridge: 'atk\"x' is not an interface name (")));
	snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, "new:br,vifname=x");
	CHECK("new:NAME with a ',' refused whole (not cut into a vif spec)",
	      domain_form_check(&form, FORM_BRIDGE, &hc, why, sizeof(why)) == -EINVAL && strstr(why, "'br,vifname=x'"));
	snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, "new:a-bridge-name-too-long");
	CHECK("... and a name too long for an interface refused",
	      domain_form_check(&form, FORM_BRIDGE, &hc, why, sizeof(why)) == -EINVAL);
	{
		static const char *const sizes[] = { "new:", "new:0", "new:-1", "new:12x", "new:1048577",
						   "new:99999999999999999999999" };
		unsigned long mib = 0;
		unsigned i, refused = 0;

		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			snprintf(form.value[FORM_DISK], FORM_VALUE_MAX, "%s", sizes[i]);
			refused += domain_form_check(&form, FORM_DISK, &hc, why, sizeof(why)) == -EINVAL &&
				   strstr(why, "new:SIZE in MiB, 1 to 1048576") != NULL;
		}
		CHECK("new:SIZE out of the schema's 1 to DOMAIN_NEW_DISK_MAX_MIB, or no number, refused",
		      refused == sizeof(sizes) / sizeof(sizes[0]));
		snprintf(form.value[FORM_DISK], FORM_VALUE_MAX, "new:%u", DOMAIN_NEW_DISK_MAX_MIB);
		CHECK("... the largest taken",
		      domain_form_check(&form, FORM_DISK, &hc, why, sizeof(why)) == 0 &&
		      domain_form_new_disk_mib(form.value[FORM_DISK], &mib, why, sizeof(why)) == 0 &&
		      mib == DOMAIN_NEW_DISK_MAX_MIB);
		mib = 1;
		snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, "%s", "");
		snprintf(form.value[FORM_DISK], FORM_VALUE_MAX, "new:512");
		CHECK("the form's config leaves a new:SIZE disk out, its size read once for the create",
		      domain_form_to_config(&form, &hc, true, &dc, &mib, &field, err, sizeof(err)) == 0 && mib == 512 &&
		      dc.ndisks == 0);
		snprintf(form.value[FORM_DISK], FORM_VALUE_MAX, "new:0");
		CHECK("... none when the size is refused",
		      domain_form_to_config(&form, &hc, true, &dc, &mib, &field, err, sizeof(err)) == -EINVAL &&
		      mib == 0 && field == FORM_DISK);
		snprintf(form.value[FORM_DISK], FORM_VALUE_MAX, "%s", disk);
	}
	snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, "%s", "");
	snprintf(form.value[FORM_MAC], FORM_VALUE_MAX, "02:4c:00:00:00:08");
	CHECK("a MAC is checked alone, not against a bridge", domain_form_check(&form, FORM_MAC, &hc, why, sizeof(why)) == 0);

	domain_form_hint(FORM_MEMORY, hint, sizeof(hint));
	snprintf(want, sizeof(want), "%d to %u MiB, default %d MiB", DOMAIN_MEMORY_MIN_MIB, DOMAIN_MEMORY_MAX_MIB,
		 DOMAIN_MEMORY_DEFAULT_MIB);
	CHECK("hints come from the schema: memory's range and default", strstr(hint, want) != NULL);
	domain_form_hint(FORM_VCPUS, hint, sizeof(hint));
	snprintf(want, sizeof(want), "1 to %d", DOMAIN_VCPUS_MAX);
	CHECK("... and vcpus'", strstr(hint, want) != NULL);
	domain_form_hint(FORM_NAME, hint, sizeof(hint));
	CHECK("... and that name is required", strstr(hint, "required") != NULL);
}

/* The form's face for tests/integ/schema.sh. */
static int drive(int argc, char **argv)
{
	static struct domain_form form;
	char why[1024], err[4096];
	enum form_field f;
	int i = 1, field;

	if (argc > 2 && !strcmp(argv[1], "--root")) {
		cfg_set_root(argv[2]);
		i = 3;
	}
	if (host_config_load(&hc, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	memset(&form, 0, sizeof(form));
	for (; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		for (f = 0; eq && f < FORM_FIELDS; f++)
			if (strlen(field_names[f]) == (size_t)(eq - argv[i]) && !strncmp(argv[i], field_names[f], eq - argv[i]))
				break;
		if (!eq || f == FORM_FIELDS || strlen(eq + 1) >= FORM_VALUE_MAX) {
			fprintf(stderr, "usage: test-lib-form [--root DIR] FIELD=VALUE... (%s?)\n", argv[i]);
			return 2;
		}
		snprintf(form.value[f], FORM_VALUE_MAX, "%s", eq + 1);
	}
	for (f = 0; f < FORM_FIELDS; f++)          /* as the dashboard, field by field */
		if (domain_form_check(&form, f, &hc, why, sizeof(why))) {
			printf("%s: %s\n", domain_form_key(f), why);
			return 1;
		}
	if (domain_form_to_config(&form, &hc, true, &dc, NULL, &field, err, sizeof(err))) {     /* as its Create */
		printf("%s%s%s\n", field >= 0 ? domain_form_key(field) : "", field >= 0 ? ": " : "", err);
		return 1;
	}
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	char err[1024], top[CFG_PATH_MAX];
	int n, m;

	if (argc > 1)
		return drive(argc, argv);
	if (getenv("TOP"))
		snprintf(top, sizeof(top), "%s", getenv("TOP"));
	else if (!getcwd(top, sizeof(top)))
		return 1;
	n = snprintf(kernel, sizeof(kernel), "%s/tests/config/dummy-kernel", top);
	m = snprintf(disk, sizeof(disk), "%s/tests/config/dummy-disk.img", top);
	if (n >= (int)sizeof(kernel) || m >= (int)sizeof(disk)) {
		printf("SKIP: form: %s is too long a path for a form's field\n", top);
		return 0;
	}
	cfg_set_root("/nonexistent-lodge-root");
	CHECK("host defaults", host_config_load(&hc, err, sizeof(err)) == 0);
	test_fields();
	test_form();
	UNIT_EXIT();
}

/* A create form, read by the loader of domain files (config-form.h). */
#include "config-form.h"
#include "config-keys.h"
#include "schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const field_keys[FORM_FIELDS] = {
	[FORM_NAME] = "name", [FORM_MEMORY] = "memory", [FORM_VCPUS] = "vcpus", [FORM_KERNEL] = "kernel",
	[FORM_RAMDISK] = "ramdisk", [FORM_CMDLINE] = "cmdline", [FORM_DISK] = "disk", [FORM_BRIDGE] = "vif",
	[FORM_MAC] = "vif",
};

/* The disk field is the guest's first disk, writable. */
#define FORM_DISK_SPEC "%s,vda,w"

const char *domain_form_key(enum form_field f)
{
	return f < FORM_FIELDS ? field_keys[f] : "";
}

void domain_form_hint(enum form_field f, char *out, size_t len)
{
	if (f == FORM_DISK)
		snprintf(out, len, "the guest's vda: an image file or a block device");
	else if (f == FORM_BRIDGE)
		snprintf(out, len, "a bridge for one network interface, or " FORM_NETWORK_PREFIX "NETWORK for a Lodge "
			 "network (lodge network-list); empty: no network");
	else if (f == FORM_MAC)
		snprintf(out, len, "auto, or six hex pairs like 02:4c:00:00:00:01 (unicast)");
	else
		domain_key_hint(domain_form_key(f), out, len);
}

static bool mac_given(const struct domain_form *form)
{
	return form->value[FORM_MAC][0] && strcmp(form->value[FORM_MAC], "auto") != 0;
}

/* The bridge field as the start of a vif spec: "bridge=BR", or
 * "network=NET" for "net:NET"; its length. */
static size_t vif_spec(const char *v, char *spec, size_t len)
{
	size_t plen = strlen(FORM_NETWORK_PREFIX);
	int n = strncmp(v, FORM_NETWORK_PREFIX, plen) ? snprintf(spec, len, "bridge=%s", v)
						      : snprintf(spec, len, "network=%s", v + plen);

	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

bool domain_form_new(const char *value)
{
	return strncmp(value, FORM_NEW_PREFIX, strlen(FORM_NEW_PREFIX)) == 0;
}

int domain_form_new_disk_mib(const char *value, unsigned long *mib, char *why, size_t whylen)
{
	const char *digits = value + strlen(FORM_NEW_PREFIX);
	char *end;

	errno = 0;
	*mib = strtoul(digits, &end, 10);
	if (!domain_form_new(value) || errno || *end || end == digits || *digits == '-' ||
	    *mib < DOMAIN_NEW_DISK_MIN_MIB || *mib > DOMAIN_NEW_DISK_MAX_MIB) {
		snprintf(why, whylen, "new:SIZE in MiB, %u to %u, e.g. new:512", DOMAIN_NEW_DISK_MIN_MIB,
			 DOMAIN_NEW_DISK_MAX_MIB);
		return -EINVAL;
	}
	return 0;
}

int domain_form_check(const struct domain_form *form, enum form_field f, const struct host_config *hc,
		      char *why, size_t whylen)
{
	const char *v = f < FORM_FIELDS ? form->value[f] : "";
	char spec[FORM_VALUE_MAX + 32];
	unsigned long mib;

	switch (f) {
	case FORM_DISK:
		if (!v[0])
			return 0;
		if (domain_form_new(v))
			return domain_form_new_disk_mib(v, &mib, why, whylen);
		snprintf(spec, sizeof(spec), FORM_DISK_SPEC, v);
		return domain_key_check("disk", spec, hc, true, why, whylen);
	case FORM_BRIDGE:
		if (!v[0])
			return 0;
		/* A bridge's name, made or used, is the interface-name rule's
		 * whole (before it is cut into a vif spec at its ',' and '='),
		 * in the words a file's vif = [ "bridge=..." ] gets. */
		if (strncmp(v, FORM_NETWORK_PREFIX, strlen(FORM_NETWORK_PREFIX)) &&
		    ifname_check(domain_form_new(v) ? v + strlen(FORM_NEW_PREFIX) : v, spec, sizeof(spec))) {
			snprintf(why, whylen, "bridge: %s", spec);
			return -EINVAL;
		}
		/* A bridge to be made: its name alone (it is not there yet). */
		if (domain_form_new(v)) {
			snprintf(spec, sizeof(spec), "bridge=%s", v + strlen(FORM_NEW_PREFIX));
			return domain_key_check("vif", spec, hc, false, why, whylen);
		}
		vif_spec(v, spec, sizeof(spec));
		return domain_key_check("vif", spec, hc, !form->make_bridge, why, whylen);
	case FORM_MAC:
		if (!mac_given(form))
			return 0;
		/* The MAC alone: whether its bridge exists is the bridge field's. */
		snprintf(spec, sizeof(spec), "mac=%s", v);
		return domain_key_check("vif", spec, hc, false, why, whylen);
	case FORM_FIELDS:
		snprintf(why, whylen, "no such field");
		return -EINVAL;
	default:
		return domain_key_check(domain_form_key(f), v, hc, true, why, whylen);
	}
}

char *domain_form_text(const struct domain_form *form)
{
	char *text = NULL, spec[2 * FORM_VALUE_MAX + 32];
	size_t len = 0;
	unsigned i;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "# made by a create form\n");
	for (i = 0; i <= FORM_CMDLINE; i++) {
		if (!form->value[i][0])
			continue;         /* as a file that leaves the key out */
		fprintf(f, "%s = ", field_keys[i]);
		cfg_put_string(f, form->value[i]);
		fputc('\n', f);
	}
	if (form->value[FORM_DISK][0]) {
		snprintf(spec, sizeof(spec), FORM_DISK_SPEC, form->value[FORM_DISK]);
		fprintf(f, "disk = [ ");
		cfg_put_string(f, spec);
		fprintf(f, " ]\n");
	}
	if (form->value[FORM_BRIDGE][0]) {
		size_t n = vif_spec(form->value[FORM_BRIDGE], spec, sizeof(spec));

		snprintf(spec + n, sizeof(spec) - n, "%s%s", mac_given(form) ? ",mac=" : "",
			 mac_given(form) ? form->value[FORM_MAC] : "");
		fprintf(f, "vif = [ ");
		cfg_put_string(f, spec);
		fprintf(f, " ]\n");
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

int domain_form_load(const struct domain_form *form, const struct host_config *hc, struct domain_config *dc,
		     char *err, size_t errlen)
{
	char *text = domain_form_text(form);
	int rc;

	if (!text) {
		snprintf(err, errlen, "%s: out of memory", FORM_LABEL);
		return -ENOMEM;
	}
	rc = domain_config_load_text(FORM_LABEL, text, strlen(text), hc, true, dc, err, errlen);
	free(text);
	return rc;
}

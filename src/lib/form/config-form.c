/* A create form: each field checked and stored by its key's one check, the
 * one a domain file's value gets (config-form.h). */
#include "config-form.h"
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

/* A bridge's name, made or used, is the interface-name rule's whole, and
 * a network's ("net:NAME") the network-name rule's (before either is cut
 * into a vif spec at its ',' and '='), in the words a file's vif = [
 * "bridge=..." ] or [ "network=..." ] gets: 0, or -EINVAL with why. */
static int bridge_name_check(const char *v, char *why, size_t whylen)
{
	size_t net = strlen(FORM_NETWORK_PREFIX);
	bool network = !strncmp(v, FORM_NETWORK_PREFIX, net);
	char what[256];
	int rc = network ? network_name_check(v + net, what, sizeof(what))
			 : ifname_check(domain_form_new(v) ? v + strlen(FORM_NEW_PREFIX) : v, what, sizeof(what));

	if (rc)
		snprintf(why, whylen, "%s: %s", network ? "network" : "bridge", what);
	return rc;
}

/* The MAC field is one MAC, whole (before it is put into a vif spec,
 * where a ',' in it would start a key of the vif's own): 0, or -EINVAL
 * with the vif rule's words for a bad mac=. */
static int mac_check(const struct domain_form *form, char *why, size_t whylen)
{
	uint8_t mac[6];

	return mac_given(form) ? domain_mac_parse(form->value[FORM_MAC], mac, why, whylen) : 0;
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
		if (bridge_name_check(v, why, whylen))
			return -EINVAL;
		/* A bridge to be made: its name alone (it is not there yet). */
		if (domain_form_new(v)) {
			snprintf(spec, sizeof(spec), "bridge=%s", v + strlen(FORM_NEW_PREFIX));
			return domain_key_check("vif", spec, hc, false, why, whylen);
		}
		vif_spec(v, spec, sizeof(spec));
		return domain_key_check("vif", spec, hc, !form->make_bridge, why, whylen);
	case FORM_MAC:
		/* The MAC alone: whether its bridge exists is the bridge field's. */
		return mac_check(form, why, whylen);
	case FORM_FIELDS:
		snprintf(why, whylen, "no such field");
		return -EINVAL;
	default:
		return domain_key_check(domain_form_key(f), v, hc, true, why, whylen);
	}
}

/* The field a refused vif belongs beside, by the part of its spec at
 * fault (the vif rule's own word for it): the MAC field's mac=, the
 * bridge field's all else. */
static const enum form_field vif_part_field[] = {
	[VIF_PART_SPEC] = FORM_BRIDGE, [VIF_PART_BRIDGE] = FORM_BRIDGE, [VIF_PART_NETWORK] = FORM_BRIDGE,
	[VIF_PART_MAC] = FORM_MAC, [VIF_PART_VIFNAME] = FORM_BRIDGE, [VIF_PART_SLOT] = FORM_BRIDGE,
};

/* The field a key of the form's came from: the vif's is the bridge's. */
static int key_field(const char *key)
{
	unsigned f;

	for (f = 0; f < FORM_FIELDS; f++)
		if (!strcmp(field_keys[f], key))
			return (int)f;
	return -1;
}

int domain_form_to_config(const struct domain_form *form, const struct host_config *hc, bool check_host,
			  struct domain_config *dc, unsigned long *new_disk_mib, int *field, char *why,
			  size_t whylen)
{
	struct domain_build *b = domain_build_new(FORM_LABEL, hc, check_host);
	const char *v, *key;
	char spec[2 * FORM_VALUE_MAX + 32], what[1024];
	unsigned long mib = 0;
	unsigned f;
	size_t n;
	int rc = 0;

	*field = -1;
	if (!b) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	/* Each field once, in the form's order: its key's value, or the key
	 * left out ("": the default). */
	for (f = 0; f <= FORM_CMDLINE && !rc; f++) {
		v = form->value[f];
		rc = v[0] ? domain_build_set(b, field_keys[f], v, check_host, why, whylen)
			  : domain_build_default(b, field_keys[f], why, whylen);
		*field = (int)f;
	}
	/* The guest's vda; a new:SIZE disk is not made yet (domain_form_add_disk). */
	v = form->value[FORM_DISK];
	if (!rc && v[0]) {
		*field = FORM_DISK;
		if (domain_form_new(v)) {
			rc = domain_form_new_disk_mib(v, &mib, why, whylen);
		} else {
			snprintf(spec, sizeof(spec), FORM_DISK_SPEC, v);
			rc = domain_build_set(b, "disk", spec, check_host, why, whylen);
		}
	}
	/* One vif: the bridge field's bridge or network, with the MAC field's
	 * MAC; a MAC with no bridge is checked alone, as it is typed. */
	v = form->value[FORM_BRIDGE];
	if (!rc && v[0]) {
		*field = FORM_BRIDGE;
		if (!(rc = bridge_name_check(v, why, whylen)) && (rc = mac_check(form, why, whylen)))
			*field = FORM_MAC;
		if (!rc) {
			n = vif_spec(domain_form_new(v) ? v + strlen(FORM_NEW_PREFIX) : v, spec, sizeof(spec));
			snprintf(spec + n, sizeof(spec) - n, "%s%s", mac_given(form) ? ",mac=" : "",
				 mac_given(form) ? form->value[FORM_MAC] : "");
			/* A bridge still to be made is not there yet. */
			rc = domain_build_set(b, "vif", spec, check_host && !domain_form_new(v) && !form->make_bridge,
					      why, whylen);
			if (rc && (unsigned)domain_build_vif_part(b) < sizeof(vif_part_field) / sizeof(vif_part_field[0]))
				*field = vif_part_field[domain_build_vif_part(b)];
		}
	} else if (!rc && mac_given(form)) {
		*field = FORM_MAC;
		rc = mac_check(form, why, whylen);
	}
	if (!rc) {
		*field = -1;
		if ((rc = domain_build_finish(b, dc, &key, what, sizeof(what))) && (*field = key_field(key)) < 0)
			snprintf(why, whylen, "%s: %s", key, what);
		else if (rc)
			snprintf(why, whylen, "%s", what);
	}
	domain_build_free(b);
	if (new_disk_mib)
		*new_disk_mib = rc ? 0 : mib;
	return rc;
}

int domain_form_add_disk(struct domain_config *dc, const char *path, char *why, size_t whylen)
{
	char spec[CFG_PATH_MAX + 16];

	if (dc->ndisks >= DOMAIN_DISKS_MAX || (size_t)snprintf(spec, sizeof(spec), FORM_DISK_SPEC, path) >= sizeof(spec)) {
		snprintf(why, whylen, "%s: no room for the disk", path);
		return -E2BIG;
	}
	if (domain_disk_spec_parse(FORM_LABEL, spec, &dc->disks[dc->ndisks], why, whylen))
		return -EINVAL;
	dc->ndisks++;
	return 0;
}

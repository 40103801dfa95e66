/* A create form: the few fields a person fills in to make a domain.  Each
 * field is checked as it is typed by its key's check, the one a domain
 * file's value gets, and refused with a file's message; the whole form
 * becomes a domain config by those checks and a file's rules of two keys
 * (domain_build_*, config.h), never by way of a file's text.  The dashboard's form (src/tui/create.c) is one face of
 * it; any other face that makes domains from fields uses it too. */
#ifndef LODGE_CONFIG_FORM_H
#define LODGE_CONFIG_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

enum form_field {
	FORM_NAME, FORM_MEMORY, FORM_VCPUS, FORM_KERNEL, FORM_RAMDISK, FORM_CMDLINE,
	FORM_DISK,      /* an image file or block device, the guest's vda, writable */
	FORM_BRIDGE,    /* "": no network; else one vif on this bridge, or with
			 * FORM_NETWORK_PREFIX on that Lodge network (network=) */
	FORM_MAC,       /* the vif's MAC; "" or "auto": Lodge's stable default */
	FORM_FIELDS
};

#define FORM_VALUE_MAX 256
#define FORM_NETWORK_PREFIX "net:"
/* A create form's disk "new:SIZE" (MiB, DOMAIN_NEW_DISK_*_MIB) and bridge
 * "new:NAME" are made for the domain by lodge_form_create (lodge.h), for
 * every face: a sparse image file IMAGE_DIR/NAME-vda.img, a bridge.  The
 * field checks below check the size and the name. */
#define FORM_NEW_PREFIX "new:"

/* value is "new:...": a thing the create makes. */
bool domain_form_new(const char *value);
/* A new:SIZE disk's size: 0 with *mib, or -EINVAL with why. */
int domain_form_new_disk_mib(const char *value, unsigned long *mib, char *why, size_t whylen);

struct domain_form {
	char value[FORM_FIELDS][FORM_VALUE_MAX];    /* as typed; "": the key left out */
	bool make_bridge;       /* the bridge is the caller's to make: check only its name */
};

/* The key a field sets: "memory"; the disk field "disk", bridge and MAC "vif". */
const char *domain_form_key(enum form_field f);
/* The field in words, from the schema: "guest RAM, 4 to 4194304 MiB, default 128 MiB". */
void domain_form_hint(enum form_field f, char *out, size_t len);
/* Check one field as domain_config_load checks its key in a file, for a
 * domain to run on this host: 0, or -errno with why set to the message
 * it gives after "FILE:LINE: KEY: ". */
int domain_form_check(const struct domain_form *form, enum form_field f, const struct host_config *hc,
		      char *why, size_t whylen);
/* The whole form as a domain config, each field checked and stored once:
 * 0 with dc, or -errno with *field the field at fault (-1: none, then why
 * names the key) and why a file's message after "FILE:LINE: KEY: ".
 * check_host: for a domain to run on this host (a bridge to be made,
 * new:NAME or make_bridge, is not looked for).  A new:SIZE disk is left
 * out, for domain_form_add_disk once it is made: its size as checked goes
 * to *new_disk_mib (0: no new disk; new_disk_mib may be NULL).  dc->file
 * is FORM_LABEL; relative paths are from the current directory, as they
 * were typed. */
#define FORM_LABEL "create form"
int domain_form_to_config(const struct domain_form *form, const struct host_config *hc, bool check_host,
			  struct domain_config *dc, unsigned long *new_disk_mib, int *field, char *why,
			  size_t whylen);
/* The disk made for a new:SIZE field, as the guest's vda, writable. */
int domain_form_add_disk(struct domain_config *dc, const char *path, char *why, size_t whylen);

#endif

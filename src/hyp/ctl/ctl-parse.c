/* One control-socket request line into its words (ctl.h), apart from
 * ctl.c's event loop so that tests/fuzz/fuzz-ctl.c links it alone. */
#include "ctl/ctl.h"
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ctl_parse_request(char *line, char *argv[CTL_MAX_ARGS], char *err, size_t errlen)
{
	char *save = NULL, *tok, *rest;
	int argc = 0;
	long version;

	for (tok = strtok_r(line, " \t", &save); tok && argc < CTL_MAX_ARGS; tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	if (argc < 2 || strncmp(argv[0], PROTO_PREFIX, strlen(PROTO_PREFIX)) != 0) {
		snprintf(err, errlen, "error malformed request (expected \"%s%d COMMAND\")\n", PROTO_PREFIX, PROTO_VERSION);
		return -1;
	}
	version = strtol(argv[0] + strlen(PROTO_PREFIX), &rest, 10);
	/* "lodge/1:FACE": the face that asks, for the event log. */
	if (*rest == ':' && strlen(rest + 1) >= 1 && strlen(rest + 1) <= PROTO_FACE_MAX &&
	    strspn(rest + 1, PROTO_FACE_CHARS) == strlen(rest + 1))
		rest += strlen(rest);
	if (*rest || version != PROTO_VERSION) {
		snprintf(err, errlen, "error protocol version %s not supported (lodge-hyp speaks %d)\n",
			 argv[0] + strlen(PROTO_PREFIX), PROTO_VERSION);
		return -1;
	}
	return argc;
}

/* The agent's reader of lodge-hyp's replies: a domain's status comes from a
 * process that runs guest-facing code, so the agent treats it as untrusted.
 * Property: any bytes parse or are refused without a crash, and what
 * parses stays within the reply's bounds. */
#include "fuzz.h"
#include "client.h"
#include "internal.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct reply r;
	static struct lodge_status st;
	char *buf = malloc(size + 1);
	unsigned i;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (client_reply_complete(buf, size) && client_parse_reply(buf, &r) == 0) {
		FUZZ_CHECK(r.nkeys <= CLIENT_MAX_KEYS, "more keys than the reply holds");
		for (i = 0; i < r.nkeys; i++)
			FUZZ_CHECK(memchr(r.key[i], 0, sizeof(r.key[i])) && memchr(r.value[i], 0, sizeof(r.value[i])),
				   "an unterminated key or value");
		lodge_status_from_reply(&r, "fuzz", &st);
		FUZZ_CHECK(st.ndisks <= DOMAIN_DISKS_MAX && st.nvifs <= DOMAIN_VIFS_MAX, "device counts out of bounds");
		FUZZ_CHECK(st.state == DOMAIN_STATE_UNKNOWN ||
			   domain_state_of(domain_state_name(st.state), DOMAIN_STATE_FROM_HYP) == st.state,
			   "a state lodge-hyp may not say");
	}
	free(buf);
	return 0;
}

/* status's keys (src/common/proto.c's table): a reply written key by key
 * as lodge-hyp writes it (proto_key_printf) reads back into every field
 * of lodge_status (src/lib/status.c); the names are distinct, and the
 * save words round-trip.  The state is read from lodge-hyp's word once:
 * its own words only, any other (a newer one's, a face's, the pool's)
 * unknown. */
#include "client.h"
#include "internal.h"
#include "proto.h"
#include "unit.h"

#include <string.h>

int main(void)
{
	static char buf[16384];
	static struct reply r;
	struct lodge_status st;
	char a[PROTO_KEY_MAX], b[PROTO_KEY_MAX];
	bool distinct = true, named = true;
	size_t n;
	unsigned i, k;

	for (i = 0; i < PROTO_NKEYS; i++) {
		named &= proto_status_key(i)[0] != '\0';
		for (k = 0; k < i; k++)
			distinct &= strcmp(proto_status_key_name(i, 0, a), proto_status_key_name(k, 0, b)) != 0;
	}
	CHECK("status: every key has a name", named);
	CHECK("status: no two keys share a name", distinct);
	CHECK("status: a device's key is stem, index, suffix",
	      strcmp(proto_status_key_name(PROTO_KEY_VIF_ADDRS, 2, a), "vif2_addrs") == 0 &&
	      strcmp(proto_status_key_name(PROTO_KEY_DISK, 1, b), "disk1") == 0);
	for (i = 0, k = 1; i < PROTO_SAVE_NPHASES; i++)
		k &= proto_save_phase_of(proto_save_phase_name(i)) == (int)i;
	CHECK("status: save phases round-trip", k && proto_save_phase_of("later") < 0);
	CHECK("status: save kinds round-trip", proto_save_kind_of("migrate") == PROTO_SAVE_KIND_MIGRATE &&
	      proto_save_kind_of(proto_save_kind_name(PROTO_SAVE_KIND_SAVE)) == PROTO_SAVE_KIND_SAVE);

	n = (size_t)snprintf(buf, sizeof(buf), "ok\n");
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_NAME, 0, "%s", "web");
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_ID, 0, "%u", 7);
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_PID, 0, "%d", 4242);
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_STATE, 0, "%s", domain_state_name(DOMAIN_STATE_PAUSED));
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_VCPUS, 0, "%u", 2);
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_MEMORY_MIB, 0, "%u", 256);
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_TARGET_MIB, 0, "%u", 200);
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_GUEST_FREE_KIB, 0, "%u", 1000);
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_CPU_NS, 0, "%llu", 123456789012ULL);
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_VCPU_NS, 0, "%s", "11 22");
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_END_REASON, 0, "%s", "-");
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_CPU_CAP, 0, "%u", 50);
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_DISK, 0, "%s", "1 512 2 1024 0");
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_DISK, 1, "%s", "3 512 0 0 0");
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_SAVE_KIND, 0, "%s", proto_save_kind_name(PROTO_SAVE_KIND_MIGRATE));
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_SAVE_PHASE, 0, "%s", proto_save_phase_name(PROTO_SAVE_STOPCOPY));
	n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_SAVE_ROUND, 0, "%u", 3);
	snprintf(buf + n, sizeof(buf) - n, "\n");
	CHECK("status: the written reply parses", client_parse_reply(buf, &r) == 0 && r.error[0] == '\0');
	lodge_status_from_reply(&r, "web", &st);
	CHECK("status: name, id, pid, state, vcpus read back",
	      strcmp(st.name, "web") == 0 && st.id == 7 && st.pid == 4242 &&
	      st.state == DOMAIN_STATE_PAUSED && st.vcpus == 2);
	CHECK("status: memory read back; maxmem absent is memory_mib", st.memory_mib == 256 && st.target_mib == 200 &&
	      st.maxmem_mib == 256);
	CHECK("status: a guest's free figure means it reports", st.guest_stats && st.guest_free_kib == 1000);
	CHECK("status: CPU time and each vCPU's", st.cpu_ns == 123456789012ULL && st.vcpu_ns[0] == 11 && st.vcpu_ns[1] == 22);
	CHECK("status: cap read, weight and cgroup absent take their defaults",
	      st.cpu_cap == 50 && st.cpu_weight == DOMAIN_CPU_WEIGHT_DEFAULT && strcmp(st.cgroup, "-") == 0);
	CHECK("status: each disk's counters and their sum", st.ndisks == 2 && st.disk[1].in_ops == 3 &&
	      st.disk_sum.in_ops == 4 && st.disk_sum.out_bytes == 1024);
	CHECK("status: the migration's kind, phase and round",
	      st.save_kind == LODGE_SAVE_MIGRATE && st.save_phase == LODGE_SAVE_STOPCOPY && st.save_round == 3);

	for (i = 0, k = 1; i < DOMAIN_STATE_COUNT; i++) {
		k &= domain_state_name(i)[0] != '\0';
		k &= i == DOMAIN_STATE_UNKNOWN || domain_state_of(domain_state_name(i), ~0u) == i;
	}
	CHECK("state: every state has a word, and the word reads back", k);
	CHECK("state: lodge-hyp's words read as its", domain_state_of("running", DOMAIN_STATE_FROM_HYP) ==
	      DOMAIN_STATE_RUNNING && domain_state_of("crashed", DOMAIN_STATE_FROM_HYP) == DOMAIN_STATE_CRASHED);
	CHECK("state: a pool's or a face's word is not lodge-hyp's",
	      domain_state_of("failed", DOMAIN_STATE_FROM_HYP) == DOMAIN_STATE_UNKNOWN &&
	      domain_state_of("off", DOMAIN_STATE_FROM_HYP) == DOMAIN_STATE_UNKNOWN &&
	      domain_state_of("placed", DOMAIN_STATE_FROM_AGENT) == DOMAIN_STATE_UNKNOWN);
	CHECK("state: an agent reports lodge-hyp's words and its own",
	      domain_state_of("paused", DOMAIN_STATE_FROM_AGENT) == DOMAIN_STATE_PAUSED &&
	      domain_state_of("failed", DOMAIN_STATE_FROM_AGENT) == DOMAIN_STATE_FAILED);
	CHECK("state: sorted live first, unknown last",
	      DOMAIN_STATE_RUNNING < DOMAIN_STATE_PAUSED && DOMAIN_STATE_PAUSED < DOMAIN_STATE_SHUTDOWN &&
	      DOMAIN_STATE_SHUTDOWN < DOMAIN_STATE_OFF && DOMAIN_STATE_OFF < DOMAIN_STATE_UNKNOWN);

	/* a word a newer lodge-hyp might send: unknown, never a face's */
	for (i = 0; i < 2; i++) {
		static const char *const words[] = { "suspended", "off" };

		n = (size_t)snprintf(buf, sizeof(buf), "ok\n");
		n = proto_key_printf(buf, sizeof(buf), n, PROTO_KEY_STATE, 0, "%s", words[i]);
		snprintf(buf + n, sizeof(buf) - n, "\n");
		client_parse_reply(buf, &r);
		lodge_status_from_reply(&r, "web", &st);
		CHECK(i ? "state: a face's word from lodge-hyp is unknown" : "state: a word not of the protocol is unknown",
		      st.state == DOMAIN_STATE_UNKNOWN && strcmp(domain_state_name(st.state), "?") == 0);
	}
	n = (size_t)snprintf(buf, sizeof(buf), "ok\n\n");
	client_parse_reply(buf, &r);
	lodge_status_from_reply(&r, "web", &st);
	CHECK("state: a reply without one is unknown", st.state == DOMAIN_STATE_UNKNOWN);
	UNIT_EXIT();
}

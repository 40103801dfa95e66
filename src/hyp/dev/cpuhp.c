/* CPU hot-plug controller (cpuhp.h, src/common/cpuhp.h).
 *
 * Every vCPU up to maxvcpus is made at start (KVM_CREATE_VCPU, its
 * thread) and those offline are held parked outside KVM_RUN (vcpu.c),
 * rather than made at plug time: by then lodge-hyp is sandboxed (no new
 * threads' stacks to map past its limits, no /dev/kvm ioctls it did not
 * need at start, no CPUID files), the save stream and the core dump see a
 * fixed set of vCPUs, and a plug is one bit and a wake-up.  A held vCPU
 * never enters the guest, so an INIT/SIPI the guest sends it on its own
 * does nothing until the host plugs it. */
#include "dev/cpu-hotplug.h"
#include "dev/devices.h"
#include "bus.h"
#include "domain.h"
#include "log.h"
#include "save/state.h"
#include "cpuhp.h"           /* src/common: the registers */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>

static struct {
	pthread_mutex_t lock;
	struct domain *dom;
	uint64_t insert;           /* plugged, not yet read by the guest */
	uint64_t remove;           /* the host asks the guest to eject */
} hp = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t all_cpus(const struct domain *dom)
{
	return dom->nvcpus >= 64 ? ~0ull : (1ull << dom->nvcpus) - 1;
}

static uint64_t cpuhp_read(void *dev, uint64_t off, unsigned size)
{
	uint64_t v = 0;
	unsigned half = (off & CPUHP_HI) ? 32 : 0;

	if (size != 4 || (off & 3))
		return 0xffffffffu;
	pthread_mutex_lock(&hp.lock);
	switch (off & ~(uint64_t)CPUHP_HI) {
	case CPUHP_PRESENT:
		v = atomic_load(&hp.dom->online);
		break;
	case CPUHP_INSERT:
		v = hp.insert;
		hp.insert &= ~(0xffffffffull << half);   /* each arrival is told once */
		break;
	case CPUHP_REMOVE:
		v = hp.remove;
		break;
	}
	pthread_mutex_unlock(&hp.lock);
	return (uint32_t)(v >> half);
}

/* The guest has parked these CPUs: those asked for go offline now (the
 * vCPU writing this is never one of them: a CPU cannot eject itself while
 * running, and CPU 0 is never asked). */
static void cpuhp_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	unsigned half = (off & CPUHP_HI) ? 32 : 0;
	uint64_t bits;
	unsigned i;

	if (size != 4 || (off & ~(uint64_t)CPUHP_HI) != CPUHP_EJECT)
		return;
	pthread_mutex_lock(&hp.lock);
	bits = ((uint64_t)(uint32_t)val << half) & hp.remove & atomic_load(&hp.dom->online);
	hp.remove &= ~bits;
	for (i = 0; i < hp.dom->nvcpus; i++)
		if (bits & (1ull << i)) {
			vcpu_set_online(hp.dom, i, false);
			log_info("vcpu%u ejected by the guest: offline", i);
		}
	pthread_mutex_unlock(&hp.lock);
}

static const struct bus_ops cpuhp_ops = { .read = cpuhp_read, .write = cpuhp_write };

int cpuhp_set(struct domain *dom, unsigned long n, char *why, size_t whylen)
{
	uint64_t want, online;
	bool tell = false;
	unsigned i;

	if (n < 1 || n > dom->nvcpus) {
		snprintf(why, whylen, "%lu vCPUs is out of range: 1 to %u (maxvcpus)", n, dom->nvcpus);
		return -ERANGE;
	}
	want = n >= 64 ? ~0ull : (1ull << n) - 1;
	pthread_mutex_lock(&hp.lock);
	online = atomic_load(&dom->online);
	for (i = 0; i < dom->nvcpus; i++) {
		uint64_t bit = 1ull << i;

		if ((want & bit) && !(online & bit)) {
			vcpu_set_online(dom, i, true);
			hp.insert |= bit;
			tell = true;
		}
		if ((want & bit) && (hp.remove & bit))
			hp.remove &= ~bit;          /* withdrawn: it stays */
		if (!(want & bit) && (online & bit) && !(hp.remove & bit)) {
			hp.remove |= bit;
			tell = true;
		}
	}
	pthread_mutex_unlock(&hp.lock);
	if (tell)
		acpi_pm_gpe_raise(CPUHP_GPE_BIT);
	return 0;
}

unsigned cpuhp_pending_removal(void)
{
	unsigned n;

	pthread_mutex_lock(&hp.lock);
	n = (unsigned)__builtin_popcountll(hp.remove);
	pthread_mutex_unlock(&hp.lock);
	return n;
}

/* Save and restore: which vCPUs are online (their registers are the
 * vCPUs' own entries, every one of maxvcpus) and what the guest was told
 * or asked and has not answered yet, so a restored guest finds the CPUs
 * it had and still sees a pending request. */
#define CPUHP_STATE_VERSION 1

static int cpuhp_save(void *obj, struct state_buf *b)
{
	pthread_mutex_lock(&hp.lock);
	state_put_u64(b, atomic_load(&hp.dom->online));
	state_put_u64(b, hp.insert);
	state_put_u64(b, hp.remove);
	pthread_mutex_unlock(&hp.lock);
	return 0;
}

static int cpuhp_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	uint64_t online = state_get_u64(in), insert = state_get_u64(in), remove = state_get_u64(in);
	uint64_t all = all_cpus(hp.dom);
	unsigned i;

	if (in->bad)
		return -EBADMSG;
	if (!(online & 1) || (online | insert | remove) & ~all) {
		snprintf(why, whylen, "cpuhp: online vCPUs %#llx do not fit %u vCPUs (maxvcpus) with vCPU 0",
			 (unsigned long long)(online | insert | remove), hp.dom->nvcpus);
		return -EINVAL;
	}
	pthread_mutex_lock(&hp.lock);
	for (i = 0; i < hp.dom->nvcpus; i++)
		vcpu_set_online(hp.dom, i, online & (1ull << i));
	hp.insert = insert & online;
	hp.remove = remove & online;
	pthread_mutex_unlock(&hp.lock);
	return 0;
}

static const struct state_ops cpuhp_state_ops = {
	.save = cpuhp_save, .load = cpuhp_load, .version = CPUHP_STATE_VERSION,
};

int cpuhp_init(struct domain *dom)
{
	int rc;

	hp.dom = dom;
	if ((rc = bus_register(BUS_PIO, CPUHP_PORT, CPUHP_LEN, &cpuhp_ops, NULL, "cpuhp")))
		return rc;
	return state_register("cpuhp", &cpuhp_state_ops, NULL);
}
